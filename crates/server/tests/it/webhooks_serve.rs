//! Signed webhooks end to end (contract section 6): the real `serve`
//! binary, its dispatcher thread and a small real HTTP/1.1 receiver in this
//! file. Deliveries verify with the reference `standardwebhooks` Python
//! package, failed attempts are retried on the (scaled) 1 s / 5 s / 25 s
//! schedule and then given up, a restart resumes pending deliveries, two
//! processes on one PostgreSQL make each attempt once, and events due while
//! no endpoint is registered are never delivered.
//!
//! Waits are bounded polling loops; timing is asserted as lower bounds
//! only (a retry never comes sooner than its delay), never upper bounds.

use std::collections::{HashMap, HashSet};
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::common::serve_process::{ServeDemo, Served};
use crate::common::webhook_receiver::{Arrival, Receiver, Verifier};
use crate::common::{BIN, scratch};

/// One sealing key for every process of a test, so a secret sealed by one
/// process opens in another (and after a restart).
const SEALING_KEY: &str = "6a1f0c9e4b7d2a5c8e3f1b6d9a0c4e7f2b5d8a1c3e6f9b2d5a8c0e3f6b9d1a4c";

/// How long a delivery may take to show up: polling, not an assertion
/// about speed.
const PATIENCE: Duration = Duration::from_secs(30);

/// After a kill, an attempt that was in flight holds its 30 s lease before
/// another process may take it over; waits that may hit one allow for it.
const PATIENCE_PAST_A_LEASE: Duration = Duration::from_secs(75);

// ---------------------------------------------------------------------
// The server under test and its API
// ---------------------------------------------------------------------

/// A running `serve --demo` (killed on drop, SIGKILL: a crash) with this
/// file's API calls.
struct Serve(Served);

/// Starts `serve --demo` in `dir` on `url` with insecure endpoints allowed,
/// `retry_time_scale` = `scale`, the shared sealing key and limits high
/// enough for polling; its log goes to `dir/<name>.log`.
fn serve(dir: &Path, url: &str, scale: &str, name: &str) -> Serve {
    Serve(
        ServeDemo::new(dir, url)
            .without_inherited_config()
            .env("PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS", "true")
            .env("PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE", scale)
            .env("PARTNER_API_SECRETS__SEALING_KEY", SEALING_KEY)
            .env("PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE", "100000")
            .env(
                "PARTNER_API_RATE_LIMITS__CENSUS_WRITES_PER_MINUTE",
                "100000",
            )
            .env("PARTNER_API_RATE_LIMITS__QUOTE_CREATES_PER_HOUR", "100000")
            .log(name)
            .start(),
    )
}

impl Serve {
    /// The demo key this start printed.
    fn demo_key(&self) -> String {
        self.0.demo_key()
    }

    /// The demo partner's `prt_` id this start printed.
    fn demo_partner(&self) -> String {
        self.0
            .stdout
            .iter()
            .find_map(|l| l.strip_prefix("Demo partner: "))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no demo partner in {:?}", self.0.stdout))
            .to_owned()
    }

