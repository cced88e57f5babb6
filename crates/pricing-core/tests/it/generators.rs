//! Proptest generators of censuses and partner plans for the invariant
//! tests: members identified by external id, email or name only, unknown
//! households, dependents, contractors and terminated members, several
//! states; HSA plans within the IRS limits rated by PMPM or by tier.

use pricing_core::census::{MemberStatus, SexAtBirth};
use pricing_core::plan::TierRates;
use pricing_core::{CensusMember, Dependent, EmploymentType, PartnerPlan, Relationship};
use proptest::collection::vec;
use proptest::prelude::*;
use time::{Date, Duration};

use crate::support::*;

/// A date uniformly between Jan 1 of `from` and Dec 31 of `to`.
pub fn arb_date(from: i32, to: i32) -> impl Strategy<Value = Date> {
    let first = Date::from_ordinal_date(from, 1).unwrap_or(START);
    let last = Date::from_ordinal_date(to, 1)
        .map(|d| d + Duration::days(364))
        .unwrap_or(START);
    let days = (last - first).whole_days();
    (0..=days).prop_map(move |n| first + Duration::days(n))
}

fn arb_partner() -> impl Strategy<Value = Dependent> {
    (
        prop_oneof![
            3 => Just(Relationship::Spouse),
            1 => Just(Relationship::DomesticPartner)
        ],
        arb_date(1955, 2005),
    )
        .prop_map(|(rel, dob)| dependent(rel, dob))
}

fn arb_child() -> impl Strategy<Value = Dependent> {
    prop_oneof![
        6 => arb_date(1998, 2025).prop_map(|dob| dependent(Relationship::Child, dob)),
        1 => arb_date(1945, 2020).prop_map(|dob| dependent(Relationship::Other, dob)),
    ]
}

/// 0–6 dependents: an optional partner and up to five others, in any order.
pub fn arb_dependents() -> impl Strategy<Value = Vec<Dependent>> {
    (
        proptest::option::weighted(0.5, arb_partner()),
        prop_oneof![
            3 => Just(0usize),
            2 => 1usize..=2,
            1 => 3usize..=5,
        ],
    )
        .prop_flat_map(|(partner, kids)| {
            vec(arb_child(), kids).prop_map(move |children| {
                let mut all: Vec<Dependent> = partner.iter().cloned().collect();
                all.extend(children);
                all
            })
        })
        .prop_shuffle()
}

/// How a generated record is identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `external_id` `E-###`.
    ExternalId,
    /// A mixed-case email only.
    Email,
    /// Names only (keyed by the digest of its non-rating fields).
    Name,
}

/// The generated fields of one record; [`MemberSpec::build`] names it.
#[derive(Debug, Clone)]
pub struct MemberSpec {
    /// Date of birth.
    pub dob: Date,
    /// Index into [`ZIPS`].
    pub zip: usize,
    /// `None`: unknown household.
    pub dependents: Option<Vec<Dependent>>,
    /// Employment type.
    pub employment_type: Option<EmploymentType>,
    /// Status.
    pub status: Option<MemberStatus>,
    /// Identification.
    pub id_kind: IdKind,
    /// Sex at birth (never a rating input).
    pub sex: Option<SexAtBirth>,
}

impl MemberSpec {
    /// The census record of row `n` (its identity is unique per `n`).
    pub fn build(&self, n: usize) -> CensusMember {
        let zip = ZIPS.get(self.zip).copied().unwrap_or("94103");
        let mut m = CensusMember::new(&format!("E-{n:03}"), self.dob, zip);
        m.first_name = Some(format!("First{n}"));
        match self.id_kind {
            IdKind::ExternalId => {}
            IdKind::Email => {
                m.external_id = None;
                m.email = Some(format!("Worker.{n}@Example.COM"));
            }
            IdKind::Name => {
                m.external_id = None;
                m.last_name = Some("Anon".to_owned());
            }
        }
        m.dependents.clone_from(&self.dependents);
        m.employment_type = self.employment_type;
        m.status = self.status;
        m.sex_at_birth = self.sex;
        m
    }
}

