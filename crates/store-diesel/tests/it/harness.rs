//! The storage suite's harness: the isolated databases of `testkit`, the
//! per-backend test macro, a stored partner and the stores of a serving
//! process.

use domain::ids::{PartnerId, ProcessId};
use domain::mode::Mode;
use domain::partner::{Partner, PartnerKind};
use domain::scope::Scope;
use store_diesel::Stores;
pub use testkit::db::{PG_ENV, TestDb, postgres, sqlite};

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

/// The stores serving process `n` would own on `t`'s database (a pool of
/// their own), with its owner id.
pub fn process(t: &TestDb, n: u8) -> (Stores, ProcessId) {
    let owner = ProcessId::from_bytes([n; 6]);
    let stores = Stores::open_owned(&t.db, 4, &owner).unwrap();
    (stores, owner)
}
