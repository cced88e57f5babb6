//! Invalid price-on-plan bodies: 400 naming each field, and what an HR member may omit.

use std::time::Duration;

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::{
    app_with, census, census_and_plan, employees, group_count, market_plans, plan, price, price_ok,
    quote_creates, with_top,
};
use crate::http::{TestApp, assert_error};

// ---------------------------------------------------------------- 400 --

/// A body with `plan`'s field `name` set to `value` (removed when null).
fn with_plan_field(name: &str, value: Value) -> Value {
    let mut p = plan();
    let fields = p.as_object_mut().unwrap();
    if value.is_null() {
        fields.remove(name);
    } else {
        fields.insert(name.to_owned(), value);
    }
    json!({"census": census(), "plan": p})
}

/// The example body in camelCase, as an HR platform sends it.
fn camel_body() -> Value {
    json!({
        "census": census(),
        "plan": {
            "carrier": "Blue Shield of California",
            "planName": "Silver Full PPO HSA 3400",
            "planType": "PPO",
            "network": "Full PPO",
            "hsaEligible": true,
            "deductibleIndividualCents": 340000,
            "deductibleFamilyCents": 680000,
            "oopMaxIndividualCents": 750000,
            "oopMaxFamilyCents": 1500000,
            "coinsurancePct": 20,
            "pmpmCents": 52000
        },
    })
}

/// The camel body with `plan`'s `name` set to `value`.
fn camel_plan_field(name: &str, value: Value) -> Value {
    let mut b = camel_body();
    b["plan"][name] = value;
    b
}

/// Every 400 case: who sends it, the body, and the `details[].field`s.
fn invalid_cases() -> Vec<(&'static str, bool, Value, Vec<&'static str>)> {
    let mut bad_row = census();
    bad_row[1]["dob"] = json!("1985-13-45");
    let mut age_only = census();
    let row = age_only[0].as_object_mut().unwrap();
    row.remove("dob");
    row.insert("age".to_owned(), json!(41));
    let mut both_styles = plan();
    both_styles["planName"] = json!("Silver Full PPO HSA 3400");
    let rates: Vec<Value> = (0..10_001)
        .map(|i| json!({"external_id": format!("R{i}"), "monthly_cents": 50_000}))
        .collect();
    let platinum = market_plans()[0].clone();
    let many_plans = Value::Array(vec![platinum; 501]);
    let mut camel_bad_row = camel_body();
    camel_bad_row["census"][1]["dob"] = json!("not a date");
    let mut camel_both = camel_body();
    camel_both["plan"]["plan_name"] = json!("Silver");
    let mut camel_many = camel_body();
    camel_many["marketPlans"] = many_plans.clone();
    let mut no_tier = market_plans();
    no_tier[2].as_object_mut().unwrap().remove("metalTier");
    let mut odd_market = market_plans();
    odd_market[2]["colour"] = json!("red");
    let mut camel_twice = camel_body();
    camel_twice["marketPlans"] = market_plans();
    camel_twice["market_plans"] = market_plans();
    let mut odd_row = census();
    odd_row[0]["shoe_size"] = json!(44);
    let company = |k: &str, v: &str| {
        let mut c = json!({"name": "Acme Robotics", "domain": "acme-robotics.example",
                           "zip": "94103", "state": "CA"});
        c[k] = json!(v);
        with_top("company", c)
    };
    vec![
        (
            "HMO",
            false,
            with_plan_field("plan_type", json!("HMO")),
            vec!["plan.plan_type"],
        ),
        (
            "hsa_eligible false",
            false,
            with_plan_field("hsa_eligible", json!(false)),
            vec!["plan.hsa_eligible"],
        ),
        (
            "hsa_eligible missing",
            false,
            with_plan_field("hsa_eligible", Value::Null),
            vec!["plan.hsa_eligible"],
        ),
        (
            "plan_type missing",
            false,
            with_plan_field("plan_type", Value::Null),
            vec!["plan.plan_type"],
        ),
        (
            "deductible missing",
            false,
            with_plan_field("deductible_individual_cents", Value::Null),
            vec!["plan.deductible_individual_cents"],
        ),
        (
            "family maximum below the individual one",
            false,
            with_plan_field("oop_max_family_cents", json!(700_000)),
            vec!["plan.oop_max_family_cents"],
        ),
        (
            "maxima above the IRS limits",
            false,
            with_plan_field("oop_max_individual_cents", json!(900_000)),
            vec!["plan.oop_max_individual_cents"],
        ),
        (
            "10,001 member rates",
            false,
            with_plan_field("member_rates_cents", Value::Array(rates)),
            vec!["plan.member_rates_cents"],
        ),
        (
            "a member rate without external_id",
            false,
            with_plan_field("member_rates_cents", json!([{"monthly_cents": 50_000}])),
            vec!["plan.member_rates_cents[0].external_id"],
        ),
        (
            "pmpm_cents of the wrong type",
            false,
            with_plan_field("pmpm_cents", json!("lots")),
            vec!["plan.pmpm_cents"],
        ),
        (
            "a market plan without metal tier",
            false,
            with_top("market_plans", no_tier),
            vec!["market_plans[2].metal_tier"],
        ),
        (
            "an unknown market plan field",
            false,
            with_top("market_plans", odd_market),
            vec!["market_plans[2].colour"],
        ),
        (
            "an unknown census field",
            false,
            json!({"census": odd_row, "plan": plan()}),
            vec!["census[0].shoe_size"],
        ),
        (
            "an unknown company field",
            false,
            with_top("company", json!({"name": "Acme", "colour": "red"})),
            vec!["company.colour"],
        ),
        (
            "broker without plan",
            false,
            json!({"census": census()}),
            vec!["plan"],
        ),
        (
            "broker with market plans but without plan",
            false,
            json!({"census": census(), "market_plans": market_plans()}),
            vec!["plan"],
        ),
        (
            "without census",
            false,
            json!({"plan": plan()}),
            vec!["census"],
        ),
        (
            "unknown top-level field",
            false,
            with_top("colour", json!("red")),
            vec!["colour"],
        ),
        (
            "unknown plan field",
            false,
            with_plan_field("colour", json!("red")),
            vec!["plan.colour"],
        ),
        (
            "a plan field in both styles",
            false,
            json!({"census": census(), "plan": both_styles}),
            vec!["plan.plan_name"],
        ),
        (
            "a bad census row",
            false,
            json!({"census": bad_row, "plan": plan()}),
            vec!["census[1].dob"],
        ),
        (
            "a broker member with only age",
            false,
            json!({"census": age_only, "plan": plan()}),
            vec!["census[0].dob"],
        ),
        (
            "10,001 census rows",
            false,
            json!({"census": employees(10_001, "60601"), "plan": plan()}),
            vec!["census"],
        ),
        (
            "501 market plans",
            false,
            with_top("market_plans", many_plans),
            vec!["market_plans"],
        ),
        (
            "company.zip",
            false,
            company("zip", "123"),
            vec!["company.zip"],
        ),
        (
            "company.state",
            false,
            company("state", "Illinois"),
            vec!["company.state"],
        ),
        (
            "company.domain",
            false,
            company("domain", "Not A Domain"),
            vec!["company.domain"],
        ),
        (
            "fields",
            false,
            with_top("fields", json!(["nope"])),
            vec!["fields[0]"],
        ),
        (
            "exclude",
            false,
            with_top("exclude", json!(["plans", "nope"])),
            vec!["exclude[1]"],
        ),
        (
            "HR: HMO",
            true,
            camel_plan_field("planType", json!("HMO")),
            vec!["plan.planType"],
        ),
        (
            "HR: hsaEligible false",
            true,
            camel_plan_field("hsaEligible", json!(false)),
            vec!["plan.hsaEligible"],
        ),
        (
            "HR: unknown plan field",
            true,
            camel_plan_field("colour", json!("red")),
            vec!["plan.colour"],
        ),
        (
            "HR: a plan field in both styles",
            true,
            camel_both,
            vec!["plan.planName"],
        ),
        (
            "HR: a bad census row",
            true,
            camel_bad_row,
            vec!["census[1].dob"],
        ),
        (
            "HR: market plans in both styles",
            true,
            camel_twice,
            vec!["marketPlans"],
        ),
        (
            "HR: 501 market plans",
            true,
            camel_many,
            vec!["marketPlans"],
        ),
    ]
}

