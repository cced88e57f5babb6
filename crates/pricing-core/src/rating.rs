//! Monthly household costs under a rate basis (pricing model sections 2, 4
//! and 6): the card's age-rated area rates, or a plan's member rates, PMPM or
//! tier rates. A known household's cost is an exact sum; an unknown
//! household's is the mix-weighted expected cost, rounded once.

use serde::Serialize;

use crate::error::Overflow;
use crate::household::{COMPOSITIONS, E8, Household, RatedCensus, Shape, Tier};
use crate::money::div_round;
use crate::plan::{PlanRates, RateBasis};

mod pricer;

pub(crate) use pricer::Pricer;

/// Which card rate an age-rated cost uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardRate {
    /// The local platinum PPO benchmark.
    Benchmark,
    /// The default market base HSA PPO.
    MarketBase,
}

/// Where rates come from.
#[derive(Debug, Clone, Copy)]
pub enum Rates<'a> {
    /// The rate card.
    Card(CardRate),
    /// A plan's own rates.
    Plan(&'a PlanRates),
}

/// One household's monthly cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HouseholdCost {
    /// Monthly cents (an unknown household's expected cost, rounded once).
    pub cents: i64,
    /// An unknown household's cost in each of the six compositions.
    pub compositions: Option<[i64; 6]>,
    /// Which basis priced it.
    pub basis: RateBasis,
}

/// Costs of every household, with their exact sum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CensusCost {
    /// In household order.
    pub households: Vec<HouseholdCost>,
    /// Exact monthly sum.
    pub monthly: i64,
    /// Households priced on a fallback basis although member rates were sent.
    pub member_rate_fallbacks: u64,
}

