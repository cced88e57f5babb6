//! The employer portal's accounts (onboarding §3): sessions for visitors
//! and admins, setting a password from a link, signing in with the account
//! lockout and the per-address failed-auth limit, signing out, forgotten
//! passwords, and the partner's `POST /enrollments/{id}/portal_links`.
//!
//! Session ids and link tokens are 32 random bytes; only their SHA-256
//! digests are stored. The portal's pages call this service; which company
//! a page shows comes from the session's account, never from the URL.

pub(crate) mod credentials;
mod links;

use std::sync::Arc;

use crate::email::{OutboundEmail, deliverable, lockout, password_reset, portal_link};
use crate::enrollment::OnboardingMode;
use crate::ids::EnrollmentId;
use crate::portal::{
    LinkState, Lockout, NewSession, PortalAccount, StoredSession, digest, normalize_email,
};
use crate::ports::{Clock, Entropy, Minter};
use crate::scope::Scope;
use crate::services::portal::credentials::AcceptedLink;
use crate::services::{OnboardingRefusal, PortalRefusal, ServiceError};
use crate::store::{PortalStore, QuoteStore};

pub use credentials::Credentials;
pub use links::{IssuedLink, LinkFor, MintedLink, PortalLinks};

/// The ports of the portal service.
#[derive(Clone)]
pub struct PortalPorts {
    /// Accounts, links and sessions.
    pub store: Arc<dyn PortalStore>,
    /// Enrollments (the signatory a new link goes to).
    pub enrollments: Arc<dyn QuoteStore>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Session ids, CSRF tokens and link tokens.
    pub entropy: Arc<dyn Entropy>,
    /// Password hashing and the failed-auth limit.
    pub credentials: Credentials,
    /// Links (and their emails).
    pub links: PortalLinks,
}

/// The portal service.
#[derive(Clone)]
pub struct Portal {
    ports: PortalPorts,
}

/// A visitor's session: the cookie to set when it is new, the CSRF token
/// of its forms and the signed-in account, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visit {
    /// A new session id to put in the cookie (the old one was missing or
    /// ended).
    pub new_cookie: Option<String>,
    /// The CSRF token every form of the session carries.
    pub csrf: String,
    /// The signed-in account.
    pub account: Option<PortalAccount>,
}

/// A signed-in session: its new id for the cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The session id to put in the cookie.
    pub cookie: String,
}

/// The two password fields of the set-password form.
#[derive(Debug, Clone)]
pub struct NewPassword<'a> {
    /// The token from the link.
    pub token: &'a str,
    /// The password.
    pub password: &'a str,
    /// Typed again.
    pub confirmation: &'a str,
}

impl Portal {
    /// The service over its ports.
    #[must_use]
    pub fn new(ports: PortalPorts) -> Self {
        Self { ports }
    }

    fn now(&self) -> i64 {
        self.ports.clock.now_ms().div_euclid(1000)
    }

    fn secret(&self) -> String {
        hex::encode(Minter::new(self.ports.entropy.as_ref()).secret32())
    }

    /// The live session of the cookie, if any (a seen session is touched
    /// at most once a minute).
    ///
    /// # Errors
    /// Store failures.
    pub async fn session(
        &self,
        cookie: Option<&str>,
    ) -> Result<Option<StoredSession>, ServiceError> {
        credentials::live_session(&*self.ports.store, cookie, self.now()).await
    }

    /// The visitor's session, started when there is none (the sign-in,
    /// set-password and forgot-password forms need its CSRF token).
    ///
    /// # Errors
    /// Store failures.
    pub async fn visit(&self, cookie: Option<&str>) -> Result<Visit, ServiceError> {
        if let Some(s) = self.session(cookie).await? {
            return Ok(Visit {
                new_cookie: None,
                csrf: s.csrf,
                account: s.account,
            });
        }
        let id = self.secret();
        let csrf = self.secret();
        self.ports
            .store
            .start_session(
                &NewSession {
                    id_hash: digest(&id),
                    enrollment_id: None,
                    csrf: csrf.clone(),
                    created_at: self.now(),
                },
                None,
            )
            .await?;
        Ok(Visit {
            new_cookie: Some(id),
            csrf,
            account: None,
        })
    }

    /// What the link of `token` is worth now, with its account's address
    /// when it can be used.
    ///
    /// # Errors
    /// Store failures.
    pub async fn link(&self, token: &str) -> Result<(LinkState, Option<String>), ServiceError> {
        credentials::link_worth(&*self.ports.store, token, self.now()).await
    }

    /// Sets the account's password from a link and signs it in: the link
    /// is used up, every other session of the account ends (a password
    /// change revokes them) and a new session id replaces the visitor's.
    ///
    /// # Errors
    /// [`PortalRefusal`] for a used, expired or unknown link;
    /// [`ServiceError::Invalid`] (fields `password`,
    /// `password_confirmation`) for a refused password.
    pub async fn set_password(
        &self,
        visitor: Option<&str>,
        form: NewPassword<'_>,
    ) -> Result<SignedIn, ServiceError> {
        let AcceptedLink { link, using } = self
            .ports
            .credentials
            .accept_link(&*self.ports.store, &form, visitor, self.now())
            .await?;
        let cookie = self.secret();
        let session = NewSession {
            id_hash: digest(&cookie),
            enrollment_id: Some(link.account.enrollment_id.clone()),
            csrf: self.secret(),
            created_at: self.now(),
        };
        credentials::link_used(
            self.ports
                .store
                .use_link(&using, &session, self.now())
                .await,
        )?;
        Ok(SignedIn { cookie })
    }

