//! The census as the engine sees it (pricing model section 2): counted
//! employees grouped into households with rated people, stream keys, tiers,
//! covered lives and the disclosed household mix for unknown households.

use std::collections::HashMap;

use serde::Serialize;
use sha2::{Digest, Sha256};
use time::Date;

use crate::census::{CensusMember, CensusRules, Relationship, age_on, validate_member};
use crate::error::PricingError;
use crate::rate_card::{GroupParams, Market, RateCard};

/// Fixed-point scale of expected (mix-weighted) quantities: 1e-8, the
/// product of two basis-point weights.
pub const E8: i128 = 100_000_000;

/// The four household tiers, in the specification's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Tier {
    /// Employee only.
    EmployeeOnly,
    /// Employee and spouse or domestic partner.
    EmployeeSpouse,
    /// Employee and children.
    EmployeeChildren,
    /// Employee, spouse and children.
    Family,
}

impl Tier {
    /// All tiers in order.
    pub const ALL: [Self; 4] = [
        Self::EmployeeOnly,
        Self::EmployeeSpouse,
        Self::EmployeeChildren,
        Self::Family,
    ];

    /// Index 0..4.
    #[must_use]
    pub const fn index(self) -> usize {
        match self {
            Self::EmployeeOnly => 0,
            Self::EmployeeSpouse => 1,
            Self::EmployeeChildren => 2,
            Self::Family => 3,
        }
    }

    /// camelCase wire label.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::EmployeeOnly => "employeeOnly",
            Self::EmployeeSpouse => "employeeSpouse",
            Self::EmployeeChildren => "employeeChildren",
            Self::Family => "family",
        }
    }

    fn from_parts(partner: bool, children: bool) -> Self {
        match (partner, children) {
            (false, false) => Self::EmployeeOnly,
            (true, false) => Self::EmployeeSpouse,
            (false, true) => Self::EmployeeChildren,
            (true, true) => Self::Family,
        }
    }
}

/// A person's place in a household; part of the stream key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Place {
    /// The employee (`e`).
    Employee,
    /// The spouse or domestic partner (`s`).
    Spouse,
    /// Another dependent, by age descending then input order (`c1`, `c2`, …).
    Child(u8),
    /// The modelled spouse of an unknown household (`ms`).
    ModelledSpouse,
    /// A modelled child of an unknown household (`mc1`, `mc2`).
    ModelledChild(u8),
}

impl Place {
    /// The label used in the stream key.
    #[must_use]
    pub fn label(self) -> String {
        match self {
            Self::Employee => "e".to_owned(),
            Self::Spouse => "s".to_owned(),
            Self::Child(n) => format!("c{n}"),
            Self::ModelledSpouse => "ms".to_owned(),
            Self::ModelledChild(n) => format!("mc{n}"),
        }
    }
}

/// A rated person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Person {
    /// Whole years at the plan-year start.
    pub age: u32,
    /// Place in the household.
    pub place: Place,
    /// Whether the person is charged a premium (the ACA rule charges only
    /// the three oldest children under 21).
    pub charged: bool,
}

/// Most people in one household: the employee and six dependents.
pub const MAX_PEOPLE: usize = 1 + crate::census::MAX_DEPENDENTS;

/// The people of a known household, stored inline (no allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct People {
    len: u8,
    items: [Person; MAX_PEOPLE],
}

impl People {
    fn new(employee: Person) -> Self {
        Self {
            len: 1,
            items: [employee; MAX_PEOPLE],
        }
    }

    /// Adds a person; a validated census never exceeds [`MAX_PEOPLE`].
    fn push(&mut self, p: Person) {
        if let Some(slot) = self.items.get_mut(usize::from(self.len)) {
            *slot = p;
            self.len += 1;
        }
    }

    /// The people as a slice, employee first.
    #[must_use]
    pub fn as_slice(&self) -> &[Person] {
        self.items.get(..usize::from(self.len)).unwrap_or_default()
    }
}

impl std::ops::Deref for People {
    type Target = [Person];

    fn deref(&self) -> &[Person] {
        self.as_slice()
    }
}

