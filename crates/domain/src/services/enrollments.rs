//! Enrollments: `POST /groups/{id}/enrollments` from a ready, unexpired,
//! current quote (one per group), the reads, and the group's go-live
//! (`sandbox` → `prod`).

use std::sync::Arc;

use time::Date;

use crate::document::enrollment::{EmployerPortal, SignatoryDoc};
use crate::document::event::{EnrollmentCreated, GroupStateChanged};
use crate::document::{EnrollmentDocument, EventData, MarketQuote};
use crate::email::{deliverable, portal_invite};
use crate::enrollment::{Enrollment, OnboardingMode, QuoteUse, check_quote_use};
use crate::error::FieldError;
use crate::event::NewEvent;
use crate::group::{CompanyState, Group, GroupStatus, check_email, go_live};
use crate::ids::{EnrollmentId, GroupId, QuoteId};
use crate::mode::Mode;
use crate::onboarding::Checklist;
use crate::ports::{Clock, Entropy, Minter};
use crate::quote::QuoteKind;
use crate::scope::Scope;
use crate::services::portal::{LinkFor, MintedLink, PortalLinks};
use crate::services::quotes::group_pricing_digest;
use crate::services::{EnrollmentRefusal, ServiceError, with_fresh_id};
use crate::store::{Conflict, GroupAdvance, GroupStore, QuoteStore, StoreError};

/// The default `public_base_url`: where this service is reached, and so
/// where the hosted employer portal's links point (`/portal/…`).
pub const DEFAULT_PUBLIC_BASE_URL: &str = "http://127.0.0.1:8080";

/// The enrollment signatory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signatory {
    /// Name.
    pub name: String,
    /// Email (the employer-portal admin's login in hosted mode).
    pub email: String,
}

/// The body of `POST /groups/{id}/enrollments`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnrollmentInput {
    /// The quote enrolled on.
    pub quote_id: QuoteId,
    /// Who signs.
    pub signatory: Signatory,
    /// `hosted` (default) or `embedded`.
    pub onboarding_mode: OnboardingMode,
    /// Default: the quote's plan-year start.
    pub start_date: Option<Date>,
}

/// An enrollment with its group's current company state.
#[derive(Debug, Clone, PartialEq)]
pub struct EnrollmentView {
    /// The stored enrollment.
    pub enrollment: Enrollment,
    /// `sandbox` until the group goes live, then `prod`.
    pub company_state: Option<CompanyState>,
    /// The employer portal (hosted mode) with its newest usable link.
    pub employer_portal: Option<EmployerPortal>,
}

/// The enrollments service.
#[derive(Clone)]
pub struct Enrollments {
    groups: Arc<dyn GroupStore>,
    quotes: Arc<dyn QuoteStore>,
    clock: Arc<dyn Clock>,
    entropy: Arc<dyn Entropy>,
    links: Option<PortalLinks>,
    public_base_url: String,
}

impl Enrollments {
    /// The service over its ports.
    #[must_use]
    pub fn new(
        groups: Arc<dyn GroupStore>,
        quotes: Arc<dyn QuoteStore>,
        clock: Arc<dyn Clock>,
        entropy: Arc<dyn Entropy>,
    ) -> Self {
        Self {
            groups,
            quotes,
            clock,
            entropy,
            links: None,
            public_base_url: DEFAULT_PUBLIC_BASE_URL.to_owned(),
        }
    }

    /// Absolute links point under `url` (`public_base_url`, without a
    /// trailing slash).
    #[must_use]
    pub fn with_public_base_url(mut self, url: &str) -> Self {
        url.trim_end_matches('/')
            .clone_into(&mut self.public_base_url);
        self
    }

    /// Provisions hosted enrollments into the employer portal: a
    /// set-password link stored with the enrollment and, in live mode, the
    /// invitation queued with it (without links, none is made).
    #[must_use]
    pub fn with_portal(mut self, links: PortalLinks) -> Self {
        self.links = Some(links);
        self
    }

