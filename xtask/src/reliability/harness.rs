//! What every part shares: the run's context (binary, scratch directory,
//! the values that must never leak), fresh databases, and `partner-api
//! serve` processes that can be killed and restarted on the same port.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};

use crate::reliability::http::Client;

/// How long a server may take to migrate and listen.
const START_TIMEOUT: Duration = Duration::from_secs(90);

/// The body read timeout the suite configures, in seconds (the server's
/// default is 60 s).
pub(crate) const BODY_TIMEOUT_SECS: u64 = 5;

/// The setting (`body_timeout_secs`) that carries [`BODY_TIMEOUT_SECS`].
pub(crate) const BODY_TIMEOUT_ENV: &str = "PARTNER_API_BODY_TIMEOUT_SECS";

/// A database backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// An SQLite file.
    Sqlite,
    /// A database on the shared PostgreSQL server.
    Postgres,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        })
    }
}

/// What a watched value is, for the leak scan's report (never the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An API key.
    ApiKey,
    /// A webhook signing secret.
    WebhookSecret,
    /// A password or key from the configuration.
    Password,
    /// A bank account or routing number.
    BankAccount,
    /// Personal data sent in a census (name, email, date of birth).
    Personal,
}

impl Kind {
    /// Whether a database dump must not hold it either (census data is
    /// stored by design).
    pub(crate) const fn secret_at_rest(self) -> bool {
        !matches!(self, Self::Personal)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ApiKey => "an API key",
            Self::WebhookSecret => "a webhook secret",
            Self::Password => "a password",
            Self::BankAccount => "a bank account number",
            Self::Personal => "personal data",
        })
    }
}

/// A small xorshift generator: random enough for kill moments and names.
#[derive(Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// Seeded from the clock and the process id.
    pub(crate) fn from_time() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let seed = u64::try_from(nanos % u128::from(u64::MAX)).unwrap_or(1)
            ^ u64::from(std::process::id()).rotate_left(32);
        Self(seed | 1)
    }

    /// The next value.
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `lo..hi` (`lo` when the range is empty).
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo.saturating_add(self.next() % (hi - lo))
    }

    /// `n` random bytes as lowercase hex.
    pub(crate) fn hex(&mut self, n: usize) -> String {
        let bytes: Vec<u8> = (0..n)
            .map(|_| self.next().to_le_bytes().first().copied().unwrap_or(0))
            .collect();
        hex::encode(bytes)
    }
}

/// The run: where things go and what must not leak.
pub(crate) struct Ctx {
    /// The workspace root.
    pub root: PathBuf,
    /// The `partner-api` binary.
    pub bin: PathBuf,
    /// This run's scratch directory.
    pub dir: PathBuf,
    /// The PostgreSQL server's admin URL (`postgres://user@host:port/db`).
    pub postgres_admin: String,
    /// Reduced counts for CI.
    pub ci: bool,
    /// The sealing key every server of the run uses (watched).
    pub sealing_key: String,
    /// The password put into PostgreSQL URLs (trust auth ignores it).
    pub db_password: String,
    state: Mutex<Ledger>,
}

/// What the run has made and seen.
#[derive(Default)]
struct Ledger {
    rng: Option<Rng>,
    logs: Vec<(Backend, PathBuf)>,
    dbs: Vec<Db>,
    watched: Vec<(Kind, String)>,
}

