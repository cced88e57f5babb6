//! The delivery log: each attempt recorded, and the reason of each kind of failure.

use std::net::TcpListener;
use std::time::Duration;

use domain::services::webhooks::WebhookSettings;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::webhook_ops::settings;
use crate::http::webhooks::{Receiver, Reply, ping, register};
use crate::http::{TestApp, assert_error, get, send};

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
