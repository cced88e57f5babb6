//! The last step of normalising a census: its counts, expected covered
//! lives, reported tiers and assumption lines, from its households.

use crate::census::CensusMember;
use crate::household::shape::Stats;
use crate::household::{
    COMPOSITIONS, CensusContext, E8, Excluded, Household, RatedCensus, Tier, apportion,
    children_per_household, composition_weights_e8, pct_bp, stand_in,
};
use crate::rate_card::{GroupParams, Market};

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

/// A normalised census's households and what was found shaping them.
pub(super) struct Parts {
    pub(super) households: Vec<Household>,
    pub(super) markets: Vec<Market>,
    pub(super) primary_market: usize,
    /// The market of employees whose ZIP has none.
    pub(super) stand_in: usize,
    pub(super) group: GroupParams,
    pub(super) stats: Stats,
    pub(super) tally: Tally,
    pub(super) excluded: Excluded,
}

impl RatedCensus {
    /// The rated census of `members` from its households.
    pub(super) fn assemble(members: &[CensusMember], ctx: CensusContext<'_>, parts: Parts) -> Self {
        let Parts {
            households,
            markets,
            primary_market,
            stand_in,
            group,
            stats,
            tally:
                Tally {
                    known_tiers,
                    unknown,
                    deps,
                },
            excluded:
                Excluded {
                    contractors: excluded_contractors,
                    terminated: excluded_terminated,
                },
        } = parts;
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
