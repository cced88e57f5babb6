//! `byTier` of a quote: the average joint household cost per tier. A
//! known household counts its base cost, layer funding and fees in its
//! tier; an unknown household its composition costs weighted by the mix.
//!
//! Every household's contribution is an exact integer, so the sums are
//! gathered in one pass over the households (per tier for known ones, per
//! composition for unknown ones) and scaled once at the end: the same
//! numerators and denominators as adding each household's scaled term.

use crate::error::PricingError;
use crate::household::{COMPOSITIONS, E8, Household, RatedCensus, Shape, Tier};
use crate::money::{Cents, div_round};
use crate::quote::{ByTier, TierLine};
use crate::simulate::VersionSim;

/// Sums of the known households of one tier.
#[derive(Debug, Clone, Copy, Default)]
struct KnownSums {
    households: i128,
    cost: i128,
    people: i128,
    layer: i128,
}

/// Exact sums of a census's household costs, gathered by [`TierSums::add`].
#[derive(Debug, Default)]
pub(super) struct TierSums {
    /// Known households, by tier.
    known: [KnownSums; 4],
    /// Unknown households.
    unknown: i128,
    /// Unknown households' cost in each composition, in [`COMPOSITIONS`]
    /// order.
    compositions: [i128; 6],
}

impl TierSums {
    /// Adds a household: its base cost ([`HouseholdCost`](crate::rating::HouseholdCost)'s `cents` and
    /// `compositions`) and Σ years layer.
    pub(super) fn add(
        &mut self,
        h: &Household,
        cents: i64,
        compositions: Option<&[i64; 6]>,
        layer: i64,
    ) {
        match &h.shape {
            Shape::Known { tier, people } => self.add_known(*tier, people.len(), cents, layer),
            Shape::Unknown { .. } => self.add_unknown(cents, compositions),
        }
    }

    /// Adds a known household: its tier, number of people, base cost and
    /// Σ years layer.
    pub(super) fn add_known(&mut self, tier: Tier, people: usize, cents: i64, layer: i64) {
        if let Some(s) = self.known.get_mut(tier.index()) {
            s.households += 1;
            s.cost += i128::from(cents);
            s.people += i128::try_from(people).unwrap_or(0);
            s.layer += i128::from(layer);
        }
    }

    /// Adds an unknown household: its base cost, in each composition when
    /// given.
    pub(super) fn add_unknown(&mut self, cents: i64, compositions: Option<&[i64; 6]>) {
        self.unknown += 1;
        let comps = compositions.copied().unwrap_or([cents; 6]);
        for (sum, c) in self.compositions.iter_mut().zip(comps) {
            *sum += i128::from(c);
        }
    }

