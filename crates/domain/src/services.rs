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
pub mod members;
pub mod partners;
pub mod price_on_plan;
pub mod quotes;
pub mod webhooks;

use pricing_core::PricingError;

use crate::error::{DomainError, FieldError};
use crate::store::{Conflict, StoreError};

/// Why a use case refused or failed, in the specification's vocabulary.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// 400 `invalid_request` with `details`.
    #[error("invalid request")]
    Invalid(Vec<FieldError>),
    /// 404 `not_found`.
    #[error("not found")]
    NotFound,
    /// 403 `forbidden`: the key lacks a capability.
    #[error("{0}")]
    Forbidden(String),
    /// 409 `conflict`.
    #[error("{0}")]
    Conflict(String),
    /// 409 `rates_pending`: the census's market comparison is running.
    #[error("the market comparison of the census is still running; retry in {retry_after_secs} s")]
    RatesPending {
        /// Suggested wait (`Retry-After`).
        retry_after_secs: u32,
    },
    /// 410 `quote_expired`: past `expiresAt`, or priced on an earlier census.
    #[error("{0}")]
    QuoteExpired(String),
    /// 422 `census_required`: no quotable member.
    #[error("no quotable member: each counted employee needs a zip and a dob or age")]
    CensusRequired,
    /// 422 `market_unavailable`: no rate-card market covers the census.
    #[error("no rate-card market covers the census's ZIP codes")]
    MarketUnavailable,
    /// 422 `amount_out_of_range`: an amount the pricing derives does not
    /// fit (the request's amounts are bounded, so this is a safety net).
    #[error("an amount of this pricing is out of range; check the money fields of the request")]
    AmountOutOfRange,
    /// The store cannot be reached (503 `not_configured`).
    #[error("database unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Anything else (500).
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => Self::NotFound,
            StoreError::Conflict(c) => Self::Conflict(c.to_string()),
            StoreError::Unavailable(s) => Self::Unavailable(s),
            StoreError::Internal(s) => Self::Internal(s),
        }
    }
}

/// The one mapping of the engine's errors onto the service's vocabulary.
/// Field paths are kept as the engine names them; a caller that re-paths
/// them (the quotes service names the stored census's `members`) does so
/// before converting.
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
            t @ DomainError::Transition { .. } => Self::Conflict(t.to_string()),
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
