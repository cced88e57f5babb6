//! Price-on-plan: `price --census --plan [--market-plans]`.

use serde_json::Value;

use crate::common::{array, at, check_price_on_plan, example, int, ok, price, string};

const EMPLOYEES: i64 = 11;

fn ids(p: &Value) -> Vec<&str> {
    array(p, "/versions")
        .iter()
        .map(|v| string(v, "/id"))
        .collect()
}

#[test]
fn plan_and_market_plans_are_priced_by_the_engine() {
    let p = ok(price(&example("census.json"))
        .arg("--plan")
        .arg(example("plan.json"))
        .arg("--market-plans")
        .arg(example("market_plans.json")));
    check_price_on_plan(&p, EMPLOYEES);
    assert_eq!(string(&p, "/status"), "ready");
    assert!(at(&p, "/reason").is_null());
    assert_eq!(string(&p, "/pricing_method"), "engine");
    assert_eq!(int(&p, "/census_members"), 12);
    assert_eq!(ids(&p), ["diamond", "value"]);
    for v in array(&p, "/versions") {
        assert_eq!(string(v, "/status"), "ready", "{}", string(v, "/id"));
        assert!(at(v, "/hsa/eligible").as_bool().unwrap());
        // A PMPM plan: the partner plan's own PMPM comes back unchanged.
        assert_eq!(int(v, "/priced/figures/your_plan_pmpm_cents"), 52_000);
    }

    // The base is the partner's plan, priced on its PMPM.
    assert_eq!(string(&p, "/base_plan/source"), "partner_plan");
    assert_eq!(string(&p, "/base_plan/rate_basis"), "pmpm");
    assert!(!at(&p, "/base_from_market").as_bool().unwrap());
    assert_eq!(
        string(&p, "/base_plan/plan/plan_name"),
        "Silver Full PPO HSA 3400"
    );

    // The benchmark is the platinum PPO among the market plans (index 0).
    assert_eq!(string(&p, "/benchmark/source"), "market_plans");
    assert_eq!(int(&p, "/benchmark/market_index"), 0);
    assert_eq!(string(&p, "/benchmark/metal_tier"), "Platinum");

    // Market plans: 0 benchmark, 2 a base candidate, 1/3/4 ignored.
    assert_eq!(int(&p, "/used_plans/sent"), 5);
    assert_eq!(int(&p, "/used_plans/used"), 2);
    assert_eq!(int(&p, "/used_plans/base_candidates"), 1);
    assert_eq!(int(&p, "/used_plans/benchmark_candidates"), 1);
    let ignored: Vec<(i64, &str)> = array(&p, "/ignored_plans")
        .iter()
        .map(|i| (int(i, "/index"), string(i, "/reason")))
        .collect();
    assert_eq!(ignored.len(), 3, "{ignored:?}");
    let reason = |index: i64| {
        ignored
            .iter()
            .find(|(i, _)| *i == index)
            .map(|(_, r)| *r)
            .unwrap_or_else(|| panic!("plan {index} is not ignored: {ignored:?}"))
    };
    assert!(reason(1).contains("HMO"), "{}", reason(1));
    assert!(reason(3).contains("not HSA-eligible"), "{}", reason(3));
    assert!(reason(4).starts_with("no rates"), "{}", reason(4));
    assert_eq!(
        string(&array(&p, "/ignored_plans")[0], "/carrier"),
        "Kaiser Permanente"
    );
}

#[test]
fn version_flag_filters_the_printed_versions() {
    let run = |version: &str| {
        ok(price(&example("census.json"))
            .arg("--plan")
            .arg(example("plan.json"))
            .arg("--market-plans")
            .arg(example("market_plans.json"))
            .args(["--version", version]))
    };
    let value = run("value");
    assert_eq!(ids(&value), ["value"]);
    check_price_on_plan(&value, EMPLOYEES);
    let diamond = run("diamond");
    assert_eq!(ids(&diamond), ["diamond"]);
    check_price_on_plan(&diamond, EMPLOYEES);
    // Filtering only selects what is printed: the rest is unchanged.
    assert_eq!(at(&value, "/benchmark"), at(&diamond, "/benchmark"));
    assert_eq!(at(&value, "/ignored_plans"), at(&diamond, "/ignored_plans"));
}

#[test]
fn without_a_platinum_ppo_the_card_benchmark_is_cost_plus() {
    let p = ok(price(&example("census.json"))
        .arg("--plan")
        .arg(example("plan.json")));
    check_price_on_plan(&p, EMPLOYEES);
    assert_eq!(string(&p, "/pricing_method"), "cost_plus");
    assert_eq!(string(&p, "/benchmark/source"), "rate_card");
    assert_eq!(int(&p, "/used_plans/sent"), 0);
    assert_eq!(ids(&p), ["diamond", "value"]);
}

#[test]
fn without_a_plan_the_base_is_chosen_among_the_market_plans() {
    let p = ok(price(&example("census.json"))
        .arg("--market-plans")
        .arg(example("market_plans.json")));
    check_price_on_plan(&p, EMPLOYEES);
    assert_eq!(string(&p, "/pricing_method"), "engine");
    assert!(at(&p, "/base_from_market").as_bool().unwrap());
    assert_eq!(string(&p, "/base_plan/source"), "market_plans");
    assert_eq!(int(&p, "/base_plan/market_index"), 2, "the bronze HSA PPO");
    assert_eq!(
        string(&p, "/base_plan/market_plan/plan_name"),
        "Bronze PPO HSA 3400/7500"
    );
    assert_eq!(ids(&p), ["diamond", "value"]);
}

#[test]
fn market_plans_without_a_usable_base_are_unavailable_not_an_error() {
    let dir = crate::common::scratch("no_usable_base");
    let plans = crate::common::write(
        &dir,
        "market_plans.json",
        r#"[{"metalTier":"Gold","planType":"HMO","pmpmCents":70000},
            {"metalTier":"Platinum","planType":"PPO","pmpmCents":95000}]"#,
    );
    let p = ok(price(&example("census.json"))
        .arg("--market-plans")
        .arg(&plans));
    assert_eq!(string(&p, "/status"), "unavailable");
    assert!(string(&p, "/reason").contains("qualifies as a base"));
    assert!(at(&p, "/base_plan").is_null());
    for v in array(&p, "/versions") {
        assert_eq!(string(v, "/status"), "unavailable");
        assert!(at(v, "/priced").is_null());
    }
    assert_eq!(int(&array(&p, "/ignored_plans")[0], "/index"), 0);
}
