//! The stored document of a market-rate quote: every figure of the Quote
//! resource in the specification's camelCase. The identity and lifecycle
//! fields (`id`, `groupId`, `mode`, `status`, `expiresAt`, `createdAt`)
//! live on the stored row and are added by the adapter that answers, so a
//! finalization changes the status without rewriting the figures.

use pricing_core::quote::{ComparisonBasis, Quote, TierLine};
use serde_json::{Value, json};

fn tier(line: &TierLine) -> Value {
    json!({"count": line.count, "avgCents": line.avg_cents.get()})
}

/// The figures of `q` as stored. `updated_at` is the card's `updated_at`
/// date, when it says; `contribution_pct` the employer share used.
#[must_use]
pub fn quote_body(q: &Quote, updated_at: Option<&str>, contribution_pct: u32) -> Value {
    let t = &q.census.tiers;
    let b = &q.monthly.by_tier;
    let c = &q.comparison;
    let f = &q.funding_breakdown;
    json!({
        "pricingBasis": "market_rates",
        "plan": {"id": q.plan.id.as_str(), "name": q.plan.name},
        "planYearStartDate": pricing_core::census::date_opt::format(q.plan_year_start_date),
        "census": {
            "employees": q.census.employees,
            "coveredLives": q.census.covered_lives,
            "tiers": {
                "employeeOnly": t.employee_only,
                "employeeSpouse": t.employee_spouse,
                "employeeChildren": t.employee_children,
                "family": t.family,
            },
        },
        "monthly": {
            "totalCents": q.monthly.total_cents.get(),
            "pepmCents": q.monthly.pepm_cents.get(),
            "byTier": {
                "employeeOnly": tier(&b.employee_only),
                "employeeSpouse": tier(&b.employee_spouse),
                "employeeChildren": tier(&b.employee_children),
                "family": tier(&b.family),
            },
        },
        "annual": {"totalCents": q.annual_total_cents.get()},
        "employeeContribution": {
            "premiumCents": q.employee_contribution_premium_cents.get(),
            "employerContributionPct": contribution_pct,
        },
        "comparison": {
            "priorPepmCents": c.prior_pepm_cents.get(),
            "savingsMonthlyCents": c.savings_monthly_cents.get(),
            "savingsAnnualCents": c.savings_annual_cents.get(),
            "savingsPct": c.savings_pct,
            "basis": match c.basis {
                ComparisonBasis::CurrentCoverage => "current_coverage",
                ComparisonBasis::Benchmark => "benchmark",
            },
        },
        "benchmark": {
            "carrier": c.benchmark.carrier,
            "planName": c.benchmark.plan_name,
            "network": c.benchmark.network,
            "metalTier": c.benchmark.metal_tier,
            "monthlyCents": c.benchmark.monthly_cents.get(),
            "pepmCents": c.benchmark.pepm_cents.get(),
        },
        "fundingBreakdown": {
            "expectedClaimsPct": f.expected_claims_pct,
            "stopLossPct": f.stop_loss_pct,
            "careNavigationPct": f.care_navigation_pct,
            "adminFeesPct": f.admin_fees_pct,
            "note": f.note,
        },
        "assumptions": q.assumptions,
        // The card says a date; timestamps are RFC 3339 at its midnight UTC.
        "pricing": {
            "source": q.pricing_source,
            "updatedAt": updated_at.map(|d| format!("{d}T00:00:00Z")),
        },
    })
}
