//! The people of one counted employee's household (pricing model section
//! 2): ages at the plan-year start, places, the ACA charge rule for
//! children, and the counts behind the census's assumption lines.

use time::{Date, Month};

use crate::census::{CensusMember, Relationship};
use crate::household::{People, Person, Place, Shape, Tier};

/// How often each default or assumption was applied while shaping
/// households.
#[derive(Debug, Default)]
pub(super) struct Stats {
    pub(super) untyped: usize,
    pub(super) age_only: usize,
    pub(super) undated_dependents: usize,
    pub(super) born_after_start: usize,
    pub(super) uncharged_children: usize,
    pub(super) unmapped: usize,
}

impl Stats {
    /// Replaces the counts `before` contributed with those `after` does
    /// (a household shaped again).
    pub(super) fn replace(&mut self, before: &Self, after: &Self) {
        for (total, (b, a)) in [
            (&mut self.untyped, (before.untyped, after.untyped)),
            (&mut self.age_only, (before.age_only, after.age_only)),
            (
                &mut self.undated_dependents,
                (before.undated_dependents, after.undated_dependents),
            ),
            (
                &mut self.born_after_start,
                (before.born_after_start, after.born_after_start),
            ),
            (
                &mut self.uncharged_children,
                (before.uncharged_children, after.uncharged_children),
            ),
            (&mut self.unmapped, (before.unmapped, after.unmapped)),
        ] {
            *total = total.saturating_sub(b) + a;
        }
    }
}

/// Whole years at the plan-year start ([`crate::census::age_on`] for every
/// person), with the start's month and day turned once into a day of the
/// year: a birthday after them is a day of its year past the last day on
/// or before them, in a leap year or a common one.
#[derive(Debug, Clone, Copy)]
pub(super) struct AgeClock {
    start: Date,
    year: i32,
    month: Month,
    day: u8,
    /// The last day of a common year and of a leap year on or before the
    /// start's month and day (a common year's Feb 28 for Feb 29).
    last: Option<(u16, u16)>,
}

impl AgeClock {
    pub(super) fn new(start: Date) -> Self {
        let (year, month, day) = start.to_calendar_date();
        let common = Date::from_calendar_date(2025, month, day.min(month.length(2025)));
        let leap = Date::from_calendar_date(2024, month, day);
        Self {
            start,
            year,
            month,
            day,
            last: common
                .ok()
                .zip(leap.ok())
                .map(|(c, l)| (c.ordinal(), l.ordinal())),
        }
    }

    /// [`crate::census::age_on`]`(dob, start)`.
    fn age(self, dob: Date) -> u32 {
        let mut years = self.year - dob.year();
        let after = match self.last {
            Some((common, leap)) => {
                let last = if common == leap || !time::util::is_leap_year(dob.year()) {
                    common
                } else {
                    leap
                };
                dob.ordinal() > last
            }
            None => (self.month, self.day) < (dob.month(), dob.day()),
        };
        if after {
            years -= 1;
        }
        u32::try_from(years).unwrap_or(0)
    }

    /// A person's age: from `dob`, else `age`, else `default`, counting
    /// each fallback in `stats`.
    fn person(self, dob: Option<Date>, age: Option<u32>, default: u32, stats: &mut Stats) -> u32 {
        match (dob, age) {
            (Some(d), _) => {
                if d > self.start {
                    stats.born_after_start += 1;
                }
                self.age(d)
            }
            (None, Some(a)) => {
                stats.age_only += 1;
                a
            }
            (None, None) => {
                stats.undated_dependents += 1;
                default
            }
        }
    }
}

/// Most dependents shaped without a heap buffer; a validated census never
/// has more.
const INLINE_DEPENDENTS: usize = crate::census::MAX_DEPENDENTS;

/// What [`shape_into`] says of a household.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shaped {
    /// The tier and number of people of a known household, `None` for an
    /// unknown one.
    pub(super) known: Option<(Tier, usize)>,
    /// Whether the default child age rated someone (a modelled child, or
    /// a child or other dependent without a date of birth or age).
    pub(super) child_age_used: bool,
}