impl Serialize for People {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

/// The six modelled compositions of an unknown household, in the fixed
/// order the engine sums them: EO, ES, EC with 1 child, EC with 2, family
/// with 1 child, family with 2.
pub const COMPOSITIONS: [(Tier, usize); 6] = [
    (Tier::EmployeeOnly, 0),
    (Tier::EmployeeSpouse, 0),
    (Tier::EmployeeChildren, 1),
    (Tier::EmployeeChildren, 2),
    (Tier::Family, 1),
    (Tier::Family, 2),
];

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

/// Rules across rows: a repeated `external_id` or email (case-insensitive)
/// is an error on the later row, and an employee born after the plan-year
/// start cannot be priced.
fn census_wide_errors(members: &[CensusMember], start: Date) -> Vec<crate::error::FieldError> {
    use crate::error::FieldError;
    let mut errs = Vec::new();
    let mut ids: HashMap<&str, usize> = HashMap::with_capacity(members.len());
    let mut emails: HashMap<String, usize> = HashMap::new();
    for (i, m) in members.iter().enumerate() {
        if let Some(id) = m.external_id.as_deref()
            && let Some(first) = ids.insert(id, i)
        {
            errs.push(FieldError::at(
                i,
                format!("census[{i}].external_id"),
                format!("duplicates row {first}"),
            ));
        }
        if let Some(email) = m.email.as_deref()
            && let Some(first) = emails.insert(email.to_lowercase(), i)
        {
            errs.push(FieldError::at(
                i,
                format!("census[{i}].email"),
                format!("duplicates row {first}"),
            ));
        }
        if m.dob.is_some_and(|d| d > start) {
            errs.push(FieldError::at(
                i,
                format!("census[{i}].dob"),
                format!(
                    "is after the plan-year start ({})",
                    crate::census::date_opt::format(start)
                ),
            ));
        }
    }
    errs
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

/// Household keys `{key}#{occurrence}` for every row (pricing model section 5).
///
/// The key is the `external_id` when present, else the lowercased email,
/// else the hex SHA-256 of the canonical JSON of the record's non-rating
/// fields. Records sharing a key are numbered in the order of their whole
/// canonical JSON, so row order never matters.
#[must_use]
pub fn household_keys(members: &[CensusMember]) -> Vec<String> {
    let mut out = vec![String::new(); members.len()];
    for (key, row) in keyed_rows(members) {
        if let Some(slot) = out.get_mut(row) {
            *slot = key;
        }
    }
    out
}

/// Every row with its household key, in canonical order: by base key, then
/// occurrence. One sort; no row order leaks into the result.
fn keyed_rows(members: &[CensusMember]) -> Vec<(String, usize)> {
    let mut rows: Vec<(String, usize)> = members.iter().map(base_key).zip(0..).collect();
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut start = 0;
    while start < rows.len() {
        let base = rows.get(start).map(|r| r.0.clone()).unwrap_or_default();
        let end = rows
            .iter()
            .skip(start)
            .position(|r| r.0 != base)
            .map_or(rows.len(), |n| start + n);
        if let Some(group) = rows.get_mut(start..end) {
            if group.len() > 1 {
                group.sort_by_cached_key(|(_, row)| {
                    (
                        members.get(*row).map(canonical_json).unwrap_or_default(),
                        *row,
                    )
                });
            }
            for (n, (key, _)) in group.iter_mut().enumerate() {
                key.push('#');
                key.push_str(&n.to_string());
            }
        }
        start = end;
    }
    rows
}

fn base_key(m: &CensusMember) -> String {
    if let Some(id) = m.external_id.as_deref().filter(|s| !s.is_empty()) {
        let mut key = String::with_capacity(id.len() + 3);
        key.push_str(id);
        return key;
    }
    if let Some(email) = m.email.as_deref().filter(|s| !s.is_empty()) {
        return email.to_lowercase();
    }
    // Names and employment fields only: never dob, age, ZIP, sex or dependents.
    let identity = CensusMember {
        external_id: None,
        first_name: m.first_name.clone(),
        last_name: m.last_name.clone(),
        email: None,
        dob: None,
        age: None,
        zip: String::new(),
        sex_at_birth: None,
        employment_type: m.employment_type,
        hire_date: m.hire_date,
        status: m.status,
        dependents: None,
    };
    let mut value = serde_json::to_value(&identity).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("zip");
    }
    hex(&Sha256::digest(canonical(&value).as_bytes()))
}

/// Canonical JSON of a record: snake_case keys, absent fields omitted, keys
/// sorted, no whitespace.
#[must_use]
pub fn canonical_json(m: &CensusMember) -> String {
    serde_json::to_value(m)
        .map(|v| canonical(&v))
        .unwrap_or_default()
}

/// Serializes a JSON value with object keys sorted explicitly, so the
/// result does not depend on how `serde_json` orders maps.
fn canonical(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<(&String, &serde_json::Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let body: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", serde_json::Value::from(k.as_str()), canonical(v)))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        serde_json::Value::Array(items) => {
            let body: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", body.join(","))
        }
        other => other.to_string(),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;
    use crate::census::{Dependent, EmploymentType, MemberStatus};
    use crate::rate_card::tests::card;

    const START: Date = date!(2026 - 01 - 01);

    fn ctx(card: &RateCard) -> CensusContext<'_> {
        CensusContext {
            card,
            plan_year_start: START,
            partner: None,
            rules: CensusRules { require_dob: false },
            fallback_zip: None,
        }
    }

