//! Part 5: a PostgreSQL cluster of the suite's own (on a free port) is
//! stopped in the middle of a load and started again. During the outage
//! every answer is either a success or 503 `not_configured` in the error
//! envelope (no other 5xx, no dropped connection); afterwards the same
//! server process recovers on its own, every acknowledged group is there,
//! and every creation answered 503 succeeds when retried with its
//! `Idempotency-Key`, once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::reliability::Figure;
use crate::reliability::fixtures::{group_body, list_all};
use crate::reliability::harness::{Backend, Ctx, Db, Server, free_port, psql, wait_for};
use crate::reliability::http::Client;

/// How long the database stays down.
const OUTAGE: Duration = Duration::from_secs(4);

/// How long a retried key may stay in flight.
const RETRY_BOUND: Duration = Duration::from_secs(10);

/// How long the server may take to recover once the database is back.
const RECOVERY_BOUND: Duration = Duration::from_secs(30);

/// Load phases.
const BEFORE: u8 = 0;
const DURING: u8 = 1;
const AFTER: u8 = 2;

/// Runs the part; `None` on SQLite.
pub(crate) fn run(ctx: &Ctx, backend: Backend) -> anyhow::Result<Option<Figure>> {
    if backend != Backend::Postgres {
        return Ok(None);
    }
    let cluster = Cluster::create(ctx)?;
    cluster.start()?;
    let admin = format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port);
    psql(&admin, "CREATE DATABASE reliability")?;
    let db = Db {
        backend,
        url: format!(
            "postgres://postgres:{}@127.0.0.1:{}/reliability",
            ctx.db_password, cluster.port
        ),
        name: "reliability".to_owned(),
    };
    let key = ctx.partner(&db, "broker", "Reliability Outage Broker")?;
    let mut server = Server::start(ctx, &db, "outage", &[])?;
    let client = server.client(&key);

    let phase = AtomicU8::new(BEFORE);
    let stop = AtomicBool::new(false);
    let log: Mutex<Vec<Sent>> = Mutex::new(Vec::new());
    let mut recovery = None;
    thread::scope(|s| -> anyhow::Result<()> {
        for _ in 0..3 {
            s.spawn(|| load(ctx, &client, &phase, &stop, &log));
        }
        thread::sleep(Duration::from_secs(2));
        phase.store(DURING, Ordering::SeqCst);
        let stopped = cluster.stop();
        thread::sleep(OUTAGE);
        let started = stopped.and_then(|()| cluster.start());
        let back = Instant::now();
        phase.store(AFTER, Ordering::SeqCst);
        if started.is_ok() {
            recovery = wait_for(RECOVERY_BOUND, || {
                client
                    .json("POST", "/v1/groups", &group_body(ctx), &[])
                    .ok()
                    .filter(|r| r.status == 201)
                    .map(|_| back.elapsed())
            });
            thread::sleep(Duration::from_secs(2));
        }
        stop.store(true, Ordering::SeqCst);
        started
    })?;

    let mut figure = Figure::default();
    let sent = std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner));
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for s in &sent {
        let label = match &s.status {
            Ok(code) => format!("{code}"),
            Err(_) => "no answer".to_owned(),
        };
        *tally.entry(label).or_insert(0) += 1;
        let ok = match &s.status {
            Ok(code) if (200..300).contains(code) => true,
            Ok(503) => s.envelope && s.code.as_deref() == Some("not_configured"),
            Ok(code) => *code < 500 && s.envelope,
            Err(_) => false,
        };
        figure.check(ok, || match &s.status {
            Ok(code) => format!(
                "{} {} answered {code} {} (envelope: {})",
                s.method,
                phase_name(s.phase),
                s.code.clone().unwrap_or_default(),
                s.envelope
            ),
            Err(e) => format!("{} {}: {e}", s.method, phase_name(s.phase)),
        });
    }
    let saw_503 = sent
        .iter()
        .any(|s| s.phase == DURING && s.status.as_ref().is_ok_and(|c| *c == 503));
    figure.check(saw_503, || {
        "no 503 during the outage: the load did not meet it".to_owned()
    });
    figure.check(recovery.is_some(), || {
        format!(
            "no successful write within {} s of the database's return",
            RECOVERY_BOUND.as_secs()
        )
    });
    figure.check(server.is_running(), || "the server process died".to_owned());

    // Acknowledged writes are there; writes answered 503 succeed once
    // when retried with their key.
    // A 409 in flight with `Retry-After` is honoured for up to 10 s.
    let mut slowest = Duration::ZERO;
    for s in sent
        .iter()
        .filter(|s| s.method == "POST" && s.status.as_ref().is_ok_and(|c| *c == 503))
    {
        let started = Instant::now();
        let r = loop {
            let r = client.json(
                "POST",
                "/v1/groups",
                &s.body,
                &[("Idempotency-Key", &s.key)],
            )?;
            if r.status != 409 || started.elapsed() > RETRY_BOUND {
                break r;
            }
            thread::sleep(Duration::from_millis(250));
        };
        slowest = slowest.max(started.elapsed());
        figure.check(r.status == 201, || {
            format!(
                "the retry of a creation answered 503 got {} after {:.1} s",
                r.brief(),
                started.elapsed().as_secs_f64()
            )
        });
    }
    figure.note(format!(
        "slowest retry of a creation answered 503: {:.1} s",
        slowest.as_secs_f64()
    ));
    let listed = list_all(&client, "/v1/groups", "groups", "")?;
    let mut per_domain: BTreeMap<&str, usize> = BTreeMap::new();
    for g in &listed {
        if let Some(d) = g.get("domain").and_then(Value::as_str) {
            *per_domain.entry(d).or_insert(0) += 1;
        }
    }
    let creations = sent
        .iter()
        .filter(|s| s.method == "POST" && s.status.as_ref().is_ok_and(|c| *c == 201 || *c == 503));
    let wrong = creations
        .filter(|s| per_domain.get(s.domain.as_str()).copied().unwrap_or(0) != 1)
        .count();
    figure.check(wrong == 0, || {
        format!("{wrong} acknowledged or retried creation(s) not found exactly once")
    });
    figure.note(format!(
        "answers by status: {tally:?}; recovered {} after the database came back",
        recovery.map_or_else(
            || "never".to_owned(),
            |d| format!("{:.1} s", d.as_secs_f64())
        )
    ));
    server.kill();
    Ok(Some(figure))
}

