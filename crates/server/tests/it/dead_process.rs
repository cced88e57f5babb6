//! A process that dies (SIGKILL) does not hold its idempotency keys and job
//! claims for their leases: the real `serve` binary, with the in-flight key
//! and the claimed market comparison a crash leaves planted in the
//! database in the dead process's name (a request and a simulation are too
//! quick to kill halfway). On SQLite the next `serve` executes the key at
//! once and resumes the comparison; on PostgreSQL a second process already
//! running does both within seconds. A process that stops cleanly
//! deregisters.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::ports::Clock;
use domain::scope::Scope;
use serde_json::Value;
use server::system::SystemClock;
use store_diesel::{Database, Stores};
use testkit::db::{execute, texts};

use crate::common::serve_process::{ServeDemo, Served};
use crate::common::{queue_a_comparison, scratch};

/// The lease planted on the dead process's key and claim: ten minutes, so
/// a key or job freed within a minute was freed by the owner's death.
const PLANTED_LEASE_MS: i64 = 600_000;

/// How soon, after a kill, another process must execute the key and resume
/// the job on PostgreSQL: the documented bound is 10 s (an owner is dead 8 s
/// after its last heartbeat); the rest allows for a loaded machine.
const WITHIN: Duration = Duration::from_secs(15);

/// A running `serve --demo` (killed on drop) with this file's requests.
struct Serve(Served);

impl Serve {
    /// Starts `serve --demo` in `dir` on `url` (limits high enough for
    /// polling; its log in `dir/<name>.log`) and waits until it listens.
    fn start(dir: &Path, url: &str, name: &str) -> Self {
        Self(
            ServeDemo::new(dir, url)
                .without_inherited_config()
                .env("PARTNER_API_LOG", "info")
                .env("PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE", "100000")
                .env("PARTNER_API_RATE_LIMITS__QUOTE_CREATES_PER_HOUR", "100000")
                .log(name)
                .start(),
        )
    }

    /// The demo key, printed by the first start on a database.
    fn demo_key(&self) -> String {
        self.0.demo_key()
    }

    /// One request over a fresh connection; (status, JSON body or null).
    fn call(
        &self,
        method: &str,
        path: &str,
        key: &str,
        idem: Option<&str>,
        body: &str,
    ) -> (u16, Value) {
        use std::io::{Read as _, Write as _};
        let mut s = std::net::TcpStream::connect(&self.0.addr).unwrap();
        let idem = idem.map_or(String::new(), |k| format!("Idempotency-Key: {k}\r\n"));
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {key}\r\n{idem}\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.0.addr,
            body.len()
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    /// SIGKILLs the process (a crash) and reaps it.
    fn crash(mut self) {
        self.0.child.kill().unwrap();
        self.0.child.wait().unwrap();
    }
}

/// The system clock ten minutes ahead: a census written through it
/// enqueues a comparison no worker takes before the test claims it.
struct Ahead;

impl Clock for Ahead {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + PLANTED_LEASE_MS
    }
}

fn now_ms() -> i64 {
    SystemClock.now_ms()
}

/// The registered processes' ids.
fn processes(rt: &tokio::runtime::Runtime, db: &Database) -> Vec<String> {
    rt.block_on(texts(db, "SELECT id AS value FROM processes"))
}

/// Turns the stored response of idempotency key `key` back into an
/// in-flight record of `owner`, leased for ten minutes: what `owner` leaves
/// when it dies while executing the request.
fn plant_in_flight_key(rt: &tokio::runtime::Runtime, db: &Database, key: &str, owner: &str) {
    let until = now_ms() / 1_000 + PLANTED_LEASE_MS / 1_000;
    let n = rt.block_on(execute(
        db,
        &format!(
            "UPDATE idempotency SET state = 'in_flight', status = NULL, headers = NULL, \
             body = NULL, expires_at = {until}, owner_id = '{owner}' WHERE idem_key = '{key}'"
        ),
    ));
    assert_eq!(n, 1);
}

/// Writes a one-member census for `group` of `partner` and claims its
/// market comparison in `owner`'s name, leased for ten minutes: what
/// `owner` leaves when it dies while running the comparison.
fn plant_claimed_comparison(
    rt: &tokio::runtime::Runtime,
    db: &Database,
    partner: &str,
    group: &str,
    owner: &str,
) {
    let scope = Scope::new(
        domain::ids::PartnerId::parse(partner).unwrap(),
        domain::mode::Mode::Test,
    );
    let gid = domain::ids::GroupId::parse(group).unwrap();
    rt.block_on(async {
        let stores = Stores::open(db, 2).unwrap();
        queue_a_comparison(&stores, &scope, &gid, Arc::new(Ahead)).await;
    });
    let now = now_ms();
    let until = now + PLANTED_LEASE_MS;
    let n = rt.block_on(execute(
        db,
        &format!(
            "UPDATE jobs SET state = 'running', attempts = 1, run_after_ms = {now}, \
             locked_until_ms = {until}, owner_id = '{owner}' \
             WHERE group_id = '{group}' AND state = 'queued'"
        ),
    ));
    assert_eq!(n, 1);
}

/// What each test does before the crash: the demo key and partner, a key
/// `K` executed and then planted in flight in `owner`'s name, and a group
/// whose comparison is planted as claimed by `owner`.
struct Planted {
    key: String,
    first: Value,
    group: String,
}

