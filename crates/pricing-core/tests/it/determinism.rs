//! Determinism of the engine (pricing model sections 1 and 5): the same
//! inputs give the same bytes, row order never matters, adding a member
//! leaves every other household's simulated draws unchanged, household and
//! stream keys follow the specification, `U(key, y)` is SplitMix64, and the
//! simulated layer of one- and two-person households is reproduced here
//! from the published generator.

use std::collections::BTreeMap;

use pricing_core::census::{EmploymentType, MemberStatus};
use pricing_core::claims::{ppnd16, stream_key, uniform};
use pricing_core::household::household_keys;
use pricing_core::quote::{card_base_plan, layer_plan};
use pricing_core::simulate::simulate;
use pricing_core::{
    CensusMember, PartnerPlan, PriceOnPlanRequest, PricingContext, QuoteRequest, RatedCensus,
    Relationship, Simulation,
};
use sha2::{Digest, Sha256};
use time::macros::date;

use crate::support::{START, card, census_ctx, dependent, json_bytes, member, quotes, rated};

/// A small census with every kind of record: an employee only, a family
/// with four children, an unknown household, an email-only record, an
/// anonymous record keyed by name, a contractor and a terminated member,
/// in three states.
fn census() -> Vec<CensusMember> {
    let mut family = member("E-002", date!(1978 - 03 - 14), "94110");
    family.dependents = Some(vec![
        dependent(Relationship::Child, date!(2012 - 07 - 01)),
        dependent(Relationship::Spouse, date!(1980 - 11 - 30)),
        dependent(Relationship::Child, date!(2016 - 02 - 29)),
        dependent(Relationship::Child, date!(2009 - 09 - 09)),
        dependent(Relationship::Child, date!(2020 - 01 - 02)),
    ]);
    let mut unknown = member("E-003", date!(1969 - 12 - 31), "10001");
    unknown.dependents = None;
    let mut email = member("x", date!(1995 - 06 - 06), "60601");
    email.external_id = None;
    email.email = Some("Ada.Byron@Example.COM".to_owned());
    email.dependents = Some(vec![dependent(
        Relationship::DomesticPartner,
        date!(1993 - 01 - 01),
    )]);
    let mut anon = member("x", date!(1988 - 08 - 08), "94103");
    anon.external_id = None;
    anon.first_name = Some("Ada".to_owned());
    anon.last_name = Some("Lovelace".to_owned());
    anon.employment_type = Some(EmploymentType::PartTime);
    anon.dependents = None;
    let mut contractor = member("C-001", date!(1990 - 01 - 01), "94103");
    contractor.employment_type = Some(EmploymentType::Contractor);
    let mut gone = member("T-001", date!(1961 - 01 - 01), "94103");
    gone.status = Some(MemberStatus::Terminated);
    vec![
        member("E-001", date!(1985 - 04 - 02), "94103"),
        family,
        unknown,
        email,
        anon,
        contractor,
        gone,
    ]
}

fn plan() -> PartnerPlan {
    serde_json::from_str(
        r#"{"plan_type":"PPO","hsa_eligible":true,"deductible_individual_cents":340000,
            "oop_max_individual_cents":750000,"oop_max_family_cents":1500000,"pmpm_cents":52000}"#,
    )
    .unwrap_or_else(|e| panic!("plan parses: {e}"))
}

/// Price-on-plan with the real 2026 card (2,000 simulated years).
fn price_on_builtin(census: &[CensusMember]) -> Vec<u8> {
    let req = PriceOnPlanRequest {
        census: census.to_vec(),
        plan: Some(plan()),
        ..PriceOnPlanRequest::default()
    };
    let ctx = PricingContext {
        card: card(),
        plan_year_start: START,
        partner: None,
        rules: pricing_core::CensusRules { require_dob: true },
    };
    let answer = pricing_core::price_on_plan(&req, ctx)
        .unwrap_or_else(|e| panic!("price-on-plan prices: {e:?}"));
    json_bytes(&answer)
}

/// The quote of the real entry point (2,000 simulated years).
fn quote_builtin(census: &[CensusMember]) -> Vec<u8> {
    let q = pricing_core::quote(census, census_ctx(card()), QuoteRequest::default())
        .unwrap_or_else(|e| panic!("quote prices: {e:?}"));
    json_bytes(&q)
}

