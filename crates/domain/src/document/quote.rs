//! A quote's stored document: the figures of a market-rate quote, or the
//! price-on-plan document. The identity and lifecycle fields (`id`,
//! `group_id`, `mode`, `status`, `expires_at`, `created_at`) live on the
//! stored row, so a finalization changes the status without rewriting the
//! figures. With the `openapi` feature the types describe themselves under
//! the schema names the API has always published.

use pricing_core::household::Tier;
use pricing_core::quote::ComparisonBasis;
use serde::{Deserialize, Serialize};

use super::{DocumentError, Legacy, from_stored, to_stored};
use crate::quote::QuoteKind;
use crate::services::price_on_plan::Document as PriceOnPlanDocument;

/// `plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = QuotePlanOut))]
pub struct QuotePlan {
    /// `diamond` or `value`.
    #[cfg_attr(feature = "openapi", schema(example = "diamond"))]
    pub id: String,
    /// Display name.
    pub name: String,
}

/// Household tier counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TiersOut))]
pub struct Tiers {
    /// Employee only.
    pub employee_only: u64,
    /// Employee and spouse (or domestic partner).
    pub employee_spouse: u64,
    /// Employee and children.
    pub employee_children: u64,
    /// Family.
    pub family: u64,
}

/// `census`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = QuoteCensusOut))]
pub struct QuoteCensus {
    /// Counted employees (active full- and part-time).
    pub employees: u64,
    /// Covered lives (expected, where dependents were not sent).
    pub covered_lives: u64,
    /// Tier counts.
    pub tiers: Tiers,
}

/// One tier's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TierLineOut))]
pub struct TierLine {
    /// Households in the tier.
    pub count: u64,
    /// Average monthly cost of a household of the tier.
    pub avg_cents: i64,
}

/// `monthly.by_tier`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ByTierOut))]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = MonthlyOut))]
pub struct Monthly {
    /// Monthly total.
    pub total_cents: i64,
    /// Per counted employee per month.
    pub pepm_cents: i64,
    /// By tier.
    pub by_tier: ByTier,
}

/// `annual`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = AnnualOut))]
pub struct Annual {
    /// 12 × the monthly total.
    pub total_cents: i64,
}

/// `employee_contribution`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ContributionOut))]
pub struct Contribution {
    /// Employees' monthly share of the premium.
    pub premium_cents: i64,
    /// Employer share used, percent (added).
    pub employer_contribution_pct: u32,
}

/// `comparison`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ComparisonOut))]
pub struct Comparison {
    /// Prior cost per employee per month.
    pub prior_pepm_cents: i64,
    /// Prior monthly total minus the quote's (negative when dearer).
    pub savings_monthly_cents: i64,
    /// 12 × the monthly savings.
    pub savings_annual_cents: i64,
    /// Savings as a whole percent of the prior total.
    pub savings_pct: i64,
    /// `current_coverage` (the group's `current_coverage.pepm_cents`) or
    /// `benchmark` (the local platinum PPO) (added).
    #[cfg_attr(feature = "openapi", schema(example = "benchmark"))]
    pub basis: String,
}

/// `benchmark`: the local platinum PPO compared against (added).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = BenchmarkOut))]
pub struct Benchmark {
    /// Carrier.
    pub carrier: String,
    /// Plan name, with the rating area.
    pub plan_name: String,
    /// Network.
    pub network: String,
    /// Metal tier.
    pub metal_tier: String,
    /// The benchmark's monthly premium for this census.
    pub monthly_cents: i64,
    /// Per counted employee per month.
    pub pepm_cents: i64,
}

/// `funding_breakdown`: an illustrative split.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = FundingOut))]
pub struct Funding {
    /// Expected claims, percent.
    pub expected_claims_pct: u32,
    /// Stop-loss, percent.
    pub stop_loss_pct: u32,
    /// Care navigation, percent.
    pub care_navigation_pct: u32,
    /// Administration, percent.
    pub admin_fees_pct: u32,
    /// Says the split is illustrative.
    pub note: String,
}

/// `pricing`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PricingOut))]
pub struct Pricing {
    /// The rate-card layer that priced the quote.
    #[cfg_attr(feature = "openapi", schema(example = "rate-card 2026.1 default"))]
    pub source: String,
    /// When the rate card's rates were last updated.
    #[cfg_attr(feature = "openapi", schema(required = true, format = DateTime))]
    pub updated_at: Option<String>,
}

/// The figures of a quote, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = QuoteFigures))]
pub struct MarketQuote {
    /// `market_rates`.
    #[cfg_attr(feature = "openapi", schema(example = "market_rates"))]
    pub pricing_basis: String,
    /// The version quoted.
    pub plan: QuotePlan,
    /// Plan-year start.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub plan_year_start_date: String,
    /// Census counts.
    pub census: QuoteCensus,
    /// Monthly figures.
    pub monthly: Monthly,
    /// Annual figures.
    pub annual: Annual,
    /// Employees' share.
    pub employee_contribution: Contribution,
    /// Against the prior cost.
    pub comparison: Comparison,
    /// The benchmark plan.
    pub benchmark: Benchmark,
    /// Illustrative funding split.
    pub funding_breakdown: Funding,
    /// Every default or assumption applied.
    pub assumptions: Vec<String>,
    /// Where the price came from.
    pub pricing: Pricing,
}