    /// One request over a fresh connection; (status, JSON body or null).
    fn call(&self, method: &str, path: &str, key: &str, body: Option<&Value>) -> (u16, Value) {
        let mut s = TcpStream::connect(&self.0.addr).unwrap();
        let body = body.map(Value::to_string).unwrap_or_default();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.0.addr,
            body.len()
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let text = String::from_utf8_lossy(&raw);
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP response: {text}"));
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    /// A request that must answer `want`; its body.
    fn expect(
        &self,
        want: u16,
        method: &str,
        path: &str,
        key: &str,
        body: Option<&Value>,
    ) -> Value {
        let (status, answer) = self.call(method, path, key, body);
        assert_eq!(status, want, "{method} {path}: {answer}");
        answer
    }

    /// `PUT /v1/webhook` to `url`; the secret.
    fn register(&self, key: &str, url: &str) -> String {
        let answer = self.expect(200, "PUT", "/v1/webhook", key, Some(&json!({"url": url})));
        assert_eq!(answer["url"], url, "{answer}");
        let secret = answer["secret"].as_str().unwrap().to_owned();
        let hex = secret.strip_prefix("whsec_").unwrap_or_default();
        assert!(
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "secret shape: {secret}"
        );
        secret
    }

    /// `POST /v1/webhook/test`; its answer.
    fn ping(&self, key: &str) -> Value {
        let answer = self.expect(200, "POST", "/v1/webhook/test", key, None);
        assert_eq!(answer["type"], "ping", "{answer}");
        assert!(
            answer["id"].as_str().unwrap().starts_with("evt_"),
            "{answer}"
        );
        answer
    }

    /// `GET /v1/events/{id}`.
    fn event(&self, key: &str, id: &str) -> Value {
        self.expect(200, "GET", &format!("/v1/events/{id}"), key, None)
    }

    /// Every event of the key's mode, through all pages.
    fn events(&self, key: &str) -> Vec<Value> {
        let mut all = Vec::new();
        let mut path = "/v1/events?limit=200".to_owned();
        loop {
            let page = self.expect(200, "GET", &path, key, None);
            all.extend(page["events"].as_array().unwrap().iter().cloned());
            match page["next_cursor"].as_str() {
                Some(cursor) => path = format!("/v1/events?limit=200&cursor={cursor}"),
                None => return all,
            }
        }
    }

    /// Waits until event `id` is no longer `pending`; the event.
    fn settled(&self, key: &str, id: &str, patience: Duration) -> Value {
        wait_for(&format!("event {id} to settle"), patience, || {
            let event = self.event(key, id);
            if event["delivery"]["state"] == "pending" {
                Err(event.to_string())
            } else {
                Ok(event)
            }
        })
    }

    /// A new group whose census (one member) was written: the group id.
    fn group_with_census(&self, key: &str, n: usize) -> String {
        let group = self.expect(
            201,
            "POST",
            "/v1/groups",
            key,
            Some(
                &json!({"company_name": format!("Acme {n}"), "domain": format!("acme{n}-mfg.com")}),
            ),
        );
        let gid = group["id"].as_str().unwrap().to_owned();
        let census = json!({"members": [{"external_id": "E-1", "first_name": "Ana",
            "last_name": "Diaz", "dob": "1988-04-12", "zip": "60601"}]});
        let answer = self.expect(
            200,
            "PUT",
            &format!("/v1/groups/{gid}/census"),
            key,
            Some(&census),
        );
        assert_eq!(answer["accepted"], 1, "{answer}");
        gid
    }

    /// The `census.processed` event of group `gid`, once it exists.
    fn census_processed(&self, key: &str, gid: &str) -> Value {
        wait_for(&format!("census.processed of {gid}"), PATIENCE, || {
            self.events(key)
                .into_iter()
                .find(|e| e["type"] == "census.processed" && e["data"]["group_id"] == gid)
                .ok_or_else(|| "not yet".to_owned())
        })
    }
}

/// Polls `probe` every 50 ms until it is `Ok`, for at most `limit`; the
/// panic names `what` and the last `Err`.
fn wait_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match probe() {
            Ok(v) => return v,
            Err(last) => assert!(
                Instant::now() < deadline,
                "gave up after {limit:?} waiting for {what}; last seen: {last}"
            ),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `receiver` has at least `n` arrivals.
fn wait_arrivals(receiver: &Receiver, n: usize, patience: Duration) -> Vec<Arrival> {
    wait_for(&format!("{n} arrivals"), patience, || {
        let got = receiver.arrivals();
        if got.len() >= n {
            Ok(got)
        } else {
            Err(format!("{} arrivals", got.len()))
        }
    })
}

fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("partner-api.sqlite").display())
}

fn unix_now() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// Consecutive arrivals are at least `delays_ms` apart. The due time is
/// kept in whole milliseconds, so one millisecond of truncation is allowed.
fn assert_gaps_at_least(arrivals: &[Arrival], delays_ms: &[u64]) {
    for (i, (pair, want)) in arrivals.windows(2).zip(delays_ms).enumerate() {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(
            gap + Duration::from_millis(1) >= Duration::from_millis(*want),
            "retry {} came {gap:?} after the attempt before it, sooner than its {want} ms delay",
            i + 1
        );
    }
}

/// What every delivery looks like, whatever its event.
fn assert_delivery_shape(arrival: &Arrival) {
    assert_eq!(arrival.method, "POST", "{arrival:?}");
    assert_eq!(arrival.target, "/hooks/benefits?via=test", "{arrival:?}");
    assert!(
        arrival
            .header("content-type")
            .starts_with("application/json"),
        "{arrival:?}"
    );
    let body = arrival.json();
    assert_eq!(body["id"], arrival.id(), "webhook-id is the event id");
    assert!(arrival.id().starts_with("evt_"), "{arrival:?}");
    assert_eq!(body["mode"], "test", "{body}");
    assert!(
        body["created_at"].is_string(),
        "broker payloads are snake_case: {body}"
    );
    let ts: i64 = arrival
        .header("webhook-timestamp")
        .parse()
        .unwrap_or_else(|_| panic!("webhook-timestamp is Unix seconds: {arrival:?}"));
    assert!(
        (ts - unix_now()).abs() < 300,
        "webhook-timestamp {ts} is not the current Unix time"
    );
    let signature = arrival.header("webhook-signature");
    assert!(
        signature.split(' ').all(|c| c.starts_with("v1,")),
        "{signature}"
    );
}

// ---------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------