    /// Creates the group's enrollment: the group becomes `enrolled` with
    /// company state `sandbox`, and `enrollment.created` is sent.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] for a bad body or a quote that is not the
    /// group's; [`ServiceError::NotFound`] outside the scope;
    /// [`ServiceError::Enrollment`] for a second enrollment, a
    /// price-on-plan quote or a quote that cannot be used now;
    /// [`ServiceError::Conflict`] for an enrolled domain.
    pub async fn create(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        input: EnrollmentInput,
    ) -> Result<EnrollmentView, ServiceError> {
        check_signatory(&input.signatory)?;
        let group = self.groups.group(scope, group_id).await?;
        if self
            .quotes
            .group_enrollment(scope, group_id)
            .await?
            .is_some()
        {
            return Err(EnrollmentRefusal::AlreadyEnrolled.into());
        }
        let quote = match self.quotes.quote(scope, &input.quote_id).await {
            Ok(q) if q.group_id == *group_id => q,
            Ok(_) | Err(StoreError::NotFound) => {
                return Err(ServiceError::Invalid(vec![FieldError::new(
                    "quote_id",
                    "is not a quote of this group",
                )]));
            }
            Err(e) => return Err(e.into()),
        };
        if quote.kind == QuoteKind::PriceOnPlan {
            return Err(EnrollmentRefusal::PriceOnPlanQuote.into());
        }
        let now_ms = self.clock.now_ms();
        let now = now_ms.div_euclid(1000);
        check_quote_use(
            quote.status,
            quote.expires_at,
            quote.rating_digest.as_deref(),
            group_pricing_digest(&group).as_deref(),
            now,
        )
        .map_err(quote_refusal)?;
        let start_date = match input.start_date {
            Some(d) if d < crate::services::quotes::date_of(now) => {
                return Err(ServiceError::Invalid(vec![FieldError::new(
                    "start_date",
                    "must not be in the past",
                )]));
            }
            Some(d) => d,
            None => quote
                .body
                .market()
                .and_then(|m| pricing_core::census::date_opt::parse(&m.plan_year_start_date).ok())
                .ok_or_else(|| {
                    ServiceError::Invalid(vec![FieldError::new(
                        "start_date",
                        "is required: the quote names no plan-year start",
                    )])
                })?,
        };
        let start = pricing_core::census::date_opt::format(start_date);
        let minter = Minter::new(self.entropy.as_ref());
        let mut body = document(
            &self.public_base_url,
            &group,
            &start,
            input.onboarding_mode,
            scope.mode,
        );
        body.signatory = Some(SignatoryDoc {
            name: input.signatory.name.trim().to_owned(),
            email: input.signatory.email.trim().to_owned(),
        });
        let event = |id: &EnrollmentId| NewEvent {
            id: minter.event_id(),
            scope: scope.clone(),
            created_at: now,
            data: EventData::EnrollmentCreated(EnrollmentCreated {
                enrollment_id: id.clone(),
                group_id: group_id.clone(),
                quote_id: quote.id.clone(),
                start_date: start.clone(),
                company_domain: group.domain.clone(),
                onboarding_mode: mode_str(input.onboarding_mode).to_owned(),
            }),
        };
        let enrollment = with_fresh_id(|| {
            let id = minter.enrollment_id_at(now_ms);
            let portal = self.invitation(&minter, scope, &id, group_id, &input, now_ms);
            let enrollment = Enrollment {
                id,
                scope: scope.clone(),
                group_id: group_id.clone(),
                quote_id: quote.id.clone(),
                onboarding_mode: input.onboarding_mode,
                body: body.clone(),
                onboarding: Checklist::default(),
                onboarding_revision: 0,
                created_at: now,
            };
            let events = [event(&enrollment.id)];
            let store = Arc::clone(&self.quotes);
            async move {
                let (link, jobs) = match &portal {
                    Some(m) => (Some(m.link.clone()), m.jobs.as_slice()),
                    None => (None, &[][..]),
                };
                store
                    .insert_enrollment(&enrollment, &events, link, jobs)
                    .await?;
                Ok((enrollment, portal))
            }
        })
        .await
        .map_err(|e| match e {
            ServiceError::Conflict(Conflict::QuoteStale) => quote_refusal(QuoteUse::Stale),
            other => other,
        })?;
        let (enrollment, portal) = enrollment;
        let employer_portal = portal_view(
            &self.public_base_url,
            &enrollment,
            portal.map(|m| m.issued.set_password_url),
        );
        Ok(EnrollmentView {
            enrollment,
            company_state: Some(CompanyState::Sandbox),
            employer_portal,
        })
    }

