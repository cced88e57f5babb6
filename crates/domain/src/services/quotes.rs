//! Quotes: `POST /groups/{id}/quotes` priced by `pricing-core` from the
//! stored census and its market comparison, the reads, and underwriting's
//! finalization of an `in_review` quote.
//!
//! The market comparison (the simulation of both versions on the card's
//! market base plan) is the expensive part of a quote. A census write
//! enqueues it as a job ([`comparison`]); while that job is open a quote
//! answers 409 `rates_pending`. A quote then prices from the job's stored
//! result when it was made for the same census, plan-year start and card,
//! and runs the simulation itself otherwise (another plan-year start, or a
//! job that gave up). Either way the numbers are the same: the engine is
//! deterministic.

pub mod comparison;

use std::sync::Arc;

use pricing_core::census::{CensusMember, date_opt};
use pricing_core::quote::{market_comparison, price_quote};
use pricing_core::{CensusContext, CensusRules, PricingError, QuoteRequest, RateCard, RatedCensus};
use time::{Date, Duration, OffsetDateTime};

use crate::census::{pricing_digest, rating_digest};
use crate::document::event::QuoteFinalized;
use crate::document::{EventData, MarketQuote, QuoteDocument};
use crate::error::FieldError;
use crate::event::NewEvent;
use crate::group::Group;
use crate::ids::{GroupId, QuoteId};
use crate::job::JobKind;
use crate::page::{GroupQuery, Page, PageRequest};
use crate::ports::Minter;
use crate::quote::{Quote, QuoteFilter, QuoteKind, QuoteStatus};
use crate::scope::Scope;
use crate::services::{QuoteRefusal, RecordPorts, ServiceError, with_fresh_id};

pub use comparison::{Comparison, ComparisonHandler};
pub use pricing_core::VersionId;

/// The body of `POST /groups/{id}/quotes` (contract section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteInput {
    /// `diamond` (default) or `value`.
    pub plan: VersionId,
    /// Default: the first day of the next month.
    pub plan_year_start: Option<Date>,
    /// 0..=100, default 100.
    pub employer_contribution_pct: Option<u32>,
}

impl Default for QuoteInput {
    fn default() -> Self {
        Self {
            plan: VersionId::Diamond,
            plan_year_start: None,
            employer_contribution_pct: None,
        }
    }
}

/// The body of `POST /groups/{id}/quotes` as sent: every field is checked
/// by [`QuoteBody::validate`], which names every bad one at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuoteBody {
    /// `diamond` or `value`.
    pub plan_id: Option<String>,
    /// `YYYY-MM-DD`.
    pub plan_year_start_date: Option<String>,
    /// 0 to 100.
    pub employer_contribution_pct: Option<i64>,
}

impl QuoteBody {
    /// The quote input, when every field is valid; `today` bounds the
    /// plan-year start.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] naming every bad field.
    pub fn validate(self, today: Date) -> Result<QuoteInput, ServiceError> {
        let mut errors = Vec::new();
        let plan = match self.plan_id.as_deref() {
            None | Some("diamond") => VersionId::Diamond,
            Some("value") => VersionId::Value,
            Some(_) => {
                errors.push(FieldError::new("plan_id", "must be diamond or value"));
                VersionId::Diamond
            }
        };
        let plan_year_start = match self.plan_year_start_date.as_deref().map(date_opt::parse) {
            None => None,
            Some(Ok(d)) => Some(d),
            Some(Err(_)) => {
                errors.push(FieldError::new(
                    "plan_year_start_date",
                    "must be a date (YYYY-MM-DD)",
                ));
                None
            }
        };
        let employer_contribution_pct = match self.employer_contribution_pct.map(u32::try_from) {
            None => None,
            Some(Ok(p)) => Some(p),
            Some(Err(_)) => {
                errors.push(contribution_error());
                None
            }
        };
        let input = QuoteInput {
            plan,
            plan_year_start,
            employer_contribution_pct,
        };
        if let Err(bad) = input.resolve(today) {
            errors.extend(bad);
        }
        if errors.is_empty() {
            Ok(input)
        } else {
            Err(ServiceError::Invalid(errors))
        }
    }
}

fn contribution_error() -> FieldError {
    FieldError::new(
        "employer_contribution_pct",
        "must be an integer from 0 to 100",
    )
}

