//! Pricing every household of a census under one or more rate bases, as
//! [`household_cost`] prices one, without redoing what repeats.
//!
//! With card rates, a person's rate depends only on the market and the age
//! (capped at the top of the age curve), so each market's rates are
//! tabulated by age once; and an unknown household's expected cost depends
//! only on its market and its people's ages, so it is computed once per
//! market and employee age. Plan rates are priced household by household.

use crate::error::Overflow;
use crate::household::{Household, People, Person, RatedCensus, Shape};
use crate::plan::RateBasis;
use crate::rate_card::AGE_CURVE_LEN;
use crate::rating::{CardRate, HouseholdCost, Rates, expected_cents, household_cost};

/// Oldest age of an age curve; older people are rated at it.
const TOP_AGE: u32 = 64;

/// The ages a card rate table covers, `0..=TOP_AGE`.
const AGES: usize = AGE_CURVE_LEN;

/// What an unknown household's card cost depends on besides its market:
/// each person's age (capped at [`TOP_AGE`]) and whether they are charged.
type UnknownKey = [(u32, bool); 4];

/// Prices the households of one census under `N` rate bases at once.
pub(crate) struct Pricer<'a, const N: usize> {
    rated: &'a RatedCensus,
    rates: [Rates<'a>; N],
    /// When every basis is a card rate: per market, each basis's rate at
    /// each age `0..=TOP_AGE`. Empty otherwise.
    by_age: Vec<[[i64; N]; AGES]>,
    /// With card rates: per market and employee age, the index in `seen`
    /// of the unknown household met first there ([`NONE`] before).
    slots: Vec<u32>,
    /// The unknown households priced so far: their people and costs.
    seen: Vec<(UnknownKey, [HouseholdCost; N])>,
    /// The costs of the last household that `seen` does not hold.
    last: [HouseholdCost; N],
}

/// A household's card costs, from [`Pricer::card`].
#[derive(Debug, Clone, Copy)]
enum Card<const N: usize> {
    /// A known household's monthly cents under each basis.
    Known([i64; N]),
    /// An unknown household's costs: [`Pricer::unknown`] of this index.
    Unknown(usize),
}

/// An empty slot.
const NONE: u32 = u32::MAX;

/// A known household's card cost before its cents are set.
const KNOWN: HouseholdCost = HouseholdCost {
    cents: 0,
    compositions: None,
    basis: RateBasis::RateCard,
};

