//! The PostgreSQL backend, through `diesel-async` (no libpq): a deadpool
//! of async connections; deliveries and jobs are claimed with
//! `FOR UPDATE SKIP LOCKED`, and a rate-limit hit is one prepared statement
//! (the `rate_limit_hit` function: an atomic upsert),
//! so several server processes can share the database.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use domain::ids::ProcessId;
use domain::rate_limit::Policy;
use domain::store::{RateLimitStore, StoreResult};

pub(crate) type Conn = AsyncPgConnection;
pub(crate) type Store = PgStore;

/// A future running `$body` (an `async |c: &mut Conn|` closure) in one
/// transaction on a connection of `$store`'s pool; its output is a
/// `StoreResult`.
macro_rules! write_tx {
    ($store:expr, $body:expr) => {
        async {
            use diesel_async::AsyncConnection as _;
            let mut conn = $store.conn().await?;
            let conn: &mut Conn = &mut conn;
            Ok::<_, domain::store::StoreError>(conn.transaction($body).await?)
        }
    };
}

/// A future running `$body` (an `async |c: &mut Conn|` closure) as a write
/// of its own on a pooled connection: one statement, which PostgreSQL
/// commits by itself. Its output is a `StoreResult`.
macro_rules! autocommit {
    ($store:expr, $body:expr) => {
        autocommit_on!($store.conn(), $body)
    };
}

/// `$body` on the connection `$conn` (a future of one) gives, outside a
/// transaction: [`autocommit!`] and [`unflushed_autocommit!`].
macro_rules! autocommit_on {
    ($conn:expr, $body:expr) => {
        async {
            let mut conn = $conn.await?;
            let conn: &mut Conn = &mut conn;
            let out: Result<_, $crate::error::TxError> = ($body)(conn).await;
            Ok::<_, domain::store::StoreError>(out?)
        }
    };
}

/// [`autocommit!`] on a connection whose commit does not wait for the WAL
/// flush ([`COUNTER_SESSION`]), for a write whose loss in a crash of the
/// database server is harmless: nothing relies on it being durable before
/// a later write is, and every later write's flush takes it along (the WAL
/// reaches the disk in order). The begin of an idempotent request: its
/// in-flight record is seen by every process at its commit, and it
/// outlives a crash once the request's change (or its stored answer) is
/// flushed; before that, the change is lost with it and a retry executes.
macro_rules! unflushed_autocommit {
    ($store:expr, $body:expr) => {
        autocommit_on!($store.counter_conn(), $body)
    };
}

/// A write of many rows: a [`write_tx!`] (see the SQLite backend's).
macro_rules! bulk_write_tx {
    ($store:expr, $body:expr) => {
        write_tx!($store, $body)
    };
}

/// A read that can be large, as it is (see the SQLite backend's).
macro_rules! offload {
    ($body:expr) => {
        $body
    };
}

/// The first row of `$query` on `$conn`, as a `QueryResult` (see the
/// SQLite backend's).
macro_rules! first_row {
    ($conn:expr, $query:expr) => {
        diesel_async::RunQueryDsl::first($query, $conn).await
    };
}

/// Tells the outbox's watchers in every process, at commit: `NOTIFY` on
/// [`OUTBOX_CHANNEL`] inside the transaction `$conn` is in.
macro_rules! notify_outbox {
    ($conn:expr) => {{
        diesel::sql_query(format!("NOTIFY {}", $crate::pg::OUTBOX_CHANNEL))
            .execute($conn)
            .await?;
    }};
}

/// A read of rows the write transaction will change, locking them until
/// it ends (writers of one row take turns).
macro_rules! for_update {
    ($query:expr) => {
        $query.for_update()
    };
}

/// A claim's read of due rows, locking them and skipping rows another
/// claimant holds.
macro_rules! skip_locked {
    ($query:expr) => {
        $query.for_update().skip_locked()
    };
}

