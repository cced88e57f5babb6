//! `partner-api migrate`: applies the embedded migrations of the configured
//! backend and exits; `serve` and every operator command apply them the
//! same way first.

use anyhow::Context as _;
use store_diesel::Database;
use store_diesel::migrate::{self, Direction};

use crate::config::Settings;

pub use crate::config::describe;

/// A multi-threaded runtime with one worker, as the migration harness
/// needs (it blocks on async connections).
///
/// # Errors
/// When the runtime cannot start.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Applies pending migrations from inside a multi-threaded runtime and
/// returns the names of those applied.
///
/// # Errors
/// An unreachable database or a failed migration.
pub async fn apply_async(db: &Database) -> anyhow::Result<Vec<String>> {
    migrate::run(db, Direction::Up)
        .await
        .with_context(|| format!("cannot migrate {}", describe(db)))
}

/// Applies pending migrations on a runtime of its own and returns the
/// names of those applied.
///
/// # Errors
/// As [`apply_async`].
pub fn apply(db: &Database) -> anyhow::Result<Vec<String>> {
    runtime()?.block_on(apply_async(db))
}

/// Runs `migrate`.
///
/// # Errors
/// As [`apply`].
pub fn run(settings: &Settings, json: bool) -> anyhow::Result<()> {
    let db = &settings.database;
    let applied = apply(db)?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "backend": db.backend(),
                "database": describe(db),
                "applied": applied,
            })
        );
    } else if applied.is_empty() {
        println!("{}: up to date", describe(db));
    } else {
        println!("{}: applied {}", describe(db), applied.join(", "));
    }
    Ok(())
}
