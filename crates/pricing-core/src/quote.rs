//! Quote pricing for `POST /quotes` (pricing model section 8): the card's
//! market base HSA PPO in each member's area plus the chosen version's layer.
//!
//! The expensive part, the simulation of the layer ([`market_comparison`]),
//! depends only on the census and the card; the service runs it as the
//! census's market comparison job. [`price_quote`] then prices any number of
//! quote requests from it in one pass over the census.

use serde::Serialize;
use time::Date;

use crate::census::CensusMember;
use crate::error::PricingError;
use crate::figures::{Figures, Hsa, base_caps, effective_caps, figures, version_caps};
use crate::household::{COMPOSITIONS, CensusContext, E8, RatedCensus, Shape, Tier};
use crate::money::{Cents, div_round, div_round_cents, percent_of};
use crate::plan::BasePlan;
use crate::rate_card::{FundingBreakdown, PlanDesign, VersionId};
use crate::rating::{CardRate, CensusCost, Rates, census_cost, census_monthly};
use crate::simulate::{LayerPlan, Simulation, simulate};

/// Options of a quote request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteRequest {
    /// Which version (default diamond).
    pub plan: VersionId,
    /// Employer share of the premium, 0..=100 (default 100).
    pub employer_contribution_pct: u32,
    /// The group's current coverage PEPM, when known.
    pub current_pepm_cents: Option<i64>,
}

impl Default for QuoteRequest {
    fn default() -> Self {
        Self {
            plan: VersionId::Diamond,
            employer_contribution_pct: 100,
            current_pepm_cents: None,
        }
    }
}

/// `ready` or `in_review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// Priced and usable.
    Ready,
    /// Above the in-review threshold: underwriting finalizes it.
    InReview,
}

/// `plan` of a quote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuotePlan {
    /// Version id.
    pub id: VersionId,
    /// Display name.
    pub name: String,
}

/// Integer tier counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TierCounts {
    /// Employee only.
    pub employee_only: u64,
    /// Employee and spouse.
    pub employee_spouse: u64,
    /// Employee and children.
    pub employee_children: u64,
    /// Family.
    pub family: u64,
}

impl From<[u64; 4]> for TierCounts {
    fn from([a, b, c, d]: [u64; 4]) -> Self {
        Self {
            employee_only: a,
            employee_spouse: b,
            employee_children: c,
            family: d,
        }
    }
}

/// `census` of a quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QuoteCensus {
    /// Counted employees.
    pub employees: u64,
    /// Expected covered lives, rounded.
    pub covered_lives: u64,
    /// Tier counts.
    pub tiers: TierCounts,
}

/// One tier's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TierLine {
    /// Households.
    pub count: u64,
    /// Average household monthly cost.
    pub avg_cents: Cents,
}

/// `byTier`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ByTier {
    /// Employee only.
    pub employee_only: TierLine,
    /// Employee and spouse.
    pub employee_spouse: TierLine,
    /// Employee and children.
    pub employee_children: TierLine,
    /// Family.
    pub family: TierLine,
}

/// `monthly`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QuoteMonthly {
    /// Joint monthly total.
    pub total_cents: Cents,
    /// Per counted employee.
    pub pepm_cents: Cents,
    /// By tier.
    pub by_tier: ByTier,
}

/// What the quote is compared against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonBasis {
    /// The group's current coverage PEPM.
    CurrentCoverage,
    /// The local platinum PPO benchmark.
    Benchmark,
}

/// The benchmark a quote names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BenchmarkRef {
    /// Carrier.
    pub carrier: String,
    /// Plan name.
    pub plan_name: String,
    /// Network.
    pub network: String,
    /// Metal tier.
    pub metal_tier: String,
    /// Benchmark monthly premium for this census.
    pub monthly_cents: Cents,
    /// Per counted employee.
    pub pepm_cents: Cents,
}

