//! Diesel persistence adapter: one adapter, two backends.
//!
//! - **SQLite** (the embedded default): one file, WAL, created and migrated
//!   on first start, through `diesel-async`'s sync-connection wrapper.
//! - **PostgreSQL** (several server processes): `diesel-async` with no libpq.
//!
//! Both implement every storage port of `domain::store` with the same
//! query code (`src/ops/*.rs`, compiled once per backend); what differs —
//! how a write transaction begins, row claiming with `SKIP LOCKED`, and the
//! rate-limit counter — lives in `pg.rs` and `sqlite.rs`.
//!
//! **API boundary:** callers see [`Database`], [`Stores`] (the ports as
//! `Arc<dyn …>`), [`migrate`] and [`sealer`]; no diesel type leaves this
//! crate.

// Each `ops/*.rs` file is compiled twice on purpose, once inside `pg` and
// once inside `sqlite`, each time against that backend's connection type.
#![expect(
    clippy::duplicate_mod,
    reason = "the shared query code is compiled once per backend"
)]

/// Narrows a boxed query on `$table` to the rows after `$page`'s cursor,
/// orders it newest first over `(created_at, id)` and fetches one row more
/// than the page, so [`domain::page::Page::from_rows`] can tell whether a
/// further page exists. Shared by every list of both backends.
macro_rules! keyset_page {
    ($query:expr, $table:ident, $page:expr) => {{
        let mut q = $query;
        if let Some(c) = &$page.after {
            q = q.filter(
                $table::created_at.lt(c.created_at).or($table::created_at
                    .eq(c.created_at)
                    .and($table::id.lt(c.id.clone()))),
            );
        }
        q.order(($table::created_at.desc(), $table::id.desc()))
            .limit(i64::from($page.limit) + 1)
    }};
}

/// Whether the process an `$owner` column (nullable `owner_id`) names is
/// presumed dead at `$now_ms`, which abandons the row's in-flight record or
/// job claim: the row has an owner, not `$me` (the store's own, `""` for
/// none: a process knows it is alive), that is not registered or whose last
/// heartbeat is older than [`domain::store::process::OWNER_TIMEOUT_MS`].
/// Shared by both backends.
macro_rules! owner_dead {
    ($owner:expr, $now_ms:expr, $me:expr) => {{
        use diesel::{
            BoolExpressionMethods as _, ExpressionMethods as _, NullableExpressionMethods as _,
            QueryDsl as _,
        };
        use $crate::schema::processes;
        let cutoff = $now_ms.saturating_sub(domain::store::process::OWNER_TIMEOUT_MS);
        $owner.is_not_null().and($owner.ne($me)).and(
            $owner.ne_all(
                processes::table
                    .filter(processes::heartbeat_at_ms.ge(cutoff))
                    .select(processes::id.nullable()),
            ),
        )
    }};
}

/// `write_tx!` for a transaction that appends events or schedules a
/// delivery again: once it commits, the outbox's watchers hear of it (on
/// SQLite through the store; on PostgreSQL the notification is sent at
/// commit, by the `events` trigger or `notify_outbox!`). Shared by both
/// backends.
macro_rules! outbox_tx {
    ($store:expr, $body:expr) => {
        async {
            let out = write_tx!($store, $body).await?;
            $store.outbox_changed();
            Ok::<_, domain::store::StoreError>(out)
        }
    };
}

// What both portals do alike on their parallel account, link and session
// tables (`accounts_by_email!`, `use_link!`, `save_lockout!`,
// `end_session!`, `sessions!`).
#[macro_use]
mod accounts;

/// Declares, inside a backend module, the query code of every port
/// (`src/ops/*.rs`), compiled there against the backend's `Conn` and
/// `Store` with its `write_tx!`, `for_update!`,
/// `skip_locked!` and `insert_all!`.
macro_rules! backend_ops {
    () => {
        #[path = "ops/census.rs"]
        mod census;
        #[path = "ops/claims.rs"]
        mod claims;
        #[path = "ops/documents.rs"]
        mod documents;
        #[path = "ops/embed.rs"]
        mod embed;
        #[path = "ops/groups.rs"]
        mod groups;
        #[path = "ops/idempotency.rs"]
        mod idempotency;
        #[path = "ops/jobs.rs"]
        mod jobs_ops;
        #[path = "ops/locks.rs"]
        mod locks;
        #[path = "ops/onboarding.rs"]
        mod onboarding;
        #[path = "ops/outbox.rs"]
        mod outbox;
        #[path = "ops/partner_user_rows.rs"]
        mod partner_user_rows;
        #[path = "ops/partner_users.rs"]
        mod partner_users;
        #[path = "ops/partners.rs"]
        mod partners;
        #[path = "ops/portal.rs"]
        mod portal;
        #[path = "ops/processes.rs"]
        mod processes;
        #[path = "ops/quotes.rs"]
        mod quotes;
        #[path = "ops/shared.rs"]
        mod shared;
        #[path = "ops/webhooks.rs"]
        mod webhooks;
    };
}