impl CensusCost {
    /// The basis that priced most households (ties: the preferred one).
    #[must_use]
    pub fn basis(&self) -> RateBasis {
        let mut counts: Vec<(RateBasis, usize)> = Vec::new();
        for h in &self.households {
            match counts.iter_mut().find(|(b, _)| *b == h.basis) {
                Some((_, n)) => *n += 1,
                None => counts.push((h.basis, 1)),
            }
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        counts.first().map_or(RateBasis::RateCard, |(b, _)| *b)
    }
}

/// Costs every household of `rated`. Returns `None` when a plan's rates
/// cannot price some household (member rates missing and no fallback).
///
/// # Errors
/// [`Overflow`] when an amount does not fit.
pub fn census_cost(rated: &RatedCensus, rates: Rates<'_>) -> Result<Option<CensusCost>, Overflow> {
    let mut households = Vec::with_capacity(rated.households.len());
    let mut monthly = 0i64;
    let mut fallbacks = 0u64;
    let mut pricer = Pricer::new(rated, [rates]);
    for h in &rated.households {
        let Some(&[cost]) = pricer.cost(h)? else {
            return Ok(None);
        };
        if let Rates::Plan(p) = rates
            && !p.member_rates.is_empty()
            && cost.basis != RateBasis::MemberRates
        {
            fallbacks += 1;
        }
        monthly = monthly.checked_add(cost.cents).ok_or(Overflow)?;
        households.push(cost);
    }
    Ok(Some(CensusCost {
        households,
        monthly,
        member_rate_fallbacks: fallbacks,
    }))
}

/// The exact monthly total of every household, without keeping the
/// per-household costs; `None` as for [`census_cost`].
///
/// # Errors
/// [`Overflow`] when an amount does not fit.
pub fn census_monthly(rated: &RatedCensus, rates: Rates<'_>) -> Result<Option<i64>, Overflow> {
    let mut monthly = 0i64;
    let mut pricer = Pricer::new(rated, [rates]);
    for h in &rated.households {
        let Some(&[cost]) = pricer.cost(h)? else {
            return Ok(None);
        };
        monthly = monthly.checked_add(cost.cents).ok_or(Overflow)?;
    }
    Ok(Some(monthly))
}

/// The mix-weighted expected cost of an unknown household from its cost in
/// each composition: `Σ cost × weight ÷ 1e8`, rounded once, half away from
/// zero.
///
/// # Errors
/// [`Overflow`] when the result does not fit.
pub(crate) fn expected_cents(comp: &[i64; 6], weights_e8: &[i128; 6]) -> Result<i64, Overflow> {
    // Real amounts keep every product and partial sum within i64, where the
    // same exact arithmetic is much cheaper; anything larger takes i128.
    let mut small = Some(0i64);
    for (&c, &w) in comp.iter().zip(weights_e8) {
        small = small.and_then(|n| n.checked_add(c.checked_mul(i64::try_from(w).ok()?)?));
    }
    if let Some(num) = small {
        return Ok(div_round_e8(num));
    }
    let num: i128 = comp
        .iter()
        .zip(weights_e8)
        .map(|(&c, &w)| i128::from(c) * w)
        .sum();
    i64::try_from(div_round(num, E8)?).map_err(|_| Overflow)
}

/// [`div_round`]`(num, 1e8)` on `i64` (the quotient always fits).
fn div_round_e8(num: i64) -> i64 {
    const DEN: i64 = 100_000_000;
    let q = num / DEN;
    let r = num % DEN;
    // |r| < 1e8, so doubling it cannot overflow.
    if r.abs() * 2 >= DEN {
        if num < 0 { q - 1 } else { q + 1 }
    } else {
        q
    }
}

fn people_of(c: usize) -> i64 {
    COMPOSITIONS.get(c).map_or(1, |&(tier, kids)| {
        let partner = i64::from(matches!(tier, Tier::EmployeeSpouse | Tier::Family));
        1 + partner + i64::try_from(kids).unwrap_or(0)
    })
}

/// One household's monthly cost, or `None` when the plan has no rate for it.
///
/// # Errors
/// [`Overflow`] when an amount does not fit.
pub fn household_cost(
    rated: &RatedCensus,
    h: &Household,
    rates: Rates<'_>,
) -> Result<Option<HouseholdCost>, Overflow> {
    let market = rated.market_of(h);
    let expected = |comp: [i64; 6]| expected_cents(&comp, &rated.composition_weights_e8);
    let from = |cents: i64, compositions: Option<[i64; 6]>, basis| {
        Ok(Some(HouseholdCost {
            cents,
            compositions,
            basis,
        }))
    };
    match rates {
        Rates::Card(which) => {
            let rate21 = match which {
                CardRate::Benchmark => market.benchmark_rate21_cents,
                CardRate::MarketBase => market.market_base_rate21_cents,
            };
            let charge = |people: &[crate::household::Person]| -> i64 {
                people
                    .iter()
                    .filter(|p| p.charged)
                    .map(|p| market.rate(rate21, p.age))
                    .sum()
            };
            match &h.shape {
                Shape::Known { people, .. } => {
                    from(charge(people.as_slice()), None, RateBasis::RateCard)
                }
                Shape::Unknown { people } => {
                    let [e, s, c1, c2] = people.map(|p| charge(&[p]));
                    let comp = [e, e + s, e + c1, e + c1 + c2, e + s + c1, e + s + c1 + c2];
                    from(expected(comp)?, Some(comp), RateBasis::RateCard)
                }
            }
        }
        Rates::Plan(plan) => {
            if let Some(&rate) = h.external_id().and_then(|id| plan.member_rates.get(id)) {
                let comp = matches!(h.shape, Shape::Unknown { .. }).then_some([rate; 6]);
                return from(rate, comp, RateBasis::MemberRates);
            }
            if let Some(pmpm) = plan.pmpm {
                return match &h.shape {
                    Shape::Known { people, .. } => {
                        let n = i64::try_from(people.len()).map_err(|_| Overflow)?;
                        from(pmpm.checked_mul(n).ok_or(Overflow)?, None, RateBasis::Pmpm)
                    }
                    Shape::Unknown { .. } => {
                        let comp: [i64; 6] =
                            std::array::from_fn(|c| pmpm.saturating_mul(people_of(c)));
                        from(expected(comp)?, Some(comp), RateBasis::Pmpm)
                    }
                };
            }
            if let Some(tiers) = plan.monthly {
                return match &h.shape {
                    Shape::Known { tier, .. } => {
                        from(tiers.get(*tier), None, RateBasis::MonthlyRates)
                    }
                    Shape::Unknown { .. } => {
                        let comp: [i64; 6] = std::array::from_fn(|c| {
                            COMPOSITIONS.get(c).map_or(0, |&(t, _)| tiers.get(t))
                        });
                        from(expected(comp)?, Some(comp), RateBasis::MonthlyRates)
                    }
                };
            }
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_i64_rounding_matches_div_round() {
        let e8 = 100_000_000i64;
        for base in [0, 1, 7, 12_345, 999_999_999, i64::MAX / e8 - 1] {
            for off in [
                -e8 - 1,
                -e8,
                -e8 / 2 - 1,
                -e8 / 2,
                -e8 / 2 + 1,
                -1,
                0,
                1,
                e8 / 2 - 1,
                e8 / 2,
                e8 / 2 + 1,
                e8 - 1,
            ] {
                for sign in [1, -1] {
                    let num = sign * (base * e8 + off);
                    assert_eq!(
                        i128::from(div_round_e8(num)),
                        div_round(i128::from(num), E8).unwrap(),
                        "{num}"
                    );
                }
            }
        }
    }

    #[test]
    fn expected_costs_match_the_exact_sum_at_any_size() {
        let weights = [
            55_000_000, 15_000_000, 2_000_000, 8_000_000, 4_000_000, 16_000_000,
        ];
        let exact = |comp: &[i64; 6]| -> Result<i64, Overflow> {
            let num: i128 = comp
                .iter()
                .zip(weights)
                .map(|(&c, w)| i128::from(c) * w)
                .sum();
            i64::try_from(div_round(num, E8)?).map_err(|_| Overflow)
        };
        for comp in [
            [0; 6],
            [1, 2, 3, 4, 5, 6],
            [61_234, 122_468, 98_000, 130_000, 160_000, 190_000],
            [-5, 7, -9, 11, -13, 15],
            [i64::MAX / 100_000_000; 6],
            [i64::MAX / 10; 6],
            [i64::MAX; 6],
            [i64::MIN, i64::MAX, 0, 0, 0, 1],
        ] {
            assert_eq!(expected_cents(&comp, &weights), exact(&comp), "{comp:?}");
        }
    }
}