/// A ping and a `census.processed` reach a real endpoint, each verifying
/// with the reference library (a tampered body does not); after rotation
/// only the new secret verifies.
#[test]
fn deliveries_verify_with_the_standardwebhooks_package() {
    let Some(verifier) = Verifier::find() else {
        return;
    };
    let receiver = Receiver::start(&[], 204);
    let dir = scratch("webhooks_serve_verify");
    let server = serve(&dir, &sqlite_url(&dir), "1.0", "serve");
    let key = server.demo_key();
    let secret = server.register(&key, &receiver.url());

    let ping = server.ping(&key);
    assert_eq!(ping["delivered"], true, "{ping}");
    assert_eq!(ping["status_code"], 204, "{ping}");
    let ping_id = ping["id"].as_str().unwrap().to_owned();
    assert_eq!(
        receiver.of(&ping_id).len(),
        1,
        "the first attempt is made before answering"
    );

    // Go-live readiness now sees the delivered signed ping.
    let readiness = Command::new(BIN)
        .args(["partner", "readiness", &server.demo_partner(), "--json"])
        .args(["--database-url", &sqlite_url(&dir)])
        .current_dir(&dir)
        .env("PARTNER_API_SECRETS__SEALING_KEY", SEALING_KEY)
        .output()
        .unwrap();
    assert!(readiness.status.success(), "{readiness:?}");
    let readiness: Value = serde_json::from_slice(&readiness.stdout).unwrap();
    assert_eq!(
        readiness["test_mode"]["webhook_pings_delivered"], 1,
        "{readiness}"
    );
    assert!(
        !readiness["missing"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "webhook_ping"),
        "{readiness}"
    );

    let gid = server.group_with_census(&key, 1);
    let processed = server.census_processed(&key, &gid);
    let processed_id = processed["id"].as_str().unwrap().to_owned();
    let settled = server.settled(&key, &processed_id, PATIENCE);
    assert_eq!(settled["delivery"]["state"], "delivered", "{settled}");
    assert_eq!(settled["delivery"]["attempts"], 1, "{settled}");
    assert_eq!(settled["delivery"]["last_status_code"], 204, "{settled}");

    let arrivals = receiver.arrivals();
    let delivered = receiver.of(&processed_id);
    assert_eq!(delivered.len(), 1, "{arrivals:?}");
    let body = delivered[0].json();
    assert_eq!(body["type"], "census.processed", "{body}");
    assert_eq!(
        body["data"],
        json!({"group_id": gid, "received": 1, "accepted": 1, "member_count": 1, "error_count": 0}),
        "{body}"
    );
    // The delivered envelope is the one the API shows, minus `delivery`.
    let mut shown = settled.clone();
    shown.as_object_mut().unwrap().remove("delivery");
    assert_eq!(body, shown);
    assert_eq!(arrivals.len(), 2, "{arrivals:?}");
    for arrival in &arrivals {
        assert_delivery_shape(arrival);
        verifier.check(&secret, arrival);
    }

    // Rotation: a new secret signs from now on; the old one no longer verifies.
    let rotated = server.register(&key, &receiver.url());
    assert_ne!(rotated, secret);
    let again = server.ping(&key);
    assert_eq!(again["delivered"], true, "{again}");
    let after = receiver.of(again["id"].as_str().unwrap());
    assert_eq!(after.len(), 1);
    assert_delivery_shape(&after[0]);
    verifier.check(&rotated, &after[0]);
    assert!(
        verifier.verify(&secret, &after[0], &after[0].body).is_err(),
        "a delivery after rotation verifies with the old secret"
    );
}

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

/// Events due while no endpoint is registered end `no_endpoint`, and
/// registering later does not deliver them.
#[test]
fn no_endpoint_no_delivery() {
    let dir = scratch("webhooks_serve_no_endpoint");
    let receiver = Receiver::start(&[], 204);
    let server = serve(&dir, &sqlite_url(&dir), "0.05", "serve");
    let key = server.demo_key();

    let (status, body) = server.call("POST", "/v1/webhook/test", &key, None);
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("not_found")),
        "{body}"
    );

    let gid = server.group_with_census(&key, 3);
    let processed = server.census_processed(&key, &gid);
    let id = processed["id"].as_str().unwrap().to_owned();
    let event = server.settled(&key, &id, PATIENCE);
    assert_eq!(event["delivery"]["state"], "no_endpoint", "{event}");
    assert_eq!(event["delivery"]["next_attempt_at"], Value::Null, "{event}");

    // Registering afterwards does not revive it.
    server.register(&key, &receiver.url());
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(receiver.count(), 0, "{:?}", receiver.arrivals());
    assert_eq!(server.event(&key, &id)["delivery"]["state"], "no_endpoint");
    for event in server.events(&key) {
        assert_eq!(event["delivery"]["state"], "no_endpoint", "{event}");
    }

    // The receiver does work: a ping now reaches it, and only the ping.
    let ping = server.ping(&key);
    assert_eq!(ping["delivered"], true, "{ping}");
    let arrivals = wait_arrivals(&receiver, 1, PATIENCE);
    assert_eq!(arrivals.len(), 1, "{arrivals:?}");
    assert_eq!(arrivals[0].id(), ping["id"].as_str().unwrap());
}
