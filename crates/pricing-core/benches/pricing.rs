//! Criterion benchmarks of the engine on a 10,000-employee census, each next
//! to its floor measured in the same run:
//!
//! - `quote/10k` (normalise the census and price a quote from its market
//!   comparison) against `quote_floor/10k` (one pass over the same census
//!   doing trivial work per member: age at the plan-year start and the ZIP);
//! - `simulation/10k` (the market comparison at the card's 2,000 plan years,
//!   both versions) against `draw_floor/10k` (drawing the same number of
//!   claims by inversion, on both cores);
//! - `price_on_plan/10k_500` (a 10,000-employee request with 500 market
//!   plans, end to end).
//!
//! Run: `cargo bench -p pricing-core --bench pricing`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pricing_core::census::age_on;
use pricing_core::claims::draw;
use pricing_core::simulate::person_streams;
use pricing_core::{
    CensusContext, CensusMember, CensusRules, MarketPlan, PartnerPlan, PriceOnPlanRequest,
    PricingContext, QuoteRequest, RateCard, RatedCensus, market_comparison, price_on_plan,
    price_quote,
};
use rayon::prelude::*;
use time::{Date, Month};

const ZIPS: [&str; 12] = [
    "94103", "94110", "10001", "60601", "77002", "30301", "98101", "02108", "80202", "85001",
    "19103", "55401",
];

/// A deterministic 10,000-employee census: 20% unknown households, the rest
/// employee only, with spouse, with 1–3 children or family.
fn census(n: usize) -> Vec<CensusMember> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    (0..n)
        .map(|i| {
            let year = 1960 + i32::try_from(next(45)).unwrap_or(0);
            let dob = Date::from_calendar_date(
                year,
                Month::June,
                1 + u8::try_from(next(28)).unwrap_or(0),
            )
            .unwrap_or(Date::MIN);
            let zip = ZIPS
                .get(usize::try_from(next(12)).unwrap_or(0))
                .copied()
                .unwrap_or("94103");
            let mut m = CensusMember::new(&format!("E-{i:05}"), dob, zip);
            let kind = next(100);
            let dep = |rel: &str, y: u64| {
                serde_json::from_value(
                    serde_json::json!({"relationship": rel, "dob": format!("{}-03-04", 1960 + y)}),
                )
                .unwrap_or_else(|_| unreachable_dep())
            };
            m.dependents = match kind {
                0..20 => None,
                20..60 => Some(vec![]),
                60..72 => Some(vec![dep("spouse", next(45))]),
                72..84 => Some((0..=next(3)).map(|_| dep("child", 40 + next(25))).collect()),
                _ => Some(
                    std::iter::once(dep("spouse", next(45)))
                        .chain((0..=next(3)).map(|_| dep("child", 40 + next(25))))
                        .collect(),
                ),
            };
            m
        })
        .collect()
}

#[expect(clippy::panic, reason = "the literal dependent always parses")]
fn unreachable_dep() -> pricing_core::Dependent {
    panic!("dependent literal")
}

/// 500 market plans: platinum PPO benchmarks, HSA base candidates, HMOs and
/// plans without rates; a few carry member rates for every employee.
fn market_plans(census: &[CensusMember]) -> Vec<MarketPlan> {
    (0..500)
        .map(|i: i64| {
            let kind = i % 5;
            let json = match kind {
                0 => serde_json::json!({"carrier": format!("C{i}"), "planName": format!("Platinum {i}"), "planType": "PPO", "metalTier": "Platinum", "pmpmCents": 90_000 + i * 37}),
                1 => serde_json::json!({"carrier": format!("C{i}"), "planName": format!("HSA {i}"), "planType": "PPO", "metalTier": "Bronze", "hsaEligible": true, "deductibleIndividualCents": 340_000, "oopMaxIndividualCents": 750_000 + (i % 7) * 10_000, "monthlyRatesCents": {"employeeOnly": 50_000 + i, "employeeSpouse": 100_000 + i, "employeeChildren": 90_000 + i, "family": 150_000 + i}}),
                2 => serde_json::json!({"carrier": format!("C{i}"), "planName": format!("HMO {i}"), "planType": "HMO", "metalTier": "Gold", "pmpmCents": 70_000}),
                3 => serde_json::json!({"carrier": format!("C{i}"), "planName": format!("Silver {i}"), "planType": "PPO", "metalTier": "Silver", "hsaEligible": false, "pmpmCents": 60_000}),
                _ => serde_json::json!({"carrier": format!("C{i}"), "planName": format!("Gold {i}"), "planType": "EPO", "metalTier": "Gold"}),
            };
            let mut plan: MarketPlan = serde_json::from_value(json).unwrap_or_else(|_| unreachable_plan());
            if i < 5 {
                plan.member_rates_cents = Some(
                    census
                        .iter()
                        .filter_map(|m| m.external_id.clone())
                        .map(|id| pricing_core::plan::MemberRate { external_id: id, monthly_cents: 95_000 })
                        .collect(),
                );
            }
            plan
        })
        .collect()
}

