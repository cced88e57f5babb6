//! The request, context and typed answer of price-on-plan.

use serde::{Deserialize, Serialize};

use crate::census::{CensusMember, CensusRules};
use crate::figures::{Figures, Hsa};
use crate::money::Cents;
use crate::plan::{BasePlan, IgnoredPlan, MarketPlan, PartnerPlan, RateBasis};
use crate::quote::ReviewStatus;
use crate::rate_card::{Feature, RateCard, VersionId};

/// A price-on-plan request, already parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PriceOnPlanRequest {
    /// The census.
    pub census: Vec<CensusMember>,
    /// The plan to price on; HR platforms may omit it and send market plans.
    pub plan: Option<PartnerPlan>,
    /// Every plan the partner quoted.
    pub market_plans: Vec<MarketPlan>,
    /// The company ZIP (members without a priced ZIP are rated there).
    pub company_zip: Option<String>,
}

/// Context of a request.
#[derive(Debug, Clone, Copy)]
pub struct PricingContext<'a> {
    /// The card.
    pub card: &'a RateCard,
    /// Plan-year start.
    pub plan_year_start: time::Date,
    /// Partner id, for `partner:` layers.
    pub partner: Option<&'a str>,
    /// Validation rules of the caller.
    pub rules: CensusRules,
}

/// Overall and per-version status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Priced.
    Ready,
    /// Priced; underwriting finalizes it (above the in-review threshold).
    InReview,
    /// Cannot be built on this base.
    Unavailable,
}

impl From<ReviewStatus> for PlanStatus {
    fn from(s: ReviewStatus) -> Self {
        match s {
            ReviewStatus::Ready => Self::Ready,
            ReviewStatus::InReview => Self::InReview,
        }
    }
}

/// `engine` (benchmark from market plans) or `cost_plus` (from the card).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PricingMethod {
    /// A platinum PPO among the market plans set the benchmark.
    Engine,
    /// The rate card's benchmark.
    CostPlus,
}

/// Where a plan came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanSource {
    /// The request's `plan`.
    PartnerPlan,
    /// One of the request's `market_plans`.
    MarketPlans,
    /// The rate card.
    RateCard,
}

/// Counts of market plans by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsedPlans {
    /// Sent.
    pub sent: usize,
    /// Used as a base or benchmark candidate.
    pub used: usize,
    /// Base candidates.
    pub base_candidates: usize,
    /// Benchmark candidates.
    pub benchmark_candidates: usize,
}

/// The base plan the versions are built on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnderlyingPlan {
    /// Design.
    pub plan: BasePlan,
    /// Where it came from.
    pub source: PlanSource,
    /// Index in `market_plans` when chosen from them.
    pub market_index: Option<usize>,
    /// The market plan as sent, when chosen from them.
    pub market_plan: Option<MarketPlan>,
    /// Basis that priced most households.
    pub rate_basis: RateBasis,
    /// Exact monthly cost for the census.
    pub monthly_cents: Cents,
    /// Annual cost.
    pub annual_cents: Cents,
}

/// The benchmark plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Benchmark {
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Metal tier.
    pub metal_tier: String,
    /// Network.
    pub network: String,
    /// Where it came from.
    pub source: PlanSource,
    /// Index in `market_plans` when chosen from them.
    pub market_index: Option<usize>,
    /// Individual deductible, when known.
    pub deductible_individual_cents: Option<i64>,
    /// Individual out-of-pocket maximum, when known.
    pub oop_max_individual_cents: Option<i64>,
    /// Family out-of-pocket maximum, when known.
    pub oop_max_family_cents: Option<i64>,
    /// HSA-eligible.
    pub hsa_eligible: bool,
    /// Basis that priced it.
    pub rate_basis: RateBasis,
    /// Monthly premium for the census.
    pub monthly_cents: Cents,
    /// Annual premium for the census.
    pub annual_cents: Cents,
}