impl Ctx {
    /// A run in `root/target/reliability/run-<id>`.
    pub(crate) fn new(
        root: &Path,
        bin: &Path,
        postgres_admin: &str,
        ci: bool,
    ) -> anyhow::Result<Self> {
        let mut rng = Rng::from_time();
        let dir = root
            .join("target")
            .join("reliability")
            .join(format!("run-{}", rng.hex(4)));
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let sealing_key = rng.hex(32);
        let db_password = format!("pw{}", rng.hex(12));
        let ctx = Self {
            root: root.to_owned(),
            bin: bin.to_owned(),
            dir,
            postgres_admin: postgres_admin.to_owned(),
            ci,
            sealing_key: sealing_key.clone(),
            db_password: db_password.clone(),
            state: Mutex::new(Ledger {
                rng: Some(rng),
                ..Ledger::default()
            }),
        };
        ctx.watch(Kind::Password, &sealing_key);
        ctx.watch(Kind::Password, &db_password);
        Ok(ctx)
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `n` random bytes as hex.
    pub(crate) fn hex(&self, n: usize) -> String {
        self.ledger().rng.get_or_insert_with(Rng::from_time).hex(n)
    }

    /// A random value in `lo..hi`.
    pub(crate) fn range(&self, lo: u64, hi: u64) -> u64 {
        self.ledger()
            .rng
            .get_or_insert_with(Rng::from_time)
            .range(lo, hi)
    }

    /// Remembers a value that must not appear in logs (nor, unless it is
    /// personal data, in database dumps).
    pub(crate) fn watch(&self, kind: Kind, value: &str) {
        if !value.is_empty() {
            self.ledger().watched.push((kind, value.to_owned()));
        }
    }

    /// Every watched value.
    pub(crate) fn watched(&self) -> Vec<(Kind, String)> {
        self.ledger().watched.clone()
    }

    /// Every server log of `backend`.
    pub(crate) fn logs(&self, backend: Backend) -> Vec<PathBuf> {
        self.ledger()
            .logs
            .iter()
            .filter(|(b, _)| *b == backend)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// Every database of `backend` made so far.
    pub(crate) fn dbs(&self, backend: Backend) -> Vec<Db> {
        self.ledger()
            .dbs
            .iter()
            .filter(|d| d.backend == backend)
            .cloned()
            .collect()
    }

    /// A fresh, empty database for one part.
    pub(crate) fn fresh_db(&self, backend: Backend, label: &str) -> anyhow::Result<Db> {
        let db = match backend {
            Backend::Sqlite => {
                let path = self.dir.join(format!("{label}.sqlite"));
                Db {
                    backend,
                    url: format!("sqlite://{}", path.display()),
                    name: path.display().to_string(),
                }
            }
            Backend::Postgres => {
                let name = format!("reliability_{}_{}", self.hex(4), label.replace('-', "_"));
                psql(&self.postgres_admin, &format!("CREATE DATABASE {name}"))?;
                Db {
                    backend,
                    url: with_password(
                        &with_database(&self.postgres_admin, &name),
                        &self.db_password,
                    ),
                    name,
                }
            }
        };
        self.ledger().dbs.push(db.clone());
        Ok(db)
    }

    /// Drops every PostgreSQL database the run made.
    fn drop_databases(&self) {
        let dbs = std::mem::take(&mut self.ledger().dbs);
        for db in dbs.iter().filter(|d| d.backend == Backend::Postgres) {
            let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", db.name);
            if let Err(e) = psql(&self.postgres_admin, &sql) {
                eprintln!("warning: cannot drop database {}: {e:#}", db.name);
            }
        }
    }

    /// A new log file for a server of `backend`.
    fn log_file(&self, backend: Backend, label: &str) -> PathBuf {
        let path = self.dir.join(format!("{backend}-{label}.log"));
        self.ledger().logs.push((backend, path.clone()));
        path
    }

    /// The settings every server and operator command of the run gets:
    /// limits raised so that only the rate-limit part meets a 429.
    pub(crate) fn base_env(&self) -> Vec<(String, String)> {
        let card = self.root.join("rate-cards").join("2026.toml");
        [
            (
                "PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE",
                "1000000".to_owned(),
            ),
            (
                "PARTNER_API_RATE_LIMITS__CENSUS_WRITES_PER_MINUTE",
                "1000000".to_owned(),
            ),
            (
                "PARTNER_API_RATE_LIMITS__QUOTE_CREATES_PER_HOUR",
                "1000000".to_owned(),
            ),
            (
                "PARTNER_API_RATE_LIMITS__FAILED_AUTH_PER_MINUTE",
                "1000000".to_owned(),
            ),
            ("PARTNER_API_PRICING__RATE_CARD", card.display().to_string()),
            ("PARTNER_API_SECRETS__SEALING_KEY", self.sealing_key.clone()),
            ("PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE", "0.05".to_owned()),
            (BODY_TIMEOUT_ENV, BODY_TIMEOUT_SECS.to_string()),
            ("PARTNER_API_LOG", "info".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// A command running the binary over `db` with the run's settings.
    fn command(&self, db: &Db, env: &[(String, String)]) -> Command {
        let mut cmd = Command::new(&self.bin);
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("PARTNER_API_") {
                cmd.env_remove(k);
            }
        }
        cmd.envs(self.base_env())
            .envs(env.iter().cloned())
            .arg("--database-url")
            .arg(&db.url)
            .current_dir(&self.dir);
        cmd
    }

    /// Creates a partner of `kind` (`broker` or `hr_platform`) with the
    /// operator commands and returns a fresh test key for it.
    pub(crate) fn partner(&self, db: &Db, kind: &str, name: &str) -> anyhow::Result<String> {
        let id = self.operator(db, &["partner", "create", "--name", name, "--kind", kind])?;
        let key = self.operator(db, &["key", "create", "--partner", &id, "--mode", "test"])?;
        self.watch(Kind::ApiKey, &key);
        Ok(key)
    }

    /// Runs an operator command and returns the first line it printed.
    fn operator(&self, db: &Db, args: &[&str]) -> anyhow::Result<String> {
        let out = self
            .command(db, &[])
            .args(args)
            .output()
            .with_context(|| format!("cannot run {}", self.bin.display()))?;
        if !out.status.success() {
            bail!(
                "`partner-api {}` failed: {}",
                args.first().copied().unwrap_or_default(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.lines().next().unwrap_or_default().trim().to_owned())
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        self.drop_databases();
    }
}

/// One database.
#[derive(Debug, Clone)]
pub(crate) struct Db {
    /// Its backend.
    pub backend: Backend,
    /// The URL servers get.
    pub url: String,
    /// The PostgreSQL database name, or the SQLite file path.
    pub name: String,
}

/// `url` with its database (path) replaced by `name`.
pub(crate) fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, ""), |(b, q)| (b, q));
    let scheme_end = base.find("://").map_or(0, |i| i.saturating_add(3));
    let authority_end = base
        .get(scheme_end..)
        .and_then(|rest| rest.find('/'))
        .map_or(base.len(), |i| scheme_end.saturating_add(i));
    let head = base.get(..authority_end).unwrap_or(base);
    if query.is_empty() {
        format!("{head}/{name}")
    } else {
        format!("{head}/{name}?{query}")
    }
}

/// `url` with `password` for its user, when it names a user without one.
fn with_password(url: &str, password: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((user, host)) if !user.contains(':') => format!("{scheme}://{user}:{password}@{host}"),
        _ => url.to_owned(),
    }
}

/// Runs one SQL statement with `psql` against `url`.
pub(crate) fn psql(url: &str, sql: &str) -> anyhow::Result<String> {
    let out = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            sql,
        ])
        .output()
        .context("cannot run psql (is the PostgreSQL client installed?)")?;
    if !out.status.success() {
        bail!(
            "psql failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A free loopback port (bound, then released).
pub(crate) fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(listener.local_addr()?.port())
}

/// A `partner-api serve` process that can be killed and restarted on the
/// same address.
pub(crate) struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    backend: Backend,
    command: Box<dyn Fn() -> Command + Send + Sync>,
    child: Option<Child>,
    log: PathBuf,
}

impl Server {
    /// Starts `serve` over `db` with extra settings `env`, logging to a
    /// file named after `label`.
    pub(crate) fn start(
        ctx: &Ctx,
        db: &Db,
        label: &str,
        env: &[(String, String)],
    ) -> anyhow::Result<Self> {
        let port = free_port()?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let log = ctx.log_file(db.backend, label);
        let base = ctx.command(db, env);
        let program = base.get_program().to_owned();
        let args: Vec<_> = base.get_args().map(ToOwned::to_owned).collect();
        let envs: Vec<_> = base
            .get_envs()
            .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
            .collect();
        let cwd = ctx.dir.clone();
        let command = move || {
            let mut cmd = Command::new(&program);
            for (k, v) in &envs {
                match v {
                    Some(v) => cmd.env(k, v),
                    None => cmd.env_remove(k),
                };
            }
            cmd.args(&args)
                .args(["serve", "--listen", &addr.to_string()])
                .current_dir(&cwd);
            cmd
        };
        let mut server = Self {
            addr,
            backend: db.backend,
            command: Box::new(command),
            child: None,
            log,
        };
        server.restart()?;
        Ok(server)
    }