impl QuoteInput {
    /// The plan-year start and the employer contribution asked for, with
    /// their defaults: the first day of next month, 100 %.
    ///
    /// # Errors
    /// Each field out of its range.
    fn resolve(&self, today: Date) -> Result<(Date, u32), Vec<FieldError>> {
        let mut errors = Vec::new();
        let start = match self.plan_year_start {
            None => next_month_start(today),
            Some(d) => match check_start(d, today) {
                Ok(d) => d,
                Err(ServiceError::Invalid(bad)) => {
                    errors.extend(bad);
                    d
                }
                Err(_) => d,
            },
        };
        let contribution = self.employer_contribution_pct.unwrap_or(100);
        if contribution > 100 {
            errors.push(contribution_error());
        }
        if errors.is_empty() {
            Ok((start, contribution))
        } else {
            Err(errors)
        }
    }
}

/// How far ahead a plan year may start, in days.
pub const MAX_PLAN_YEAR_LEAD_DAYS: i64 = 366;

/// Census validation for pricing stored members: every stored row already
/// passed the caller's rules (the broker date-of-birth rule included) when
/// it was written.
pub(crate) const STORED_RULES: CensusRules = CensusRules { require_dob: false };

/// The UTC date of Unix seconds `secs`.
#[must_use]
pub fn date_of(secs: i64) -> Date {
    OffsetDateTime::from_unix_timestamp(secs)
        .map_or(OffsetDateTime::UNIX_EPOCH, |t| t)
        .date()
}

/// The first day of the month after `today`: the default plan-year start.
#[must_use]
pub fn next_month_start(today: Date) -> Date {
    let (year, month) = match today.month() {
        time::Month::December => (today.year() + 1, time::Month::January),
        m => (today.year(), m.next()),
    };
    Date::from_calendar_date(year, month, 1).unwrap_or(today)
}

/// Seconds a caller should wait before retrying a quote while the market
/// comparison of `members` runs (about 4,000 members a second, at least 1).
#[must_use]
pub fn rates_retry_after(members: u32) -> u32 {
    (1 + members / 4_000).min(30)
}

/// Maps a pricing failure onto the service's vocabulary (the one mapping,
/// `From<PricingError>`), then names the stored census's `members` rows in
/// the census field paths.
pub(crate) fn pricing_error(e: PricingError) -> ServiceError {
    match ServiceError::from(e) {
        ServiceError::Invalid(details) => ServiceError::Invalid(
            details
                .into_iter()
                .map(|d| FieldError {
                    field: d
                        .field
                        .strip_prefix("census")
                        .map_or(d.field.clone(), |rest| format!("members{rest}")),
                    ..d
                })
                .collect(),
        ),
        other => other,
    }
}

/// The normalisation inputs of a group's census.
pub(crate) fn context<'a>(
    card: &'a RateCard,
    scope: &'a Scope,
    group: &'a Group,
    plan_year_start: Date,
) -> CensusContext<'a> {
    CensusContext {
        card,
        plan_year_start,
        partner: Some(scope.partner.as_str()),
        rules: STORED_RULES,
        fallback_zip: fallback_zip(group),
    }
}

/// The ZIP that rates members whose own ZIP has no priced area: the
/// group's address ZIP, when it is one.
pub(crate) fn fallback_zip(group: &Group) -> Option<&str> {
    group
        .address
        .as_ref()
        .and_then(|a| a.zip.as_deref())
        .filter(|z| pricing_core::census::is_zip5(z))
}

/// The digest a quote of `group` records and an enrollment compares: the
/// census's rating digest with the group's fallback ZIP. `None` before the
/// first census write.
#[must_use]
pub fn group_pricing_digest(group: &Group) -> Option<String> {
    group
        .rating_digest
        .as_deref()
        .map(|d| pricing_digest(d, fallback_zip(group)))
}

/// The quotes service.
#[derive(Clone)]
pub struct Quotes {
    ports: RecordPorts,
    card: Arc<RateCard>,
}

impl Quotes {
    /// The service over its ports and the rate card in use.
    #[must_use]
    pub fn new(ports: RecordPorts, card: Arc<RateCard>) -> Self {
        Self { ports, card }
    }

