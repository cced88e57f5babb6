//! `partner-api migrate`: applies the embedded migrations of the chosen
//! backend and exits; `serve` applies them the same way before starting.

use anyhow::Context as _;
use clap::Args;
use store_diesel::Database;
use store_diesel::migrate::{self, Direction};

/// The embedded default database.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/partner-api.sqlite";

/// Arguments of `migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Database: `sqlite://PATH` or `postgres://…`.
    #[arg(long, env = "PARTNER_API_DATABASE_URL", default_value = DEFAULT_DATABASE_URL)]
    database_url: String,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Where the database is, without credentials.
pub fn describe(db: &Database) -> String {
    match db {
        Database::Sqlite { path } => format!("sqlite {path}"),
        Database::Postgres { url } => {
            let host = url.rsplit_once('@').map_or(url.as_str(), |(_, h)| h);
            let host = host
                .trim_start_matches("postgres://")
                .trim_start_matches("postgresql://");
            format!("postgres {host}")
        }
    }
}

/// Parses the URL and applies pending migrations on a multi-threaded
/// runtime (the migration harness blocks on async connections).
///
/// # Errors
/// A bad URL, an unreachable database or a failed migration.
pub fn apply(url: &str) -> anyhow::Result<(Database, Vec<String>)> {
    let db = Database::parse(url)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let applied = rt
        .block_on(migrate::run(&db, Direction::Up))
        .with_context(|| format!("cannot migrate {}", describe(&db)))?;
    Ok((db, applied))
}

/// Runs `migrate`.
///
/// # Errors
/// As [`apply`].
pub fn run(args: &MigrateArgs) -> anyhow::Result<()> {
    let (db, applied) = apply(&args.database_url)?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "backend": db.backend(),
                "database": describe(&db),
                "applied": applied,
            })
        );
    } else if applied.is_empty() {
        println!("{}: up to date", describe(&db));
    } else {
        println!("{}: applied {}", describe(&db), applied.join(", "));
    }
    Ok(())
}