const KEY: &str = "retry-after-crash";
const BODY: &str = r#"{"company_name":"Acme","domain":"acme-crash.com"}"#;

/// Executes `KEY` on `via`, then plants it and a claimed comparison in
/// `owner`'s name; `checker` (a live process) then sees both held.
fn plant(
    rt: &tokio::runtime::Runtime,
    db: &Database,
    key: String,
    via: &Serve,
    checker: &Serve,
    owner: &str,
) -> Planted {
    let (status, first) = via.call("POST", "/v1/groups", &key, Some(KEY), BODY);
    assert_eq!(status, 201, "{first}");
    plant_in_flight_key(rt, db, KEY, owner);
    let (status, held) = checker.call("POST", "/v1/groups", &key, Some(KEY), BODY);
    assert_eq!(
        (status, held["error"].as_str()),
        (409, Some("conflict")),
        "{held}"
    );

    let (status, group) = via.call(
        "POST",
        "/v1/groups",
        &key,
        None,
        r#"{"company_name":"Beta","domain":"beta-crash.com"}"#,
    );
    assert_eq!(status, 201, "{group}");
    let group = group["id"].as_str().unwrap().to_owned();
    let (_, ping) = via.call("GET", "/v1/ping", &key, None, "");
    let partner = ping["partner"]["id"].as_str().unwrap();
    plant_claimed_comparison(rt, db, partner, &group, owner);
    let (status, pending) = checker.call("POST", &quotes(&group), &key, None, "{}");
    assert_eq!(
        (status, pending["error"].as_str()),
        (409, Some("rates_pending")),
        "{pending}"
    );
    Planted { key, first, group }
}

fn quotes(group: &str) -> String {
    format!("/v1/groups/{group}/quotes")
}

/// Polls `probe` every 100 ms until it answers `true`, for at most `limit`;
/// how long that took.
fn time_until(what: &str, limit: Duration, mut probe: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    loop {
        if probe() {
            return start.elapsed();
        }
        assert!(start.elapsed() < limit, "{what} not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// SQLite: one process owns the file, so the process that starts after a
/// crash frees what the dead one held before it serves: the retried key
/// executes on the first try and the comparison resumes at the worker's
/// first poll, not after the ten-minute leases.
#[test]
fn after_a_crash_on_sqlite_the_next_serve_executes_the_key_and_resumes_the_job() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = scratch("dead_process_sqlite");
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    let db = Database::parse(&url).unwrap();
    let a = Serve::start(&dir, &url, "a");
    let [owner] = <[String; 1]>::try_from(processes(&rt, &db)).unwrap();
    let planted = plant(&rt, &db, a.demo_key(), &a, &a, &owner);
    a.crash();

    let b = Serve::start(&dir, &url, "b");
    let (status, again) = b.call("POST", "/v1/groups", &planted.key, Some(KEY), BODY);
    assert_eq!(status, 201, "the retried key executes at once: {again}");
    // The first execution committed its group before the crash: the
    // retry answers with that group rather than making a second one.
    assert_eq!(again["id"], planted.first["id"], "{again}");
    let took = time_until("the resumed comparison", Duration::from_secs(30), || {
        b.call("POST", &quotes(&planted.group), &planted.key, None, "{}")
            .0
            == 201
    });
    eprintln!("sqlite: the comparison resumed {took:?} after the restart");
    assert!(
        !processes(&rt, &db).contains(&owner),
        "the dead process is gone"
    );
}

/// PostgreSQL: two processes share the database; one crashes, and the
/// other executes its in-flight key and resumes its claimed comparison
/// within seconds (the dead process's heartbeat goes stale), not after the
/// ten-minute leases. The survivor then stops cleanly and deregisters.
#[test]
fn after_a_crash_on_postgres_the_other_process_takes_over_within_seconds() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(test_db) = rt.block_on(testkit::db::postgres()) else {
        println!("SKIPPED: {} is not set", testkit::db::PG_ENV);
        return;
    };
    let db = test_db.db.clone();
    let dir = scratch("dead_process_postgres");
    let a = Serve::start(&dir, &test_db.url, "a");
    let [dead] = <[String; 1]>::try_from(processes(&rt, &db)).unwrap();
    let mut b = Serve::start(&dir, &test_db.url, "b");
    let survivor = processes(&rt, &db)
        .into_iter()
        .find(|p| *p != dead)
        .unwrap();
    let planted = plant(&rt, &db, a.demo_key(), &a, &b, &dead);

    a.crash();
    let key_took = time_until("the key executing elsewhere", WITHIN, || {
        let (status, body) = b.call("POST", "/v1/groups", &planted.key, Some(KEY), BODY);
        assert!(matches!(status, 201 | 409), "{status} {body}");
        status == 201
    });
    let job_took = time_until("the resumed comparison", WITHIN, || {
        b.call("POST", &quotes(&planted.group), &planted.key, None, "{}")
            .0
            == 201
    });
    eprintln!(
        "postgres: after the kill, the key executed in {key_took:?}, \
         the comparison was done {job_took:?} later"
    );

    // A clean stop (SIGTERM) deregisters the survivor.
    let pid = b.0.child.id().to_string();
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success());
    let exit = b.0.child.wait().unwrap();
    assert!(exit.success(), "{exit}");
    assert!(
        !processes(&rt, &db).contains(&survivor),
        "the survivor deregistered"
    );
    drop(b);
    drop(test_db);
}
