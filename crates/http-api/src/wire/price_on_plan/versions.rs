//! The types of the camelCase answer form (HR platform keys): `versions`,
//! whose objects mix camelCase and snake_case keys exactly as the
//! specification lists them. They render the answer and are the HR
//! platform document's schemas (never re-cased there). Nested objects are
//! inline schemas; only the answers are components.

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use pricing_core::price_on_plan;
use pricing_core::rate_card::VersionId;

use super::{IgnoredPlanOut, TimeMachineOut, UsedPlansOut};
use crate::wire::enums;

/// The HR platform's answer (`versions`). `fields` and `exclude` may leave
/// out any key but `quoteId`, `groupId`, `status` and `reason` (and each
/// version's `id` and `status`), so only those are required.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PriceOnPlanVersions, example = json!({
    "quoteId": "qt_0193a1b2c3d4", "groupId": "grp_0193a1b2c3d5", "status": "ready", "reason": null,
    "pricingMethod": "engine",
    "versions": [{"id": "diamond", "name": "Diamond", "status": "ready", "reason": null,
        "monthly": {"totalCents": 61875, "pepmCents": 61875, "pmpmCents": 61875},
        "annual": {"totalCents": 742500},
        "member_oop_max": {"individual_cents": 170000, "family_cents": 340000}}],
    "time_machine": {"simulated_plan_years": 2000, "census_members": 1, "generated_at": "2026-11-21T13:14:02Z"},
    "assumptions": ["Plan year starts 2026-12-01 (the first day of next month)."],
    "ignoredPlans": [], "usedPlans": {"sent": 0, "used": 0, "baseCandidates": 0, "benchmarkCandidates": 0}
}))]
pub struct VersionsAnswer {
    /// The market plans that could not be used.
    #[serde(rename = "ignoredPlans")]
    #[schema(required = false)]
    pub ignored_plans: Vec<IgnoredPlanOut>,
    /// How the market plans were used.
    #[serde(rename = "usedPlans")]
    #[schema(required = false)]
    pub used_plans: UsedPlansOut,
    /// The quote's status.
    #[schema(value_type = enums::PricedStatus)]
    pub status: &'static str,
    /// Why nothing could be built (`unavailable`); null otherwise.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// The lead group kept with the census.
    #[serde(rename = "groupId")]
    pub group_id: String,
    /// The quote (`GET /quotes/{id}` reads it back).
    #[serde(rename = "quoteId")]
    pub quote_id: String,
    /// How the versions were priced.
    #[serde(rename = "pricingMethod")]
    #[schema(required = false, value_type = enums::PricingMethod)]
    pub pricing_method: &'static str,
    /// `diamond` and `value`.
    #[schema(required = false)]
    pub versions: Vec<VersionOut>,
    /// The simulation behind the figures.
    #[schema(required = false, inline)]
    pub time_machine: TimeMachineOut,
    /// What the figures assume.
    #[schema(required = false)]
    pub assumptions: Vec<String>,
}

