//! The partner portal's users (partner-portal §1): invitations by the
//! operator CLI or an admin, set-password links, sign-in with the
//! employer portal's password, lockout and failed-auth rules, TOTP
//! two-factor with recovery codes, sessions that remember the mode the
//! pages show, and the audit log every action writes to.
//!
//! What a signed-in user may do is decided here, not in the pages:
//! [`Actor::admin`] and [`Actor::admin_with_two_factor`] refuse a viewer,
//! and an admin without an authenticator, with a [`PortalRefusal`].

mod console;
mod two_factor;

use std::sync::Arc;

use crate::error::FieldError;
use crate::ids::PartnerId;
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::partner_user::{
    AuditAction, AuditEntry, NewUser, NewUserSession, PartnerUser, Role, UserLink, UserSession,
};
use crate::portal::{LINK_TTL_SECS, LinkState, Lockout, digest, normalize_email};
use crate::ports::{Clock, Entropy, Minter, Sealer};
use crate::services::portal::NewPassword;
use crate::services::portal::credentials::AcceptedLink;
use crate::services::portal::{Credentials, credentials};
use crate::services::{PortalRefusal, ServiceError, with_fresh_id};
use crate::store::PartnerUserStore;

pub use console::{Console, ConsolePorts, GroupRow, Overview, is_live_key_active};
pub use two_factor::Enrolment;

/// The ports of the partner portal's user service.
#[derive(Clone)]
pub struct PartnerPortalPorts {
    /// Users, links, sessions, audit log.
    pub store: Arc<dyn PartnerUserStore>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Session ids, tokens, TOTP secrets, recovery codes.
    pub entropy: Arc<dyn Entropy>,
    /// Password hashing and the failed-auth limit.
    pub credentials: Credentials,
    /// Seals TOTP secrets at rest.
    pub sealer: Arc<dyn Sealer>,
    /// `public_base_url`, no trailing slash.
    pub base_url: Arc<str>,
    /// Queues the lockout email.
    pub mailbox: crate::services::mailbox::Mailbox,
}

/// The partner portal's user service.
#[derive(Clone)]
pub struct PartnerPortal {
    ports: PartnerPortalPorts,
}

/// A signed-in user acting from an address: what every portal action
/// takes, so that the role and two-factor checks cannot be skipped.
#[derive(Debug, Clone)]
pub struct Actor {
    /// The user.
    pub user: PartnerUser,
    /// The request's source address.
    pub ip: Option<String>,
    /// The mode the pages show.
    pub mode: Mode,
}

impl Actor {
    /// The actor, when an admin.
    ///
    /// # Errors
    /// [`PortalRefusal::AdminOnly`] for a viewer.
    pub fn admin(&self) -> Result<&Self, ServiceError> {
        if self.user.is_admin() {
            Ok(self)
        } else {
            Err(PortalRefusal::AdminOnly.into())
        }
    }

    /// The actor, when an admin with an enrolled authenticator (minting
    /// a live key, rotating a live secret, adding users).
    ///
    /// # Errors
    /// [`PortalRefusal::AdminOnly`] or [`PortalRefusal::TwoFactorRequired`].
    pub fn admin_with_two_factor(&self) -> Result<&Self, ServiceError> {
        self.admin()?;
        if self.user.two_factor() {
            Ok(self)
        } else {
            Err(PortalRefusal::TwoFactorRequired.into())
        }
    }

    /// An audit entry of this actor at `at_ms`.
    #[must_use]
    pub fn entry(&self, at_ms: i64, action: AuditAction, target: impl Into<String>) -> AuditEntry {
        AuditEntry {
            partner: self.user.partner.clone(),
            at_ms,
            user: self.user.email.clone(),
            ip: self.ip.clone(),
            action,
            target: target.into(),
        }
    }
}

/// A visitor's session (started when there was none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserVisit {
    /// A new session id for the cookie.
    pub new_cookie: Option<String>,
    /// The CSRF token of its forms.
    pub csrf: String,
    /// The session as stored.
    pub session: Option<UserSession>,
}

