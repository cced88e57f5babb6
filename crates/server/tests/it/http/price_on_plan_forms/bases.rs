//! Each rate basis pricing the base plan, and the classification of market plans.

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::TestApp;
use crate::http::price_on_plan::{
    assumes, census, census_and_plan, examples, int, items, market_plans, plan, price_ok, text,
};
use crate::http::price_on_plan_forms::check_camel_version;

/// A plan with no rates yet, to add one basis to.
fn rateless_plan() -> Value {
    json!({"carrier": "Acme Health", "plan_name": "PPO HSA 3400", "plan_type": "PPO",
           "hsa_eligible": true, "deductible_individual_cents": 340000,
           "oop_max_individual_cents": 750000})
}

/// Three employee-only households in Chicago: `E0`, `E1`, `E2`.
fn three() -> Value {
    crate::http::price_on_plan::employees(3, "60601")
}

// -------------------------------------------------------- rate bases --

crate::http_on_both!(each_rate_basis_prices_the_base_plan);
async fn each_rate_basis_prices_the_base_plan(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let rates = |cents: &[i64]| -> Value {
        cents
            .iter()
            .enumerate()
            .map(|(i, c)| json!({"external_id": format!("E{i}"), "monthly_cents": c}))
            .collect()
    };
    // (rates added to the plan, basis, base monthly, base PMPM); three
    // employee-only households.
    let cases = [
        (json!({"pmpm_cents": 52_000}), "pmpm", 156_000, 52_000),
        (
            json!({"monthly_rates_cents": {"employee_only": 45_000, "employee_spouse": 90_000,
                                           "employee_children": 80_000, "family": 130_000}}),
            "monthly_rates",
            135_000,
            45_000,
        ),
        // Member rates are preferred over the PMPM fallback.
        (
            json!({"member_rates_cents": rates(&[40_000, 50_000, 61_000]), "pmpm_cents": 99_999}),
            "member_rates",
            151_000,
            50_333,
        ),
        // E2 has no member rate: it falls back to the PMPM.
        (
            json!({"member_rates_cents": rates(&[40_000, 50_000]), "pmpm_cents": 60_000}),
            "member_rates",
            150_000,
            50_000,
        ),
        // ... or to the tier rates.
        (
            json!({"member_rates_cents": rates(&[40_000, 50_000]),
                   "monthly_rates_cents": {"employee_only": 45_000, "employee_spouse": 90_000,
                                           "employee_children": 80_000, "family": 130_000}}),
            "member_rates",
            135_000,
            45_000,
        ),
    ];
    for (n, (extra, basis, monthly, pmpm)) in cases.into_iter().enumerate() {
        let mut p = rateless_plan();
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        let body = json!({"census": three(), "plan": p});
        let h = price_ok(&svc, &hr, &body, 201).await;
        for v in items(&h.body, "/versions") {
            assert_eq!(v["rate_basis"]["base_plan"], basis, "case {n}");
            assert_eq!(v["rate_basis"]["benchmark"], "rate_card", "case {n}");
            let pc = &v["price_components"];
            assert_eq!(
                int(pc, "/underlying_premium_monthly_cents"),
                monthly,
                "case {n}"
            );
            assert_eq!(int(pc, "/underlying_pmpm_cents"), pmpm, "case {n}");
        }
        let fallback = n == 3 || n == 4;
        assert_eq!(
            assumes(
                &h.body,
                "1 employee without a member rate priced on the plan's fallback rate"
            ),
            fallback,
            "case {n}: {}",
            h.body["assumptions"]
        );
        let s = price_ok(&svc, &broker, &body, 201).await;
        for p in items(&s.body, "/plans") {
            assert_eq!(int(p, "/your_plan_pmpm_cents"), pmpm, "case {n}");
            assert_eq!(
                int(p, "/monthly_premium_cents") - int(p, "/service_monthly_cents"),
                monthly,
                "case {n}"
            );
        }
    }
}

// ------------------------------------------------ market classification --

