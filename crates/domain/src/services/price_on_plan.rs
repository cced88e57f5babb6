//! Price-on-plan (`POST /price-on-plan`): the `diamond` and `value`
//! versions priced by `pricing-core` on one plan the partner priced itself,
//! with the census kept as a lead (a new group, its census and a quote).
//!
//! A request is validated, rated and classified at once ([`PriceOnPlan::prepare`]),
//! so a bad one is answered before anything is stored or charged. A good
//! one is stored as a lead with its pricing job in one transaction
//! ([`PriceOnPlan::start`]) and then priced, by the request itself within
//! the configured wait budget and, past it, in the background: the caller
//! gets `pricing` and sends the same body again. That body finds the
//! stored quote by the request's digest ([`PriceOnPlan::find`]): pending,
//! or finished with the stored answer. The job is durable: a process that
//! stops mid-pricing leaves a claimed job whose lease runs out, and any
//! process's worker then prices it ([`PriceOnPlanHandler`]).

mod handler;
mod lead;
mod types;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pricing_core::census::{CensusMember, is_zip5};
use pricing_core::price_on_plan::{Prepared, Preview};
use pricing_core::{PriceOnPlanRequest, PricingContext, PricingError, RateCard};
use sha2::{Digest as _, Sha256};
use time::Date;

use crate::census::{CensusWrite, MAX_CENSUS_MEMBERS, duplicate_errors, rating_digest};
use crate::document::{JobPayload, QuoteDocument};
use crate::error::FieldError;
use crate::job::{JobClaim, JobKind, NewJob};
use crate::ports::Minter;
use crate::quote::{Quote, QuoteKind, QuoteStatus};
use crate::scope::Scope;
use crate::services::jobs::JOB_LEASE_MS;
use crate::services::quotes::{date_of, next_month_start};
use crate::services::{RecordPorts, ServiceError, with_fresh_id};
use crate::store::{Conflict, Lead, StoreError};

pub use handler::PriceOnPlanHandler;
use lead::{company_errors, domain_taken, lead_group};
pub use types::{Company, Document, PricingInput, PricingPayload};

/// The default wait budget (contract: `pricing.wait_budget_ms`).
pub const DEFAULT_WAIT_BUDGET: Duration = Duration::from_secs(10);

/// What a request came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Priced: the quote holds the answer (`ready`, `in_review` or
    /// `unavailable`).
    Finished(Quote),
    /// Still pricing (`pricing`): send the same body again.
    Pending(Quote),
}

impl Outcome {
    /// The quote, whose status says which it is.
    #[must_use]
    pub fn into_quote(self) -> Quote {
        match self {
            Self::Finished(q) | Self::Pending(q) => q,
        }
    }
}

/// A request validated and prepared, ready to be stored and priced.
#[derive(Debug)]
pub struct Ready {
    input: PricingInput,
    prepared: Prepared,
    company_zip: Option<String>,
    assumptions: Vec<String>,
    start: Date,
}

impl Ready {
    /// What is known before the simulation.
    #[must_use]
    pub fn preview(&self) -> Preview {
        self.prepared.preview()
    }
}

/// The price-on-plan service.
#[derive(Clone)]
pub struct PriceOnPlan {
    ports: RecordPorts,
    card: Arc<RateCard>,
    wait_budget: Duration,
}

impl PriceOnPlan {
    /// The service over its ports, the card in use and the wait budget.
    #[must_use]
    pub fn new(ports: RecordPorts, card: Arc<RateCard>, wait_budget: Duration) -> Self {
        Self {
            ports,
            card,
            wait_budget,
        }
    }

    /// The plan-year start a request made now is priced for: the first day
    /// of next month.
    #[must_use]
    pub fn plan_year_start(&self) -> Date {
        next_month_start(date_of(self.ports.clock.now_ms().div_euclid(1000)))
    }

    /// The digest by which the same request finds its quote again: the
    /// canonical body (field order and style do not matter), the card
    /// version and the plan-year start. The scope is part of the lookup.
    #[must_use]
    pub fn request_digest(&self, canonical_body: &[u8], start: Date) -> String {
        let mut h = Sha256::new();
        h.update(self.card.version().as_bytes());
        h.update(b"|");
        h.update(start.to_string().as_bytes());
        h.update(b"|");
        h.update(canonical_body);
        hex::encode(h.finalize())
    }

