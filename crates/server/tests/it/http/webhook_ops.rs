//! Webhook operations over real HTTP (partner portal §3): `GET` and
//! `DELETE /webhook`, the delivery log with outcome, failure reason,
//! latency and the first 1 KiB of the answer, automatic disabling after
//! `webhooks.disable_after_hours` of failures and re-enabling by
//! `PUT /webhook` with the same URL, and secret rotation with two
//! signatures during its grace period (checked here and by the Python
//! `standardwebhooks` package). Deliveries go to a real local
//! [`Receiver`]; a 500, a slow receiver, a closed port, and (through a
//! test resolver) a name that moves to a loopback address or stops
//! resolving after registration give their four failure reasons.

use std::net::TcpListener;
use std::time::Duration;

use actix_web::test::TestRequest;
use domain::services::webhooks::WebhookSettings;
use serde_json::{Value, json};
use testkit::db::TestDb;

use super::webhooks::{
    Receiver, Reply, assert_verifies, delivery, is_secret, newest_event, ping, processed_census,
    register, verify,
};
use crate::common::webhook_receiver::Verifier;
use crate::http::{TestApp, assert_error, authed, get, post, send};

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
fn arrival(r: &super::webhooks::Received) -> crate::common::webhook_receiver::Arrival {
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

/// RFC 3339 of Unix seconds, as the API writes it.
fn at_secs(secs: i64) -> String {
    domain::ports::rfc3339(secs)
}

/// `POST /v1/events/{id}/resend`.
async fn resend<B: actix_web::body::MessageBody>(
    svc: &impl super::webhooks::Svc<B>,
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

crate::http_on_both!(a_name_that_moves_gives_blocked_address_or_dns_error_at_send_time);
async fn a_name_that_moves_gives_blocked_address_or_dns_error_at_send_time(db: TestDb) {
    use std::net::SocketAddr;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    // A test resolver: both names are public at registration; then one
    // moves to a loopback address and the other stops resolving.
    let moved = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&moved);
    let names: server::deliver::Names = Arc::new(move |name: &str, port: u16| {
        let public: SocketAddr = SocketAddr::from(([93, 184, 216, 34], port));
        match (name, flag.load(Ordering::SeqCst)) {
            (_, false) => Ok(vec![public]),
            ("rebound.partner.test", true) => Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))]),
            _ => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such name",
            )),
        }
    });
    let strict = WebhookSettings {
        allow_insecure_endpoints: false,
        attempt_timeout_ms: 1_000,
        ..Default::default()
    };
    let app = TestApp::with_parts(db, http_api::HttpConfig::default(), move |p| {
        p.webhooks = strict;
        p.deliverer = Arc::new(
            server::deliver::HttpDeliverer::start_with_names(false, Duration::from_secs(1), names)
                .unwrap(),
        );
    });
    let svc = app.service().await;
    let (_, key) = app.broker().await;

    for (url, reason) in [
        ("https://rebound.partner.test/hooks", "blocked_address"),
        ("https://gone.partner.test/hooks", "dns_error"),
    ] {
        moved.store(false, Ordering::SeqCst);
        register(&svc, &key, url).await;
        moved.store(true, Ordering::SeqCst);
        let sent = ping(&svc, &key).await;
        assert_eq!(sent.body["delivered"], false, "{}", sent.body);
        let log = send(&svc, get("/v1/webhook/deliveries?limit=1", &key)).await;
        assert_eq!(
            (
                &log.body["deliveries"][0]["failure_reason"],
                &log.body["deliveries"][0]["status_code"]
            ),
            (&json!(reason), &Value::Null),
            "{url}: {}",
            log.body
        );
        app.clock.advance(1);
    }
}