/// Writes the household of a counted employee into `shape`, in place (the
/// census's households are written where they are stored, not copied
/// there), `child_age` being the group's default child age.
pub(super) fn shape_into(
    shape: &mut Shape,
    m: &CensusMember,
    clock: AgeClock,
    child_age: u32,
    stats: &mut Stats,
) -> Shaped {
    if m.employment_type.is_none() {
        stats.untyped += 1;
    }
    let employee_age = clock.person(m.dob, m.age, 0, stats);
    let employee = Person {
        age: employee_age,
        place: Place::Employee,
        charged: true,
    };
    let Some(deps) = &m.dependents else {
        let child = |n| Person {
            age: child_age,
            place: Place::ModelledChild(n),
            charged: true,
        };
        *shape = Shape::Unknown {
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
        return Shaped {
            known: None,
            child_age_used: true,
        };
    };
    *shape = Shape::Known {
        tier: Tier::EmployeeOnly,
        people: People::new(employee),
    };
    let Shape::Known { tier, people } = shape else {
        return Shaped {
            known: None,
            child_age_used: false,
        };
    };
    // Other dependents as (age, input position).
    let mut inline = [(0u32, 0usize); INLINE_DEPENDENTS];
    let mut spilled: Vec<(u32, usize)> = Vec::new();
    let mut count = 0;
    let mut has_partner = false;
    let mut child_age_used = false;
    for (i, d) in deps.iter().enumerate() {
        if d.relationship.is_partner() && !has_partner {
            has_partner = true;
            let a = clock.person(d.dob, d.age, employee_age, stats);
            people.push(Person {
                age: a,
                place: Place::Spouse,
                charged: true,
            });
        } else {
            let default =
                if d.relationship == Relationship::Child || d.relationship == Relationship::Other {
                    child_age_used |= d.dob.is_none() && d.age.is_none();
                    child_age
                } else {
                    employee_age
                };
            let other = (clock.person(d.dob, d.age, default, stats), i);
            match inline.get_mut(count) {
                Some(slot) if spilled.is_empty() => *slot = other,
                _ => {
                    if spilled.is_empty() {
                        spilled.extend_from_slice(&inline);
                    }
                    spilled.push(other);
                }
            }
            count += 1;
        }
    }
    let others = if spilled.is_empty() {
        inline.get_mut(..count).unwrap_or_default()
    } else {
        spilled.as_mut_slice()
    };
    // Other dependents by age descending, then input order.
    if others.len() > 1 {
        others.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    }
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
    *tier = Tier::from_parts(has_partner, !others.is_empty());
    Shaped {
        known: Some((*tier, people.len())),
        child_age_used,
    }
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;
    use crate::census::age_on;
    use crate::household::tests::dep;
    use crate::rate_card::tests::card;

    #[test]
    fn the_clock_agrees_with_age_on() {
        for start in [
            date!(2026 - 01 - 01),
            date!(2026 - 01 - 31),
            date!(2026 - 02 - 28),
            date!(2024 - 02 - 28),
            date!(2024 - 02 - 29),
            date!(2024 - 03 - 01),
            date!(2025 - 03 - 01),
            date!(2026 - 07 - 15),
            date!(2024 - 12 - 31),
            date!(2026 - 12 - 31),
        ] {
            let clock = AgeClock::new(start);
            let mut dob = date!(1895 - 01 - 01);
            while dob < date!(2027 - 03 - 10) {
                assert_eq!(clock.age(dob), age_on(dob, start), "{dob} on {start}");
                dob = dob.next_day().unwrap();
            }
        }
    }

    #[test]
    fn more_dependents_than_the_inline_buffer_are_all_shaped() {
        let g = card().group_params(None, None).unwrap();
        let mut m = CensusMember::new("E1", date!(1980 - 01 - 01), "94103");
        m.dependents = Some((0..9).map(|i| dep(Relationship::Child, i * 3)).collect());
        let mut stats = Stats::default();
        let mut shape = Shape::Unknown {
            people: [Person {
                age: 0,
                place: Place::Employee,
                charged: false,
            }; 4],
        };
        let shaped = shape_into(
            &mut shape,
            &m,
            AgeClock::new(date!(2026 - 01 - 01)),
            g.default_child_age,
            &mut stats,
        );
        let Shape::Known { tier, people } = shape else {
            panic!("known household expected")
        };
        assert_eq!(tier, Tier::EmployeeChildren);
        assert_eq!(
            shaped,
            Shaped {
                known: Some((tier, 7)),
                child_age_used: false
            }
        );
        // Inline storage holds the employee and six dependents: the oldest.
        let ages: Vec<u32> = people.iter().map(|p| p.age).collect();
        assert_eq!(ages, [46, 24, 21, 18, 15, 12, 9]);
        // Every child under 21 beyond the three oldest is counted.
        assert_eq!(stats.uncharged_children, 4);
        assert_eq!(stats.age_only, 9);
    }
}
