//! `cargo xtask bench webhooks`: webhook deliveries end to end and the
//! outbox's drain, on each database, against one local receiver (the bare
//! handler's `POST /hook`, keep-alive, answering `204` at once).
//!
//! - **End to end**: `--senders` threads create `--events` test events
//!   over the API (`POST /v1/webhook/test`, whose first attempt the
//!   request makes) until the receiver holds every `webhook-id`.
//! - **Drain**: `--events` pending events are written into the outbox with
//!   SQL at once; the dispatcher (woken by the commit on PostgreSQL, by its
//!   recheck on SQLite, where another process's write is not heard)
//!   delivers them; the rate is the receiver's, first to last delivery.
//! - On PostgreSQL, the database's transactions per event of each.
//!
//! Svix server is not run here (nothing outside the package registries is
//! reachable), so the ratio to it is left to the check from outside; the
//! figure Svix reached on this kind of machine is printed for reference.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::Setup;
use super::{Bare, Transactions, approx, sql};
use crate::reliability::harness::{Backend, Ctx, Db, wait_for};
use crate::reliability::http::Client;

/// Arguments of `cargo xtask bench webhooks`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The databases, the binaries and the PostgreSQL server.
    #[command(flatten)]
    setup: Setup,
    /// Events per run.
    #[arg(long, default_value_t = 3_000)]
    events: u64,
    /// Concurrent senders of the end-to-end run.
    #[arg(long, default_value_t = 16)]
    senders: u64,
}

/// Messages per second Svix server delivered under this load on this kind
/// of machine with PostgreSQL (the measurement, not this run's).
const SVIX_REFERENCE: f64 = 1_170.0;

/// How long a run may take before it is given up.
const LIMIT: Duration = Duration::from_secs(300);

/// The figures of one database.
#[derive(Debug)]
struct Rows {
    backend: Backend,
    /// Events per run.
    events: u64,
    /// End to end: deliveries per second, and refused sends.
    end_to_end: f64,
    refused: u64,
    /// Drain: deliveries per second, first to last.
    drain: f64,
    /// Deliveries beyond one per event (both runs).
    duplicates: u64,
    /// PostgreSQL only: transactions per event (end to end, drain), and
    /// the background's per second.
    transactions: Option<(f64, f64, f64)>,
}

/// Runs the benchmark.
pub(crate) fn run(root: &Path, args: &Args) -> anyhow::Result<()> {
    let (ctx, receiver) = super::prepare(root, &args.setup)?;
    println!(
        "bench webhooks: {} events, {} senders; scratch {}",
        args.events,
        args.senders,
        ctx.dir.display()
    );
    for &backend in args.setup.target.db.backends() {
        let rows = measure(&ctx, backend, &receiver, args)?;
        print!("{}", table(&rows));
    }
    Ok(())
}

/// Measures one database.
fn measure(ctx: &Ctx, backend: Backend, receiver: &Bare, args: &Args) -> anyhow::Result<Rows> {
    let insecure = [("PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS", "true")];
    let (db, key, server) = super::serve(ctx, backend, "webhooks", &insecure)?;
    let client = server.client(&key);
    let url = format!("{}hook", receiver.url());
    let registered = client.json("PUT", "/v1/webhook", &json!({ "url": url }), &[])?;
    if registered.status >= 300 {
        bail!("cannot register the endpoint: {}", registered.brief());
    }
    let hook = Client::new(receiver.addr, "");
    let counter = match backend {
        Backend::Postgres => Some(Transactions::idle(&db)?),
        Backend::Sqlite => None,
    };

    // End to end, over the API.
    hook.send("DELETE", "/hook", &[], None)?;
    let start = counter.as_ref().map(Transactions::start).transpose()?;
    let began = Instant::now();
    let refused = send(&client, args.events, args.senders);
    let e2e = received(&hook, args.events)?;
    let end_to_end = approx(args.events) / began.elapsed().as_secs_f64();
    let e2e_transactions = match (&counter, start) {
        (Some(c), Some(s)) => Some(c.since(s)? / approx(args.events)),
        _ => None,
    };
    println!(
        "  {backend} end to end: {end_to_end:.0}/s ({} refused, {} received)",
        refused, e2e.received
    );

    // The drain: events written at once, delivered by the dispatcher.
    hook.send("DELETE", "/hook", &[], None)?;
    let start = counter.as_ref().map(Transactions::start).transpose()?;
    fill(&db, args.events)?;
    let drained = received(&hook, args.events)?;
    let span_ms = drained.last_ms.saturating_sub(drained.first_ms).max(1);
    let drain = approx(args.events.saturating_sub(1)) * 1000.0 / approx(span_ms);
    let drain_transactions = match (&counter, start) {
        (Some(c), Some(s)) => Some(c.since(s)? / approx(args.events)),
        _ => None,
    };
    println!(
        "  {backend} drain: {drain:.0}/s ({} received in {span_ms} ms)",
        drained.received
    );
    drop(server);
    Ok(Rows {
        backend,
        events: args.events,
        end_to_end,
        refused,
        drain,
        duplicates: e2e
            .received
            .saturating_sub(e2e.distinct)
            .saturating_add(drained.received.saturating_sub(drained.distinct)),
        transactions: match (e2e_transactions, drain_transactions, &counter) {
            (Some(a), Some(b), Some(c)) => Some((a, b, c.idle_rate())),
            _ => None,
        },
    })
}