/// A user added, with its set-password link (shown once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedUser {
    /// The user.
    pub user: PartnerUser,
    /// `{public_base_url}/partner/set-password?token=…`.
    pub set_password_url: String,
    /// Unix seconds.
    pub expires_at: i64,
}

/// A password or first factor accepted: the new session's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartnerSignedIn {
    /// The session id for the cookie.
    pub cookie: String,
    /// A TOTP or recovery code is still owed.
    pub second_factor_pending: bool,
}

impl PartnerPortal {
    /// The service over its ports.
    #[must_use]
    pub fn new(ports: PartnerPortalPorts) -> Self {
        Self { ports }
    }

    fn now_ms(&self) -> i64 {
        self.ports.clock.now_ms()
    }

    fn now(&self) -> i64 {
        self.now_ms().div_euclid(1000)
    }

    fn secret(&self) -> String {
        hex::encode(Minter::new(self.ports.entropy.as_ref()).secret32())
    }

    /// `{public_base_url}/partner/sign-in`.
    #[must_use]
    pub fn signin_url(&self) -> String {
        format!("{}/partner/sign-in", self.ports.base_url)
    }

    /// Adds a user with a 7-day single-use set-password link. `by` is the
    /// admin adding it from the portal (two-factor required); `None` is
    /// the operator CLI.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] (`email`) for an address without `@`;
    /// [`ServiceError::NotFound`] for an unknown partner; a conflict when
    /// the partner has a user with the address.
    pub async fn add_user(
        &self,
        partner: &PartnerId,
        email: &str,
        role: Role,
        by: Option<&Actor>,
    ) -> Result<AddedUser, ServiceError> {
        if let Some(actor) = by {
            actor.admin_with_two_factor()?;
            if &actor.user.partner != partner {
                return Err(ServiceError::NotFound);
            }
        }
        let email = normalize_email(email);
        if !plausible_email(&email) {
            return Err(ServiceError::Invalid(vec![FieldError::new(
                "email",
                "must be an email address",
            )]));
        }
        let now = self.now();
        let minter = Minter::new(self.ports.entropy.as_ref());
        with_fresh_id(|| {
            let user = NewUser {
                id: minter.user_id(),
                partner: partner.clone(),
                email: email.clone(),
                role,
                created_at: now,
            };
            let token = hex::encode(minter.secret32());
            let link = UserLink {
                token_hash: digest(&token),
                user: user.id.clone(),
                created_at: now,
                expires_at: now.saturating_add(LINK_TTL_SECS),
            };
            let audit = by.map(|a| a.entry(self.now_ms(), AuditAction::UserAdded, email.clone()));
            let store = Arc::clone(&self.ports.store);
            let url = format!("{}/partner/set-password?token={token}", self.ports.base_url);
            async move {
                store.insert_user(&user, &link, audit).await?;
                Ok(AddedUser {
                    user: PartnerUser {
                        id: user.id,
                        partner: user.partner,
                        email: user.email,
                        role: user.role,
                        password_hash: None,
                        lockout: Lockout::default(),
                        totp_sealed: None,
                        totp_last_step: None,
                        created_at: now,
                    },
                    set_password_url: url,
                    expires_at: link.expires_at,
                })
            }
        })
        .await
    }

    /// The partner's users, oldest first.
    ///
    /// # Errors
    /// Store failures.
    pub async fn users(&self, partner: &PartnerId) -> Result<Vec<PartnerUser>, ServiceError> {
        Ok(self.ports.store.users(partner).await?)
    }

    /// Removes a user (by id or address); its sessions end. `by` is the
    /// admin removing it from the portal; `None` is the operator CLI.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for an unknown user; a refusal for a
    /// viewer.
    pub async fn remove_user(
        &self,
        partner: &PartnerId,
        id_or_email: &str,
        by: Option<&Actor>,
    ) -> Result<PartnerUser, ServiceError> {
        if let Some(actor) = by {
            actor.admin()?;
            if &actor.user.partner != partner {
                return Err(ServiceError::NotFound);
            }
        }
        let user = self
            .ports
            .store
            .user(partner, &normalize_email(id_or_email))
            .await?;
        let audit =
            by.map(|a| a.entry(self.now_ms(), AuditAction::UserRemoved, user.email.clone()));
        self.ports
            .store
            .remove_user(partner, &user.id, audit)
            .await?;
        Ok(user)
    }

