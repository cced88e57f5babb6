//! The census as the engine sees it (pricing model section 2): counted
//! employees grouped into households with rated people, stream keys, tiers,
//! covered lives and the disclosed household mix for unknown households.

use serde::Serialize;
use time::Date;

use crate::census::{CensusMember, CensusRules, validate_member_into};
use crate::error::PricingError;
use crate::rate_card::{AreaIdx, GroupParams, Market, RateCard};

mod assemble;
mod in_order;
mod key_text;
mod keys;
mod markets;
mod people;
mod rules;
mod shape;
mod stand_in;

use assemble::Built;
use in_order::InRowOrder;
pub use key_text::HouseholdKey;
use keys::{Keyed, Order, keyed_rows_after};
pub use keys::{canonical_json, household_keys};
pub use people::{COMPOSITIONS, MAX_PEOPLE, People, Person, Place, Tier};
use rules::{IdOrder, WideRules};

/// Fixed-point scale of expected (mix-weighted) quantities: 1e-8, the
/// product of two basis-point weights.
pub const E8: i128 = 100_000_000;

/// The people of one household.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Shape {
    /// Dependents were submitted (possibly none).
    Known {
        /// Tier from the dependents.
        tier: Tier,
        /// Employee first, then spouse, then other dependents by place.
        people: People,
    },
    /// `dependents` was absent: priced at the expected cost of the mix.
    Unknown {
        /// Employee, modelled spouse, modelled children 1 and 2.
        people: [Person; 4],
    },
}

/// One counted employee's household.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Household {
    /// Stream key of the household: `{key}#{occurrence}`.
    pub key: HouseholdKey,
    /// Whether the key was built from the employee's `external_id`.
    pub keyed_by_external_id: bool,
    /// Row index in the input census.
    pub row: usize,
    /// Index into [`RatedCensus::markets`].
    pub market: usize,
    /// People.
    pub shape: Shape,
}

impl Household {
    /// A household to fill in place.
    const TEMPLATE: Self = Self {
        key: HouseholdKey::EMPTY,
        keyed_by_external_id: false,
        row: 0,
        market: 0,
        shape: Shape::Unknown {
            people: [Person {
                age: 0,
                place: Place::Employee,
                charged: false,
            }; 4],
        },
    };

    /// The employee's `external_id` (the key without its `#n` suffix), when
    /// the key was built from it.
    #[must_use]
    pub fn external_id(&self) -> Option<&str> {
        if self.keyed_by_external_id {
            self.key.rsplit_once('#').map(|(id, _)| id)
        } else {
            None
        }
    }

    /// People in the household (submitted), or `None` when unknown.
    #[must_use]
    pub fn known_people(&self) -> Option<usize> {
        match &self.shape {
            Shape::Known { people, .. } => Some(people.len()),
            Shape::Unknown { .. } => None,
        }
    }
}

/// Inputs of census normalisation besides the census itself.
#[derive(Debug, Clone, Copy)]
pub struct CensusContext<'a> {
    /// The card.
    pub card: &'a RateCard,
    /// Plan-year start; ages are whole years on this date.
    pub plan_year_start: Date,
    /// Partner id for `partner:` layers.
    pub partner: Option<&'a str>,
    /// Validation rules of the caller.
    pub rules: CensusRules,
    /// ZIP used for members whose own ZIP has no market (the company ZIP).
    pub fallback_zip: Option<&'a str>,
}

/// The normalised census.
#[derive(Debug, Clone, Serialize)]
pub struct RatedCensus {
    /// Card version.
    pub card_version: String,
    /// Plan-year start.
    pub plan_year_start: Date,
    /// Counted employees' households, sorted by key (row order never matters).
    pub households: Vec<Household>,
    /// Resolved markets referenced by households.
    pub markets: Vec<Market>,
    /// Group parameters resolved at the primary area.
    pub group: GroupParams,
    /// Index of the primary market (most counted employees).
    pub primary_market: usize,
    /// Rows received.
    pub received: usize,
    /// Contractors excluded.
    pub excluded_contractors: usize,
    /// Terminated members excluded.
    pub excluded_terminated: usize,
    /// Dependents submitted for counted employees.
    pub submitted_dependents: u64,
    /// Households whose dependents are unknown.
    pub unknown_households: u64,
    /// Known households by tier.
    pub known_tiers: [u64; 4],
    /// Reported tier counts: known plus unknown apportioned by largest remainder.
    pub tiers: [u64; 4],
    /// Expected covered lives × [`E8`].
    pub lives_e8: i128,
    /// Composition weights × [`E8`], in [`COMPOSITIONS`] order.
    pub composition_weights_e8: [i128; 6],
    /// Sentences describing every default or assumption applied.
    pub assumptions: Vec<String>,
}