/// One version; its figures are null when it is `unavailable`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = PriceOnPlanVersion)]
#[allow(clippy::struct_field_names)]
pub struct VersionOut {
    /// `diamond` or `value`.
    #[schema(value_type = enums::VersionId)]
    pub id: VersionId,
    /// Display name.
    #[schema(required = false)]
    pub name: String,
    /// What the version is.
    #[schema(required = false)]
    pub description: String,
    /// The version's status.
    #[schema(value_type = enums::PricedStatus)]
    pub status: &'static str,
    /// How it was priced.
    #[schema(required = false, value_type = enums::PricingMethod)]
    pub pricing_method: &'static str,
    /// Why it is unavailable; null otherwise.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// Plan and service, per month.
    #[schema(required = false, inline)]
    pub monthly: Option<Monthly>,
    /// Plan and service, per year.
    #[schema(required = false, inline)]
    pub annual: Option<Annual>,
    /// The benchmark the savings are measured against.
    #[serde(rename = "pricedAgainst")]
    #[schema(required = false, inline)]
    pub priced_against: PricedAgainst,
    /// The benchmark plan.
    #[serde(rename = "benchmarkPlan")]
    #[schema(required = false, inline)]
    pub benchmark_plan: BenchmarkPlan,
    /// The plan the version is built on; null when there is none.
    #[serde(rename = "underlyingPlan")]
    #[schema(required = false, inline)]
    pub underlying_plan: Option<UnderlyingPlanOut>,
    /// What members get.
    #[schema(required = false, inline)]
    pub benefits: Benefits,
    /// The monthly price, in parts.
    #[schema(required = false, inline)]
    pub price_components: Option<PriceComponents>,
    /// The modeled worst year.
    #[schema(required = false, inline)]
    pub worst_year: Option<WorstYear>,
    /// The base plan.
    #[schema(required = false, inline)]
    pub base_plan: Option<BasePlanOut>,
    /// The version's member out-of-pocket maxima.
    #[schema(required = false, inline)]
    pub member_oop_max: MemberOopMaxOut,
    /// Rank against the benchmark (1 is cheapest).
    #[schema(required = false)]
    pub benchmark_rank: Option<u32>,
    /// What each premium was computed from.
    #[schema(required = false, inline)]
    pub rate_basis: RateBasisOut,
    /// Monthly rates by household, as the census has them.
    #[schema(required = false, inline)]
    pub monthly_rates_by_household: Option<Vec<HouseholdRate>>,
    /// Monthly rates of a new member by household.
    #[schema(required = false, inline)]
    pub new_member_rates_by_household: Option<Vec<NewMemberRate>>,
    /// The all-maximum year, in parts.
    #[schema(required = false, inline)]
    pub all_max_year: Option<AllMaxYear>,
    /// The median simulated year.
    #[schema(required = false, inline)]
    pub median_year: Option<MedianYear>,
    /// The simulation behind the figures.
    #[schema(required = false, inline)]
    pub time_machine: TimeMachineOut,
    /// HSA eligibility.
    #[schema(required = false, inline)]
    pub hsa: HsaOut,
    /// How renewals are priced.
    #[schema(required = false, inline)]
    pub renewal: RenewalOut,
    /// What a member lives through.
    #[schema(required = false)]
    pub member_experience: Option<String>,
    /// Fit warnings.
    #[schema(required = false)]
    pub fit_flags: Vec<String>,
    /// Against the benchmark.
    #[schema(required = false, inline)]
    pub comparison: Option<ComparisonOut>,
    /// One line for a broker's spreadsheet.
    #[schema(required = false)]
    pub broker_row: Option<String>,
    /// One-sentence summary.
    #[schema(required = false)]
    pub summary: Option<String>,
    /// The version on its base plan, as one offer.
    #[schema(required = false, inline)]
    pub joint: Option<Joint>,
    /// The service alone.
    #[serde(rename = "serviceOnly")]
    #[schema(required = false, inline)]
    pub service_only: Option<ServiceOnly>,
}

/// `monthly`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Monthly {
    /// The group's month.
    pub total_cents: i64,
    /// Per employee.
    pub pepm_cents: i64,
    /// Per member.
    pub pmpm_cents: i64,
}

/// `annual`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Annual {
    /// The group's year.
    pub total_cents: i64,
}

/// `pricedAgainst`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PricedAgainst {
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Metal tier.
    pub metal_tier: String,
    /// Where it came from.
    #[schema(value_type = enums::PlanSource)]
    pub source: &'static str,
    /// In words.
    pub label: String,
}

/// `benchmarkPlan`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BenchmarkPlan {
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Metal tier.
    pub metal_tier: String,
    /// Network.
    pub network: String,
}

/// `underlyingPlan`: the plan's design, where it came from and, when it
/// was chosen among `market_plans`, that plan's other fields as sent (in
/// camelCase, without its member rates).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnderlyingPlanOut {
    /// The market plan's other fields as sent.
    #[serde(flatten)]
    #[schema(ignore)]
    pub sent: Map<String, Value>,
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Plan type.
    pub plan_type: String,
    /// Network.
    pub network: String,
    /// Always true: versions are built on HSA plans only.
    pub hsa_eligible: bool,
    /// Individual deductible.
    pub deductible_individual_cents: i64,
    /// Family deductible.
    pub deductible_family_cents: i64,
    /// Individual out-of-pocket maximum.
    pub oop_max_individual_cents: i64,
    /// Family out-of-pocket maximum.
    pub oop_max_family_cents: i64,
    /// Member coinsurance.
    pub coinsurance_pct: u32,
    /// Where it came from.
    #[schema(value_type = enums::PlanSource)]
    pub source: &'static str,
    /// Funding type; null when not sent.
    #[schema(required = true)]
    pub funding_type: Option<String>,
    /// The market plan as sent (camelCase); null for the partner's plan.
    #[schema(required = true, value_type = Option<pricing_core::MarketPlan>)]
    pub broker_plan: Option<Value>,
    /// Who is paid for it.
    pub note: &'static str,
}