    /// The live session of the cookie, if any (touched once a minute).
    ///
    /// # Errors
    /// Store failures.
    pub async fn session(&self, cookie: Option<&str>) -> Result<Option<UserSession>, ServiceError> {
        credentials::live_session(&*self.ports.store, cookie, self.now()).await
    }

    /// The visitor's session, started when there is none.
    ///
    /// # Errors
    /// Store failures.
    pub async fn visit(&self, cookie: Option<&str>) -> Result<UserVisit, ServiceError> {
        if let Some(s) = self.session(cookie).await? {
            return Ok(UserVisit {
                new_cookie: None,
                csrf: s.csrf.clone(),
                session: Some(s),
            });
        }
        let id = self.secret();
        let csrf = self.secret();
        let session = NewUserSession {
            id_hash: digest(&id),
            user: None,
            second_factor_pending: false,
            csrf: csrf.clone(),
            mode: Mode::Test,
            created_at: self.now(),
        };
        self.ports.store.start_session(&session, None, None).await?;
        Ok(UserVisit {
            new_cookie: Some(id),
            csrf,
            session: None,
        })
    }

    /// What a set-password link is worth, with the user's address when it
    /// can be used.
    ///
    /// # Errors
    /// Store failures.
    pub async fn link(&self, token: &str) -> Result<(LinkState, Option<String>), ServiceError> {
        credentials::link_worth(&*self.ports.store, token, self.now()).await
    }

    /// Sets a password from a link and signs the user in (the employer
    /// portal's policy; the link is used up and every other session of
    /// the user ends).
    ///
    /// # Errors
    /// [`PortalRefusal`] for a used, expired or unknown link;
    /// [`ServiceError::Invalid`] for a refused password.
    pub async fn set_password(
        &self,
        visitor: Option<&str>,
        form: NewPassword<'_>,
        ip: Option<&str>,
    ) -> Result<PartnerSignedIn, ServiceError> {
        let AcceptedLink { link, using } = self
            .ports
            .credentials
            .accept_link(&*self.ports.store, &form, visitor, self.now())
            .await?;
        let cookie = self.secret();
        let session = self.new_session(&cookie, &link.user, false);
        let actor = Actor {
            user: link.user,
            ip: ip.map(str::to_owned),
            mode: Mode::Test,
        };
        let audit = actor.entry(
            self.now_ms(),
            AuditAction::PasswordSet,
            actor.user.email.clone(),
        );
        credentials::link_used(self.ports.store.use_link(&using, &session, audit).await)?;
        Ok(PartnerSignedIn {
            cookie,
            second_factor_pending: false,
        })
    }

    fn new_session(&self, cookie: &str, user: &PartnerUser, pending: bool) -> NewUserSession {
        NewUserSession {
            id_hash: digest(cookie),
            user: Some(user.id.clone()),
            second_factor_pending: pending,
            csrf: self.secret(),
            mode: Mode::Test,
            created_at: self.now(),
        }
    }

