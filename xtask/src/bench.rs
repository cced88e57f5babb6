//! `cargo xtask bench http`: the request path under load, each figure
//! next to its floor measured in the same run (ratios, never a timed
//! assertion). The release server runs on SQLite, then on PostgreSQL;
//! `wrk` (Debian's package) drives it and a bare actix-web handler
//! (`crates/server/examples/bare_handler.rs`) in interleaved rounds.
//!
//! Rows (targets of the performance work, printed as met or not):
//! - `GET /v1/ping` ÷ the bare handler;
//! - `GET /v1/groups/{id}` ÷ the bare handler;
//! - `POST /v1/groups` with 100,000 groups stored ÷ with 1,000 (the table
//!   is filled with SQL between the two);
//! - an idempotent `POST /v1/groups` (a fresh `Idempotency-Key` each), 32
//!   connections: its p99;
//! - PostgreSQL transactions per ping and per group read
//!   (`pg_stat_database`, counted over a one-connection run);
//! - `PUT /v1/groups/{id}/census` of 10,000 members ÷ a raw bulk insert of
//!   the same rows (`census`).
//!
//! `cargo xtask bench webhooks` measures deliveries end to end and the
//! outbox's drain (`webhooks`).

mod census;
mod http;
mod shared;
mod webhooks;
mod wrk;

pub(crate) use shared::{Bare, Setup, Transactions, approx, prepare, serve, sql};

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, bail};
use clap::Subcommand;

use crate::tidy;

/// Arguments of `cargo xtask bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to measure.
    #[command(subcommand)]
    what: What,
}

/// The benchmarks.
#[derive(Debug, Subcommand)]
enum What {
    /// The request path against a bare handler, on both databases.
    Http(http::Args),
    /// Webhook deliveries end to end and the outbox's drain, on both
    /// databases.
    Webhooks(webhooks::Args),
}

/// Runs a benchmark from the workspace root.
pub(crate) fn run(root: &std::path::Path, args: &Args) -> anyhow::Result<()> {
    match &args.what {
        What::Http(a) => http::run(root, a),
        What::Webhooks(a) => webhooks::run(root, a),
    }
}

/// The release server and the bare handler, built unless given.
pub(crate) fn binaries(
    root: &std::path::Path,
    bin: Option<&PathBuf>,
    bare: Option<&PathBuf>,
) -> anyhow::Result<(PathBuf, PathBuf)> {
    if bin.is_none() || bare.is_none() {
        cargo_release(root, &["--bin", "partner-api", "--example", "bare_handler"])?;
    }
    let release = root.join("target").join("release");
    // Relative paths are the caller's: the servers run in a scratch
    // directory.
    let absolute = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
    Ok((
        bin.map_or_else(|| release.join("partner-api"), absolute),
        bare.map_or_else(|| release.join("examples").join("bare_handler"), absolute),
    ))
}

/// `cargo build --release -p server TARGETS…`.
pub(crate) fn cargo_release(root: &std::path::Path, targets: &[&str]) -> anyhow::Result<()> {
    let mut args = vec!["build", "--release", "-p", "server"];
    args.extend_from_slice(targets);
    println!("$ cargo {}", args.join(" "));
    let status = Command::new(tidy::cargo())
        .args(&args)
        .current_dir(root)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}