    fn dep(rel: Relationship, age: u32) -> Dependent {
        Dependent {
            relationship: rel,
            name: None,
            dob: None,
            age: Some(age),
            sex_at_birth: None,
        }
    }

    fn member(id: &str, deps: Option<Vec<Dependent>>) -> CensusMember {
        let mut m = CensusMember::new(id, date!(1986 - 03 - 10), "94103");
        m.dependents = deps;
        m
    }

    fn tier_of(deps: Vec<Dependent>) -> Tier {
        let c = card();
        let r = RatedCensus::build(&[member("E1", Some(deps))], ctx(&c)).unwrap();
        match &r.households[0].shape {
            Shape::Known { tier, .. } => *tier,
            Shape::Unknown { .. } => panic!("known household expected"),
        }
    }

    #[test]
    fn tiers_follow_dependents() {
        use Relationship::*;
        assert_eq!(tier_of(vec![]), Tier::EmployeeOnly);
        assert_eq!(tier_of(vec![dep(Spouse, 40)]), Tier::EmployeeSpouse);
        assert_eq!(
            tier_of(vec![dep(DomesticPartner, 40)]),
            Tier::EmployeeSpouse
        );
        assert_eq!(tier_of(vec![dep(Child, 4)]), Tier::EmployeeChildren);
        assert_eq!(tier_of(vec![dep(Other, 4)]), Tier::EmployeeChildren);
        assert_eq!(tier_of(vec![dep(Spouse, 40), dep(Child, 4)]), Tier::Family);
    }

    #[test]
    fn only_the_three_oldest_children_under_21_are_charged() {
        use Relationship::*;
        let c = card();
        let deps = vec![
            dep(Child, 3),
            dep(Child, 22),
            dep(Child, 9),
            dep(Child, 12),
            dep(Child, 9),
            dep(Spouse, 41),
        ];
        let r = RatedCensus::build(&[member("E1", Some(deps))], ctx(&c)).unwrap();
        let Shape::Known { people, .. } = &r.households[0].shape else {
            panic!()
        };
        let summary: Vec<(String, u32, bool)> = people
            .iter()
            .map(|p| (p.place.label(), p.age, p.charged))
            .collect();
        let expect = [
            ("e", 39, true),
            ("s", 41, true),
            ("c1", 22, true),
            ("c2", 12, true),
            ("c3", 9, true),
            ("c4", 9, true),
            ("c5", 3, false),
        ];
        let expect: Vec<(String, u32, bool)> = expect
            .iter()
            .map(|(p, a, c)| ((*p).to_owned(), *a, *c))
            .collect();
        assert_eq!(summary, expect);
        assert!(
            r.assumptions
                .iter()
                .any(|a| a.contains("1 child is not charged"))
        );
    }

    #[test]
    fn counted_employees_lives_and_apportioned_tiers() {
        let c = card();
        let mut contractor = member("C1", Some(vec![]));
        contractor.employment_type = Some(EmploymentType::Contractor);
        let mut gone = member("T1", Some(vec![]));
        gone.status = Some(MemberStatus::Terminated);
        let census = vec![
            member("E1", Some(vec![dep(Relationship::Spouse, 30)])),
            member("E2", None),
            member("E3", None),
            contractor,
            gone,
        ];
        let r = RatedCensus::build(&census, ctx(&c)).unwrap();
        assert_eq!(r.employees(), 3);
        assert_eq!((r.excluded_contractors, r.excluded_terminated), (1, 1));
        // 3 employees + 1 spouse + 2 × 0.89 expected dependents = 5.78.
        assert_eq!(r.lives_e8, 578_000_000);
        assert_eq!(r.covered_lives(), 6);
        // Two unknown households: quotas 1.1, 0.3, 0.2, 0.4 → 1, 0, 0, 1,
        // plus the known employee + spouse.
        assert_eq!(r.tiers, [1, 1, 0, 1]);
        assert_eq!(r.unknown_households, 2);
        assert!(
            r.assumptions
                .iter()
                .any(|a| a.contains("55% employee only"))
        );
        assert!(r.assumptions.iter().any(|a| a.contains("1.8 children")));
    }

