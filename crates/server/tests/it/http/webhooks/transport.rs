//! The delivery transport: redirects are not followed, slow endpoints time out.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::TestApp;
use crate::http::webhooks::{Receiver, Reply, at, delivery, ping, register};

// ---------------------------------------------------------------------------
// Redirects and timeouts
// ---------------------------------------------------------------------------

crate::http_on_both!(redirects_are_not_followed);
async fn redirects_are_not_followed(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let target = Receiver::answering(204);
    let rx = Receiver::start(vec![Reply::redirect(target.url())]);
    register(&svc, &key, rx.url()).await;
    let a = ping(&svc, &key).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (&a.body["delivered"], &a.body["status_code"]),
        (&json!(false), &json!(302))
    );
    let id = a.body["id"].as_str().unwrap();
    app.clock.advance(1);
    assert_eq!(app.deliver().await, 1);
    assert_eq!(rx.received().len(), 2);
    assert!(target.received().is_empty(), "the redirect was followed");
    let d = delivery(&svc, &key, id).await;
    assert_eq!(
        (&d["state"], &d["attempts"], &d["last_status_code"]),
        (&json!("pending"), &json!(2), &json!(302))
    );
}

crate::http_on_both!(an_endpoint_slower_than_the_attempt_timeout_fails_without_a_status);
async fn an_endpoint_slower_than_the_attempt_timeout_fails_without_a_status(db: TestDb) {
    let app = TestApp::with_webhook_settings(
        db,
        domain::services::webhooks::WebhookSettings {
            allow_insecure_endpoints: true,
            attempt_timeout_ms: 1_000,
            ..Default::default()
        },
    );
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::start(vec![Reply::status(204).after(Duration::from_secs(3))]);
    register(&svc, &key, rx.url()).await;
    let started = Instant::now();
    let a = ping(&svc, &key).await;
    let waited = started.elapsed();
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (&a.body["delivered"], &a.body["status_code"]),
        (&json!(false), &Value::Null)
    );
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(3),
        "the attempt took {waited:?}"
    );
    assert_eq!(rx.received().len(), 1);
    let id = a.body["id"].as_str().unwrap();
    assert_eq!(
        delivery(&svc, &key, id).await,
        json!({"state": "pending", "attempts": 1, "last_status_code": null,
               "next_attempt_at": at(1)})
    );
}