/// Per household key, each version's Σ years layer.
fn layers_by_key(r: &RatedCensus, sim: &Simulation) -> BTreeMap<String, [i64; 2]> {
    let [diamond, value] = &sim.versions;
    assert_eq!(diamond.household_layer.len(), r.households.len());
    assert_eq!(value.household_layer.len(), r.households.len());
    r.households
        .iter()
        .zip(diamond.household_layer.iter().zip(&value.household_layer))
        .map(|(h, (&d, &v))| (h.key.to_string(), [d, v]))
        .collect()
}

fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The spec's stream key, computed here: first 8 bytes big-endian of
/// SHA-256 over `{card version}|{household key}|{place}`.
fn spec_key(version: &str, household: &str, place: &str) -> u64 {
    let digest = Sha256::digest(format!("{version}|{household}|{place}").as_bytes());
    let mut first = [0u8; 8];
    for (dst, src) in first.iter_mut().zip(digest.iter()) {
        *dst = *src;
    }
    u64::from_be_bytes(first)
}

/// `(z >> 11) as f64`, exactly (the value is below 2^53), without `as`.
fn top53(z: u64) -> f64 {
    let x = z >> 11;
    let hi = u32::try_from(x >> 21).unwrap_or(u32::MAX);
    let lo = u32::try_from(x & 0x1F_FFFF).unwrap_or(u32::MAX);
    f64::from(hi) * 2_097_152.0 + f64::from(lo)
}