/// Inserts `$rows` into `$table` in statements of `CHUNK` rows; as the
/// whole body of a function returning `QueryResult<()>`.
macro_rules! insert_all {
    ($conn:expr, $table:expr, $rows:expr) => {{
        for chunk in $rows.chunks(CHUNK) {
            diesel::insert_into($table)
                .values(chunk)
                .execute($conn)
                .await?;
        }
        Ok(())
    }};
}

/// The census members' columns, as [`insert_members!`] writes them.
pub(crate) const MEMBER_COLUMNS: &str = "id, group_id, partner_id, mode, external_id, email_key, \
     position, data, created_at, updated_at, enrollment_status, invitation_status, tier, \
     effective_date, termination_date, cobra_deadline, status";

/// Inserts a census's members (`Vec<MemberRow>`) in one statement: the
/// rows as one JSON array that `json_populate_recordset` turns into
/// `members` rows, which the server parses once, where a multi-row
/// `VALUES` binds 17 parameters a row, chunk after chunk.
macro_rules! insert_members {
    ($conn:expr, $rows:expr) => {{
        let rows: Vec<$crate::rows::MemberRow> = $rows;
        if rows.is_empty() {
            Ok(())
        } else {
            let json = serde_json::to_string(&rows)
                .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
            let columns = $crate::pg::MEMBER_COLUMNS;
            diesel::sql_query(format!(
                "INSERT INTO members ({columns}) SELECT {columns} \
                 FROM json_populate_recordset(NULL::members, $1::json)"
            ))
            .bind::<diesel::sql_types::Text, _>(json)
            .execute($conn)
            .await
            .map(drop)
        }
    }};
}

/// `QueryId` and `Query` (rows read by name) for `$statement<'_>`, a
/// statement whose SQL text is fixed: diesel prepares it once per
/// connection, where `sql_query` would prepare it again each time.
macro_rules! prepared_once {
    ($statement:ident) => {
        impl diesel::query_builder::QueryId for $statement<'_> {
            type QueryId = $statement<'static>;
            const HAS_STATIC_QUERY_ID: bool = true;
        }

        impl diesel::query_builder::Query for $statement<'_> {
            type SqlType = diesel::sql_types::Untyped;
        }
    };
}

/// Several processes share a PostgreSQL database: registering one frees
/// nothing of the others (their heartbeats tell whether they live).
pub(crate) const SOLE_PROCESS: bool = false;

backend_ops!();

mod batch;
mod hits;
mod recorded;
mod writes;

pub(crate) use recorded::mark_in_one_statement;

/// Session settings of every connection: a transaction left open (a
/// cancelled request whose connection was not yet discarded) is ended by the
/// server after a minute, and no statement waits on a lock for more than
/// 30 seconds, so a request fails rather than hangs.
const SESSION: &str = "SET idle_in_transaction_session_timeout = '60s'; SET lock_timeout = '30s';";

/// [`SESSION`], for the connections the rate-limit hits go on (`hits`)
/// and idempotent requests' begins (`unflushed_autocommit!`), with their
/// commits asynchronous: a hit is counted, and seen by every process, at
/// its commit as before, but the commit does not wait for the WAL to reach
/// the disk, so a request does not wait for a flush before its handler
/// runs. Only a crash of the database server itself can lose what was
/// committed in the last fraction of a second (its WAL writer flushes
/// within 200 ms): counts of a minute's window, and in-flight records
/// whose request has flushed nothing yet. Nothing else is written on these
/// connections.
const COUNTER_SESSION: &str = "SET idle_in_transaction_session_timeout = '60s'; \
    SET lock_timeout = '30s'; SET synchronous_commit = off;";

/// Connections of the hits (one batch is sent at a time) and the begins.
const COUNTER_CONNECTIONS: usize = 4;

