//! Unit tests of `plan`.

use super::*;

const IRS: IrsLimits = IrsLimits {
    min_deductible_self_cents: 170_000,
    min_deductible_family_cents: 340_000,
    max_oop_self_cents: 850_000,
    max_oop_family_cents: 1_700_000,
};

fn plan(json: &str) -> PartnerPlan {
    serde_json::from_str(json).unwrap()
}

fn fields(json: &str) -> Vec<String> {
    match validate_partner_plan(&plan(json), &IRS) {
        Ok(_) => vec![],
        Err(e) => e.into_iter().map(|e| e.field).collect(),
    }
}

const GOOD: &str = r#"{"plan_type":"PPO","hsa_eligible":true,"deductible_individual_cents":340000,"oop_max_individual_cents":750000,"pmpm_cents":55000}"#;

#[test]
fn explicit_plan_rules() {
    assert!(fields(GOOD).is_empty());
    let with =
        |k: &str, v: &str| GOOD.replacen(&format!("\"{k}\":"), &format!("\"{k}\":{v},\"_\":"), 1);
    let _ = with;
    assert_eq!(
        fields(&GOOD.replace("\"PPO\"", "\"HMO\"")),
        ["plan.plan_type"]
    );
    assert_eq!(
        fields(&GOOD.replace("true", "false")),
        ["plan.hsa_eligible"]
    );
    assert_eq!(
        fields(&GOOD.replace(",\"pmpm_cents\":55000", "")),
        ["plan.pmpm_cents"]
    );
    assert_eq!(
        fields(&GOOD.replace("750000", "900000")),
        ["plan.oop_max_individual_cents"]
    );
    assert_eq!(
        fields(&GOOD.replace("}", ",\"oop_max_family_cents\":700000}")),
        ["plan.oop_max_family_cents"]
    );
    assert_eq!(
        fields(&GOOD.replace("}", ",\"oop_max_family_cents\":1800000}")),
        ["plan.oop_max_family_cents"]
    );
    assert_eq!(
        fields(&GOOD.replace("55000", "100000000001")),
        ["plan.pmpm_cents"]
    );
    assert_eq!(
        fields(r#"{"hsa_eligible":true,"pmpm_cents":1}"#),
        [
            "plan.plan_type",
            "plan.deductible_individual_cents",
            "plan.oop_max_individual_cents"
        ]
    );
    // camelCase is accepted.
    assert!(fields(r#"{"planType":"EPO","hsaEligible":true,"deductibleIndividualCents":340000,"oopMaxIndividualCents":750000,"monthlyRatesCents":{"employeeOnly":1,"employeeSpouse":2,"employeeChildren":2,"family":3}}"#).is_empty());
}

#[test]
fn defaults_are_reported() {
    let (base, rates, assumptions) = validate_partner_plan(&plan(GOOD), &IRS).unwrap();
    assert_eq!(base.deductible_family_cents, 680_000);
    assert_eq!(base.oop_max_family_cents, 1_500_000);
    assert_eq!(base.coinsurance_pct, 20);
    assert_eq!(rates.preferred_basis(), Some(RateBasis::Pmpm));
    assert_eq!(assumptions.len(), 3);
}

fn market(json: &str) -> MarketPlan {
    serde_json::from_str(json).unwrap()
}

#[test]
fn market_plans_are_classified_with_reasons() {
    let plans = vec![
        market(r#"{"metalTier":"Platinum","planType":"PPO","pmpmCents":90000,"carrier":"A"}"#),
        market(
            r#"{"metalTier":"Bronze","planType":"PPO","hsaEligible":true,"deductibleIndividualCents":340000,"oopMaxIndividualCents":750000,"pmpmCents":40000}"#,
        ),
        market(r#"{"metalTier":"Gold","planType":"HMO","pmpmCents":70000}"#),
        market(r#"{"metalTier":"Silver","planType":"PPO","hsaEligible":false,"pmpmCents":60000}"#),
        market(r#"{"metalTier":"Platinum","planType":"PPO"}"#),
    ];
    let c = classify(&plans, &IRS);
    assert_eq!(c.base_candidates, [1]);
    assert_eq!(c.benchmark_candidates, [0]);
    let reasons: Vec<(usize, &str)> = c
        .ignored
        .iter()
        .map(|p| (p.index, p.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            (
                2,
                "an HMO cannot be built on, and not a platinum PPO benchmark"
            ),
            (3, "not HSA-eligible, and not a platinum PPO benchmark"),
            (
                4,
                "no rates: send pmpmCents, monthlyRatesCents or memberRatesCents"
            ),
        ]
    );
    assert!(validate_market_plans(&plans).is_empty());
}
