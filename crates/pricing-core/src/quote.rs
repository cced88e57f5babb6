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
use crate::error::{Overflow, PricingError};
use crate::figures::{Figures, Hsa, SizeTally, base_caps, effective_caps, figures, version_caps};
use crate::household::{CensusContext, RatedCensus, Shape};
use crate::money::{Cents, div_round_cents, percent_of};
use crate::plan::BasePlan;
use crate::rate_card::{FundingBreakdown, PlanDesign, VersionId};
use crate::rating::{CardRate, Pricer, Rates};
use crate::simulate::{LayerPlan, Simulation, simulate};

mod tiers;

use tiers::TierSums;

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
    // One pass prices every household at the market base rates and the
    // benchmark rates, and tallies it by tier and by size. Card rates
    // always price a household, so the only failure is an overflow,
    // whichever rate would have met it first.
    let mut pricer = Pricer::new(
        rated,
        [
            Rates::Card(CardRate::MarketBase),
            Rates::Card(CardRate::Benchmark),
        ],
    );
    let mut base_monthly = 0i64;
    let mut bench_monthly = 0i64;
    let mut tiers = TierSums::default();
    let mut sizes = SizeTally::default();
    for (i, (h, &layer)) in rated
        .households
        .iter()
        .zip(&vsim.household_layer)
        .enumerate()
    {
        // One look at the household's shape prices and tallies it.
        let priced = match &h.shape {
            Shape::Known { tier, people } => {
                pricer.known(h.market, people).inspect(|&[base_cents, _]| {
                    tiers.add_known(*tier, people.len(), base_cents, layer);
                    sizes.add_size(i, Some(people.len()));
                })
            }
            Shape::Unknown { people } => match pricer.unknown_at(h.market, people)? {
                Some(j) => {
                    let [cost, bench] = pricer.unknown(j).ok_or(PricingError::MarketUnavailable)?;
                    tiers.add_unknown(cost.cents, cost.compositions.as_ref());
                    sizes.add_size(i, None);
                    Some([cost.cents, bench.cents])
                }
                None => None,
            },
        };
        let [base_cents, bench_cents] = match priced {
            Some(cents) => cents,
            None => {
                let [cost, bench] = pricer.cost(h)?.ok_or(PricingError::MarketUnavailable)?;
                tiers.add(h, cost.cents, cost.compositions.as_ref(), layer);
                sizes.add(i, h);
                [cost.cents, bench.cents]
            }
        };
        base_monthly = base_monthly.checked_add(base_cents).ok_or(Overflow)?;
        bench_monthly = bench_monthly.checked_add(bench_cents).ok_or(Overflow)?;
    }
    let bench_monthly = Cents::new(bench_monthly);
    let fig = figures(
        rated,
        (base_monthly, &sizes),
        vsim,
        sim.years,
        (base_caps(&base), effective_caps(base_caps(&base), ver_caps)),
        params,
        bench_monthly.checked_mul(12)?,
    )?;
    let employees = i128::from(rated.employees());
    let by_tier = tiers.by_tier(
        rated,
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