/// `comparison`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuoteComparison {
    /// Prior cost per employee per month.
    pub prior_pepm_cents: Cents,
    /// Prior monthly total − quote monthly total (signed).
    pub savings_monthly_cents: Cents,
    /// 12 × monthly savings.
    pub savings_annual_cents: Cents,
    /// Savings as a whole percent of the prior total.
    pub savings_pct: i64,
    /// Which prior cost was used.
    pub basis: ComparisonBasis,
    /// The benchmark plan.
    pub benchmark: BenchmarkRef,
}

/// A priced quote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quote {
    /// `ready` or `in_review`.
    pub status: ReviewStatus,
    /// The version quoted.
    pub plan: QuotePlan,
    /// Plan-year start.
    #[serde(with = "date_str")]
    pub plan_year_start_date: Date,
    /// Days until the quote expires.
    pub expires_after_days: u32,
    /// Census counts.
    pub census: QuoteCensus,
    /// Monthly figures.
    pub monthly: QuoteMonthly,
    /// Annual total.
    pub annual_total_cents: Cents,
    /// Employee share of the monthly total.
    pub employee_contribution_premium_cents: Cents,
    /// Comparison.
    pub comparison: QuoteComparison,
    /// Illustrative funding split.
    pub funding_breakdown: FundingBreakdown,
    /// Every default or assumption applied.
    pub assumptions: Vec<String>,
    /// `rate-card <version> <layers>`.
    pub pricing_source: String,
    /// The base plan and service split behind the total.
    pub components: Figures,
    /// The market base plan the version is built on.
    pub base_plan: BasePlan,
    /// HSA eligibility of the version.
    pub hsa: Hsa,
}

mod date_str {
    use serde::Serializer;
    use time::Date;

    pub(super) fn serialize<S: Serializer>(d: &Date, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::census::date_opt::format(*d))
    }
}

/// The card's market base plan design as a [`BasePlan`].
#[must_use]
pub fn card_base_plan(d: &PlanDesign) -> BasePlan {
    BasePlan {
        carrier: d.carrier.clone(),
        plan_name: d.plan_name.clone(),
        plan_type: d.plan_type.clone(),
        network: d.network.clone(),
        funding_type: None,
        deductible_individual_cents: d.deductible_individual_cents,
        deductible_family_cents: d.deductible_family_cents,
        oop_max_individual_cents: d.oop_max_individual_cents,
        oop_max_family_cents: d.oop_max_family_cents,
        coinsurance_pct: d.coinsurance_pct,
    }
}

/// The layer plan of a base plan and the census's versions.
#[must_use]
pub fn layer_plan(rated: &RatedCensus, base: &BasePlan) -> LayerPlan {
    let irs = &rated.group.irs;
    let base_caps = base_caps(base);
    LayerPlan {
        deductible: base.deductible_individual_cents,
        coinsurance_pct: base.coinsurance_pct,
        base: base_caps,
        versions: rated
            .group
            .versions
            .clone()
            .map(|v| effective_caps(base_caps, version_caps(&v, irs).0)),
    }
}

/// The market comparison: the simulation of both versions on the card's
/// market base plan. Deterministic; the expensive step of a quote.
#[must_use]
pub fn market_comparison(rated: &RatedCensus) -> Simulation {
    let base = card_base_plan(&rated.group.market_base_plan);
    simulate(rated, &layer_plan(rated, &base))
}

/// Normalises, simulates and prices in one call.
///
/// # Errors
/// As [`RatedCensus::build`] and [`price_quote`].
pub fn quote(
    members: &[CensusMember],
    ctx: CensusContext<'_>,
    req: QuoteRequest,
) -> Result<Quote, PricingError> {
    let rated = RatedCensus::build(members, ctx)?;
    let sim = market_comparison(&rated);
    price_quote(&rated, &sim, req)
}

