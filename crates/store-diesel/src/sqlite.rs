//! The embedded SQLite backend (the default): one file in WAL mode, write
//! transactions begun `IMMEDIATE` so a read-then-write never deadlocks on
//! the upgrade, and an in-process rate limiter (SQLite serves one process).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use diesel::sqlite::SqliteConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use domain::ids::ProcessId;
use domain::rate_limit::Policy;
use domain::store::{RateLimitStore, StoreError, StoreResult};

pub(crate) use writer::OFFLOAD;

/// A connection: its statements run inline on the caller's thread, or on a
/// blocking thread inside [`OFFLOAD`] ([`writer::Runner`]).
pub(crate) type Conn = SyncConnectionWrapper<SqliteConnection, writer::Runner>;
pub(crate) type Store = SqliteStore;

/// A future running `$body` (an `async |c: &mut Conn|` closure) in one
/// write transaction of `$store`: a savepoint in the write thread's
/// current batch, answered once the batch has committed (see
/// [`writer`]). Its output is a `StoreResult`.
macro_rules! write_tx {
    ($store:expr, $body:expr) => {
        async {
            let mut turn = $store.writer.turn().await?;
            turn.enter().await.map_err($crate::error::db)?;
            let out: Result<_, $crate::error::TxError> = ($body)(turn.conn()).await;
            turn.leave(out.is_ok()).await.map_err($crate::error::db)?;
            let out = out?;
            turn.committed().await?;
            Ok::<_, domain::store::StoreError>(out)
        }
    };
}

/// [`write_tx!`] for a write of up to tens of thousands of rows: its
/// statements run on blocking threads ([`offload!`]), where a small
/// write's run inline, a few microseconds on the caller's thread.
macro_rules! bulk_write_tx {
    ($store:expr, $body:expr) => {
        offload!(write_tx!($store, $body))
    };
}

/// A future running `$body` as a write of its own (one statement, which
/// PostgreSQL commits by itself): on SQLite, a [`write_tx!`].
macro_rules! autocommit {
    ($store:expr, $body:expr) => {
        write_tx!($store, $body)
    };
}

/// [`autocommit!`] for a write whose loss in a crash would be harmless
/// (see the PostgreSQL backend's): on SQLite, whose write thread already
/// commits concurrent writes together, a [`write_tx!`] like any other.
macro_rules! unflushed_autocommit {
    ($store:expr, $body:expr) => {
        write_tx!($store, $body)
    };
}

/// A future running `$body` (a future) on blocking threads: a read that can
/// be large. On PostgreSQL, the future as it is.
macro_rules! offload {
    ($body:expr) => {
        $crate::sqlite::OFFLOAD.scope((), $body)
    };
}

/// The first row of `$query` (which owns its bind values) on `$conn`, as
/// a `QueryResult`. SQLite runs it through diesel's synchronous connection
/// on the caller's thread: its statement cache is keyed by the query's
/// type and rows are read in place, where the asynchronous wrapper writes
/// the SQL text out and copies every field of every row on each call. For
/// the hottest reads (a group by id).
macro_rules! first_row {
    ($conn:expr, $query:expr) => {{
        let query = $query;
        $conn
            .spawn_blocking(move |c| diesel::RunQueryDsl::first(query, c))
            .await
    }};
}

/// Tells the outbox's watchers from inside a transaction (PostgreSQL
/// `NOTIFY`); nothing on SQLite, whose watchers hear after the commit
/// (`outbox_tx!`).
macro_rules! notify_outbox {
    ($conn:expr) => {{
        let _ = &$conn;
    }};
}

/// A read of rows the write transaction will change, as it is: the
/// IMMEDIATE transaction already excludes other writers.
macro_rules! for_update {
    ($query:expr) => {
        $query
    };
}

/// A claim's read of due rows, as it is (see `for_update!`).
macro_rules! skip_locked {
    ($query:expr) => {
        $query
    };
}

/// Inserts `$rows` into `$table` in statements of `CHUNK` rows. diesel-async's
/// wrapper has no SQLite batch insert, so this runs on the inner
/// connection (inside the caller's open transaction).
macro_rules! insert_all {
    ($conn:expr, $table:expr, $rows:expr) => {{
        let rows = $rows;
        $conn
            .spawn_blocking(move |inner| {
                for chunk in rows.chunks(CHUNK) {
                    diesel::RunQueryDsl::execute(diesel::insert_into($table).values(chunk), inner)?;
                }
                Ok(())
            })
            .await
    }};
}

/// Inserts a census's members (`Vec<MemberRow>`), as [`insert_all!`].
macro_rules! insert_members {
    ($conn:expr, $rows:expr) => {
        insert_all!($conn, $crate::schema::members::table, $rows)
    };
}

// After the macros, which its tests use.
mod writer;

/// One process serves an SQLite file: a process that registers frees
/// everything earlier processes left, at once.
pub(crate) const SOLE_PROCESS: bool = true;

backend_ops!();

/// Records a batch of attempts in one statement where PostgreSQL does
/// (`pg::mark_in_one_statement`): never on SQLite, where a statement runs
/// in the process and costs no round trip, so each record goes alone.
pub(crate) async fn mark_in_one_statement(
    _: &mut Conn,
    _: &[domain::store::AttemptRecord],
) -> diesel::QueryResult<Option<Vec<bool>>> {
    Ok(None)
}

