//! `partner-api`: the Partner Benefits Pricing and Enrollment API binary.
//! Parses the command line, loads the settings and dispatches to the
//! library; failures end as one line on stderr (`error: …`, or a JSON
//! object with `--json`) and a non-zero exit.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use server::config::{ConfigError, Overrides, Settings};
use server::operator::{
    self, CompanyCommand, GroupCommand, KeyCommand, OpError, PartnerCommand, QuoteCommand,
};
use server::{migrate, price, serve};

/// mimalloc instead of glibc's allocator: a request allocates and frees
/// dozens of small blocks, and glibc's `malloc`/`free` and its
/// consolidation were 14% of a ping's CPU (`docs/benchmarks.md`). Built
/// without transparent huge pages (`no_thp`): a large request's memory,
/// freed and faulted in again, was zeroed 2 MiB at a time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The Partner Benefits Pricing and Enrollment API.
#[derive(Debug, Parser)]
#[command(name = "partner-api", version, about)]
struct Cli {
    /// Configuration file (TOML). Layers: defaults < this file <
    /// `PARTNER_API_*` environment variables < flags.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Database: `sqlite://PATH` or `postgres://…` (overrides
    /// `database_url` from the file and `PARTNER_API_DATABASE_URL`).
    #[arg(long, global = true, value_name = "URL")]
    database_url: Option<String>,
    /// Print machine-readable JSON: one object (an array for lists) on
    /// stdout, and failures as one JSON object on stderr.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Migrate the database and serve the HTTP API (`/v1`, `/docs`,
    /// `/healthz`, `/readyz`) until SIGINT or SIGTERM.
    Serve {
        /// Listen address (default `127.0.0.1:8080`).
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
        /// Create a demo partner and test key on an empty database.
        #[arg(long)]
        demo: bool,
    },
    /// Apply pending database migrations and exit.
    Migrate,
    /// Price a census with the built-in rate card, without a server.
    Price(price::PriceArgs),
    /// Manage partners.
    #[command(subcommand)]
    Partner(PartnerCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Underwriting: finalize quotes.
    #[command(subcommand)]
    Quote(QuoteCommand),
    /// Employer groups: take a provisioned company live.
    #[command(subcommand)]
    Group(GroupCommand),
    /// Provisioned companies: review a business verification, read the
    /// micro-deposits.
    #[command(subcommand)]
    Company(CompanyCommand),
}

fn main() -> ExitCode {
    let json_requested = std::env::args_os().any(|a| a == "--json");
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e, json_requested),
    };
    let json = cli.json;
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let message = e
                .chain()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(": ");
            report(code(&e), &one_line(&message), json);
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = |listen: Option<String>| {
        let flags = Overrides {
            listen,
            database_url: cli.database_url.clone(),
        };
        Settings::from_process(cli.config.as_deref(), &flags)
    };
    match cli.command {
        Command::Serve { listen, demo } => serve::run(&settings(listen)?, demo, cli.json),
        Command::Migrate => migrate::run(&settings(None)?, cli.json),
        Command::Price(args) => price::run(&args),
        Command::Partner(cmd) => operator::partner(&settings(None)?, &cmd, cli.json),
        Command::Key(cmd) => operator::key(&settings(None)?, &cmd, cli.json),
        Command::Quote(cmd) => operator::quote(&settings(None)?, &cmd, cli.json),
        Command::Group(cmd) => operator::group(&settings(None)?, &cmd, cli.json),
        Command::Company(cmd) => operator::company(&settings(None)?, &cmd, cli.json),
    }
}

/// The machine-readable code of a failure.
fn code(e: &anyhow::Error) -> &'static str {
    if let Some(op) = e.downcast_ref::<OpError>() {
        op.code.as_str()
    } else if e.downcast_ref::<ConfigError>().is_some() {
        "invalid_config"
    } else {
        "failed"
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn report(code: &str, message: &str, json: bool) {
    if json {
        eprintln!(
            "{}",
            serde_json::json!({ "error": code, "message": message })
        );
    } else {
        eprintln!("error: {message}");
    }
}

/// Help and version go to stdout as clap prints them; an argument error
/// becomes one line (clap's message without its usage block) and exit 2.
fn usage_error(e: &clap::Error, json: bool) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.to_string();
    let head: Vec<&str> = text.lines().take_while(|l| !l.trim().is_empty()).collect();
    let message = one_line(&head.join(" "));
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    report("usage", message, json);
    ExitCode::from(2)
}