/// Prices a quote from a census and its market comparison.
///
/// # Errors
/// [`PricingError::InvalidPlan`] for a contribution above 100 or a
/// simulation of another census, [`PricingError::Overflow`].
pub fn price_quote(
    rated: &RatedCensus,
    sim: &Simulation,
    req: QuoteRequest,
) -> Result<Quote, PricingError> {
    if req.employer_contribution_pct > 100 {
        return Err(PricingError::InvalidPlan(vec![
            crate::error::FieldError::new("employer_contribution_pct", "must be 0 to 100"),
        ]));
    }
    let vsim = sim
        .versions
        .get(req.plan.index())
        .filter(|v| v.household_layer.len() == rated.households.len())
        .ok_or_else(|| {
            PricingError::InvalidPlan(vec![crate::error::FieldError::new(
                "simulation",
                "belongs to another census",
            )])
        })?;
    let g = &rated.group;
    let params = g.version(req.plan);
    let base = card_base_plan(&g.market_base_plan);
    let (ver_caps, hsa) = version_caps(params, &g.irs);
    let base_cost = census_cost(rated, Rates::Card(CardRate::MarketBase))?
        .ok_or(PricingError::MarketUnavailable)?;
    let bench_monthly = census_monthly(rated, Rates::Card(CardRate::Benchmark))?
        .map(Cents::new)
        .ok_or(PricingError::MarketUnavailable)?;
    let fig = figures(
        rated,
        &base_cost,
        vsim,
        sim.years,
        (base_caps(&base), effective_caps(base_caps(&base), ver_caps)),
        params,
        bench_monthly.checked_mul(12)?,
    )?;
    let employees = i128::from(rated.employees());
    let by_tier = by_tier(
        rated,
        &base_cost,
        vsim,
        sim.years,
        params.risk_margin_bp,
        params.fees_pmpm_cents(),
    )?;

    let bench_pepm = div_round_cents(i128::from(bench_monthly.get()), employees)?;
    let (prior_pepm, basis) = match req.current_pepm_cents {
        Some(p) => (Cents::new(p), ComparisonBasis::CurrentCoverage),
        None => (bench_pepm, ComparisonBasis::Benchmark),
    };
    let prior_total = Cents::from_i128(i128::from(prior_pepm.get()) * employees)?;
    let savings = prior_total.checked_sub(fig.joint_monthly_cents)?;
    let employee_share = div_round_cents(
        i128::from(fig.joint_monthly_cents.get()) * i128::from(100 - req.employer_contribution_pct),
        100,
    )?;
    let mut assumptions = rated.assumptions.clone();
    assumptions.push(format!(
        "Base plan: the local market {} ({} deductible, {}% coinsurance, {} / {} out-of-pocket maximum), priced from public lowest-cost bronze premiums of each member's rating area.",
        base.plan_name,
        Cents::new(base.deductible_individual_cents),
        base.coinsurance_pct,
        Cents::new(base.oop_max_individual_cents),
        Cents::new(base.oop_max_family_cents),
    ));
    assumptions.push(
        "Benchmark: the local platinum PPO level, derived from the public benchmark silver premium × (0.90 × 1.15) / (0.70 × 1.03) ≈ 1.436.".to_owned(),
    );
    if basis == ComparisonBasis::Benchmark {
        assumptions.push(
            "Prior cost: the local platinum PPO benchmark (no current coverage PEPM was given)."
                .to_owned(),
        );
    }
    assumptions.push(
        "Preliminary market-rate figures; final pricing is confirmed in underwriting.".to_owned(),
    );

    Ok(Quote {
        status: if rated.employees() > u64::from(g.in_review_threshold) {
            ReviewStatus::InReview
        } else {
            ReviewStatus::Ready
        },
        plan: QuotePlan {
            id: req.plan,
            name: params.name.clone(),
        },
        plan_year_start_date: rated.plan_year_start,
        expires_after_days: g.quote_expiry_days,
        census: QuoteCensus {
            employees: rated.employees(),
            covered_lives: rated.covered_lives(),
            tiers: rated.tiers.into(),
        },
        monthly: QuoteMonthly {
            total_cents: fig.joint_monthly_cents,
            pepm_cents: fig.joint_pepm_cents,
            by_tier,
        },
        annual_total_cents: fig.joint_annual_cents,
        employee_contribution_premium_cents: employee_share,
        comparison: QuoteComparison {
            prior_pepm_cents: prior_pepm,
            savings_monthly_cents: savings,
            savings_annual_cents: savings.checked_mul(12)?,
            savings_pct: percent_of(savings.get(), prior_total.get())?,
            basis,
            benchmark: BenchmarkRef {
                carrier: g.benchmark_plan.carrier.clone(),
                plan_name: format!("{} ({})", g.benchmark_plan.plan_name, rated.primary().area),
                network: g.benchmark_plan.network.clone(),
                metal_tier: g.benchmark_plan.metal_tier.clone(),
                monthly_cents: bench_monthly,
                pepm_cents: bench_pepm,
            },
        },
        funding_breakdown: g.funding_breakdown.clone(),
        assumptions,
        pricing_source: g.source.clone(),
        components: fig,
        base_plan: base,
        hsa,
    })
}

