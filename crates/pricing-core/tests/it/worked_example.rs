//! The worked example of `docs/pricing.md`, recomputed by hand and checked
//! against the engine to the cent. The figures block of the document is
//! parsed, so the document cannot drift from the engine.
#![expect(
    clippy::unwrap_used,
    reason = "fixture helpers: a malformed fixture or document must fail the test loudly"
)]

use std::collections::BTreeMap;

use pricing_core::price_on_plan::PriceOnPlan;
use pricing_core::{
    CensusMember, CensusRules, PartnerPlan, PriceOnPlanRequest, PricingContext, RateCard,
    RatedCensus,
};
use time::macros::date;

fn census() -> Vec<CensusMember> {
    serde_json::from_str(
        r#"[
 {"external_id":"E-001","dob":"1985-04-02","zip":"60601","employment_type":"full_time","dependents":[]},
 {"external_id":"E-002","dob":"1978-09-15","zip":"60601","employment_type":"full_time","dependents":[{"relationship":"spouse","dob":"1980-01-20"},{"relationship":"child","dob":"2015-06-01"}]},
 {"external_id":"E-003","dob":"1992-11-30","zip":"60601","employment_type":"full_time"}
]"#,
    )
    .unwrap()
}

fn plan() -> PartnerPlan {
    serde_json::from_str(
        r#"{"carrier":"Example Health","plan_name":"HSA PPO 3400","plan_type":"PPO","network":"Example PPO","hsa_eligible":true,"deductible_individual_cents":340000,"oop_max_individual_cents":750000,"pmpm_cents":52000}"#,
    )
    .unwrap()
}

/// Rounds `num / den` half away from zero (non-negative inputs).
fn round(num: i128, den: i128) -> i128 {
    (2 * num + den) / (2 * den)
}

/// The `key = value` lines of the fenced `text` block after "The machine-checked figures".
fn documented() -> BTreeMap<String, i128> {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/pricing.md"
    ))
    .unwrap();
    let (_, rest) = doc.split_once("The machine-checked figures").unwrap();
    let (_, block) = rest.split_once("```text\n").unwrap();
    let (block, _) = block.split_once("```").unwrap();
    block
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(" = ").unwrap();
            (k.to_owned(), v.parse().unwrap())
        })
        .collect()
}

fn engine() -> (PriceOnPlan, i128) {
    let card = RateCard::builtin_2026().unwrap();
    let ctx = PricingContext {
        card: &card,
        plan_year_start: date!(2026 - 01 - 01),
        partner: None,
        rules: CensusRules { require_dob: true },
    };
    let req = PriceOnPlanRequest {
        census: census(),
        plan: Some(plan()),
        ..PriceOnPlanRequest::default()
    };
    let rated = RatedCensus::build(
        &req.census,
        pricing_core::CensusContext {
            card: &card,
            plan_year_start: ctx.plan_year_start,
            partner: None,
            rules: ctx.rules,
            fallback_zip: None,
        },
    )
    .unwrap();
    (
        pricing_core::price_on_plan(&req, ctx).unwrap(),
        rated.lives_e8,
    )
}

