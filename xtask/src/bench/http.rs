//! `cargo xtask bench http`: the rows of the module above, per database.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::Setup;
use super::wrk::{self, Load, Report};
use super::{Bare, Transactions, approx, sql};
use crate::reliability::harness::{Backend, Ctx, Db};

/// Arguments of `cargo xtask bench http`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The databases, the binaries and the PostgreSQL server.
    #[command(flatten)]
    setup: Setup,
    /// Seconds per load run.
    #[arg(long, default_value_t = 10)]
    seconds: u32,
    /// Interleaved rounds of the bare handler, ping and group read.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Groups stored for the large `POST /v1/groups` run.
    #[arg(long, default_value_t = 100_000)]
    groups: u64,
    /// Members of the census write.
    #[arg(long, default_value_t = 10_000)]
    members: usize,
}

/// Connections of the throughput runs.
const CONNECTIONS: u32 = 32;
/// Groups stored for the small `POST /v1/groups` run.
const SMALL: u64 = 1_000;

/// The figures of one database.
#[derive(Debug)]
struct Rows {
    backend: Backend,
    bare: Vec<f64>,
    ping: Vec<f64>,
    read: Vec<f64>,
    post_small: Report,
    post_large: Report,
    idempotent: Report,
    /// PostgreSQL only: (ping, group read) transactions per request.
    transactions: Option<(f64, f64)>,
    /// The census write against the raw bulk insert.
    census: super::census::Census,
}

/// Runs the benchmark.
pub(crate) fn run(root: &Path, args: &Args) -> anyhow::Result<()> {
    if !wrk::installed() {
        bail!("wrk is not installed (apt-get install wrk)");
    }
    let (ctx, floor) = super::prepare(root, &args.setup)?;
    println!(
        "bench http: {} s per run, {} rounds, {CONNECTIONS} connections, wrk -t2; scratch {}",
        args.seconds,
        args.rounds,
        ctx.dir.display()
    );
    for &backend in args.setup.target.db.backends() {
        let rows = measure(&ctx, backend, &floor, args)?;
        print!("{}", table(&rows, args.groups));
    }
    Ok(())
}

/// Measures one database.
fn measure(ctx: &Ctx, backend: Backend, floor: &Bare, args: &Args) -> anyhow::Result<Rows> {
    let (db, key, server) = super::serve(ctx, backend, "bench", &[])?;
    let client = server.client(&key);
    let created = client.json("POST", "/v1/groups", &group_body("read"), &[])?;
    let gid = created
        .json()
        .and_then(|v| v.get("id")?.as_str().map(str::to_owned))
        .with_context(|| format!("cannot create a group: {}", created.brief()))?;
    let api = format!("http://{}", server.addr);
    let auth = || vec![("Authorization", format!("Bearer {key}"))];
    let get = |url: String, headers| Load {
        url,
        connections: CONNECTIONS,
        seconds: args.seconds,
        headers,
        script: None,
    };

    let (mut bare, mut ping, mut read) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=args.rounds {
        bare.push(wrk::run(&get(floor.url(), Vec::new()))?.rps);
        ping.push(wrk::run(&get(format!("{api}/v1/ping"), auth()))?.rps);
        read.push(wrk::run(&get(format!("{api}/v1/groups/{gid}"), auth()))?.rps);
        println!(
            "  {backend} round {round}: bare {:.0}/s, ping {:.0}/s, group read {:.0}/s",
            bare.last().unwrap_or(&0.0),
            ping.last().unwrap_or(&0.0),
            read.last().unwrap_or(&0.0)
        );
    }

    let transactions = match backend {
        Backend::Postgres => Some((
            per_request(&db, &get(format!("{api}/v1/ping"), auth()))?,
            per_request(&db, &get(format!("{api}/v1/groups/{gid}"), auth()))?,
        )),
        Backend::Sqlite => None,
    };

    let scripts = ctx.dir.join("wrk");
    std::fs::create_dir_all(&scripts)?;
    let post = scripts.join("post.lua");
    let idempotent = scripts.join("idempotent.lua");
    std::fs::write(&post, lua(false))?;
    std::fs::write(&idempotent, lua(true))?;
    let post_load = |script| Load {
        url: format!("{api}/v1/groups"),
        connections: CONNECTIONS,
        seconds: args.seconds,
        headers: auth(),
        script: Some(script),
    };
    fill(&db, SMALL)?;
    let post_small = wrk::run(&post_load(&post))?;
    fill(&db, args.groups)?;
    let post_large = wrk::run(&post_load(&post))?;
    let idempotent = wrk::run(&post_load(&idempotent))?;
    let census = super::census::measure(ctx, &db, &client, args.members)?;
    drop(server);
    Ok(Rows {
        backend,
        bare,
        ping,
        read,
        post_small,
        post_large,
        idempotent,
        transactions,
        census,
    })
}

/// A group body; `tag` makes its domain.
fn group_body(tag: &str) -> Value {
    json!({"company_name": "Bench Manufacturing", "domain": format!("{tag}.bench.example"),
           "external_id": "crm-1", "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": "60601"}})
}