const fn phase_name(phase: u8) -> &'static str {
    match phase {
        BEFORE => "before the outage",
        DURING => "during the outage",
        _ => "after the outage",
    }
}

/// One request of the load.
struct Sent {
    phase: u8,
    method: &'static str,
    status: Result<u16, String>,
    envelope: bool,
    code: Option<String>,
    key: String,
    body: Value,
    domain: String,
}

/// Creates groups (with idempotency keys) and reads them back until told
/// to stop.
fn load(ctx: &Ctx, client: &Client, phase: &AtomicU8, stop: &AtomicBool, log: &Mutex<Vec<Sent>>) {
    let mut last_id: Option<String> = None;
    while !stop.load(Ordering::SeqCst) {
        let now = phase.load(Ordering::SeqCst);
        let key = format!("outage-{}", ctx.hex(8));
        let body = group_body(ctx);
        let domain = body
            .get("domain")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let answer = client.json("POST", "/v1/groups", &body, &[("Idempotency-Key", &key)]);
        if let Some(r) = answer.as_ref().ok().filter(|r| r.status == 201) {
            last_id = r.text("/id");
        }
        let mut sent = vec![record(now, "POST", &answer, key, body, domain)];
        if let Some(id) = &last_id {
            let read = client.get(&format!("/v1/groups/{id}"));
            sent.push(record(
                now,
                "GET",
                &read,
                String::new(),
                Value::Null,
                String::new(),
            ));
        }
        log.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(sent);
        thread::sleep(Duration::from_millis(20));
    }
}

fn record(
    phase: u8,
    method: &'static str,
    answer: &std::io::Result<crate::reliability::http::Response>,
    key: String,
    body: Value,
    domain: String,
) -> Sent {
    Sent {
        phase,
        method,
        status: answer
            .as_ref()
            .map(|r| r.status)
            .map_err(ToString::to_string),
        envelope: answer
            .as_ref()
            .is_ok_and(|r| r.status < 400 || r.is_envelope()),
        code: answer.as_ref().ok().and_then(|r| r.text("/error")),
        key,
        body,
        domain,
    }
}

/// A throwaway PostgreSQL cluster, removed on drop.
struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl Cluster {
    /// `initdb` in a fresh directory under the system temp directory.
    fn create(ctx: &Ctx) -> anyhow::Result<Self> {
        let bin = pg_bin()?;
        let dir = std::env::temp_dir().join(format!("reliability-pg-{}", ctx.hex(4)));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let as_postgres = is_root();
        if as_postgres {
            exec(
                Command::new("chown")
                    .args(["-R", "postgres:postgres"])
                    .arg(&dir),
            )?;
        }
        let cluster = Self {
            dir,
            bin,
            port: free_port()?,
            as_postgres,
        };
        let data = cluster.dir.join("data");
        exec(
            cluster
                .tool("initdb")
                .args([
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "-D",
                ])
                .arg(&data),
        )?;
        Ok(cluster)
    }

    /// A command running tool `name` as the right user.
    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(path);
            cmd
        } else {
            Command::new(path)
        }
    }

    fn start(&self) -> anyhow::Result<()> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.dir.display()
        );
        exec(
            self.tool("pg_ctl")
                .arg("-D")
                .arg(self.dir.join("data"))
                .arg("-l")
                .arg(self.dir.join("postgres.log"))
                .args(["-w", "-o", &options, "start"]),
        )
    }

    fn stop(&self) -> anyhow::Result<()> {
        exec(
            self.tool("pg_ctl")
                .arg("-D")
                .arg(self.dir.join("data"))
                .args(["-w", "-m", "immediate", "stop"]),
        )
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `cmd`, failing with its stderr.
fn exec(cmd: &mut Command) -> anyhow::Result<()> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{:?} failed: {}",
            cmd.get_program(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The newest `/usr/lib/postgresql/*/bin` holding `initdb`.
fn pg_bin() -> anyhow::Result<PathBuf> {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<PathBuf> = std::fs::read_dir(root)
        .with_context(|| format!("no PostgreSQL server tools under {}", root.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file())
        .collect();
    versions.sort();
    versions
        .pop()
        .context("no initdb under /usr/lib/postgresql/*/bin")
}

/// Whether this process runs as root (then the tools run as `postgres`).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
