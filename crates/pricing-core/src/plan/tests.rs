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

#[test]
fn every_plan_amount_is_bounded_by_its_kind() {
    use crate::money::{MAX_ANNUAL_CENTS as A, MAX_MONTHLY_CENTS as M};
    // The explicit plan: each amount at its maximum passes the range rule
    // (the IRS rules still apply to the design), one cent more names it.
    let tiers = |v: i64| {
        format!(
            r#"{{"employee_only":{v},"employee_spouse":{v},"employee_children":{v},"family":{v}}}"#
        )
    };
    let explicit = |ded: i64, pmpm: i64, tier: i64, member: i64| {
        format!(
            r#"{{"plan_type":"PPO","hsa_eligible":true,"deductible_individual_cents":{ded},"deductible_family_cents":{ded},"oop_max_individual_cents":{ded},"oop_max_family_cents":{ded},"pmpm_cents":{pmpm},"monthly_rates_cents":{},"member_rates_cents":[{{"external_id":"E1","monthly_cents":{member}}}]}}"#,
            tiers(tier)
        )
    };
    assert!(fields(&explicit(850_000, M, M, M)).is_empty());
    let range = |json: &str| -> Vec<String> {
        validate_partner_plan(&plan(json), &IRS)
            .err()
            .unwrap_or_default()
            .into_iter()
            .filter(|e| {
                e.message
                    .starts_with("must be an integer of cents from 0 to")
            })
            .map(|e| e.field)
            .collect()
    };
    assert!(range(&explicit(A, M, M, M)).is_empty());
    assert_eq!(
        range(&explicit(A + 1, M + 1, M + 1, M + 1)),
        [
            "plan.deductible_individual_cents",
            "plan.deductible_family_cents",
            "plan.oop_max_individual_cents",
            "plan.oop_max_family_cents",
            "plan.pmpm_cents",
            "plan.monthly_rates_cents.employee_only",
            "plan.monthly_rates_cents.employee_spouse",
            "plan.monthly_rates_cents.employee_children",
            "plan.monthly_rates_cents.family",
            "plan.member_rates_cents[0].monthly_cents",
        ]
    );
    assert_eq!(
        range(&explicit(850_000, i64::MAX, M, -1)),
        [
            "plan.pmpm_cents",
            "plan.member_rates_cents[0].monthly_cents"
        ]
    );

    // Market plans: annual amounts (copays and the drug deductible too) and
    // monthly rates.
    let market = |a: i64, m: i64| -> Vec<MarketPlan> {
        let copays = [
            "primary_care",
            "specialist",
            "urgent_care",
            "emergency_room",
            "rx_generic",
            "rx_preferred",
            "rx_specialty",
        ]
        .map(|k| format!("\"{k}\":{a}"))
        .join(",");
        serde_json::from_str(&format!(
            r#"[{{"metal_tier":"Gold","deductible_individual_cents":{a},"deductible_family_cents":{a},"oop_max_individual_cents":{a},"oop_max_family_cents":{a},"rx_deductible_cents":{a},"copays_cents":{{{copays}}},"pmpm_cents":{m},"monthly_rates_cents":{},"member_rates_cents":[{{"external_id":"E1","monthly_cents":{m}}}]}}]"#,
            tiers(m)
        ))
        .unwrap()
    };
    assert!(validate_market_plans(&market(A, M)).is_empty());
    let errs = validate_market_plans(&market(A + 1, M + 1));
    assert_eq!(errs.len(), 18, "{errs:#?}");
    assert!(errs.iter().all(|e| e.index == Some(0)));
    let at = |name: &str| {
        errs.iter()
            .find(|e| e.field == format!("market_plans[0].{name}"))
            .map(|e| e.message.clone())
    };
    assert_eq!(
        at("copays_cents.rx_specialty").as_deref(),
        Some("must be an integer of cents from 0 to 1000000000")
    );
    assert_eq!(
        at("member_rates_cents[0].monthly_cents").as_deref(),
        Some("must be an integer of cents from 0 to 100000000")
    );
}
