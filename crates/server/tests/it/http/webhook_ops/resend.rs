//! Resending a failed event and replaying a window of events.

use actix_web::test::TestRequest;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::webhook_ops::{at_secs, settings};
use crate::http::webhooks::{
    Receiver, Reply, delivery, newest_event, ping, processed_census, register,
};
use crate::http::{TestApp, assert_error, authed, get, post, send};

/// `POST /v1/events/{id}/resend`.
async fn resend<B: actix_web::body::MessageBody>(
    svc: &impl crate::http::webhooks::Svc<B>,
    key: &str,
    id: &str,
) -> crate::http::Answer {
    send(
        svc,
        authed(
            TestRequest::post().uri(&format!("/v1/events/{id}/resend")),
            key,
        ),
    )
    .await
}

crate::http_on_both!(a_failed_event_is_resent_with_the_same_webhook_id);
async fn a_failed_event_is_resent_with_the_same_webhook_id(db: TestDb) {
    let app = TestApp::with_webhook_settings(db, settings());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::start(vec![
        Reply::status(500),
        Reply::status(500),
        Reply::status(500),
        Reply::status(500),
        Reply::status(204),
    ]);
    register(&svc, &key, rx.url()).await;
    processed_census(&app, &svc, &key, "acme-mfg.com").await;
    let id = newest_event(&svc, &key).await;
    for wait in [0, 1, 5, 25] {
        app.clock.advance(wait);
        assert_eq!(app.deliver().await, 1);
    }
    assert_eq!(delivery(&svc, &key, &id).await["state"], "failed");

    let again = resend(&svc, &key, &id).await;
    assert_eq!(again.status, 202, "{}", again.body);
    assert_eq!(
        (
            &again.body["id"],
            &again.body["delivery"]["state"],
            &again.body["delivery"]["attempts"]
        ),
        (&json!(id), &json!("pending"), &json!(0))
    );
    // Pending: not resent twice.
    assert_error(&resend(&svc, &key, &id).await, 409, "conflict");
    app.clock.advance(1);
    assert_eq!(app.deliver().await, 1);
    let received = rx.received();
    assert_eq!(received.len(), 5);
    assert!(
        received
            .iter()
            .all(|r| r.header("webhook-id") == Some(id.as_str())),
        "every attempt carries the event's webhook-id"
    );
    assert_eq!(delivery(&svc, &key, &id).await["state"], "delivered");
    let log = send(
        &svc,
        get(&format!("/v1/webhook/deliveries?event_id={id}"), &key),
    )
    .await;
    let rows = log.body["deliveries"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(
        (&rows[0]["attempt"], &rows[0]["outcome"]),
        (&json!(1), &json!("succeeded")),
        "the resend is a new delivery with its own attempts"
    );

    // Unknown, another partner's, or no endpoint to send to.
    assert_error(
        &resend(&svc, &key, "evt_000000000000").await,
        404,
        "not_found",
    );
    let (_, other) = app.broker().await;
    assert_error(&resend(&svc, &other, &id).await, 404, "not_found");
    send(&svc, authed(TestRequest::delete().uri("/v1/webhook"), &key)).await;
    let none = resend(&svc, &key, &id).await;
    assert_error(&none, 409, "conflict");
    assert!(
        none.body["message"]
            .as_str()
            .unwrap()
            .contains("no webhook endpoint")
    );
}

crate::http_on_both!(a_replay_sends_exactly_the_events_of_its_window);
async fn a_replay_sends_exactly_the_events_of_its_window(db: TestDb) {
    let app = TestApp::with_webhook_settings(db, settings());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(204);
    register(&svc, &key, rx.url()).await;
    let mut made = Vec::new();
    for domain in ["a.example", "b.example", "c.example"] {
        processed_census(&app, &svc, &key, domain).await;
        made.push((app.clock.secs(), newest_event(&svc, &key).await));
        app.clock.advance(10);
    }
    ping(&svc, &key).await;
    app.deliver().await;
    let before = rx.received().len();

    // The window [second event, now): the second and third, not the ping.
    let window = json!({"since": at_secs(made[1].0)});
    let a = send(&svc, post("/v1/webhook/replay", &key, &window)).await;
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body, json!({"count": 2}));
    assert_eq!(app.deliver().await, 2);
    let mut sent: Vec<String> = rx.received()[before..]
        .iter()
        .map(|r| r.header("webhook-id").unwrap().to_owned())
        .collect();
    sent.sort();
    let mut expected = vec![made[1].1.clone(), made[2].1.clone()];
    expected.sort();
    assert_eq!(sent, expected);

    // until is exclusive; types filter.
    let first_only = json!({"since": at_secs(made[0].0), "until": at_secs(made[1].0)});
    let a = send(&svc, post("/v1/webhook/replay", &key, &first_only)).await;
    assert_eq!(a.body, json!({"count": 1}), "{}", a.body);
    let none = json!({"since": at_secs(made[0].0), "types": ["enrollment.created"]});
    let a = send(&svc, post("/v1/webhook/replay", &key, &none)).await;
    assert_eq!(a.body, json!({"count": 0}), "{}", a.body);

    // Bad windows are 400s on their field.
    let now = app.clock.secs();
    for (body, field) in [
        (json!({"since": at_secs(now - 31 * 86_400)}), "since"),
        (json!({"since": at_secs(now + 60)}), "since"),
        (json!({"since": "yesterday"}), "since"),
        (
            json!({"since": at_secs(made[1].0), "until": at_secs(made[0].0)}),
            "until",
        ),
        (
            json!({"since": at_secs(made[0].0), "types": ["ping"]}),
            "types",
        ),
    ] {
        let bad = send(&svc, post("/v1/webhook/replay", &key, &body)).await;
        assert_error(&bad, 400, "invalid_request");
        assert_eq!(bad.fields(), [field], "{body}");
    }

    // A disabled or missing endpoint: 409, nothing scheduled.
    send(&svc, authed(TestRequest::delete().uri("/v1/webhook"), &key)).await;
    let a = send(&svc, post("/v1/webhook/replay", &key, &window)).await;
    assert_error(&a, 409, "conflict");
}

crate::http_on_both!(a_replay_on_a_disabled_endpoint_is_a_conflict);
async fn a_replay_on_a_disabled_endpoint_is_a_conflict(db: TestDb) {
    let app = TestApp::with_webhook_settings(db, settings());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(500);
    register(&svc, &key, rx.url()).await;
    let since = app.clock.secs();
    ping(&svc, &key).await;
    app.clock.advance(3_600);
    app.deliver().await;
    assert_eq!(
        send(&svc, get("/v1/webhook", &key)).await.body["state"],
        "disabled"
    );
    let a = send(
        &svc,
        post(
            "/v1/webhook/replay",
            &key,
            &json!({"since": at_secs(since)}),
        ),
    )
    .await;
    assert_error(&a, 409, "conflict");
    assert!(
        a.body["message"].as_str().unwrap().contains("disabled"),
        "{}",
        a.body
    );
}
