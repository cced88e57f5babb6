//! Registering an endpoint, the claimed test ping, and re-enabling a disabled endpoint.

use super::*;

#[tokio::test]
async fn registration_checks_the_url_and_seals_a_fresh_secret() {
    // Strict: http:// is refused before anything else.
    let svc = Parts::new().build();
    let Err(ServiceError::Invalid(d)) = svc.register(&scope(), "http://x.example/h").await else {
        panic!("expected invalid");
    };
    assert_eq!(d[0].field, "url");

    // A host the deliverer refuses is a 400 on url.
    let mut p = Parts::new();
    p.deliverer
        .expect_check_host()
        .returning(|_| Err("resolves to a loopback address".to_owned()));
    let Err(ServiceError::Invalid(d)) = p.build().register(&scope(), "https://localhost/h").await
    else {
        panic!("expected invalid");
    };
    assert_eq!(d[0].message, "resolves to a loopback address");

    // Accepted: stored sealed, answered once in the clear.
    let stored = Arc::new(Mutex::new(None));
    let mut p = Parts::new();
    p.deliverer.expect_check_host().returning(|_| Ok(()));
    let keep = Arc::clone(&stored);
    p.endpoints.expect_endpoint().returning(|_| Ok(None));
    p.endpoints.expect_put_endpoint().returning(move |e| {
        *keep.lock().unwrap() = Some(e.clone());
        Ok(())
    });
    let r = p
        .build()
        .register(&scope(), "https://hooks.example.com/h")
        .await
        .unwrap();
    assert_eq!(r.secret, SECRET, "whsec_ + hex of the 32 entropy bytes");
    let e = stored.lock().unwrap().clone().unwrap();
    assert_ne!(e.sealed_secret, SECRET.as_bytes());
    assert!(
        !format!("{r:?}").contains("whsec_"),
        "Debug hides the secret"
    );

    // Insecure endpoints allowed: no host check at all.
    let mut p = Parts::new();
    p.settings.allow_insecure_endpoints = true;
    p.endpoints.expect_endpoint().returning(|_| Ok(None));
    p.endpoints.expect_put_endpoint().returning(|_| Ok(()));
    assert!(
        p.build()
            .register(&scope(), "http://127.0.0.1:9/h")
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn the_test_ping_is_claimed_then_attempted_before_answering() {
    let mut p = Parts::new();
    p.outbox
        .expect_append_claimed()
        .withf(|e, now, lease| {
            e.event_type() == EventType::Ping
                && *now == NOW_MS
                && *lease == NOW_MS + DELIVERY_LEASE_MS
        })
        .times(1)
        .returning(|_, _, _| Ok(Some(endpoint())));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    p.deliverer.expect_deliver().returning(move |d| {
        keep.lock().unwrap().push(d);
        AttemptReport::answered(503, b"", 5)
    });
    p.outbox
        .expect_record_attempt()
        .withf(|_, lease, state, status, next, _| {
            *lease == NOW_MS + DELIVERY_LEASE_MS
                && *state == DeliveryState::Pending
                && *status == Some(503)
                && *next == Some(NOW_MS + 1_000)
        })
        .times(1)
        .returning(|_, _, _, _, _, _| Ok(true));
    let out = p.build().test(&scope(), PartnerKind::Broker).await.unwrap();
    assert!(!out.delivered);
    assert_eq!(out.status_code, Some(503));
    let body = verify(&seen.lock().unwrap()[0]);
    assert_eq!(body["type"], "ping");
    assert_eq!(body["id"], out.id.as_str());
    assert_eq!(body["data"], json!({}));

    // No endpoint: not found (the store appended nothing).
    let mut p = Parts::new();
    p.outbox
        .expect_append_claimed()
        .times(1)
        .returning(|_, _, _| Ok(None));
    assert!(matches!(
        p.build().test(&scope(), PartnerKind::Broker).await,
        Err(ServiceError::NotFound)
    ));
}

#[tokio::test]
async fn the_same_url_re_enables_a_disabled_endpoint_and_keeps_its_secret() {
    let mut p = Parts::new();
    p.settings.allow_insecure_endpoints = true;
    p.endpoints.expect_endpoint().returning(|_| {
        Ok(Some(WebhookEndpoint {
            state: EndpointState::Disabled,
            ..endpoint()
        }))
    });
    p.endpoints.expect_put_endpoint().never();
    p.endpoints
        .expect_set_health()
        .withf(|_, _, change| {
            change.state == EndpointState::Enabled && change.failing_since_ms.is_none()
        })
        .times(1)
        .returning(|_, _, _| Ok(true));
    let r = p
        .build()
        .register(&scope(), "https://hooks.example.com/h")
        .await
        .unwrap();
    assert_eq!(r.secret, SECRET);
}
