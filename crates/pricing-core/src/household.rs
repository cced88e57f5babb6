//! The census as the engine sees it (pricing model section 2): counted
//! employees grouped into households with rated people, stream keys, tiers,
//! covered lives and the disclosed household mix for unknown households.

use serde::Serialize;
use time::Date;

use crate::census::{CensusMember, CensusRules, Relationship, age_on, validate_member};
use crate::error::PricingError;
use crate::rate_card::{GroupParams, Market, RateCard};

mod keys;
mod people;
mod rules;
mod stand_in;

pub(crate) use keys::keyed_rows;
pub use keys::{canonical_json, household_keys};
pub use people::{COMPOSITIONS, MAX_PEOPLE, People, Person, Place, Tier};
use rules::census_wide_errors;

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
    pub key: String,
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

impl RatedCensus {
    /// Normalises a census.
    ///
    /// # Errors
    /// [`PricingError::InvalidCensus`] when a row breaks a rule,
    /// [`PricingError::CensusRequired`] without a counted employee, and
    /// [`PricingError::MarketUnavailable`] when no ZIP has a priced market.
    pub fn build(members: &[CensusMember], ctx: CensusContext<'_>) -> Result<Self, PricingError> {
        let mut details: Vec<_> = members
            .iter()
            .enumerate()
            .flat_map(|(i, m)| validate_member("census", i, m, ctx.rules))
            .collect();
        details.extend(census_wide_errors(members, ctx.plan_year_start));
        if !details.is_empty() {
            details.sort_by_key(|d| d.index);
            return Err(PricingError::InvalidCensus(details));
        }
        let card = ctx.card;
        let mut excluded_contractors = 0;
        let mut excluded_terminated = 0;
        for m in members {
            if m.is_counted() {
            } else if m.status == Some(crate::census::MemberStatus::Terminated) {
                excluded_terminated += 1;
            } else {
                excluded_contractors += 1;
            }
        }
        if excluded_contractors + excluded_terminated == members.len() {
            return Err(PricingError::CensusRequired);
        }

        // Areas: each member's own, when the card prices it. `slots` maps a
        // card area to its index in `markets` (or marks it unpriced).
        const UNSEEN: usize = usize::MAX;
        const UNPRICED: usize = usize::MAX - 1;
        let mut slots = vec![UNSEEN; card.area_count()];
        let mut markets: Vec<Market> = Vec::new();
        let mut area_of = |zip: &str| -> Option<usize> {
            let area = card.area_for_zip(zip)?;
            let slot = slots.get_mut(area.index())?;
            if *slot == UNSEEN {
                *slot = match card.market(area, ctx.partner) {
                    Some(m) => {
                        markets.push(m);
                        markets.len() - 1
                    }
                    None => UNPRICED,
                };
            }
            (*slot != UNPRICED).then_some(*slot)
        };
        // Counted employees in canonical household-key order.
        let rows: Vec<(String, usize, Option<usize>)> = keyed_rows(members)
            .into_iter()
            .filter_map(|(key, row)| {
                let m = members.get(row).filter(|m| m.is_counted())?;
                Some((key, row, area_of(&m.zip)))
            })
            .collect();
        let fallback = ctx.fallback_zip.and_then(&mut area_of);
        let mut counts = vec![0usize; markets.len()];
        for (_, _, a) in &rows {
            if let Some(c) = a.and_then(|a| counts.get_mut(a)) {
                *c += 1;
            }
        }
        // Most counted employees; ties go to the smallest area id.
        let primary_market = counts
            .iter()
            .zip(&markets)
            .enumerate()
            .filter(|(_, (n, _))| **n > 0)
            .min_by(|(_, (na, ma)), (_, (nb, mb))| nb.cmp(na).then(ma.area.cmp(&mb.area)))
            .map(|(i, _)| i)
            .or(fallback)
            .ok_or(PricingError::MarketUnavailable)?;
        let primary_area = markets
            .get(primary_market)
            .and_then(|m| card.area_for_id(&m.area));
        let group = card
            .group_params(primary_area, ctx.partner)
            .map_err(|e| PricingError::RateCard(e.to_string()))?;

        let mut assumptions = Vec::new();
        let stand_in = fallback.unwrap_or(primary_market);
        let mut households = Vec::with_capacity(rows.len());
        let mut stats = Stats::default();
        for (key, row, area) in rows {
            let Some(m) = members.get(row) else { continue };
            let market = area.unwrap_or_else(|| {
                stats.unmapped += 1;
                stand_in
            });
            households.push(Household {
                key,
                keyed_by_external_id: m.external_id.as_deref().is_some_and(|id| !id.is_empty()),
                row,
                market,
                shape: shape_of(m, ctx.plan_year_start, &group, &mut stats),
            });
        }

        let mut known_tiers = [0u64; 4];
        let mut unknown = 0u64;
        let mut deps = 0u64;
        for h in &households {
            match &h.shape {
                Shape::Known { tier, people } => {
                    if let Some(slot) = known_tiers.get_mut(tier.index()) {
                        *slot += 1;
                    }
                    deps += u64::try_from(people.len().saturating_sub(1)).unwrap_or(0);
                }
                Shape::Unknown { .. } => unknown += 1,
            }
        }
        let weights = composition_weights_e8(&group);
        let expected_deps_e8: i128 = COMPOSITIONS
            .iter()
            .zip(weights)
            .map(|(&(tier, kids), w)| {
                let partner = i128::from(matches!(tier, Tier::EmployeeSpouse | Tier::Family));
                w * (partner + i128::try_from(kids).unwrap_or(0))
            })
            .sum();
        let employees = i128::try_from(households.len()).unwrap_or(0);
        let lives_e8 = (employees + i128::from(deps)) * E8 + i128::from(unknown) * expected_deps_e8;
        let tiers = apportion(known_tiers, unknown, group.household_mix_bp);

        let people_word = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            }
        };
        if excluded_contractors > 0 {
            assumptions.push(format!(
                "{} excluded from pricing.",
                people_word(excluded_contractors, "contractor is", "contractors are")
            ));
        }
        if excluded_terminated > 0 {
            assumptions.push(format!(
                "{} excluded from pricing.",
                people_word(
                    excluded_terminated,
                    "terminated member is",
                    "terminated members are"
                )
            ));
        }
        if stats.untyped > 0 {
            assumptions.push(format!(
                "{} without an employment type counted as full time.",
                people_word(stats.untyped, "employee", "employees")
            ));
        }
        if stats.age_only > 0 {
            assumptions.push(format!(
                "Ages taken from `age` (no date of birth) for {}.",
                people_word(stats.age_only, "person", "people")
            ));
        }
        if stats.undated_dependents > 0 {
            assumptions.push(format!(
                "{} without a date of birth or age rated at the default age (spouse: the employee's age; child: {}).",
                people_word(stats.undated_dependents, "dependent", "dependents"),
                group.default_child_age
            ));
        }
        if stats.born_after_start > 0 {
            assumptions.push(format!(
                "{} born after the plan-year start rated at age 0.",
                people_word(stats.born_after_start, "person", "people")
            ));
        }
        if stats.uncharged_children > 0 {
            assumptions.push(format!(
                "{} not charged: only the three oldest children under 21 of a household are charged (ACA small-group rule).",
                people_word(stats.uncharged_children, "child is", "children are")
            ));
        }
        if unknown > 0 {
            let [eo, es, ec, fa] = group.household_mix_bp;
            assumptions.push(format!(
                "{} without submitted dependents priced at the expected cost of the normalized small-group household mix ({} employee only, {} employee + spouse, {} employee + children, {} family; {} children per household with children; modelled spouse at the employee's age, children aged {}).",
                people_word(usize::try_from(unknown).unwrap_or(0), "household", "households"),
                pct_bp(eo),
                pct_bp(es),
                pct_bp(ec),
                pct_bp(fa),
                children_per_household(group.two_children_share_bp),
                group.default_child_age
            ));
        }
        if stats.unmapped > 0 {
            assumptions.push(format!(
                "{} whose ZIP has no priced rating area rated in area {}.",
                people_word(stats.unmapped, "employee", "employees"),
                markets.get(stand_in).map_or("", |m| m.area.as_str())
            ));
        }
        assumptions.extend(stand_in::stand_in_assumptions(
            card,
            &markets,
            &households,
            members,
            ctx.fallback_zip,
        ));

        Ok(Self {
            card_version: card.version().to_owned(),
            plan_year_start: ctx.plan_year_start,
            households,
            markets,
            group,
            primary_market,
            received: members.len(),
            excluded_contractors,
            excluded_terminated,
            submitted_dependents: deps,
            unknown_households: unknown,
            known_tiers,
            tiers,
            lives_e8,
            composition_weights_e8: weights,
            assumptions,
        })
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

