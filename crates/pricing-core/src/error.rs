//! Typed errors of the engine. Pure math cannot fail because of
//! infrastructure, so there is no catch-all variant.

use serde::Serialize;

/// An amount did not fit in the engine's integer range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("amount overflowed")]
pub struct Overflow;

/// One failing field, in the specification's `details` shape. `field` is a
/// snake_case path such as `census[3].dob` or `plan.hsa_eligible`; adapters
/// re-case it for camelCase callers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// Path of the failing field.
    pub field: String,
    /// Human-readable reason, lowercase.
    pub message: String,
    /// Zero-based row index for array payloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
}

impl FieldError {
    /// A field error without a row index.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
            index: None,
        }
    }

    /// A field error on row `index` of an array payload.
    pub fn at(index: usize, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
            index: Some(index),
        }
    }
}

/// Why a census or plan could not be priced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PricingError {
    /// No counted employee could be rated (each needs a ZIP and a date of
    /// birth or an age, and must be an active full- or part-time employee).
    #[error("no quotable member: each counted employee needs a zip and a dob or age")]
    CensusRequired,
    /// No ZIP of the census falls in a rating area the rate card prices.
    #[error("no rate-card market covers the census")]
    MarketUnavailable,
    /// The census input breaks a validation rule.
    #[error("invalid census: {}", summarize(.0))]
    InvalidCensus(Vec<FieldError>),
    /// The explicit plan, or the request around it, breaks a rule (an HMO,
    /// not HSA-eligible, a required field missing).
    #[error("invalid plan: {}", summarize(.0))]
    InvalidPlan(Vec<FieldError>),
    /// The rate card cannot price this group (an override breaks a card
    /// rule); a service-side failure, not the caller's.
    #[error("the rate card cannot price this group: {0}")]
    RateCard(String),
    /// An amount overflowed.
    #[error("amount overflowed")]
    Overflow,
}

impl From<Overflow> for PricingError {
    fn from(_: Overflow) -> Self {
        Self::Overflow
    }
}

fn summarize(details: &[FieldError]) -> String {
    match details.first() {
        Some(first) if details.len() == 1 => format!("{}: {}", first.field, first.message),
        Some(first) => format!(
            "{}: {} (and {} more)",
            first.field,
            first.message,
            details.len() - 1
        ),
        None => "no details".to_owned(),
    }
}

/// Why a rate card could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RateCardError {
    /// The file is not valid TOML of the rate-card schema.
    #[error("rate card does not parse: {0}")]
    Parse(#[from] toml::de::Error),
    /// The card parses but breaks a validation rule.
    #[error("rate card is invalid: {0}")]
    Invalid(String),
}
