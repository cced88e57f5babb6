//! Workspace automation, following the `cargo xtask` convention.
//!
//! Run it through the alias in `.cargo/config.toml`:
//!
//! - `cargo xtask rate-card [--data DIR] [--out FILE]` regenerates the rate
//!   card from the public reference data;
//! - `cargo xtask tidy` checks doc headers, trailing whitespace and the
//!   dependency direction between the crates;
//! - `cargo xtask ci` runs formatting, lints, tests, tidy and `cargo deny`;
//! - `cargo xtask reliability [--ci] [--db sqlite|postgres|both]` runs the
//!   reliability suite against the `partner-api` binary.

mod bench;
mod ci;
mod rate_card;
mod reliability;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

/// Command line of `cargo xtask`.
#[derive(Debug, Parser)]
#[command(
    name = "xtask",
    about = "Workspace automation for the partner pricing API"
)]
struct Cli {
    /// The task to run.
    #[command(subcommand)]
    command: Command,
}

/// The tasks `cargo xtask` knows.
#[derive(Debug, Subcommand)]
enum Command {
    /// Regenerate the rate card from the public reference data.
    RateCard {
        /// Directory holding the public data files (relative paths are
        /// resolved against the workspace root).
        #[arg(long, default_value = "../shared/data")]
        data: PathBuf,
        /// Rate card to write (relative paths are resolved against the
        /// workspace root).
        #[arg(long, default_value = "rate-cards/2026.toml")]
        out: PathBuf,
    },
    /// Check doc headers, trailing whitespace and crate dependency direction.
    Tidy,
    /// Run every CI step in order, stopping at the first failure.
    Ci,
    /// Prove the server holds up under hostile input and crashes.
    Reliability(reliability::Args),
    /// Measure the running server against its floors.
    Bench(bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs one task from the workspace root.
fn run(command: Command) -> anyhow::Result<()> {
    let root = workspace_root()?;
    match command {
        Command::RateCard { data, out } => {
            let data = root.join(data);
            let out = root.join(out);
            let summary = rate_card::write(&data, &out).with_context(|| {
                format!("cannot generate the rate card from {}", data.display())
            })?;
            println!("wrote {} ({} bytes)", out.display(), summary.bytes);
            println!("{}", summary.coverage);
            for note in &summary.notes {
                println!("note: {note}");
            }
            Ok(())
        }
        Command::Tidy => {
            tidy::check(&root)?;
            println!("tidy: ok");
            Ok(())
        }
        Command::Ci => ci::run(&root),
        Command::Reliability(args) => reliability::run(&root, &args),
        Command::Bench(args) => bench::run(&root, &args),
    }
}

/// The workspace root: the parent of this crate's manifest directory.
///
/// It does not depend on the current directory, so the tasks behave the same
/// wherever `cargo xtask` is started from.
pub(crate) fn workspace_root() -> anyhow::Result<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .context("the xtask manifest directory has no parent")
}
