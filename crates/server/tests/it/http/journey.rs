//! The partner journey end to end through the HTTP app: group → census →
//! (market comparison) → quote → enrollment → go live, with the group's
//! status and company state at each step.

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{TestApp, assert_error, create_group, get, post, put, send};

fn census() -> Value {
    json!({"members": [
        {"external_id": "E1", "first_name": "Ana", "last_name": "Diaz", "email": "ana@acme-mfg.com",
         "dob": "1988-04-12", "zip": "60601",
         "dependents": [{"relationship": "child", "name": "Leo", "dob": "2016-09-30"}]},
        {"external_id": "E2", "first_name": "Ben", "last_name": "Okafor", "dob": "1979-11-02", "zip": "60614"},
    ]})
}

crate::http_on_both!(the_journey_from_group_to_live);
async fn the_journey_from_group_to_live(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(&svc, &key, &crate::http::group_body("acme-mfg.com")).await;
    let gid = g["id"].as_str().unwrap().to_owned();
    assert_eq!(g["status"], "created");

    let a = send(
        &svc,
        put(&format!("/v1/groups/{gid}/census"), &key, &census()),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["rates"], "pending");

    let quotes = format!("/v1/groups/{gid}/quotes");
    let a = send(&svc, post(&quotes, &key, &json!({}))).await;
    assert_error(&a, 409, "rates_pending");
    assert_eq!(a.headers.get("retry-after").unwrap(), "1");

    assert_eq!(app.run_jobs().await, 1);
    let a = send(&svc, post(&quotes, &key, &json!({}))).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let q = a.body.clone();
    assert_eq!(q["status"], "ready");
    assert_eq!(q["pricing_basis"], "market_rates");
    assert_eq!(q["census"]["employees"], 2);
    assert_eq!(q["plan_year_start_date"], "2026-12-01");
    assert_eq!(q["expires_at"], "2026-12-21T13:14:00Z");
    let qid = q["id"].as_str().unwrap().to_owned();
    // Deterministic: the same census, card and body give the same figures.
    let again = send(&svc, post(&quotes, &key, &json!({}))).await;
    assert_eq!(again.body["monthly"], q["monthly"]);
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &key)).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.body, q);

    let g = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(g.body["status"], "quoted");

    let body =
        json!({"quote_id": qid, "signatory": {"name": "Dana Lee", "email": "dana@acme-mfg.com"}});
    let a = send(
        &svc,
        post(&format!("/v1/groups/{gid}/enrollments"), &key, &body),
    )
    .await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["status"], "onboarding");
    assert_eq!(a.body["company_state"], "sandbox");
    assert_eq!(a.body["employer_portal"]["invite_suppressed"], true);
    assert_eq!(a.body["start_date"], "2026-12-01");
    let again = send(
        &svc,
        post(&format!("/v1/groups/{gid}/enrollments"), &key, &body),
    )
    .await;
    assert_error(&again, 409, "conflict");

    let list = send(&svc, get(&format!("/v1/groups/{gid}/enrollments"), &key)).await;
    assert_eq!(list.body["count"], 1, "{}", list.body);

    let live = send(
        &svc,
        post(
            &format!("/v1/test_helpers/groups/{gid}/go_live"),
            &key,
            &json!({}),
        ),
    )
    .await;
    assert_eq!(live.status, 200, "{}", live.body);
    assert_eq!(live.body["status"], "active");
    assert_eq!(live.body["company_state"], "prod");
}
