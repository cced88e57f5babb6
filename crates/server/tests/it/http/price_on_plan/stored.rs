//! What price-on-plan keeps: the census as a lead, idempotent replays, partner/mode isolation.

use std::collections::BTreeSet;
use std::time::Duration;

use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::{
    PATH, assert_pending, assumes, census, census_and_plan, examples, group_count, items, keyed,
    price_ok, text, with_top,
};
use crate::http::{TestApp, assert_error, get, post, send};

// --------------------------------------------------------------- lead --

crate::http_on_both!(the_census_is_kept_as_a_lead_of_the_company);
async fn the_census_is_kept_as_a_lead_of_the_company(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let company = json!({"name": "Acme Robotics", "domain": "acme-robotics.example",
                         "external_id": "crm-77", "zip": "94103", "state": "CA"});
    let a = price_ok(&svc, &key, &with_top("company", company), 201).await;
    let (qid, gid) = (text(&a.body, "/quote_id"), text(&a.body, "/group_id"));

    let g = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.body["status"], "quoted");
    assert_eq!(g.body["company_name"], "Acme Robotics");
    assert_eq!(g.body["domain"], "acme-robotics.example");
    assert_eq!(g.body["external_id"], "crm-77");
    assert_eq!(g.body["address"]["zip"], "94103", "{}", g.body);
    assert_eq!(g.body["address"]["state"], "CA", "{}", g.body);
    assert_eq!(g.body["census_member_count"], 12, "{}", g.body);

    let c = send(&svc, get(&format!("/v1/groups/{gid}/census"), &key)).await;
    assert_eq!(c.status, 200, "{}", c.body);
    let rows = census();
    let sent: BTreeSet<&str> = items(&rows, "")
        .iter()
        .map(|m| text(m, "/external_id"))
        .collect();
    let members = items(&c.body, "/members");
    let stored: BTreeSet<&str> = members.iter().map(|m| text(m, "/external_id")).collect();
    assert_eq!(stored, sent);

    let list = send(&svc, get(&format!("/v1/groups/{gid}/quotes"), &key)).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let summary = json!({"id": qid, "group_id": gid, "mode": "test", "kind": "price_on_plan",
                         "status": "ready", "expires_at": "2026-12-21T13:14:00Z",
                         "created_at": "2026-11-21T13:14:00Z"});
    assert_eq!(list.body["quotes"], json!([summary]));
    assert_eq!(list.body["next_cursor"], Value::Null);

    // A price-on-plan quote is not one to enroll with.
    let enroll = json!({"quote_id": qid,
                        "signatory": {"name": "Dana Lee", "email": "dana@acme-robotics.example"}});
    let e = send(
        &svc,
        post(&format!("/v1/groups/{gid}/enrollments"), &key, &enroll),
    )
    .await;
    assert_error(&e, 409, "conflict");
    let g = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(g.body["status"], "quoted");
}

crate::http_on_both!(without_a_company_the_lead_gets_a_generated_one);
async fn without_a_company_the_lead_gets_a_generated_one(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let a = price_ok(&svc, &key, &census_and_plan(), 201).await;
    assert!(assumes(&a.body, "Company"), "{}", a.body);
    let gid = text(&a.body, "/group_id");
    let g = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.body["status"], "quoted");
    let name = text(&g.body, "/company_name");
    let date = name
        .strip_prefix("Price-on-plan lead ")
        .unwrap_or_else(|| panic!("{name}"));
    let shape = date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    assert!(shape, "{name}");
    let hex = gid.trim_start_matches("grp_");
    assert_eq!(g.body["domain"], json!(format!("lead-{hex}.invalid")));
    // The first census ZIP stands in for the company's.
    assert_eq!(g.body["address"]["zip"], "94103", "{}", g.body);
    let c = send(&svc, get(&format!("/v1/groups/{gid}/census"), &key)).await;
    assert_eq!(items(&c.body, "/members").len(), 12, "{}", c.body);
}

// -------------------------------------------------------- idempotency --

crate::http_on_both!(an_idempotency_key_replays_a_finished_answer_only);
async fn an_idempotency_key_replays_a_finished_answer_only(db: TestDb) {
    let app = TestApp::with_wait_budget(db, Duration::ZERO);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = examples();
    let req = || keyed(post(PATH, &key, &body), "pop-1");

    // A 202 carries Retry-After: not stored, the key stays usable.
    let first = send(&svc, req()).await;
    let gid = assert_pending(&first, false);
    assert_eq!(first.header("idempotent-replay"), None);
    let again = send(&svc, req()).await;
    assert_eq!(assert_pending(&again, false), gid);
    assert_eq!(again.header("idempotent-replay"), None);

    assert_eq!(app.run_jobs().await, 1);
    let done = send(&svc, req()).await;
    assert_eq!(done.status, 201, "{}", done.body);
    assert_eq!(done.header("idempotent-replay"), None);
    assert_eq!(done.body["group_id"], json!(gid));

    // The finished answer is stored: a replay, byte for byte.
    app.clock.advance(60 * 60);
    let replay = send(&svc, req()).await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replay"), Some("true"));
    assert_eq!(replay.raw, done.raw);
    assert_eq!(replay.header("location"), done.header("location"));
    assert_eq!(group_count(&svc, &key).await, 1);
}

crate::http_on_both!(an_idempotency_key_replays_a_direct_201);
async fn an_idempotency_key_replays_a_direct_201(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = census_and_plan();
    let first = send(&svc, keyed(post(PATH, &key, &body), "pop-2")).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let replay = send(&svc, keyed(post(PATH, &key, &body), "pop-2")).await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replay"), Some("true"));
    assert_eq!(replay.raw, first.raw);
    assert_eq!(replay.header("location"), first.header("location"));
    assert_eq!(group_count(&svc, &key).await, 1);
}

// ---------------------------------------------------------- isolation --

crate::http_on_both!(another_partner_or_mode_does_not_find_the_quote);
async fn another_partner_or_mode_does_not_find_the_quote(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let a = app.partner("Partner A", PartnerKind::Broker, true).await;
    let a_test = app.key(&a, Mode::Test).await;
    let a_live = app.key(&a, Mode::Live).await;
    let b = app.partner("Partner B", PartnerKind::Broker, false).await;
    let b_test = app.key(&b, Mode::Test).await;
    let body = census_and_plan();

    let mine = price_ok(&svc, &a_test, &body, 201).await;
    let qid = text(&mine.body, "/quote_id");
    let theirs = price_ok(&svc, &b_test, &body, 201).await;
    assert_ne!(theirs.body["quote_id"], mine.body["quote_id"]);
    assert_ne!(theirs.body["group_id"], mine.body["group_id"]);
    assert_eq!(group_count(&svc, &a_test).await, 1);
    assert_eq!(group_count(&svc, &b_test).await, 1);

    let path = format!("/v1/quotes/{qid}");
    for key in [&b_test, &a_live] {
        let r = send(&svc, get(&path, key)).await;
        assert_error(&r, 404, "not_found");
    }
    let live = price_ok(&svc, &a_live, &body, 201).await;
    assert_ne!(live.body["group_id"], mine.body["group_id"]);
    assert_eq!(group_count(&svc, &a_live).await, 1);
    assert_eq!(group_count(&svc, &a_test).await, 1);
    let own = send(&svc, get(&path, &a_test)).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(own.body, mine.body);
}
