//! Readiness, enabling live mode, and a quote finalized until its group goes live.

use domain::event::EventType;
use domain::group::{CompanyState, GroupStatus};
use domain::ids::PartnerId;
use domain::mode::Mode;
use domain::quote::QuoteStatus;
use domain::scope::Scope;
use serde_json::json;

use crate::cli::{Library, Sandbox};

/// Every step-(a) item's stable name, in order.
const STEP_A: [&str; 5] = ["group", "census", "quote", "enrollment", "webhook_ping"];

fn readiness_of_a_fresh_partner(s: &Sandbox) {
    let prt = s.partner("broker");
    let v = s.json(&["partner", "readiness", &prt]);
    assert_eq!(
        v,
        json!({
            "partner": s.json(&["partner", "show", &prt]),
            "test_mode": {
                "groups": 0,
                "groups_with_census": 0,
                "quotes": 0,
                "enrollments": 0,
                "webhook_pings_delivered": 0,
            },
            "agreements_recorded": false,
            "missing": STEP_A,
            "ready": false,
        })
    );
    let text = s.run(&["partner", "readiness", &prt]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    assert!(
        lines[0].contains(&prt) && lines[0].contains("test mode"),
        "{text}"
    );
    for (line, label) in
        lines[1..6]
            .iter()
            .zip(["group", "census", "quote", "enrollment", "webhook ping"])
    {
        assert!(line.starts_with(&format!("\u{2717} {label} ")), "{text}");
        assert!(line.contains(" 0 "), "{text}");
    }
    assert!(lines[6].starts_with("\u{2717} agreements "), "{text}");
    assert_eq!(
        lines[7],
        "ready for live: no (missing: group, census, quote, enrollment, webhook_ping)"
    );
}

fn enable_live_needs_the_test_flow_or_force(s: &Sandbox) {
    let prt = s.partner("hr_platform");
    let refusal = "cannot enable live mode: the partner has not yet, in test mode: created a group, sent a census, created a quote, created an enrollment, had a webhook endpoint answer a signed ping (pass --force to enable anyway)";
    assert_eq!(
        s.fails(&["partner", "enable-live", &prt]),
        format!("error: {refusal}")
    );
    assert_eq!(
        s.fails_json(&["partner", "enable-live", &prt]),
        json!({"error": "conflict", "message": refusal})
    );
    assert_eq!(s.json(&["partner", "show", &prt])["live_enabled"], false);

    let v = s.json(&["partner", "enable-live", &prt, "--force"]);
    assert_eq!(v["id"], prt.as_str());
    assert_eq!(v["live_enabled"], true);
    assert_eq!(v["forced"], true);
    assert_eq!(v["missing"], json!(STEP_A));
    assert_eq!(s.json(&["partner", "show", &prt])["live_enabled"], true);
    let r = s.json(&["partner", "readiness", &prt]);
    assert_eq!(r["agreements_recorded"], true);
    assert_eq!(r["ready"], false);
    let text = s.run(&["partner", "readiness", &prt]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("\u{2713} agreements ") && l.contains("recorded")),
        "{text}"
    );

    // Disabling needs no readiness; enabling again needs --force again.
    assert_eq!(
        s.run(&["partner", "disable-live", &prt]).trim_end(),
        format!("{prt}: live mode disabled")
    );
    s.fails(&["partner", "enable-live", &prt]);
    assert_eq!(s.json(&["partner", "show", &prt])["live_enabled"], false);
}

/// Above the in-review threshold (200 employees): quotes are `in_review`.
const IN_REVIEW_EMPLOYEES: usize = 201;

