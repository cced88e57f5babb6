//! `cargo xtask reliability`: proves that `partner-api` holds up under
//! hostile input and crashes, on SQLite and on PostgreSQL.
//!
//! Each part runs against servers and databases of its own and prints one
//! figure per line, `<part> <db>: tried N, held N, failed N`, with a note
//! per failure; the task fails when any figure has a failure. The parts,
//! one module each:
//!
//! 1. [`fuzz`]: schemathesis against the served OpenAPI document;
//! 2. [`crash`]: SIGKILLs during concurrent writes, then the invariants;
//! 3. [`idempotency`]: 200 concurrent identical idempotent POSTs;
//! 4. [`rate_limits`]: per-key limits across two processes (PostgreSQL);
//! 5. [`outage`]: a PostgreSQL cluster stopped and restarted under load;
//! 6. [`hostile`]: the hostile-input table;
//! 7. [`leaks`]: logs and database dumps scanned for secrets.
//!
//! `docs/reliability.md` describes each part and records a full run.

mod crash;
pub(crate) mod fixtures;
mod fuzz;
pub(crate) mod harness;
mod hostile;
pub(crate) mod http;
mod idempotency;
mod leaks;
mod outage;
mod rate_limits;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context as _, bail};
use clap::ValueEnum;

use crate::reliability::harness::{Backend, Ctx};

/// What a run of `reliability` or `bench` drives: which databases, which
/// binary, which PostgreSQL server.
#[derive(Debug, clap::Args)]
pub(crate) struct Target {
    /// Which databases to run against.
    #[arg(long, value_enum, default_value = "both")]
    pub db: DbChoice,
    /// The `partner-api` binary (default: `target/release/partner-api`,
    /// built first).
    #[arg(long, value_name = "PATH")]
    pub bin: Option<PathBuf>,
    /// The PostgreSQL server, as a URL of an existing database; a run
    /// creates and drops databases of its own there.
    #[arg(
        long,
        value_name = "URL",
        env = "PARTNER_API_TEST_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    pub postgres_url: String,
}

/// Arguments of `cargo xtask reliability`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The databases, the binary and the PostgreSQL server.
    #[command(flatten)]
    target: Target,
    /// Reduced counts for CI (2,000 fuzzed requests and 4 kills per
    /// database).
    #[arg(long)]
    ci: bool,
    /// Fuzzed requests per database (default 15,000; 2,000 with `--ci`).
    #[arg(long, value_name = "N")]
    fuzz_requests: Option<u64>,
    /// SIGKILLs per database (default 10; 4 with `--ci`).
    #[arg(long, value_name = "N")]
    kills: Option<u64>,
    /// Run only these parts (comma-separated; default: all).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PART")]
    part: Vec<Part>,
}

impl Args {
    /// The CI subset on both databases against the debug binary.
    pub(crate) fn ci_subset(bin: PathBuf, postgres_url: String) -> Self {
        Self {
            target: Target {
                db: DbChoice::Both,
                bin: Some(bin),
                postgres_url,
            },
            ci: true,
            fuzz_requests: None,
            kills: None,
            part: Vec::new(),
        }
    }
}

/// `--db` (of this task and of `bench`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DbChoice {
    /// SQLite only.
    Sqlite,
    /// PostgreSQL only.
    Postgres,
    /// Both.
    Both,
}

impl DbChoice {
    /// The backends chosen, SQLite first.
    pub(crate) const fn backends(self) -> &'static [Backend] {
        match self {
            Self::Sqlite => &[Backend::Sqlite],
            Self::Postgres => &[Backend::Postgres],
            Self::Both => &[Backend::Sqlite, Backend::Postgres],
        }
    }
}

/// The parts, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Part {
    /// Fuzzing from the OpenAPI document.
    Fuzz,
    /// SIGKILLs under concurrent writes.
    Crash,
    /// Concurrent identical idempotent requests.
    Idempotency,
    /// Rate limits across two processes.
    RateLimits,
    /// A PostgreSQL outage under load.
    Outage,
    /// The hostile-input table.
    Hostile,
    /// Logs and dumps scanned for secrets.
    Leaks,
}

const ALL_PARTS: [Part; 7] = [
    Part::Fuzz,
    Part::Crash,
    Part::Idempotency,
    Part::RateLimits,
    Part::Outage,
    Part::Hostile,
    Part::Leaks,
];

/// One part's figure on one database.
#[derive(Debug, Default)]
pub(crate) struct Figure {
    /// Checks (requests, kills, rows, files) made.
    pub tried: u64,
    /// Those that held.
    pub held: u64,
    /// Those that failed.
    pub failed: u64,
    /// One line per failure, and measurements worth reading.
    pub notes: Vec<String>,
}

