//! Claiming imported groups, and verifying or rejecting a company with its deposits.

use domain::ids::PartnerId;
use domain::mode::Mode;
use domain::scope::Scope;
use serde_json::json;

use crate::cli::{Library, Sandbox};

/// `group import-claims`: a CSV into the group's ledger, all rows or none.
fn group_import_claims(s: &Sandbox) {
    let prt = s.partner("broker");
    let partner = PartnerId::parse(&prt).unwrap();
    let test = Scope::new(partner, Mode::Test);
    let lib = Library::open(s);
    let (group, _) = lib.quoted_group(&test, "claims.example", 3);
    let g = group.id.as_str();
    let file = s.dir.path().join("claims.csv");
    std::fs::write(
        &file,
        "month,category,amount_cents,member_count\n2026-10,pharmacy,120000,14\n2026-10,inpatient,900000,3\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    assert_eq!(
        s.json(&["group", "import-claims", g, "--file", path]),
        json!({"group_id": g, "imported": 2})
    );
    let ledger = lib
        .rt
        .block_on(lib.stores.claims.claims(&test, &group.id))
        .unwrap();
    assert_eq!(ledger.len(), 2);
    // A bad row imports nothing; a bad header, an unknown group: one line.
    std::fs::write(
        &file,
        "month,category,amount_cents,member_count\n2026-11,pharmacy,1,20\n2026-13,dental,-1,2\n",
    )
    .unwrap();
    let err = s.fails(&["group", "import-claims", g, "--file", path]);
    assert!(err.contains("month") && err.contains("category"), "{err}");
    assert_eq!(
        lib.rt
            .block_on(lib.stores.claims.claims(&test, &group.id))
            .unwrap()
            .len(),
        2
    );
    std::fs::write(&file, "when,what\n").unwrap();
    let err = s.fails(&["group", "import-claims", g, "--file", path]);
    assert!(err.contains("header"), "{err}");
    let err = s.fails(&["group", "import-claims", "grp_000000000000", "--file", path]);
    assert!(
        err.contains("header") || err.contains("no such group"),
        "{err}"
    );
}

