//! The port of the partner portal's users, their links, two-factor
//! secrets and recovery codes, sessions and the audit log
//! (partner-portal §1).

use async_trait::async_trait;

use crate::ids::{PartnerId, UserId};
use crate::job::NewJob;
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::partner_user::{
    AuditEntry, NewUser, NewUserSession, PartnerUser, StoredUserLink, TotpEnrolment, UserLink,
    UserSession,
};
use crate::portal::{LinkUse, Lockout};
use crate::store::StoreResult;

/// Partner users, links, sessions and the audit log.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PartnerUserStore: Send + Sync {
    /// Stores a new user with its first link, and `audit`.
    ///
    /// # Errors
    /// MUST return [`Conflict::UserTaken`](crate::store::Conflict::UserTaken) when the partner has a user
    /// with the address, [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown
    /// partner and [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) for a taken id or digest.
    async fn insert_user(
        &self,
        user: &NewUser,
        link: &UserLink,
        audit: Option<AuditEntry>,
    ) -> StoreResult<()>;

    /// Stores a new link of an existing user; its older links stop
    /// working.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown user.
    async fn insert_link(&self, link: &UserLink) -> StoreResult<()>;

    /// The partner's users, oldest first.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn users(&self, partner: &PartnerId) -> StoreResult<Vec<PartnerUser>>;

    /// One user of the partner, by id or by address.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the partner has no
    /// such user.
    async fn user(&self, partner: &PartnerId, id_or_email: &str) -> StoreResult<PartnerUser>;

    /// Removes a user: its sessions and links end with it; `audit` is
    /// written in the same transaction.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown user.
    async fn remove_user(
        &self,
        partner: &PartnerId,
        user: &UserId,
        audit: Option<AuditEntry>,
    ) -> StoreResult<()>;

    /// The link whose token has this digest, with its user.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn link(&self, token_hash: &str) -> StoreResult<Option<StoredUserLink>>;

    /// Uses a link: marks it used, sets the password hash, clears the
    /// lockout, ends every session of the user and the visitor's session
    /// the use replaces, starts `session` and writes `audit`.
    ///
    /// # Errors
    /// MUST return [`Conflict::LinkUsed`](crate::store::Conflict::LinkUsed) (nothing written) when the link
    /// was used or superseded meanwhile.
    async fn use_link(
        &self,
        link: &LinkUse,
        session: &NewUserSession,
        audit: AuditEntry,
    ) -> StoreResult<()>;

    /// The users of every partner with this normalized address.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn users_by_email(&self, email: &str) -> StoreResult<Vec<PartnerUser>>;

    /// Stores a user's failed sign-ins and lock with `jobs` (the lockout
    /// email) and `audit`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown user.
    async fn save_lockout(
        &self,
        user: &UserId,
        lockout: &Lockout,
        jobs: &[NewJob],
        audit: Option<AuditEntry>,
    ) -> StoreResult<()>;

    /// Enrols an authenticator: its sealed secret with the digests of its
    /// recovery codes (replacing any earlier ones), accepting the
    /// confirming code's step; writes `audit`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown user.
    async fn enrol_totp(
        &self,
        user: &UserId,
        enrolment: &TotpEnrolment,
        audit: AuditEntry,
    ) -> StoreResult<()>;

    /// Records that a code of `step` was accepted; `false` (nothing
    /// written) when a code of this step or a later one was accepted
    /// already.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn accept_step(&self, user: &UserId, step: i64) -> StoreResult<bool>;

    /// Uses one recovery code of the user; `false` when it is unknown or
    /// used.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn use_recovery_code(&self, user: &UserId, digest: &str, now: i64) -> StoreResult<bool>;

    /// How many unused recovery codes the user has.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn recovery_codes_left(&self, user: &UserId) -> StoreResult<u64>;

    /// Starts a session, ending the session `replaces`, with `audit`.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when the digest exists.
    async fn start_session(
        &self,
        session: &NewUserSession,
        replaces: Option<String>,
        audit: Option<AuditEntry>,
    ) -> StoreResult<()>;

    /// The session of this digest, with its user.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn session(&self, id_hash: &str) -> StoreResult<Option<UserSession>>;

    /// Records a request of the session at `now`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn touch_session(&self, id_hash: &str, now: i64) -> StoreResult<()>;

    /// Sets the mode the session's pages show.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn set_session_mode(&self, id_hash: &str, mode: Mode) -> StoreResult<()>;

    /// Ends a session.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn end_session(&self, id_hash: &str) -> StoreResult<()>;

    /// Deletes sessions last seen before `idle_before` or started before
    /// `started_before`; returns how many.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn purge_user_sessions(&self, idle_before: i64, started_before: i64) -> StoreResult<u64>;

    /// Appends an audit entry.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn audit(&self, entry: &AuditEntry) -> StoreResult<()>;

    /// The partner's audit log, newest first.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn audit_log(
        &self,
        partner: &PartnerId,
        page: &PageRequest,
    ) -> StoreResult<Page<AuditEntry>>;

    /// Deletes audit entries older than `before_ms`; returns how many.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn purge_audit(&self, before_ms: i64) -> StoreResult<u64>;
}
