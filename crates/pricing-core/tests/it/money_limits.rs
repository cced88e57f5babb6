//! The money maxima (`pricing_core::money`) are chosen so that pricing
//! cannot overflow at them: censuses of 10,000 members (the census limit),
//! households of up to seven people, with every amount a partner sends at
//! its maximum, price without error — as quotes and as price-on-plan, on an
//! explicit plan and on market plans alone.

use pricing_core::money::{MAX_ANNUAL_CENTS, MAX_MONTHLY_CENTS};
use pricing_core::rate_card::IrsLimits;
use pricing_core::{
    CensusMember, CensusRules, MarketPlan, PartnerPlan, PriceOnPlanRequest, PricingContext,
    QuoteRequest, Relationship, VersionId,
};
use proptest::prelude::*;
use serde_json::json;
use time::Duration;
use time::macros::date;

use crate::support::{
    QUOTE_YEARS, START, ZIPS, cents_fields, dependent, member, rated, small_card,
};

/// Members of every generated census: the most a census may hold.
const MEMBERS: usize = 10_000;

/// A few cases: each prices 10,000 members.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The shape of a generated census: every member gets `deps` dependents
/// (a spouse first, then children), a ZIP rotating from `zip`, and an age
/// from 18 to `oldest`.
#[derive(Debug, Clone, Copy)]
struct Shape {
    deps: usize,
    zip: usize,
    oldest: i64,
}

fn arb_shape() -> impl Strategy<Value = Shape> {
    (0usize..=6, 0usize..ZIPS.len(), 40i64..=70).prop_map(|(deps, zip, oldest)| Shape {
        deps,
        zip,
        oldest,
    })
}

fn census(shape: Shape) -> Vec<CensusMember> {
    (0..MEMBERS)
        .map(|n| {
            let k = i64::try_from(n).unwrap_or(0);
            let age = 18 + k % (shape.oldest - 17);
            let dob = START - Duration::days(366 * age + k % 365);
            let zip = ZIPS
                .get((shape.zip + n) % ZIPS.len())
                .copied()
                .unwrap_or("94103");
            let mut m = member(&format!("E-{n:05}"), dob, zip);
            m.dependents = Some(
                (0..shape.deps)
                    .map(|j| {
                        if j == 0 {
                            dependent(Relationship::Spouse, dob)
                        } else {
                            dependent(Relationship::Child, date!(2010 - 06 - 01))
                        }
                    })
                    .collect(),
            );
            m
        })
        .collect()
}

fn member_rates(census: &[CensusMember]) -> serde_json::Value {
    census
        .iter()
        .map(|m| json!({"external_id": m.external_id, "monthly_cents": MAX_MONTHLY_CENTS}))
        .collect()
}

fn tiers() -> serde_json::Value {
    json!({"employee_only": MAX_MONTHLY_CENTS, "employee_spouse": MAX_MONTHLY_CENTS,
           "employee_children": MAX_MONTHLY_CENTS, "family": MAX_MONTHLY_CENTS})
}

/// The explicit plan at its maxima: every rate at the monthly maximum; the
/// design at the IRS limits (an HSA plan cannot go higher, and an amount
/// above them is refused before pricing).
fn partner_plan(census: &[CensusMember], irs: &IrsLimits) -> PartnerPlan {
    serde_json::from_value(json!({
        "plan_type": "PPO", "hsa_eligible": true,
        "deductible_individual_cents": irs.max_oop_self_cents,
        "deductible_family_cents": irs.max_oop_family_cents,
        "oop_max_individual_cents": irs.max_oop_self_cents,
        "oop_max_family_cents": irs.max_oop_family_cents,
        "coinsurance_pct": 100,
        "pmpm_cents": MAX_MONTHLY_CENTS,
        "monthly_rates_cents": tiers(),
        "member_rates_cents": member_rates(census),
    }))
    .unwrap_or_else(|e| panic!("plan parses: {e}"))
}