/// Sends `events` test events from `senders` threads; returns how many
/// were refused (an answer other than 2xx, or no answer).
fn send(client: &Client, events: u64, senders: u64) -> u64 {
    let next = AtomicU64::new(0);
    let refused = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..senders.max(1) {
            scope.spawn(|| {
                while next.fetch_add(1, Ordering::Relaxed) < events {
                    let ok = client
                        .json("POST", "/v1/webhook/test", &json!({}), &[])
                        .is_ok_and(|r| r.status < 300);
                    if !ok {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    refused.into_inner()
}

/// The receiver's counts.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    received: u64,
    distinct: u64,
    first_ms: u64,
    last_ms: u64,
}

/// Waits until the receiver holds `events` distinct ids.
fn received(hook: &Client, events: u64) -> anyhow::Result<Counts> {
    let read = || -> Option<Counts> {
        let v: Value = hook.get("/hook").ok()?.json()?;
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(Counts {
            received: n("received"),
            distinct: n("distinct"),
            first_ms: n("first_ms"),
            last_ms: n("last_ms"),
        })
    };
    wait_for(LIMIT, || read().filter(|c| c.distinct >= events)).with_context(|| {
        format!(
            "the receiver got {:?} of {events} events within {} s",
            read(),
            LIMIT.as_secs()
        )
    })
}

/// Writes `events` pending events into the outbox in one statement, each
/// a copy of a stored one under a new id, due at once.
fn fill(db: &Db, events: u64) -> anyhow::Result<()> {
    let columns = "id, partner_id, mode, event_type, data, created_at, state, attempts, \
                   next_attempt_at_ms, locked_until_ms, last_status";
    let copy = "partner_id, mode, event_type, data, created_at, 'pending', 0, 0, NULL, NULL";
    let model = "(SELECT id FROM events ORDER BY id LIMIT 1)";
    let offset = 0x00f0_0000_0000_u64;
    let statement = match db.backend {
        Backend::Sqlite => format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {events}) \
             INSERT INTO events ({columns}) SELECT printf('evt_%012x', {offset} + i), {copy} \
             FROM events, n WHERE events.id = {model}"
        ),
        Backend::Postgres => format!(
            "INSERT INTO events ({columns}) SELECT 'evt_' || lpad(to_hex({offset} + i), 12, '0'), {copy} \
             FROM events, generate_series(1, {events}) AS i WHERE events.id = {model}"
        ),
    };
    sql(db, &statement)?;
    Ok(())
}

/// The printed rows of one database.
fn table(r: &Rows) -> String {
    let mut out = format!(
        "{}:\n  end to end ({} test events over the API): {:.0} deliveries/s ({} refused)\n  \
         outbox drain: {:.0} deliveries/s\n  deliveries beyond one per event: {}\n",
        r.backend, r.events, r.end_to_end, r.refused, r.drain, r.duplicates
    );
    if let Some((e2e, drain, idle)) = r.transactions {
        out.push_str(&format!(
            "  transactions per event: {e2e:.2} end to end, {drain:.2} drained (background {idle:.2}/s taken off)\n"
        ));
    }
    out.push_str(&format!(
        "  Svix server, for reference (not this run): about {SVIX_REFERENCE:.0}/s; end to end ÷ that {:.2}, drain ÷ that {:.2}\n",
        r.end_to_end / SVIX_REFERENCE,
        r.drain / SVIX_REFERENCE
    ));
    out
}