    /// The average joint household cost of each tier.
    ///
    /// # Errors
    /// [`PricingError::Overflow`] when an average does not fit.
    pub(super) fn by_tier(
        &self,
        rated: &RatedCensus,
        vsim: &VersionSim,
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
        // Σ over a tier's known households of
        // ((cost + fees × people) × k + layer × margin) × 1e8, over 1e8 each.
        for (t, s) in self.known.iter().enumerate() {
            let v = (s.cost + fees * s.people) * k + s.layer * margin;
            put(t, v * E8, s.households * E8);
        }
        // Σ over unknown households of (composition cost + fees × people)
        // × k × weight, over the weight each.
        for ((&(tier, kids), w), &c) in COMPOSITIONS
            .iter()
            .zip(rated.composition_weights_e8)
            .zip(&self.compositions)
        {
            let partner = i128::from(matches!(tier, Tier::EmployeeSpouse | Tier::Family));
            let n = 1 + partner + i128::try_from(kids).unwrap_or(0);
            put(
                tier.index(),
                (c + fees * n * self.unknown) * k * w,
                w * self.unknown,
            );
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
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;
    use crate::census::{CensusMember, Relationship};
    use crate::household::tests::{ctx, dep};
    use crate::quote::market_comparison;
    use crate::rate_card::tests::card;
    use crate::rating::{CardRate, Rates, census_cost};

    /// `byTier` as a sum of each household's scaled terms (the definition).
    fn by_tier_per_household(
        rated: &RatedCensus,
        vsim: &VersionSim,
        years: u32,
        margin_bp: i64,
        fees_pmpm: i64,
    ) -> ByTier {
        let base = census_cost(rated, Rates::Card(CardRate::MarketBase))
            .unwrap()
            .unwrap();
        let k = i128::from(years) * 12 * 10_000;
        let margin = 10_000 + i128::from(margin_bp);
        let fees = i128::from(fees_pmpm);
        let mut num = [0i128; 4];
        let mut den = [0i128; 4];
        for ((h, cost), layer) in rated
            .households
            .iter()
            .zip(&base.households)
            .zip(&vsim.household_layer)
        {
            match &h.shape {
                Shape::Known { tier, people } => {
                    let n = i128::try_from(people.len()).unwrap();
                    let v = (i128::from(cost.cents) + fees * n) * k + i128::from(*layer) * margin;
                    num[tier.index()] += v * E8;
                    den[tier.index()] += E8;
                }
                Shape::Unknown { .. } => {
                    for ((&(tier, kids), w), c) in COMPOSITIONS
                        .iter()
                        .zip(rated.composition_weights_e8)
                        .zip(cost.compositions.unwrap())
                    {
                        let partner =
                            i128::from(matches!(tier, Tier::EmployeeSpouse | Tier::Family));
                        let n = 1 + partner + i128::try_from(kids).unwrap();
                        num[tier.index()] += (i128::from(c) + fees * n) * k * w;
                        den[tier.index()] += w;
                    }
                }
            }
        }
        for (t, (&l, &mix)) in vsim
            .unknown_tier_layer
            .iter()
            .zip(&rated.group.household_mix_bp)
            .enumerate()
        {
            num[t] += l * margin * i128::from(mix) * 10_000;
        }
        let line = |t: usize| TierLine {
            count: rated.tiers[t],
            avg_cents: Cents::from_i128(if den[t] == 0 {
                0
            } else {
                div_round(num[t], k * den[t]).unwrap()
            })
            .unwrap(),
        };
        ByTier {
            employee_only: line(0),
            employee_spouse: line(1),
            employee_children: line(2),
            family: line(3),
        }
    }

    #[test]
    fn sums_by_tier_are_the_sums_of_each_households_terms() {
        let c = card();
        let child = |age| dep(Relationship::Child, age);
        let members: Vec<CensusMember> = (0..30u32)
            .map(|i| {
                let zip = if i % 3 == 0 { "10001" } else { "94103" };
                let mut m = CensusMember::new(&format!("E{i}"), date!(1975 - 05 - 01), zip);
                m.age = Some(20 + i);
                m.dob = None;
                m.dependents = match i % 4 {
                    0 => None,
                    1 => Some(vec![]),
                    2 => Some(vec![child(i % 19), child(3)]),
                    _ => Some(vec![dep(Relationship::Spouse, 30 + i), child(8)]),
                };
                m
            })
            .collect();
        let mut rated = RatedCensus::build(&members, ctx(&c)).unwrap();
        rated.group.simulated_plan_years = 30;
        let sim = market_comparison(&rated);
        let base = census_cost(&rated, Rates::Card(CardRate::MarketBase))
            .unwrap()
            .unwrap();
        for (v, params) in sim.versions.iter().zip(&rated.group.versions) {
            let mut sums = TierSums::default();
            for ((h, cost), &layer) in rated
                .households
                .iter()
                .zip(&base.households)
                .zip(&v.household_layer)
            {
                sums.add(h, cost.cents, cost.compositions.as_ref(), layer);
            }
            let (margin, fees) = (params.risk_margin_bp, params.fees_pmpm_cents());
            assert_eq!(
                sums.by_tier(&rated, v, sim.years, margin, fees).unwrap(),
                by_tier_per_household(&rated, v, sim.years, margin, fees)
            );
        }
    }
}
