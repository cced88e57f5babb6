//! Authentication (contract section 2): missing, malformed, unknown and
//! revoked keys, the live-mode gate, and the failed-authentication limiter
//! per source IP with and without trusted proxies.

use actix_web::test::TestRequest;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use http_api::{HttpConfig, Limits};
use testkit::db::TestDb;

use crate::http::{
    PEER, TestApp, assert_error, authed, get, is_request_id, send, send_from, unknown_key,
};

fn ping() -> TestRequest {
    TestRequest::get().uri("/v1/ping")
}

crate::http_on_both!(a_missing_key_is_unauthorized);
async fn a_missing_key_is_unauthorized(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let a = send(&svc, ping()).await;
    assert_error(&a, 401, "unauthorized");
    assert!(a.body.get("details").is_none(), "{}", a.body);
    assert!(is_request_id(a.header("request-id").unwrap()));
    assert_eq!(a.header("content-type"), Some("application/json"));
}

crate::http_on_both!(malformed_unknown_and_revoked_keys_are_unauthorized);
async fn malformed_unknown_and_revoked_keys_are_unauthorized(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, good) = app.broker().await;
    let (revoked_id, revoked) = app.minted(&partner, Mode::Test).await;
    // Used first, so the process holds it in memory: the revocation in
    // this process still takes effect at once.
    let a = send(&svc, get("/v1/ping", &revoked)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.state.partners.revoke_key(&revoked_id).await.unwrap();

    let hex = "0123456789abcdef0123456789abcdef";
    for header in [
        "Bearer psk_test_xyz".to_owned(),
        format!("Bearer psk_prod_{hex}"),
        format!("Bearer sk_test_{hex}"),
        format!("Bearer psk_test_{}", &hex[..31]),
        format!("Bearer psk_test_{}", hex.to_uppercase()),
        "Bearer ".to_owned(),
        "Basic dXNlcjpwYXNz".to_owned(),
        format!("Basic {good}"),
        good.clone(),
        format!("Bearer {}", unknown_key()),
        format!("Bearer {revoked}"),
    ] {
        let a = send(
            &svc,
            ping().insert_header(("authorization", header.clone())),
        )
        .await;
        assert_error(&a, 401, "unauthorized");
        assert!(
            !String::from_utf8_lossy(&a.raw).contains(&good),
            "{header}: the answer echoes a key"
        );
    }
    // The same partner's other key still works.
    let a = send(&svc, get("/v1/ping", &good)).await;
    assert_eq!(a.status, 200, "{}", a.body);
}

crate::http_on_both!(a_live_key_needs_live_mode);
async fn a_live_key_needs_live_mode(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let off = app.partner("Not Yet", PartnerKind::Broker, false).await;
    let off_key = app.key(&off, Mode::Live).await;
    let a = send(&svc, get("/v1/ping", &off_key)).await;
    assert_error(&a, 403, "live_mode_disabled");
    // Its test key is fine.
    let off_test = app.key(&off, Mode::Test).await;
    let a = send(&svc, get("/v1/ping", &off_test)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["mode"], "test");

    let on = app.partner("Live Co", PartnerKind::HrPlatform, true).await;
    let on_key = app.key(&on, Mode::Live).await;
    let a = send(&svc, get("/v1/ping", &on_key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["ok"], true);
    assert_eq!(a.body["mode"], "live");
    assert_eq!(a.body["partner"]["id"], on.id.as_str());
}

fn three_failures() -> Limits {
    Limits {
        failed_auth_per_minute: 3,
        ..Limits::default()
    }
}

crate::http_on_both!(failed_authentication_is_limited_per_source_ip);
async fn failed_authentication_is_limited_per_source_ip(db: TestDb) {
    let app = TestApp::with_limits(db, three_failures());
    let svc = app.service().await;
    let (_, good) = app.broker().await;
    let bad = unknown_key();
    for _ in 0..3 {
        let a = send(&svc, get("/v1/ping", &bad)).await;
        assert_error(&a, 401, "unauthorized");
    }
    // The fourth failure from the same IP, whatever the key's shape.
    for req in [
        get("/v1/ping", &bad),
        ping(),
        get("/v1/ping", "psk_test_xyz"),
    ] {
        let a = send(&svc, req).await;
        assert_error(&a, 429, "rate_limited");
        let retry: i64 = a.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry), "{retry}");
    }
    // Another IP is not affected.
    let a = send_from(&svc, get("/v1/ping", &bad), "203.0.113.7").await;
    assert_error(&a, 401, "unauthorized");
    // Authenticated traffic from the limited IP is not affected.
    let a = send(&svc, get("/v1/ping", &good)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    // The window frees after a minute.
    app.clock.advance(60);
    let a = send(&svc, get("/v1/ping", &bad)).await;
    assert_error(&a, 401, "unauthorized");
}

crate::http_on_both!(forwarded_for_counts_only_behind_a_trusted_proxy);
async fn forwarded_for_counts_only_behind_a_trusted_proxy(db: TestDb) {
    let app = TestApp::with_config(
        db,
        HttpConfig {
            limits: three_failures(),
            trusted_proxies: vec![PEER.parse().unwrap()],
            body_timeout: std::time::Duration::from_secs(60),
        },
    );
    let svc = app.service().await;
    let bad = unknown_key();
    let via = |client: &str| {
        authed(TestRequest::get().uri("/v1/ping"), &bad)
            .insert_header(("x-forwarded-for", format!("{client}, {PEER}")))
    };
    for _ in 0..3 {
        assert_error(&send(&svc, via("203.0.113.9")).await, 401, "unauthorized");
    }
    assert_error(&send(&svc, via("203.0.113.9")).await, 429, "rate_limited");
    // Another client behind the same proxy has its own count.
    assert_error(&send(&svc, via("203.0.113.10")).await, 401, "unauthorized");
    // Without the header, the proxy itself is the source.
    assert_error(
        &send(&svc, get("/v1/ping", &bad)).await,
        401,
        "unauthorized",
    );
}

crate::http_on_both!(forwarded_for_is_ignored_without_trusted_proxies);
async fn forwarded_for_is_ignored_without_trusted_proxies(db: TestDb) {
    let app = TestApp::with_limits(db, three_failures());
    let svc = app.service().await;
    let bad = unknown_key();
    // Each failure claims a different client; all count against the peer.
    for i in 0..3 {
        let req =
            get("/v1/ping", &bad).insert_header(("x-forwarded-for", format!("203.0.113.{i}")));
        assert_error(&send(&svc, req).await, 401, "unauthorized");
    }
    let req = get("/v1/ping", &bad).insert_header(("x-forwarded-for", "203.0.113.200"));
    assert_error(&send(&svc, req).await, 429, "rate_limited");
    // A proxy that is not trusted cannot spoof a fresh address either.
    let req = get("/v1/ping", &bad).insert_header(("x-forwarded-for", "192.0.2.55"));
    assert_error(&send(&svc, req).await, 429, "rate_limited");
}
