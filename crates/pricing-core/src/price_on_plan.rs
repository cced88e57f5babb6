//! Price-on-plan (`POST /price-on-plan`): the `diamond` and `value` versions
//! on top of one plan the partner priced itself, compared with the local
//! platinum PPO benchmark — the card's (`cost_plus`) or the cheapest
//! platinum PPO among the partner's market plans (`engine`).
//!
//! The engine returns one typed result; rendering it into the snake_case
//! (`plans`) and camelCase (`versions`) wire forms is the HTTP adapter's job.

use crate::error::{FieldError, PricingError};
use crate::figures::{
    SizeTally, base_caps, effective_caps, figures, raise_capped_by_base, unavailable_reason,
    version_caps,
};
use crate::household::{CensusContext, RatedCensus};
use crate::money::Cents;
use crate::plan::{
    BasePlan, Classified, IgnoredPlan, MarketPlan, PlanRates, RateBasis, classify,
    market_base_plan, market_rates, validate_market_plans, validate_partner_plan,
};
use crate::quote::{ReviewStatus, layer_plan};
use crate::rate_card::VersionId;
use crate::rating::{CardRate, CensusCost, Rates, census_cost};
use crate::simulate::simulate;
use serde::{Deserialize, Serialize};

mod result;
mod version;

pub use result::{
    Benchmark, Comparison, HouseholdRateRow, MemberOopMax, NewMemberRate, PlanSource, PlanStatus,
    PriceOnPlan, PriceOnPlanRequest, PricedVersion, PricingContext, PricingMethod, Renewal,
    UnderlyingPlan, UsedPlans, VersionResult,
};
use version::priced_version;

/// Prices the versions on the request's plan: [`prepare`], then
/// [`Prepared::finish`].
///
/// # Errors
/// [`PricingError::InvalidPlan`] / [`PricingError::InvalidCensus`] with
/// every failing field, [`PricingError::CensusRequired`],
/// [`PricingError::MarketUnavailable`], [`PricingError::Overflow`].
pub fn price_on_plan(
    req: &PriceOnPlanRequest,
    ctx: PricingContext<'_>,
) -> Result<PriceOnPlan, PricingError> {
    prepare(req, ctx)?.finish()
}

/// A request validated, rated and classified, with its base and benchmark
/// chosen: everything but the simulation, which [`Prepared::finish`] runs.
/// Every error of a request comes from [`prepare`], so a caller can answer
/// a bad request at once and price a good one later (or elsewhere).
#[derive(Debug, Clone)]
pub struct Prepared {
    rated: RatedCensus,
    answer: PriceOnPlan,
    base: Option<(BasePlan, PlanRates, CensusCost)>,
    bench_rank_costs: Vec<i64>,
    review: ReviewStatus,
}

/// What is known of a prepared request before its simulation: the market
/// plans' roles and the census's size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// `engine` or `cost_plus`.
    pub pricing_method: PricingMethod,
    /// The base is chosen among the market plans.
    pub base_from_market: bool,
    /// Market plan counts.
    pub used_plans: UsedPlans,
    /// Ignored market plans.
    pub ignored_plans: Vec<IgnoredPlan>,
    /// Census rows received.
    pub census_members: usize,
    /// Counted employees.
    pub employees: u64,
    /// Simulated plan years the finish runs.
    pub simulated_plan_years: u32,
    /// Whether the finish simulates (false when nothing can be built on).
    pub simulates: bool,
}

impl Prepared {
    /// What is known before the simulation.
    #[must_use]
    pub fn preview(&self) -> Preview {
        let a = &self.answer;
        Preview {
            pricing_method: a.pricing_method,
            base_from_market: a.base_from_market,
            used_plans: a.used_plans,
            ignored_plans: a.ignored_plans.clone(),
            census_members: a.census_members,
            employees: a.employees,
            simulated_plan_years: a.simulated_plan_years,
            simulates: self.base.is_some(),
        }
    }

    /// Runs the simulation and prices both versions.
    ///
    /// # Errors
    /// [`PricingError::Overflow`] when an amount does not fit.
    pub fn finish(self) -> Result<PriceOnPlan, PricingError> {
        let Self {
            rated,
            mut answer,
            base,
            bench_rank_costs,
            review,
        } = self;
        let Some((base, rates, base_cost)) = base else {
            return Ok(answer);
        };
        let g = &rated.group;
        let plan = layer_plan(&rated, &base);
        let sim = simulate(&rated, &plan);
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
                (base_cost.monthly, &SizeTally::of(&rated)),
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
}

/// Validates, rates and classifies a request and chooses its base and
/// benchmark (see [`Prepared`]).
///
/// # Errors
/// As [`price_on_plan`].
pub fn prepare(
    req: &PriceOnPlanRequest,
    ctx: PricingContext<'_>,
) -> Result<Prepared, PricingError> {
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
        return Ok(Prepared {
            rated,
            answer,
            base: None,
            bench_rank_costs: Vec::new(),
            review,
        });
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
    Ok(Prepared {
        rated,
        answer,
        base: Some((base, rates, base_cost)),
        bench_rank_costs,
        review,
    })
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

#[cfg(test)]
mod tests;
