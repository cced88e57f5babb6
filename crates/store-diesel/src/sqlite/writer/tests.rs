//! The write thread on a real file: concurrent writers share commits, a
//! failed or dropped writer takes nothing of its batch with it, what was
//! answered as written is on disk, and the pooled connections cannot write.

use std::sync::atomic::{AtomicU64, Ordering};

use diesel::QueryableByName;
use diesel::sql_types::BigInt;
use diesel_async::RunQueryDsl;
use domain::store::StoreError;

use crate::error::TxError;
use crate::sqlite::{Conn, SqliteStore};

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

fn store(dir: &tempfile::TempDir) -> (SqliteStore, String) {
    let path = dir.path().join("w.sqlite").to_string_lossy().into_owned();
    (SqliteStore::new(&path, 4).unwrap(), path)
}

async fn create_table(s: &SqliteStore) {
    write_tx!(s, async |c: &mut Conn| {
        Ok::<_, TxError>(
            diesel::sql_query("CREATE TABLE t (x INTEGER PRIMARY KEY)")
                .execute(c)
                .await?,
        )
    })
    .await
    .unwrap();
}

async fn insert(s: &SqliteStore, x: i64) -> Result<(), StoreError> {
    write_tx!(s, async |c: &mut Conn| {
        diesel::sql_query("INSERT INTO t (x) VALUES (?)")
            .bind::<BigInt, _>(x)
            .execute(c)
            .await?;
        Ok::<_, TxError>(())
    })
    .await
}

/// The rows, counted on a connection of the test's own.
fn rows_on_disk(path: &str) -> i64 {
    use diesel::Connection as _;
    let mut c = diesel::sqlite::SqliteConnection::establish(path).unwrap();
    diesel::RunQueryDsl::get_result::<Count>(
        diesel::sql_query("SELECT COUNT(*) AS n FROM t"),
        &mut c,
    )
    .unwrap()
    .n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_share_commits_and_every_answered_write_is_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (s, path) = store(&dir);
    create_table(&s).await;
    let before = AtomicU64::load(&s.writer.commits, Ordering::SeqCst);
    let writers: Vec<_> = (0..200)
        .map(|x| {
            let s = s.clone();
            tokio::spawn(async move { insert(&s, x).await })
        })
        .collect();
    for w in writers {
        w.await.unwrap().unwrap();
    }
    let commits = AtomicU64::load(&s.writer.commits, Ordering::SeqCst) - before;
    assert_eq!(rows_on_disk(&path), 200);
    assert!(
        commits < 200,
        "200 concurrent writers took {commits} commits: no batch was shared"
    );
}

#[tokio::test]
async fn a_failed_writer_is_rolled_back_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (s, path) = store(&dir);
    create_table(&s).await;
    insert(&s, 1).await.unwrap();
    // Writes a row, then fails on a duplicate: neither row stays.
    let failed = write_tx!(s, async |c: &mut Conn| {
        diesel::sql_query("INSERT INTO t (x) VALUES (2)")
            .execute(c)
            .await?;
        diesel::sql_query("INSERT INTO t (x) VALUES (1)")
            .execute(c)
            .await?;
        Ok::<_, TxError>(())
    });
    let (failed, kept) = tokio::join!(failed, insert(&s, 3));
    assert!(matches!(failed, Err(StoreError::Conflict(_))), "{failed:?}");
    kept.unwrap();
    assert_eq!(rows_on_disk(&path), 2);
    insert(&s, 2).await.unwrap();
}

#[tokio::test]
async fn a_writer_dropped_inside_its_transaction_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (s, path) = store(&dir);
    create_table(&s).await;
    let (entered, wait) = tokio::sync::oneshot::channel::<()>();
    let dropped = {
        let s = s.clone();
        tokio::spawn(async move {
            write_tx!(s, async |c: &mut Conn| {
                diesel::sql_query("INSERT INTO t (x) VALUES (7)")
                    .execute(c)
                    .await?;
                let _ = entered.send(());
                std::future::pending::<()>().await;
                Ok::<_, TxError>(())
            })
            .await
        })
    };
    wait.await.unwrap();
    dropped.abort();
    assert!(dropped.await.unwrap_err().is_cancelled());
    insert(&s, 8).await.unwrap();
    assert_eq!(rows_on_disk(&path), 1);
    insert(&s, 7).await.unwrap();
}

#[tokio::test]
async fn pooled_connections_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let (s, _) = store(&dir);
    create_table(&s).await;
    let mut conn = s.conn().await.unwrap();
    let e = diesel_async::RunQueryDsl::execute(
        diesel::sql_query("INSERT INTO t (x) VALUES (1)"),
        &mut *conn,
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("readonly"), "{e}");
}

#[tokio::test]
async fn the_write_connection_is_durable_and_keeps_a_large_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (_, path) = store(&dir);
    let mut conn = super::open(&path).await.unwrap();
    let mut pragma = async |name: &str| -> i64 {
        let rows: Vec<Count> = diesel::sql_query(format!("SELECT {name} AS n FROM pragma_{name}"))
            .load(&mut conn)
            .await
            .unwrap();
        rows.into_iter().next().unwrap().n
    };
    // FULL: a committed write survives power loss.
    assert_eq!(pragma("synchronous").await, 2);
    // 64 MiB, in KiB (a negative size counts KiB, not pages).
    assert_eq!(pragma("cache_size").await, -65_536);
}
