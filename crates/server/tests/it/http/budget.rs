//! The request path's database budget, the regression guard of `cargo
//! xtask bench http` that cannot flake: the statements and transactions
//! each kind of request costs, counted by diesel's instrumentation on every
//! connection of the process (nextest runs each test in a process of its
//! own), compared with a budget — never a time. A change that adds a round
//! trip or a transaction to a hot path fails here, on both databases.
//!
//! A transaction is what PostgreSQL counts: each explicit `BEGIN`…`COMMIT`,
//! and each statement sent outside one. The key lookup is left out of the
//! counts: the key cache believes a found key for one second of wall time,
//! so whether a request re-reads it depends on the machine's speed (the
//! cache has tests of its own).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use diesel::connection::{Instrumentation, InstrumentationEvent};
use serde_json::json;
use testkit::db::TestDb;

use crate::http::{TestApp, create_group, get, group_body, post, put, send};

static STATEMENTS: AtomicU64 = AtomicU64::new(0);
static TRANSACTIONS: AtomicU64 = AtomicU64::new(0);
/// The counted statements' first words, for the report.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Counts one connection's statements and transactions.
#[derive(Default)]
struct Counter {
    in_transaction: bool,
}

impl Instrumentation for Counter {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        match event {
            InstrumentationEvent::BeginTransaction { depth, .. } if depth.get() == 1 => {
                self.in_transaction = true;
                TRANSACTIONS.fetch_add(1, Ordering::SeqCst);
            }
            InstrumentationEvent::CommitTransaction { depth, .. }
            | InstrumentationEvent::RollbackTransaction { depth, .. }
                if depth.get() == 1 =>
            {
                self.in_transaction = false;
            }
            InstrumentationEvent::StartQuery { query, .. } => {
                let text = query.to_string();
                let verb = text.trim_start().to_ascii_uppercase();
                let control = ["BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE"]
                    .iter()
                    .any(|v| verb.starts_with(v));
                if control || text.contains("api_keys") {
                    return;
                }
                STATEMENTS.fetch_add(1, Ordering::SeqCst);
                let head: String = text
                    .split_whitespace()
                    .take(6)
                    .collect::<Vec<_>>()
                    .join(" ");
                let mark = if self.in_transaction { "  " } else { "* " };
                SEEN.lock().unwrap().push(format!("{mark}{head}"));
                if !self.in_transaction {
                    TRANSACTIONS.fetch_add(1, Ordering::SeqCst);
                }
            }
            _ => {}
        }
    }
}

/// Counts every connection opened from now on.
fn instrument() {
    diesel::connection::set_default_instrumentation(|| Some(Box::new(Counter::default()))).unwrap();
}

/// The (statements, transactions) since the last call, and the
/// statements' first words (`*`: a transaction of its own).
fn taken() -> ((u64, u64), Vec<String>) {
    (
        (
            STATEMENTS.swap(0, Ordering::SeqCst),
            TRANSACTIONS.swap(0, Ordering::SeqCst),
        ),
        std::mem::take(&mut *SEEN.lock().unwrap()),
    )
}

/// Today's costs, (statements, transactions) on SQLite then PostgreSQL.
/// On PostgreSQL every authenticated request also pays its rate-limit hit
/// (one statement), except a group read, whose hit rides on the read's
/// statement; on SQLite the limits are counted in memory. A write
/// pays its transaction (the domain check and the insert for a group); an
/// idempotent one adds the key's reservation (one statement for a new key),
/// its stored answer, and for a group its creation key (one upsert in the
/// group's transaction, which also takes over a key from before the replay
/// window).
type Budget = (&'static str, (u64, u64), (u64, u64));

const BUDGETS: &[Budget] = &[
    ("GET /v1/ping", (0, 0), (1, 1)),
    ("GET /v1/groups/{id}", (1, 1), (1, 1)),
    ("POST /v1/groups", (2, 1), (3, 2)),
    ("POST /v1/groups (Idempotency-Key)", (5, 3), (6, 4)),
    ("PUT /v1/groups/{id}/census", (11, 2), (13, 4)),
];

async fn the_request_path_keeps_its_database_budget(db: TestDb, postgres: bool) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let group = create_group(&svc, &key, &group_body("budget-0.example")).await;
    let gid = group["id"].as_str().unwrap().to_owned();
    let census = json!({"members": [
        {"external_id": "e1", "first_name": "Ann", "last_name": "Bee", "dob": "1980-02-03", "zip": "60601"},
        {"external_id": "e2", "first_name": "Cy", "last_name": "Dee", "dob": "1975-06-07", "zip": "60601"}
    ]});
    let mut seen = Vec::new();
    for (n, (name, ..)) in BUDGETS.iter().enumerate() {
        // Twice: the first warms what a running server has warm (prepared
        // statements, pooled connections); the second is counted.
        let mut counts = ((0, 0), Vec::new());
        for round in 0..2 {
            let request = match n {
                0 => get("/v1/ping", &key),
                1 => get(&format!("/v1/groups/{gid}"), &key),
                2 => post(
                    "/v1/groups",
                    &key,
                    &group_body(&format!("budget-{round}-a.example")),
                ),
                3 => post(
                    "/v1/groups",
                    &key,
                    &group_body(&format!("budget-{round}-b.example")),
                )
                .insert_header(("Idempotency-Key", format!("budget-{round}"))),
                _ => put(&format!("/v1/groups/{gid}/census"), &key, &census),
            };
            let _ = taken();
            let a = send(&svc, request).await;
            assert!(a.status.is_success(), "{name}: {}", a.body);
            counts = taken();
        }
        seen.push((*name, counts));
    }
    let table: String = seen
        .iter()
        .map(|(name, ((s, t), heads))| {
            format!(
                "{name}: {s} statements, {t} transactions\n    {}\n",
                heads.join("\n    ")
            )
        })
        .collect();
    println!(
        "{}\n{table}",
        if postgres { "PostgreSQL" } else { "SQLite" }
    );
    for ((name, sqlite, pg), (_, (counts, _))) in BUDGETS.iter().zip(&seen) {
        let allowed = if postgres { pg } else { sqlite };
        assert!(
            counts.0 <= allowed.0 && counts.1 <= allowed.1,
            "{name} costs {counts:?} (statements, transactions), over its budget {allowed:?}\n{table}"
        );
    }
}

#[actix_web::test]
async fn sqlite() {
    instrument();
    the_request_path_keeps_its_database_budget(testkit::db::sqlite().await, false).await;
}

#[actix_web::test]
async fn postgres() {
    instrument();
    match testkit::db::postgres().await {
        Some(db) => the_request_path_keeps_its_database_budget(db, true).await,
        None => eprintln!(
            "SKIPPED: {} is not set; PostgreSQL not tested",
            testkit::db::PG_ENV
        ),
    }
}