    /// A client of this server with `key`.
    pub(crate) fn client(&self, key: &str) -> Client {
        Client::new(self.addr, key)
    }

    /// Whether the process is running.
    pub(crate) fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// SIGKILL, then reap.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the process (again) and waits until it listens.
    pub(crate) fn restart(&mut self) -> anyhow::Result<()> {
        self.kill();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .with_context(|| format!("cannot open {}", self.log.display()))?;
        let mut child = (self.command)()
            .stdout(Stdio::piped())
            .stderr(Stdio::from(file.try_clone()?))
            .spawn()
            .context("cannot start partner-api serve")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || copy_stdout(stdout, file, &tx));
        self.child = Some(child);
        let started = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => return Ok(()),
                Err(mpsc::RecvTimeoutError::Timeout) if started.elapsed() < START_TIMEOUT => {
                    if !self.is_running() {
                        bail!(
                            "partner-api serve ({}) exited before listening; see {}",
                            self.backend,
                            self.log.display()
                        );
                    }
                }
                Err(_) => {
                    self.kill();
                    bail!(
                        "partner-api serve ({}) did not listen within {} s; see {}",
                        self.backend,
                        START_TIMEOUT.as_secs(),
                        self.log.display()
                    );
                }
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Copies the server's stdout into its log, signalling once it listens.
fn copy_stdout(stdout: std::process::ChildStdout, mut log: File, ready: &mpsc::Sender<()>) {
    let mut lines = BufReader::new(stdout).lines();
    while let Some(Ok(line)) = lines.next() {
        let _ = writeln!(log, "{line}");
        if line.starts_with("Listening on http://") {
            let _ = ready.send(());
        }
    }
}

/// Polls `probe` every 100 ms until it yields a value or `limit` passes.
pub(crate) fn wait_for<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let started = Instant::now();
    loop {
        if let Some(v) = probe() {
            return Some(v);
        }
        if started.elapsed() >= limit {
            return None;
        }
        thread::sleep(Duration::from_millis(100));
    }
}