crate::http_on_both!(market_plans_are_classified);
async fn market_plans_are_classified(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;

    // A platinum PPO among the market plans: the engine prices against it.
    let a = price_ok(&svc, &hr, &examples(), 201).await;
    let b = &a.body;
    assert_eq!(b["pricingMethod"], "engine");
    let used = json!({"sent": 5, "used": 2, "baseCandidates": 1, "benchmarkCandidates": 1});
    assert_eq!(b["usedPlans"], used);
    let ignored = items(b, "/ignoredPlans");
    let indexes: Vec<i64> = ignored.iter().map(|i| int(i, "/index")).collect();
    assert_eq!(indexes, [1, 3, 4]);
    assert!(text(&ignored[0], "/reason").contains("HMO"), "{b}");
    assert!(
        text(&ignored[1], "/reason").contains("not HSA-eligible"),
        "{b}"
    );
    assert!(text(&ignored[2], "/reason").starts_with("no rates"), "{b}");
    assert_eq!(ignored[0]["carrier"], "Kaiser Permanente");
    assert_eq!(ignored[2]["planName"], "Gold Open Access EPO 1000");
    for v in items(b, "/versions") {
        assert_eq!(v["pricing_method"], "engine");
        assert_eq!(v["pricedAgainst"]["source"], "market_plans");
        assert_eq!(
            v["pricedAgainst"]["planName"],
            "Platinum Full PPO 0/10 OffEx"
        );
        assert_eq!(v["benchmarkPlan"]["metalTier"], "Platinum");
        assert_eq!(v["rate_basis"]["benchmark"], "pmpm");
        assert_eq!(v["underlyingPlan"]["source"], "partner_plan");
    }

    // Without one: the card's benchmark, cost plus.
    let a = price_ok(&svc, &hr, &census_and_plan(), 201).await;
    let b = &a.body;
    assert_eq!(b["pricingMethod"], "cost_plus");
    let none = json!({"sent": 0, "used": 0, "baseCandidates": 0, "benchmarkCandidates": 0});
    assert_eq!(b["usedPlans"], none);
    assert_eq!(b["ignoredPlans"], json!([]));
    assert!(assumes(b, "Benchmark: the rate card's"), "{b}");
    for v in items(b, "/versions") {
        assert_eq!(v["pricing_method"], "cost_plus");
        assert_eq!(v["pricedAgainst"]["source"], "rate_card");
        assert_eq!(v["rate_basis"]["benchmark"], "rate_card");
    }

    // Without a plan: the base is chosen among the market plans.
    let market = json!({"census": census(), "marketPlans": market_plans()});
    let a = price_ok(&svc, &hr, &market, 201).await;
    let b = &a.body;
    assert_eq!(b["pricingMethod"], "engine");
    assert!(assumes(b, "Base plan chosen among the market plans"), "{b}");
    for v in items(b, "/versions") {
        check_camel_version(v);
        let u = &v["underlyingPlan"];
        assert_eq!(u["source"], "market_plans", "{u}");
        assert_eq!(u["planName"], "Bronze PPO HSA 3400/7500");
        assert_eq!(u["brokerPlan"]["planName"], "Bronze PPO HSA 3400/7500");
        assert_eq!(u["brokerPlan"]["carrierPlanId"], "ABC-BRZ-PPO-HSA-3400");
        assert_eq!(v["base_plan"]["plan_name"], "Bronze PPO HSA 3400/7500");
        assert_eq!(v["rate_basis"]["base_plan"], "pmpm");
        assert_eq!(int(v, "/joint/basePmpmCents"), 46_500);
    }

    // HSA plans whose maxima break the HDHP rules are ignored, with why.
    let hsa = market_plans()[2].clone();
    let mut inverted = hsa.clone();
    inverted["oopMaxFamilyCents"] = json!(700_000);
    let mut above_irs = hsa.clone();
    above_irs["oopMaxIndividualCents"] = json!(900_000);
    above_irs["oopMaxFamilyCents"] = json!(1_800_000);
    let body = json!({"census": census(), "plan": plan(), "marketPlans": [inverted, above_irs]});
    let a = price_ok(&svc, &hr, &body, 201).await;
    let ignored = items(&a.body, "/ignoredPlans");
    assert_eq!(ignored.len(), 2, "{}", a.body);
    assert!(
        text(&ignored[0], "/reason").contains("family out-of-pocket maximum is below"),
        "{}",
        a.body
    );
    assert!(text(&ignored[1], "/reason").contains("IRS"), "{}", a.body);
    let none_used = json!({"sent": 2, "used": 0, "baseCandidates": 0, "benchmarkCandidates": 0});
    assert_eq!(a.body["usedPlans"], none_used);

    // Only a base candidate among them: base from the market, card
    // benchmark.
    let base_only = json!({"census": census(), "marketPlans": [market_plans()[2].clone()]});
    let a = price_ok(&svc, &hr, &base_only, 201).await;
    let b = &a.body;
    assert_eq!(b["pricingMethod"], "cost_plus");
    let one = json!({"sent": 1, "used": 1, "baseCandidates": 1, "benchmarkCandidates": 0});
    assert_eq!(b["usedPlans"], one);
    for v in items(b, "/versions") {
        assert_eq!(v["underlyingPlan"]["source"], "market_plans");
        assert_eq!(v["pricedAgainst"]["source"], "rate_card");
    }
}