/// The operator reviews a live business verification and reads the
/// micro-deposits of a live bank account.
fn company_verify_reject_and_deposits(s: &Sandbox) {
    use domain::onboarding::fields::AddressInput;
    use domain::page::PageRequest;
    use domain::services::onboarding::{BankInput, PlanInput, ProfileInput, SignInput};

    let prt = s.partner("broker");
    let live = Scope::new(PartnerId::parse(&prt).unwrap(), Mode::Live);
    let lib = Library::open(s);
    let (group, quote) = lib.quoted_group(&live, "acme-widgets.example", 3);
    let g = group.id.as_str();
    assert_eq!(
        s.fails(&["company", "verify", g]),
        format!("error: no enrollment for group {g}")
    );
    lib.enroll(&live, &group.id, &quote.id);
    let onboarding = lib.services.onboarding();
    let id = lib
        .rt
        .block_on(lib.stores.quotes.group_enrollment(&live, &group.id))
        .unwrap()
        .unwrap()
        .id;
    // Nothing waits for review yet.
    assert_eq!(s.fails_json(&["company", "verify", g])["error"], "conflict");
    let profile = ProfileInput {
        legal_name: Some("Acme Widgets Inc".to_owned()),
        ein: Some("12-3456789".to_owned()),
        entity_type: Some("c_corporation".to_owned()),
        address: Some(AddressInput {
            line1: Some("1 Main St".to_owned()),
            line2: None,
            city: Some("Chicago".to_owned()),
            state: Some("IL".to_owned()),
            zip: Some("60601".to_owned()),
        }),
        phone: Some("312-555-0142".to_owned()),
        signatory_title: Some("CEO".to_owned()),
    };
    lib.rt.block_on(async {
        onboarding.save_profile(&live, &id, profile).await.unwrap();
        let step = onboarding.request_verification(&live, &id).await.unwrap();
        assert_eq!(
            step.status.as_str(),
            "pending",
            "live mode waits for review"
        );
    });
    let reason = "The EIN belongs to another company";
    assert_eq!(
        s.json(&["company", "reject", g, "--reason", reason]),
        json!({"group_id": g, "step": "business_verification", "status": "action_required", "reason": reason})
    );
    assert_eq!(
        s.fails_json(&["company", "reject", g, "--reason", " "])["error"],
        "invalid_request"
    );
    lib.rt.block_on(async {
        onboarding.request_verification(&live, &id).await.unwrap();
    });
    assert_eq!(
        s.run(&["company", "verify", g]).trim_end(),
        format!("{g}: business verification completed")
    );

    // Deposits: none before a bank account; two amounts of 1 to 99 cents after.
    assert_eq!(
        s.fails_json(&["company", "deposits", g])["error"],
        "not_found"
    );
    lib.rt.block_on(async {
        let bank = BankInput {
            routing_number: Some("011000015".to_owned()),
            account_number: Some("000123456789".to_owned()),
            account_type: Some("checking".to_owned()),
            holder_name: Some("Acme Widgets Inc".to_owned()),
        };
        onboarding.save_bank(&live, &id, bank).await.unwrap();
    });
    let shown = s.json(&["company", "deposits", g]);
    let amounts: Vec<u64> = shown["amounts_cents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_u64().unwrap())
        .collect();
    assert_eq!(amounts.len(), 2, "{shown}");
    assert!(amounts.iter().all(|a| (1..=99).contains(a)), "{shown}");
    // The operator's amounts confirm the account.
    let step = lib.rt.block_on(async {
        let cents: Vec<i64> = amounts.iter().map(|a| i64::try_from(*a).unwrap()).collect();
        onboarding
            .confirm_deposits(&live, &id, &cents)
            .await
            .unwrap()
    });
    assert_eq!(step.status.as_str(), "completed");
    let text = s.run(&["company", "deposits", g]);
    assert_eq!(
        text.trim_end(),
        format!(
            "{g}: micro-deposits of {} and {} cents",
            amounts[0], amounts[1]
        )
    );

    // The plan signed, the live checklist is complete and waits in review;
    // the operator's go-live (underwriting done) takes the company to prod.
    let enrollment_status = || {
        let e = lib
            .rt
            .block_on(lib.services.enrollments().get(&live, &id))
            .unwrap();
        let view = lib.rt.block_on(onboarding.view(&live, &id)).unwrap();
        (view.status.as_str(), e.company_state.map(|c| c.as_str()))
    };
    lib.rt.block_on(async {
        onboarding
            .save_plan(&live, &id, PlanInput::default())
            .await
            .unwrap();
        let sign = SignInput {
            signer_name: Some("dana admin".to_owned()),
            accepted: Some(true),
            ip: None,
            user_agent: None,
        };
        onboarding.sign_plan(&live, &id, sign).await.unwrap();
    });
    assert_eq!(enrollment_status(), ("in_review", Some("sandbox")));
    assert_eq!(s.json(&["group", "go-live", g])["company_state"], "prod");
    assert_eq!(enrollment_status(), ("active", Some("prod")));
    let events = lib
        .rt
        .block_on(lib.stores.outbox.events(
            &live,
            &domain::event::EventFilter::since(0),
            &PageRequest::first(200),
        ))
        .unwrap();
    let went_live: Vec<_> = events
        .items
        .iter()
        .filter(|e| e.event.event_type() == domain::event::EventType::GroupStateChanged)
        .collect();
    assert_eq!(went_live.len(), 1);
    // Not forced: every required step was completed.
    assert_ne!(went_live[0].event.data.data()["forced"], true);
}

on_both_backends!(group_import_claims, company_verify_reject_and_deposits);
