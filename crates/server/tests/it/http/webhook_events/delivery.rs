//! Endpoints and deliveries: none without one, test/live apart, the event list, the ping.

use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::webhooks::{
    Receiver, Reply, assert_verifies, at, delivery, event, keys, newest_event, ping,
    processed_census, register, verify,
};
use crate::http::{T0, TestApp, assert_error, get, send};

// ---------------------------------------------------------------------------
// Endpoints: none, and one per mode
// ---------------------------------------------------------------------------

crate::http_on_both!(events_without_an_endpoint_are_not_delivered);
async fn events_without_an_endpoint_are_not_delivered(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(204);
    processed_census(&app, &svc, &key, "acme-mfg.com").await;
    let id = newest_event(&svc, &key).await;
    assert_eq!(delivery(&svc, &key, &id).await["state"], "pending");
    app.deliver().await;
    let d = delivery(&svc, &key, &id).await;
    assert_eq!(
        (&d["state"], &d["last_status_code"], &d["next_attempt_at"]),
        (&json!("no_endpoint"), &Value::Null, &Value::Null)
    );
    // Registering later does not resend it.
    register(&svc, &key, rx.url()).await;
    assert_eq!(app.deliver().await, 0);
    app.clock.advance(3_600);
    assert_eq!(app.deliver().await, 0);
    assert!(rx.received().is_empty());
    assert_eq!(delivery(&svc, &key, &id).await["state"], "no_endpoint");
}

crate::http_on_both!(test_and_live_endpoints_are_kept_apart);
async fn test_and_live_endpoints_are_kept_apart(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let partner = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let (test, live) = (
        app.key(&partner, Mode::Test).await,
        app.key(&partner, Mode::Live).await,
    );
    let (test_rx, live_rx) = (Receiver::answering(204), Receiver::answering(204));
    let test_secret = register(&svc, &test, test_rx.url()).await;
    let live_secret = register(&svc, &live, live_rx.url()).await;
    assert_ne!(test_secret, live_secret);

    // Pings.
    let t = ping(&svc, &test).await;
    assert_eq!(t.body["delivered"], true, "{}", t.body);
    let l = ping(&svc, &live).await;
    assert_eq!(l.body["delivered"], true, "{}", l.body);
    // Events of each mode.
    processed_census(&app, &svc, &test, "test-co.com").await;
    processed_census(&app, &svc, &live, "live-co.com").await;
    assert_eq!(app.deliver().await, 2);

    let now = app.clock.secs();
    for (rx, secret, other, mode, ping_id) in [
        (&test_rx, &test_secret, &live_secret, "test", &t.body["id"]),
        (&live_rx, &live_secret, &test_secret, "live", &l.body["id"]),
    ] {
        let got = rx.received();
        let types: Vec<Value> = got.iter().map(|r| r.json()["type"].clone()).collect();
        assert_eq!(types, [json!("ping"), json!("census.processed")], "{mode}");
        assert_eq!(got[0].json()["id"], *ping_id);
        for r in &got {
            assert_eq!(r.json()["mode"], mode);
            assert_verifies(secret, r, now);
            assert!(verify(other, r, now).is_err());
        }
    }
    // Each mode reads only its own events.
    let test_ping = t.body["id"].as_str().unwrap();
    let a = send(&svc, get(&format!("/v1/events/{test_ping}"), &live)).await;
    assert_error(&a, 404, "not_found");
}

// ---------------------------------------------------------------------------
// GET /v1/events
// ---------------------------------------------------------------------------

crate::http_on_both!(events_are_listed_with_their_delivery);
async fn events_are_listed_with_their_delivery(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    // Before any endpoint: no_endpoint.
    processed_census(&app, &svc, &key, "acme-mfg.com").await;
    app.deliver().await;
    let rx = Receiver::start(vec![Reply::status(204), Reply::status(500)]);
    register(&svc, &key, rx.url()).await;
    app.clock.advance(1);
    let delivered = ping(&svc, &key).await.body["id"].clone();
    app.clock.advance(1);
    let pending = ping(&svc, &key).await.body["id"].clone();

    let a = send(&svc, get("/v1/events", &key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let events = a.body["events"].as_array().unwrap();
    assert_eq!(events.len(), 3, "{}", a.body);
    assert_eq!((&events[0]["id"], &events[1]["id"]), (&pending, &delivered));
    assert_eq!(events[2]["type"], "census.processed");
    let deliveries: Vec<&Value> = events.iter().map(|e| &e["delivery"]).collect();
    assert_eq!(
        deliveries[..2],
        [
            &json!({"state": "pending", "attempts": 1, "last_status_code": 500,
                    "next_attempt_at": at(3)}),
            &json!({"state": "delivered", "attempts": 1, "last_status_code": 204,
                    "next_attempt_at": null}),
        ]
    );
    let d = deliveries[2];
    assert_eq!(
        (&d["state"], &d["last_status_code"], &d["next_attempt_at"]),
        (&json!("no_endpoint"), &Value::Null, &Value::Null)
    );
    assert_eq!(
        keys(d),
        ["attempts", "last_status_code", "next_attempt_at", "state"]
    );
    // The same objects one by one.
    for e in events {
        let one = event(&svc, &key, e["id"].as_str().unwrap()).await;
        assert_eq!(&one, e);
    }
}

// ---------------------------------------------------------------------------
// The test ping
// ---------------------------------------------------------------------------

crate::http_on_both!(the_test_ping_is_signed_delivered_and_reported);
async fn the_test_ping_is_signed_delivered_and_reported(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    assert_error(&ping(&svc, &key).await, 404, "not_found");

    let rx = Receiver::start(vec![Reply::status(204), Reply::status(500)]);
    let secret = register(&svc, &key, rx.url()).await;
    let a = ping(&svc, &key).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let id = a.body["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("evt_") && id.len() == 16, "{id}");
    assert_eq!(
        a.body,
        json!({"id": id, "type": "ping", "delivered": true, "status_code": 204})
    );

    let got = rx.received();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/hooks/benefits")
    );
    assert_eq!(r.header("webhook-id"), Some(id.as_str()));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("webhook-timestamp"), Some(T0.to_string().as_str()));
    assert!(r.header("webhook-signature").unwrap().starts_with("v1,"));
    assert_eq!(
        r.json(),
        json!({"id": id, "type": "ping", "created_at": at(0), "mode": "test", "data": {}})
    );
    assert_verifies(&secret, r, app.clock.secs());
    // A changed body or id does not verify.
    let mut tampered = r.clone();
    tampered.body.push(b' ');
    assert!(verify(&secret, &tampered, app.clock.secs()).is_err());
    assert_eq!(
        delivery(&svc, &key, &id).await,
        json!({"state": "delivered", "attempts": 1, "last_status_code": 204,
               "next_attempt_at": null})
    );

    // The receiver now answers 500: not delivered, retried later.
    app.clock.advance(2);
    let a = ping(&svc, &key).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (
            &a.body["type"],
            &a.body["delivered"],
            &a.body["status_code"]
        ),
        (&json!("ping"), &json!(false), &json!(500))
    );
    let failed = a.body["id"].as_str().unwrap();
    assert_ne!(failed, id);
    assert_eq!(rx.received().len(), 2);
    assert_verifies(&secret, &rx.last(), app.clock.secs());
    assert_eq!(
        delivery(&svc, &key, failed).await,
        json!({"state": "pending", "attempts": 1, "last_status_code": 500,
               "next_attempt_at": at(3)})
    );
}