/// The PostgreSQL store.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool<Conn>,
    /// The connections of the rate-limit hits and the idempotency begins
    /// ([`COUNTER_SESSION`]).
    counters: Pool<Conn>,
    owner: Option<ProcessId>,
    /// The database's URL, for the outbox listener's own connection.
    url: Arc<str>,
    /// The outbox listener, started by the first watch.
    listener: Arc<OnceLock<Listener>>,
    /// Rate-limit hits waiting for their statement.
    hits: Arc<hits::Hits>,
    /// Webhook writes (claimed events, attempts) waiting for their
    /// transaction.
    writes: Arc<writes::Writes>,
}

impl PgStore {
    /// A store over a pool of at most `max_connections` connections to
    /// `url`. Connections open lazily, so this does not fail when the
    /// database is down; requests then answer `Unavailable`.
    ///
    /// # Errors
    /// [`domain::store::StoreError::Internal`] when the pool cannot be built.
    pub fn new(url: &str, max_connections: usize) -> StoreResult<Self> {
        let timeout = Some(std::time::Duration::from_secs(5));
        Ok(Self {
            pool: crate::pool::<Conn>(url, SESSION, max_connections, timeout)?,
            counters: crate::pool::<Conn>(url, COUNTER_SESSION, COUNTER_CONNECTIONS, timeout)?,
            owner: None,
            url: Arc::from(url),
            listener: Arc::new(OnceLock::new()),
            hits: hits::hits(),
            writes: writes::writes(),
        })
    }

    /// A connection whose commits do not wait for the WAL flush
    /// ([`COUNTER_SESSION`]): the rate-limit hits' and
    /// `unflushed_autocommit!`'s.
    pub(crate) async fn counter_conn(
        &self,
    ) -> StoreResult<
        crate::Pooled<diesel_async::pooled_connection::AsyncDieselConnectionManager<Conn>>,
    > {
        crate::Pooled::checkout(&self.counters).await
    }

    /// Nothing: on PostgreSQL the watchers hear through `NOTIFY`, sent at
    /// commit by the `events_appended` trigger or `notify_outbox!`.
    #[allow(clippy::unused_self)]
    pub(crate) fn outbox_changed(&self) {}

    /// The outbox's watch for an idle dispatcher: the first one starts a
    /// connection that `LISTEN`s on [`OUTBOX_CHANNEL`] for as long as the
    /// store lives (on the runtime it was asked on; outside a runtime
    /// there is none, and only the recheck wakes the dispatcher).
    pub(crate) fn outbox_watch(&self) -> domain::store::OutboxWatch {
        let listener = self.listener.get_or_init(|| {
            let (tx, changes) = tokio::sync::watch::channel(0);
            let (stop, stopped) = tokio::sync::oneshot::channel();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(crate::listen::run(Arc::clone(&self.url), tx, stopped));
            }
            Listener {
                changes,
                _stop: stop,
            }
        });
        domain::store::OutboxWatch {
            changes: listener.changes.clone(),
            recheck: OUTBOX_RECHECK,
        }
    }
}

/// The channel the outbox's notifications go on (the `events_appended`
/// trigger of the migrations names it too).
pub(crate) const OUTBOX_CHANNEL: &str = "partner_api_outbox";

/// The longest an idle dispatcher on PostgreSQL sleeps before looking at
/// the outbox again: a notification is lost only while the listener
/// reconnects (it wakes the dispatchers when it is back), so this is a
/// safety net, not a poll.
pub const OUTBOX_RECHECK: std::time::Duration = std::time::Duration::from_secs(60);

/// A started outbox listener: its changes, and the sender whose drop (with
/// the last clone of the store) stops it.
struct Listener {
    changes: tokio::sync::watch::Receiver<u64>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

#[async_trait]
impl RateLimitStore for PgStore {
    async fn hit(&self, policy: &Policy, bucket: &str, now: i64) -> StoreResult<Option<u32>> {
        let window = policy.window_start(now);
        let limit = i32::try_from(policy.limit).unwrap_or(i32::MAX);
        // With the hits of this process's other requests (see `hits`).
        self.count_hit(bucket, window, limit).await
    }

    fn folds_hits_into_reads(&self) -> bool {
        true
    }
}