    /// Signs in with an address and a password (the employer portal's
    /// rules: one answer for every failure, lockout, failed-auth limit).
    /// A user with an authenticator then owes a code
    /// ([`PartnerPortal::second_factor`]).
    ///
    /// # Errors
    /// [`PortalRefusal::SignInFailed`] or
    /// [`PortalRefusal::TooManyAttempts`].
    pub async fn sign_in(
        &self,
        visitor: Option<&str>,
        email: &str,
        password: &str,
        ip: Option<&str>,
    ) -> Result<PartnerSignedIn, ServiceError> {
        let now = self.now();
        let email = normalize_email(email);
        let users = self.ports.store.users_by_email(&email).await?;
        let matched = self
            .ports
            .credentials
            .opened_by(&users, password, now, |u| {
                (u.password_hash.as_deref(), &u.lockout)
            })
            .await;
        if let Some(user) = matched {
            if user.lockout != Lockout::default() {
                self.ports
                    .store
                    .save_lockout(&user.id, &Lockout::default(), &[], None)
                    .await?;
            }
            let cookie = self.secret();
            let pending = user.two_factor();
            let session = self.new_session(&cookie, user, pending);
            let actor = Actor {
                user: user.clone(),
                ip: ip.map(str::to_owned),
                mode: Mode::Test,
            };
            let audit =
                (!pending).then(|| actor.entry(self.now_ms(), AuditAction::SignIn, "password"));
            self.ports
                .store
                .start_session(&session, visitor.map(digest), audit)
                .await?;
            return Ok(PartnerSignedIn {
                cookie,
                second_factor_pending: pending,
            });
        }
        for user in users.iter().filter(|u| u.password_hash.is_some()) {
            self.count_failure(user, ip, "password", now).await?;
        }
        Err(self
            .ports
            .credentials
            .count_failed_auth(ip, now)
            .await?
            .into())
    }

    /// Counts a wrong password or code against `user`'s lockout (5 in 15
    /// minutes lock it for 15 minutes), with its audit entry and, when it
    /// locks, the lockout email; whether it locked. A locked account is
    /// left as it is.
    async fn count_failure(
        &self,
        user: &PartnerUser,
        ip: Option<&str>,
        what: &str,
        now: i64,
    ) -> Result<bool, ServiceError> {
        let Some((lock, locked)) = user.lockout.after_failure(now) else {
            return Ok(false);
        };
        let jobs = if locked {
            self.lockout_email(user)
        } else {
            Vec::new()
        };
        let audit = AuditEntry {
            partner: user.partner.clone(),
            at_ms: self.now_ms(),
            user: user.email.clone(),
            ip: ip.map(str::to_owned),
            action: AuditAction::SignInFailed,
            target: what.to_owned(),
        };
        self.ports
            .store
            .save_lockout(&user.id, &lock, &jobs, Some(audit))
            .await?;
        Ok(locked)
    }

    /// The email telling a user their account is locked (partner users
    /// are real people in either mode, so it is always sent).
    fn lockout_email(&self, user: &PartnerUser) -> Vec<crate::job::NewJob> {
        let minter = Minter::new(self.ports.entropy.as_ref());
        let scope = crate::scope::Scope::new(user.partner.clone(), Mode::Live);
        let message = crate::email::partner_lockout(&user.email, &self.signin_url());
        self.ports
            .mailbox
            .job(&minter, &scope, None, &message, self.now_ms())
            .into_iter()
            .collect()
    }

    /// Sets the mode the session's pages show.
    ///
    /// # Errors
    /// Store failures.
    pub async fn set_mode(&self, cookie: &str, mode: Mode) -> Result<(), ServiceError> {
        Ok(self
            .ports
            .store
            .set_session_mode(&digest(cookie), mode)
            .await?)
    }

    /// Ends the session of the cookie.
    ///
    /// # Errors
    /// Store failures.
    pub async fn sign_out(&self, cookie: Option<&str>) -> Result<(), ServiceError> {
        if let Some(cookie) = cookie {
            self.ports.store.end_session(&digest(cookie)).await?;
        }
        Ok(())
    }

    /// Writes an audit entry.
    ///
    /// # Errors
    /// Store failures.
    pub async fn record(&self, entry: &AuditEntry) -> Result<(), ServiceError> {
        Ok(self.ports.store.audit(entry).await?)
    }

    /// The partner's audit log, newest first.
    ///
    /// # Errors
    /// Store failures.
    pub async fn audit_log(
        &self,
        actor: &Actor,
        page: &PageRequest,
    ) -> Result<Page<AuditEntry>, ServiceError> {
        Ok(self
            .ports
            .store
            .audit_log(&actor.user.partner, page)
            .await?)
    }
}

/// A loose check of an address: one `@` with text either side and a dot
/// in the domain.
fn plausible_email(email: &str) -> bool {
    match email.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains('@')
                && !email.chars().any(char::is_whitespace)
                && email.len() <= 254
        }
        None => false,
    }
}

#[cfg(test)]
mod tests;