#[test]
fn the_documented_example_is_reproduced_to_the_cent() {
    let doc = documented();
    let (answer, lives_e8) = engine();
    let mut got: BTreeMap<String, i128> = BTreeMap::new();

    // Step 1: lives.
    let lives = 3 * 100_000_000 + 2 * 100_000_000 + 89_000_000;
    assert_eq!(lives_e8, lives);
    got.insert("lives_e8".into(), lives);
    assert_eq!(answer.covered_lives, 6);
    assert_eq!(answer.tiers, [2, 0, 0, 1]);

    // Step 2: base = PMPM × people, the unknown household at 1.89 people.
    let base = 52_000 + 3 * 52_000 + round(52_000 * 189, 100);
    got.insert("base_monthly_cents".into(), base);

    // Step 3: benchmark at IL-01 (56,670¢ at 21), rounded per person.
    let rate = |milli: i128| round(56_670 * milli, 1000);
    let e1 = rate(1278);
    let e2 = rate(1563) + rate(1444) + rate(765);
    let (me, child) = (rate(1198), rate(765));
    let comps = [
        me,
        2 * me,
        me + child,
        me + 2 * child,
        2 * me + child,
        2 * me + 2 * child,
    ];
    let weights = [
        5500 * 10_000,
        1500 * 10_000,
        1000 * 2000,
        1000 * 8000,
        2000 * 2000,
        2000 * 8000,
    ];
    let e3 = round(
        comps.iter().zip(weights).map(|(c, w)| c * w).sum(),
        100_000_000,
    );
    assert_eq!((e1, e2, e3), (72_424, 213_759, 115_063));
    let bench = e1 + e2 + e3;
    got.insert("benchmark_monthly_cents".into(), bench);
    assert_eq!(i128::from(answer.benchmark.monthly_cents.get()), bench);

    // Steps 4 and 5 for each version; the layer total comes from the
    // simulation, everything else by hand.
    for (v, name, fees_pmpm, (vi, vf, ve)) in [
        (0, "diamond", 3300, (170_000, 340_000, 340_000)),
        (1, "value", 2400, (340_000, 680_000, 340_000)),
    ] {
        let f = answer.versions[v].priced.as_ref().unwrap().figures;
        let fees = round(fees_pmpm * lives, 100_000_000);
        let layer = i128::from(f.layer_monthly_cents.get());
        let service = layer + fees;
        let joint = base + service;
        let your_pmpm = round(base * 100_000_000, lives);
        let service_pmpm = round(service * 100_000_000, lives);
        let (bi, bf): (i128, i128) = (750_000, 1_500_000);
        let family = |n: i128| {
            (1..=n)
                .map(|k| bf.min(k * bi) - vf.min(k * ve))
                .max()
                .unwrap()
        };
        let single = bi - vi;
        let exposure = single + family(3) + round(5500 * single + 4500 * family(2), 10_000);
        let allowance = vi + vf + round(5500 * vi + 4500 * vf, 10_000);
        let extra = (exposure - 12 * layer).max(0);
        let total = 12 * base + 12 * service + extra;
        for (k, x) in [
            ("fees_monthly_cents", fees),
            ("layer_monthly_cents", layer),
            ("service_monthly_cents", service),
            ("joint_monthly_cents", joint),
            ("your_plan_pmpm_cents", your_pmpm),
            ("service_pmpm_cents", service_pmpm),
            ("joint_pmpm_cents", your_pmpm + service_pmpm),
            ("theoretical_exposure_cents", exposure),
            ("member_oop_allowance_cents", allowance),
            ("modeled_extra_cents", extra),
            ("modeled_total_cents", total),
            ("headroom_cents", 12 * bench - total),
        ] {
            got.insert(format!("{name}.{k}"), x);
        }
        let am = f.all_max_year;
        let engine_figures = [
            ("fees_monthly_cents", f.fees_monthly_cents),
            ("service_monthly_cents", f.service_monthly_cents),
            ("joint_monthly_cents", f.joint_monthly_cents),
            ("your_plan_pmpm_cents", f.your_plan_pmpm_cents),
            ("service_pmpm_cents", f.service_pmpm_cents),
            ("joint_pmpm_cents", f.joint_pmpm_cents),
            ("theoretical_exposure_cents", am.theoretical_exposure_cents),
            ("member_oop_allowance_cents", am.member_oop_allowance_cents),
            ("modeled_extra_cents", am.modeled_extra_cents),
            ("modeled_total_cents", am.employer_total_cents),
            ("headroom_cents", am.headroom_cents),
        ];
        for (k, cents) in engine_figures {
            let key = format!("{name}.{k}");
            assert_eq!(i128::from(cents.get()), got[&key], "{key}: engine vs hand");
        }
        assert_eq!(i128::from(f.base_monthly_cents.get()), base);
    }

    // Every documented figure matches the hand computation (and so the engine).
    for (k, v) in &doc {
        assert_eq!(got.get(k), Some(v), "docs/pricing.md figure {k}");
    }
}
