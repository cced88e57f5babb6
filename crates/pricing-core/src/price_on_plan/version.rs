//! The per-version extras of a price-on-plan answer: comparison with the
//! benchmark, rank, household rate tables, fit flags and summaries.

use super::{
    Benchmark, Comparison, HouseholdRateRow, NewMemberRate, PlanStatus, PricedVersion,
    VersionResult,
};
use crate::error::PricingError;
use crate::figures::Figures;
use crate::household::{E8, RatedCensus, Shape, Tier};
use crate::money::{Cents, div_round, div_round_cents, percent_of};
use crate::plan::{BasePlan, PlanRates};
use crate::rate_card::VersionParams;
use crate::rating::CensusCost;

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the inputs are distinct facts"
)]
pub(super) fn priced_version(
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