crate::http_on_both!(invalid_requests_are_400_and_change_nothing);
async fn invalid_requests_are_400_and_change_nothing(db: TestDb) {
    let app = app_with(db, quote_creates(1), Duration::from_secs(10));
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let mut wrong = Vec::new();
    for (case, camel, body, fields) in invalid_cases() {
        let key = if camel { &hr } else { &broker };
        let a = price(&svc, key, &body).await;
        assert_error(&a, 400, "invalid_request");
        if a.fields() != fields {
            wrong.push(format!(
                "{case}: want {fields:?}, got {}",
                a.body["details"]
            ));
        }
        if case == "a bad census row" {
            assert_eq!(a.body["details"][0]["index"], 1, "{}", a.body);
        }
    }
    // Nothing was stored and nothing charged: each key's one quote create
    // an hour is still there, and then spent.
    assert_eq!(group_count(&svc, &broker).await, 0);
    assert_eq!(group_count(&svc, &hr).await, 0);
    price_ok(&svc, &broker, &census_and_plan(), 201).await;
    price_ok(&svc, &hr, &camel_body(), 201).await;
    let other = with_top("company", json!({"name": "Other Co"}));
    assert_error(&price(&svc, &broker, &other).await, 429, "rate_limited");
    assert!(wrong.is_empty(), "wrong details:\n{}", wrong.join("\n"));
}

crate::http_on_both!(hr_members_may_send_age_and_omit_plan);
async fn hr_members_may_send_age_and_omit_plan(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;
    let mut members = census();
    for m in members.as_array_mut().unwrap() {
        let row = m.as_object_mut().unwrap();
        row.remove("dob");
        row.insert("age".to_owned(), json!(40));
    }
    let a = price_ok(&svc, &hr, &json!({"census": members, "plan": plan()}), 201).await;
    assert_eq!(a.body["status"], "ready", "{}", a.body);
    // Without `plan` and without market plans there is nothing to price on.
    let a = price(&svc, &hr, &json!({"census": census()})).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["plan"]);
}