/// One record. `unknown` allows absent `dependents`; `excluded` allows
/// contractors and terminated members; `emails` allows email-only and
/// name-only identities.
pub fn arb_member_spec(
    unknown: bool,
    excluded: bool,
    emails: bool,
) -> impl Strategy<Value = MemberSpec> {
    let deps = if unknown {
        prop_oneof![1 => Just(None), 3 => arb_dependents().prop_map(Some)].boxed()
    } else {
        arb_dependents().prop_map(Some).boxed()
    };
    let employment = if excluded {
        prop_oneof![
            6 => Just(None),
            3 => Just(Some(EmploymentType::FullTime)),
            1 => Just(Some(EmploymentType::PartTime)),
            1 => Just(Some(EmploymentType::Contractor)),
        ]
        .boxed()
    } else {
        prop_oneof![
            3 => Just(None),
            2 => Just(Some(EmploymentType::FullTime)),
            1 => Just(Some(EmploymentType::PartTime)),
        ]
        .boxed()
    };
    let status = if excluded {
        prop_oneof![
            8 => Just(None),
            2 => Just(Some(MemberStatus::Active)),
            1 => Just(Some(MemberStatus::Terminated)),
        ]
        .boxed()
    } else {
        prop_oneof![Just(None), Just(Some(MemberStatus::Active))].boxed()
    };
    let id_kind = if emails {
        prop_oneof![
            6 => Just(IdKind::ExternalId),
            1 => Just(IdKind::Email),
            1 => Just(IdKind::Name),
        ]
        .boxed()
    } else {
        Just(IdKind::ExternalId).boxed()
    };
    (
        arb_date(1960, 2008),
        0..ZIPS.len(),
        deps,
        employment,
        status,
        id_kind,
        proptest::option::of(prop_oneof![
            Just(SexAtBirth::Female),
            Just(SexAtBirth::Male),
            Just(SexAtBirth::Other)
        ]),
    )
        .prop_map(
            |(dob, zip, dependents, employment_type, status, id_kind, sex)| MemberSpec {
                dob,
                zip,
                dependents,
                employment_type,
                status,
                id_kind,
                sex,
            },
        )
}

/// Generator options of a census.
#[derive(Debug, Clone, Copy)]
pub struct CensusGen {
    /// Most records (at least one).
    pub max: usize,
    /// Unknown households allowed.
    pub unknown: bool,
    /// Contractors and terminated members allowed.
    pub excluded: bool,
    /// Email-only and name-only records allowed.
    pub emails: bool,
}

impl CensusGen {
    /// Everything allowed, up to `max` records.
    pub const fn mixed(max: usize) -> Self {
        Self {
            max,
            unknown: true,
            excluded: true,
            emails: true,
        }
    }

    /// Every household known (contractors and terminated still allowed).
    pub const fn known(max: usize) -> Self {
        Self {
            max,
            unknown: false,
            excluded: true,
            emails: true,
        }
    }
}

/// Record specs of a census: the first record is always a counted employee.
pub fn arb_specs(g: CensusGen) -> impl Strategy<Value = Vec<MemberSpec>> {
    vec(arb_member_spec(g.unknown, g.excluded, g.emails), 1..=g.max).prop_map(|mut specs| {
        if let Some(first) = specs.first_mut() {
            first.employment_type = None;
            first.status = None;
        }
        specs
    })
}

/// Builds the census of a list of specs (row `n` named by `n`).
pub fn build_census(specs: &[MemberSpec]) -> Vec<CensusMember> {
    specs.iter().enumerate().map(|(n, s)| s.build(n)).collect()
}

/// A generated census.
pub fn arb_census(g: CensusGen) -> impl Strategy<Value = Vec<CensusMember>> {
    arb_specs(g).prop_map(|specs| build_census(&specs))
}

