//! Isolated databases for test suites: a fresh SQLite file per test, and a
//! fresh PostgreSQL database per test (dropped on drop) when
//! `PARTNER_API_TEST_POSTGRES_URL` is set; and plain SQL on them, for tests
//! that plant what a crashed process would have left.

use std::sync::atomic::{AtomicU64, Ordering};

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use store_diesel::migrate::{self, Direction};
use store_diesel::{Database, Stores};

/// The variable naming the PostgreSQL server for tests.
pub const PG_ENV: &str = "PARTNER_API_TEST_POSTGRES_URL";

/// A migrated, empty database of one backend, removed on drop.
pub struct TestDb {
    /// Its URL.
    pub db: Database,
    /// The ports over it.
    pub stores: Stores,
    /// The URL as configuration spells it (`sqlite://…` or `postgres://…`).
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg_drop: Option<(String, String)>,
}

impl TestDb {
    /// A second, independent set of stores (its own pool) on the same
    /// database, as a second server process would have.
    #[must_use]
    pub fn second_process(&self) -> Stores {
        Stores::open(&self.db, 4).expect("a second pool opens")
    }

    /// The directory of an SQLite database (for files beside it).
    #[must_use]
    pub fn dir(&self) -> Option<&std::path::Path> {
        self._dir.as_ref().map(tempfile::TempDir::path)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg_drop.take() {
            // Drop may run inside an async context that must not block;
            // use a dedicated thread with its own runtime.
            let _ = std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(async {
                    if let Ok(mut c) = AsyncPgConnection::establish(&admin).await {
                        let _ = diesel::sql_query(format!(
                            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                        ))
                        .execute(&mut c)
                        .await;
                    }
                });
            })
            .join();
        }
    }
}

/// A fresh, migrated SQLite database file.
///
/// # Panics
/// When the temporary file cannot be created or migrated.
pub async fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("test.sqlite");
    let url = format!("sqlite://{}", path.display());
    let db = Database::parse(&url).expect("a valid SQLite URL");
    migrate::run(&db, Direction::Up)
        .await
        .expect("SQLite migrates");
    let stores = Stores::open(&db, 4).expect("the SQLite pool opens");
    TestDb {
        db,
        stores,
        url,
        _dir: Some(dir),
        pg_drop: None,
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh, migrated PostgreSQL database, or `None` when the variable is
/// not set (the caller then says the test was skipped).
///
/// # Panics
/// When the variable is set but the server cannot be reached.
pub async fn postgres() -> Option<TestDb> {
    let admin = std::env::var(PG_ENV).ok()?;
    let name = format!(
        "pa_test_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default()
    );
    let mut c = AsyncPgConnection::establish(&admin)
        .await
        .unwrap_or_else(|e| panic!("{PG_ENV} is set but PostgreSQL cannot be reached: {e}"));
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut c)
        .await
        .expect("CREATE DATABASE");
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    let url = format!("{base}/{name}");
    let db = Database::parse(&url).expect("a valid PostgreSQL URL");
    migrate::run(&db, Direction::Up)
        .await
        .expect("PostgreSQL migrates");
    let stores = Stores::open(&db, 8).expect("the PostgreSQL pool opens");
    Some(TestDb {
        db,
        stores,
        url,
        _dir: None,
        pg_drop: Some((admin, name)),
    })
}

/// How many SQLite migrations the repository holds (what a first
/// `migrate` applies).
#[must_use]
pub fn sqlite_migrations() -> usize {
    migrations("sqlite")
}

/// How many migrations of `backend` (`sqlite` or `postgres`) the
/// repository holds: the shared ones and the backend's own.
#[must_use]
pub fn migrations(backend: &str) -> usize {
    ["shared", backend]
        .iter()
        .map(|set| {
            let dir = format!("{}/../../migrations/{set}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_dir(dir).map_or(0, |entries| {
                entries
                    .filter(|e| e.as_ref().is_ok_and(|e| e.path().is_dir()))
                    .count()
            })
        })
        .sum()
}

/// One row of [`texts`].
#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    value: String,
}

/// A connection of its own to the SQLite file at `path`, waiting (up to
/// 10 s) for a writer of another process to finish instead of failing
/// with `database is locked`.
async fn sqlite_connection(path: &str) -> SyncConnectionWrapper<SqliteConnection> {
    use diesel_async::SimpleAsyncConnection as _;
    let mut c = SyncConnectionWrapper::<SqliteConnection>::establish(path)
        .await
        .expect("SQLite opens");
    c.batch_execute("PRAGMA busy_timeout = 10000")
        .await
        .expect("busy_timeout");
    c
}

/// Runs `sql` (statements without results) on `db` over a connection of
/// its own; returns the rows the last statement changed.
///
/// # Panics
/// When the database cannot be reached or the statement fails.
pub async fn execute(db: &Database, sql: &str) -> usize {
    match db {
        Database::Sqlite { path } => {
            let mut c = sqlite_connection(path).await;
            diesel::sql_query(sql).execute(&mut c).await
        }
        Database::Postgres { url } => {
            let mut c = AsyncPgConnection::establish(url)
                .await
                .expect("PostgreSQL answers");
            diesel::sql_query(sql).execute(&mut c).await
        }
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The text column `value` of every row `sql` returns on `db`.
///
/// # Panics
/// When the database cannot be reached or the query fails.
pub async fn texts(db: &Database, sql: &str) -> Vec<String> {
    let rows: Vec<Row> = match db {
        Database::Sqlite { path } => {
            let mut c = sqlite_connection(path).await;
            diesel::sql_query(sql).load(&mut c).await
        }
        Database::Postgres { url } => {
            let mut c = AsyncPgConnection::establish(url)
                .await
                .expect("PostgreSQL answers");
            diesel::sql_query(sql).load(&mut c).await
        }
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.into_iter().map(|r| r.value).collect()
}

/// The lines of the plan `db`'s planner makes for `sql` with the text
/// parameters `binds`: SQLite's `EXPLAIN QUERY PLAN` details, or
/// PostgreSQL's `EXPLAIN` with sequential scans discouraged (a test table
/// is small enough that a scan would win; what is asked is whether an
/// index can serve the query).
///
/// # Panics
/// When the database cannot be reached or the query fails.
pub async fn plan(db: &Database, sql: &str, binds: &[&str]) -> Vec<String> {
    #[derive(QueryableByName)]
    struct Detail {
        #[diesel(sql_type = Text)]
        detail: String,
    }
    #[derive(QueryableByName)]
    struct Line {
        #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
        line: String,
    }
    match db {
        Database::Sqlite { path } => {
            let mut c = sqlite_connection(path).await;
            let query = binds.iter().fold(
                diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}"))
                    .into_boxed::<diesel::sqlite::Sqlite>(),
                |q, b| q.bind::<Text, _>((*b).to_owned()),
            );
            let rows: Vec<Detail> = query
                .load(&mut c)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            rows.into_iter().map(|r| r.detail).collect()
        }
        Database::Postgres { url } => {
            let mut c = AsyncPgConnection::establish(url)
                .await
                .expect("PostgreSQL answers");
            diesel::sql_query("SET enable_seqscan = off")
                .execute(&mut c)
                .await
                .expect("SET");
            let query = binds.iter().fold(
                diesel::sql_query(format!("EXPLAIN {sql}")).into_boxed::<diesel::pg::Pg>(),
                |q, b| q.bind::<Text, _>((*b).to_owned()),
            );
            let rows: Vec<Line> = query
                .load(&mut c)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            rows.into_iter().map(|r| r.line).collect()
        }
    }
}
