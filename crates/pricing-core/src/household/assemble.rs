//! The last step of normalising a census: its counts, expected covered
//! lives, reported tiers and assumption lines, from its households.

use crate::census::CensusMember;
use crate::household::markets::{MarketSlots, Settled};
use crate::household::shape::{AgeClock, Stats, shape_into};
use crate::household::{
    COMPOSITIONS, CensusContext, E8, Excluded, Household, RatedCensus, Tier, apportion,
    children_per_household, composition_weights_e8, pct_bp, stand_in,
};

/// Known households by tier, unknown households, and submitted dependents.
#[derive(Debug, Default)]
pub(super) struct Tally {
    known_tiers: [u64; 4],
    unknown: u64,
    deps: u64,
}

impl Tally {
    /// Counts a household: a known one's tier and number of people, or
    /// `None` for an unknown one.
    pub(super) fn add(&mut self, known: Option<(Tier, usize)>) {
        match known {
            Some((tier, people)) => {
                if let Some(slot) = self.known_tiers.get_mut(tier.index()) {
                    *slot += 1;
                }
                self.deps += u64::try_from(people.saturating_sub(1)).unwrap_or(0);
            }
            None => self.unknown += 1,
        }
    }
}

/// A census's households as they are built, the markets they are placed
/// in, and what was found shaping them.
#[derive(Debug)]
pub(super) struct Built<'c> {
    pub(super) places: MarketSlots<'c>,
    pub(super) households: Vec<Household>,
    pub(super) stats: Stats,
    tally: Tally,
    pub(super) clock: AgeClock,
}

impl<'c> Built<'c> {
    /// Room for `rows` households of a census in `ctx`.
    pub(super) fn new(ctx: CensusContext<'c>, rows: usize) -> Self {
        Self {
            places: MarketSlots::new(ctx.card, ctx.partner),
            households: Vec::with_capacity(rows),
            stats: Stats::default(),
            tally: Tally::default(),
            clock: AgeClock::new(ctx.plan_year_start),
        }
    }

    /// Adds the household of the counted employee `m` on row `row`, shaped
    /// with `child_age` as the default child age, and counts it. It is
    /// written where it is stored: pushed as a template and filled in
    /// place. Returns it, its market and key still to be set, and whether
    /// the default child age rated someone in it.
    #[inline]
    pub(super) fn push(
        &mut self,
        row: usize,
        m: &CensusMember,
        child_age: u32,
    ) -> Option<(&mut Household, bool)> {
        self.households.push(Household::TEMPLATE);
        let h = self.households.last_mut()?;
        let shaped = shape_into(&mut h.shape, m, self.clock, child_age, &mut self.stats);
        self.tally.add(shaped.known);
        h.row = row;
        Some((h, shaped.child_age_used))
    }
}

impl RatedCensus {
    /// The rated census of `members` from its households, once they are
    /// all built and the census is `settled`.
    pub(super) fn assemble(
        members: &[CensusMember],
        ctx: CensusContext<'_>,
        built: Built<'_>,
        settled: Settled,
        excluded: Excluded,
    ) -> Self {
        let Built {
            places,
            households,
            stats,
            tally:
                Tally {
                    known_tiers,
                    unknown,
                    deps,
                },
            clock: _,
        } = built;
        let Settled {
            primary_market,
            group,
            stand_in,
        } = settled;
        let markets = places.into_markets();
        let Excluded {
            contractors: excluded_contractors,
            terminated: excluded_terminated,
        } = excluded;
        let card = ctx.card;
        let mut assumptions = Vec::new();
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

        // `n` people, with the noun for one or for many; `None` for none.
        let people = |n: usize, one: &str, many: &str| match n {
            0 => None,
            1 => Some(format!("1 {one}")),
            _ => Some(format!("{n} {many}")),
        };
        if let Some(p) = people(excluded_contractors, "contractor is", "contractors are") {
            assumptions.push(format!("{p} excluded from pricing."));
        }
        if let Some(p) = people(
            excluded_terminated,
            "terminated member is",
            "terminated members are",
        ) {
            assumptions.push(format!("{p} excluded from pricing."));
        }
        if let Some(p) = people(stats.untyped, "employee", "employees") {
            assumptions.push(format!(
                "{p} without an employment type counted as full time."
            ));
        }
        if let Some(p) = people(stats.age_only, "person", "people") {
            assumptions.push(format!("Ages taken from `age` (no date of birth) for {p}."));
        }
        if let Some(p) = people(stats.undated_dependents, "dependent", "dependents") {
            assumptions.push(format!(
                "{p} without a date of birth or age rated at the default age (spouse: the employee's age; child: {}).",
                group.default_child_age
            ));
        }
        if let Some(p) = people(stats.born_after_start, "person", "people") {
            assumptions.push(format!(
                "{p} born after the plan-year start rated at age 0."
            ));
        }
        if let Some(p) = people(stats.uncharged_children, "child is", "children are") {
            assumptions.push(format!(
                "{p} not charged: only the three oldest children under 21 of a household are charged (ACA small-group rule)."
            ));
        }
        let unknown_households = usize::try_from(unknown).unwrap_or(0);
        if let Some(p) = people(unknown_households, "household", "households") {
            let [eo, es, ec, fa] = group.household_mix_bp;
            assumptions.push(format!(
                "{p} without submitted dependents priced at the expected cost of the normalized small-group household mix ({} employee only, {} employee + spouse, {} employee + children, {} family; {} children per household with children; modelled spouse at the employee's age, children aged {}).",
                pct_bp(eo),
                pct_bp(es),
                pct_bp(ec),
                pct_bp(fa),
                children_per_household(group.two_children_share_bp),
                group.default_child_age
            ));
        }
        if let Some(p) = people(stats.unmapped, "employee", "employees") {
            assumptions.push(format!(
                "{p} whose ZIP has no priced rating area rated in area {}.",
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

        Self {
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
        }
    }
}
