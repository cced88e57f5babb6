//! The port of the employer portal's accounts, set-password links and
//! sessions (onboarding §3).

use async_trait::async_trait;

use crate::ids::EnrollmentId;
use crate::job::NewJob;
use crate::portal::{
    LinkUse, Lockout, NewLink, NewSession, PortalAccount, StoredLink, StoredSession,
};
use crate::scope::Scope;
use crate::store::StoreResult;

/// Portal accounts, links and sessions.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PortalStore: Send + Sync {
    /// Stores a new link of the scope's enrollment, creating its account on
    /// the first link, with `jobs` (the email that carries it). Older
    /// unused links of the account stop working.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such
    /// enrollment and [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when the digest exists.
    async fn insert_link(&self, scope: &Scope, link: &NewLink, jobs: &[NewJob]) -> StoreResult<()>;

    /// The enrollment's newest link, used or not.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn newest_link(
        &self,
        scope: &Scope,
        enrollment: &EnrollmentId,
    ) -> StoreResult<Option<StoredLink>>;

    /// The link whose token has the digest `token_hash`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn link(&self, token_hash: &str) -> StoreResult<Option<StoredLink>>;

    /// Uses the link: marks it used at `now`, sets the account's password
    /// hash, clears its lockout, ends every session of the account and the
    /// visitor's session the use replaces, and starts `session`.
    ///
    /// # Errors
    /// MUST return [`Conflict::LinkUsed`](crate::store::Conflict::LinkUsed) (nothing written) when the link
    /// was used or is no longer the newest, and
    /// [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown digest.
    async fn use_link(&self, link: &LinkUse, session: &NewSession, now: i64) -> StoreResult<()>;

    /// The accounts with this normalized address that have a password.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn accounts_by_email(&self, email: &str) -> StoreResult<Vec<PortalAccount>>;

    /// The account of an enrollment of the scope, if it has one.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn account(
        &self,
        scope: &Scope,
        enrollment: &EnrollmentId,
    ) -> StoreResult<Option<PortalAccount>>;

    /// Stores an account's failed sign-ins and lock, with `jobs` (the
    /// lockout email).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown account.
    async fn save_lockout(
        &self,
        enrollment: &EnrollmentId,
        lockout: &Lockout,
        jobs: &[NewJob],
    ) -> StoreResult<()>;

    /// Starts a session, ending the session `replaces` (a new id at
    /// sign-in).
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when the digest exists.
    async fn start_session(
        &self,
        session: &NewSession,
        replaces: Option<String>,
    ) -> StoreResult<()>;

    /// The session whose id has the digest `id_hash`, with its account.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn session(&self, id_hash: &str) -> StoreResult<Option<StoredSession>>;

    /// Records a request of the session at `now`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn touch_session(&self, id_hash: &str, now: i64) -> StoreResult<()>;

    /// Ends a session (sign-out).
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn end_session(&self, id_hash: &str) -> StoreResult<()>;

    /// Deletes the sessions last seen before `idle_before` or started
    /// before `started_before`; returns how many.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn purge_sessions(&self, idle_before: i64, started_before: i64) -> StoreResult<u64>;
}