mod error;
pub mod key_cache;
mod listen;
pub mod migrate;
mod pg;
mod rows;
mod schema;
pub mod sealer;
mod sqlite;

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use deadpool::managed::{Manager, Object};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, PoolableConnection, SetupCallback,
};

use domain::ids::ProcessId;
use domain::store::process::ProcessStore;
use domain::store::{
    CensusStore, ClaimsStore, EmbedStore, GroupStore, Health, IdempotencyStore, JobStore,
    OnboardingStore, OutboxStore, PartnerStore, PartnerUserStore, PortalStore, QuoteStore,
    RateLimitStore, StoreError, StoreResult, WebhookStore,
};

pub use pg::PgStore;

/// Whether another group of a mode holds a domain (`$1` mode, `$2`
/// domain, `$3` the group itself). The status list is written into the
/// text, not bound: only a literal list lets either planner match the
/// partial unique index `groups_domain_held` (`WHERE status IN ('enrolled',
/// 'active')`), so a group's creation probes that index instead of
/// scanning the table. Public for the query-plan test.
pub const DOMAIN_HELD: &str = "SELECT COUNT(*) AS n FROM groups \
     WHERE mode = $1 AND domain = $2 AND status IN ('enrolled', 'active') AND id <> $3";
pub use sqlite::SqliteStore;

/// A pooled connection that is discarded, not returned to the pool, when
/// it is dropped in a broken state — above all inside a transaction whose
/// future was cancelled (a dropped request). Closing it makes PostgreSQL
/// roll the transaction back and SQLite release its write lock at once,
/// instead of when the pool next hands the connection out.
pub(crate) struct Pooled<M>(Option<Object<M>>)
where
    M: Manager,
    M::Type: PoolableConnection;

impl<M> Pooled<M>
where
    M: Manager,
    M::Type: PoolableConnection,
{
    /// A connection from `pool`; a pool that cannot give one (the
    /// database out of reach, or the checkout timed out) is unavailable.
    pub(crate) async fn checkout(pool: &deadpool::managed::Pool<M>) -> StoreResult<Self>
    where
        M::Error: std::error::Error + Send + Sync + 'static,
    {
        pool.get()
            .await
            .map(|obj| Self(Some(obj)))
            .map_err(error::pool)
    }
}

impl<M> Deref for Pooled<M>
where
    M: Manager,
    M::Type: PoolableConnection,
{
    type Target = M::Type;

    fn deref(&self) -> &M::Type {
        match &self.0 {
            Some(obj) => obj,
            None => unreachable!("a pooled connection is only taken in drop"),
        }
    }
}

impl<M> DerefMut for Pooled<M>
where
    M: Manager,
    M::Type: PoolableConnection,
{
    fn deref_mut(&mut self) -> &mut M::Type {
        match &mut self.0 {
            Some(obj) => obj,
            None => unreachable!("a pooled connection is only taken in drop"),
        }
    }
}

impl<M> Drop for Pooled<M>
where
    M: Manager,
    M::Type: PoolableConnection,
{
    fn drop(&mut self) {
        if let Some(mut obj) = self.0.take()
            && obj.is_broken()
        {
            drop(Object::take(obj));
        }
    }
}

