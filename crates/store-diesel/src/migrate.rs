//! Embedded migrations for both backends, applied by `partner-api migrate`
//! and at the start of `serve`, and reverted (every migration has a
//! working `down`) by the migration tests. A migration is written once,
//! under `migrations/shared`, in SQLite's dialect, and rendered for
//! PostgreSQL when it runs ([`Dialect::render`]: `BLOB` is `BYTEA`, a
//! `/* postgres: … */` comment is PostgreSQL's text); only a migration that
//! exists on one backend alone has a directory of that backend's.
//! [`Layered`] gives each backend its whole ordered list.

use diesel::Connection as _;
use diesel::backend::Backend;
use diesel::connection::BoxableConnection;
use diesel::migration::MigrationVersion;
use diesel::migration::{Migration, MigrationMetadata, MigrationName, MigrationSource};
use diesel::sqlite::SqliteConnection;
use diesel_async::{AsyncConnection as _, AsyncMigrationHarness, AsyncPgConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::Database;

/// The migrations both backends run (`build.rs` lists `migrations/shared`).
const SHARED: &[Portable] = include!(concat!(env!("OUT_DIR"), "/shared_migrations.rs"));
/// The SQLite migrations.
pub const SQLITE: Layered = Layered {
    dialect: Dialect::Sqlite,
    own: None,
};
/// The PostgreSQL migrations.
pub const POSTGRES: Layered = Layered {
    dialect: Dialect::Postgres,
    own: Some(embed_migrations!("../../migrations/postgres")),
};

/// One backend's migrations: the shared ones, rendered in its dialect, and
/// its own, in version order (the two sets never name the same version).
pub struct Layered {
    dialect: Dialect,
    own: Option<EmbeddedMigrations>,
}

impl<DB: Backend> MigrationSource<DB> for &Layered {
    fn migrations(&self) -> diesel::migration::Result<Vec<Box<dyn Migration<DB>>>> {
        let mut all: Vec<Box<dyn Migration<DB>>> = Vec::with_capacity(SHARED.len());
        for m in SHARED {
            all.push(Box::new(Rendered {
                name: Name(m.name),
                up: self.dialect.render(m.up),
                down: self.dialect.render(m.down),
            }));
        }
        if let Some(own) = &self.own {
            all.extend(MigrationSource::<DB>::migrations(own)?);
        }
        all.sort_unstable_by(|a, b| a.name().version().cmp(&b.name().version()));
        Ok(all)
    }
}

/// The SQL dialect a shared migration is rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// As written.
    Sqlite,
    /// The word `BLOB` is `BYTEA`, and `/* postgres: X */` is `X`.
    Postgres,
}

impl Dialect {
    /// `sql`, written in SQLite's dialect, in this one.
    #[must_use]
    pub fn render(self, sql: &str) -> String {
        match self {
            Self::Sqlite => sql.to_owned(),
            Self::Postgres => {
                let mut out = String::with_capacity(sql.len());
                let mut rest = sql;
                while let Some(at) = rest.find("/* postgres: ") {
                    out.push_str(&rest[..at]);
                    let tail = &rest[at + "/* postgres: ".len()..];
                    let Some(close) = tail.find(" */") else {
                        out.push_str(&rest[at..]);
                        rest = "";
                        break;
                    };
                    out.push_str(&tail[..close]);
                    rest = &tail[close + " */".len()..];
                }
                out.push_str(rest);
                replace_word(&out, "BLOB", "BYTEA")
            }
        }
    }
}

/// `text` with every `word` that stands alone (not inside an identifier)
/// replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in text.match_indices(word) {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !ident(before) && !ident(after) {
            out.push_str(&text[last..at]);
            out.push_str(with);
            last = at + word.len();
        }
    }
    out.push_str(&text[last..]);
    out
}

/// A shared migration as embedded: its directory's name and SQL.
struct Portable {
    name: &'static str,
    up: &'static str,
    down: &'static str,
}

/// A shared migration rendered for one backend.
struct Rendered {
    name: Name,
    up: String,
    down: String,
}

/// A migration directory's name (`2026-11-21-000001_initial`); its
/// version is the part before `_` without the dashes, as diesel reads it.
struct Name(&'static str);

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl MigrationName for Name {
    fn version(&self) -> MigrationVersion<'_> {
        let version = self.0.split('_').next().unwrap_or(self.0);
        MigrationVersion::from(version.replace('-', ""))
    }
}

/// Every shared migration runs in a transaction of its own.
struct InTransaction;

impl MigrationMetadata for InTransaction {}

impl<DB: Backend> Migration<DB> for Rendered {
    fn run(&self, conn: &mut dyn BoxableConnection<DB>) -> diesel::migration::Result<()> {
        conn.batch_execute(&self.up)
            .map_err(|e| format!("migration {}: {e}", self.name).into())
    }

    fn revert(&self, conn: &mut dyn BoxableConnection<DB>) -> diesel::migration::Result<()> {
        conn.batch_execute(&self.down)
            .map_err(|e| format!("reverting migration {}: {e}", self.name).into())
    }

    fn metadata(&self) -> &dyn MigrationMetadata {
        &InTransaction
    }

    fn name(&self) -> &dyn MigrationName {
        &self.name
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

#[cfg(test)]
mod tests {
    use super::{Dialect, SHARED};

    #[test]
    fn postgres_reads_bytes_as_bytea_and_its_own_comments_as_sql() {
        let sql =
            "CREATE /* postgres: UNLOGGED */ TABLE t (b BLOB, blobs BLOB NOT NULL, x_BLOB TEXT);";
        assert_eq!(
            Dialect::Postgres.render(sql),
            "CREATE UNLOGGED TABLE t (b BYTEA, blobs BYTEA NOT NULL, x_BLOB TEXT);"
        );
        assert_eq!(Dialect::Sqlite.render(sql), sql);
    }

    #[test]
    fn no_shared_migration_leaves_sqlite_words_for_postgres() {
        assert!(SHARED.len() >= 16, "the shared list is embedded");
        for m in SHARED {
            for sql in [m.up, m.down] {
                let pg = Dialect::Postgres.render(sql);
                assert!(
                    !pg.contains("/* postgres:"),
                    "{}: an unclosed marker",
                    m.name
                );
                assert!(
                    !pg.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                        .any(|w| w == "BLOB"),
                    "{}: BLOB left for PostgreSQL",
                    m.name
                );
            }
        }
    }
}
