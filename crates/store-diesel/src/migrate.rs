//! Embedded migrations for both backends, applied by `partner-api migrate`
//! and at the start of `serve`, and reverted (every migration has a
//! working `down`) by the migration tests. A migration whose SQL is the
//! same on both backends is written once, under `migrations/shared`; only
//! the few that differ (BLOB/BYTEA, an unlogged table) have a copy per
//! backend. [`Layered`] gives each backend its whole ordered list.

use diesel::Connection as _;
use diesel::backend::Backend;
use diesel::migration::{Migration, MigrationSource};
use diesel::sqlite::SqliteConnection;
use diesel_async::{AsyncConnection as _, AsyncMigrationHarness, AsyncPgConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::Database;

/// The migrations whose SQL both backends run.
const SHARED: EmbeddedMigrations = embed_migrations!("../../migrations/shared");
/// The SQLite migrations.
pub const SQLITE: Layered = Layered {
    shared: SHARED,
    own: embed_migrations!("../../migrations/sqlite"),
};
/// The PostgreSQL migrations.
pub const POSTGRES: Layered = Layered {
    shared: SHARED,
    own: embed_migrations!("../../migrations/postgres"),
};

/// One backend's migrations: the shared ones and the backend's own, in
/// version order (the two sets never name the same version).
pub struct Layered {
    shared: EmbeddedMigrations,
    own: EmbeddedMigrations,
}

impl<DB: Backend> MigrationSource<DB> for &Layered {
    fn migrations(&self) -> diesel::migration::Result<Vec<Box<dyn Migration<DB>>>> {
        let mut all = MigrationSource::<DB>::migrations(&self.shared)?;
        all.extend(MigrationSource::<DB>::migrations(&self.own)?);
        all.sort_unstable_by(|a, b| a.name().version().cmp(&b.name().version()));
        Ok(all)
    }
}

/// Why migrating failed.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The database cannot be reached or opened.
    #[error("cannot connect to the database: {0}")]
    Connect(String),
    /// A migration failed.
    #[error("migration failed: {0}")]
    Migration(String),
}

/// Which way to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Apply every pending migration.
    Up,
    /// Revert every applied migration.
    DownAll,
}

/// Applies (or reverts) migrations; returns the versions touched. Runs the
/// blocking harness off the async workers, so it is safe on any runtime.
///
/// # Errors
/// [`MigrateError`].
pub async fn run(db: &Database, direction: Direction) -> Result<Vec<String>, MigrateError> {
    let versions = schema(db, direction).await?;
    // Rows of the previous version exist only in a database that had not
    // yet applied the marker migration: rewrite them when it applies, and
    // never scan the tables again at a later start.
    if direction == Direction::Up && versions.iter().any(|v| v.as_str() == TYPED_DOCUMENTS) {
        rewrite_documents(db).await?;
    }
    Ok(versions)
}

/// The migration that marks the switch to typed stored documents.
const TYPED_DOCUMENTS: &str = "20261126000001";

/// Rewrites the stored documents the previous version wrote in the
/// current form (`domain::document`); returns how many rows changed. Runs
/// in the `Up` migration that applies [`TYPED_DOCUMENTS`]; a second run
/// changes nothing (readers accept both forms in any case).
///
/// # Errors
/// [`MigrateError::Migration`] naming a row that does not read.
pub async fn rewrite_documents(db: &Database) -> Result<u64, MigrateError> {
    let rewritten = match db {
        Database::Sqlite { path } => {
            crate::sqlite::SqliteStore::new(path, 1)
                .map_err(|e| MigrateError::Connect(e.to_string()))?
                .rewrite_documents()
                .await
        }
        Database::Postgres { url } => {
            crate::pg::PgStore::new(url, 1)
                .map_err(|e| MigrateError::Connect(e.to_string()))?
                .rewrite_documents()
                .await
        }
    };
    rewritten.map_err(|e| {
        // The migration's own errors name the row in their source.
        let why = match e {
            domain::store::StoreError::Internal(source) => source.to_string(),
            other => other.to_string(),
        };
        MigrateError::Migration(format!("rewriting stored documents: {why}"))
    })
}

/// Applies (or reverts) the schema migrations.
async fn schema(db: &Database, direction: Direction) -> Result<Vec<String>, MigrateError> {
    match db {
        Database::Sqlite { path } => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                if let Some(dir) = std::path::Path::new(&path).parent()
                    && !dir.as_os_str().is_empty()
                {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| MigrateError::Connect(e.to_string()))?;
                }
                let mut conn = SqliteConnection::establish(&path)
                    .map_err(|e| MigrateError::Connect(e.to_string()))?;
                diesel::connection::SimpleConnection::batch_execute(
                    &mut conn,
                    crate::sqlite::PRAGMAS,
                )
                .map_err(|e| MigrateError::Connect(e.to_string()))?;
                apply(&mut conn, &SQLITE, direction)
            })
            .await
            .map_err(|e| MigrateError::Migration(e.to_string()))?
        }
        Database::Postgres { url } => {
            let conn = AsyncPgConnection::establish(url)
                .await
                .map_err(|e| MigrateError::Connect(e.to_string()))?;
            tokio::task::spawn_blocking(move || {
                let mut harness = AsyncMigrationHarness::new(conn);
                apply(&mut harness, &POSTGRES, direction)
            })
            .await
            .map_err(|e| MigrateError::Migration(e.to_string()))?
        }
    }
}

fn apply<B: diesel::backend::Backend, H: MigrationHarness<B>>(
    harness: &mut H,
    migrations: &Layered,
    direction: Direction,
) -> Result<Vec<String>, MigrateError> {
    let versions = match direction {
        Direction::Up => harness.run_pending_migrations(migrations),
        Direction::DownAll => harness.revert_all_migrations(migrations),
    }
    .map_err(|e| MigrateError::Migration(e.to_string()))?;
    Ok(versions.into_iter().map(|v| v.to_string()).collect())
}