/// `benefits`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Benefits {
    /// Individual out-of-pocket maximum.
    pub oop_max_individual_cents: i64,
    /// Employee plus one.
    pub oop_max_employee_plus_one_cents: i64,
    /// Family.
    pub oop_max_family_cents: i64,
    /// The base plan's coinsurance; null without a base plan.
    #[schema(required = true)]
    pub member_coinsurance_pct: Option<u32>,
    /// HSA-eligible.
    pub hsa_eligible: bool,
    /// The base plan's network; null without a base plan.
    #[schema(required = true)]
    pub network: Option<String>,
    /// Feature lines.
    #[schema(inline)]
    pub features: Vec<FeatureOut>,
}

/// A feature line.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureOut {
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
}

/// `price_components`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PriceComponents {
    /// The base plan's monthly premium.
    pub underlying_premium_monthly_cents: i64,
    /// The service's month.
    pub service_monthly_cents: i64,
    /// Both.
    pub total_monthly_cents: i64,
    /// The base plan per member.
    pub underlying_pmpm_cents: i64,
    /// The service per member.
    pub service_pmpm_cents: i64,
    /// Both per member.
    pub total_pmpm_cents: i64,
}

/// `worst_year`.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorstYear {
    /// Modeled extra cost.
    pub modeled_extra_cents: i64,
    /// Modeled total.
    pub modeled_total_cents: i64,
    /// The benchmark's premium.
    pub benchmark_premium_cents: i64,
    /// Below the benchmark by.
    pub headroom_cents: i64,
    /// The scenario.
    pub basis: &'static str,
    /// Always false: modeled, not a cap.
    pub contractual: bool,
    /// A note.
    pub note: &'static str,
    /// Inputs to recompute it.
    #[schema(inline)]
    pub recompute: Recompute,
}

/// `worst_year.recompute`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Recompute {
    /// The base plan's annual premium.
    pub underlying_annual_premium_cents: i64,
    /// Every household at its maximum.
    pub theoretical_exposure_cents: i64,
    /// What members pay of it.
    pub member_oop_allowance_cents: i64,
}

/// `base_plan`.
#[derive(Debug, Serialize, ToSchema)]
pub struct BasePlanOut {
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Individual deductible.
    pub deductible_individual_cents: i64,
    /// Family deductible.
    pub deductible_family_cents: i64,
    /// In words.
    pub label: String,
}

/// `member_oop_max`.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberOopMaxOut {
    /// Individual.
    pub individual_cents: i64,
    /// Family.
    pub family_cents: i64,
}

/// `rate_basis`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RateBasisOut {
    /// The base plan's; null without one.
    #[schema(required = true, value_type = Option<enums::RateBasis>)]
    pub base_plan: Option<&'static str>,
    /// The benchmark's.
    #[schema(value_type = enums::RateBasis)]
    pub benchmark: &'static str,
}

/// A row of `monthly_rates_by_household`.
#[derive(Debug, Serialize, ToSchema)]
pub struct HouseholdRate {
    /// Household.
    pub label: String,
    /// People in it.
    pub people: u64,
    /// Such households in the census.
    pub households: u64,
    /// Monthly rate.
    pub monthly_cents: i64,
}

impl From<&price_on_plan::HouseholdRateRow> for HouseholdRate {
    fn from(r: &price_on_plan::HouseholdRateRow) -> Self {
        Self {
            label: r.label.clone(),
            people: r.people,
            households: r.households,
            monthly_cents: r.monthly_cents.get(),
        }
    }
}

/// A row of `new_member_rates_by_household`.
#[derive(Debug, Serialize, ToSchema)]
pub struct NewMemberRate {
    /// Household.
    pub label: String,
    /// People in it.
    pub people: u64,
    /// Monthly rate.
    pub monthly_cents: i64,
}

