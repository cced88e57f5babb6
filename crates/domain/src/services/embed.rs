//! Embed sessions (onboarding §5): the offer iframe of one quote. The URL
//! carries an opaque random token; only its SHA-256 is stored, with the
//! session's state, so the framed page needs no cookie. The page shows the
//! quote's numbers while the session lives and the quote is current; the
//! employer then proves an address at the group's domain with a 6-digit
//! code (test mode: always `424242`, no email), reads the plan documents
//! and accepts the offer, which records `quote.acceptance` and sends
//! `quote.accepted` in one transaction.

mod create;

use std::sync::Arc;

use crate::document::EventData;
use crate::document::event::QuoteAccepted;
use crate::embed::{Acceptance, CodeCheck, EmbedState, StoredEmbed, TEST_CODE, email_in_domain};
use crate::enrollment::QuoteUse;
use crate::error::FieldError;
use crate::event::NewEvent;
use crate::group::Group;
use crate::ids::EmbedSessionId;
use crate::job::NewJob;
use crate::mode::Mode;
use crate::onboarding::PlanChoices;
use crate::onboarding::documents::{DocumentFacts, PlanDocument, plan_documents};
use crate::onboarding::fields::WaitingPeriod;
use crate::plans::PlanInfo;
use crate::ports::{Clock, Entropy, JobWaker, Minter, Sealer, now_secs, rfc3339};
use crate::quote::Quote;
use crate::services::mailbox::Mailbox;
use crate::services::quotes::group_pricing_digest;
use crate::services::{EmbedRefusal, ServiceError};
use crate::store::{Conflict, EmbedStore, EmbedWrite, GroupStore, PartnerStore, QuoteStore};
use crate::store::{StoreError, StoreResult};

pub use create::Created;

/// The purpose a code's keyed digest is made for.
const CODE_PURPOSE: &[u8] = b"embed-code";
/// Longest token looked at (a real one is 43 characters).
const MAX_TOKEN_LEN: usize = 128;
/// How often a change is made again after losing a race.
const ATTEMPTS: u32 = 5;
/// Longest name accepted.
const MAX_NAME: usize = 200;

/// The ports of the embed service.
#[derive(Clone)]
pub struct EmbedPorts {
    /// Groups (the domain, the company state).
    pub groups: Arc<dyn GroupStore>,
    /// Quotes (the offer).
    pub quotes: Arc<dyn QuoteStore>,
    /// Partners (embed origins).
    pub partners: Arc<dyn PartnerStore>,
    /// Sessions.
    pub store: Arc<dyn EmbedStore>,
    /// Keys the codes' digests.
    pub sealer: Arc<dyn Sealer>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Tokens, ids and codes.
    pub entropy: Arc<dyn Entropy>,
    /// Hears of queued jobs (the code's email).
    pub waker: Arc<dyn JobWaker>,
    /// Queues the code's email (live mode).
    pub mailbox: Mailbox,
    /// The plan catalogue (the documents).
    pub plans: Arc<Vec<PlanInfo>>,
    /// `public_base_url`: where the offer pages are served.
    pub public_base_url: String,
}

/// The embed-sessions service.
#[derive(Clone)]
pub struct EmbedSessions {
    ports: EmbedPorts,
    /// A session's lifetime, seconds.
    lifetime_secs: i64,
}

/// What an offer page shows.
#[derive(Debug, Clone)]
pub struct Offer {
    /// The session and its state.
    pub stored: StoredEmbed,
    /// The quote.
    pub quote: Quote,
    /// The group.
    pub group: Group,
    /// The page's `frame-ancestors` sources.
    pub frame_ancestors: String,
}

