//! The PostgreSQL backend, through `diesel-async` (no libpq): a deadpool
//! of async connections; deliveries and jobs are claimed with
//! `FOR UPDATE SKIP LOCKED`, and rate-limit counters are one atomic upsert,
//! so several server processes can share the database.

use async_trait::async_trait;
use diesel::sql_types::{BigInt, Integer, Text};
use diesel::{
    BoolExpressionMethods, ExpressionMethods, OptionalExtension, QueryDsl, QueryResult,
    QueryableByName, SelectableHelper,
};
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::ids::ProcessId;
use domain::rate_limit::Policy;
use domain::store::{Health, RateLimitStore, StoreResult};

use crate::Pooled;
use crate::error::{db, pool};
use crate::rows::{EventRow, GroupRow, MemberRow};
use crate::schema::{events, jobs, members};

pub(crate) type Conn = AsyncPgConnection;
pub(crate) type Store = PgStore;

macro_rules! write_tx {
    ($store:expr, $conn:expr, $body:expr) => {{
        use diesel_async::AsyncConnection as _;
        let _ = &$store;
        $conn.transaction($body)
    }};
}

/// Whether the nullable `owner_id` column `$col` names `$owner` (an
/// `Option<&str>`; `None` matches a row without an owner).
macro_rules! same_owner {
    ($col:expr, $owner:expr) => {{
        use diesel::PgExpressionMethods as _;
        $col.is_not_distinct_from($owner)
    }};
}

/// Several processes share a PostgreSQL database: registering one frees
/// nothing of the others (their heartbeats tell whether they live).
pub(crate) const SOLE_PROCESS: bool = false;

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

/// Session settings of every connection: a transaction left open (a
/// cancelled request whose connection was not yet discarded) is ended by the
/// server after a minute, and no statement waits on a lock for more than
/// 30 seconds, so a request fails rather than hangs.
const SESSION: &str = "SET idle_in_transaction_session_timeout = '60s'; SET lock_timeout = '30s';";

/// The PostgreSQL store.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool<Conn>,
    owner: Option<ProcessId>,
}

impl PgStore {
    /// A store over a pool of at most `max_connections` connections to
    /// `url`. Connections open lazily, so this does not fail when the
    /// database is down; requests then answer `Unavailable`.
    ///
    /// # Errors
    /// [`domain::store::StoreError::Internal`] when the pool cannot be built.
    pub fn new(url: &str, max_connections: usize) -> StoreResult<Self> {
        let mut config = ManagerConfig::<Conn>::default();
        config.custom_setup = crate::session_setup::<Conn>(SESSION);
        let manager = AsyncDieselConnectionManager::<Conn>::new_with_config(url, config);
        let pool = Pool::builder(manager)
            .max_size(max_connections.max(1))
            .wait_timeout(Some(std::time::Duration::from_secs(10)))
            .create_timeout(Some(std::time::Duration::from_secs(5)))
            .recycle_timeout(Some(std::time::Duration::from_secs(5)))
            .runtime(deadpool::Runtime::Tokio1)
            .build()
            .map_err(|e| domain::store::StoreError::Internal(Box::new(e)))?;
        Ok(Self { pool, owner: None })
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

/// Rows per INSERT statement (at most 16 columns each; well under the
/// 65,535 bind parameters PostgreSQL allows).
const CHUNK: usize = 1_000;

/// Inserts census rows in multi-row statements.
pub(crate) async fn insert_members(c: &mut Conn, rows: Vec<MemberRow>) -> QueryResult<()> {
    for chunk in rows.chunks(CHUNK) {
        diesel::insert_into(members::table)
            .values(chunk)
            .execute(c)
            .await?;
    }
    Ok(())
}

/// Inserts outbox rows.
pub(crate) async fn insert_events(c: &mut Conn, rows: Vec<EventRow>) -> QueryResult<()> {
    for chunk in rows.chunks(CHUNK) {
        diesel::insert_into(events::table)
            .values(chunk)
            .execute(c)
            .await?;
    }
    Ok(())
}

/// Reads a group of the scope inside a write transaction, locking its row
/// until the transaction ends (writers of one group take turns).
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
        .for_update()
        .first(c)
        .await
        .optional()
}

/// Picks and locks due deliveries, skipping rows another claimant holds.
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
        .for_update()
        .skip_locked()
        .load(c)
        .await
}

/// Picks and locks the oldest due job of `kinds` — queued and due, or
/// running with an expired lease or a dead owner (`owner_dead!`; `me` is
/// the claimant's owner) — skipping locked rows.
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
        .for_update()
        .skip_locked()
        .first(c)
        .await
        .optional()
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = Integer)]
    count: i32,
}

#[async_trait]
impl RateLimitStore for PgStore {
    async fn hit(&self, policy: &Policy, bucket: &str, now: i64) -> StoreResult<Option<u32>> {
        let window = policy.window_start(now);
        let limit = i32::try_from(policy.limit).unwrap_or(i32::MAX);
        let mut conn = self.conn().await?;
        // One statement: insert the window's first hit, or count one more
        // unless the limit is reached (then no row comes back).
        let row: Option<Count> = diesel::sql_query(
            "INSERT INTO rate_limits (bucket, window_start, count) VALUES ($1, $2, 1) \
             ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limits.count + 1 \
             WHERE rate_limits.count < $3 RETURNING count",
        )
        .bind::<Text, _>(bucket)
        .bind::<BigInt, _>(window)
        .bind::<Integer, _>(limit)
        .get_result(&mut *conn)
        .await
        .optional()
        .map_err(db)?;
        if row.as_ref().is_some_and(|r| r.count == 1) {
            // A new window began: drop this bucket's old ones.
            diesel::sql_query("DELETE FROM rate_limits WHERE bucket = $1 AND window_start < $2")
                .bind::<Text, _>(bucket)
                .bind::<BigInt, _>(window)
                .execute(&mut *conn)
                .await
                .map_err(db)?;
        }
        Ok(row.and_then(|r| u32::try_from(r.count).ok()))
    }
}

#[async_trait]
impl Health for PgStore {
    async fn ping(&self) -> StoreResult<()> {
        let mut conn = self.conn().await?;
        diesel::sql_query("SELECT 1")
            .execute(&mut *conn)
            .await
            .map_err(crate::error::unavailable)?;
        Ok(())
    }
}
