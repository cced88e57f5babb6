//! Retries on schedule, across a restart, and once each with two processes on PostgreSQL.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::json;

use crate::common::scratch;
use crate::common::webhook_receiver::Receiver;
use crate::webhooks_serve::{
    PATIENCE, PATIENCE_PAST_A_LEASE, assert_delivery_shape, assert_gaps_at_least, serve,
    sqlite_url, wait_for,
};

/// With `retry_time_scale` 0.05 the retries come after 50 ms, 250 ms and
/// 1.25 s: 500, 500, 500, 204 is four attempts of one event, then
/// `delivered`; an endpoint that always fails gets exactly four, then the
/// event is `failed` and nothing more comes.
#[test]
fn failed_attempts_are_retried_on_schedule() {
    let delays_ms = [50, 250, 1250];
    let dir = scratch("webhooks_serve_retry");
    let server = serve(&dir, &sqlite_url(&dir), "0.05", "serve");
    let key = server.demo_key();

    // Three failures, then success.
    let flaky = Receiver::start(&[500, 500, 500], 204);
    server.register(&key, &flaky.url());
    let ping = server.ping(&key);
    assert_eq!(ping["delivered"], false, "{ping}");
    assert_eq!(ping["status_code"], 500, "{ping}");
    let id = ping["id"].as_str().unwrap().to_owned();
    let event = server.settled(&key, &id, PATIENCE);
    assert_eq!(
        event["delivery"],
        json!({"state": "delivered", "attempts": 4, "last_status_code": 204, "next_attempt_at": null}),
        "{event}"
    );
    let arrivals = flaky.arrivals();
    assert_eq!(
        arrivals.iter().map(|a| a.answered).collect::<Vec<_>>(),
        [500, 500, 500, 204],
        "{arrivals:?}"
    );
    assert!(arrivals.iter().all(|a| a.id() == id), "{arrivals:?}");
    for arrival in &arrivals {
        assert_delivery_shape(arrival);
        assert_eq!(arrival.json()["type"], "ping");
    }
    assert_gaps_at_least(&arrivals, &delays_ms);

    // Always failing: the first attempt and three retries, then `failed`.
    let broken = Receiver::start(&[], 500);
    server.register(&key, &broken.url());
    let ping = server.ping(&key);
    assert_eq!(ping["delivered"], false, "{ping}");
    assert_eq!(ping["status_code"], 500, "{ping}");
    let id = ping["id"].as_str().unwrap().to_owned();
    let event = server.settled(&key, &id, PATIENCE);
    assert_eq!(
        event["delivery"],
        json!({"state": "failed", "attempts": 4, "last_status_code": 500, "next_attempt_at": null}),
        "{event}"
    );
    let arrivals = broken.arrivals();
    assert_eq!(arrivals.len(), 4, "{arrivals:?}");
    assert!(arrivals.iter().all(|a| a.id() == id), "{arrivals:?}");
    assert_gaps_at_least(&arrivals, &delays_ms);
    // Longer than any scaled delay (and the 100 ms poll): no fifth attempt.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(broken.count(), 4, "{:?}", broken.arrivals());
    assert_eq!(server.event(&key, &id)["delivery"]["attempts"], 4);
    // The first receiver heard nothing more either.
    assert_eq!(flaky.count(), 4);
}

/// A retry pending when the process dies is made by the next process on
/// the same database; events written just before a crash are delivered
/// after the restart.
#[test]
fn a_restart_resumes_pending_deliveries() {
    // Scale 2: the retry is due 2 s after the failed first attempt, ample
    // time to kill the server before it.
    let scale = "2.0";
    let dir = scratch("webhooks_serve_restart");
    let url = sqlite_url(&dir);
    let receiver = Receiver::start(&[500], 204);
    let server = serve(&dir, &url, scale, "serve-1");
    let key = server.demo_key();
    server.register(&key, &receiver.url());
    let ping = server.ping(&key);
    assert_eq!(ping["status_code"], 500, "{ping}");
    let ping_id = ping["id"].as_str().unwrap().to_owned();
    drop(server);
    assert_eq!(
        receiver.count(),
        1,
        "the retry came before the kill, so this test proves nothing: {:?}",
        receiver.arrivals()
    );

    let server = serve(&dir, &url, scale, "serve-2");
    let event = server.settled(&key, &ping_id, PATIENCE);
    assert_eq!(
        event["delivery"],
        json!({"state": "delivered", "attempts": 2, "last_status_code": 204, "next_attempt_at": null}),
        "{event}"
    );
    let arrivals = receiver.of(&ping_id);
    assert_eq!(
        arrivals.iter().map(|a| a.answered).collect::<Vec<_>>(),
        [500, 204],
        "{arrivals:?}"
    );
    assert_gaps_at_least(&arrivals, &[2000]);

    // Events written just before a crash: an enrollment and a go-live.
    let gid = server.group_with_census(&key, 2);
    let processed = server.census_processed(&key, &gid);
    let processed = server.settled(&key, processed["id"].as_str().unwrap(), PATIENCE);
    assert_eq!(processed["delivery"]["state"], "delivered", "{processed}");
    let quote = server.expect(
        201,
        "POST",
        &format!("/v1/groups/{gid}/quotes"),
        &key,
        Some(&json!({})),
    );
    let enrollment = json!({"quote_id": quote["id"],
        "signatory": {"name": "Dana Lee", "email": "dana@acme2-mfg.com"}});
    server.expect(
        201,
        "POST",
        &format!("/v1/groups/{gid}/enrollments"),
        &key,
        Some(&enrollment),
    );
    server.expect(
        200,
        "POST",
        &format!("/v1/test_helpers/groups/{gid}/go_live"),
        &key,
        Some(&json!({})),
    );
    drop(server);

    let server = serve(&dir, &url, scale, "serve-3");
    let events = server.events(&key);
    for kind in ["enrollment.created", "group.state_changed"] {
        let event = events
            .iter()
            .find(|e| e["type"] == kind && e["data"]["group_id"] == gid)
            .unwrap_or_else(|| panic!("no {kind} event in {events:?}"));
        let id = event["id"].as_str().unwrap();
        // An attempt in flight at the kill holds its lease for 30 s.
        let settled = server.settled(&key, id, PATIENCE_PAST_A_LEASE);
        assert_eq!(settled["delivery"]["state"], "delivered", "{settled}");
        let got = receiver.of(id);
        assert!(!got.is_empty(), "{kind} {id} never arrived");
        assert_eq!(got[0].json()["type"], kind);
    }
}

