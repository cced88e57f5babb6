//! When a census or pricing change makes the enrolled quote stale, and when it does not.

use actix_web::test::TestRequest;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::enrollments::{Api, Want, body, census, refused};
use crate::http::{TestApp, assert_error, authed, send};

crate::http_on_both!(a_census_change_of_rating_inputs_makes_the_quote_stale);
async fn a_census_change_of_rating_inputs_makes_the_quote_stale(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let mut moved = census();
    moved["members"][1]["zip"] = json!("60615");
    api.census(&key, &gid, &moved).await;
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    let message = "the census changed since this quote; re-quote";
    refused(&a, 410, "quote_expired", message);
    api.unchanged(&key, &gid).await;
    let q = api.quote(&key, &gid).await;
    let new_q = q["id"].as_str().unwrap();
    Want::hosted(&gid, new_q).check(&api.enroll(&key, &gid, &body(new_q)).await);
}

crate::http_on_both!(a_census_change_of_names_only_keeps_the_quote_current);
async fn a_census_change_of_names_only_keeps_the_quote_current(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let mut renamed = census();
    renamed["members"][0]["last_name"] = json!("Diaz-Ruiz");
    renamed["members"][1]["first_name"] = json!("Benjamin");
    renamed["members"][0]["dependents"][0]["name"] = json!("Leonardo");
    api.census(&key, &gid, &renamed).await;
    api.unchanged(&key, &gid).await;
    Want::hosted(&gid, &qid).check(&api.enroll(&key, &gid, &body(&qid)).await);
}

crate::http_on_both!(what_changes_a_price_makes_the_quote_stale);
async fn what_changes_a_price_makes_the_quote_stale(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    // Reassigned external ids: the same people draw other claims streams.
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let mut swapped = census();
    let members = swapped["members"].as_array_mut().unwrap();
    let (first, second) = (
        members[0]["external_id"].clone(),
        members[1]["external_id"].clone(),
    );
    members[0]["external_id"] = second;
    members[1]["external_id"] = first;
    api.census(&key, &gid, &swapped).await;
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    assert_error(&a, 410, "quote_expired");

    // The group's address ZIP rates members whose own ZIP is not priced.
    let (gid, qid) = api.quoted(&key, "beta-mfg.com").await;
    let patch = json!({"address": {"line1": "1 Main St", "city": "Anchorage", "state": "AK", "zip": "99501"}});
    let path = format!("/v1/groups/{gid}");
    let p = send(
        &svc,
        authed(TestRequest::patch().uri(&path).set_json(&patch), &key),
    )
    .await;
    assert_eq!(p.status, 200, "{}", p.body);
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    assert_error(&a, 410, "quote_expired");
    // A new quote on the same census and address enrolls.
    let q = api.quote(&key, &gid).await;
    let a = api
        .enroll(&key, &gid, &body(q["id"].as_str().unwrap()))
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
}