impl Figure {
    /// Counts one check.
    pub(crate) fn check(&mut self, held: bool, note: impl FnOnce() -> String) {
        self.tried = self.tried.saturating_add(1);
        if held {
            self.held = self.held.saturating_add(1);
        } else {
            self.failed = self.failed.saturating_add(1);
            self.notes.push(note());
        }
    }

    /// Adds a note that is not a failure.
    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }
}

/// How many notes a figure prints before summarising the rest.
const MAX_NOTES: usize = 40;

/// Runs the suite from the workspace root.
pub(crate) fn run(root: &std::path::Path, args: &Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let bin = match &args.target.bin {
        Some(bin) => root.join(bin),
        None => build_release(root)?,
    };
    if !bin.is_file() {
        bail!("no partner-api binary at {}", bin.display());
    }
    let backends = args.target.db.backends().to_vec();
    let parts: Vec<Part> = if args.part.is_empty() {
        ALL_PARTS.to_vec()
    } else {
        ALL_PARTS
            .into_iter()
            .filter(|p| args.part.contains(p))
            .collect()
    };
    let ctx = Ctx::new(root, &bin, &args.target.postgres_url, args.ci)?;
    let fuzz_requests = args
        .fuzz_requests
        .unwrap_or(if args.ci { 2_000 } else { 15_000 });
    let kills = args.kills.unwrap_or(if args.ci { 4 } else { 10 });
    println!(
        "reliability: {} against {} ({}), scratch {}",
        if args.ci { "CI subset" } else { "full suite" },
        bin.display(),
        backends
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" and "),
        ctx.dir.display()
    );
    let mut failures = 0u64;
    let mut report = String::new();
    for backend in backends {
        for part in &parts {
            let part_started = Instant::now();
            let outcome = match part {
                Part::Fuzz => fuzz::run(&ctx, backend, fuzz_requests).map(Some),
                Part::Crash => crash::run(&ctx, backend, kills).map(Some),
                Part::Idempotency => idempotency::run(&ctx, backend).map(Some),
                Part::RateLimits => rate_limits::run(&ctx, backend),
                Part::Outage => outage::run(&ctx, backend),
                Part::Hostile => hostile::run(&ctx, backend).map(Some),
                Part::Leaks => leaks::run(&ctx, backend).map(Some),
            };
            let name = part_name(*part);
            match outcome {
                Ok(Some(mut figure)) => {
                    let line = format!(
                        "{name} {backend}: tried {}, held {}, failed {}",
                        figure.tried, figure.held, figure.failed
                    );
                    let took = format!("took {:.0} s", part_started.elapsed().as_secs_f64());
                    figure.notes.insert(0, took);
                    println!("{line}");
                    report.push_str(&line);
                    report.push('\n');
                    for note in &figure.notes {
                        report.push_str(&format!("  - {note}\n"));
                    }
                    for note in figure.notes.iter().take(MAX_NOTES) {
                        println!("  - {note}");
                    }
                    if figure.notes.len() > MAX_NOTES {
                        println!(
                            "  - … and {} more (all in {})",
                            figure.notes.len() - MAX_NOTES,
                            ctx.dir.join("report.txt").display()
                        );
                    }
                    failures = failures.saturating_add(figure.failed);
                }
                Ok(None) => println!("{name} {backend}: not applicable (PostgreSQL only)"),
                Err(e) => {
                    let text = format!(
                        "{name} {backend}: tried 0, held 0, failed 1\n  - could not run: {e:#}\n"
                    );
                    print!("{text}");
                    report.push_str(&text);
                    failures = failures.saturating_add(1);
                }
            }
        }
    }
    let report_path = ctx.dir.join("report.txt");
    std::fs::write(&report_path, report)
        .with_context(|| format!("cannot write {}", report_path.display()))?;
    drop(ctx);
    println!(
        "reliability: {failures} failure(s) in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    if failures > 0 {
        bail!("{failures} reliability check(s) failed");
    }
    Ok(())
}

/// The name a part prints under.
const fn part_name(part: Part) -> &'static str {
    match part {
        Part::Fuzz => "fuzz",
        Part::Crash => "crash",
        Part::Idempotency => "idempotency",
        Part::RateLimits => "rate-limits",
        Part::Outage => "outage",
        Part::Hostile => "hostile",
        Part::Leaks => "leaks",
    }
}

/// Builds the release binary and returns its path.
fn build_release(root: &std::path::Path) -> anyhow::Result<PathBuf> {
    crate::bench::cargo_release(root, &["--bin", "partner-api"])?;
    Ok(root.join("target").join("release").join("partner-api"))
}