/// Why an offer page is not shown; each carries the `frame-ancestors` of
/// the page that says so.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// No session has this token (404).
    #[error("no such offer")]
    NotFound,
    /// The session is past its expiry (410).
    #[error("the offer link expired")]
    Expired {
        /// The partner's framing rule.
        frame_ancestors: String,
    },
    /// The quote expired, or the census changed its rating inputs since
    /// (410): its numbers are not shown.
    #[error("{why}")]
    Outdated {
        /// Which.
        why: QuoteUse,
        /// The partner's framing rule.
        frame_ancestors: String,
    },
    /// The store failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl EmbedSessions {
    /// The service over its ports; sessions live `lifetime_minutes`
    /// (`embed.session_minutes`, fractions allowed).
    #[must_use]
    pub fn new(ports: EmbedPorts, lifetime_minutes: f64) -> Self {
        let secs = std::time::Duration::from_secs(60).mul_f64(lifetime_minutes.max(0.0));
        Self {
            ports,
            lifetime_secs: i64::try_from(secs.as_secs()).unwrap_or(i64::MAX).max(1),
        }
    }

    fn now(&self) -> i64 {
        now_secs(self.ports.clock.as_ref())
    }

    /// The offer page's session, quote and group.
    ///
    /// # Errors
    /// [`OpenError::NotFound`] for an unknown token or a quote that is
    /// gone; [`OpenError::Expired`] after the session's lifetime;
    /// [`OpenError::Outdated`] once the quote expired or went stale.
    pub async fn open(&self, token: &str) -> Result<Offer, OpenError> {
        let stored = self
            .stored(token)
            .await
            .map_err(ServiceError::from)?
            .ok_or(OpenError::NotFound)?;
        let frame_ancestors = self.frame_ancestors(&stored).await?;
        if !stored.session.is_live(self.now()) {
            return Err(OpenError::Expired { frame_ancestors });
        }
        let (quote, group) = match self.offer_of(&stored).await {
            Ok(found) => found,
            Err(ServiceError::NotFound) => return Err(OpenError::NotFound),
            Err(e) => return Err(e.into()),
        };
        if let Some(why) = self.outdated(&quote, &group) {
            return Err(OpenError::Outdated {
                why,
                frame_ancestors,
            });
        }
        Ok(Offer {
            stored,
            quote,
            group,
            frame_ancestors,
        })
    }

    /// Sends a code to `email` (live mode: by email; test mode: none, the
    /// code is `424242`); the address masked, as the page shows it.
    ///
    /// # Errors
    /// `Invalid` (`email`) for a malformed address;
    /// [`EmbedRefusal::EmailNotAllowed`] outside the group's domain;
    /// [`EmbedRefusal::TooManyCodes`] after five sends within the hour;
    /// [`EmbedRefusal::SessionExpired`], `NotFound`, `QuoteExpired` as for
    /// every endpoint.
    pub async fn send_code(&self, token: &str, email: &str) -> Result<String, ServiceError> {
        let email = email.trim().to_ascii_lowercase();
        if let Some(bad) = crate::group::check_email("email", &email) {
            return Err(ServiceError::Invalid(vec![bad]));
        }
        self.change(token, |stored, offer, minter, now| {
            if !email_in_domain(&email, &offer.1.domain) {
                return Err(EmbedRefusal::EmailNotAllowed.into());
            }
            let scope = &stored.session.scope;
            let code = match scope.mode {
                Mode::Test => TEST_CODE.to_owned(),
                Mode::Live => self.fresh_code(),
            };
            let digest = self.code_digest(&stored.session.id, &code);
            let mut state = stored.state.clone();
            state
                .send_code(&email, digest, now)
                .map_err(|wait| EmbedRefusal::TooManyCodes {
                    retry_after_secs: u32::try_from(wait).unwrap_or(u32::MAX),
                })?;
            let message = crate::email::embed_code(&email, &code, &offer.1.company_name);
            let jobs: Vec<NewJob> = self
                .ports
                .mailbox
                .job(
                    minter,
                    scope,
                    Some(&stored.session.group_id),
                    &message,
                    now.saturating_mul(1000),
                )
                .into_iter()
                .collect();
            Ok((state, jobs, None))
        })
        .await?;
        Ok(crate::embed::mask_email(&email))
    }

    /// Checks the code; the address is then verified.
    ///
    /// # Errors
    /// [`EmbedRefusal::VerificationFailed`] for a wrong or expired code
    /// (or none pending), with the attempts left; the others of every
    /// endpoint.
    pub async fn verify(&self, token: &str, code: &str) -> Result<(), ServiceError> {
        let code = code.trim().to_owned();
        let mut failed = None;
        self.change(token, |stored, _, _, now| {
            let mut state = stored.state.clone();
            let digest = self.code_digest(&stored.session.id, &code);
            failed = match state.check_code(&digest, now) {
                CodeCheck::Verified => None,
                CodeCheck::Wrong { remaining } => Some(remaining),
                CodeCheck::Expired | CodeCheck::Void => Some(0),
            };
            Ok((state, Vec::new(), None))
        })
        .await?;
        match failed {
            None => Ok(()),
            Some(attempts_remaining) => {
                Err(EmbedRefusal::VerificationFailed { attempts_remaining }.into())
            }
        }
    }

    /// The plan documents of the offer (after verification).
    ///
    /// # Errors
    /// [`EmbedRefusal::NotVerified`] before the address is verified; the
    /// others of every endpoint.
    pub async fn documents(&self, token: &str) -> Result<Vec<PlanDocument>, ServiceError> {
        let (stored, (quote, group)) = self.current(token).await?;
        if stored.state.verified_email.is_none() {
            return Err(EmbedRefusal::NotVerified.into());
        }
        self.documents_of(&quote, &group)
    }

    /// Accepts the offer in the verified address's name: `quote.acceptance`
    /// and `quote.accepted`, once. Accepting again in the same session
    /// answers the same acceptance.
    ///
    /// # Errors
    /// `Invalid` (`name`); [`EmbedRefusal::NotVerified`] before
    /// verification; [`EmbedRefusal::AlreadyAccepted`] when the quote was
    /// accepted in another session; the others of every endpoint.
    pub async fn accept(&self, token: &str, name: &str) -> Result<Acceptance, ServiceError> {
        let name = name.trim().to_owned();
        if name.is_empty() || name.chars().count() > MAX_NAME {
            return Err(ServiceError::Invalid(vec![FieldError::new(
                "name",
                format!("must be 1 to {MAX_NAME} characters"),
            )]));
        }
        let state = self
            .change(token, |stored, offer, minter, now| {
                let mut state = stored.state.clone();
                if state.accepted.is_some() {
                    return Ok((state, Vec::new(), None));
                }
                let Some(email) = state.verified_email.clone() else {
                    return Err(EmbedRefusal::NotVerified.into());
                };
                if offer.0.acceptance.is_some() {
                    return Err(EmbedRefusal::AlreadyAccepted.into());
                }
                let acceptance = Acceptance {
                    name: name.clone(),
                    email,
                    accepted_at: now,
                };
                let event = NewEvent {
                    id: minter.event_id(),
                    scope: stored.session.scope.clone(),
                    created_at: now,
                    data: EventData::QuoteAccepted(QuoteAccepted {
                        quote_id: offer.0.id.clone(),
                        group_id: offer.1.id.clone(),
                        name: acceptance.name.clone(),
                        email: acceptance.email.clone(),
                        accepted_at: rfc3339(now),
                    }),
                };
                state.accepted = Some(acceptance.clone());
                Ok((
                    state,
                    Vec::new(),
                    Some((offer.0.id.clone(), acceptance, event)),
                ))
            })
            .await?;
        state
            .accepted
            .ok_or_else(|| ServiceError::Internal("an accepted session has no acceptance".into()))
    }

    /// Makes one change of a live session on a current quote: read,
    /// apply, store — again on the newer state when another change landed
    /// first. The state stored.
    async fn change<F>(&self, token: &str, mut apply: F) -> Result<EmbedState, ServiceError>
    where
        F: FnMut(&StoredEmbed, &(Quote, Group), &Minter<'_>, i64) -> Result<Applied, ServiceError>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (stored, offer) = self.current(token).await?;
            let now = self.now();
            let minter = Minter::new(self.ports.entropy.as_ref());
            let (state, jobs, acceptance) = apply(&stored, &offer, &minter, now)?;
            if state == stored.state && acceptance.is_none() {
                return Ok(state);
            }
            let queued = !jobs.is_empty();
            let write = EmbedWrite {
                id: stored.session.id.clone(),
                version: stored.version,
                state,
                jobs,
                acceptance,
                now,
            };
            match self.ports.store.save_embed(&write).await {
                Ok(()) => {
                    if queued {
                        self.ports.waker.job_queued();
                    }
                    return Ok(write.state);
                }
                Err(StoreError::Conflict(Conflict::EmbedMoved)) if attempt < ATTEMPTS => {}
                Err(StoreError::Conflict(Conflict::AlreadyAccepted)) => {
                    return Err(EmbedRefusal::AlreadyAccepted.into());
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// A live session and its current quote and group.
    async fn current(&self, token: &str) -> Result<(StoredEmbed, (Quote, Group)), ServiceError> {
        let stored = self.stored(token).await?.ok_or(ServiceError::NotFound)?;
        if !stored.session.is_live(self.now()) {
            return Err(EmbedRefusal::SessionExpired.into());
        }
        let (quote, group) = self.offer_of(&stored).await?;
        match self.outdated(&quote, &group) {
            Some(QuoteUse::Stale) => Err(EmbedRefusal::Stale.into()),
            Some(_) => Err(EmbedRefusal::Expired.into()),
            None => Ok((stored, (quote, group))),
        }
    }

    async fn stored(&self, token: &str) -> StoreResult<Option<StoredEmbed>> {
        let plausible = !token.is_empty()
            && token.len() <= MAX_TOKEN_LEN
            && token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !plausible {
            return Ok(None);
        }
        self.ports.store.embed(&crate::portal::digest(token)).await
    }

    async fn offer_of(&self, stored: &StoredEmbed) -> Result<(Quote, Group), ServiceError> {
        let s = &stored.session;
        let quote = self.ports.quotes.quote(&s.scope, &s.quote_id).await?;
        let group = self.ports.groups.group(&s.scope, &s.group_id).await?;
        if quote.group_id != group.id {
            return Err(ServiceError::NotFound);
        }
        Ok((quote, group))
    }

    /// Why the quote's numbers may no longer be shown, if they may not.
    fn outdated(&self, quote: &Quote, group: &Group) -> Option<QuoteUse> {
        if quote.expires_at <= self.now() {
            Some(QuoteUse::Expired)
        } else if is_stale(quote, group) {
            Some(QuoteUse::Stale)
        } else {
            None
        }
    }

    async fn frame_ancestors(&self, stored: &StoredEmbed) -> Result<String, ServiceError> {
        let scope = &stored.session.scope;
        let partner = self.ports.partners.partner(&scope.partner).await?;
        Ok(crate::embed::frame_ancestors(
            &partner.embed_origins,
            scope.mode,
        ))
    }

    fn documents_of(
        &self,
        quote: &Quote,
        group: &Group,
    ) -> Result<Vec<PlanDocument>, ServiceError> {
        let market = quote.body.market().ok_or_else(|| {
            ServiceError::Internal("an offer's quote has no market figures".into())
        })?;
        let plan = self
            .ports
            .plans
            .iter()
            .find(|p| p.id == market.plan.id.as_str())
            .ok_or_else(|| ServiceError::Internal("the plan is not in the catalogue".into()))?;
        let plan_id = if market.plan.id == "value" {
            pricing_core::VersionId::Value
        } else {
            pricing_core::VersionId::Diamond
        };
        let choices = PlanChoices {
            plan_id,
            employer_contribution_pct: market.employee_contribution.employer_contribution_pct,
            waiting_period: WaitingPeriod::FirstOfMonthAfterHire,
            min_hours_per_week: 30,
            signature: None,
        };
        Ok(plan_documents(DocumentFacts {
            company: &group.company_name,
            start_date: &market.plan_year_start_date,
            plan,
            choices: &choices,
        }))
    }

    /// Six random digits.
    fn fresh_code(&self) -> String {
        let mut bytes = [0u8; 4];
        self.ports.entropy.fill(&mut bytes);
        format!("{:06}", u32::from_le_bytes(bytes) % 1_000_000)
    }

    /// The keyed digest of a session's code (hex).
    fn code_digest(&self, id: &EmbedSessionId, code: &str) -> String {
        let message = format!("{}:{code}", id.as_str());
        hex::encode(self.ports.sealer.sign(CODE_PURPOSE, message.as_bytes()))
    }
}

/// A change's new state, its jobs and the acceptance it records.
type Applied = (
    EmbedState,
    Vec<NewJob>,
    Option<(crate::ids::QuoteId, Acceptance, NewEvent)>,
);

/// Whether the census changed the quote's rating inputs since it was
/// priced (the rule an enrollment applies).
fn is_stale(quote: &Quote, group: &Group) -> bool {
    quote.rating_digest.as_deref() != group_pricing_digest(group).as_deref()
}

#[cfg(test)]
mod tests;
