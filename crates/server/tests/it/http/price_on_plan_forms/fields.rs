//! `fields` and `exclude` trimming a price-on-plan answer.

use std::time::Duration;

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::{
    app_with, census_and_plan, examples, items, keys, price, price_ok, quote_creates, set, text,
};
use crate::http::price_on_plan_forms::{CAMEL_TOP, SNAKE_TOP};
use crate::http::{get, send};

// ---------------------------------------------------- fields, exclude --

crate::http_on_both!(fields_and_exclude_trim_the_answer_for_free);
async fn fields_and_exclude_trim_the_answer_for_free(db: TestDb) {
    // One create an hour per key: every trimmed repeat is a free poll.
    let app = app_with(db, quote_creates(1), Duration::from_secs(10));
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let with = |k: &str, names: Value| {
        let mut b = examples();
        b[k] = names;
        b
    };

    let full = price_ok(&svc, &broker, &examples(), 201).await;
    for names in [json!(["pmpm_cents"]), json!(["pmpmCents"])] {
        let a = price_ok(&svc, &broker, &with("fields", names), 201).await;
        let b = &a.body;
        assert_eq!(b["quote_id"], full.body["quote_id"]);
        assert_eq!(
            keys(b),
            set(&["quote_id", "group_id", "status", "reason", "plans"]),
            "{b}"
        );
        for (p, f) in items(b, "/plans").iter().zip(items(&full.body, "/plans")) {
            assert_eq!(
                keys(p),
                set(&["id", "status", "reason", "pmpm_cents"]),
                "{p}"
            );
            assert_eq!(p["pmpm_cents"], f["pmpm_cents"]);
        }
    }
    let a = price_ok(&svc, &broker, &with("exclude", json!(["assumptions"])), 201).await;
    let mut want = set(SNAKE_TOP);
    want.remove("assumptions");
    assert_eq!(keys(&a.body), want);
    assert_eq!(a.body["plans"], full.body["plans"]);
    // The stored answer is whole.
    let qid = text(&full.body, "/quote_id");
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &broker)).await;
    assert_eq!(read.body, full.body);

    let full = price_ok(&svc, &hr, &examples(), 201).await;
    let mut trimmed = Vec::new();
    for names in [
        json!(["monthly", "worst_year"]),
        json!(["monthly", "worstYear"]),
    ] {
        let a = price_ok(&svc, &hr, &with("fields", names), 201).await;
        let b = &a.body;
        assert_eq!(b["quoteId"], full.body["quoteId"]);
        assert_eq!(
            keys(b),
            set(&["quoteId", "groupId", "status", "reason", "versions"]),
            "{b}"
        );
        for v in items(b, "/versions") {
            assert_eq!(
                keys(v),
                set(&["id", "status", "reason", "monthly", "worst_year"]),
                "{v}"
            );
        }
        trimmed.push(a.body);
    }
    assert_eq!(trimmed[0], trimmed[1]);
    let a = price_ok(
        &svc,
        &hr,
        &with("exclude", json!(["time_machine", "ignoredPlans"])),
        201,
    )
    .await;
    let mut want = set(CAMEL_TOP);
    want.remove("time_machine");
    want.remove("ignoredPlans");
    assert_eq!(keys(&a.body), want);
    for v in items(&a.body, "/versions") {
        assert!(v.get("time_machine").is_none(), "{v}");
        assert!(v.get("monthly").is_some(), "{v}");
    }
    // Still one create each: another body is limited.
    let other = price(&svc, &hr, &census_and_plan()).await;
    crate::http::assert_error(&other, 429, "rate_limited");
}
