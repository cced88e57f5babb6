//! The credential steps both portals take, written once: whether a link
//! may set a password, checking and hashing a new password, finding the
//! account a password opens (every failure as slow as a success), what a
//! session cookie is worth now, and counting a failed sign-in against the
//! source address.

use std::sync::Arc;

use crate::error::FieldError;
use crate::partner_user::UserSession;
use crate::portal::{
    LinkState, Lockout, StoredSession, TOUCH_EVERY_SECS, digest, password_errors, session_live,
};
use crate::ports::PasswordHasher;
use crate::rate_limit::Policy;
use crate::services::portal::NewPassword;
use crate::services::{PortalRefusal, ServiceError};
use crate::store::{PartnerUserStore, PortalStore, RateLimitStore, StoreResult};

/// What both portals' passwords need: the hasher, and the failed-auth
/// counters per source address with their policy.
#[derive(Clone)]
pub struct Credentials {
    /// Argon2id.
    pub hasher: Arc<dyn PasswordHasher>,
    /// The per-address failed-auth counters.
    pub rate_limits: Arc<dyn RateLimitStore>,
    /// The failed-auth policy (`rate_limits.failed_auth_per_minute`).
    pub failed_auth: Policy,
}

/// Refuses a link that cannot set a password.
///
/// # Errors
/// [`PortalRefusal::LinkExpired`] or [`PortalRefusal::LinkUsed`].
pub(crate) fn usable(state: LinkState) -> Result<(), ServiceError> {
    match state {
        LinkState::Usable => Ok(()),
        LinkState::Expired => Err(PortalRefusal::LinkExpired.into()),
        LinkState::Used | LinkState::Unknown => Err(PortalRefusal::LinkUsed.into()),
    }
}

impl Credentials {
    /// Checks the set-password form of the account `email` against the
    /// policy and hashes the password (Argon2id).
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] (`password`, `password_confirmation`).
    pub(crate) async fn new_password_hash(
        &self,
        form: &NewPassword<'_>,
        email: &str,
    ) -> Result<String, ServiceError> {
        let mut errors = password_errors(form.password, email);
        if form.password != form.confirmation {
            errors.push(FieldError::new(
                "password_confirmation",
                "must match the password",
            ));
        }
        if !errors.is_empty() {
            return Err(ServiceError::Invalid(errors));
        }
        self.hasher
            .hash(form.password)
            .await
            .map_err(|e| ServiceError::Internal(e.into()))
    }

    /// The first of `accounts` whose password is `password`, skipping those
    /// without a password or locked at `now`. When no account could be
    /// checked, a check against nothing still runs, so that timing tells
    /// nothing either.
    pub(crate) async fn opened_by<'a, T>(
        &self,
        accounts: &'a [T],
        password: &str,
        now: i64,
        credentials: impl Fn(&T) -> (Option<&str>, &Lockout),
    ) -> Option<&'a T> {
        let mut checked = false;
        for account in accounts {
            let (Some(phc), lockout) = credentials(account) else {
                continue;
            };
            if lockout.locked(now) {
                continue;
            }
            checked = true;
            if self.hasher.verify(password, phc).await {
                return Some(account);
            }
        }
        if !checked {
            let _ = self.hasher.verify(password, "").await;
        }
        None
    }

    /// Counts a failed sign-in against the source address's failed-auth
    /// limit: [`PortalRefusal::SignInFailed`] while under it,
    /// [`PortalRefusal::TooManyAttempts`] over it.
    pub(crate) async fn count_failed_auth(
        &self,
        source: Option<&str>,
        now: i64,
    ) -> Result<PortalRefusal, ServiceError> {
        let Some(source) = source else {
            return Ok(PortalRefusal::SignInFailed);
        };
        let policy = &self.failed_auth;
        let count = self
            .rate_limits
            .hit(policy, &policy.bucket(source), now)
            .await?;
        let decision = policy.decide(count, now);
        Ok(if decision.allowed {
            PortalRefusal::SignInFailed
        } else {
            PortalRefusal::TooManyAttempts {
                retry_after_secs: u32::try_from(decision.reset_secs).unwrap_or(u32::MAX),
            }
        })
    }
}

/// What a stored session is worth at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// It works; `touch` when its `seen_at` should be written again.
    Live {
        /// Write `seen_at` (at most once a minute).
        touch: bool,
    },
    /// Idle or too old: end it.
    Ended,
}

/// The session rows a portal keeps, as [`live_session`] reads them.
pub(crate) trait SessionRows: Sync {
    /// A stored session.
    type Session: Send;
    /// When `session` started and when it was last seen.
    fn clocks(session: &Self::Session) -> (i64, i64);
    /// The session stored under `hash`.
    async fn find(&self, hash: &str) -> StoreResult<Option<Self::Session>>;
    /// Writes its `seen_at`.
    async fn touch(&self, hash: &str, now: i64) -> StoreResult<()>;
    /// Ends it.
    async fn end(&self, hash: &str) -> StoreResult<()>;
}

impl SessionRows for dyn PortalStore {
    type Session = StoredSession;
    fn clocks(s: &StoredSession) -> (i64, i64) {
        (s.created_at, s.seen_at)
    }
    async fn find(&self, hash: &str) -> StoreResult<Option<StoredSession>> {
        self.session(hash).await
    }
    async fn touch(&self, hash: &str, now: i64) -> StoreResult<()> {
        self.touch_session(hash, now).await
    }
    async fn end(&self, hash: &str) -> StoreResult<()> {
        self.end_session(hash).await
    }
}

impl SessionRows for dyn PartnerUserStore {
    type Session = UserSession;
    fn clocks(s: &UserSession) -> (i64, i64) {
        (s.created_at, s.seen_at)
    }
    async fn find(&self, hash: &str) -> StoreResult<Option<UserSession>> {
        self.session(hash).await
    }
    async fn touch(&self, hash: &str, now: i64) -> StoreResult<()> {
        self.touch_session(hash, now).await
    }
    async fn end(&self, hash: &str) -> StoreResult<()> {
        self.end_session(hash).await
    }
}

/// The live session of `cookie` at `now`, if any: an idle or too old one
/// is ended, a live one touched once a minute.
///
/// # Errors
/// Store failures.
pub(crate) async fn live_session<S: SessionRows + ?Sized>(
    store: &S,
    cookie: Option<&str>,
    now: i64,
) -> Result<Option<S::Session>, ServiceError> {
    let Some(cookie) = cookie.filter(|c| !c.is_empty()) else {
        return Ok(None);
    };
    let hash = digest(cookie);
    let Some(s) = store.find(&hash).await? else {
        return Ok(None);
    };
    let (created_at, seen_at) = S::clocks(&s);
    match fate(created_at, seen_at, now) {
        Fate::Live { touch } => {
            if touch {
                store.touch(&hash, now).await?;
            }
            Ok(Some(s))
        }
        Fate::Ended => {
            store.end(&hash).await?;
            Ok(None)
        }
    }
}

/// The fate of a session started at `created_at` and last seen at
/// `seen_at`.
pub(crate) const fn fate(created_at: i64, seen_at: i64, now: i64) -> Fate {
    if session_live(created_at, seen_at, now) {
        Fate::Live {
            touch: now.saturating_sub(seen_at) >= TOUCH_EVERY_SECS,
        }
    } else {
        Fate::Ended
    }
}