    /// The use case of `POST /price-on-plan`: a repeat of a body (its
    /// canonical bytes, found by [`PriceOnPlan::request_digest`]) answers
    /// from its quote, finished or still pricing, and is free; a new body
    /// is validated and rated ([`PriceOnPlan::prepare`]), then `charge`d —
    /// so a bad request costs nothing — and priced
    /// ([`PriceOnPlan::start`]) within the wait budget since `received`.
    /// The answer is the quote, finished or pending.
    ///
    /// # Errors
    /// As [`PriceOnPlan::prepare`] and [`PriceOnPlan::start`], and what
    /// `charge` refuses with (a rate limit); nothing is stored then.
    pub async fn price<E: From<ServiceError>>(
        &self,
        scope: &Scope,
        canonical_body: &[u8],
        input: PricingInput,
        received: Instant,
        charge: impl AsyncFnOnce() -> Result<(), E>,
    ) -> Result<Quote, E> {
        let digest = self.request_digest(canonical_body, self.plan_year_start());
        if let Some(found) = self.find(scope, &digest).await? {
            return Ok(found.into_quote());
        }
        let ready = self.prepare(scope, input).await?;
        charge().await?;
        Ok(self
            .start(scope, ready, &digest, received)
            .await?
            .into_quote())
    }

    /// The quote an earlier identical request made: finished, or pending
    /// while its pricing job is open. A pending quote whose job gave up is
    /// not found (the request prices again), nor is an expired one.
    ///
    /// # Errors
    /// Store failures.
    pub async fn find(&self, scope: &Scope, digest: &str) -> Result<Option<Outcome>, ServiceError> {
        let now = self.ports.clock.now_ms().div_euclid(1000);
        let Some(quote) = self.ports.quotes.lead_quote(scope, digest, now).await? else {
            return Ok(None);
        };
        if quote.status != QuoteStatus::Pricing {
            return Ok(Some(Outcome::Finished(quote)));
        }
        let open = self
            .ports
            .jobs
            .open_job(scope, &quote.group_id, JobKind::PriceOnPlan)
            .await?;
        Ok(open.map(|_| Outcome::Pending(quote)))
    }

    /// Validates, rates and classifies a request (off the async workers):
    /// every error a request can get comes from here, before anything is
    /// stored or charged.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] naming every bad field;
    /// [`ServiceError::CensusRequired`], [`ServiceError::MarketUnavailable`]
    /// or [`ServiceError::AmountOutOfRange`] when it cannot be priced;
    /// [`ServiceError::Conflict`] when an enrolled group of the mode holds
    /// `company.domain` (checked again when the lead is stored).
    pub async fn prepare(&self, scope: &Scope, input: PricingInput) -> Result<Ready, ServiceError> {
        let start = self.plan_year_start();
        let mut errors = Vec::new();
        if input.census.len() > MAX_CENSUS_MEMBERS {
            errors.push(FieldError::new(
                "census",
                format!("at most {MAX_CENSUS_MEMBERS} members"),
            ));
        }
        if input.plan_required && input.plan.is_none() {
            errors.push(FieldError::new("plan", "is required"));
        }
        if let Some(c) = &input.company {
            errors.extend(company_errors(c));
        }
        let refs: Vec<(usize, &CensusMember)> = input.census.iter().enumerate().collect();
        errors.extend(duplicate_errors("census", &refs));
        let mut assumptions = vec![format!(
            "Plan year starts {start} (the first day of next month)."
        )];
        let company_zip = match input.company.as_ref().and_then(|c| c.zip.clone()) {
            Some(zip) => Some(zip),
            None => {
                let first = input
                    .census
                    .iter()
                    .map(|m| m.zip.as_str())
                    .find(|z| is_zip5(z))
                    .map(str::to_owned);
                if let Some(zip) = &first {
                    assumptions.push(format!(
                        "Company ZIP {zip}: company.zip was not sent, so the first census ZIP is used."
                    ));
                }
                first
            }
        };
        if input.company.is_none() {
            assumptions.push(
                "Company: none was sent, so the census is kept as a lead under a generated company."
                    .to_owned(),
            );
        }
        let card = Arc::clone(&self.card);
        let request = PriceOnPlanRequest {
            census: input.census.clone(),
            plan: input.plan.clone(),
            market_plans: input.market_plans.clone(),
            company_zip: company_zip.clone(),
        };
        let rules = input.rules;
        let partner = scope.partner.to_string();
        let prepared = tokio::task::spawn_blocking(move || {
            pricing_core::prepare(
                &request,
                PricingContext {
                    card: &card,
                    plan_year_start: start,
                    partner: Some(&partner),
                    rules,
                },
            )
        })
        .await
        .map_err(|e| ServiceError::Internal(Box::new(e)));
        let ready = match prepared? {
            Ok(prepared) if errors.is_empty() => Ok(Ready {
                input,
                prepared,
                company_zip,
                assumptions,
                start,
            }),
            Ok(_) => Err(ServiceError::Invalid(sorted(errors))),
            Err(PricingError::InvalidPlan(mut e) | PricingError::InvalidCensus(mut e)) => {
                errors.append(&mut e);
                Err(ServiceError::Invalid(sorted(errors)))
            }
            Err(_) if !errors.is_empty() => Err(ServiceError::Invalid(sorted(errors))),
            Err(e) => Err(ServiceError::from(e)),
        }?;
        if let Some(domain) = ready
            .input
            .company
            .as_ref()
            .and_then(|c| c.domain.as_deref())
            && self.ports.groups.domain_held(scope.mode, domain).await?
        {
            return Err(domain_taken());
        }
        Ok(ready)
    }