impl From<&price_on_plan::NewMemberRate> for NewMemberRate {
    fn from(r: &price_on_plan::NewMemberRate) -> Self {
        Self {
            label: r.label.clone(),
            people: r.people,
            monthly_cents: r.monthly_cents.get(),
        }
    }
}

/// `all_max_year`.
#[derive(Debug, Serialize, ToSchema)]
pub struct AllMaxYear {
    /// The base plan's premium.
    pub base_premium_cents: i64,
    /// The service.
    pub service_cents: i64,
    /// Modeled extra cost.
    pub modeled_extra_cents: i64,
    /// The employer's total.
    pub employer_total_cents: i64,
    /// What members pay.
    pub members_pay_cents: i64,
}

/// `median_year`.
#[derive(Debug, Serialize, ToSchema)]
pub struct MedianYear {
    /// The employer's total.
    pub employer_total_cents: i64,
    /// What the pool pays.
    pub pool_pays_cents: i64,
    /// What members pay.
    pub members_pay_cents: i64,
}

/// `hsa`.
#[derive(Debug, Serialize, ToSchema)]
pub struct HsaOut {
    /// HSA-eligible.
    pub eligible: bool,
    /// Why.
    pub basis: String,
}

/// `renewal`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RenewalOut {
    /// How renewals are priced.
    pub method: String,
    /// A note.
    pub note: String,
}

/// `comparison`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonOut {
    /// The benchmark.
    #[schema(inline)]
    pub benchmark: ComparedBenchmark,
    /// Saved per year.
    pub annual_savings_cents: i64,
    /// Saved, in percent.
    pub savings_pct: i64,
    /// The worst year below the benchmark's premium by.
    pub worst_year_under_benchmark_cents: i64,
    /// The individual maximum lower by; null when not lower.
    #[schema(required = true)]
    pub oop_max_individual_lower_by_cents: Option<i64>,
    /// The family maximum lower by; null when not lower.
    #[schema(required = true)]
    pub oop_max_family_lower_by_cents: Option<i64>,
    /// HSA-eligible where the benchmark is not.
    pub hsa_eligible_where_benchmark_is_not: bool,
}

/// `comparison.benchmark`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComparedBenchmark {
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Metal tier.
    pub metal_tier: String,
    /// Annual premium.
    pub annual_cents: i64,
    /// Individual deductible; null when unknown.
    #[schema(required = true)]
    pub deductible_individual_cents: Option<i64>,
    /// Individual maximum; null when unknown.
    #[schema(required = true)]
    pub oop_max_individual_cents: Option<i64>,
    /// Family maximum; null when unknown.
    #[schema(required = true)]
    pub oop_max_family_cents: Option<i64>,
    /// HSA-eligible.
    pub hsa_eligible: bool,
}

/// `joint`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Joint {
    /// The version on its base plan.
    pub name: String,
    /// `diamond` or `value`.
    #[schema(value_type = enums::VersionId)]
    pub option: VersionId,
    /// The base plan per member.
    pub base_pmpm_cents: i64,
    /// The service per member.
    pub service_layer_pmpm_cents: i64,
    /// Both per member.
    pub total_pmpm_cents: i64,
    /// Both per employee.
    pub total_pepm_cents: i64,
    /// The group's month.
    pub monthly_cents: i64,
    /// The group's year.
    pub annual_cents: i64,
    /// The base plan's individual deductible; null without one.
    #[schema(required = true)]
    pub base_deductible_individual_cents: Option<i64>,
    /// The version's individual maximum.
    pub member_oop_max_individual_cents: i64,
    /// The version's family maximum.
    pub member_oop_max_family_cents: i64,
    /// The modeled worst year.
    pub modeled_worst_year_cents: i64,
    /// One-sentence summary.
    pub summary: String,
}

/// `serviceOnly`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceOnly {
    /// Per member.
    pub pmpm_cents: i64,
    /// Per employee.
    pub pepm_cents: i64,
    /// Per month.
    pub monthly_cents: i64,
    /// Per year.
    pub annual_cents: i64,
    /// A note.
    pub note: &'static str,
}
