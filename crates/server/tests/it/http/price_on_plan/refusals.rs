//! Refused price-on-plan requests: 422 for unpriceable censuses, 409 for a held domain.

use std::time::Duration;

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::{
    app_with, assumes, census, employees, group_count, plan, price, price_ok, quote_creates, text,
    with_top,
};
use crate::http::{assert_error, create_group, group_body, post, put, send};

// ---------------------------------------------------------------- 422 --

crate::http_on_both!(unpriceable_censuses_are_422_and_leave_nothing);
async fn unpriceable_censuses_are_422_and_leave_nothing(db: TestDb) {
    let app = app_with(db, quote_creates(1), Duration::from_secs(10));
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let all = census();
    let contractor: Vec<Value> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["employment_type"] == "contractor")
        .cloned()
        .collect();
    assert_eq!(contractor.len(), 1);
    let a = price(&svc, &key, &json!({"census": contractor, "plan": plan()})).await;
    assert_error(&a, 422, "census_required");

    let mut terminated = employees(3, "60601");
    for m in terminated.as_array_mut().unwrap() {
        m["status"] = json!("terminated");
    }
    let a = price(&svc, &key, &json!({"census": terminated, "plan": plan()})).await;
    assert_error(&a, 422, "census_required");

    // No rate-card area for the census ZIP, and no company ZIP.
    let nowhere = json!({"census": employees(3, "00000"), "plan": plan()});
    let a = price(&svc, &key, &nowhere).await;
    assert_error(&a, 422, "market_unavailable");

    assert_eq!(group_count(&svc, &key).await, 0);
    // Uncharged: the one create of the hour prices the same census with a
    // priced company ZIP to fall back on.
    let mut located = nowhere.clone();
    located["company"] = json!({"zip": "60601"});
    let a = price_ok(&svc, &key, &located, 201).await;
    let stand_in = "3 employees whose ZIP has no priced rating area rated in area IL-01";
    assert!(assumes(&a.body, stand_in), "{}", a.body);
    assert_eq!(group_count(&svc, &key).await, 1);
}

// ---------------------------------------------------------------- 409 --

crate::http_on_both!(a_domain_held_by_an_enrolled_group_is_409);
async fn a_domain_held_by_an_enrolled_group_is_409(db: TestDb) {
    // Three creates an hour: the group's quote, the first lead, and one
    // after the conflict, which starts no pricing and costs nothing.
    let app = app_with(db, quote_creates(3), Duration::from_secs(10));
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = text(
        &create_group(&svc, &key, &group_body("held.com")).await,
        "/id",
    )
    .to_owned();
    let census_path = format!("/v1/groups/{gid}/census");
    let members = json!({"members": employees(2, "60601")});
    let a = send(&svc, put(&census_path, &key, &members)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.run_jobs().await;
    let q = send(
        &svc,
        post(&format!("/v1/groups/{gid}/quotes"), &key, &json!({})),
    )
    .await;
    assert_eq!(q.status, 201, "{}", q.body);
    let company = json!({"name": "Acme", "domain": "held.com"});
    let body = with_top("company", company);

    // Not yet enrolled: the domain is free to use for a lead.
    price_ok(&svc, &key, &body, 201).await;
    assert_eq!(group_count(&svc, &key).await, 2);

    let enroll = json!({"quote_id": q.body["id"],
                        "signatory": {"name": "Dana Lee", "email": "dana@held.com"}});
    let e = send(
        &svc,
        post(&format!("/v1/groups/{gid}/enrollments"), &key, &enroll),
    )
    .await;
    assert_eq!(e.status, 201, "{}", e.body);
    let mut other = body.clone();
    other["company"]["name"] = json!("Acme Again");
    let a = price(&svc, &key, &other).await;
    assert_error(&a, 409, "conflict");
    assert_eq!(group_count(&svc, &key).await, 2);
    let elsewhere = with_top("company", json!({"name": "Acme", "domain": "free.com"}));
    price_ok(&svc, &key, &elsewhere, 201).await;
    assert_eq!(group_count(&svc, &key).await, 3);
}