    /// The hosted signatory's first set-password link, with the portal
    /// invitation queued in live mode.
    fn invitation(
        &self,
        minter: &Minter<'_>,
        scope: &Scope,
        id: &EnrollmentId,
        group_id: &GroupId,
        input: &EnrollmentInput,
        now_ms: i64,
    ) -> Option<MintedLink> {
        let links = self.links.as_ref()?;
        (input.onboarding_mode == OnboardingMode::Hosted).then(|| {
            links.mint(
                minter,
                LinkFor {
                    scope,
                    enrollment: id,
                    group: group_id,
                    email: input.signatory.email.trim(),
                },
                now_ms,
                portal_invite,
            )
        })
    }

    /// The view of a stored enrollment: the company state and the
    /// portal's newest usable link.
    async fn view(
        &self,
        enrollment: Enrollment,
        company_state: Option<CompanyState>,
    ) -> Result<EnrollmentView, ServiceError> {
        let link = match &self.links {
            Some(links) if enrollment.body.employer_portal.is_some() => links
                .current(
                    &enrollment.scope,
                    &enrollment.id,
                    self.clock.now_ms().div_euclid(1000),
                )
                .await?
                .map(|l| l.set_password_url),
            _ => None,
        };
        let employer_portal = portal_view(&self.public_base_url, &enrollment, link);
        Ok(EnrollmentView {
            enrollment,
            company_state,
            employer_portal,
        })
    }

    /// Reads an enrollment of the scope.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope.
    pub async fn get(
        &self,
        scope: &Scope,
        id: &EnrollmentId,
    ) -> Result<EnrollmentView, ServiceError> {
        let enrollment = self.quotes.enrollment(scope, id).await?;
        let group = self.groups.group(scope, &enrollment.group_id).await?;
        self.view(enrollment, group.company_state).await
    }

    /// The group's enrollment, if any.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope.
    pub async fn of_group(
        &self,
        scope: &Scope,
        group_id: &GroupId,
    ) -> Result<Option<EnrollmentView>, ServiceError> {
        let group = self.groups.group(scope, group_id).await?;
        match self.quotes.group_enrollment(scope, group_id).await? {
            Some(enrollment) => Ok(Some(self.view(enrollment, group.company_state).await?)),
            None => Ok(None),
        }
    }

    /// The provisioned company goes live: `sandbox` → `prod`, the group
    /// becomes `active`, and `group.state_changed` is sent.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope;
    /// [`ServiceError::Enrollment`] without an enrollment or when already
    /// live.
    pub async fn go_live(&self, scope: &Scope, group_id: &GroupId) -> Result<Group, ServiceError> {
        let group = self.groups.group(scope, group_id).await?;
        let next = go_live(group.company_state).map_err(|_| {
            ServiceError::from(match group.company_state {
                Some(CompanyState::Prod) => EnrollmentRefusal::AlreadyLive,
                _ => EnrollmentRefusal::NotProvisioned,
            })
        })?;
        // Without a completed checklist the go-live is forced (the test
        // helper, the operator): no step is completed, and the event says so.
        let forced = !self
            .quotes
            .group_enrollment(scope, group_id)
            .await?
            .is_some_and(|e| e.onboarding.complete());
        let now = self.clock.now_ms().div_euclid(1000);
        let event = NewEvent {
            id: Minter::new(self.entropy.as_ref()).event_id(),
            scope: scope.clone(),
            created_at: now,
            data: EventData::GroupStateChanged(GroupStateChanged {
                group_id: group_id.clone(),
                company_domain: group.domain.clone(),
                previous_state: CompanyState::Sandbox.as_str().to_owned(),
                state: CompanyState::Prod.as_str().to_owned(),
                forced,
            }),
        };
        Ok(self
            .groups
            .advance_group(
                scope,
                group_id,
                &GroupAdvance {
                    status: GroupStatus::Active,
                    company_state: Some(next),
                    events: vec![event],
                    now,
                },
            )
            .await?)
    }