    /// Stores the lead and prices it: within what is left of the wait
    /// budget since `received`, the finished quote; past it, the pending
    /// one (the pricing goes on in the background and stores its answer).
    ///
    /// # Errors
    /// [`ServiceError::Conflict`] when an enrolled group holds the
    /// company's domain; store failures; [`ServiceError::Internal`] when
    /// the pricing fails within the budget.
    pub async fn start(
        &self,
        scope: &Scope,
        ready: Ready,
        digest: &str,
        received: Instant,
    ) -> Result<Outcome, ServiceError> {
        let now_ms = self.ports.clock.now_ms();
        let now = now_ms.div_euclid(1000);
        let preview = ready.prepared.preview();
        let doc = Document {
            plan_year_start: ready.start.to_string(),
            estimated_ready_at: now + i64::from(estimate_secs(&preview)),
            preview,
            generated_at: None,
            answer: None,
        };
        let body = QuoteDocument::PriceOnPlan(Box::new(doc));
        let inline = !self.wait_budget.is_zero();
        let minter = Minter::new(self.ports.entropy.as_ref());
        let members = &ready.input.census;
        let digest_of_census = rating_digest(members);
        let expiry_days = self
            .card
            .group_params(None, Some(scope.partner.as_str()))
            .map_err(|e| ServiceError::Internal(Box::new(e)))?
            .quote_expiry_days;
        let expires_at = now.saturating_add(i64::from(expiry_days) * 86_400);
        // Each attempt mints the lead's ids afresh; a failure to build the
        // lead is an answer of its own, not a store error to retry on.
        let stored = with_fresh_id::<_, StoreError>(async || {
            let group = match lead_group(
                scope,
                minter.group_id_at(now_ms),
                ready.input.company.as_ref(),
                ready.company_zip.as_deref(),
                members.len(),
                &digest_of_census,
                now,
                ready.start,
            ) {
                Ok(group) => group,
                Err(e) => return Ok(Err(e)),
            };
            let quote = Quote {
                acceptance: None,
                id: minter.quote_id_at(now_ms),
                kind: QuoteKind::PriceOnPlan,
                request_digest: Some(digest.to_owned()),
                scope: scope.clone(),
                group_id: group.id.clone(),
                status: QuoteStatus::Pricing,
                rating_digest: crate::services::quotes::group_pricing_digest(&group),
                expires_at,
                body: body.clone(),
                created_at: now,
            };
            let payload = PricingPayload {
                quote_id: quote.id.clone(),
                plan_year_start: ready.start.to_string(),
                require_dob: ready.input.rules.require_dob,
                company_zip: ready.company_zip.clone(),
                census: ready.input.census.clone(),
                plan: ready.input.plan.clone(),
                market_plans: ready.input.market_plans.clone(),
                assumptions: ready.assumptions.clone(),
            };
            let lead = Lead {
                census: CensusWrite {
                    group_id: group.id.clone(),
                    rows: members.clone(),
                    fresh_ids: members.iter().map(|_| minter.member_id()).collect(),
                    rating_digest: digest_of_census.clone(),
                    job: None,
                    now,
                },
                job: NewJob {
                    id: minter.job_id(),
                    scope: scope.clone(),
                    group_id: Some(group.id.clone()),
                    payload: JobPayload::PriceOnPlan(Box::new(payload)),
                    run_after_ms: now_ms,
                },
                claimed_until_ms: inline.then_some(now_ms.saturating_add(JOB_LEASE_MS)),
                group,
                quote,
            };
            self.ports
                .quotes
                .insert_lead(&lead)
                .await
                .map(|()| Ok(lead))
        })
        .await;
        let lead = match stored {
            Ok(built) => built?,
            Err(StoreError::Conflict(Conflict::DomainTaken)) => return Err(domain_taken()),
            Err(e) => return Err(e.into()),
        };
        let Lead { quote, job, .. } = lead;
        if !inline {
            self.ports.waker.job_queued();
            return Ok(Outcome::Pending(quote));
        }

        // Price here; past the budget the task goes on alone and stores
        // its answer when done.
        let svc = self.clone();
        let Ready {
            prepared,
            assumptions,
            ..
        } = ready;
        let pending = quote.clone();
        let task = tokio::spawn(async move {
            let priced = tokio::task::spawn_blocking(move || prepared.finish())
                .await
                .map_err(|e| ServiceError::Internal(Box::new(e)))?;
            // The request's own claim: the job was stored claimed, its
            // first attempt.
            let claim = JobClaim {
                id: job.id,
                attempt: 1,
            };
            svc.settle(&pending, &claim, priced, assumptions).await
        });
        let remaining = self.wait_budget.saturating_sub(received.elapsed());
        match tokio::time::timeout(remaining, task).await {
            Ok(Ok(result)) => result.map(Outcome::Finished),
            Ok(Err(e)) => Err(ServiceError::Internal(Box::new(e))),
            Err(_) => Ok(Outcome::Pending(quote)),
        }
    }

