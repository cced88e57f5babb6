//! Reading, deleting, disabling, re-enabling and rotating a webhook endpoint.

use actix_web::test::TestRequest;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::common::webhook_receiver::Verifier;
use crate::http::webhook_ops::{at_secs, settings};
use crate::http::webhooks::{
    Receiver, assert_verifies, delivery, is_secret, ping, register, verify,
};
use crate::http::{TestApp, assert_error, authed, get, post, send};

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

/// The app's clock set to the real time (the independent verifier checks
/// timestamps against it).
fn to_real_time(app: &TestApp) -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let now = i64::try_from(now).unwrap();
    app.clock.advance(now - app.clock.secs());
    now
}

/// `received` as the independent verifier takes it.
fn arrival(r: &crate::http::webhooks::Received) -> crate::common::webhook_receiver::Arrival {
    crate::common::webhook_receiver::Arrival {
        method: r.method.clone(),
        target: r.path.clone(),
        headers: r.headers.clone(),
        body: r.body.clone(),
        at: std::time::Instant::now(),
        answered: 204,
    }
}

crate::http_on_both!(a_rotation_signs_with_both_secrets_during_its_grace_period);
async fn a_rotation_signs_with_both_secrets_during_its_grace_period(db: TestDb) {
    let app = TestApp::with_webhook_settings(db, settings());
    let now = to_real_time(&app);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(204);
    let old = register(&svc, &key, rx.url()).await;

    let rotated = send(&svc, post("/v1/webhook/rotate_secret", &key, &json!({}))).await;
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    assert_eq!(rotated.header("cache-control"), Some("no-store"));
    let new = rotated.body["secret"].as_str().unwrap().to_owned();
    assert!(is_secret(&new) && new != old);
    let expires = rotated.body["previous_secret_expires_at"].clone();
    assert_eq!(expires, json!(at_secs(now + 24 * 3600)));
    let read = send(&svc, get("/v1/webhook", &key)).await;
    assert_eq!(
        read.body["secret_rotation"],
        json!({"previous_secret_expires_at": expires})
    );

    // During the grace period: two signatures; either secret verifies,
    // here and with the standardwebhooks package.
    ping(&svc, &key).await;
    let delivered = rx.last();
    let signatures = delivered.header("webhook-signature").unwrap();
    assert_eq!(signatures.split(' ').count(), 2, "{signatures}");
    assert!(signatures.split(' ').all(|s| s.starts_with("v1,")));
    assert_verifies(&old, &delivered, now);
    assert_verifies(&new, &delivered, now);
    if let Some(verifier) = Verifier::find() {
        verifier.check(&old, &arrival(&delivered));
        verifier.check(&new, &arrival(&delivered));
    }

    // A grace period of 0 stops the previous secret at once.
    let at_once = send(
        &svc,
        post(
            "/v1/webhook/rotate_secret",
            &key,
            &json!({"grace_period_hours": 0}),
        ),
    )
    .await;
    assert_eq!(at_once.status, 200, "{}", at_once.body);
    assert_eq!(at_once.body["previous_secret_expires_at"], Value::Null);
    let newest = at_once.body["secret"].as_str().unwrap().to_owned();
    ping(&svc, &key).await;
    let delivered = rx.last();
    assert_eq!(
        delivered
            .header("webhook-signature")
            .unwrap()
            .split(' ')
            .count(),
        1
    );
    assert_verifies(&newest, &delivered, now);
    assert!(verify(&new, &delivered, now).is_err());
    let read = send(&svc, get("/v1/webhook", &key)).await;
    assert_eq!(read.body["secret_rotation"], Value::Null);

    // A grace period ends: one signature again.
    send(
        &svc,
        post(
            "/v1/webhook/rotate_secret",
            &key,
            &json!({"grace_period_hours": 1}),
        ),
    )
    .await;
    app.clock.advance(3_601);
    ping(&svc, &key).await;
    assert_eq!(
        rx.last()
            .header("webhook-signature")
            .unwrap()
            .split(' ')
            .count(),
        1
    );

    // Bad input changes nothing; no endpoint is a 404.
    for body in [
        json!({"grace_period_hours": 73}),
        json!({"grace_period_hours": -1}),
        json!({"grace": 1}),
    ] {
        let bad = send(&svc, post("/v1/webhook/rotate_secret", &key, &body)).await;
        assert_error(&bad, 400, "invalid_request");
    }
    let (_, other) = app.broker().await;
    let none = send(&svc, post("/v1/webhook/rotate_secret", &other, &json!({}))).await;
    assert_error(&none, 404, "not_found");
}