/// Pragmas set on every connection: a busy timeout instead of immediate
/// `SQLITE_BUSY` (first, so that switching a new connection to WAL waits
/// for a writer rather than failing), WAL for concurrent readers, enforced
/// foreign keys, and
/// full fsync so a committed write survives a crash or power loss. A macro
/// so that [`READ_PRAGMAS`] can extend the literal.
macro_rules! pragmas {
    () => {
        "PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; \
         PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;"
    };
}

/// [`pragmas!`], for the write thread's connection and the migrations,
/// with a page cache of 64 MiB (SQLite's default is 2 MiB): every insert
/// touches a page of each index, and with the indexes of 100,000 groups
/// out of the cache each such touch was a read from the file — group
/// creation slowed by 17% between 1,000 and 100,000 groups. The memory is
/// taken only as pages are read.
pub(crate) const PRAGMAS: &str = concat!(pragmas!(), " PRAGMA cache_size = -65536;");

/// The pooled connections' pragmas: [`pragmas!`] (with SQLite's default
/// page cache), and read only. Every write goes through the write thread ([`writer`]), so a write on a pooled
/// connection (which would wait inline for the batch's lock) is a bug, and
/// fails at once.
const READ_PRAGMAS: &str = concat!(pragmas!(), " PRAGMA query_only = ON;");

/// The SQLite store.
#[derive(Clone)]
pub struct SqliteStore {
    pool: Pool<Conn>,
    windows: Arc<Mutex<HashMap<String, (i64, u32)>>>,
    writer: Arc<writer::Writer>,
    owner: Option<ProcessId>,
    /// Moves on after each commit that touches the outbox (see
    /// [`SqliteStore::outbox_changed`]).
    outbox: Arc<tokio::sync::watch::Sender<u64>>,
}

impl SqliteStore {
    /// A store over the database file at `path` (created by the
    /// migrations if absent), with at most `max_connections` connections.
    ///
    /// # Errors
    /// [`StoreError::Internal`] when the pool cannot be built.
    pub fn new(path: &str, max_connections: usize) -> StoreResult<Self> {
        Ok(Self {
            pool: crate::pool::<Conn>(path, READ_PRAGMAS, max_connections, None)?,
            windows: Arc::new(Mutex::new(HashMap::new())),
            writer: Arc::new(writer::Writer::start(path)?),
            owner: None,
            outbox: Arc::new(tokio::sync::watch::Sender::new(0)),
        })
    }

    /// Tells this process's idle dispatchers that a commit appended
    /// events or scheduled a delivery again. Another process writing the
    /// same file is not heard: [`OUTBOX_RECHECK`] bounds how late its
    /// deliveries start.
    pub(crate) fn outbox_changed(&self) {
        self.outbox.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The outbox's watch for an idle dispatcher.
    pub(crate) fn outbox_watch(&self) -> domain::store::OutboxWatch {
        domain::store::OutboxWatch {
            changes: self.outbox.subscribe(),
            recheck: OUTBOX_RECHECK,
        }
    }

    /// Appends one claimed event (see [`Self::append_claimed_batch`]): the
    /// write thread already commits the transactions that wait for it
    /// together.
    pub(crate) async fn append_claimed_row(
        &self,
        row: crate::rows::EventRow,
        scope: domain::scope::Scope,
    ) -> StoreResult<Option<domain::webhook::WebhookEndpoint>> {
        let mut endpoints = self.append_claimed_batch(vec![(row, scope)]).await?;
        Ok(endpoints.pop().flatten())
    }

    /// Records one attempt (see [`Self::record_batch`]): the write thread
    /// already commits the transactions that wait for it together.
    pub(crate) async fn record_one(
        &self,
        record: domain::store::AttemptRecord,
        notify: bool,
    ) -> StoreResult<bool> {
        let recorded = self.record_batch(vec![record], notify).await?;
        Ok(<[bool]>::first(&recorded) == Some(&true))
    }

    /// Always `None`: SQLite counts rate limits in memory, so its reads
    /// never carry a hit (see the PostgreSQL backend's).
    pub(crate) async fn group_with_deferred_hit(
        &self,
        _: &domain::scope::Scope,
        _: &domain::ids::GroupId,
    ) -> Option<StoreResult<domain::group::Group>> {
        None
    }
}

/// The longest an idle dispatcher on SQLite sleeps before looking at the
/// outbox again: what another process wrote to the file is not heard.
pub const OUTBOX_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

#[async_trait]
impl RateLimitStore for SqliteStore {
    async fn hit(&self, policy: &Policy, bucket: &str, now: i64) -> StoreResult<Option<u32>> {
        let window = policy.window_start(now);
        let mut map = self
            .windows
            .lock()
            .map_err(|_| StoreError::Internal("rate-limit map poisoned".into()))?;
        if map.len() > 100_000 {
            map.retain(|_, (w, _)| *w >= window.saturating_sub(3600));
        }
        let charge = |entry: &mut (i64, u32)| {
            if entry.0 != window {
                *entry = (window, 0);
            }
            if entry.1 >= policy.limit {
                return None;
            }
            entry.1 += 1;
            Some(entry.1)
        };
        // The bucket's name is copied only the first time it is seen.
        if let Some(entry) = map.get_mut(bucket) {
            return Ok(charge(entry));
        }
        let mut entry = (window, 0);
        let count = charge(&mut entry);
        map.insert(bucket.to_owned(), entry);
        Ok(count)
    }
}