/// Comparison of a version with the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    /// Benchmark annual − joint annual (signed).
    pub annual_savings_cents: Cents,
    /// Savings as a whole percent of the benchmark.
    pub savings_pct: i64,
    /// Benchmark annual − modeled worst year (the headroom, signed).
    pub worst_year_under_benchmark_cents: Cents,
    /// Benchmark individual maximum − version individual maximum.
    pub oop_max_individual_lower_by_cents: Option<Cents>,
    /// Benchmark family maximum − version family maximum.
    pub oop_max_family_lower_by_cents: Option<Cents>,
    /// The version is HSA-eligible where the benchmark is not.
    pub hsa_eligible_where_benchmark_is_not: bool,
}

/// Households of one shape and their average joint monthly cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HouseholdRateRow {
    /// Tier label, or `unknown` for households priced on the mix.
    pub label: String,
    /// People in the household (expected people, rounded, for `unknown`).
    pub people: u64,
    /// Households of this shape.
    pub households: u64,
    /// Average joint monthly cost (base cost + service by covered life).
    pub monthly_cents: Cents,
}

/// What a new household of a shape would cost per month.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewMemberRate {
    /// Tier label.
    pub label: String,
    /// People.
    pub people: u64,
    /// Joint monthly cost.
    pub monthly_cents: Cents,
}

/// How the price renews.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renewal {
    /// Method.
    pub method: String,
    /// Explanation.
    pub note: String,
}

/// Member out-of-pocket maxima of a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberOopMax {
    /// Self-only.
    pub individual_cents: Cents,
    /// Employee plus one (two people).
    pub employee_plus_one_cents: Cents,
    /// Family.
    pub family_cents: Cents,
    /// Per member inside family coverage.
    pub embedded_individual_cents: Cents,
}

/// Everything priced for one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PricedVersion {
    /// Money figures.
    pub figures: Figures,
    /// Comparison with the benchmark.
    pub comparison: Comparison,
    /// 1 + the benchmark candidates cheaper per year than the joint plan.
    pub benchmark_rank: u32,
    /// Census households by shape.
    pub monthly_rates_by_household: Vec<HouseholdRateRow>,
    /// New households by shape.
    pub new_member_rates_by_household: Vec<NewMemberRate>,
    /// Flags for a reviewer.
    pub fit_flags: Vec<String>,
    /// One-paragraph summary.
    pub summary: String,
    /// One line for a broker's comparison sheet.
    pub broker_row: String,
    /// What members experience.
    pub member_experience: String,
}

/// One version's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionResult {
    /// Version id.
    pub id: VersionId,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Status.
    pub status: PlanStatus,
    /// Why it is unavailable.
    pub reason: Option<String>,
    /// Member maxima.
    pub member_oop_max: MemberOopMax,
    /// HSA eligibility.
    pub hsa: Hsa,
    /// Feature lines.
    pub features: Vec<Feature>,
    /// Renewal.
    pub renewal: Renewal,
    /// Figures, absent when unavailable.
    pub priced: Option<PricedVersion>,
}

/// The engine's answer to a price-on-plan request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriceOnPlan {
    /// `ready`, `in_review` or `unavailable`.
    pub status: PlanStatus,
    /// Why it is unavailable.
    pub reason: Option<String>,
    /// `engine` or `cost_plus`.
    pub pricing_method: PricingMethod,
    /// The base was chosen among the market plans.
    pub base_from_market: bool,
    /// Market plan counts.
    pub used_plans: UsedPlans,
    /// Ignored market plans.
    pub ignored_plans: Vec<IgnoredPlan>,
    /// The base plan, when one could be chosen.
    pub base_plan: Option<UnderlyingPlan>,
    /// The benchmark.
    pub benchmark: Benchmark,
    /// Census counts.
    pub employees: u64,
    /// Expected covered lives, rounded.
    pub covered_lives: u64,
    /// Rows received.
    pub census_members: usize,
    /// Tier counts.
    pub tiers: [u64; 4],
    /// Simulated plan years.
    pub simulated_plan_years: u32,
    /// Diamond then value.
    pub versions: Vec<VersionResult>,
    /// Every default or assumption applied.
    pub assumptions: Vec<String>,
    /// `rate-card <version> <layers>`.
    pub pricing_source: String,
}
