//! Delivery attempts: the retry schedule, concurrent pings, giving up, the time scale.

use serde_json::json;
use testkit::db::TestDb;

use crate::http::webhooks::{
    Receiver, Reply, assert_verifies, at, delivery, newest_event, ping, processed_census, register,
};
use crate::http::{T0, TestApp};

// ---------------------------------------------------------------------------
// Retries
// ---------------------------------------------------------------------------

crate::http_on_both!(failed_attempts_are_retried_after_one_and_five_seconds);
async fn failed_attempts_are_retried_after_one_and_five_seconds(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let script = [500, 500, 204].map(Reply::status).to_vec();
    let rx = Receiver::start(script);
    let secret = register(&svc, &key, rx.url()).await;

    let a = ping(&svc, &key).await;
    assert_eq!(
        (&a.body["delivered"], &a.body["status_code"]),
        (&json!(false), &json!(500))
    );
    let id = a.body["id"].as_str().unwrap().to_owned();
    assert_verifies(&secret, &rx.last(), app.clock.secs());

    // Nothing is due until a second has passed.
    assert_eq!(app.deliver().await, 0);
    app.clock.advance_ms(999);
    assert_eq!(app.deliver().await, 0);
    app.clock.advance_ms(1);
    assert_eq!(app.deliver().await, 1);
    assert_eq!(rx.received().len(), 2);
    assert_verifies(&secret, &rx.last(), app.clock.secs());
    assert_eq!(
        delivery(&svc, &key, &id).await,
        json!({"state": "pending", "attempts": 2, "last_status_code": 500,
               "next_attempt_at": at(6)})
    );

    // Then five seconds.
    app.clock.advance_ms(4_999);
    assert_eq!(app.deliver().await, 0);
    app.clock.advance_ms(1);
    assert_eq!(app.deliver().await, 1);
    assert_verifies(&secret, &rx.last(), app.clock.secs());
    assert_eq!(
        delivery(&svc, &key, &id).await,
        json!({"state": "delivered", "attempts": 3, "last_status_code": 204,
               "next_attempt_at": null})
    );
    app.clock.advance(3_600);
    assert_eq!(app.deliver().await, 0);

    // One event id, three timestamps, three signatures, one body.
    let got = rx.received();
    assert_eq!(got.len(), 3);
    let ids: Vec<_> = got
        .iter()
        .map(|r| r.header("webhook-id").unwrap())
        .collect();
    assert_eq!(ids, [id.as_str(); 3]);
    let stamps: Vec<_> = got
        .iter()
        .map(|r| r.header("webhook-timestamp").unwrap())
        .collect();
    assert_eq!(
        stamps,
        [T0.to_string(), (T0 + 1).to_string(), (T0 + 6).to_string()]
    );
    let sigs: Vec<_> = got
        .iter()
        .map(|r| r.header("webhook-signature").unwrap())
        .collect();
    assert!(
        sigs[0] != sigs[1] && sigs[1] != sigs[2] && sigs[0] != sigs[2],
        "{sigs:?}"
    );
    assert!(got.iter().all(|r| r.body == got[0].body));
    assert_eq!(got[0].json()["id"], id);
}

crate::http_on_both!(concurrent_test_pings_each_record_their_own_attempt);
/// Sixteen pings at once, half of them answered 500: each event's record
/// is its own answer's (on PostgreSQL the attempts of concurrent pings are
/// recorded together, in one transaction).
async fn concurrent_test_pings_each_record_their_own_attempt(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let script = [204, 500]
        .repeat(8)
        .into_iter()
        .map(Reply::status)
        .collect();
    let rx = Receiver::start(script);
    register(&svc, &key, rx.url()).await;

    let pings = (0..16).map(|_| ping(&svc, &key));
    let answers = futures_util::future::join_all(pings).await;
    let mut failed = 0;
    for a in &answers {
        assert_eq!(a.status, 200, "{}", a.body);
        let id = a.body["id"].as_str().unwrap();
        let expected = if a.body["delivered"] == json!(true) {
            assert_eq!(a.body["status_code"], 204, "{}", a.body);
            json!({"state": "delivered", "attempts": 1, "last_status_code": 204,
                   "next_attempt_at": null})
        } else {
            failed += 1;
            assert_eq!(a.body["status_code"], 500, "{}", a.body);
            json!({"state": "pending", "attempts": 1, "last_status_code": 500,
                   "next_attempt_at": at(1)})
        };
        assert_eq!(delivery(&svc, &key, id).await, expected, "{id}");
    }
    assert_eq!(failed, 8);
    assert_eq!(rx.received().len(), 16);
}

crate::http_on_both!(a_delivery_fails_after_four_attempts_and_is_not_retried_again);
async fn a_delivery_fails_after_four_attempts_and_is_not_retried_again(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(503);
    let secret = register(&svc, &key, rx.url()).await;

    // An event of the outbox: its first attempt is the dispatcher's.
    processed_census(&app, &svc, &key, "acme-mfg.com").await;
    let id = newest_event(&svc, &key).await;
    assert_eq!(app.deliver().await, 1);
    let mut times = vec![app.clock.secs()];
    for delay in [1, 5, 25] {
        app.clock.advance(delay - 1);
        assert_eq!(app.deliver().await, 0, "due before {delay} s");
        app.clock.advance(1);
        assert_eq!(app.deliver().await, 1, "not due after {delay} s");
        times.push(app.clock.secs());
    }
    assert_eq!(times, [T0, T0 + 1, T0 + 6, T0 + 31]);
    assert_eq!(
        delivery(&svc, &key, &id).await,
        json!({"state": "failed", "attempts": 4, "last_status_code": 503,
               "next_attempt_at": null})
    );
    app.clock.advance(86_400);
    assert_eq!(app.deliver().await, 0);
    let got = rx.received();
    assert_eq!(got.len(), 4);
    for (r, t) in got.iter().zip(&times) {
        assert_eq!(r.header("webhook-id"), Some(id.as_str()));
        assert_eq!(r.header("webhook-timestamp"), Some(t.to_string().as_str()));
        assert_verifies(&secret, r, *t);
    }
}

crate::http_on_both!(retry_delays_follow_the_retry_time_scale);
async fn retry_delays_follow_the_retry_time_scale(db: TestDb) {
    let app = TestApp::with_webhooks(db, 0.1);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(500);
    register(&svc, &key, rx.url()).await;
    let a = ping(&svc, &key).await;
    assert_eq!(a.body["delivered"], false, "{}", a.body);
    let id = a.body["id"].as_str().unwrap().to_owned();
    for delay_ms in [100, 500, 2_500] {
        app.clock.advance_ms(delay_ms - 1);
        assert_eq!(app.deliver().await, 0, "due before {delay_ms} ms");
        app.clock.advance_ms(1);
        assert_eq!(app.deliver().await, 1, "not due after {delay_ms} ms");
    }
    let d = delivery(&svc, &key, &id).await;
    assert_eq!((&d["state"], &d["attempts"]), (&json!("failed"), &json!(4)));
    app.clock.advance(60);
    assert_eq!(app.deliver().await, 0);
    assert_eq!(rx.received().len(), 4);
}
