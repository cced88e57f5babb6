//! `partner-api`: the Partner Benefits Pricing and Enrollment API binary.
//!
//! This release ships the pricing engine and the storage layer. `price`
//! prices a census from files without a server; `migrate` creates or
//! upgrades the database; `serve` migrates the database and says honestly
//! that the HTTP API is not part of this release yet.

mod migrate;
mod price;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Partner Benefits Pricing and Enrollment API.
#[derive(Debug, Parser)]
#[command(name = "partner-api", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the HTTP API (not in this release: the pricing engine comes first).
    Serve {
        /// Create a demo partner and test key on an empty database.
        #[arg(long)]
        demo: bool,
        /// Database: `sqlite://PATH` (the default, created on first start)
        /// or `postgres://…`.
        #[arg(long, env = "PARTNER_API_DATABASE_URL", default_value = migrate::DEFAULT_DATABASE_URL)]
        database_url: String,
    },
    /// Apply pending database migrations and exit.
    Migrate(migrate::MigrateArgs),
    /// Price a census with the built-in rate card, without a server.
    Price(price::PriceArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve { demo, database_url } => serve(demo, &database_url),
        Command::Migrate(args) => migrate::run(&args),
        Command::Price(args) => price::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let chain: Vec<String> = e.chain().map(ToString::to_string).collect();
            eprintln!("error: {}", chain.join(": "));
            ExitCode::FAILURE
        }
    }
}

fn serve(demo: bool, database_url: &str) -> anyhow::Result<()> {
    let card = pricing_core::RateCard::builtin_2026()?;
    let (db, applied) = migrate::apply(database_url)?;
    println!(
        "Database ready: {} ({} migration(s) applied).",
        migrate::describe(&db),
        applied.len()
    );
    println!(
        "partner-api {}: the HTTP API (/v1) is not in this release yet; this release ships the pricing engine.",
        env!("CARGO_PKG_VERSION")
    );
    println!(
        "Loaded rate card {} ({} ZIPs mapped){}.",
        card.version(),
        card.zip_count(),
        if demo {
            "; --demo will create a demo partner and test key once the API exists"
        } else {
            ""
        }
    );
    println!(
        "Price without a server: partner-api price --census crates/server/examples/census.json"
    );
    Ok(())
}
