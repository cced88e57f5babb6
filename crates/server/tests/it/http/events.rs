//! `GET /v1/events` and `GET /v1/events/{id}` (contract section 6): the
//! partner's events of the key's mode for 30 days, newest first, in the
//! envelope webhooks deliver and the caller's field style.

use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{TestApp, assert_error, create_group, get, group_body, post, put, send};

/// Runs group → census → comparison → quote → enrollment → go-live with
/// `key`, moving the clock a second between steps; the group id.
async fn journey<S, B>(app: &TestApp, svc: &S, key: &str, domain: &str) -> String
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let g = create_group(svc, key, &group_body(domain)).await;
    let gid = g["id"].as_str().unwrap().to_owned();
    let census = json!({"members": [{"external_id": "E1", "dob": "1988-04-12", "zip": "60601"}]});
    let a = send(svc, put(&format!("/v1/groups/{gid}/census"), key, &census)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.clock.advance(1);
    app.run_jobs().await;
    app.clock.advance(1);
    let q = send(
        svc,
        post(&format!("/v1/groups/{gid}/quotes"), key, &json!({})),
    )
    .await;
    assert_eq!(q.status, 201, "{}", q.body);
    let body = json!({"quoteId": q.body["id"].as_str().or(q.body["quoteId"].as_str()),
                      "signatory": {"name": "D", "email": "d@x.com"}});
    app.clock.advance(1);
    let e = send(
        svc,
        post(&format!("/v1/groups/{gid}/enrollments"), key, &body),
    )
    .await;
    assert_eq!(e.status, 201, "{}", e.body);
    app.clock.advance(1);
    let l = send(
        svc,
        post(
            &format!("/v1/test_helpers/groups/{gid}/go_live"),
            key,
            &json!({}),
        ),
    )
    .await;
    assert_eq!(l.status, 200, "{}", l.body);
    gid
}

fn types(list: &Value) -> Vec<&str> {
    list["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect()
}

crate::http_on_both!(events_are_listed_newest_first_in_the_webhook_envelope);
async fn events_are_listed_newest_first_in_the_webhook_envelope(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = journey(&app, &svc, &key, "acme-mfg.com").await;
    let a = send(&svc, get("/v1/events", &key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        types(&a.body),
        [
            "group.state_changed",
            "enrollment.created",
            "census.processed"
        ]
    );
    assert_eq!(a.body["next_cursor"], Value::Null);
    let newest = &a.body["events"][0];
    assert!(newest["id"].as_str().unwrap().starts_with("evt_"));
    assert_eq!(newest["mode"], "test");
    assert_eq!(newest["created_at"], "2026-11-21T13:14:04Z");
    // Broker keys get the data in snake_case too.
    assert_eq!(
        newest["data"],
        json!({"group_id": gid, "company_domain": "acme-mfg.com",
               "previous_state": "sandbox", "state": "prod", "forced": true})
    );
    let one = send(
        &svc,
        get(
            &format!("/v1/events/{}", newest["id"].as_str().unwrap()),
            &key,
        ),
    )
    .await;
    assert_eq!(one.status, 200);
    assert_eq!(&one.body, newest);

    // Pages of one, then the end.
    let p1 = send(&svc, get("/v1/events?limit=2", &key)).await;
    assert_eq!(
        types(&p1.body),
        ["group.state_changed", "enrollment.created"]
    );
    let cursor = p1.body["next_cursor"].as_str().unwrap();
    let p2 = send(
        &svc,
        get(&format!("/v1/events?limit=2&cursor={cursor}"), &key),
    )
    .await;
    assert_eq!(types(&p2.body), ["census.processed"]);
    assert_eq!(p2.body["next_cursor"], Value::Null);
    assert_error(
        &send(&svc, get("/v1/events?limit=0", &key)).await,
        400,
        "invalid_request",
    );
    let foreign = format!("/v1/events?cursor={cursor}x");
    assert_error(
        &send(&svc, get(&foreign, &key)).await,
        400,
        "invalid_request",
    );
}

crate::http_on_both!(hr_platforms_read_events_in_camel_case);
async fn hr_platforms_read_events_in_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.hr_platform().await;
    journey(&app, &svc, &key, "acme-mfg.com").await;
    let a = send(&svc, get("/v1/events?limit=1", &key)).await;
    let e = &a.body["events"][0];
    assert!(e["createdAt"].is_string(), "{e}");
    assert!(e["data"]["previousState"].is_string(), "{e}");
    assert!(a.body["nextCursor"].is_string(), "{}", a.body);
}

crate::http_on_both!(events_stay_in_their_partner_and_mode_for_30_days);
async fn events_stay_in_their_partner_and_mode_for_30_days(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    journey(&app, &svc, &key, "acme-mfg.com").await;
    let list = send(&svc, get("/v1/events", &key)).await;
    let id = list.body["events"][0]["id"].as_str().unwrap().to_owned();
    let path = format!("/v1/events/{id}");

    // Another partner, and the other mode of the same partner, see nothing.
    let (_, other) = app.broker().await;
    let live_partner = app.partner("Live Co", PartnerKind::Broker, true).await;
    let live = app.key(&live_partner, Mode::Live).await;
    for k in [&other, &live] {
        let a = send(&svc, get("/v1/events", k)).await;
        assert_eq!(a.body["events"], json!([]), "{}", a.body);
        let a = send(&svc, get(&path, k)).await;
        assert_error(&a, 404, "not_found");
    }
    for bad in ["evt_000000000000", "evt_x", "grp_000000000000"] {
        let a = send(&svc, get(&format!("/v1/events/{bad}"), &key)).await;
        assert_error(&a, 404, "not_found");
    }

    // 30 days after the go-live it is still there; a second later it is not.
    app.clock.advance(30 * 86_400);
    assert_eq!(send(&svc, get(&path, &key)).await.status, 200);
    assert_eq!(
        types(&send(&svc, get("/v1/events", &key)).await.body).len(),
        1
    );
    app.clock.advance(1);
    assert_error(&send(&svc, get(&path, &key)).await, 404, "not_found");
    assert_eq!(
        types(&send(&svc, get("/v1/events", &key)).await.body).len(),
        0
    );
}
