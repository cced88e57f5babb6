//! Webhook operations over real HTTP (partner portal §3): `GET` and
//! `DELETE /webhook`, the delivery log with outcome, failure reason,
//! latency and the first 1 KiB of the answer, automatic disabling after
//! `webhooks.disable_after_hours` of failures and re-enabling by
//! `PUT /webhook` with the same URL. Deliveries go to a real local
//! [`Receiver`]; a closed port and a slow receiver give their reasons.

use std::net::TcpListener;
use std::time::Duration;

use actix_web::test::TestRequest;
use domain::services::webhooks::WebhookSettings;
use serde_json::{Value, json};
use testkit::db::TestDb;

use super::webhooks::{Receiver, Reply, delivery, ping, register};
use crate::http::{TestApp, assert_error, authed, get, send};

fn settings() -> WebhookSettings {
    WebhookSettings {
        allow_insecure_endpoints: true,
        attempt_timeout_ms: 1_000,
        disable_after_hours: 1.0,
        ..Default::default()
    }
}

crate::http_on_both!(the_delivery_log_records_each_attempt);
async fn the_delivery_log_records_each_attempt(db: TestDb) {
    let app = TestApp::with_webhook_settings(db, settings());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let long = "x".repeat(3000);
    let rx = Receiver::start(vec![
        Reply::status(500).with_body(&long),
        Reply::status(200).with_body("ok"),
    ]);
    register(&svc, &key, rx.url()).await;
    let first = ping(&svc, &key).await;
    let id = first.body["id"].as_str().unwrap().to_owned();
    app.clock.advance(1);
    assert_eq!(app.deliver().await, 1);

    let log = send(&svc, get("/v1/webhook/deliveries", &key)).await;
    assert_eq!(log.status, 200, "{}", log.body);
    let rows = log.body["deliveries"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{}", log.body);
    // Newest first: the retry that succeeded, then the first attempt.
    let (ok, failed) = (&rows[0], &rows[1]);
    assert_eq!(
        (
            &ok["event_id"],
            &ok["event_type"],
            &ok["attempt"],
            &ok["outcome"]
        ),
        (&json!(id), &json!("ping"), &json!(2), &json!("succeeded"))
    );
    assert_eq!(
        (
            &ok["status_code"],
            &ok["failure_reason"],
            &ok["response_body"]
        ),
        (&json!(200), &Value::Null, &json!("ok"))
    );
    assert_eq!(
        (
            &failed["attempt"],
            &failed["outcome"],
            &failed["failure_reason"]
        ),
        (&json!(1), &json!("failed"), &json!("http_status"))
    );
    assert_eq!(failed["status_code"], 500);
    assert_eq!(
        failed["response_body"].as_str().unwrap(),
        &long[..1024],
        "the first 1 KiB of the answer"
    );
    assert!(failed["latency_ms"].as_u64().is_some());
    assert!(failed["at"].as_str().unwrap().ends_with('Z'));

    // Filters and pages.
    let only = send(&svc, get("/v1/webhook/deliveries?status=failed", &key)).await;
    assert_eq!(only.body["deliveries"].as_array().unwrap().len(), 1);
    assert_eq!(only.body["deliveries"][0]["outcome"], "failed");
    let by_event = send(
        &svc,
        get(
            &format!("/v1/webhook/deliveries?event_id={id}&limit=1"),
            &key,
        ),
    )
    .await;
    assert_eq!(by_event.body["deliveries"][0]["attempt"], 2);
    let cursor = by_event.body["next_cursor"].as_str().unwrap();
    let next = send(
        &svc,
        get(
            &format!("/v1/webhook/deliveries?event_id={id}&limit=1&cursor={cursor}"),
            &key,
        ),
    )
    .await;
    assert_eq!(next.body["deliveries"][0]["attempt"], 1, "{}", next.body);
    assert_eq!(next.body["next_cursor"], Value::Null);

    // Bad filters are 400s on their field.
    let bad = send(&svc, get("/v1/webhook/deliveries?status=lost", &key)).await;
    assert_error(&bad, 400, "invalid_request");
    assert_eq!(bad.fields(), ["status"]);
    let bad = send(&svc, get("/v1/webhook/deliveries?event_id=grp_1", &key)).await;
    assert_eq!(bad.fields(), ["event_id"]);

    // Another partner sees none of it.
    let (_, other) = app.broker().await;
    let theirs = send(&svc, get("/v1/webhook/deliveries", &other)).await;
    assert_eq!(theirs.body["deliveries"], json!([]));
}

crate::http_on_both!(a_timeout_and_a_closed_port_give_their_reasons);
async fn a_timeout_and_a_closed_port_give_their_reasons(db: TestDb) {
    let app = TestApp::with_webhook_settings(db, settings());
    let svc = app.service().await;
    let (_, key) = app.broker().await;

    let slow = Receiver::start(vec![Reply::status(204).after(Duration::from_secs(3))]);
    register(&svc, &key, slow.url()).await;
    ping(&svc, &key).await;
    app.clock.advance(1);

    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/hooks", l.local_addr().unwrap())
    };
    register(&svc, &key, &closed).await;
    ping(&svc, &key).await;

    let log = send(&svc, get("/v1/webhook/deliveries", &key)).await;
    let reasons: Vec<&Value> = log.body["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["failure_reason"])
        .collect();
    assert_eq!(
        reasons,
        [&json!("connection_refused"), &json!("timeout")],
        "{}",
        log.body
    );
    for d in log.body["deliveries"].as_array().unwrap() {
        assert_eq!(
            (&d["status_code"], &d["response_body"]),
            (&Value::Null, &Value::Null)
        );
    }
}

crate::http_on_both!(an_endpoint_is_read_and_deleted_and_its_pending_deliveries_cancelled);
async fn an_endpoint_is_read_and_deleted_and_its_pending_deliveries_cancelled(db: TestDb) {
    let app = TestApp::with_webhook_settings(db, settings());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let none = send(&svc, get("/v1/webhook", &key)).await;
    assert_error(&none, 404, "not_found");

    let rx = Receiver::answering(503);
    register(&svc, &key, rx.url()).await;
    let read = send(&svc, get("/v1/webhook", &key)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(
        (
            &read.body["url"],
            &read.body["state"],
            &read.body["failing_since"]
        ),
        (&json!(rx.url()), &json!("enabled"), &Value::Null)
    );
    assert!(read.body.get("secret").is_none(), "{}", read.body);
    assert!(!read.body.to_string().contains("whsec_"));

    // A failed ping starts the failing streak and leaves a retry pending.
    let id = ping(&svc, &key).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = send(&svc, get("/v1/webhook", &key)).await;
    assert!(read.body["failing_since"].is_string(), "{}", read.body);
    assert_eq!(delivery(&svc, &key, &id).await["state"], "pending");

    let gone = send(&svc, authed(TestRequest::delete().uri("/v1/webhook"), &key)).await;
    assert_eq!(gone.status, 204, "{}", gone.body);
    assert_eq!(delivery(&svc, &key, &id).await["state"], "no_endpoint");
    let log = send(&svc, get("/v1/webhook/deliveries?status=cancelled", &key)).await;
    assert_eq!(
        log.body["deliveries"][0]["event_id"],
        json!(id),
        "{}",
        log.body
    );
    assert_eq!(log.body["deliveries"][0]["attempt"], 2);
    app.clock.advance(30);
    assert_eq!(
        app.deliver().await,
        0,
        "a cancelled delivery is not attempted"
    );
    assert_eq!(rx.received().len(), 1);

    assert_error(
        &send(&svc, get("/v1/webhook", &key)).await,
        404,
        "not_found",
    );
    let again = send(&svc, authed(TestRequest::delete().uri("/v1/webhook"), &key)).await;
    assert_error(&again, 404, "not_found");
}

crate::http_on_both!(a_failing_endpoint_is_disabled_and_the_same_url_re_enables_it);
async fn a_failing_endpoint_is_disabled_and_the_same_url_re_enables_it(db: TestDb) {
    let app = TestApp::with_webhook_settings(db, settings());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(500);
    let secret = register(&svc, &key, rx.url()).await;
    ping(&svc, &key).await;
    // Failing for the configured hour: the next failure disables it.
    app.clock.advance(3_600);
    assert_eq!(app.deliver().await, 1);
    let read = send(&svc, get("/v1/webhook", &key)).await;
    assert_eq!(read.body["state"], "disabled", "{}", read.body);

    // Nothing is sent to a disabled endpoint: the delivery is cancelled.
    let seen = rx.received().len();
    let id = ping(&svc, &key).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(rx.received().len(), seen);
    assert_eq!(delivery(&svc, &key, &id).await["state"], "no_endpoint");

    // The same URL re-enables it with the same secret.
    assert_eq!(register(&svc, &key, rx.url()).await, secret);
    let read = send(&svc, get("/v1/webhook", &key)).await;
    assert_eq!(
        (&read.body["state"], &read.body["failing_since"]),
        (&json!("enabled"), &Value::Null)
    );
    // Another URL is a new registration with a fresh secret.
    let other = Receiver::answering(204);
    assert_ne!(register(&svc, &key, other.url()).await, secret);
}