// ---------------------------------------------------------------------------
// Partner plans.

/// How a generated partner plan is rated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanRates {
    /// `pmpm_cents`.
    Pmpm(i64),
    /// `monthly_rates_cents`.
    Tiers(TierRates),
}

/// A generated partner HSA plan design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanSpec {
    /// Individual deductible.
    pub deductible: i64,
    /// Individual out-of-pocket maximum.
    pub oop_individual: i64,
    /// Family out-of-pocket maximum.
    pub oop_family: i64,
    /// Coinsurance (absent: the engine assumes 20%).
    pub coinsurance_pct: Option<u32>,
    /// Rates.
    pub rates: PlanRates,
}

impl PlanSpec {
    /// The request's `plan`.
    pub fn plan(&self) -> PartnerPlan {
        let (pmpm, tiers) = match self.rates {
            PlanRates::Pmpm(p) => (Some(p), None),
            PlanRates::Tiers(t) => (None, Some(t)),
        };
        PartnerPlan {
            carrier: Some("Test Carrier".to_owned()),
            plan_name: Some("Test HSA PPO".to_owned()),
            plan_type: Some("PPO".to_owned()),
            network: Some("Broad".to_owned()),
            hsa_eligible: Some(true),
            deductible_individual_cents: Some(self.deductible),
            deductible_family_cents: Some(2 * self.deductible),
            oop_max_individual_cents: Some(self.oop_individual),
            oop_max_family_cents: Some(self.oop_family),
            coinsurance_pct: self.coinsurance_pct,
            pmpm_cents: pmpm,
            monthly_rates_cents: tiers,
            member_rates_cents: None,
        }
    }

    /// Whether both versions of the 2026 card can be built on it (base
    /// maxima above value's 3,400 / 6,800 and family − individual ≥ 3,400).
    pub fn both_available(&self) -> bool {
        self.oop_individual > 340_000
            && self.oop_family > 680_000
            && self.oop_family - self.oop_individual >= 340_000
    }
}

/// Plan rates: a PMPM or tier rates.
pub fn arb_rates() -> impl Strategy<Value = PlanRates> {
    prop_oneof![
        (20_000i64..=120_000).prop_map(PlanRates::Pmpm),
        (
            30_000i64..=90_000,
            0i64..=60_000,
            0i64..=60_000,
            0i64..=90_000
        )
            .prop_map(|(eo, s, c, f)| PlanRates::Tiers(TierRates {
                employee_only: eo,
                employee_spouse: eo + s + 20_000,
                employee_children: eo + c + 10_000,
                family: eo + s + c + f + 40_000,
            })),
    ]
}

/// An HSA-eligible plan (within the IRS limits, family ≥ individual) on
/// which both versions are available.
pub fn arb_plan_both() -> impl Strategy<Value = PlanSpec> {
    (340_001i64..=850_000)
        .prop_flat_map(|oi| (Just(oi), (oi + 340_000)..=1_700_000, 100_000i64..=oi))
        .prop_flat_map(|(oi, of, d)| {
            (
                Just((oi, of, d)),
                proptest::option::of(0u32..=50),
                arb_rates(),
            )
        })
        .prop_map(|((oi, of, d), coinsurance_pct, rates)| PlanSpec {
            deductible: d,
            oop_individual: oi,
            oop_family: of,
            coinsurance_pct,
            rates,
        })
}

/// Any valid HSA-eligible plan (some versions may be unavailable on it).
pub fn arb_plan_any() -> impl Strategy<Value = PlanSpec> {
    prop_oneof![
        3 => arb_plan_both(),
        1 => (170_000i64..=850_000)
            .prop_flat_map(|oi| (Just(oi), oi..=1_700_000, 100_000i64..=oi, arb_rates()))
            .prop_map(|(oi, of, d, rates)| PlanSpec {
                deductible: d,
                oop_individual: oi,
                oop_family: of,
                coinsurance_pct: Some(20),
                rates,
            }),
    ]
}
