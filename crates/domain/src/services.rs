//! Use-case services: what the HTTP adapter and the operator CLI call.
//! Each service holds the ports it needs as `Arc<dyn …>`; unit tests give
//! it `mockall` mocks.

pub mod accounts;
pub mod census;
pub mod elections;
pub mod embed;
pub mod enrollments;
pub mod events;
pub mod groups;
pub mod housekeeping;
pub mod jobs;
pub mod mailbox;
pub mod members;
pub mod onboarding;
pub mod partner_portal;
pub mod partners;
pub mod portal;
pub mod price_on_plan;
pub mod quotes;
mod refusal;
pub mod webhooks;

use std::sync::Arc;

use pricing_core::PricingError;

use crate::error::{Code, DomainError, FieldError};
use crate::ports::{Clock, Entropy, JobWaker};
use crate::store::{CensusStore, Conflict, GroupStore, JobStore, QuoteStore, StoreError};

pub use refusal::{
    ElectionRefusal, EmbedRefusal, EnrollmentRefusal, MemberRefusal, OnboardingRefusal,
    PartnerRefusal, PortalRefusal, PriceOnPlanRefusal, QuoteRefusal,
};

/// The ports of the services over a group's records — census writes,
/// quotes, price-on-plan, elections and the market comparison — built
/// once by the composition root; each service uses the ones it needs.
#[derive(Clone)]
pub struct RecordPorts {
    /// Groups.
    pub groups: Arc<dyn GroupStore>,
    /// Census members.
    pub census: Arc<dyn CensusStore>,
    /// Quotes (and price-on-plan leads).
    pub quotes: Arc<dyn QuoteStore>,
    /// Jobs: the market comparison and price-on-plan pricing.
    pub jobs: Arc<dyn JobStore>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Ids.
    pub entropy: Arc<dyn Entropy>,
    /// Hears of every job queued for the job worker.
    pub waker: Arc<dyn JobWaker>,
}

