//! `partner-api`: the Partner Benefits Pricing and Enrollment API binary.
//!
//! This release ships the pricing engine. `price` prices a census from files
//! without a server; `serve` says honestly that the HTTP API is not part of
//! this release yet.

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
    },
    /// Price a census with the built-in rate card, without a server.
    Price(price::PriceArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve { demo } => serve(demo),
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

fn serve(demo: bool) -> anyhow::Result<()> {
    let card = pricing_core::RateCard::builtin_2026()?;
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
