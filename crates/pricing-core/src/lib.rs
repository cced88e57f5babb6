//! `pricing-core`: the pure pricing engine of the Partner Benefits Pricing
//! and Enrollment API.
//!
//! It turns a census and a rate card into market-rate quotes and into the
//! `diamond` and `value` versions priced on top of a partner's own HSA plan,
//! with the all-max (worst) year and the simulated median year. All money is
//! integer cents ([`Cents`]); the engine does no I/O, starts no runtime and
//! is deterministic: the same census, card and request give the same bytes on
//! every platform, whatever the row order.
//!
//! The model is documented in `docs/pricing.md`.
//!
//! # Example: a quote
//! ```
//! use pricing_core::{CensusContext, CensusMember, CensusRules, QuoteRequest, RateCard};
//! use time::macros::date;
//!
//! let card = RateCard::builtin_2026()?;
//! let census = vec![
//!     CensusMember::new("E-001", date!(1985 - 04 - 02), "94103"),
//!     CensusMember::new("E-002", date!(1990 - 09 - 17), "94110"),
//! ];
//! let ctx = CensusContext {
//!     card: &card,
//!     plan_year_start: date!(2026 - 01 - 01),
//!     partner: None,
//!     rules: CensusRules { require_dob: true },
//!     fallback_zip: None,
//! };
//! let quote = pricing_core::quote(&census, ctx, QuoteRequest::default())?;
//! assert_eq!(quote.census.employees, 2);
//! assert_eq!(quote.annual_total_cents.get(), 12 * quote.monthly.total_cents.get());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: price on a partner plan
//! ```
//! use pricing_core::{CensusMember, CensusRules, PartnerPlan, PriceOnPlanRequest, PricingContext, RateCard};
//! use time::macros::date;
//!
//! let card = RateCard::builtin_2026()?;
//! let plan: PartnerPlan = serde_json::from_str(
//!     r#"{"plan_type":"PPO","hsa_eligible":true,"deductible_individual_cents":340000,
//!         "oop_max_individual_cents":750000,"pmpm_cents":52000}"#,
//! )?;
//! let req = PriceOnPlanRequest {
//!     census: vec![CensusMember::new("E-001", date!(1985 - 04 - 02), "60601")],
//!     plan: Some(plan),
//!     ..PriceOnPlanRequest::default()
//! };
//! let ctx = PricingContext {
//!     card: &card,
//!     plan_year_start: date!(2026 - 01 - 01),
//!     partner: None,
//!     rules: CensusRules { require_dob: true },
//! };
//! let answer = pricing_core::price_on_plan(&req, ctx)?;
//! let diamond = answer.versions[0].priced.as_ref().expect("diamond is available");
//! let f = &diamond.figures;
//! assert_eq!(f.joint_pmpm_cents.get(), f.your_plan_pmpm_cents.get() + f.service_pmpm_cents.get());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod canonical;
pub mod census;
pub mod claims;
pub mod error;
pub mod figures;
pub mod household;
pub mod money;
pub mod plan;
pub mod price_on_plan;
pub mod quote;
pub mod rate_card;
pub mod rating;
pub mod simulate;

pub use census::{
    CensusMember, CensusRules, Dependent, EmploymentType, MemberStatus, Relationship,
};
pub use error::{FieldError, Overflow, PricingError, RateCardError};
pub use household::{CensusContext, RatedCensus, Tier};
pub use money::Cents;
pub use plan::{MarketPlan, PartnerPlan};
pub use price_on_plan::{
    Prepared, Preview, PriceOnPlan, PriceOnPlanRequest, PricingContext, prepare, price_on_plan,
};
pub use quote::{Quote, QuoteRequest, market_comparison, price_quote, quote};
pub use rate_card::{RateCard, VersionId};
pub use simulate::Simulation;