/// The spec's `U(key, y)`: SplitMix64 of `key + (y + 1)·0x9E3779B97F4A7C15`.
fn spec_uniform(key: u64, year: u32) -> f64 {
    let mut z = key.wrapping_add(u64::from(year + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (top53(z) + 0.5) / 9_007_199_254_740_992.0
}

#[test]
fn the_same_quote_twice_gives_the_same_bytes() {
    let c = census();
    assert_eq!(quote_builtin(&c), quote_builtin(&c));
}

#[test]
fn the_same_price_on_plan_twice_gives_the_same_bytes() {
    let c = census();
    assert_eq!(price_on_builtin(&c), price_on_builtin(&c));
}

#[test]
fn row_order_never_matters() {
    let c = census();
    let base_q = quote_builtin(&c);
    let base_p = price_on_builtin(&c);
    let mut reversed = c.clone();
    reversed.reverse();
    assert_eq!(quote_builtin(&reversed), base_q, "reversed rows");
    assert_eq!(price_on_builtin(&reversed), base_p, "reversed rows");
    // Every rotation, on the cheaper simulation.
    let reference = quotes(&c).map(|q| json_bytes(&q));
    let sim = pricing_core::market_comparison(&rated(&c, 100));
    for k in 1..c.len() {
        let mut rotated = c.clone();
        rotated.rotate_left(k);
        assert_eq!(
            quotes(&rotated).map(|q| json_bytes(&q)),
            reference,
            "rotation {k}"
        );
        assert_eq!(
            pricing_core::market_comparison(&rated(&rotated, 100)),
            sim,
            "rotation {k}"
        );
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let c = census();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let serial = one.install(|| quotes(&c).map(|q| json_bytes(&q)));
    assert_eq!(quotes(&c).map(|q| json_bytes(&q)), serial);
}

#[test]
fn adding_a_member_leaves_every_other_households_draws_unchanged() {
    let c = census();
    let before_r = rated(&c, 200);
    let before = layers_by_key(&before_r, &pricing_core::market_comparison(&before_r));
    // Added members of every identity kind, one of which makes NY the
    // primary area (and so changes the group's layer chain).
    let mut new_id = member("E-000", date!(1970 - 01 - 01), "10001");
    new_id.dependents = None;
    let mut new_email = member("x", date!(1999 - 02 - 02), "10001");
    new_email.external_id = None;
    new_email.email = Some("new.hire@example.com".to_owned());
    let mut new_anon = member("x", date!(1975 - 05 - 05), "94103");
    new_anon.external_id = None;
    new_anon.first_name = Some("Grace".to_owned());
    new_anon.dependents = Some(vec![dependent(Relationship::Child, date!(2010 - 01 - 01))]);
    for (n, extra) in [new_id, new_email, new_anon].into_iter().enumerate() {
        let mut bigger = c.clone();
        bigger.insert(n, extra);
        let after_r = rated(&bigger, 200);
        let after = layers_by_key(&after_r, &pricing_core::market_comparison(&after_r));
        assert_eq!(after.len(), before.len() + 1, "case {n}");
        for (key, layers) in &before {
            assert_eq!(after.get(key), Some(layers), "case {n}: household {key}");
        }
    }
}

#[test]
fn household_keys_follow_the_spec() {
    let c = census();
    let keys = household_keys(&c);
    assert_eq!(keys[0], "E-001#0");
    assert_eq!(keys[1], "E-002#0");
    assert_eq!(keys[3], "ada.byron@example.com#0");
    // Anonymous: hex SHA-256 of the canonical JSON of the non-rating fields.
    let identity = r#"{"employment_type":"part_time","first_name":"Ada","last_name":"Lovelace"}"#;
    assert_eq!(keys[4], format!("{}#0", sha256_hex(identity)));
    assert_eq!(
        sha256_hex(identity),
        "c9a3958f87515e0825ea06acf64eb30665283f973d8447a01c7ef77b9bcd93c0"
    );
    // Duplicated ids are numbered in the order of their canonical JSON,
    // whatever the row order.
    let a = member("E-9", date!(1980 - 01 - 01), "94103");
    let b = member("E-9", date!(1990 - 01 - 01), "94103");
    let ab = household_keys(&[a.clone(), b.clone()]);
    let ba = household_keys(&[b, a]);
    assert_eq!(ab, ["E-9#0", "E-9#1"]);
    assert_eq!(ba, ["E-9#1", "E-9#0"]);
}

#[test]
fn stream_keys_follow_the_spec() {
    // Known answers (Python hashlib) and the definition.
    assert_eq!(stream_key("2026.1", "E-001#0", "e"), 0xe43e_a0d5_9db5_7fe8);
    assert_eq!(stream_key("2026.1", "E-001#0", "s"), 0x835f_1150_e433_9c4c);
    assert_eq!(
        stream_key("2026.1", "ada@example.com#0", "mc2"),
        0xfdb8_3689_2a65_304a
    );
    for household in ["E-001#0", "E-001#1", "ada@example.com#0", "x#0"] {
        for place in ["e", "s", "c1", "c2", "c6", "ms", "mc1", "mc2"] {
            assert_eq!(
                stream_key("2026.1", household, place),
                spec_key("2026.1", household, place),
                "{household} {place}"
            );
        }
    }
}

#[test]
fn uniform_is_splitmix64() {
    // Key 0: SplitMix64 seeded with 0 (its first three outputs).
    for (year, z) in [
        (0, 0xe220_a839_7b1d_cdaf_u64),
        (1, 0x6e78_9e6a_a1b9_65f4),
        (2, 0x06c4_5d18_8009_454f),
    ] {
        assert_eq!(
            uniform(0, year).to_bits(),
            ((top53(z) + 0.5) / 9_007_199_254_740_992.0).to_bits()
        );
    }
    let key = 0xe43e_a0d5_9db5_7fe8;
    assert_eq!(
        uniform(key, 0).to_bits(),
        0.247_867_944_194_272_88_f64.to_bits()
    );
    assert_eq!(
        uniform(key, 1).to_bits(),
        0.960_531_153_095_673_7_f64.to_bits()
    );
    assert_eq!(
        uniform(key, 1999).to_bits(),
        0.840_611_100_870_406_f64.to_bits()
    );
    for key in [0, 1, u64::MAX, 0x9E37_79B9_7F4A_7C15, 0xe43e_a0d5_9db5_7fe8] {
        for year in [0, 1, 2, 17, 1999, 99_999, u32::MAX - 1] {
            let u = uniform(key, year);
            assert_eq!(
                u.to_bits(),
                spec_uniform(key, year).to_bits(),
                "{key} {year}"
            );
            assert!(u > 0.0 && u < 1.0);
        }
    }
}

/// One person's claims-model inputs, recomputed from the card.
struct SpecPerson {
    key: u64,
    mu: f64,
}

fn spec_person(r: &RatedCensus, zip: &str, age: u32, household: &str, place: &str) -> SpecPerson {
    let c = card();
    let Some(market) = c.area_for_zip(zip).and_then(|a| c.market(a, None)) else {
        panic!("ZIP {zip} is priced");
    };
    let Some(&f) = market
        .age_curve_milli
        .get(usize::from(u8::try_from(age.min(64)).unwrap_or(64)))
    else {
        panic!("the age curve covers 0..=64");
    };
    let monthly = (market.benchmark_rate21_cents * i64::from(f) + 500) / 1000;
    let p = &r.group.claims;
    let annual = pricing_core::money::to_f64(monthly * 12);
    let mean = annual * p.target_loss_ratio / p.platinum_actuarial_value;
    SpecPerson {
        key: spec_key(&r.card_version, household, place),
        mu: libm::log(mean / (1.0 - p.zero_probability)) - p.sigma * p.sigma / 2.0,
    }
}

fn spec_gross(r: &RatedCensus, p: &SpecPerson, year: u32, d: f64, pct: f64) -> f64 {
    let c = &r.group.claims;
    let u = spec_uniform(p.key, year);
    let x = if u <= c.zero_probability {
        0.0
    } else {
        libm::exp(p.mu + c.sigma * ppnd16((u - c.zero_probability) / (1.0 - c.zero_probability)))
    };
    x.min(d) + (pct / 100.0) * (x - d).max(0.0)
}

#[test]
fn the_simulated_layer_is_reproduced_from_the_published_generator() {
    let years = 300;
    let mut couple = member("E-2", date!(1979 - 02 - 02), "10001");
    couple.dependents = Some(vec![dependent(Relationship::Spouse, date!(1960 - 03 - 03))]);
    let c = vec![member("E-1", date!(1962 - 07 - 15), "94103"), couple];
    let r = rated(&c, years);
    let base = card_base_plan(&r.group.market_base_plan);
    let plan = layer_plan(&r, &base);
    let sim = simulate(&r, &plan);
    assert_eq!(sim, pricing_core::market_comparison(&r));
    let d = 340_000.0;
    let pct = 20.0;
    // Base 7,500 / 15,000; diamond 1,700 self-only and, as an HSA-eligible
    // version, 3,400 per member in family coverage / 3,400 family; value
    // 3,400 / 3,400 / 6,800.
    let (bi, bf) = (750_000.0, 1_500_000.0);
    let versions = [
        (170_000.0, 340_000.0, 340_000.0),
        (340_000.0, 340_000.0, 680_000.0),
    ];
    let single = spec_person(&r, "94103", 63, "E-1#0", "e");
    let employee = spec_person(&r, "10001", 46, "E-2#0", "e");
    let spouse = spec_person(&r, "10001", 65, "E-2#0", "s");
    let mut expect = [[0i64; 2]; 2];
    for y in 0..years {
        let g = spec_gross(&r, &single, y, d, pct);
        let (ge, gs) = (
            spec_gross(&r, &employee, y, d, pct),
            spec_gross(&r, &spouse, y, d, pct),
        );
        let b2 = (ge.min(bi) + gs.min(bi)).min(bf);
        for (v, (vi, ve, vf)) in versions.into_iter().enumerate() {
            let one = libm::round(g.min(bi) - g.min(vi));
            let two = libm::round(b2 - (ge.min(ve) + gs.min(ve)).min(vf));
            expect[0][v] += round_i64(one);
            expect[1][v] += round_i64(two);
        }
    }
    let got = layers_by_key(&r, &sim);
    assert_eq!(got["E-1#0"], expect[0]);
    assert_eq!(got["E-2#0"], expect[1]);
    assert!(expect[0][0] > expect[0][1] && expect[0][1] > 0);
}

/// An integral f64 of at most a family maximum as `i64`.
fn round_i64(x: f64) -> i64 {
    let s = format!("{x:.0}");
    s.parse()
        .unwrap_or_else(|e| panic!("{x} is an integral amount: {e}"))
}
