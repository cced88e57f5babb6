//! Price-on-plan (`POST /price-on-plan`): the `diamond` and `value` versions
//! on top of one plan the partner priced itself, compared with the local
//! platinum PPO benchmark — the card's (`cost_plus`) or the cheapest
//! platinum PPO among the partner's market plans (`engine`).
//!
//! The engine returns one typed result; rendering it into the snake_case
//! (`plans`) and camelCase (`versions`) wire forms is the HTTP adapter's job.

use serde::Serialize;

use crate::census::{CensusMember, CensusRules};
use crate::error::{FieldError, PricingError};
use crate::figures::{
    Figures, Hsa, base_caps, effective_caps, figures, raise_capped_by_base, unavailable_reason,
    version_caps,
};
use crate::household::{CensusContext, E8, RatedCensus, Shape, Tier};
use crate::money::{Cents, div_round, div_round_cents, percent_of};
use crate::plan::{
    BasePlan, Classified, IgnoredPlan, MarketPlan, PartnerPlan, PlanRates, RateBasis, classify,
    market_base_plan, market_rates, validate_market_plans, validate_partner_plan,
};
use crate::quote::{ReviewStatus, layer_plan};
use crate::rate_card::{Feature, RateCard, VersionId, VersionParams};
use crate::rating::{CardRate, CensusCost, Rates, census_cost};
use crate::simulate::simulate;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PricingMethod {
    /// A platinum PPO among the market plans set the benchmark.
    Engine,
    /// The rate card's benchmark.
    CostPlus,
}

/// Where a plan came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewMemberRate {
    /// Tier label.
    pub label: String,
    /// People.
    pub people: u64,
    /// Joint monthly cost.
    pub monthly_cents: Cents,
}

/// How the price renews.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renewal {
    /// Method.
    pub method: String,
    /// Explanation.
    pub note: String,
}