    /// Stores a pricing's outcome on its quote and completes the job under
    /// `claim`; a failed pricing fails the job. A quote another worker
    /// finished meanwhile is read back as it is.
    async fn settle(
        &self,
        pending: &Quote,
        claim: &JobClaim,
        priced: Result<pricing_core::PriceOnPlan, PricingError>,
        assumptions: Vec<String>,
    ) -> Result<Quote, ServiceError> {
        let finished = self.finish_quote(pending, priced, assumptions).await;
        match &finished {
            Ok(_) => {
                self.ports.jobs.complete_job(claim, &[], None).await?;
            }
            Err(e) => {
                self.ports
                    .jobs
                    .fail_job(claim, None, &e.to_string())
                    .await?;
            }
        }
        finished
    }

    /// Writes the answer into the pending quote.
    async fn finish_quote(
        &self,
        pending: &Quote,
        priced: Result<pricing_core::PriceOnPlan, PricingError>,
        assumptions: Vec<String>,
    ) -> Result<Quote, ServiceError> {
        let mut answer = priced?;
        answer.assumptions.extend(assumptions);
        let status = QuoteStatus::from(answer.status);
        let mut doc = Document::of(pending)?;
        doc.generated_at = Some(self.ports.clock.now_ms().div_euclid(1000));
        doc.answer = Some(answer);
        let body = QuoteDocument::PriceOnPlan(Box::new(doc));
        match self
            .ports
            .quotes
            .update_quote(&pending.scope, &pending.id, status, &body, &[])
            .await
        {
            Ok(()) => Ok(Quote {
                status,
                body,
                ..pending.clone()
            }),
            // Another worker finished it first: its answer is the same.
            Err(StoreError::Conflict(Conflict::QuoteStatusMoved)) => {
                Ok(self.ports.quotes.quote(&pending.scope, &pending.id).await?)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Seconds a pricing is expected to take: about 8 million simulated
/// person-years a second on the two cores of the reference machine, plus a
/// second for everything else.
fn estimate_secs(p: &Preview) -> u32 {
    if !p.simulates {
        return 1;
    }
    let work = u64::try_from(p.census_members)
        .unwrap_or(u64::MAX)
        .saturating_mul(u64::from(p.simulated_plan_years));
    u32::try_from(1 + work / 8_000_000).unwrap_or(u32::MAX)
}

/// Errors sorted by row (then field), the order they are reported in, one
/// per field: where the service and the engine both name a field (a
/// missing `plan`, a bad `company.zip`), the service's message stays.
fn sorted(errors: Vec<FieldError>) -> Vec<FieldError> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<FieldError> = errors
        .into_iter()
        .filter(|e| seen.insert((e.index, e.field.clone())))
        .collect();
    out.sort_by(|a, b| a.index.cmp(&b.index).then_with(|| a.field.cmp(&b.field)));
    out
}

#[cfg(test)]
mod tests;