/// Members left out of pricing.
#[derive(Debug, Clone, Copy, Default)]
struct Excluded {
    contractors: usize,
    terminated: usize,
}

impl Excluded {
    /// Counts a member who is not a counted employee.
    fn count(&mut self, m: &CensusMember) {
        if m.status == Some(crate::census::MemberStatus::Terminated) {
            self.terminated += 1;
        } else {
            self.contractors += 1;
        }
    }
}

impl RatedCensus {
    /// Normalises a census.
    ///
    /// # Errors
    /// [`PricingError::InvalidCensus`] when a row breaks a rule,
    /// [`PricingError::CensusRequired`] without a counted employee, and
    /// [`PricingError::MarketUnavailable`] when no ZIP has a priced market.
    pub fn build(members: &[CensusMember], ctx: CensusContext<'_>) -> Result<Self, PricingError> {
        let card = ctx.card;
        let start = ctx.plan_year_start;
        // One pass over the rows: the rules of each row and across rows, the
        // exclusions, and the rating area of each counted employee (per
        // row: `None` when the member is not counted). While the rows come
        // in household-key order, their households are built as they go.
        let mut details = Vec::new();
        let mut wide = WideRules::new(members);
        let mut excluded = Excluded::default();
        let area_of = |m: &CensusMember| m.is_counted().then(|| card.area_for_zip(&m.zip));
        let mut areas: Vec<Option<Option<AreaIdx>>> = Vec::new();
        let mut in_order = Some(InRowOrder::new(ctx, members.len()));
        for (i, m) in members.iter().enumerate() {
            validate_member_into(&mut details, "census", i, m, ctx.rules);
            let id = wide.add(i, m, start);
            if id.is_none() && in_order.take().is_some() {
                areas.reserve(members.len());
                areas.extend(members.iter().take(i).map(area_of));
            }
            let area = area_of(m);
            match (area, in_order.as_mut(), id) {
                (Some(area), Some(households), Some(id)) => households.push(i, m, id, area),
                (None, ..) => excluded.count(m),
                _ => {}
            }
            if in_order.is_none() {
                areas.push(area);
            }
        }
        let ids = match wide.finish(start) {
            Ok(ids) if details.is_empty() => ids,
            wide => {
                if let Err(errors) = wide {
                    details.extend(errors);
                }
                details.sort_by_key(|d| d.index);
                return Err(PricingError::InvalidCensus(details));
            }
        };
        if excluded.contractors + excluded.terminated == members.len() {
            return Err(PricingError::CensusRequired);
        }
        if let (IdOrder::Rows, Some(households)) = (&ids, in_order) {
            return households.finish(members, ctx, excluded);
        }
        if areas.len() != members.len() {
            areas = members.iter().map(area_of).collect();
        }
        match keyed_rows_after(members, ids) {
            Order::Ids(order) => Self::build_in(members, ctx, order, &areas, excluded),
            Order::Keyed(order) => Self::build_in(members, ctx, order, &areas, excluded),
        }
    }