fn quote_finalize_and_group_go_live(s: &Sandbox) {
    let prt = s.partner("broker"); // also migrates the database
    let partner = PartnerId::parse(&prt).unwrap();
    let test = Scope::new(partner.clone(), Mode::Test);
    let live = Scope::new(partner, Mode::Live);
    let lib = Library::open(s);
    let (group, quote) = lib.quoted_group(&test, "acme-widgets.example", IN_REVIEW_EMPLOYEES);
    assert_eq!(quote.status, QuoteStatus::InReview);
    let (g, q) = (group.id.as_str(), quote.id.as_str());

    // No enrollment yet: no provisioned company to take live.
    assert_eq!(
        s.fails(&["group", "go-live", g]),
        format!(
            "error: cannot take {g} live: the group has no provisioned company yet; create its enrollment first"
        )
    );

    // Underwriting finalizes the test quote.
    assert_eq!(
        s.run(&["quote", "finalize", q]).trim_end(),
        format!("{q}: ready (group {g}, test mode)")
    );
    assert_eq!(lib.quote(&test, &quote.id).status, QuoteStatus::Ready);
    assert_eq!(
        lib.events(&test, EventType::QuoteFinalized),
        [json!({"quoteId": q, "groupId": g, "status": "ready"})]
    );
    let again = format!(
        "cannot finalize {q}: the quote is ready; only an in_review quote can be finalized"
    );
    assert_eq!(
        s.fails(&["quote", "finalize", q]),
        format!("error: {again}")
    );
    assert_eq!(
        s.fails_json(&["quote", "finalize", q]),
        json!({"error": "conflict", "message": again})
    );

    // Any partner and mode: a live quote, with --json.
    let (live_group, live_quote) =
        lib.quoted_group(&live, "acme-widgets.example", IN_REVIEW_EMPLOYEES);
    assert_eq!(live_quote.status, QuoteStatus::InReview);
    assert_eq!(
        s.json(&["quote", "finalize", live_quote.id.as_str()]),
        json!({
            "id": live_quote.id.as_str(),
            "group_id": live_group.id.as_str(),
            "mode": "live",
            "status": "ready",
        })
    );
    assert_eq!(lib.quote(&live, &live_quote.id).status, QuoteStatus::Ready);

    // Enrolled on the ready quote, the group goes live.
    lib.enroll(&test, &group.id, &quote.id);
    assert_eq!(
        lib.group(&test, &group.id).company_state,
        Some(CompanyState::Sandbox)
    );
    assert_eq!(
        s.json(&["group", "go-live", g]),
        json!({"id": g, "mode": "test", "status": "active", "company_state": "prod"})
    );
    let stored = lib.group(&test, &group.id);
    assert_eq!(stored.status, GroupStatus::Active);
    assert_eq!(stored.company_state, Some(CompanyState::Prod));
    assert_eq!(
        lib.events(&test, EventType::GroupStateChanged),
        [json!({
            "groupId": g,
            "companyDomain": "acme-widgets.example",
            "previousState": "sandbox",
            "state": "prod",
            "forced": true,
        })]
    );
    assert_eq!(
        s.fails(&["group", "go-live", g]),
        format!("error: cannot take {g} live: the group is already live")
    );
    assert_eq!(s.fails_json(&["group", "go-live", g])["error"], "conflict");

    // The live group, enrolled too, goes live in text mode.
    lib.enroll(&live, &live_group.id, &live_quote.id);
    let lg = live_group.id.as_str();
    assert_eq!(
        s.run(&["group", "go-live", lg]).trim_end(),
        format!("{lg}: company state prod, group active (live mode)")
    );

    // Readiness counts the test flow only; the webhook ping is still missing.
    let r = s.json(&["partner", "readiness", &prt]);
    assert_eq!(
        r["test_mode"],
        json!({
            "groups": 1,
            "groups_with_census": 1,
            "quotes": 1,
            "enrollments": 1,
            "webhook_pings_delivered": 0,
        })
    );
    assert_eq!(r["missing"], json!(["webhook_ping"]));
    assert_eq!(r["ready"], false);
    let text = s.run(&["partner", "readiness", &prt]);
    for label in ["group", "census", "quote", "enrollment"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("\u{2713} {label} ")) && l.contains(" 1 ")),
            "{label}: {text}"
        );
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("\u{2717} webhook ping ")),
        "{text}"
    );
    assert!(
        text.ends_with("ready for live: no (missing: webhook_ping)\n"),
        "{text}"
    );
    assert_eq!(
        s.fails(&["partner", "enable-live", &prt]),
        "error: cannot enable live mode: the partner has not yet, in test mode: had a webhook endpoint answer a signed ping (pass --force to enable anyway)"
    );
    assert_eq!(
        s.run(&["partner", "enable-live", &prt, "--force"])
            .trim_end(),
        format!("{prt}: live mode enabled (forced: not yet seen in test mode: webhook_ping)")
    );
}

on_both_backends!(
    readiness_of_a_fresh_partner,
    enable_live_needs_the_test_flow_or_force,
    quote_finalize_and_group_go_live,
);
