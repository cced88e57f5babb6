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

mod delivery;
mod retries;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::common::serve_process::{ServeDemo, Served};
use crate::common::webhook_receiver::{Arrival, Receiver};

/// One sealing key for every process of a test, so a secret sealed by one
/// process opens in another (and after a restart).
pub(super) const SEALING_KEY: &str =
    "6a1f0c9e4b7d2a5c8e3f1b6d9a0c4e7f2b5d8a1c3e6f9b2d5a8c0e3f6b9d1a4c";

/// How long a delivery may take to show up: polling, not an assertion
/// about speed.
pub(super) const PATIENCE: Duration = Duration::from_secs(30);

/// After a kill, an attempt that was in flight holds its 30 s lease before
/// another process may take it over; waits that may hit one allow for it.
pub(super) const PATIENCE_PAST_A_LEASE: Duration = Duration::from_secs(75);

// ---------------------------------------------------------------------
// The server under test and its API
// ---------------------------------------------------------------------

/// A running `serve --demo` (killed on drop, SIGKILL: a crash) with this
/// file's API calls.
pub(super) struct Serve(Served);

/// Starts `serve --demo` in `dir` on `url` with insecure endpoints allowed,
/// `retry_time_scale` = `scale`, the shared sealing key and limits high
/// enough for polling; its log goes to `dir/<name>.log`.
pub(super) fn serve(dir: &Path, url: &str, scale: &str, name: &str) -> Serve {
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
pub(super) fn wait_for<T>(
    what: &str,
    limit: Duration,
    mut probe: impl FnMut() -> Result<T, String>,
) -> T {
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
pub(super) fn wait_arrivals(receiver: &Receiver, n: usize, patience: Duration) -> Vec<Arrival> {
    wait_for(&format!("{n} arrivals"), patience, || {
        let got = receiver.arrivals();
        if got.len() >= n {
            Ok(got)
        } else {
            Err(format!("{} arrivals", got.len()))
        }
    })
}

pub(super) fn sqlite_url(dir: &Path) -> String {
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
pub(super) fn assert_gaps_at_least(arrivals: &[Arrival], delays_ms: &[u64]) {
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
pub(super) fn assert_delivery_shape(arrival: &Arrival) {
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
