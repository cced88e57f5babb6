//! Market-rate quotes: `price --census` without a plan.

use crate::common::{array, at, check_quote, example, int, ok, price, string};

/// Counted employees of `examples/census.json`: 12 rows, one a contractor.
const EMPLOYEES: i64 = 11;

#[test]
fn example_census_is_quoted() {
    let q = ok(&mut price(&example("census.json")));
    check_quote(&q, EMPLOYEES);
    assert_eq!(string(&q, "/plan/id"), "diamond", "diamond is the default");
    assert_eq!(string(&q, "/status"), "ready");
    // The API's default: the first day of next month.
    let next = domain::services::quotes::next_month_start(time::OffsetDateTime::now_utc().date());
    assert_eq!(
        string(&q, "/plan_year_start_date"),
        pricing_core::census::date_opt::format(next)
    );
    assert_eq!(
        int(&q, "/employee_contribution_premium_cents"),
        0,
        "the employer pays 100% by default"
    );
    assert!(at(&q, "/hsa/eligible").as_bool().unwrap());
    // The primary area is San Francisco (most employees are in 94103/94110).
    assert_eq!(
        string(&q, "/pricing_source"),
        "rate-card 2026.1 default > area:CA-04"
    );
    let assumptions: Vec<&str> = array(&q, "/assumptions")
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        assumptions.contains(&"1 contractor is excluded from pricing."),
        "{assumptions:?}"
    );
    assert!(
        assumptions
            .iter()
            .any(|a| a.starts_with("1 household without submitted dependents")),
        "the member without `dependents` is priced on the household mix: {assumptions:?}"
    );
    // 24 submitted people plus one unknown household's expected people.
    let lives = int(&q, "/census/covered_lives");
    assert!((25..=27).contains(&lives), "covered lives {lives}");
}

#[test]
fn version_value_is_quoted() {
    let q = ok(price(&example("census.json")).args(["--version", "value"]));
    check_quote(&q, EMPLOYEES);
    assert_eq!(string(&q, "/plan/id"), "value");
    let diamond = ok(price(&example("census.json")).args(["--version", "diamond"]));
    assert_eq!(string(&diamond, "/plan/id"), "diamond");
    // Same census, same base plan: only the layer differs.
    assert_eq!(
        int(&q, "/components/base_monthly_cents"),
        int(&diamond, "/components/base_monthly_cents")
    );
    assert!(
        int(&q, "/monthly/total_cents") < int(&diamond, "/monthly/total_cents"),
        "value (higher member maxima) costs less than diamond"
    );
}

#[test]
fn plan_year_start_is_used() {
    let q = ok(price(&example("census.json")).args(["--plan-year-start", "2026-07-01"]));
    check_quote(&q, EMPLOYEES);
    assert_eq!(string(&q, "/plan_year_start_date"), "2026-07-01");
}

#[test]
fn output_is_deterministic() {
    let a = crate::common::stdout_ok(&mut price(&example("census.json")));
    let b = crate::common::stdout_ok(&mut price(&example("census.json")));
    assert_eq!(a, b);
}

#[test]
fn age_only_members_are_quoted_with_allow_age() {
    let dir = crate::common::scratch("age_only_allowed");
    let census = crate::common::write(
        &dir,
        "census.json",
        r#"{"members":[
            {"externalId":"A1","zip":"60601","age":41,"employmentType":"full_time","dependents":[{"relationship":"child","age":9}]},
            {"external_id":"A2","zip":"60601","age":29,"dependents":[]}
        ]}"#,
    );
    let q = ok(price(&census).arg("--allow-age"));
    check_quote(&q, 2);
    assert_eq!(
        string(&q, "/pricing_source"),
        "rate-card 2026.1 default > area:IL-01"
    );
    assert!(
        array(&q, "/assumptions")
            .iter()
            .any(|a| a.as_str().unwrap().starts_with("Ages taken from `age`")),
        "{}",
        at(&q, "/assumptions")
    );
}

/// Without `--engine`, `price` prints what the API answers: the Quote
/// resource's fields (all but the stored quote's identity), with the same
/// figures as the engine's; and with a plan, price-on-plan's broker form.
#[test]
fn price_prints_the_api_shapes() {
    use crate::common::price_as_api;
    use serde_json::Value;

    let census = example("census.json");
    let api = ok(&mut price_as_api(&census));
    let engine = ok(&mut price(&census));
    let doc = serde_json::to_value(http_api::openapi()).unwrap();
    let mut documented = properties(&doc, &doc["components"]["schemas"]["QuoteOut"]);
    documented.retain(|k| {
        ![
            "id",
            "group_id",
            "mode",
            "expires_at",
            "created_at",
            "acceptance",
        ]
        .contains(&k.as_str())
    });
    documented.sort_unstable();
    documented.dedup();
    let mut printed: Vec<String> = api.as_object().unwrap().keys().cloned().collect();
    printed.sort_unstable();
    assert_eq!(printed, documented, "{api:#}");
    assert_eq!(string(&api, "/status"), "ready");
    assert_eq!(int(&api, "/census/employees"), EMPLOYEES);
    assert_eq!(
        int(&api, "/monthly/total_cents"),
        int(&engine, "/monthly/total_cents")
    );
    assert_eq!(
        int(&api, "/annual/total_cents"),
        int(&engine, "/annual_total_cents")
    );
    assert_eq!(
        at(&api, "/employee_contribution/employer_contribution_pct"),
        100
    );

    // With a plan: the broker's `plans`, keys as `POST /price-on-plan`.
    let p = ok(price_as_api(&census)
        .arg("--plan")
        .arg(example("plan.json")));
    let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["assumptions", "ignored_plans", "plans", "reason", "status"],
        "{p:#}"
    );
    let plans = array(&p, "/plans");
    assert_eq!(
        plans
            .iter()
            .map(|v| v["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["diamond", "value"]
    );
    let diamond = &plans[0];
    assert!(diamond["pmpm_cents"].as_i64().unwrap() > 0, "{diamond}");
    assert_eq!(
        diamond["pmpm_cents"].as_i64().unwrap(),
        diamond["your_plan_pmpm_cents"].as_i64().unwrap()
            + diamond["service_pmpm_cents"].as_i64().unwrap()
    );
    assert!(matches!(&p["reason"], Value::Null));
}

/// The property names of an object schema of `doc`, through `$ref` and
/// `allOf`.
fn properties(doc: &serde_json::Value, schema: &serde_json::Value) -> Vec<String> {
    if let Some(name) = schema["$ref"].as_str() {
        let name = name.trim_start_matches("#/components/schemas/");
        return properties(doc, &doc["components"]["schemas"][name]);
    }
    let mut out: Vec<String> = schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    for part in schema["allOf"].as_array().into_iter().flatten() {
        out.extend(properties(doc, part));
    }
    out
}
