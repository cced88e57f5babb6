//! Price-on-plan past its budget: 202 `pricing`, polling, background finish, `in_review`.

use std::time::Duration;

use domain::mode::Mode;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::price_on_plan::{
    app_with, assert_pending, census, census_and_plan, employees, examples, group_count, int,
    items, keys, market_plans, plan, price, price_ok, quote_creates, set, text,
};
use crate::http::{TestApp, assert_error, get, post, send};

// ---------------------------------------------------- 202 and polling --

crate::http_on_both!(a_zero_budget_answers_202_then_the_same_body_finds_the_answer);
async fn a_zero_budget_answers_202_then_the_same_body_finds_the_answer(db: TestDb) {
    let app = app_with(db, quote_creates(1), Duration::ZERO);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let body = examples();

    let first = price(&svc, &key, &body).await;
    let gid = assert_pending(&first, false);
    assert_eq!(
        items(&first.body, "/ignored_plans").len(),
        3,
        "{}",
        first.body
    );
    let again = price(&svc, &key, &body).await;
    assert_eq!(assert_pending(&again, false), gid);
    // Another key of the same partner and mode finds the same pricing.
    let second_key = app.key(&partner, Mode::Test).await;
    let other_key = price(&svc, &second_key, &body).await;
    assert_eq!(assert_pending(&other_key, false), gid);
    assert_eq!(group_count(&svc, &key).await, 1);

    // While pricing, the group's quote is listed as `pricing` and reads
    // back as the pending answer.
    let list = send(&svc, get(&format!("/v1/groups/{gid}/quotes"), &key)).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let listed = items(&list.body, "/quotes");
    assert_eq!(listed.len(), 1, "{}", list.body);
    assert_eq!(listed[0]["status"], "pricing");
    let qid = text(&listed[0], "/id").to_owned();
    assert_eq!(first.body["quote_id"], json!(qid));
    let polled = first.header("location").unwrap().to_owned();
    let read = send(&svc, get(&polled, &key)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["status"], "pricing", "{}", read.body);
    assert_eq!(read.body["group_id"], json!(gid));
    assert_eq!(read.body["quote_id"], json!(qid));
    assert!(
        int(&read.body, "/retry_after_seconds") >= 1,
        "{}",
        read.body
    );

    assert_eq!(app.run_jobs().await, 1);

    // The same body — camelCase, keys in another order, trimmed — is the
    // same request: the finished answer, not a new pricing.
    let camel = json!({
        "fields": ["pmpm_cents"],
        "marketPlans": market_plans(),
        "plan": {
            "pmpmCents": 52000, "coinsurancePct": 20, "oopMaxFamilyCents": 1500000,
            "oopMaxIndividualCents": 750000, "deductibleFamilyCents": 680000,
            "deductibleIndividualCents": 340000, "hsaEligible": true, "network": "Full PPO",
            "planType": "PPO", "planName": "Silver Full PPO HSA 3400",
            "carrier": "Blue Shield of California"
        },
        "census": census(),
    });
    let done = price_ok(&svc, &key, &camel, 201).await;
    assert_eq!(done.body["group_id"], json!(gid));
    assert_eq!(done.body["quote_id"], json!(qid));
    assert_eq!(done.body["status"], "ready");
    assert_eq!(done.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    assert_eq!(done.header("retry-after"), None);

    let full = price_ok(&svc, &key, &body, 201).await;
    assert_eq!(items(&full.body, "/plans").len(), 2, "{}", full.body);
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &key)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body, full.body);

    // Polling is free: one create an hour, and the same body answers
    // again and again; another body is a new pricing, and limited.
    for _ in 0..5 {
        let a = price_ok(&svc, &key, &body, 201).await;
        assert_eq!(a.raw, full.raw);
    }
    let list = send(&svc, get(&format!("/v1/groups/{gid}/quotes"), &key)).await;
    assert_eq!(list.body["quotes"][0]["status"], "ready", "{}", list.body);
    let other = price(&svc, &key, &census_and_plan()).await;
    assert_error(&other, 429, "rate_limited");
    assert_eq!(group_count(&svc, &key).await, 1);
}