#[expect(clippy::panic, reason = "the literal plan always parses")]
fn unreachable_plan() -> MarketPlan {
    panic!("plan literal")
}

#[expect(clippy::panic, reason = "benchmark setup: a failure must stop the run")]
fn benches(c: &mut Criterion) {
    let card = RateCard::builtin_2026().unwrap_or_else(|e| panic!("{e}"));
    let start = Date::from_calendar_date(2026, Month::January, 1).unwrap_or(Date::MIN);
    let members = census(10_000);
    let ctx = CensusContext {
        card: &card,
        plan_year_start: start,
        partner: None,
        rules: CensusRules { require_dob: true },
        fallback_zip: None,
    };
    let rated = RatedCensus::build(&members, ctx).unwrap_or_else(|e| panic!("{e}"));
    let sim = market_comparison(&rated);

    let mut g = c.benchmark_group("quote");
    g.bench_function("quote/10k", |b| {
        b.iter(|| {
            let rated =
                RatedCensus::build(black_box(&members), ctx).unwrap_or_else(|e| panic!("{e}"));
            price_quote(&rated, &sim, QuoteRequest::default()).unwrap_or_else(|e| panic!("{e}"))
        });
    });
    g.bench_function("normalise/10k", |b| {
        b.iter(|| RatedCensus::build(black_box(&members), ctx).unwrap_or_else(|e| panic!("{e}")));
    });
    g.bench_function("price_quote/10k", |b| {
        b.iter(|| {
            price_quote(black_box(&rated), &sim, QuoteRequest::default())
                .unwrap_or_else(|e| panic!("{e}"))
        });
    });
    g.bench_function("quote_floor/10k", |b| {
        b.iter(|| {
            black_box(&members).iter().fold(0u64, |acc, m| {
                let age = m.dob.map_or(0, |d| age_on(d, start));
                let zip = m
                    .zip
                    .bytes()
                    .fold(0u64, |z, c| z * 10 + u64::from(c - b'0'));
                acc.wrapping_add(u64::from(age)).wrapping_add(zip)
            })
        });
    });
    g.finish();

    let streams = person_streams(&rated);
    let years = rated.group.simulated_plan_years;
    let claims = rated.group.claims;
    let mut g = c.benchmark_group("simulation");
    g.sample_size(10);
    g.bench_function("simulation/10k", |b| {
        b.iter(|| market_comparison(black_box(&rated)))
    });
    g.bench_function("draw_floor/10k", |b| {
        b.iter(|| {
            black_box(&streams)
                .par_iter()
                .map(|&(key, mu)| {
                    (0..years)
                        .map(|y| draw(key, y, mu, claims.sigma, claims.zero_probability))
                        .sum::<f64>()
                })
                .sum::<f64>()
        });
    });
    g.finish();

    let plan: PartnerPlan = serde_json::from_value(serde_json::json!({
        "carrier": "Partner", "plan_name": "HSA PPO", "plan_type": "PPO", "hsa_eligible": true,
        "deductible_individual_cents": 340_000, "oop_max_individual_cents": 750_000, "pmpm_cents": 52_000
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    let req = PriceOnPlanRequest {
        market_plans: market_plans(&members),
        census: members.clone(),
        plan: Some(plan),
        company_zip: None,
    };
    let pctx = PricingContext {
        card: &card,
        plan_year_start: start,
        partner: None,
        rules: CensusRules { require_dob: true },
    };
    let mut g = c.benchmark_group("price_on_plan");
    g.sample_size(10);
    g.bench_function("price_on_plan/10k_500", |b| {
        b.iter(|| price_on_plan(black_box(&req), pctx).unwrap_or_else(|e| panic!("{e}")));
    });
    g.finish();
}

criterion_group!(pricing, benches);
criterion_main!(pricing);