#[derive(Default)]
struct Stats {
    untyped: usize,
    age_only: usize,
    undated_dependents: usize,
    born_after_start: usize,
    uncharged_children: usize,
    unmapped: usize,
}

fn shape_of(m: &CensusMember, start: Date, g: &GroupParams, stats: &mut Stats) -> Shape {
    if m.employment_type.is_none() {
        stats.untyped += 1;
    }
    let age =
        |dob: Option<Date>, age: Option<u32>, default: u32, stats: &mut Stats| match (dob, age) {
            (Some(d), _) => {
                if d > start {
                    stats.born_after_start += 1;
                }
                age_on(d, start)
            }
            (None, Some(a)) => {
                stats.age_only += 1;
                a
            }
            (None, None) => {
                stats.undated_dependents += 1;
                default
            }
        };
    let employee_age = age(m.dob, m.age, 0, stats);
    let employee = Person {
        age: employee_age,
        place: Place::Employee,
        charged: true,
    };
    let Some(deps) = &m.dependents else {
        let child = |n| Person {
            age: g.default_child_age,
            place: Place::ModelledChild(n),
            charged: true,
        };
        return Shape::Unknown {
            people: [
                employee,
                Person {
                    age: employee_age,
                    place: Place::ModelledSpouse,
                    charged: true,
                },
                child(1),
                child(2),
            ],
        };
    };
    let mut people = People::new(employee);
    let mut others: Vec<(u32, usize)> = Vec::new();
    let mut has_partner = false;
    for (i, d) in deps.iter().enumerate() {
        if d.relationship.is_partner() && !has_partner {
            has_partner = true;
            let a = age(d.dob, d.age, employee_age, stats);
            people.push(Person {
                age: a,
                place: Place::Spouse,
                charged: true,
            });
        } else {
            let default =
                if d.relationship == Relationship::Child || d.relationship == Relationship::Other {
                    g.default_child_age
                } else {
                    employee_age
                };
            others.push((age(d.dob, d.age, default, stats), i));
        }
    }
    // Other dependents by age descending, then input order.
    others.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut young_charged = 0;
    for (n, (a, _)) in others.iter().enumerate() {
        let charged = if *a >= 21 {
            true
        } else {
            young_charged += 1;
            young_charged <= 3
        };
        if !charged {
            stats.uncharged_children += 1;
        }
        people.push(Person {
            age: *a,
            place: Place::Child(u8::try_from(n + 1).unwrap_or(u8::MAX)),
            charged,
        });
    }
    Shape::Known {
        tier: Tier::from_parts(has_partner, !others.is_empty()),
        people,
    }
}

#[cfg(test)]
mod tests;