/// Member out-of-pocket maxima of a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// Prices the versions on the request's plan.
///
/// # Errors
/// [`PricingError::InvalidPlan`] / [`PricingError::InvalidCensus`] with
/// every failing field, [`PricingError::CensusRequired`],
/// [`PricingError::MarketUnavailable`], [`PricingError::Overflow`].
pub fn price_on_plan(
    req: &PriceOnPlanRequest,
    ctx: PricingContext<'_>,
) -> Result<PriceOnPlan, PricingError> {
    let irs_default = ctx
        .card
        .group_params(None, ctx.partner)
        .map_err(|e| PricingError::RateCard(e.to_string()))?
        .irs;
    let mut plan_errors = validate_market_plans(&req.market_plans);
    let explicit = match &req.plan {
        Some(p) => match validate_partner_plan(p, &irs_default) {
            Ok(ok) => Some(ok),
            Err(mut e) => {
                plan_errors.append(&mut e);
                None
            }
        },
        None if req.market_plans.is_empty() => {
            plan_errors.push(FieldError::new(
                "plan",
                "is required unless market_plans is sent",
            ));
            None
        }
        None => None,
    };
    if req
        .company_zip
        .as_deref()
        .is_some_and(|z| !crate::census::is_zip5(z))
    {
        plan_errors.push(FieldError::new(
            "company.zip",
            "must be 5 digits (pattern ^[0-9]{5}$)",
        ));
    }
    if !plan_errors.is_empty() {
        let census_errors = req
            .census
            .iter()
            .enumerate()
            .flat_map(|(i, m)| crate::census::validate_member("census", i, m, ctx.rules));
        plan_errors.extend(census_errors);
        return Err(PricingError::InvalidPlan(plan_errors));
    }

    let rated = RatedCensus::build(
        &req.census,
        CensusContext {
            card: ctx.card,
            plan_year_start: ctx.plan_year_start,
            partner: ctx.partner,
            rules: ctx.rules,
            fallback_zip: req.company_zip.as_deref(),
        },
    )?;
    let g = &rated.group;
    let mut assumptions = rated.assumptions.clone();
    let mut classified = classify(&req.market_plans, &g.irs);

    // Benchmark: the cheapest platinum PPO among the market plans for this
    // census, else the card's.
    let mut bench_candidates: Vec<(usize, CensusCost)> = Vec::new();
    let mut unpriced = Vec::new();
    for &i in &classified.benchmark_candidates {
        let Some(p) = req.market_plans.get(i) else {
            continue;
        };
        match census_cost(&rated, Rates::Plan(&market_rates(p)))? {
            Some(cost) => bench_candidates.push((i, cost)),
            None => unpriced.push(i),
        }
    }
    unpriced_plans(&mut classified, &req.market_plans, &unpriced);
    let benchmark = choose_benchmark(&rated, &req.market_plans, &bench_candidates)?;
    let pricing_method = if benchmark.source == PlanSource::MarketPlans {
        PricingMethod::Engine
    } else {
        assumptions.push(
            "Benchmark: the rate card's local platinum PPO level (no platinum PPO among the market plans), derived from the public benchmark silver premium × (0.90 × 1.15) / (0.70 × 1.03) ≈ 1.436.".to_owned(),
        );
        PricingMethod::CostPlus
    };

    // Base: the explicit plan, else the cheapest market base candidate on
    // which the most versions are available.
    let (base, base_rates, source, market_index) = match explicit {
        Some((base, rates, mut plan_assumptions)) => {
            assumptions.append(&mut plan_assumptions);
            (Some(base), Some(rates), PlanSource::PartnerPlan, None)
        }
        None => match choose_market_base(&rated, &req.market_plans, &mut classified)? {
            Some((i, base, rates, mut defaults)) => {
                assumptions.push(format!(
                    "Base plan chosen among the market plans: {} {} (index {i}), the lowest-cost HSA-eligible plan the versions can be built on.",
                    base.carrier, base.plan_name
                ));
                assumptions.append(&mut defaults);
                (Some(base), Some(rates), PlanSource::MarketPlans, Some(i))
            }
            None => (None, None, PlanSource::MarketPlans, None),
        },
    };
    let used = classified
        .base_candidates
        .iter()
        .chain(&classified.benchmark_candidates)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let used_plans = UsedPlans {
        sent: req.market_plans.len(),
        used,
        base_candidates: classified.base_candidates.len(),
        benchmark_candidates: classified.benchmark_candidates.len(),
    };
    let review = if rated.employees() > u64::from(g.in_review_threshold) {
        ReviewStatus::InReview
    } else {
        ReviewStatus::Ready
    };
    let mut answer = PriceOnPlan {
        status: PlanStatus::Unavailable,
        reason: None,
        pricing_method,
        base_from_market: source == PlanSource::MarketPlans,
        used_plans,
        ignored_plans: classified.ignored.clone(),
        base_plan: None,
        benchmark,
        employees: rated.employees(),
        covered_lives: rated.covered_lives(),
        census_members: rated.received,
        tiers: rated.tiers,
        simulated_plan_years: g.simulated_plan_years,
        versions: Vec::new(),
        assumptions,
        pricing_source: g.source.clone(),
    };
    let (Some(base), Some(rates)) = (base, base_rates) else {
        answer.reason = Some(
            "none of the market plans qualifies as a base: an HSA-eligible PPO, EPO or POS with rates and a complete design".to_owned(),
        );
        answer.versions = VersionId::ALL
            .iter()
            .map(|&id| unpriced_version(&rated, id, answer.reason.clone()))
            .collect();
        return Ok(answer);
    };
    let base_cost = census_cost(&rated, Rates::Plan(&rates))?.ok_or_else(|| {
        PricingError::InvalidPlan(vec![FieldError::new(
            "plan.pmpm_cents",
            "some employees have no member rate and no fallback rate",
        )])
    })?;
    let counted_ids: std::collections::HashSet<&str> = rated
        .households
        .iter()
        .filter_map(|h| h.external_id())
        .collect();
    let unmatched = rates
        .member_rates
        .keys()
        .filter(|id| !counted_ids.contains(id.as_str()))
        .count();
    if unmatched > 0 {
        answer.assumptions.push(format!(
            "{} in member_rates_cents not used: no counted employee has that external_id.",
            count_word(u64::try_from(unmatched).unwrap_or(0), "rate", "rates")
        ));
    }
    if base_cost.member_rate_fallbacks > 0 {
        answer.assumptions.push(format!(
            "{} without a member rate priced on the plan's fallback rate.",
            count_word(base_cost.member_rate_fallbacks, "employee", "employees")
        ));
    }
    if base.deductible_individual_cents < g.irs.min_deductible_self_cents {
        answer.assumptions.push(format!(
            "The base plan's deductible ({}) is below the IRS HDHP minimum ({}); check its HSA eligibility.",
            Cents::new(base.deductible_individual_cents),
            Cents::new(g.irs.min_deductible_self_cents)
        ));
    }
    let plan = layer_plan(&rated, &base);
    let sim = simulate(&rated, &plan);
    let bench_rank_costs: Vec<i64> = if bench_candidates.is_empty() {
        vec![answer.benchmark.annual_cents.get()]
    } else {
        bench_candidates
            .iter()
            .map(|(_, c)| c.monthly.saturating_mul(12))
            .collect()
    };
    let base_monthly = Cents::new(base_cost.monthly);
    answer.base_plan = Some(UnderlyingPlan {
        plan: base.clone(),
        source,
        market_index,
        market_plan: market_index.and_then(|i| req.market_plans.get(i).cloned()),
        rate_basis: base_cost.basis(),
        monthly_cents: base_monthly,
        annual_cents: base_monthly.checked_mul(12)?,
    });
    let mut versions = Vec::new();
    for id in VersionId::ALL {
        let params = g.version(id);
        let mut v = unpriced_version(&rated, id, None);
        if let Some(why) = unavailable_reason(&base, params) {
            v.reason = Some(why);
            versions.push(v);
            continue;
        }
        let (published, _) = version_caps(params, &g.irs);
        let caps = effective_caps(base_caps(&base), published);
        if raise_capped_by_base(base_caps(&base), published) {
            v.member_oop_max.embedded_individual_cents = Cents::new(caps.embedded);
            v.member_oop_max.employee_plus_one_cents =
                Cents::new(caps.family.min(2 * caps.embedded));
            answer.assumptions.push(format!(
                "{}: the base plan's individual maximum ({}) is below {}'s per-member maximum in family coverage ({}), so no member of a family pays more than the base plan's maximum.",
                params.name,
                Cents::new(base.oop_max_individual_cents),
                params.name,
                Cents::new(published.embedded),
            ));
        }
        let vsim = sim.versions.get(id.index()).ok_or(PricingError::Overflow)?;
        let fig = figures(
            &rated,
            &base_cost,
            vsim,
            sim.years,
            (base_caps(&base), caps),
            params,
            answer.benchmark.annual_cents,
        )?;
        v.status = review.into();
        v.priced = Some(priced_version(
            &rated,
            &base,
            &rates,
            &base_cost,
            &answer.benchmark,
            params,
            &v,
            fig,
            &bench_rank_costs,
        )?);
        versions.push(v);
    }
    let available = versions.iter().any(|v| v.status != PlanStatus::Unavailable);
    answer.status = if available {
        review.into()
    } else {
        PlanStatus::Unavailable
    };
    if !available {
        answer.reason = Some(format!(
            "no version can be built on {}: {}",
            base.plan_name,
            versions
                .iter()
                .filter_map(|v| v.reason.as_deref())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    answer.versions = versions;
    Ok(answer)
}

fn count_word(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn unpriced_plans(c: &mut Classified, plans: &[MarketPlan], unpriced: &[usize]) {
    for &i in unpriced {
        c.benchmark_candidates.retain(|&x| x != i);
        if !c.base_candidates.contains(&i) {
            c.ignored.push(IgnoredPlan {
                index: i,
                reason: "platinum PPO whose member rates do not cover every employee and that has no fallback rate".to_owned(),
                carrier: plans.get(i).and_then(|p| p.carrier.clone()),
                plan_name: plans.get(i).and_then(|p| p.plan_name.clone()),
            });
        }
    }
    c.ignored.sort_by_key(|p| p.index);
}

fn choose_benchmark(
    rated: &RatedCensus,
    plans: &[MarketPlan],
    candidates: &[(usize, CensusCost)],
) -> Result<Benchmark, PricingError> {
    let cheapest = candidates
        .iter()
        .min_by(|a, b| a.1.monthly.cmp(&b.1.monthly).then(a.0.cmp(&b.0)));
    if let Some((i, cost)) = cheapest
        && let Some(p) = plans.get(*i)
    {
        {
            let monthly = Cents::new(cost.monthly);
            return Ok(Benchmark {
                carrier: p.carrier.clone().unwrap_or_default(),
                plan_name: p.plan_name.clone().unwrap_or_default(),
                metal_tier: p.metal_tier.clone(),
                network: p.network.clone().unwrap_or_default(),
                source: PlanSource::MarketPlans,
                market_index: Some(*i),
                deductible_individual_cents: p.deductible_individual_cents,
                oop_max_individual_cents: p.oop_max_individual_cents,
                oop_max_family_cents: p
                    .oop_max_family_cents
                    .or(p.oop_max_individual_cents.map(|x| 2 * x)),
                hsa_eligible: p.hsa_eligible == Some(true),
                rate_basis: cost.basis(),
                monthly_cents: monthly,
                annual_cents: monthly.checked_mul(12)?,
            });
        }
    }
    let d = &rated.group.benchmark_plan;
    let cost = census_cost(rated, Rates::Card(CardRate::Benchmark))?
        .ok_or(PricingError::MarketUnavailable)?;
    let monthly = Cents::new(cost.monthly);
    Ok(Benchmark {
        carrier: d.carrier.clone(),
        plan_name: format!("{} ({})", d.plan_name, rated.primary().area),
        metal_tier: d.metal_tier.clone(),
        network: d.network.clone(),
        source: PlanSource::RateCard,
        market_index: None,
        deductible_individual_cents: Some(d.deductible_individual_cents),
        oop_max_individual_cents: Some(d.oop_max_individual_cents),
        oop_max_family_cents: Some(d.oop_max_family_cents),
        hsa_eligible: d.hsa_eligible,
        rate_basis: RateBasis::RateCard,
        monthly_cents: monthly,
        annual_cents: monthly.checked_mul(12)?,
    })
}

type MarketBase = (usize, BasePlan, PlanRates, Vec<String>);

/// The market base candidate on which the most versions are available, then
/// the cheapest for the census. Candidates that cannot serve are moved to
/// the ignored plans with the reason.
fn choose_market_base(
    rated: &RatedCensus,
    plans: &[MarketPlan],
    classified: &mut Classified,
) -> Result<Option<MarketBase>, PricingError> {
    let mut best: Option<(i64, usize, MarketBase)> = None;
    let mut dropped = Vec::new();
    for &i in &classified.base_candidates {
        let Some(p) = plans.get(i) else { continue };
        let (base, assumptions) = market_base_plan(p);
        let available = rated
            .group
            .versions
            .iter()
            .filter(|v| unavailable_reason(&base, v).is_none())
            .count();
        if available == 0 {
            dropped.push((i, "no version can be built on it: its out-of-pocket maximum is at or below the versions', or its family maximum is too close to its individual one"));
            continue;
        }
        let rates = market_rates(p);
        let Some(cost) = census_cost(rated, Rates::Plan(&rates))? else {
            dropped.push((
                i,
                "its member rates do not cover every employee and it has no fallback rate",
            ));
            continue;
        };
        let better = match &best {
            None => true,
            Some((c, a, _)) => {
                (std::cmp::Reverse(available), cost.monthly) < (std::cmp::Reverse(*a), *c)
            }
        };
        if better {
            best = Some((cost.monthly, available, (i, base, rates, assumptions)));
        }
    }
    for (i, reason) in dropped {
        classified.base_candidates.retain(|&x| x != i);
        if !classified.benchmark_candidates.contains(&i) {
            classified.ignored.push(IgnoredPlan {
                index: i,
                reason: format!("HSA-eligible, but {reason}"),
                carrier: plans.get(i).and_then(|p| p.carrier.clone()),
                plan_name: plans.get(i).and_then(|p| p.plan_name.clone()),
            });
        }
    }
    classified.ignored.sort_by_key(|p| p.index);
    Ok(best.map(|(_, _, chosen)| chosen))
}

fn unpriced_version(rated: &RatedCensus, id: VersionId, reason: Option<String>) -> VersionResult {
    let g = &rated.group;
    let params = g.version(id);
    let (caps, hsa) = version_caps(params, &g.irs);
    VersionResult {
        id,
        name: params.name.clone(),
        description: params.description.clone(),
        status: PlanStatus::Unavailable,
        reason,
        member_oop_max: MemberOopMax {
            individual_cents: Cents::new(caps.individual),
            employee_plus_one_cents: Cents::new(caps.family.min(2 * caps.embedded)),
            family_cents: Cents::new(caps.family),
            embedded_individual_cents: Cents::new(caps.embedded),
        },
        hsa,
        features: params.features.clone(),
        renewal: Renewal {
            method: "experience_rated_layer".to_owned(),
            note: "The base plan renews with its carrier; the service layer is repriced each plan year from the census, the rate card and the group's aggregate claims.".to_owned(),
        },
        priced: None,
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the inputs are distinct facts"
)]
fn priced_version(
    rated: &RatedCensus,
    base: &BasePlan,
    rates: &PlanRates,
    base_cost: &CensusCost,
    bench: &Benchmark,
    params: &VersionParams,
    v: &VersionResult,
    fig: Figures,
    bench_rank_costs: &[i64],
) -> Result<PricedVersion, PricingError> {
    let joint_annual = fig.joint_annual_cents.get();
    let savings = bench.annual_cents.checked_sub(fig.joint_annual_cents)?;
    // "Lower by" is never negative (invariant 9): 0 when the version's
    // maximum is not lower than the benchmark's.
    let lower_by = |b: Option<i64>, vv: Cents| b.map(|b| Cents::new((b - vv.get()).max(0)));
    let comparison = Comparison {
        annual_savings_cents: savings,
        savings_pct: percent_of(savings.get(), bench.annual_cents.get())?,
        worst_year_under_benchmark_cents: fig.all_max_year.headroom_cents,
        oop_max_individual_lower_by_cents: lower_by(
            bench.oop_max_individual_cents,
            v.member_oop_max.individual_cents,
        ),
        oop_max_family_lower_by_cents: lower_by(
            bench.oop_max_family_cents,
            v.member_oop_max.family_cents,
        ),
        hsa_eligible_where_benchmark_is_not: v.hsa.eligible && !bench.hsa_eligible,
    };
    let rank = 1 + bench_rank_costs
        .iter()
        .filter(|&&c| c < joint_annual)
        .count();

    // Census households by shape: base cost + service by expected life.
    let mut rows: Vec<(String, u64, u64, i128, i128)> = Vec::new();
    let unknown_lives_e8 = E8
        + crate::household::COMPOSITIONS
            .iter()
            .zip(rated.composition_weights_e8)
            .map(|(&(t, kids), w)| {
                w * (i128::from(matches!(t, Tier::EmployeeSpouse | Tier::Family))
                    + i128::try_from(kids).unwrap_or(0))
            })
            .sum::<i128>();
    for (h, cost) in rated.households.iter().zip(&base_cost.households) {
        let (label, people, lives) = match &h.shape {
            Shape::Known { tier, people } => {
                let n = u64::try_from(people.len()).unwrap_or(0);
                (tier.label().to_owned(), n, i128::from(n) * E8)
            }
            Shape::Unknown { .. } => (
                "unknown".to_owned(),
                u64::try_from(div_round(unknown_lives_e8, E8)?).unwrap_or(0),
                unknown_lives_e8,
            ),
        };
        match rows.iter_mut().find(|r| r.0 == label && r.1 == people) {
            Some(r) => {
                r.2 += 1;
                r.3 += i128::from(cost.cents);
                r.4 += lives;
            }
            None => rows.push((label, people, 1, i128::from(cost.cents), lives)),
        }
    }
    let order = |l: &str| Tier::ALL.iter().position(|t| t.label() == l).unwrap_or(4);
    rows.sort_by(|a, b| order(&a.0).cmp(&order(&b.0)).then(a.1.cmp(&b.1)));
    let service = i128::from(fig.service_monthly_cents.get());
    let lives = rated.lives_e8;
    let monthly_rates_by_household = rows
        .into_iter()
        .map(|(label, people, n, base_sum, lives_sum)| {
            let avg = div_round_cents(
                base_sum * lives + service * lives_sum,
                i128::from(n) * lives,
            )?;
            Ok(HouseholdRateRow {
                label,
                people,
                households: n,
                monthly_cents: avg,
            })
        })
        .collect::<Result<Vec<_>, PricingError>>()?;
    let new_member_rates_by_household = [
        (Tier::EmployeeOnly, 1),
        (Tier::EmployeeSpouse, 2),
        (Tier::EmployeeChildren, 2),
        (Tier::EmployeeChildren, 3),
        (Tier::Family, 3),
        (Tier::Family, 4),
    ]
    .into_iter()
    .map(|(tier, people)| {
        let base_part = match (rates.pmpm, rates.monthly) {
            (Some(pmpm), _) => pmpm * people,
            (None, Some(t)) => t.get(tier),
            (None, None) => fig.your_plan_pmpm_cents.get() * people,
        };
        NewMemberRate {
            label: tier.label().to_owned(),
            people: u64::try_from(people).unwrap_or(0),
            monthly_cents: Cents::new(base_part + fig.service_pmpm_cents.get() * people),
        }
    })
    .collect();

    let mut fit_flags = Vec::new();
    if v.status == PlanStatus::InReview {
        fit_flags.push("in_review".to_owned());
    }
    if base.deductible_individual_cents < rated.group.irs.min_deductible_self_cents {
        fit_flags.push("base_deductible_below_irs_minimum".to_owned());
    }
    if base_cost.member_rate_fallbacks > 0 {
        fit_flags.push("member_rates_partial".to_owned());
    }
    if base.oop_max_individual_cents < rated.group.irs.min_deductible_family_cents {
        // In family coverage the base plan pays in full for one member
        // before the IRS family minimum deductible: check its HSA status.
        fit_flags.push("base_individual_max_below_family_minimum_deductible".to_owned());
    }
    if rated.unknown_households > 0 {
        fit_flags.push("household_mix_assumed".to_owned());
    }
    if fig.all_max_year.headroom_cents.get() < 0 {
        fit_flags.push("worst_year_above_benchmark".to_owned());
    }
    if savings.get() < 0 {
        fit_flags.push("costs_more_than_benchmark".to_owned());
    }
    let m = &v.member_oop_max;
    let summary = format!(
        "{} on {} {}: {} per covered person per month ({} a month for {} employees and {} covered lives). Members pay at most {} individual / {} family; in a modeled worst year the employer pays {} against a {} benchmark premium of {}.",
        params.name,
        base.carrier,
        base.plan_name,
        fig.joint_pmpm_cents,
        fig.joint_monthly_cents,
        rated.employees(),
        rated.covered_lives(),
        m.individual_cents,
        m.family_cents,
        fig.all_max_year.employer_total_cents,
        bench.metal_tier.to_lowercase(),
        bench.annual_cents,
    );
    let broker_row = format!(
        "{} | {} PMPM | {}/mo | {}/yr | worst year {} | {}% vs benchmark",
        params.name,
        fig.joint_pmpm_cents,
        fig.joint_monthly_cents,
        fig.joint_annual_cents,
        fig.all_max_year.employer_total_cents,
        comparison.savings_pct,
    );
    let member_experience = format!(
        "Members keep {} {} ({} network) and its {} deductible, then pay {}% coinsurance until the {} cap: {} individual, {} family ({} for any one member of a family).",
        base.carrier,
        base.plan_name,
        if base.network.is_empty() {
            "its"
        } else {
            base.network.as_str()
        },
        Cents::new(base.deductible_individual_cents),
        base.coinsurance_pct,
        params.name,
        m.individual_cents,
        m.family_cents,
        m.embedded_individual_cents,
    );
    Ok(PricedVersion {
        figures: fig,
        comparison,
        benchmark_rank: u32::try_from(rank).unwrap_or(u32::MAX),
        monthly_rates_by_household,
        new_member_rates_by_household,
        fit_flags,
        summary,
        broker_row,
        member_experience,
    })
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;
    use crate::rate_card::tests::card;

    fn request(market: &str, plan: Option<&str>) -> PriceOnPlanRequest {
        PriceOnPlanRequest {
            census: vec![
                CensusMember::new("E1", date!(1980 - 01 - 01), "94103"),
                CensusMember::new("E2", date!(1990 - 01 - 01), "94110"),
            ],
            plan: plan.map(|p| serde_json::from_str(p).unwrap()),
            market_plans: serde_json::from_str(market).unwrap(),
            company_zip: None,
        }
    }

    fn price(req: &PriceOnPlanRequest) -> PriceOnPlan {
        let c = card();
        let ctx = PricingContext {
            card: &c,
            plan_year_start: date!(2026 - 01 - 01),
            partner: None,
            rules: CensusRules { require_dob: true },
        };
        price_on_plan(req, ctx).unwrap()
    }

    #[test]
    fn a_market_base_reports_its_defaults_and_unusable_candidates_are_ignored_with_a_reason() {
        let market = r#"[
            {"metalTier":"Bronze","planType":"PPO","hsaEligible":true,"planName":"Low cap",
             "deductibleIndividualCents":170000,"oopMaxIndividualCents":170000,"pmpmCents":30000},
            {"metalTier":"Bronze","planType":"PPO","hsaEligible":true,"planName":"Good",
             "deductibleIndividualCents":340000,"oopMaxIndividualCents":750000,"pmpmCents":40000}
        ]"#;
        let answer = price(&request(market, None));
        assert_eq!(answer.base_plan.as_ref().unwrap().market_index, Some(1));
        assert_eq!(answer.used_plans.base_candidates, 1);
        assert_eq!(answer.ignored_plans.len(), 1);
        assert_eq!(answer.ignored_plans[0].index, 0);
        assert!(
            answer.ignored_plans[0]
                .reason
                .contains("no version can be built on it")
        );
        for default in ["family deductible", "family out-of-pocket", "coinsurance"] {
            assert!(
                answer
                    .assumptions
                    .iter()
                    .any(|a| a.starts_with("Good:") && a.contains(default)),
                "{default} not reported"
            );
        }
    }

    #[test]
    fn lower_by_is_never_negative_and_unmatched_member_rates_are_reported() {
        let plan = r#"{"plan_type":"PPO","hsa_eligible":true,"deductible_individual_cents":340000,
            "oop_max_individual_cents":750000,"pmpm_cents":50000,
            "member_rates_cents":[{"external_id":"E1","monthly_cents":51000},{"external_id":"NOPE","monthly_cents":1}]}"#;
        let answer = price(&request("[]", Some(plan)));
        // Value's maxima ($3,400 / $6,800) are above the benchmark's ($3,000 / $6,000).
        let value = answer.versions[1].priced.as_ref().unwrap();
        assert_eq!(
            value.comparison.oop_max_individual_lower_by_cents,
            Some(Cents::ZERO)
        );
        assert_eq!(
            value.comparison.oop_max_family_lower_by_cents,
            Some(Cents::ZERO)
        );
        assert!(
            answer
                .assumptions
                .iter()
                .any(|a| a.starts_with("1 rate in member_rates_cents not used"))
        );
        // E1 at its member rate, E2 on the PMPM fallback.
        assert_eq!(
            answer.base_plan.unwrap().monthly_cents,
            Cents::new(51_000 + 50_000)
        );
    }
}
