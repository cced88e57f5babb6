//! The types of price-on-plan: the request as the service takes it, the
//! pricing job's payload and the quote's stored document.

use pricing_core::census::CensusMember;
use pricing_core::price_on_plan::Preview;
use pricing_core::{CensusRules, MarketPlan, PartnerPlan};
use serde::{Deserialize, Serialize};

use crate::ids::QuoteId;
use crate::quote::Quote;
use crate::services::ServiceError;

/// The company of a request (`company`); every field optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Company {
    /// Name.
    pub name: Option<String>,
    /// Domain (a lowercase DNS name).
    pub domain: Option<String>,
    /// The partner's own company id.
    pub external_id: Option<String>,
    /// Five-digit ZIP; the first census ZIP when omitted.
    pub zip: Option<String>,
    /// Two-letter state.
    pub state: Option<String>,
}

/// A parsed price-on-plan request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricingInput {
    /// The census.
    pub census: Vec<CensusMember>,
    /// The plan to price on.
    pub plan: Option<PartnerPlan>,
    /// Every plan the partner quoted.
    pub market_plans: Vec<MarketPlan>,
    /// The company; a generated one when `None`.
    pub company: Option<Company>,
    /// The caller's census rules (brokers need `dob`).
    pub rules: CensusRules,
    /// Whether `plan` is required (broker keys); HR platforms may send
    /// only `market_plans`.
    pub plan_required: bool,
}

/// The pricing job's payload: everything needed to price the request
/// again after a restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PricingPayload {
    /// The quote it prices.
    pub quote_id: QuoteId,
    /// Plan-year start (`YYYY-MM-DD`).
    pub plan_year_start: String,
    /// Whether members need `dob` (broker keys).
    pub require_dob: bool,
    /// The company's ZIP, when sent.
    pub company_zip: Option<String>,
    /// The census.
    pub census: Vec<CensusMember>,
    /// The plan to price on.
    pub plan: Option<PartnerPlan>,
    /// Every plan the partner quoted.
    pub market_plans: Vec<MarketPlan>,
    /// The service's own assumptions (plan year, company, ZIP), reported
    /// after the engine's.
    pub assumptions: Vec<String>,
}

/// A price-on-plan quote's stored document: what was known before pricing
/// and, once priced, the engine's answer. The HTTP adapter renders it in
/// the caller's form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Plan-year start priced (`YYYY-MM-DD`).
    pub plan_year_start: String,
    /// Known before the simulation: market plan roles, census size.
    pub preview: Preview,
    /// When the answer is expected, Unix seconds.
    pub estimated_ready_at: i64,
    /// When the answer was made, Unix seconds.
    pub generated_at: Option<i64>,
    /// The engine's answer, once priced.
    pub answer: Option<pricing_core::PriceOnPlan>,
}

impl Document {
    /// Reads a stored document.
    ///
    /// # Errors
    /// [`ServiceError::Internal`] when the document does not read back.
    pub fn of(quote: &Quote) -> Result<Self, ServiceError> {
        quote
            .body
            .price_on_plan()
            .cloned()
            .ok_or_else(|| ServiceError::Internal("the quote is not a price-on-plan quote".into()))
    }

    /// Seconds a caller should wait before sending the body again.
    #[must_use]
    pub fn retry_after_secs(&self, now: i64) -> u32 {
        u32::try_from((self.estimated_ready_at - now).clamp(1, 30)).unwrap_or(1)
    }
}