/// Two `serve` processes on one PostgreSQL database, one endpoint, events
/// made through both: every event arrives exactly once, in one attempt.
#[test]
fn two_processes_on_one_postgres_deliver_each_attempt_once() {
    const GROUPS: usize = 40;
    const PINGS: usize = 6;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(testkit::db::postgres()) else {
        println!("SKIPPED: {} is not set", testkit::db::PG_ENV);
        return;
    };
    let dir = scratch("webhooks_serve_postgres");
    let receiver = Receiver::start(&[], 204);
    let a = serve(&dir, &db.url, "0.05", "serve-a");
    let key = a.demo_key();
    let b = serve(&dir, &db.url, "0.05", "serve-b");
    assert!(
        b.0.stdout.iter().all(|l| !l.contains("psk_test_")),
        "{:?}",
        b.0.stdout
    );
    a.register(&key, &receiver.url());

    let servers = [&a, &b];
    let mut groups = Vec::new();
    let mut pings = Vec::new();
    for n in 0..GROUPS {
        let server = servers[n % 2];
        groups.push(server.group_with_census(&key, n));
        if n % (GROUPS / PINGS) == 0 && pings.len() < PINGS {
            let ping = server.ping(&key);
            assert_eq!(ping["delivered"], true, "{ping}");
            pings.push(ping["id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(pings.len(), PINGS);

    // Each comparison runs in one process or the other; wait for all.
    let events = wait_for(
        "every event to be delivered",
        Duration::from_secs(180),
        || {
            let events = b.events(&key);
            let processed = events
                .iter()
                .filter(|e| e["type"] == "census.processed")
                .count();
            let pending = events
                .iter()
                .filter(|e| e["delivery"]["state"] == "pending")
                .count();
            if processed >= GROUPS && pending == 0 {
                Ok(events)
            } else {
                Err(format!(
                    "{} events, {processed} census.processed, {pending} pending",
                    events.len()
                ))
            }
        },
    );
    let processed_groups: HashSet<&str> = events
        .iter()
        .filter(|e| e["type"] == "census.processed")
        .filter_map(|e| e["data"]["group_id"].as_str())
        .collect();
    let wanted: HashSet<&str> = groups.iter().map(String::as_str).collect();
    assert_eq!(processed_groups, wanted);
    assert_eq!(
        events.len(),
        GROUPS + PINGS,
        "one event per census write and ping"
    );
    for event in &events {
        assert_eq!(event["delivery"]["state"], "delivered", "{event}");
        assert_eq!(event["delivery"]["attempts"], 1, "{event}");
    }
    for ping in &pings {
        assert!(events.iter().any(|e| e["id"] == ping.as_str()), "{ping}");
    }

    // Nothing late: more than the 100 ms poll, and the receiver still has
    // exactly one arrival per event.
    std::thread::sleep(Duration::from_secs(1));
    let arrivals = receiver.arrivals();
    let mut per_id: HashMap<&str, usize> = HashMap::new();
    for arrival in &arrivals {
        assert_delivery_shape(arrival);
        *per_id.entry(arrival.id()).or_default() += 1;
    }
    let duplicates: Vec<_> = per_id.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        duplicates.is_empty(),
        "delivered more than once: {duplicates:?}"
    );
    let ids: HashSet<&str> = events.iter().filter_map(|e| e["id"].as_str()).collect();
    let arrived: HashSet<&str> = per_id.keys().copied().collect();
    assert_eq!(arrived, ids);
    assert_eq!(arrivals.len(), GROUPS + PINGS);
    drop((a, b));
    drop(db);
}
