//! Shared helpers of the integration tests: cached rate cards, the pricing
//! shortcuts the properties use, and an independent recomputation of the
//! market base plan's exact monthly cost. The generators live in
//! `generators.rs` and are re-exported here.
//!
//! The simulation is kept cheap: quotes run on a [`RatedCensus`] whose
//! `simulated_plan_years` is lowered to [`QUOTE_YEARS`], and price-on-plan
//! runs on a copy of the 2026 card whose `simulated_plan_years` is
//! [`PLAN_YEARS`] (it reads the years from the card).

use std::sync::OnceLock;

pub use crate::generators::*;

use pricing_core::rate_card::RATE_CARD_2026;
use pricing_core::{
    CensusContext, CensusMember, CensusRules, Dependent, PartnerPlan, PriceOnPlan,
    PriceOnPlanRequest, PricingContext, Quote, QuoteRequest, RateCard, RatedCensus, Relationship,
    Simulation, VersionId,
};
use time::Date;
use time::macros::date;

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