/// The wrk script of `POST /v1/groups`, with a fresh `Idempotency-Key`
/// per request when `idempotent`.
fn lua(idempotent: bool) -> String {
    let body = group_body("load")
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    // The first refusal of each thread is printed, for the error report.
    let mut s = format!(
        "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = \"{body}\"\n\
         local refused = false\nresponse = function(status, headers, body)\n  \
         if status >= 300 and not refused then refused = true; print(status, body) end\nend\n"
    );
    if idempotent {
        // Each thread (its own Lua state) numbers its requests; `run`
        // keeps keys of different runs apart.
        let run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        s.push_str(&format!(
            "local threads = 0\nsetup = function(thread)\n  threads = threads + 1\n  \
             thread:set(\"tid\", threads)\nend\nlocal n = 0\nrequest = function()\n  n = n + 1\n  \
             wrk.headers[\"Idempotency-Key\"] = \"bench-{run}-\" .. tid .. \"-\" .. n\n  \
             return wrk.format()\nend\n"
        ));
    }
    s
}

/// Fills the groups table with generated rows up to `target` groups of
/// the partner.
fn fill(db: &Db, target: u64) -> anyhow::Result<()> {
    let partner = sql(db, "SELECT partner_id FROM api_keys LIMIT 1")?;
    let partner = partner.trim();
    let have: u64 = sql(db, "SELECT count(*) FROM groups")?.trim().parse()?;
    let Some(missing) = target.checked_sub(have).filter(|n| *n > 0) else {
        return Ok(());
    };
    let offset = 0x0010_0000_0000_u64.saturating_add(have);
    let statement = match db.backend {
        Backend::Sqlite => format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {missing}) \
             INSERT INTO groups (id, partner_id, mode, status, company_name, domain, created_at, updated_at) \
             SELECT printf('grp_%012x', {offset} + i), '{partner}', 'test', 'created', 'Filler Co', \
             'filler-' || ({offset} + i) || '.example', 1795266840 + i, 1795266840 + i FROM n"
        ),
        Backend::Postgres => format!(
            "INSERT INTO groups (id, partner_id, mode, status, company_name, domain, created_at, updated_at) \
             SELECT 'grp_' || lpad(to_hex({offset} + i), 12, '0'), '{partner}', 'test', 'created', 'Filler Co', \
             'filler-' || ({offset} + i) || '.example', 1795266840 + i, 1795266840 + i \
             FROM generate_series(1, {missing}) AS i; ANALYZE groups"
        ),
    };
    sql(db, &statement)?;
    Ok(())
}

/// PostgreSQL transactions per request of `load`, run over one
/// connection (see [`Transactions`]).
fn per_request(db: &Db, load: &Load<'_>) -> anyhow::Result<f64> {
    let one = Load {
        url: load.url.clone(),
        connections: 1,
        seconds: load.seconds.min(5),
        headers: load.headers.clone(),
        script: load.script,
    };
    let counter = Transactions::idle(db)?;
    let start = counter.start()?;
    let report = wrk::run(&one)?;
    Ok(counter.since(start)? / approx(report.requests))
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / approx(u64::try_from(values.len().max(1)).unwrap_or(1))
}

/// The printed rows of one database, each with its inputs and target.
fn table(r: &Rows, groups: u64) -> String {
    let (ping_target, read_target) = match r.backend {
        Backend::Sqlite => (0.5, 0.3),
        Backend::Postgres => (0.2, 0.15),
    };
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    let bare = mean(&r.bare);
    let ping = mean(&r.ping) / bare;
    let read = mean(&r.read) / bare;
    let growth = r.post_large.rps / r.post_small.rps;
    let mut out = String::new();
    let _ = writeln!(out, "{}:", r.backend);
    let _ = writeln!(
        out,
        "  GET /v1/ping ÷ bare handler:        {ping:.3} ({:.0}/s ÷ {bare:.0}/s)  target ≥ {ping_target}: {}",
        mean(&r.ping),
        met(ping >= ping_target)
    );
    let _ = writeln!(
        out,
        "  GET /v1/groups/{{id}} ÷ bare handler: {read:.3} ({:.0}/s ÷ {bare:.0}/s)  target ≥ {read_target}: {}",
        mean(&r.read),
        met(read >= read_target)
    );
    let _ = writeln!(
        out,
        "  POST /v1/groups at {groups} ÷ at {SMALL}: {growth:.3} ({:.0}/s ÷ {:.0}/s; p99 {:.1} ms, {:.1} ms)  target ≥ 0.9: {}",
        r.post_large.rps,
        r.post_small.rps,
        r.post_large.p99_ms,
        r.post_small.p99_ms,
        met(growth >= 0.9)
    );
    let _ = writeln!(
        out,
        "  idempotent POST /v1/groups, {CONNECTIONS} connections: p99 {:.1} ms (p50 {:.1} ms, {:.0}/s)  target ≤ 50 ms: {}",
        r.idempotent.p99_ms,
        r.idempotent.p50_ms,
        r.idempotent.rps,
        met(r.idempotent.p99_ms <= 50.0)
    );
    let c = &r.census;
    let census = c.put.as_secs_f64() / c.raw.as_secs_f64().max(1e-9);
    let _ = writeln!(
        out,
        "  census PUT of {} ÷ raw bulk insert: {census:.2} ({:.0} ms ÷ {:.0} ms)  target ≤ 2: {}",
        c.members,
        c.put.as_secs_f64() * 1000.0,
        c.raw.as_secs_f64() * 1000.0,
        met(census <= 2.0)
    );
    if let Some((ping, read)) = r.transactions {
        let _ = writeln!(
            out,
            "  transactions per ping: {ping:.2}  target ≤ 1: {}\n  transactions per group read: {read:.2}  target ≤ 1: {}",
            met(ping <= 1.05),
            met(read <= 1.05)
        );
    }
    out
}
