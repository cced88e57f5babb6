//! The embedded SQLite backend (the default): one file in WAL mode, write
//! transactions begun `IMMEDIATE` so a read-then-write never deadlocks on
//! the upgrade, and an in-process rate limiter (SQLite serves one process).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use diesel::sqlite::SqliteConnection;
use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, QueryResult,
    SelectableHelper,
};
use diesel_async::RunQueryDsl;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use domain::ids::ProcessId;
use domain::rate_limit::Policy;
use domain::store::{Health, RateLimitStore, StoreError, StoreResult};

use crate::Pooled;
use crate::error::pool;
use crate::rows::{EventRow, GroupRow, MemberRow};
use crate::schema::{events, jobs, members};

pub(crate) type Conn = SyncConnectionWrapper<SqliteConnection>;
pub(crate) type Store = SqliteStore;

macro_rules! write_tx {
    ($store:expr, $conn:expr, $body:expr) => {
        async {
            // One writer at a time in this process: SQLite admits one
            // anyway, and queueing here is fair and immediate, where its
            // busy handler polls with sleeps of up to 100 ms.
            let _writer = $store.writer.lock().await;
            $conn.immediate_transaction($body).await
        }
    };
}

/// Whether the nullable `owner_id` column `$col` names `$owner` (an
/// `Option<&str>`; `None` matches a row without an owner).
macro_rules! same_owner {
    ($col:expr, $owner:expr) => {{
        use diesel::SqliteExpressionMethods as _;
        $col.is($owner)
    }};
}

/// One process serves an SQLite file: a process that registers frees
/// everything earlier processes left, at once.
pub(crate) const SOLE_PROCESS: bool = true;

#[path = "ops/census.rs"]
mod census;
#[path = "ops/claims.rs"]
mod claims;
#[path = "ops/documents.rs"]
mod documents;
#[path = "ops/groups.rs"]
mod groups;
#[path = "ops/idempotency.rs"]
mod idempotency;
#[path = "ops/jobs.rs"]
mod jobs_ops;
#[path = "ops/outbox.rs"]
mod outbox;
#[path = "ops/partners.rs"]
mod partners;
#[path = "ops/processes.rs"]
mod processes;
#[path = "ops/quotes.rs"]
mod quotes;
#[path = "ops/webhooks.rs"]
mod webhooks;

/// Pragmas set on every connection: a busy timeout instead of immediate
/// `SQLITE_BUSY` (first, so that switching a new connection to WAL waits
/// for a writer rather than failing), WAL for concurrent readers, enforced
/// foreign keys, and
/// full fsync so a committed write survives a crash or power loss.
pub(crate) const PRAGMAS: &str = "PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; \
     PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;";

/// The SQLite store.
#[derive(Clone)]
pub struct SqliteStore {
    pool: Pool<Conn>,
    windows: Arc<Mutex<HashMap<String, (i64, u32)>>>,
    writer: Arc<tokio::sync::Mutex<()>>,
    owner: Option<ProcessId>,
}

impl SqliteStore {
    /// A store over the database file at `path` (created by the
    /// migrations if absent), with at most `max_connections` connections.
    ///
    /// # Errors
    /// [`StoreError::Internal`] when the pool cannot be built.
    pub fn new(path: &str, max_connections: usize) -> StoreResult<Self> {
        let mut config = ManagerConfig::<Conn>::default();
        config.custom_setup = crate::session_setup::<Conn>(PRAGMAS);
        let manager = AsyncDieselConnectionManager::<Conn>::new_with_config(path, config);
        let pool = Pool::builder(manager)
            .max_size(max_connections.max(1))
            .wait_timeout(Some(std::time::Duration::from_secs(10)))
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .map_err(|e| StoreError::Internal(Box::new(e)))?;
        Ok(Self {
            pool,
            windows: Arc::new(Mutex::new(HashMap::new())),
            writer: Arc::new(tokio::sync::Mutex::new(())),
            owner: None,
        })
    }

    /// The store owned by the serving process `owner` (see
    /// [`crate::Stores::open_owned`]).
    #[must_use]
    pub fn owned_by(self, owner: Option<ProcessId>) -> Self {
        Self { owner, ..self }
    }