    /// The use case of `POST /groups/{id}/quotes`: checks every field of
    /// `body`, then that the census's market comparison has finished, then
    /// `charge`s the request — so a bad request, another partner's group
    /// or a `rates_pending` answer costs nothing — and prices the quote
    /// ([`Quotes::create`]).
    ///
    /// # Errors
    /// As [`Quotes::create`], and what `charge` refuses with (a rate
    /// limit); nothing is stored then.
    pub async fn request<E: From<ServiceError>>(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        body: QuoteBody,
        charge: impl AsyncFnOnce() -> Result<(), E>,
    ) -> Result<Quote, E> {
        let today = date_of(self.ports.clock.now_ms().div_euclid(1000));
        let input = body.validate(today)?;
        let (start, contribution) = input.resolve(today).map_err(ServiceError::Invalid)?;
        let group = self.check_rates(scope, group_id).await?;
        charge().await?;
        Ok(self
            .price(scope, &group, input.plan, start, contribution)
            .await?)
    }

    /// Prices a quote from the group's stored census.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope;
    /// [`ServiceError::RatesPending`] while the market comparison runs;
    /// [`ServiceError::Invalid`] for a bad body;
    /// [`ServiceError::CensusRequired`] or [`ServiceError::MarketUnavailable`]
    /// when the census cannot be priced; [`ServiceError::AmountOutOfRange`]
    /// when an amount overflows while pricing.
    pub async fn create(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        input: QuoteInput,
    ) -> Result<Quote, ServiceError> {
        let today = date_of(self.ports.clock.now_ms().div_euclid(1000));
        let (start, contribution) = input.resolve(today).map_err(ServiceError::Invalid)?;
        let group = self.check_rates(scope, group_id).await?;
        self.price(scope, &group, input.plan, start, contribution)
            .await
    }

    /// Prices a quote of `group` (whose comparison has finished) and
    /// stores it.
    async fn price(
        &self,
        scope: &Scope,
        group: &Group,
        plan: VersionId,
        start: Date,
        contribution: u32,
    ) -> Result<Quote, ServiceError> {
        let group_id = &group.id;
        let now_ms = self.ports.clock.now_ms();
        let now = now_ms.div_euclid(1000);
        let members: Vec<CensusMember> = self
            .ports
            .census
            .census(scope, group_id)
            .await?
            .into_iter()
            .map(|m| m.member)
            .collect();
        // The digest of the census actually priced: a write that lands
        // between the reads makes this quote stale, never wrongly current.
        let digest = rating_digest(&members);
        let cached = self
            .ports
            .jobs
            .latest_result(scope, group_id, JobKind::MarketComparison)
            .await?
            .and_then(|text| Comparison::parse(&text))
            .filter(|c| c.matches(&digest, start, self.card.version(), fallback_zip(group)))
            .map(|c| c.simulation);
        let request = QuoteRequest {
            plan,
            employer_contribution_pct: contribution,
            current_pepm_cents: group.current_coverage.as_ref().and_then(|c| c.pepm_cents),
        };
        let card = Arc::clone(&self.card);
        let (task_scope, task_group) = (scope.clone(), group.clone());
        let priced = tokio::task::spawn_blocking(move || {
            let ctx = context(&card, &task_scope, &task_group, start);
            let rated = RatedCensus::build(&members, ctx)?;
            let sim = cached.unwrap_or_else(|| market_comparison(&rated));
            price_quote(&rated, &sim, request)
        })
        .await
        .map_err(|e| ServiceError::Internal(Box::new(e)))?
        .map_err(pricing_error)?;

        let updated_at = self.card.updated_at().map(str::to_owned);
        let body = QuoteDocument::Market(Box::new(MarketQuote::of(
            &priced,
            updated_at.as_deref(),
            contribution,
        )));
        let status = QuoteStatus::from(priced.status);
        let expires_at = now.saturating_add(i64::from(priced.expires_after_days) * 86_400);
        let minter = Minter::new(self.ports.entropy.as_ref());
        let template = Quote {
            acceptance: None,
            id: minter.quote_id_at(now_ms),
            kind: QuoteKind::Quote,
            request_digest: None,
            scope: scope.clone(),
            group_id: group_id.clone(),
            status,
            rating_digest: Some(pricing_digest(&digest, fallback_zip(group))),
            expires_at,
            body,
            created_at: now,
        };
        let mut first = true;
        with_fresh_id(|| {
            let mut quote = template.clone();
            if !std::mem::take(&mut first) {
                quote.id = minter.quote_id_at(now_ms);
            }
            let store = Arc::clone(&self.ports.quotes);
            async move {
                store.insert_quote(&quote, &[]).await?;
                Ok(quote)
            }
        })
        .await
    }

