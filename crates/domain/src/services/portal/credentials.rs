//! The credential steps both portals take, written once: what a
//! set-password link is worth, accepting one with a new password (checked
//! and hashed), finding the account a password opens (every failure as
//! slow as a success), what a session cookie is worth now, and counting a
//! failed sign-in against the source address.

use std::sync::Arc;

use crate::error::FieldError;
use crate::partner_user::{StoredUserLink, UserSession};
use crate::portal::{
    LinkState, LinkUse, Lockout, StoredLink, StoredSession, TOUCH_EVERY_SECS, digest,
    password_errors, session_live,
};
use crate::ports::PasswordHasher;
use crate::rate_limit::Policy;
use crate::services::portal::NewPassword;
use crate::services::{PortalRefusal, ServiceError};
use crate::store::{
    Conflict, PartnerUserStore, PortalStore, RateLimitStore, StoreError, StoreResult,
};

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
fn usable(state: LinkState) -> Result<(), ServiceError> {
    match state {
        LinkState::Usable => Ok(()),
        LinkState::Expired => Err(PortalRefusal::LinkExpired.into()),
        LinkState::Used | LinkState::Unknown => Err(PortalRefusal::LinkUsed.into()),
    }
}

/// What the link of `token` is worth at `now`, with its account's address
/// when it can be used.
///
/// # Errors
/// Store failures.
pub(crate) async fn link_worth<S: PortalRows + ?Sized>(
    store: &S,
    token: &str,
    now: i64,
) -> Result<(LinkState, Option<String>), ServiceError> {
    Ok(match store.find_link(&digest(token)).await? {
        None => (LinkState::Unknown, None),
        Some(l) => {
            let state = S::link_state(&l, now);
            (
                state,
                (state == LinkState::Usable).then(|| S::link_email(&l).to_owned()),
            )
        }
    })
}

/// A set-password form accepted: its link, and the use of it ready for
/// the store's `use_link`.
pub(crate) struct AcceptedLink<L> {
    /// The link, with its account.
    pub link: L,
    /// The token's digest, the new password's hash and the visitor's
    /// session the signed-in one replaces.
    pub using: LinkUse,
}

/// The store's answer to `use_link`, its conflict (the link used
/// meanwhile) turned into the portal's refusal.
///
/// # Errors
/// [`PortalRefusal::LinkUsed`]; other store failures.
pub(crate) fn link_used(result: StoreResult<()>) -> Result<(), ServiceError> {
    match result {
        Ok(()) => Ok(()),
        Err(StoreError::Conflict(Conflict::LinkUsed)) => Err(PortalRefusal::LinkUsed.into()),
        Err(e) => Err(e.into()),
    }
}

impl Credentials {
    /// Accepts a set-password form sent from the session `visitor`: its
    /// link, read from `store`, must be able to set a password at `now`,
    /// and the password must pass the policy for the link's account; it is
    /// hashed then.
    ///
    /// # Errors
    /// [`PortalRefusal::LinkUnknown`], [`PortalRefusal::LinkExpired`] or
    /// [`PortalRefusal::LinkUsed`]; [`ServiceError::Invalid`] (`password`,
    /// `password_confirmation`) for a refused password.
    pub(crate) async fn accept_link<S: PortalRows + ?Sized>(
        &self,
        store: &S,
        form: &NewPassword<'_>,
        visitor: Option<&str>,
        now: i64,
    ) -> Result<AcceptedLink<S::Link>, ServiceError> {
        let token_hash = digest(form.token);
        let link = store
            .find_link(&token_hash)
            .await?
            .ok_or(PortalRefusal::LinkUnknown)?;
        usable(S::link_state(&link, now))?;
        let password_hash = self.new_password_hash(form, S::link_email(&link)).await?;
        Ok(AcceptedLink {
            link,
            using: LinkUse {
                token_hash,
                password_hash,
                replaces: visitor.map(digest),
            },
        })
    }

    /// Checks the set-password form of the account `email` against the
    /// policy and hashes the password (Argon2id).
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] (`password`, `password_confirmation`).
    async fn new_password_hash(
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

/// The session and link rows a portal keeps, as [`live_session`],
/// [`link_worth`] and [`Credentials::accept_link`] read them.
pub(crate) trait PortalRows: Sync {
    /// A stored session.
    type Session: Send;
    /// A stored set-password link with its account.
    type Link: Send;
    /// When `session` started and when it was last seen.
    fn clocks(session: &Self::Session) -> (i64, i64);
    /// The session stored under `hash`.
    async fn find(&self, hash: &str) -> StoreResult<Option<Self::Session>>;
    /// Writes its `seen_at`.
    async fn touch(&self, hash: &str, now: i64) -> StoreResult<()>;
    /// Ends it.
    async fn end(&self, hash: &str) -> StoreResult<()>;
    /// The link's state at `now`.
    fn link_state(link: &Self::Link, now: i64) -> LinkState;
    /// The address of the link's account.
    fn link_email(link: &Self::Link) -> &str;
    /// The link whose token has the digest `hash`.
    async fn find_link(&self, hash: &str) -> StoreResult<Option<Self::Link>>;
}

impl PortalRows for dyn PortalStore {
    type Session = StoredSession;
    type Link = StoredLink;
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
    fn link_state(l: &StoredLink, now: i64) -> LinkState {
        l.state(now)
    }
    fn link_email(l: &StoredLink) -> &str {
        &l.account.email
    }
    async fn find_link(&self, hash: &str) -> StoreResult<Option<StoredLink>> {
        self.link(hash).await
    }
}

impl PortalRows for dyn PartnerUserStore {
    type Session = UserSession;
    type Link = StoredUserLink;
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
    fn link_state(l: &StoredUserLink, now: i64) -> LinkState {
        l.state(now)
    }
    fn link_email(l: &StoredUserLink) -> &str {
        &l.user.email
    }
    async fn find_link(&self, hash: &str) -> StoreResult<Option<StoredUserLink>> {
        self.link(hash).await
    }
}

/// The live session of `cookie` at `now`, if any: an idle or too old one
/// is ended, a live one touched once a minute.
///
/// # Errors
/// Store failures.
pub(crate) async fn live_session<S: PortalRows + ?Sized>(
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