    /// The rest of [`RatedCensus::build`] once the census is valid and its
    /// rows are in canonical household-key order (`areas`: per row, `None`
    /// when the member is not counted, else the rating area of its ZIP).
    fn build_in<K: Keyed>(
        members: &[CensusMember],
        ctx: CensusContext<'_>,
        mut order: Vec<K>,
        areas: &[Option<Option<AreaIdx>>],
        excluded: Excluded,
    ) -> Result<Self, PricingError> {
        // Markets, numbered as first met in household-key order, with the
        // market of each counted employee (`None`: the ZIP has no priced
        // area).
        order.retain(|k| areas.get(k.row()).is_some_and(Option::is_some));
        let mut built = Built::new(ctx, order.len());
        let placed: Vec<Option<usize>> = order
            .iter()
            .map(|k| {
                built
                    .places
                    .place(areas.get(k.row()).copied().flatten().flatten())
            })
            .collect();
        let settled = built.places.settle(ctx.fallback_zip)?;
        for (keyed, market) in order.iter().zip(placed) {
            let Some(m) = members.get(keyed.row()) else {
                continue;
            };
            let market = market.unwrap_or_else(|| {
                built.stats.unmapped += 1;
                settled.stand_in
            });
            let Some((h, _)) = built.push(keyed.row(), m, settled.group.default_child_age) else {
                continue;
            };
            h.market = market;
            keyed.write_key(&mut h.key);
            h.keyed_by_external_id = m.external_id.as_deref().is_some_and(|id| !id.is_empty());
        }
        Ok(Self::assemble(members, ctx, built, settled, excluded))
    }

    /// Counted employees.
    #[must_use]
    pub fn employees(&self) -> u64 {
        u64::try_from(self.households.len()).unwrap_or(u64::MAX)
    }

    /// Expected covered lives rounded half away from zero (the reported
    /// `coveredLives`).
    #[must_use]
    pub fn covered_lives(&self) -> u64 {
        u64::try_from((self.lives_e8 + E8 / 2) / E8).unwrap_or(0)
    }

    /// The market of a household.
    #[must_use]
    pub fn market_of(&self, h: &Household) -> &Market {
        self.markets
            .get(h.market)
            .or_else(|| self.markets.first())
            .unwrap_or_else(|| unreachable_market())
    }

    /// The primary market.
    #[must_use]
    pub fn primary(&self) -> &Market {
        self.markets
            .get(self.primary_market)
            .or_else(|| self.markets.first())
            .unwrap_or_else(|| unreachable_market())
    }
}

#[expect(
    clippy::panic,
    reason = "a rated census always holds its primary market"
)]
fn unreachable_market() -> &'static Market {
    panic!("rated census without markets")
}

fn pct_bp(bp: u32) -> String {
    if bp.is_multiple_of(100) {
        format!("{}%", bp / 100)
    } else {
        format!("{}.{:02}%", bp / 100, bp % 100)
    }
}

fn children_per_household(two_bp: u32) -> String {
    // 1 + share of two-child households, e.g. 1.8.
    let tenths = 10 + (two_bp + 500) / 1000;
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// Composition weights × 1e8 in [`COMPOSITIONS`] order.
#[must_use]
pub fn composition_weights_e8(g: &GroupParams) -> [i128; 6] {
    let [eo, es, ec, fa] = g.household_mix_bp.map(i128::from);
    let two = i128::from(g.two_children_share_bp);
    let one = 10_000 - two;
    [
        eo * 10_000,
        es * 10_000,
        ec * one,
        ec * two,
        fa * one,
        fa * two,
    ]
}

/// Apportions `unknown` households across tiers by the mix, largest
/// remainder, ties to the earlier tier.
fn apportion(known: [u64; 4], unknown: u64, mix_bp: [u32; 4]) -> [u64; 4] {
    let quotas = mix_bp.map(|bp| u128::from(unknown) * u128::from(bp));
    let mut counts = quotas.map(|q| u64::try_from(q / 10_000).unwrap_or(0));
    let assigned: u64 = counts.iter().sum();
    let mut order: Vec<usize> = (0..4).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(quotas.get(i).map_or(0, |q| q % 10_000)));
    for &i in order
        .iter()
        .take(usize::try_from(unknown - assigned).unwrap_or(0))
    {
        if let Some(c) = counts.get_mut(i) {
            *c += 1;
        }
    }
    let mut out = known;
    for (o, c) in out.iter_mut().zip(counts) {
        *o += c;
    }
    out
}

#[cfg(test)]
pub(crate) mod tests;