/// Connection setup that runs `session` (pragmas or `SET`s) on every new
/// pooled connection.
pub(crate) fn session_setup<C>(session: &'static str) -> SetupCallback<C>
where
    C: diesel_async::AsyncConnection + diesel_async::SimpleAsyncConnection + 'static,
{
    Box::new(move |url| {
        let url = url.to_owned();
        Box::pin(async move {
            let mut conn = C::establish(&url).await?;
            conn.batch_execute(session)
                .await
                .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
            Ok(conn)
        })
    })
}

/// A pool of at most `max_connections` connections to `url`, each set up
/// with `session`; `timeouts` bounds opening and recycling a connection
/// (checked out without a test query).
/// Connections open lazily, so this does not fail when the database is
/// down.
fn pool<C>(
    url: &str,
    session: &'static str,
    max_connections: usize,
    timeouts: Option<std::time::Duration>,
) -> StoreResult<deadpool::managed::Pool<AsyncDieselConnectionManager<C>>>
where
    C: diesel_async::AsyncConnection + diesel_async::SimpleAsyncConnection + 'static,
    AsyncDieselConnectionManager<C>: Manager,
{
    let mut config = ManagerConfig::<C>::default();
    config.custom_setup = session_setup::<C>(session);
    // No test query at each checkout: a connection is given out as it is
    // and dropped from the pool once it shows itself broken (an open
    // transaction left behind, or a PostgreSQL socket the server closed);
    // the request that meets a dead connection gets the store's error.
    config.recycling_method = diesel_async::pooled_connection::RecyclingMethod::Fast;
    let manager = AsyncDieselConnectionManager::<C>::new_with_config(url, config);
    deadpool::managed::Pool::builder(manager)
        .max_size(max_connections.max(1))
        .wait_timeout(Some(std::time::Duration::from_secs(10)))
        .create_timeout(timeouts)
        .recycle_timeout(timeouts)
        .runtime(deadpool::Runtime::Tokio1)
        .build()
        .map_err(|e| StoreError::Internal(Box::new(e)))
}

/// Which database a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// An SQLite file.
    Sqlite {
        /// File path.
        path: String,
    },
    /// A PostgreSQL database.
    Postgres {
        /// Connection URL.
        url: String,
    },
}

/// Why a database URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("database_url must be sqlite://PATH (a file) or postgres://…, got a {0}: URL")]
pub struct BadUrl(pub String);

impl Database {
    /// Parses `sqlite://PATH` (relative paths allowed: `sqlite://data/x.sqlite`),
    /// `sqlite:PATH`, `postgres://…` or `postgresql://…`.
    ///
    /// # Errors
    /// [`BadUrl`] for anything else.
    pub fn parse(url: &str) -> Result<Self, BadUrl> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres {
                url: url.to_owned(),
            });
        }
        // `:memory:` would give every pooled connection its own empty
        // database, so only files are accepted.
        let path = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .filter(|p| !p.is_empty() && !p.contains('?') && !p.contains(":memory:"));
        match path {
            Some(p) => Ok(Self::Sqlite { path: p.to_owned() }),
            // Only the scheme is echoed: the rest may hold a password.
            None => Err(BadUrl(
                url.split_once(':')
                    .map_or("", |(scheme, _)| scheme)
                    .to_owned(),
            )),
        }
    }

    /// `sqlite` or `postgres`.
    #[must_use]
    pub fn backend(&self) -> &'static str {
        match self {
            Self::Sqlite { .. } => "sqlite",
            Self::Postgres { .. } => "postgres",
        }
    }
}

/// Every storage port, backed by one database.
#[derive(Clone)]
pub struct Stores {
    /// Partners and keys (found keys answered from memory: see
    /// [`key_cache`]).
    pub partners: Arc<dyn PartnerStore>,
    /// The same, uncached (what [`Stores::sharing_keys`] wraps again).
    raw_partners: Arc<dyn PartnerStore>,
    /// Groups.
    pub groups: Arc<dyn GroupStore>,
    /// Census members.
    pub census: Arc<dyn CensusStore>,
    /// The claims-aggregate ledger.
    pub claims: Arc<dyn ClaimsStore>,
    /// Quotes and enrollments.
    pub quotes: Arc<dyn QuoteStore>,
    /// Onboarding checklists.
    pub onboarding: Arc<dyn OnboardingStore>,
    /// Employer-portal accounts, links and sessions.
    pub portal: Arc<dyn PortalStore>,
    /// Partner-portal users, sessions and the audit log.
    pub partner_users: Arc<dyn PartnerUserStore>,
    /// Embed sessions (the offer iframe).
    pub embed: Arc<dyn EmbedStore>,
    /// The event outbox.
    pub outbox: Arc<dyn OutboxStore>,
    /// Background jobs.
    pub jobs: Arc<dyn JobStore>,
    /// Idempotency records.
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// Rate-limit counters.
    pub rate_limits: Arc<dyn RateLimitStore>,
    /// Health.
    pub health: Arc<dyn Health>,
    /// Webhook endpoints.
    pub webhooks: Arc<dyn WebhookStore>,
    /// The registry of serving processes (the owner's heartbeat).
    pub processes: Arc<dyn ProcessStore>,
}

