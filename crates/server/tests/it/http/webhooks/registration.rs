//! Registering a webhook endpoint: fresh secrets, and refused insecure or internal URLs.

use serde_json::json;
use testkit::db::TestDb;

use crate::http::webhooks::{Receiver, assert_verifies, is_secret, keys, ping, register, verify};
use crate::http::{TestApp, assert_error, put, send};

// ---------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------

crate::http_on_both!(registering_issues_a_fresh_secret_every_time);
async fn registering_issues_a_fresh_secret_every_time(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let (old_rx, new_rx) = (Receiver::answering(204), Receiver::answering(204));

    let body = json!({"url": old_rx.url()});
    let first = send(&svc, put("/v1/webhook", &key, &body)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.header("cache-control"), Some("no-store"));
    assert_eq!(first.body["url"], old_rx.url());
    let s1 = first.body["secret"].as_str().unwrap().to_owned();
    assert!(is_secret(&s1), "{s1}");
    assert_eq!(keys(&first.body), ["secret", "url"]);

    // Calling again replaces the URL and the secret; with an
    // Idempotency-Key the answer (it carries the secret) is never replayed.
    let body = json!({"url": new_rx.url()});
    let again = || put("/v1/webhook", &key, &body).insert_header(("idempotency-key", "rotate-1"));
    let second = send(&svc, again()).await;
    let third = send(&svc, again()).await;
    let mut secrets = vec![s1.clone()];
    for a in [&second, &third] {
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.header("cache-control"), Some("no-store"));
        assert_eq!(a.header("idempotent-replay"), None);
        assert_eq!(a.body["url"], new_rx.url());
        let s = a.body["secret"].as_str().unwrap().to_owned();
        assert!(is_secret(&s), "{s}");
        assert!(!secrets.contains(&s), "a secret was issued twice");
        secrets.push(s);
    }

    // Deliveries go to the new URL, signed with the newest secret only.
    let a = ping(&svc, &key).await;
    assert_eq!(a.body["delivered"], true, "{}", a.body);
    assert!(old_rx.received().is_empty());
    let got = new_rx.received();
    assert_eq!(got.len(), 1);
    let now = app.clock.secs();
    assert_verifies(&secrets[2], &got[0], now);
    for old in &secrets[..2] {
        assert!(
            verify(old, &got[0], now).is_err(),
            "verified with a replaced secret"
        );
    }
}

crate::http_on_both!(strict_registration_refuses_insecure_and_internal_urls);
async fn strict_registration_refuses_insecure_and_internal_urls(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    for url in [
        "http://hooks.example.com/x",
        "https://127.0.0.1/x",
        "https://localhost/x",
        "https://10.0.0.1/x",
        "https://192.168.1.20/x",
        "https://169.254.169.254/x",
        "https://[::1]/x",
        "https://[fd00::1]/x",
        "https://[fe80::1]/x",
        "ftp://hooks.example.com/x",
        "hooks.example.com/x",
    ] {
        let a = send(&svc, put("/v1/webhook", &key, &json!({"url": url}))).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), ["url"], "{url}: {}", a.body);
    }
    let a = send(&svc, put("/v1/webhook", &key, &json!({}))).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["url"], "{}", a.body);
    let body = json!({"url": "https://93.184.216.34/x", "events": ["ping"]});
    let a = send(&svc, put("/v1/webhook", &key, &body)).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["events"], "{}", a.body);
    let a = send(&svc, put("/v1/webhook", &key, &json!({"url": 7}))).await;
    assert_error(&a, 400, "invalid_request");
    // Nothing was registered by the refusals.
    assert_error(&ping(&svc, &key).await, 404, "not_found");
    // A public address literal needs no name resolution and is accepted.
    let secret = register(&svc, &key, "https://93.184.216.34/x").await;
    assert!(is_secret(&secret));
}