/// Why a use case refused or failed, in the specification's vocabulary:
/// [`ServiceError::code`] names the envelope's code and
/// [`ServiceError::message`] its message.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// `invalid_request` with `details`.
    #[error("invalid request")]
    Invalid(Vec<FieldError>),
    /// `not_found`.
    #[error("not found")]
    NotFound,
    /// `conflict`: the store refused a write.
    #[error(transparent)]
    Conflict(Conflict),
    /// `conflict`: a state transition the state machine does not allow.
    #[error("cannot move from {from} to {to}")]
    Transition {
        /// Current state.
        from: &'static str,
        /// Requested state.
        to: &'static str,
    },
    /// `rates_pending`: the census's market comparison is running.
    #[error("the market comparison of the census is still running; retry in {retry_after_secs} s")]
    RatesPending {
        /// Suggested wait (`Retry-After`).
        retry_after_secs: u32,
    },
    /// `census_required`: no quotable member.
    #[error("no quotable member: each counted employee needs a zip and a dob or age")]
    CensusRequired,
    /// `market_unavailable`: no rate-card market covers the census.
    #[error("no rate-card market covers the census's ZIP codes")]
    MarketUnavailable,
    /// `amount_out_of_range`: an amount the pricing derives does not fit
    /// (the request's amounts are bounded, so this is a safety net).
    #[error("an amount of this pricing is out of range; check the money fields of the request")]
    AmountOutOfRange,
    /// The enrollments service refused.
    #[error(transparent)]
    Enrollment(#[from] EnrollmentRefusal),
    /// The quotes service refused.
    #[error(transparent)]
    Quote(#[from] QuoteRefusal),
    /// The elections service refused.
    #[error(transparent)]
    Election(#[from] ElectionRefusal),
    /// The members service refused.
    #[error(transparent)]
    Member(#[from] MemberRefusal),
    /// The onboarding service refused.
    #[error(transparent)]
    Onboarding(#[from] OnboardingRefusal),
    /// The embed service refused.
    #[error(transparent)]
    Embed(#[from] EmbedRefusal),
    /// The employer portal refused.
    #[error(transparent)]
    Portal(#[from] PortalRefusal),
    /// The price-on-plan service refused.
    #[error(transparent)]
    PriceOnPlan(#[from] PriceOnPlanRefusal),
    /// The partners service refused.
    #[error(transparent)]
    Partner(#[from] PartnerRefusal),
    /// `not_configured`: the store cannot be reached (fail closed).
    #[error("database unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// `server_error`: anything else.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ServiceError {
    /// The envelope's code.
    #[must_use]
    pub const fn code(&self) -> Code {
        match self {
            Self::Invalid(_) => Code::InvalidRequest,
            Self::NotFound => Code::NotFound,
            Self::Conflict(_) | Self::Transition { .. } => Code::Conflict,
            Self::RatesPending { .. } => Code::RatesPending,
            Self::CensusRequired => Code::CensusRequired,
            Self::MarketUnavailable => Code::MarketUnavailable,
            Self::AmountOutOfRange => Code::AmountOutOfRange,
            Self::Enrollment(r) => r.code(),
            Self::Quote(r) => r.code(),
            Self::Election(r) => r.code(),
            Self::Member(r) => r.code(),
            Self::Onboarding(r) => r.code(),
            Self::Embed(r) => r.code(),
            Self::Portal(r) => r.code(),
            Self::PriceOnPlan(r) => r.code(),
            Self::Partner(r) => r.code(),
            Self::Unavailable(_) => Code::NotConfigured,
            Self::Internal(_) => Code::ServerError,
        }
    }

    /// The envelope's message. Failures of the service side stay opaque
    /// (their cause is for the log); a not-found names no resource, so a
    /// caller that knows which one says so itself.
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            Self::Invalid(details) => invalid_message(details),
            Self::NotFound => "no such resource in this mode".to_owned(),
            Self::Unavailable(_) => {
                "the backing store is unavailable; retry with the same Idempotency-Key".to_owned()
            }
            Self::Internal(_) => "the service failed; the request was not applied".to_owned(),
            other => other.to_string(),
        }
    }

    /// The failing fields (`invalid_request` only).
    #[must_use]
    pub fn details(&self) -> Option<&[FieldError]> {
        match self {
            Self::Invalid(details) => Some(details),
            _ => None,
        }
    }

    /// Seconds a caller should wait before retrying (`Retry-After`).
    #[must_use]
    pub const fn retry_after(&self) -> Option<u32> {
        match self {
            Self::RatesPending { retry_after_secs }
            | Self::Portal(PortalRefusal::TooManyAttempts { retry_after_secs })
            | Self::Embed(EmbedRefusal::TooManyCodes { retry_after_secs }) => {
                Some(*retry_after_secs)
            }
            _ => None,
        }
    }
}

/// The message of an `invalid_request`: the one failing field with its
/// reason, or how many failed.
#[must_use]
pub fn invalid_message(details: &[FieldError]) -> String {
    match details {
        [one] => format!("{}: {}", one.field, one.message),
        _ => format!("{} fields are invalid; see details", details.len()),
    }
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => Self::NotFound,
            StoreError::Conflict(c) => Self::Conflict(c),
            StoreError::Unavailable(s) => Self::Unavailable(s),
            StoreError::Internal(s) => Self::Internal(s),
        }
    }
}

/// The one mapping of the engine's errors onto the service's vocabulary.
/// Field paths are kept as the engine names them; a caller that re-paths
/// them (the quotes service names the stored census's `members`) does so
/// on the converted [`ServiceError::Invalid`].
impl From<PricingError> for ServiceError {
    fn from(e: PricingError) -> Self {
        match e {
            PricingError::CensusRequired => Self::CensusRequired,
            PricingError::MarketUnavailable => Self::MarketUnavailable,
            PricingError::InvalidCensus(details) | PricingError::InvalidPlan(details) => {
                Self::Invalid(details)
            }
            PricingError::Overflow => Self::AmountOutOfRange,
            e @ PricingError::RateCard(_) => Self::Internal(Box::new(e)),
        }
    }
}

impl From<DomainError> for ServiceError {
    fn from(e: DomainError) -> Self {
        match e {
            DomainError::Invalid(fields) => Self::Invalid(fields),
            DomainError::Transition { from, to } => Self::Transition { from, to },
        }
    }
}

/// How many times a write with freshly minted ids is tried before an id
/// collision is reported.
const ID_ATTEMPTS: u32 = 3;

/// Runs `attempt` until it does not fail with [`Conflict::IdTaken`], at
/// most [`ID_ATTEMPTS`] times (48 random bits make a second attempt rare, a
/// third vanishingly so). Each attempt after the first mints new ids; the
/// last collision, or any other answer, is returned as the store gave it,
/// converted into the caller's error type.
async fn with_fresh_id<T, E>(
    mut attempt: impl AsyncFnMut() -> Result<T, StoreError>,
) -> Result<T, E>
where
    E: From<StoreError>,
{
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(StoreError::Conflict(Conflict::IdTaken)) if tries < ID_ATTEMPTS => tries += 1,
            other => return other.map_err(E::from),
        }
    }
}
