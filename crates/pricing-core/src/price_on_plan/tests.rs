//! Unit tests of `price_on_plan`.

use time::macros::date;

use super::*;
use crate::census::{CensusMember, CensusRules};
use crate::rate_card::tests::card;

fn request(market: &str, plan: Option<&str>) -> PriceOnPlanRequest {
    PriceOnPlanRequest {
        census: vec![
            CensusMember::new("E1", date!(1980 - 01 - 01), "94103"),
            CensusMember::new("E2", date!(1990 - 01 - 01), "94110"),
        ],
        plan: plan.map(|p| serde_json::from_str(p).unwrap()),
        market_plans: serde_json::from_str(market).unwrap(),
        company_zip: None,
    }
}

fn price(req: &PriceOnPlanRequest) -> PriceOnPlan {
    let c = card();
    let ctx = PricingContext {
        card: &c,
        plan_year_start: date!(2026 - 01 - 01),
        partner: None,
        rules: CensusRules { require_dob: true },
    };
    price_on_plan(req, ctx).unwrap()
}

#[test]
fn a_market_base_reports_its_defaults_and_unusable_candidates_are_ignored_with_a_reason() {
    let market = r#"[
        {"metalTier":"Bronze","planType":"PPO","hsaEligible":true,"planName":"Low cap",
         "deductibleIndividualCents":170000,"oopMaxIndividualCents":170000,"pmpmCents":30000},
        {"metalTier":"Bronze","planType":"PPO","hsaEligible":true,"planName":"Good",
         "deductibleIndividualCents":340000,"oopMaxIndividualCents":750000,"pmpmCents":40000}
    ]"#;
    let answer = price(&request(market, None));
    assert_eq!(answer.base_plan.as_ref().unwrap().market_index, Some(1));
    assert_eq!(answer.used_plans.base_candidates, 1);
    assert_eq!(answer.ignored_plans.len(), 1);
    assert_eq!(answer.ignored_plans[0].index, 0);
    assert!(
        answer.ignored_plans[0]
            .reason
            .contains("no version can be built on it")
    );
    for default in ["family deductible", "family out-of-pocket", "coinsurance"] {
        assert!(
            answer
                .assumptions
                .iter()
                .any(|a| a.starts_with("Good:") && a.contains(default)),
            "{default} not reported"
        );
    }
}

#[test]
fn lower_by_is_never_negative_and_unmatched_member_rates_are_reported() {
    let plan = r#"{"plan_type":"PPO","hsa_eligible":true,"deductible_individual_cents":340000,
        "oop_max_individual_cents":750000,"pmpm_cents":50000,
        "member_rates_cents":[{"external_id":"E1","monthly_cents":51000},{"external_id":"NOPE","monthly_cents":1}]}"#;
    let answer = price(&request("[]", Some(plan)));
    // Value's maxima ($3,400 / $6,800) are above the benchmark's ($3,000 / $6,000).
    let value = answer.versions[1].priced.as_ref().unwrap();
    assert_eq!(
        value.comparison.oop_max_individual_lower_by_cents,
        Some(Cents::ZERO)
    );
    assert_eq!(
        value.comparison.oop_max_family_lower_by_cents,
        Some(Cents::ZERO)
    );
    assert!(
        answer
            .assumptions
            .iter()
            .any(|a| a.starts_with("1 rate in member_rates_cents not used"))
    );
    // E1 at its member rate, E2 on the PMPM fallback.
    assert_eq!(
        answer.base_plan.unwrap().monthly_cents,
        Cents::new(51_000 + 50_000)
    );
}