crate::http_on_both!(a_zero_budget_pending_answer_in_the_camel_form);
async fn a_zero_budget_pending_answer_in_the_camel_form(db: TestDb) {
    let app = TestApp::with_wait_budget(db, Duration::ZERO);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;
    let first = price(&svc, &hr, &examples()).await;
    let gid = assert_pending(&first, true);
    let b = &first.body;
    assert_eq!(b["baseFromMarket"], false);
    let used = json!({"sent": 5, "used": 2, "baseCandidates": 1, "benchmarkCandidates": 1});
    assert_eq!(b["usedPlans"], used);
    assert_eq!(keys(&b["sweep"]), set(&["step", "planCount"]));
    let ignored: Vec<i64> = items(b, "/ignoredPlans")
        .iter()
        .map(|p| int(p, "/index"))
        .collect();
    assert_eq!(ignored, [1, 3, 4]);
    let ready_at = text(b, "/estimatedReadyAt");
    assert!(
        ready_at.starts_with("2026-11-21T13:1") && ready_at.ends_with('Z'),
        "{ready_at}"
    );

    // Without a plan the base comes from the market.
    let market = json!({"census": census(), "marketPlans": market_plans()});
    let m = price(&svc, &hr, &market).await;
    assert_pending(&m, true);
    assert_eq!(m.body["baseFromMarket"], true, "{}", m.body);

    // Listed in the HR platform's style.
    let list = send(&svc, get(&format!("/v1/groups/{gid}/quotes"), &hr)).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let summary = &items(&list.body, "/quotes")[0];
    let summary_keys = [
        "id",
        "groupId",
        "mode",
        "kind",
        "status",
        "expiresAt",
        "createdAt",
    ];
    assert_eq!(keys(summary), set(&summary_keys), "{summary}");
    assert_eq!(summary["kind"], "price_on_plan");
    assert_eq!(summary["status"], "pricing");
    assert!(list.body.get("nextCursor").is_some(), "{}", list.body);

    assert_eq!(app.run_jobs().await, 2);
    let done = price_ok(&svc, &hr, &examples(), 201).await;
    assert_eq!(done.body["groupId"], json!(gid));
    assert_eq!(done.body["status"], "ready");
}

crate::http_on_both!(a_pricing_past_a_tiny_budget_finishes_in_the_background);
async fn a_pricing_past_a_tiny_budget_finishes_in_the_background(db: TestDb) {
    let app = TestApp::with_wait_budget(db, Duration::from_millis(1));
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = json!({"census": employees(2_000, "60601"), "plan": plan()});
    let first = price(&svc, &key, &body).await;
    let gid = assert_pending(&first, false);
    let mut finished = None;
    for _ in 0..300 {
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
        let a = price(&svc, &key, &body).await;
        match a.status.as_u16() {
            202 => assert_eq!(assert_pending(&a, false), gid),
            201 => {
                finished = Some(a);
                break;
            }
            other => panic!("{other}: {}", a.body),
        }
    }
    let done = finished.unwrap_or_else(|| panic!("still pricing after 60 s"));
    assert_eq!(done.body["group_id"], json!(gid));
    assert_eq!(
        done.body["status"], "in_review",
        "2,000 employees: {}",
        done.body
    );
    assert_eq!(group_count(&svc, &key).await, 1);
}

// ---------------------------------------------------------- in review --

crate::http_on_both!(an_in_review_answer_is_finalized_like_any_quote);
async fn an_in_review_answer_is_finalized_like_any_quote(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    // Above the in-review threshold (200 employees).
    let body = json!({"census": employees(201, "60601"), "plan": plan()});
    let a = price_ok(&svc, &key, &body, 201).await;
    assert_eq!(a.body["status"], "in_review", "{}", a.body);
    for p in items(&a.body, "/plans") {
        assert_eq!(p["status"], "in_review", "{p}");
    }
    let (qid, gid) = (text(&a.body, "/quote_id"), text(&a.body, "/group_id"));

    let path = format!("/v1/test_helpers/quotes/{qid}/finalize");
    let f = send(&svc, post(&path, &key, &json!({}))).await;
    // Underwriting finalized it: the event is sent ...
    let scope = crate::http::scope(&partner, Mode::Test);
    let first = domain::page::PageRequest::first(200);
    let page = app
        .db
        .stores
        .outbox
        .events(&scope, &domain::event::EventFilter::since(0), &first)
        .await
        .unwrap();
    let finalized: Vec<_> = page
        .items
        .into_iter()
        .map(|e| e.event)
        .filter(|e| e.event_type() == domain::event::EventType::QuoteFinalized)
        .collect();
    assert_eq!(finalized.len(), 1);
    let data = json!({"quoteId": qid, "groupId": gid, "status": "ready"});
    assert_eq!(
        domain::document::recase(finalized[0].data.data(), &domain::document::snake_to_camel),
        data
    );
    // ... and the quote reads back `ready`, every version with it.
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &key)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["status"], "ready", "{}", read.body);
    for p in items(&read.body, "/plans") {
        assert_eq!(p["status"], "ready", "{p}");
    }
    let again = price_ok(&svc, &key, &body, 201).await;
    assert_eq!(again.body, read.body);
    // The helper answers the finalized quote (its stored answer, `ready`).
    assert_eq!(f.status, 200, "{}", f.body);
    assert_eq!(f.body["status"], "ready", "{}", f.body);
}