    /// Takes a group found by id alone live (the operator's `group go-live`).
    ///
    /// # Errors
    /// As [`Enrollments::go_live`].
    pub async fn go_live_any(&self, group_id: &GroupId) -> Result<Group, ServiceError> {
        let group = self.groups.find_group(group_id).await?;
        let scope = Scope::new(group.partner_id.clone(), group.mode);
        self.go_live(&scope, group_id).await
    }
}

/// `hosted` or `embedded`.
#[must_use]
pub const fn mode_str(mode: OnboardingMode) -> &'static str {
    match mode {
        OnboardingMode::Hosted => "hosted",
        OnboardingMode::Embedded => "embedded",
    }
}

/// The enrollment's `employer_portal` as partners see it: the sign-in
/// page under this service's `public_base_url` (`base`; rows stored
/// before may name another host) and `link`, the newest usable
/// set-password link.
fn portal_view(
    base: &str,
    enrollment: &Enrollment,
    link: Option<String>,
) -> Option<EmployerPortal> {
    enrollment
        .body
        .employer_portal
        .as_ref()
        .map(|stored| EmployerPortal {
            provisioned: stored.provisioned,
            signin_url: format!("{base}/portal/sign-in"),
            invite_suppressed: stored.invite_suppressed,
            set_password_url: link,
        })
}

fn quote_refusal(reason: QuoteUse) -> ServiceError {
    EnrollmentRefusal::QuoteUnusable(reason).into()
}

/// The errors of a signatory's fields that were sent (a missing one is the
/// caller's to report): a name of 1 to 200 characters, an email address.
#[must_use]
pub fn signatory_errors(name: Option<&str>, email: Option<&str>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(name) = name {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 200 {
            errors.push(FieldError::new(
                "signatory.name",
                "must be 1 to 200 characters",
            ));
        }
    }
    if let Some(email) = email {
        errors.extend(check_email("signatory.email", email));
    }
    errors
}

fn check_signatory(s: &Signatory) -> Result<(), ServiceError> {
    let errors = signatory_errors(Some(&s.name), Some(&s.email));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Invalid(errors))
    }
}

/// The market figures of an enrolled quote (only a market-rate quote can
/// be enrolled).
///
/// # Errors
/// [`ServiceError::Internal`] for a price-on-plan quote.
pub(crate) fn enrolled_figures(quote: &crate::quote::Quote) -> Result<&MarketQuote, ServiceError> {
    quote
        .body
        .market()
        .ok_or_else(|| ServiceError::Internal("the enrolled quote has no market figures".into()))
}

/// The stored document of a new enrollment. Identity and state fields are
/// added by the adapter that answers.
fn document(
    base: &str,
    group: &Group,
    start: &str,
    mode: OnboardingMode,
    key_mode: Mode,
) -> EnrollmentDocument {
    let employer_portal = (mode == OnboardingMode::Hosted).then(|| EmployerPortal {
        provisioned: true,
        signin_url: format!("{base}/portal/sign-in"),
        // The link lives in `portal_links`; the view shows it.
        set_password_url: None,
        // Test mode never sends email.
        invite_suppressed: !deliverable(key_mode),
    });
    EnrollmentDocument {
        start_date: start.to_owned(),
        company_domain: group.domain.clone(),
        employer_portal,
        signatory: None,
    }
}

#[cfg(test)]
mod tests;
