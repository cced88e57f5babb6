//! Shared helpers of the integration tests: cached rate cards, census and
//! partner-plan generators, the pricing shortcuts the properties use, and an
//! independent recomputation of the market base plan's exact monthly cost.
//!
//! The simulation is kept cheap: quotes run on a [`RatedCensus`] whose
//! `simulated_plan_years` is lowered to [`QUOTE_YEARS`], and price-on-plan
//! runs on a copy of the 2026 card whose `simulated_plan_years` is
//! [`PLAN_YEARS`] (it reads the years from the card).

use std::sync::OnceLock;

use pricing_core::census::{MemberStatus, SexAtBirth};
use pricing_core::plan::TierRates;
use pricing_core::rate_card::RATE_CARD_2026;
use pricing_core::{
    CensusContext, CensusMember, CensusRules, Dependent, EmploymentType, PartnerPlan, PriceOnPlan,
    PriceOnPlanRequest, PricingContext, Quote, QuoteRequest, RateCard, RatedCensus, Relationship,
    Simulation, VersionId,
};
use proptest::collection::vec;
use proptest::prelude::*;
use time::macros::date;
use time::{Date, Duration};

/// Plan-year start of every test census.
pub const START: Date = date!(2026 - 01 - 01);

/// Priced ZIPs in four states: CA-04 (twice), NY, IL, TX.
pub const ZIPS: [&str; 5] = ["94103", "94110", "10001", "60601", "75201"];

/// Simulated plan years of property-test quotes.
pub const QUOTE_YEARS: u32 = 100;

/// Simulated plan years of the small card used for price-on-plan.
pub const PLAN_YEARS: u32 = 100;

/// The built-in 2026 card, parsed once.
pub fn card() -> &'static RateCard {
    static CARD: OnceLock<RateCard> = OnceLock::new();
    CARD.get_or_init(|| {
        RateCard::builtin_2026().unwrap_or_else(|e| panic!("the 2026 card loads: {e}"))
    })
}

/// The 2026 card with `simulated_plan_years` lowered to [`PLAN_YEARS`].
pub fn small_card() -> &'static RateCard {
    static CARD: OnceLock<RateCard> = OnceLock::new();
    CARD.get_or_init(|| {
        let from = "simulated_plan_years = 2000\n";
        assert_eq!(
            RATE_CARD_2026.matches(from).count(),
            1,
            "the 2026 card sets simulated_plan_years once"
        );
        let text =
            RATE_CARD_2026.replacen(from, &format!("simulated_plan_years = {PLAN_YEARS}\n"), 1);
        RateCard::from_toml_str(&text).unwrap_or_else(|e| panic!("the small card loads: {e}"))
    })
}

/// The census context of every test (broker rules: `dob` required).
pub fn census_ctx(card: &RateCard) -> CensusContext<'_> {
    CensusContext {
        card,
        plan_year_start: START,
        partner: None,
        rules: CensusRules { require_dob: true },
        fallback_zip: None,
    }
}

/// Normalises `census` on the 2026 card and lowers the simulated years.
pub fn rated(census: &[CensusMember], years: u32) -> RatedCensus {
    let mut r = RatedCensus::build(census, census_ctx(card()))
        .unwrap_or_else(|e| panic!("census builds: {e:?}"));
    r.group.simulated_plan_years = years;
    r
}

/// Diamond and value quotes of `census` (one market comparison, two
/// requests), with [`QUOTE_YEARS`] simulated years.
pub fn quotes(census: &[CensusMember]) -> [Quote; 2] {
    quotes_with_simulation(census).2
}

/// The rated census, its market comparison and the diamond and value
/// quotes priced from it.
pub fn quotes_with_simulation(census: &[CensusMember]) -> (RatedCensus, Simulation, [Quote; 2]) {
    let r = rated(census, QUOTE_YEARS);
    let sim = pricing_core::market_comparison(&r);
    let quotes = [VersionId::Diamond, VersionId::Value].map(|plan| {
        let req = QuoteRequest {
            plan,
            ..QuoteRequest::default()
        };
        pricing_core::price_quote(&r, &sim, req).unwrap_or_else(|e| panic!("quote prices: {e:?}"))
    });
    (r, sim, quotes)
}

/// Prices `census` on `plan` with the small card.
pub fn price_on(census: &[CensusMember], plan: &PartnerPlan) -> PriceOnPlan {
    let req = PriceOnPlanRequest {
        census: census.to_vec(),
        plan: Some(plan.clone()),
        ..PriceOnPlanRequest::default()
    };
    let ctx = PricingContext {
        card: small_card(),
        plan_year_start: START,
        partner: None,
        rules: CensusRules { require_dob: true },
    };
    pricing_core::price_on_plan(&req, ctx).unwrap_or_else(|e| panic!("price-on-plan: {e:?}"))
}

/// Serialized JSON bytes of a value.
pub fn json_bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|e| panic!("serializes: {e}"))
}