    pub(crate) async fn conn(&self) -> StoreResult<Pooled<AsyncDieselConnectionManager<Conn>>> {
        self.pool.get().await.map(Pooled::new).map_err(pool)
    }
}

/// Rows per INSERT statement (at most 16 columns each; under SQLite's
/// 32,766 bind parameters).
const CHUNK: usize = 1_000;

/// Inserts census rows in multi-row statements. diesel-async's wrapper
/// has no SQLite batch insert, so this runs on the inner connection (inside
/// the caller's open transaction).
pub(crate) async fn insert_members(c: &mut Conn, rows: Vec<MemberRow>) -> QueryResult<()> {
    c.spawn_blocking(move |inner| {
        for chunk in rows.chunks(CHUNK) {
            diesel::RunQueryDsl::execute(diesel::insert_into(members::table).values(chunk), inner)?;
        }
        Ok(())
    })
    .await
}

/// Inserts outbox rows (see [`insert_members`]).
pub(crate) async fn insert_events(c: &mut Conn, rows: Vec<EventRow>) -> QueryResult<()> {
    c.spawn_blocking(move |inner| {
        for chunk in rows.chunks(CHUNK) {
            diesel::RunQueryDsl::execute(diesel::insert_into(events::table).values(chunk), inner)?;
        }
        Ok(())
    })
    .await
}

/// Reads a group of the scope inside a write transaction (the IMMEDIATE
/// transaction already excludes other writers).
pub(crate) async fn lock_group_row(
    c: &mut Conn,
    partner: &str,
    mode: &str,
    id: &str,
) -> QueryResult<Option<GroupRow>> {
    crate::schema::groups::table
        .filter(crate::schema::groups::id.eq(id))
        .filter(crate::schema::groups::partner_id.eq(partner))
        .filter(crate::schema::groups::mode.eq(mode))
        .select(GroupRow::as_select())
        .first(c)
        .await
        .optional()
}

/// Picks due deliveries (the IMMEDIATE transaction already excludes other
/// writers).
pub(crate) async fn claim_event_ids(
    c: &mut Conn,
    now_ms: i64,
    limit: i64,
) -> QueryResult<Vec<String>> {
    events::table
        .filter(events::state.eq("pending"))
        .filter(events::next_attempt_at_ms.le(now_ms))
        .filter(
            events::locked_until_ms
                .is_null()
                .or(events::locked_until_ms.le(now_ms)),
        )
        .order(events::next_attempt_at_ms.asc())
        .limit(limit)
        .select(events::id)
        .load(c)
        .await
}

/// Picks the oldest due job of `kinds` — queued and due, or running with an
/// expired lease or a dead owner (`owner_dead!`; `me` is the claimant's
/// owner).
pub(crate) async fn claim_job_id(
    c: &mut Conn,
    kinds: &[&str],
    now_ms: i64,
    me: &str,
) -> QueryResult<Option<String>> {
    jobs::table
        .filter(jobs::kind.eq_any(kinds))
        .filter(
            (jobs::state.eq("queued").and(jobs::run_after_ms.le(now_ms))).or(jobs::state
                .eq("running")
                .and(
                    jobs::locked_until_ms
                        .le(now_ms)
                        .or(owner_dead!(jobs::owner_id, now_ms, me)),
                )),
        )
        .order(jobs::run_after_ms.asc())
        .limit(1)
        .select(jobs::id)
        .first(c)
        .await
        .optional()
}

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
        let entry = map.entry(bucket.to_owned()).or_insert((window, 0));
        if entry.0 != window {
            *entry = (window, 0);
        }
        if entry.1 >= policy.limit {
            return Ok(None);
        }
        entry.1 += 1;
        Ok(Some(entry.1))
    }
}

#[async_trait]
impl Health for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        let mut conn = self.conn().await?;
        diesel::sql_query("SELECT 1")
            .execute(&mut *conn)
            .await
            .map_err(crate::error::unavailable)?;
        Ok(())
    }
}
