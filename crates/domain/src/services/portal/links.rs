//! Set-password links: minted with an enrollment (the invitation), by
//! `POST /enrollments/{id}/portal_links` and by a forgotten password;
//! read back for the enrollment's `employer_portal`.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::email::OutboundEmail;
use crate::ids::{EnrollmentId, GroupId};
use crate::job::NewJob;
use crate::portal::{LINK_TTL_SECS, LinkState, NewLink, PortalAccount, digest, normalize_email};
use crate::ports::{Minter, Sealer};
use crate::scope::Scope;
use crate::services::ServiceError;
use crate::services::mailbox::Mailbox;
use crate::store::PortalStore;

/// A usable set-password link, as partners see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedLink {
    /// `{public_base_url}/portal/set-password?token=…`.
    pub set_password_url: String,
    /// `{public_base_url}/portal/sign-in`.
    pub signin_url: String,
    /// Unix seconds.
    pub expires_at: i64,
}

/// A link about to be stored, with the email that carries it (none in test
/// mode).
#[derive(Debug, Clone)]
pub struct MintedLink {
    /// The row.
    pub link: NewLink,
    /// The `email` job.
    pub jobs: Vec<NewJob>,
    /// What the partner is shown.
    pub issued: IssuedLink,
}

/// Mints and reads set-password links.
#[derive(Clone)]
pub struct PortalLinks {
    store: Arc<dyn PortalStore>,
    sealer: Arc<dyn Sealer>,
    mailbox: Mailbox,
    base_url: Arc<str>,
}

fn context(enrollment: &EnrollmentId) -> Vec<u8> {
    format!("portal_link:{}", enrollment.as_str()).into_bytes()
}

/// The facts a new link needs.
#[derive(Debug, Clone, Copy)]
pub struct LinkFor<'a> {
    /// Partner and mode.
    pub scope: &'a Scope,
    /// The enrollment.
    pub enrollment: &'a EnrollmentId,
    /// Its group.
    pub group: &'a GroupId,
    /// The admin's address.
    pub email: &'a str,
}

impl<'a> LinkFor<'a> {
    /// A new link for an existing account.
    #[must_use]
    pub fn account(account: &'a PortalAccount) -> Self {
        Self {
            scope: &account.scope,
            enrollment: &account.enrollment_id,
            group: &account.group_id,
            email: &account.email,
        }
    }
}

impl PortalLinks {
    /// Links under `base_url` (`public_base_url`, no trailing slash).
    #[must_use]
    pub fn new(
        store: Arc<dyn PortalStore>,
        sealer: Arc<dyn Sealer>,
        mailbox: Mailbox,
        base_url: &str,
    ) -> Self {
        Self {
            store,
            sealer,
            mailbox,
            base_url: Arc::from(base_url.trim_end_matches('/')),
        }
    }

    /// The mailbox the links' emails go through.
    #[must_use]
    pub const fn mailbox(&self) -> &Mailbox {
        &self.mailbox
    }

    /// `{public_base_url}/portal/sign-in`.
    #[must_use]
    pub fn signin_url(&self) -> String {
        format!("{}/portal/sign-in", self.base_url)
    }

    fn issued(&self, token: &str, expires_at: i64) -> IssuedLink {
        IssuedLink {
            set_password_url: format!("{}/portal/set-password?token={token}", self.base_url),
            signin_url: self.signin_url(),
            expires_at,
        }
    }

    /// A new link for `to`, valid 7 days from `now`, with the email
    /// `message(address, url)` queued in live mode.
    #[must_use]
    pub fn mint(
        &self,
        minter: &Minter<'_>,
        to: LinkFor<'_>,
        now_ms: i64,
        message: fn(&str, &str) -> OutboundEmail,
    ) -> MintedLink {
        let now = now_ms.div_euclid(1000);
        let token = hex::encode(minter.secret32());
        let expires_at = now.saturating_add(LINK_TTL_SECS);
        let issued = self.issued(&token, expires_at);
        let email = normalize_email(to.email);
        let jobs = self
            .mailbox
            .job(
                minter,
                to.scope,
                Some(to.group),
                &message(&email, &issued.set_password_url),
                now_ms,
            )
            .into_iter()
            .collect();
        MintedLink {
            link: NewLink {
                token_hash: digest(&token),
                token_sealed: STANDARD
                    .encode(self.sealer.seal(token.as_bytes(), &context(to.enrollment))),
                enrollment_id: to.enrollment.clone(),
                group_id: to.group.clone(),
                email,
                created_at: now,
                expires_at,
            },
            jobs,
            issued,
        }
    }

    /// Mints a link and stores it (older unused links stop working).
    ///
    /// # Errors
    /// Store failures.
    pub async fn issue(
        &self,
        minter: &Minter<'_>,
        to: LinkFor<'_>,
        now_ms: i64,
        message: fn(&str, &str) -> OutboundEmail,
    ) -> Result<IssuedLink, ServiceError> {
        let minted = self.mint(minter, to, now_ms, message);
        self.store
            .insert_link(to.scope, &minted.link, &minted.jobs)
            .await?;
        Ok(minted.issued)
    }

    /// The enrollment's newest link while it is usable: the enrollment
    /// never shows a dead link.
    ///
    /// # Errors
    /// Store failures; [`ServiceError::Internal`] when the sealed token
    /// does not open with the configured key.
    pub async fn current(
        &self,
        scope: &Scope,
        enrollment: &EnrollmentId,
        now: i64,
    ) -> Result<Option<IssuedLink>, ServiceError> {
        let Some(link) = self.store.newest_link(scope, enrollment).await? else {
            return Ok(None);
        };
        if link.state(now) != LinkState::Usable {
            return Ok(None);
        }
        let sealed = STANDARD
            .decode(&link.token_sealed)
            .map_err(|e| ServiceError::Internal(Box::new(e)))?;
        let token = self
            .sealer
            .open(&sealed, &context(enrollment))
            .map_err(|_| ServiceError::Internal("a portal link does not open".into()))?;
        let token = String::from_utf8(token).map_err(|e| ServiceError::Internal(Box::new(e)))?;
        Ok(Some(self.issued(&token, link.expires_at)))
    }
}