/// A member with an `external_id`, no dependents and default employment.
pub fn member(id: &str, dob: Date, zip: &str) -> CensusMember {
    CensusMember::new(id, dob, zip)
}

/// A dependent with a date of birth.
pub fn dependent(relationship: Relationship, dob: Date) -> Dependent {
    Dependent {
        relationship,
        name: None,
        dob: Some(dob),
        age: None,
        sex_at_birth: None,
    }
}

// ---------------------------------------------------------------------------
// Generators.

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

// ---------------------------------------------------------------------------
// Independent recomputation of base costs.

/// Whole years between `dob` and `on` (0 when born later).
pub fn age_at(dob: Date, on: Date) -> u32 {
    let mut years = on.year() - dob.year();
    if (u8::from(on.month()), on.day()) < (u8::from(dob.month()), dob.day()) {
        years -= 1;
    }
    u32::try_from(years).unwrap_or(0)
}

/// Ages of the charged people of a known household (section 2: the
/// employee, the first partner, every other dependent 21 or older, and the
/// three oldest under 21).
pub fn charged_ages(m: &CensusMember) -> Vec<u32> {
    let age = |dob: Option<Date>| dob.map_or(0, |d| age_at(d, START));
    let mut out = vec![age(m.dob)];
    let mut partner = false;
    let mut young = Vec::new();
    for d in m.dependents.iter().flatten() {
        let a = age(d.dob);
        if d.relationship.is_partner() && !partner {
            partner = true;
            out.push(a);
        } else if a >= 21 {
            out.push(a);
        } else {
            young.push(a);
        }
    }
    young.sort_unstable_by(|a, b| b.cmp(a));
    out.extend(young.into_iter().take(3));
    out
}

/// People of a known household: the employee and every dependent.
pub fn people(m: &CensusMember) -> i64 {
    1 + m
        .dependents
        .as_ref()
        .map_or(0, |d| i64::try_from(d.len()).unwrap_or(0))
}

/// The tier of a known household: 0 EO, 1 ES, 2 EC, 3 family.
pub fn tier_index(m: &CensusMember) -> usize {
    let deps = m.dependents.as_deref().unwrap_or_default();
    let partner = deps.iter().any(|d| d.relationship.is_partner());
    let others = deps.iter().filter(|d| !d.relationship.is_partner()).count()
        + deps
            .iter()
            .filter(|d| d.relationship.is_partner())
            .count()
            .saturating_sub(1);
    match (partner, others > 0) {
        (false, false) => 0,
        (true, false) => 1,
        (false, true) => 2,
        (true, true) => 3,
    }
}

/// The card's market base HSA PPO monthly cost of a census of known
/// households, recomputed from the card's public per-area data:
/// Σ counted households Σ charged people `round(base21 × factor(age))`.
pub fn market_base_monthly(census: &[CensusMember]) -> i64 {
    let card = card();
    census
        .iter()
        .filter(|m| m.is_counted())
        .map(|m| {
            let market = card
                .area_for_zip(&m.zip)
                .and_then(|a| card.market(a, None))
                .unwrap_or_else(|| panic!("ZIP {} is priced", m.zip));
            charged_ages(m)
                .into_iter()
                .map(|a| {
                    let i = usize::try_from(a.min(64)).unwrap_or(64);
                    let f = market.age_curve_milli.get(i).copied().unwrap_or(1000);
                    (market.market_base_rate21_cents * i64::from(f) + 500) / 1000
                })
                .sum::<i64>()
        })
        .sum()
}

/// A partner plan's exact monthly cost for a census of known households.
pub fn plan_monthly(census: &[CensusMember], rates: PlanRates) -> i64 {
    census
        .iter()
        .filter(|m| m.is_counted())
        .map(|m| match rates {
            PlanRates::Pmpm(p) => p * people(m),
            PlanRates::Tiers(t) => match tier_index(m) {
                0 => t.employee_only,
                1 => t.employee_spouse,
                2 => t.employee_children,
                _ => t.family,
            },
        })
        .sum()
}

/// Every `(key path, value)` of a JSON money field: a number whose key ends
/// in `_cents` (and every number inside an array or object under such a key).
pub fn cents_fields(value: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    fn walk(
        v: &serde_json::Value,
        path: &str,
        money: bool,
        out: &mut Vec<(String, serde_json::Value)>,
    ) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map {
                    walk(
                        x,
                        &format!("{path}.{k}"),
                        money || k.ends_with("_cents"),
                        out,
                    );
                }
            }
            serde_json::Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(x, &format!("{path}[{i}]"), money, out);
                }
            }
            serde_json::Value::Number(_) if money => out.push((path.to_owned(), v.clone())),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, "$", false, &mut out);
    out
}

/// Whether a money field may be negative (savings, headroom and the
/// benchmark comparisons).
pub fn signed_money(path: &str) -> bool {
    let key = path.rsplit('.').next().unwrap_or(path);
    ["savings", "headroom", "under_benchmark", "lower_by"]
        .iter()
        .any(|s| key.contains(s))
}