impl<'a, const N: usize> Pricer<'a, N> {
    /// A pricer of `rated` under `rates`.
    pub(crate) fn new(rated: &'a RatedCensus, rates: [Rates<'a>; N]) -> Self {
        let mut card = [CardRate::Benchmark; N];
        let mut all_card = true;
        for (c, r) in card.iter_mut().zip(&rates) {
            match r {
                Rates::Card(which) => *c = *which,
                Rates::Plan(_) => all_card = false,
            }
        }
        let by_age = if all_card {
            rated
                .markets
                .iter()
                .map(|m| {
                    let rate21 = card.map(|which| match which {
                        CardRate::Benchmark => m.benchmark_rate21_cents,
                        CardRate::MarketBase => m.market_base_rate21_cents,
                    });
                    std::array::from_fn(|age| {
                        let age = u32::try_from(age).unwrap_or(TOP_AGE);
                        rate21.map(|r| m.rate(r, age))
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        Self {
            rated,
            rates,
            by_age,
            slots: Vec::new(),
            seen: Vec::new(),
            last: [KNOWN; N],
        }
    }

    /// [`household_cost`] of `h` under each basis; `None` when one cannot
    /// price it.
    ///
    /// # Errors
    /// [`Overflow`] when an amount does not fit (the first basis that
    /// overflows).
    pub(crate) fn cost(&mut self, h: &Household) -> Result<Option<&[HouseholdCost; N]>, Overflow> {
        match self.card(h)? {
            Some(Card::Known(cents)) => {
                for (cost, c) in self.last.iter_mut().zip(cents) {
                    *cost = HouseholdCost { cents: c, ..KNOWN };
                }
                Ok(Some(&self.last))
            }
            Some(Card::Unknown(i)) => Ok(self.unknown(i)),
            None => self.each(h),
        }
    }

    /// The card costs of `h` under each basis, as [`household_cost`] gives
    /// them; `None` when a basis is not a card rate (or the census has no
    /// market), for [`Pricer::cost`] to price it.
    ///
    /// # Errors
    /// [`Overflow`] when an amount does not fit (the first basis that
    /// overflows).
    fn card(&mut self, h: &Household) -> Result<Option<Card<N>>, Overflow> {
        match &h.shape {
            Shape::Known { people, .. } => Ok(self.known(h.market, people).map(Card::Known)),
            Shape::Unknown { people } => Ok(self.unknown_at(h.market, people)?.map(Card::Unknown)),
        }
    }

    /// A known household's monthly cents under each basis (card rates): Σ
    /// the rates of its charged people, in order.
    #[inline]
    pub(crate) fn known(&self, market: usize, people: &People) -> Option<[i64; N]> {
        let (_, table) = table(&self.by_age, self.rated.markets.len(), market)?;
        // The slots past the people add nothing: a fixed loop, with no
        // branch on the household.
        let (slots, len) = people.slots();
        let mut cents = [0i64; N];
        for (i, p) in slots.iter().enumerate() {
            let on = i < len && p.charged;
            for (c, rate) in cents.iter_mut().zip(rates_at(table, p.age)) {
                *c += if on { rate } else { 0 };
            }
        }
        Some(cents)
    }

    /// An unknown household's costs under each basis (card rates), priced
    /// once per market and people: its index for [`Pricer::unknown`].
    ///
    /// # Errors
    /// [`Overflow`] when an amount does not fit.
    pub(crate) fn unknown_at(
        &mut self,
        market: usize,
        people: &[Person; 4],
    ) -> Result<Option<usize>, Overflow> {
        let Some((market, table)) = table(&self.by_age, self.rated.markets.len(), market) else {
            return Ok(None);
        };
        let key: UnknownKey = people.map(|p| (p.age.min(TOP_AGE), p.charged));
        if self.slots.is_empty() {
            self.slots = vec![NONE; self.by_age.len() * AGES];
            // A census's unknown households fill at most every slot.
            self.seen.reserve_exact(self.slots.len());
        }
        let [(employee_age, _), ..] = key;
        let slot = usize::try_from(employee_age)
            .ok()
            .and_then(|age| market.checked_mul(AGES)?.checked_add(age))
            .and_then(|s| self.slots.get_mut(s));
        let found = slot
            .as_deref()
            .and_then(|&i| usize::try_from(i).ok())
            .filter(|&i| self.seen.get(i).is_some_and(|(seen, _)| *seen == key));
        if let Some(i) = found {
            return Ok(Some(i));
        }
        let costs = unknown_costs(table, &key, &self.rated.composition_weights_e8)?;
        let i = self.seen.len();
        if let Some(slot) = slot.filter(|s| **s == NONE) {
            *slot = u32::try_from(i).unwrap_or(NONE);
        }
        self.seen.push((key, costs));
        Ok(Some(i))
    }

    /// The costs of the `i`-th unknown household [`Pricer::unknown_at`]
    /// priced.
    pub(crate) fn unknown(&self, i: usize) -> Option<&[HouseholdCost; N]> {
        self.seen.get(i).map(|(_, costs)| costs)
    }

    /// [`household_cost`] under each basis in turn.
    fn each(&mut self, h: &Household) -> Result<Option<&[HouseholdCost; N]>, Overflow> {
        for (o, &r) in self.last.iter_mut().zip(&self.rates) {
            let Some(c) = household_cost(self.rated, h, r)? else {
                return Ok(None);
            };
            *o = c;
        }
        Ok(Some(&self.last))
    }
}

/// The market `household_cost` rates a household of market `market` in
/// (the first when `market` is not one of the census's `markets`), and its
/// rate table (`None` without card rates).
fn table<const N: usize>(
    by_age: &[[[i64; N]; AGES]],
    markets: usize,
    market: usize,
) -> Option<(usize, &[[i64; N]; AGES])> {
    let market = if market < markets { market } else { 0 };
    by_age.get(market).map(|t| (market, t))
}

/// An unknown household's card costs under each basis, as
/// [`household_cost`] computes them: the cost of each composition from the
/// rates of its people, and their mix-weighted expectation.
fn unknown_costs<const N: usize>(
    table: &[[i64; N]; AGES],
    key: &UnknownKey,
    weights_e8: &[i128; 6],
) -> Result<[HouseholdCost; N], Overflow> {
    let charge = key.map(|(age, charged)| {
        if charged {
            rates_at(table, age)
        } else {
            [0; N]
        }
    });
    let mut out = [KNOWN; N];
    for (n, cost) in out.iter_mut().enumerate() {
        let [e, s, c1, c2] = charge.map(|r| r.get(n).copied().unwrap_or(0));
        let comp = [e, e + s, e + c1, e + c1 + c2, e + s + c1, e + s + c1 + c2];
        *cost = HouseholdCost {
            cents: expected_cents(&comp, weights_e8)?,
            compositions: Some(comp),
            basis: RateBasis::RateCard,
        };
    }
    Ok(out)
}

/// A table's rates at `age` ([`Market::rate`](crate::rate_card::Market::rate)
/// caps the age the same way).
fn rates_at<const N: usize>(table: &[[i64; N]; AGES], age: u32) -> [i64; N] {
    let i = usize::try_from(age.min(TOP_AGE)).unwrap_or(AGES - 1);
    table.get(i).copied().unwrap_or([0; N])
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;
    use crate::census::{CensusMember, CensusRules};
    use crate::household::{CensusContext, Person, Place};
    use crate::rate_card::tests::card;

    /// A census of every household shape in two markets, with ages beyond
    /// the top of the curve.
    fn rated() -> RatedCensus {
        let c = card();
        let members: Vec<CensusMember> = (0..40)
            .map(|i: i32| {
                let zip = if i % 3 == 0 { "10001" } else { "94103" };
                let year = 1940 + (i * 7) % 80;
                let mut m = CensusMember::new(&format!("E{i}"), date!(2000 - 01 - 01), zip);
                m.dob = time::Date::from_calendar_date(year, time::Month::May, 3).ok();
                if i % 4 == 0 {
                    m.dependents = None;
                }
                m
            })
            .collect();
        let ctx = CensusContext {
            card: &c,
            plan_year_start: date!(2026 - 01 - 01),
            partner: None,
            rules: CensusRules { require_dob: true },
            fallback_zip: None,
        };
        RatedCensus::build(&members, ctx).unwrap()
    }

    #[test]
    fn tables_and_reuse_give_each_households_own_cost() {
        let mut r = rated();
        // A hand-made unknown household whose modelled people differ from
        // the usual ones shares a slot, but not a cost, with another.
        let mut odd = r.households[0].clone();
        odd.shape = Shape::Unknown {
            people: [
                Person {
                    age: 70,
                    place: Place::Employee,
                    charged: true,
                },
                Person {
                    age: 30,
                    place: Place::ModelledSpouse,
                    charged: true,
                },
                Person {
                    age: 5,
                    place: Place::ModelledChild(1),
                    charged: false,
                },
                Person {
                    age: 9,
                    place: Place::ModelledChild(2),
                    charged: true,
                },
            ],
        };
        r.households.push(odd);
        let mut far = r.households[1].clone();
        far.market = 99;
        r.households.push(far);
        assert!(r.markets.len() > 1);
        let all = [
            Rates::Card(CardRate::MarketBase),
            Rates::Card(CardRate::Benchmark),
        ];
        let mut both = Pricer::new(&r, all);
        let mut one = Pricer::new(&r, [all[1]]);
        for _ in 0..2 {
            for h in &r.households {
                let expect = all.map(|rates| household_cost(&r, h, rates).unwrap().unwrap());
                assert_eq!(both.cost(h).unwrap(), Some(&expect));
                assert_eq!(one.cost(h).unwrap(), Some(&[expect[1]]));
            }
        }
    }
}