    #[test]
    fn apportion_uses_largest_remainder_with_ties_to_the_earlier_tier() {
        assert_eq!(apportion([0; 4], 1, [5500, 1500, 1000, 2000]), [1, 0, 0, 0]);
        assert_eq!(apportion([0; 4], 3, [2500, 2500, 2500, 2500]), [1, 1, 1, 0]);
        assert_eq!(
            apportion([2, 0, 0, 0], 10, [5500, 1500, 1000, 2000]),
            // Quotas 5.5, 1.5, 1, 2: one left over; 0.5 ties go to employeeOnly.
            [8, 1, 1, 2]
        );
    }

    #[test]
    fn keys_are_stable_under_row_order_and_number_duplicates() {
        let a = member("E-001", Some(vec![]));
        let mut b = member("E-001", Some(vec![]));
        b.zip = "94110".to_owned();
        let mut anon = member("x", None);
        anon.external_id = None;
        anon.first_name = Some("Ada".to_owned());
        let k1 = household_keys(&[a.clone(), b.clone(), anon.clone()]);
        let k2 = household_keys(&[anon.clone(), b, a]);
        assert_eq!(k1[0], k2[2]);
        assert_eq!(k1[1], k2[1]);
        assert_eq!(k1[2], k2[0]);
        assert_ne!(k1[0], k1[1]);
        assert!(k1[0].starts_with("E-001#"));
        assert_eq!(k1[2].len(), 64 + 2);
        // A rating input does not change an anonymous record's key.
        let mut older = anon.clone();
        older.dob = Some(date!(1950 - 01 - 01));
        assert_eq!(household_keys(&[older])[0], household_keys(&[anon])[0]);
    }

    #[test]
    fn anonymous_keys_hash_the_sorted_canonical_json() {
        let mut m = member("x", None);
        m.external_id = None;
        m.first_name = Some("Ada".to_owned());
        m.last_name = Some("Lovelace".to_owned());
        m.employment_type = Some(EmploymentType::FullTime);
        // Pinned: SHA-256 of
        // {"employment_type":"full_time","first_name":"Ada","last_name":"Lovelace"}
        let text = r#"{"employment_type":"full_time","first_name":"Ada","last_name":"Lovelace"}"#;
        let expect = format!("{}#0", hex(&Sha256::digest(text.as_bytes())));
        assert_eq!(household_keys(&[m])[0], expect);
        assert_eq!(
            &expect[..16],
            "419c69061c5fe2f8",
            "the pinned digest of the canonical text above"
        );
    }

    #[test]
    fn email_keys_are_lowercased() {
        let mut m = member("x", None);
        m.external_id = None;
        m.email = Some("Ada@Example.COM".to_owned());
        assert_eq!(household_keys(&[m])[0], "ada@example.com#0");
    }

    #[test]
    fn errors_name_the_failing_case() {
        let c = card();
        let mut contractor = member("C1", Some(vec![]));
        contractor.employment_type = Some(EmploymentType::Contractor);
        assert_eq!(
            RatedCensus::build(&[contractor], ctx(&c)).unwrap_err(),
            PricingError::CensusRequired
        );
        let mut far = member("E1", Some(vec![]));
        far.zip = "99999".to_owned();
        assert_eq!(
            RatedCensus::build(&[far.clone()], ctx(&c)).unwrap_err(),
            PricingError::MarketUnavailable
        );
        // With a company ZIP the member is rated there, and it is reported.
        let mut with_company = ctx(&c);
        with_company.fallback_zip = Some("10001");
        let r = RatedCensus::build(&[far], with_company).unwrap();
        assert_eq!(r.primary().area, "NY-01");
        assert!(
            r.assumptions
                .iter()
                .any(|a| a.contains("rated in area NY-01"))
        );
        let mut bad = member("E1", None);
        bad.zip = "abc".to_owned();
        assert!(matches!(
            RatedCensus::build(&[bad], ctx(&c)),
            Err(PricingError::InvalidCensus(d)) if d[0].field == "census[0].zip"
        ));
    }

    #[test]
    fn the_primary_area_has_the_most_employees() {
        let c = card();
        let mut ny = member("E3", Some(vec![]));
        ny.zip = "10001".to_owned();
        let census = vec![member("E1", Some(vec![])), ny.clone(), {
            let mut m = ny;
            m.external_id = Some("E4".to_owned());
            m
        }];
        let r = RatedCensus::build(&census, ctx(&c)).unwrap();
        assert_eq!(r.primary().area, "NY-01");
        assert_eq!(r.markets.len(), 2);
        assert!(r.group.source.ends_with("area:NY-01"));
    }
}