    /// The group, when its census's market comparison has finished.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope;
    /// [`ServiceError::RatesPending`] while the comparison runs.
    pub async fn check_rates(
        &self,
        scope: &Scope,
        group_id: &GroupId,
    ) -> Result<Group, ServiceError> {
        let group = self.ports.groups.group(scope, group_id).await?;
        if self
            .ports
            .jobs
            .open_job(scope, group_id, JobKind::MarketComparison)
            .await?
            .is_some()
        {
            return Err(ServiceError::RatesPending {
                retry_after_secs: rates_retry_after(group.census_member_count),
            });
        }
        Ok(group)
    }

    /// Reads a quote of the scope.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope.
    pub async fn get(&self, scope: &Scope, id: &QuoteId) -> Result<Quote, ServiceError> {
        Ok(self.ports.quotes.quote(scope, id).await?)
    }

    /// The group's quotes that `filter` keeps, newest first.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] for a group outside the scope.
    pub async fn list(
        &self,
        scope: &Scope,
        group: &GroupId,
        filter: &QuoteFilter,
        page: &PageRequest,
    ) -> Result<Page<Quote>, ServiceError> {
        // An unknown group is not found, not an empty list.
        self.ports.groups.group(scope, group).await?;
        let query = GroupQuery {
            group,
            filter: *filter,
            page,
        };
        Ok(self.ports.quotes.quotes(scope, query).await?)
    }

    /// Underwriting finalizes an `in_review` quote: it becomes `ready` and
    /// `quote.finalized` is sent.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope;
    /// [`QuoteRefusal::NotInReview`] unless the quote is `in_review`.
    pub async fn finalize(&self, scope: &Scope, id: &QuoteId) -> Result<Quote, ServiceError> {
        let mut quote = self.ports.quotes.quote(scope, id).await?;
        let next = quote.status.finalize().map_err(|_| {
            ServiceError::from(QuoteRefusal::NotInReview {
                status: quote.status,
            })
        })?;
        let minter = Minter::new(self.ports.entropy.as_ref());
        let event = NewEvent {
            id: minter.event_id(),
            scope: scope.clone(),
            created_at: self.ports.clock.now_ms().div_euclid(1000),
            data: EventData::QuoteFinalized(QuoteFinalized {
                quote_id: quote.id.clone(),
                group_id: quote.group_id.clone(),
                status: next.as_str().to_owned(),
            }),
        };
        self.ports
            .quotes
            .update_quote(scope, id, next, &quote.body, std::slice::from_ref(&event))
            .await?;
        quote.status = next;
        Ok(quote)
    }

    /// Finalizes a quote found by id alone (the operator's `quote finalize`).
    ///
    /// # Errors
    /// As [`Quotes::finalize`].
    pub async fn finalize_any(&self, id: &QuoteId) -> Result<Quote, ServiceError> {
        let quote = self.ports.quotes.find_quote(id).await?;
        self.finalize(&quote.scope, id).await
    }
}

/// A requested plan-year start must not lie in the past nor more than a
/// year ahead (366 days) of `today`.
///
/// # Errors
/// [`ServiceError::Invalid`] naming `plan_year_start_date`.
pub fn check_start(start: Date, today: Date) -> Result<Date, ServiceError> {
    let field = "plan_year_start_date";
    if start < today {
        return Err(ServiceError::Invalid(vec![FieldError::new(
            field,
            "must not be in the past",
        )]));
    }
    if start > today.saturating_add(Duration::days(MAX_PLAN_YEAR_LEAD_DAYS)) {
        return Err(ServiceError::Invalid(vec![FieldError::new(
            field,
            format!("must be at most {MAX_PLAN_YEAR_LEAD_DAYS} days ahead"),
        )]));
    }
    Ok(start)
}

#[cfg(test)]
mod tests;