/// A platinum PPO benchmark with every amount at its maximum, and an HSA
/// base candidate with its rates at the maximum.
fn market_plans(census: &[CensusMember], irs: &IrsLimits) -> Vec<MarketPlan> {
    let copays = json!({"primary_care": MAX_ANNUAL_CENTS, "specialist": MAX_ANNUAL_CENTS,
        "urgent_care": MAX_ANNUAL_CENTS, "emergency_room": MAX_ANNUAL_CENTS,
        "rx_generic": MAX_ANNUAL_CENTS, "rx_preferred": MAX_ANNUAL_CENTS,
        "rx_specialty": MAX_ANNUAL_CENTS});
    let benchmark = json!({
        "metal_tier": "Platinum", "plan_type": "PPO", "hsa_eligible": false,
        "deductible_individual_cents": MAX_ANNUAL_CENTS,
        "deductible_family_cents": MAX_ANNUAL_CENTS,
        "oop_max_individual_cents": MAX_ANNUAL_CENTS,
        "oop_max_family_cents": MAX_ANNUAL_CENTS,
        "rx_deductible_cents": MAX_ANNUAL_CENTS,
        "copays_cents": copays,
        "coinsurance_pct": 100,
        "pmpm_cents": MAX_MONTHLY_CENTS,
        "monthly_rates_cents": tiers(),
        "member_rates_cents": member_rates(census),
    });
    let base = json!({
        "metal_tier": "Bronze", "plan_type": "PPO", "hsa_eligible": true,
        "deductible_individual_cents": irs.max_oop_self_cents,
        "oop_max_individual_cents": irs.max_oop_self_cents,
        "oop_max_family_cents": irs.max_oop_family_cents,
        "rx_deductible_cents": MAX_ANNUAL_CENTS,
        "copays_cents": copays,
        "pmpm_cents": MAX_MONTHLY_CENTS,
        "monthly_rates_cents": tiers(),
        "member_rates_cents": member_rates(census),
    });
    serde_json::from_value(json!([benchmark, base]))
        .unwrap_or_else(|e| panic!("market plans parse: {e}"))
}

fn ctx() -> PricingContext<'static> {
    PricingContext {
        card: small_card(),
        plan_year_start: START,
        partner: None,
        rules: CensusRules { require_dob: true },
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn quotes_price_at_the_maxima(shape in arb_shape(), pct in 0u32..=100) {
        let census = census(shape);
        let r = rated(&census, QUOTE_YEARS);
        prop_assert_eq!(r.employees(), 10_000);
        let sim = pricing_core::market_comparison(&r);
        for plan in VersionId::ALL {
            let req = QuoteRequest {
                plan,
                employer_contribution_pct: pct,
                current_pepm_cents: Some(MAX_MONTHLY_CENTS),
            };
            let quote = pricing_core::price_quote(&r, &sim, req);
            prop_assert!(quote.is_ok(), "{plan:?}: {}", quote.err().map(|e| e.to_string()).unwrap_or_default());
        }
    }

    #[test]
    fn price_on_plan_prices_at_the_maxima(shape in arb_shape(), explicit in any::<bool>()) {
        let census = census(shape);
        let irs = ctx()
            .card
            .group_params(None, None)
            .unwrap_or_else(|e| panic!("default params: {e}"))
            .irs;
        let req = PriceOnPlanRequest {
            plan: explicit.then(|| partner_plan(&census, &irs)),
            market_plans: market_plans(&census, &irs),
            census,
            company_zip: None,
        };
        let answer = pricing_core::price_on_plan(&req, ctx());
        prop_assert!(answer.is_ok(), "{}", answer.as_ref().err().map(ToString::to_string).unwrap_or_default());
        let answer = answer.unwrap_or_else(|e| panic!("{e}"));
        prop_assert_eq!(answer.employees, 10_000);
        prop_assert!(answer.versions.iter().any(|v| v.priced.is_some()), "nothing priced");
        // Every figure is a whole number of cents that a JSON reader holds
        // exactly (below 2^53).
        let json = serde_json::to_value(&answer).unwrap_or_default();
        for (path, v) in cents_fields(&json) {
            let n = v.as_i64().map(i64::unsigned_abs);
            prop_assert!(n.is_some_and(|n| n < 1 << 53), "{path} = {v}");
        }
    }
}
