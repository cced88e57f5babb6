//! `cargo xtask ci`: the CI pipeline, step by step, stopping at the first
//! failure.
//!
//! 1. `cargo fmt --all -- --check`
//! 2. `cargo clippy --workspace --all-targets -- -D warnings`
//! 3. `cargo nextest run --workspace --no-fail-fast` without the generated
//!    clients' journeys (or `cargo test --workspace --no-fail-fast` when
//!    nextest is not installed)
//! 4. `cargo test --workspace --doc`
//! 5. `cargo build --release -p server --bin partner-api`: the binary a
//!    partner runs, which the next two steps run
//! 6. the generated clients' journeys (`sdk::`) against it
//!    (`PARTNER_API_TEST_BIN=target/release/partner-api`)
//! 7. the reliability suite's CI subset against it: `cargo xtask
//!    reliability --ci --db both --bin target/release/partner-api`
//!    (PostgreSQL from `PARTNER_API_TEST_POSTGRES_URL`, else
//!    `127.0.0.1:5432/test`)
//! 8. tidy
//! 9. `cargo deny check bans licenses sources` (skipped with a notice when
//!    cargo-deny is not installed)

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

use crate::{reliability, tidy};

/// Runs the pipeline from the workspace root.
pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    cargo(root, &["fmt", "--all", "--", "--check"])?;
    cargo(
        root,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    let nextest = cargo_has(root, "nextest");
    if nextest {
        cargo(
            root,
            &[
                "nextest",
                "run",
                "--workspace",
                "--no-fail-fast",
                "-E",
                "not test(/^sdk::/)",
            ],
        )?;
    } else {
        println!("cargo-nextest is not installed: running the tests with cargo test");
        cargo(
            root,
            &[
                "test",
                "--workspace",
                "--no-fail-fast",
                "--",
                "--skip",
                "sdk::",
            ],
        )?;
    }
    cargo(root, &["test", "--workspace", "--doc"])?;

    cargo(
        root,
        &["build", "--release", "-p", "server", "--bin", "partner-api"],
    )?;
    let release: std::path::PathBuf = ["target", "release", "partner-api"].iter().collect();
    println!(
        "$ PARTNER_API_TEST_BIN={} (the generated clients' journeys)",
        release.display()
    );
    let journeys: &[&str] = if nextest {
        &[
            "nextest",
            "run",
            "-p",
            "server",
            "--test",
            "it",
            "--no-fail-fast",
            "-E",
            "test(/^sdk::/)",
        ]
    } else {
        &[
            "test",
            "-p",
            "server",
            "--test",
            "it",
            "--no-fail-fast",
            "--",
            "sdk::",
        ]
    };
    cargo_with(
        root,
        journeys,
        &[("PARTNER_API_TEST_BIN", &root.join(&release))],
    )?;

    let postgres = std::env::var("PARTNER_API_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    println!(
        "$ cargo xtask reliability --ci --db both --bin {}",
        release.display()
    );
    reliability::run(root, &reliability::Args::ci_subset(release, postgres))?;

    println!("$ cargo xtask tidy");
    tidy::check(root)?;
    println!("tidy: ok");

    if cargo_has(root, "deny") {
        cargo(root, &["deny", "check", "bans", "licenses", "sources"])?;
    } else {
        println!(
            "skipped `cargo deny check bans licenses sources`: cargo-deny is not installed (cargo install cargo-deny --locked)"
        );
    }
    println!("ci: all steps passed");
    Ok(())
}

/// Prints and runs `cargo ARGS`, failing if it does not succeed.
fn cargo(root: &Path, args: &[&str]) -> anyhow::Result<()> {
    cargo_with(root, args, &[])
}

/// [`cargo`] with environment variables set for it.
fn cargo_with(root: &Path, args: &[&str], envs: &[(&str, &Path)]) -> anyhow::Result<()> {
    println!("$ cargo {}", args.join(" "));
    let status = Command::new(tidy::cargo())
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root)
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Whether `cargo SUBCOMMAND --version` works.
fn cargo_has(root: &Path, subcommand: &str) -> bool {
    Command::new(tidy::cargo())
        .args([subcommand, "--version"])
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