impl MarketQuote {
    /// The figures of an engine quote. `updated_at` is the card's
    /// `updated_at` date, when it says; `contribution_pct` the employer
    /// share used.
    #[must_use]
    pub fn of(
        q: &pricing_core::quote::Quote,
        updated_at: Option<&str>,
        contribution_pct: u32,
    ) -> Self {
        let t = &q.census.tiers;
        let b = &q.monthly.by_tier;
        let c = &q.comparison;
        let f = &q.funding_breakdown;
        let line = |l: &pricing_core::quote::TierLine| TierLine {
            count: l.count,
            avg_cents: l.avg_cents.get(),
        };
        Self {
            pricing_basis: "market_rates".to_owned(),
            plan: QuotePlan {
                id: q.plan.id.as_str().to_owned(),
                name: q.plan.name.clone(),
            },
            plan_year_start_date: pricing_core::census::date_opt::format(q.plan_year_start_date),
            census: QuoteCensus {
                employees: q.census.employees,
                covered_lives: q.census.covered_lives,
                tiers: Tiers {
                    employee_only: t.employee_only,
                    employee_spouse: t.employee_spouse,
                    employee_children: t.employee_children,
                    family: t.family,
                },
            },
            monthly: Monthly {
                total_cents: q.monthly.total_cents.get(),
                pepm_cents: q.monthly.pepm_cents.get(),
                by_tier: ByTier {
                    employee_only: line(&b.employee_only),
                    employee_spouse: line(&b.employee_spouse),
                    employee_children: line(&b.employee_children),
                    family: line(&b.family),
                },
            },
            annual: Annual {
                total_cents: q.annual_total_cents.get(),
            },
            employee_contribution: Contribution {
                premium_cents: q.employee_contribution_premium_cents.get(),
                employer_contribution_pct: contribution_pct,
            },
            comparison: Comparison {
                prior_pepm_cents: c.prior_pepm_cents.get(),
                savings_monthly_cents: c.savings_monthly_cents.get(),
                savings_annual_cents: c.savings_annual_cents.get(),
                savings_pct: c.savings_pct,
                basis: match c.basis {
                    ComparisonBasis::CurrentCoverage => "current_coverage",
                    ComparisonBasis::Benchmark => "benchmark",
                }
                .to_owned(),
            },
            benchmark: Benchmark {
                carrier: c.benchmark.carrier.clone(),
                plan_name: c.benchmark.plan_name.clone(),
                network: c.benchmark.network.clone(),
                metal_tier: c.benchmark.metal_tier.clone(),
                monthly_cents: c.benchmark.monthly_cents.get(),
                pepm_cents: c.benchmark.pepm_cents.get(),
            },
            funding_breakdown: Funding {
                expected_claims_pct: f.expected_claims_pct,
                stop_loss_pct: f.stop_loss_pct,
                care_navigation_pct: f.care_navigation_pct,
                admin_fees_pct: f.admin_fees_pct,
                note: f.note.clone(),
            },
            assumptions: q.assumptions.clone(),
            // The card says a date; timestamps are RFC 3339 at its midnight UTC.
            pricing: Pricing {
                source: q.pricing_source.clone(),
                updated_at: updated_at.map(|d| format!("{d}T00:00:00Z")),
            },
        }
    }

    /// The monthly cost of a tier and its split by the employer's
    /// contribution, in cents: `(employee, employer)`. The employee share
    /// is rounded half up; the employer pays the rest.
    #[must_use]
    pub fn deduction(&self, tier: Tier) -> (i64, i64) {
        let by = &self.monthly.by_tier;
        let total = match tier {
            Tier::EmployeeOnly => by.employee_only.avg_cents,
            Tier::EmployeeSpouse => by.employee_spouse.avg_cents,
            Tier::EmployeeChildren => by.employee_children.avg_cents,
            Tier::Family => by.family.avg_cents,
        };
        let employer_pct = i64::from(
            self.employee_contribution
                .employer_contribution_pct
                .min(100),
        );
        let employee = (total.saturating_mul(100 - employer_pct) + 50).div_euclid(100);
        (employee, total.saturating_sub(employee))
    }
}

/// A quote's stored document, by the quote's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum QuoteDocument {
    /// A market-rate quote's figures.
    Market(Box<MarketQuote>),
    /// A price-on-plan quote's document.
    PriceOnPlan(Box<PriceOnPlanDocument>),
}

impl QuoteDocument {
    /// The kind of quote the document belongs to.
    #[must_use]
    pub const fn kind(&self) -> QuoteKind {
        match self {
            Self::Market(_) => QuoteKind::Quote,
            Self::PriceOnPlan(_) => QuoteKind::PriceOnPlan,
        }
    }

    /// The market figures, for a market-rate quote.
    #[must_use]
    pub fn market(&self) -> Option<&MarketQuote> {
        match self {
            Self::Market(m) => Some(m),
            Self::PriceOnPlan(_) => None,
        }
    }

    /// The price-on-plan document, for a price-on-plan quote.
    #[must_use]
    pub fn price_on_plan(&self) -> Option<&PriceOnPlanDocument> {
        match self {
            Self::Market(_) => None,
            Self::PriceOnPlan(d) => Some(d),
        }
    }

    /// The stored form.
    ///
    /// # Errors
    /// When the document does not serialize.
    pub fn to_stored(&self) -> Result<String, serde_json::Error> {
        match self {
            Self::Market(m) => to_stored(m),
            Self::PriceOnPlan(d) => to_stored(d),
        }
    }

    /// Reads the stored document of a quote of `kind` (current or legacy:
    /// market figures were bare camelCase, price-on-plan bare snake_case).
    ///
    /// # Errors
    /// [`DocumentError`] when it does not read.
    pub fn from_stored(kind: QuoteKind, text: &str) -> Result<Self, DocumentError> {
        Ok(match kind {
            QuoteKind::Quote => Self::Market(Box::new(from_stored(text, Legacy::Camel)?)),
            QuoteKind::PriceOnPlan => {
                Self::PriceOnPlan(Box::new(from_stored(text, Legacy::Snake)?))
            }
        })
    }
}
