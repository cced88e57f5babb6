//! What the benchmarks share: the bare handler (the floor of `bench
//! http`, the receiver of `bench webhooks`), SQL against the run's
//! database, and PostgreSQL's transaction counts.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::reliability::Target;
use crate::reliability::harness::{Backend, Ctx, Db, Server, psql, wait_for};

/// What every benchmark drives.
#[derive(Debug, clap::Args)]
pub(crate) struct Setup {
    /// The databases, the server binary and the PostgreSQL server.
    #[command(flatten)]
    pub target: Target,
    /// The bare handler, the floor and the webhook receiver (default:
    /// `target/release/examples/bare_handler`, built first).
    #[arg(long, value_name = "PATH")]
    pub bare: Option<std::path::PathBuf>,
}

/// The run's context and the bare handler, running; the binaries are
/// built unless given.
pub(crate) fn prepare(root: &Path, setup: &Setup) -> anyhow::Result<(Ctx, Bare)> {
    let (bin, bare) = super::binaries(root, setup.target.bin.as_ref(), setup.bare.as_ref())?;
    let ctx = Ctx::new(root, &bin, &setup.target.postgres_url, false)?;
    Ok((ctx, Bare::start(&bare)?))
}

/// A fresh database of `backend` with a broker's test key, and the server
/// on it (warnings only, limits out of the way, and the `extra` settings):
/// the database, the key, the server.
pub(crate) fn serve(
    ctx: &Ctx,
    backend: Backend,
    label: &str,
    extra: &[(&str, &str)],
) -> anyhow::Result<(Db, String, Server)> {
    let db = ctx.fresh_db(backend, label)?;
    let key = ctx.partner(&db, "broker", "Bench Brokers")?;
    let env: Vec<(String, String)> = [
        ("PARTNER_API_LOG", "warn"),
        ("PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE", "1000000000"),
    ]
    .iter()
    .chain(extra)
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    let server = Server::start(ctx, &db, label, &env)?;
    Ok((db, key, server))
}

/// Runs one SQL text against `db` (`sqlite3` or `psql`).
pub(crate) fn sql(db: &Db, statement: &str) -> anyhow::Result<String> {
    match db.backend {
        Backend::Postgres => psql(&db.url, statement),
        Backend::Sqlite => {
            let out = Command::new("sqlite3")
                .args(["-cmd", ".timeout 30000"])
                .arg(&db.name)
                .arg(statement)
                .output()
                .context("cannot run sqlite3 (apt-get install sqlite3)")?;
            if !out.status.success() {
                bail!(
                    "sqlite3 failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        }
    }
}

/// PostgreSQL transactions (commits and rollbacks of the database) over a
/// span of work. A server backend publishes its counts when it goes idle,
/// at most once a second, and at the latest 10 s after (PostgreSQL's
/// `PGSTAT_IDLE_INTERVAL`), so each reading waits 11 s; the server's own
/// background work is measured over the same span without load and taken
/// off.
pub(crate) struct Transactions<'a> {
    db: &'a Db,
    /// Background transactions per second, without load.
    idle_rate: f64,
}

/// A reading where a span of work starts.
pub(crate) struct Start {
    count: f64,
    at: Instant,
}

/// How long a count needs to settle.
const SETTLE: Duration = Duration::from_secs(11);

impl<'a> Transactions<'a> {
    /// Measures the background rate of `db` (22 s).
    pub(crate) fn idle(db: &'a Db) -> anyhow::Result<Self> {
        let mut counter = Self { db, idle_rate: 0.0 };
        std::thread::sleep(SETTLE);
        let start = counter.start()?;
        std::thread::sleep(SETTLE);
        let end = counter.count()?;
        counter.idle_rate = (end - start.count) / start.at.elapsed().as_secs_f64();
        Ok(counter)
    }

    /// The background transactions per second without load.
    pub(crate) fn idle_rate(&self) -> f64 {
        self.idle_rate
    }

    /// A reading now (settled by the caller or by [`Transactions::idle`]).
    pub(crate) fn start(&self) -> anyhow::Result<Start> {
        Ok(Start {
            count: self.count()?,
            at: Instant::now(),
        })
    }

    /// The transactions since `start`, less the background's share, once
    /// the counts settled.
    pub(crate) fn since(&self, start: Start) -> anyhow::Result<f64> {
        std::thread::sleep(SETTLE);
        let end = self.count()?;
        let background = self.idle_rate * start.at.elapsed().as_secs_f64();
        Ok(end - start.count - background)
    }

    fn count(&self) -> anyhow::Result<f64> {
        let text = psql(
            &self.db.url,
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()",
        )?;
        // The reading's own transaction is counted in the next one.
        Ok(text.trim().parse::<f64>()? + 1.0)
    }
}

/// A count as a float (exact below 2^53).
pub(crate) fn approx(n: u64) -> f64 {
    u32::try_from(n).map_or(f64::MAX, f64::from)
}

/// The bare handler, running.
pub(crate) struct Bare {
    child: Child,
    pub(crate) addr: SocketAddr,
}

impl Bare {
    pub(crate) fn start(path: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(path)
            .arg("127.0.0.1:0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot run {}", path.display()))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let addr = wait_for(Duration::from_secs(10), || {
            lines
                .next()?
                .ok()?
                .strip_prefix("Listening on http://")?
                .parse()
                .ok()
        })
        .context("the bare handler did not say where it listens")?;
        Ok(Self { child, addr })
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