impl Stores {
    fn from_arc<S>(s: Arc<S>) -> Self
    where
        S: PartnerStore
            + GroupStore
            + CensusStore
            + ClaimsStore
            + QuoteStore
            + OnboardingStore
            + PortalStore
            + PartnerUserStore
            + EmbedStore
            + OutboxStore
            + JobStore
            + IdempotencyStore
            + RateLimitStore
            + Health
            + WebhookStore
            + ProcessStore
            + 'static,
    {
        Self {
            partners: Arc::new(key_cache::Cached::new(
                s.clone(),
                key_cache::KeyCache::default(),
            )),
            raw_partners: s.clone(),
            groups: s.clone(),
            census: s.clone(),
            claims: s.clone(),
            quotes: s.clone(),
            onboarding: s.clone(),
            portal: s.clone(),
            partner_users: s.clone(),
            embed: s.clone(),
            outbox: s.clone(),
            jobs: s.clone(),
            idempotency: s.clone(),
            rate_limits: s.clone(),
            health: s.clone(),
            webhooks: s.clone(),
            processes: s,
        }
    }

    /// Opens the stores for `db` with at most `max_connections` pooled
    /// connections, owned by no process (operator commands, tests): their
    /// in-flight idempotency records and job claims free when their leases
    /// run out. Does not migrate (see [`migrate::run`]) and does not
    /// connect yet: connections open on first use.
    ///
    /// # Errors
    /// When the pool cannot be built.
    pub fn open(db: &Database, max_connections: usize) -> StoreResult<Self> {
        Self::open_with(db, max_connections, None)
    }

    /// As [`Stores::open`], owned by the serving process `owner`: the
    /// in-flight records and job claims they make name it, and free as soon
    /// as it is found dead (see [`domain::store::process`]).
    ///
    /// # Errors
    /// When the pool cannot be built.
    pub fn open_owned(
        db: &Database,
        max_connections: usize,
        owner: &ProcessId,
    ) -> StoreResult<Self> {
        Self::open_with(db, max_connections, Some(owner.clone()))
    }

    /// These stores, answering keys from `cache`, which other stores of
    /// the process share (each PostgreSQL worker opens stores of its own):
    /// a write through any of them then empties the one cache.
    #[must_use]
    pub fn sharing_keys(mut self, cache: &key_cache::KeyCache) -> Self {
        self.partners = Arc::new(key_cache::Cached::new(
            Arc::clone(&self.raw_partners),
            cache.clone(),
        ));
        self
    }

    fn open_with(
        db: &Database,
        max_connections: usize,
        owner: Option<ProcessId>,
    ) -> StoreResult<Self> {
        Ok(match db {
            Database::Sqlite { path } => Self::from_arc(Arc::new(
                SqliteStore::new(path, max_connections)?.owned_by(owner),
            )),
            Database::Postgres { url } => Self::from_arc(Arc::new(
                PgStore::new(url, max_connections)?.owned_by(owner),
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_backend() {
        assert_eq!(
            Database::parse("sqlite://data/partner-api.sqlite"),
            Ok(Database::Sqlite {
                path: "data/partner-api.sqlite".to_owned()
            })
        );
        assert_eq!(
            Database::parse("sqlite:/tmp/x.db"),
            Ok(Database::Sqlite {
                path: "/tmp/x.db".to_owned()
            })
        );
        assert_eq!(
            Database::parse("postgres://u@h/db").map(|d| d.backend()),
            Ok("postgres")
        );
        assert_eq!(
            Database::parse("postgresql://u@h/db").map(|d| d.backend()),
            Ok("postgres")
        );
        for bad in [
            "",
            "sqlite://",
            "mysql://x",
            "data.sqlite",
            "sqlite://x?mode=ro",
        ] {
            assert!(Database::parse(bad).is_err(), "{bad}");
        }
    }
}
