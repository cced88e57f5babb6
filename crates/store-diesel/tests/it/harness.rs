//! Isolated databases for the storage suite: a fresh SQLite file per test,
//! and a fresh PostgreSQL database per test (dropped afterwards) when
//! `PARTNER_API_TEST_POSTGRES_URL` is set.

use std::sync::atomic::{AtomicU64, Ordering};

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::ids::PartnerId;
use domain::mode::Mode;
use domain::partner::{Partner, PartnerKind};
use domain::scope::Scope;
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
    _dir: Option<tempfile::TempDir>,
    pg_drop: Option<(String, String)>,
}

impl TestDb {
    /// A second, independent set of stores (its own pool) on the same
    /// database, as a second server process would have.
    pub fn second_process(&self) -> Stores {
        Stores::open(&self.db, 4).unwrap()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg_drop.take() {
            // Drop runs outside any async context we may block; use a
            // dedicated thread with its own runtime.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
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

/// A fresh SQLite database file.
pub async fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test.sqlite");
    let db = Database::parse(&format!("sqlite://{}", path.display())).unwrap();
    migrate::run(&db, Direction::Up).await.unwrap();
    let stores = Stores::open(&db, 4).unwrap();
    TestDb {
        db,
        stores,
        _dir: Some(dir),
        pg_drop: None,
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh PostgreSQL database, or `None` (the test then says it was
/// skipped) when the variable is not set.
pub async fn postgres() -> Option<TestDb> {
    let admin = std::env::var(PG_ENV).ok()?;
    let name = format!(
        "pa_test_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    let mut c = AsyncPgConnection::establish(&admin)
        .await
        .unwrap_or_else(|e| panic!("{PG_ENV} is set but PostgreSQL cannot be reached: {e}"));
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut c)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    let url = format!("{base}/{name}");
    let db = Database::parse(&url).unwrap();
    migrate::run(&db, Direction::Up).await.unwrap();
    let stores = Stores::open(&db, 8).unwrap();
    Some(TestDb {
        db,
        stores,
        _dir: None,
        pg_drop: Some((admin, name)),
    })
}

/// Runs `$body(TestDb)` once per backend: `sqlite` always, `postgres` when
/// the server is configured (otherwise it prints that it was skipped).
#[macro_export]
macro_rules! on_both {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::harness::sqlite().await).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                match $crate::harness::postgres().await {
                    Some(db) => super::$name(db).await,
                    None => eprintln!(
                        "SKIPPED: {} is not set; PostgreSQL not tested",
                        $crate::harness::PG_ENV
                    ),
                }
            }
        }
    };
}

/// A stored broker partner and its test scope.
pub async fn partner(stores: &Stores, n: u8) -> (Partner, Scope) {
    let p = Partner::new(
        PartnerId::from_bytes([n; 6]),
        format!("Partner {n}"),
        PartnerKind::Broker,
        None,
    );
    stores.partners.insert_partner(&p, 1_000).await.unwrap();
    let scope = Scope::new(p.id.clone(), Mode::Test);
    (p, scope)
}