/// Average joint household cost per tier: a known household's base cost,
/// layer funding and fees in its tier; an unknown household's composition
/// costs weighted by the mix.
fn by_tier(
    rated: &RatedCensus,
    base: &CensusCost,
    vsim: &crate::simulate::VersionSim,
    years: u32,
    margin_bp: i64,
    fees_pmpm: i64,
) -> Result<ByTier, PricingError> {
    // Common scale: 1 / (years × 12 × 1e4 × 1e8).
    let k = i128::from(years) * 12 * 10_000;
    let margin = 10_000 + i128::from(margin_bp);
    let fees = i128::from(fees_pmpm);
    let mut num = [0i128; 4];
    let mut den = [0i128; 4];
    let mut put = |t: usize, n: i128, d: i128| {
        if let (Some(a), Some(b)) = (num.get_mut(t), den.get_mut(t)) {
            *a += n;
            *b += d;
        }
    };
    for ((h, cost), layer) in rated
        .households
        .iter()
        .zip(&base.households)
        .zip(&vsim.household_layer)
    {
        match (&h.shape, cost.compositions) {
            (Shape::Known { tier, people }, _) => {
                let n = i128::try_from(people.len()).unwrap_or(0);
                let v = (i128::from(cost.cents) + fees * n) * k + i128::from(*layer) * margin;
                put(tier.index(), v * E8, E8);
            }
            (Shape::Unknown { .. }, comps) => {
                let comps = comps.unwrap_or([cost.cents; 6]);
                for ((&(tier, kids), w), c) in COMPOSITIONS
                    .iter()
                    .zip(rated.composition_weights_e8)
                    .zip(comps)
                {
                    let partner = i128::from(matches!(tier, Tier::EmployeeSpouse | Tier::Family));
                    let n = 1 + partner + i128::try_from(kids).unwrap_or(0);
                    put(tier.index(), (i128::from(c) + fees * n) * k * w, w);
                }
            }
        }
    }
    // Unknown households' modelled layer by tier, weighted by the tier's mix.
    for (t, (&l, &mix)) in vsim
        .unknown_tier_layer
        .iter()
        .zip(&rated.group.household_mix_bp)
        .enumerate()
    {
        put(t, l * margin * i128::from(mix) * 10_000, 0);
    }
    let line = |t: usize| -> Result<TierLine, PricingError> {
        let (n, d) = (
            num.get(t).copied().unwrap_or(0),
            den.get(t).copied().unwrap_or(0),
        );
        let avg = if d == 0 { 0 } else { div_round(n, k * d)? };
        Ok(TierLine {
            count: rated.tiers.get(t).copied().unwrap_or(0),
            avg_cents: Cents::from_i128(avg)?,
        })
    };
    Ok(ByTier {
        employee_only: line(0)?,
        employee_spouse: line(1)?,
        employee_children: line(2)?,
        family: line(3)?,
    })
}