    /// Signs in with an address and a password. Every failure answers the
    /// same, whether the address is unknown, the password wrong or the
    /// account locked; it counts against the account (5 in 15 minutes
    /// lock it for 15 minutes, and live mode emails the admin) and against
    /// the source address's failed-auth limit.
    ///
    /// # Errors
    /// [`PortalRefusal::SignInFailed`], or
    /// [`PortalRefusal::TooManyAttempts`] once the source address is over
    /// its limit.
    pub async fn sign_in(
        &self,
        visitor: Option<&str>,
        email: &str,
        password: &str,
        source: Option<&str>,
    ) -> Result<SignedIn, ServiceError> {
        let now = self.now();
        let accounts = self
            .ports
            .store
            .accounts_by_email(&normalize_email(email))
            .await?;
        let matched = self
            .ports
            .credentials
            .opened_by(&accounts, password, now, |a| {
                (a.password_hash.as_deref(), &a.lockout)
            })
            .await;
        if let Some(account) = matched {
            if account.lockout != Lockout::default() {
                self.ports
                    .store
                    .save_lockout(&account.enrollment_id, &Lockout::default(), &[])
                    .await?;
            }
            let cookie = self.secret();
            let session = NewSession {
                id_hash: digest(&cookie),
                enrollment_id: Some(account.enrollment_id.clone()),
                csrf: self.secret(),
                created_at: now,
            };
            let replaces = visitor.map(digest);
            self.ports.store.start_session(&session, replaces).await?;
            return Ok(SignedIn { cookie });
        }
        for account in accounts.iter().filter(|a| a.password_hash.is_some()) {
            let Some((lock, locks)) = account.lockout.after_failure(now) else {
                continue;
            };
            let minter = Minter::new(self.ports.entropy.as_ref());
            let jobs: Vec<_> = locks
                .then(|| {
                    self.ports.links.mailbox().job(
                        &minter,
                        &account.scope,
                        Some(&account.group_id),
                        &lockout(&account.email, &self.ports.links.signin_url()),
                        self.ports.clock.now_ms(),
                    )
                })
                .flatten()
                .into_iter()
                .collect();
            self.ports
                .store
                .save_lockout(&account.enrollment_id, &lock, &jobs)
                .await?;
        }
        Err(self
            .ports
            .credentials
            .count_failed_auth(source, now)
            .await?
            .into())
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

    /// A forgotten password: every account of the address gets a new link
    /// by email (live mode; test mode sends nothing). The answer is the
    /// same whether the address is known or not.
    ///
    /// # Errors
    /// Store failures.
    pub async fn forgot_password(&self, email: &str) -> Result<(), ServiceError> {
        let accounts = self
            .ports
            .store
            .accounts_by_email(&normalize_email(email))
            .await?;
        let now_ms = self.ports.clock.now_ms();
        for account in accounts.iter().filter(|a| deliverable(a.scope.mode)) {
            self.issue_link(LinkFor::account(account), now_ms, password_reset)
                .await?;
        }
        Ok(())
    }

    /// `POST /enrollments/{id}/portal_links`: a fresh link for the
    /// enrollment's signatory (emailed in live mode); older unused links
    /// stop working.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope;
    /// [`OnboardingRefusal::HostedOnly`]'s counterpart for an embedded
    /// enrollment ([`PortalRefusal::NoSignatory`] without a signatory).
    pub async fn new_link(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
    ) -> Result<IssuedLink, ServiceError> {
        let enrollment = self.ports.enrollments.enrollment(scope, id).await?;
        if enrollment.onboarding_mode != OnboardingMode::Hosted {
            return Err(OnboardingRefusal::EmbeddedHasNoPortal.into());
        }
        let email = match self.ports.store.account(scope, id).await? {
            Some(account) => account.email,
            None => enrollment
                .body
                .signatory
                .map(|s| s.email)
                .ok_or(PortalRefusal::NoSignatory)?,
        };
        let to = LinkFor {
            scope,
            enrollment: id,
            group: &enrollment.group_id,
            email: &email,
        };
        self.issue_link(to, self.ports.clock.now_ms(), portal_link)
            .await
    }

    /// Issues a fresh link to `to` at `now_ms`, its email written by
    /// `message` (older unused links stop working).
    async fn issue_link(
        &self,
        to: LinkFor<'_>,
        now_ms: i64,
        message: fn(&str, &str) -> OutboundEmail,
    ) -> Result<IssuedLink, ServiceError> {
        let minter = Minter::new(self.ports.entropy.as_ref());
        self.ports.links.issue(&minter, to, now_ms, message).await
    }
}

#[cfg(test)]
mod tests;
