//! The money maxima (`pricing_core::money`): every amount a partner sends
//! is checked against its maximum and named in `details` when it is out of
//! range (groups, price-on-plan plans and market plans), amounts at their
//! maxima price, and an amount that still overflows in pricing answers 422
//! `amount_out_of_range`, never a 500.

use actix_web::body::MessageBody;
use actix_web::test::TestRequest;
use domain::group::CurrentCoverage;
use domain::ids::GroupId;
use domain::mode::Mode;
use pricing_core::money::{MAX_ANNUAL_CENTS, MAX_MONTHLY_CENTS};
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::{Svc, census, plan, price, price_ok};
use crate::http::{
    TestApp, assert_error, create_group, get, group_body, patch, post, put, scope, send,
};

/// A group body whose current coverage costs `pepm` a month.
fn group_with_pepm(domain: &str, pepm: Value) -> Value {
    let mut g = group_body(domain);
    g["current_coverage"]["pepm_cents"] = pepm;
    g
}

/// Four Chicago employees.
fn chicago() -> Value {
    let members: Vec<Value> = (0..4)
        .map(|i| json!({"external_id": format!("E{i}"), "dob": "1985-06-15", "zip": "60601", "dependents": []}))
        .collect();
    json!({"members": members})
}

/// Writes [`chicago`] into `gid`, runs its market comparison and asks for
/// a quote.
async fn quote_after_census<B: MessageBody>(
    app: &TestApp,
    svc: &impl Svc<B>,
    key: &str,
    gid: &str,
) -> crate::http::Answer {
    let path = format!("/v1/groups/{gid}/census");
    let a = send(svc, put(&path, key, &chicago())).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(app.run_jobs().await, 1);
    send(
        svc,
        post(&format!("/v1/groups/{gid}/quotes"), key, &json!({})),
    )
    .await
}

/// Asserts a 400 `invalid_request` whose `details` name exactly `fields`,
/// each with the range message of `max`.
fn assert_out_of_range(a: &crate::http::Answer, fields: &[&str], max: i64) {
    assert_error(a, 400, "invalid_request");
    assert_eq!(a.fields(), fields, "{}", a.body);
    for d in a.body["details"].as_array().unwrap() {
        assert_eq!(
            d["message"],
            format!("must be an integer of cents from 0 to {max}"),
            "{d}"
        );
    }
}

crate::http_on_both!(group_pepm_is_bounded_and_prices_at_its_maximum);
async fn group_pepm_is_bounded_and_prices_at_its_maximum(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    const FIELD: &str = "current_coverage.pepm_cents";

    // One cent over the maximum, i64::MAX and a negative amount: 400.
    for bad in [json!(MAX_MONTHLY_CENTS + 1), json!(i64::MAX), json!(-1)] {
        let body = group_with_pepm("over.example", bad.clone());
        let a = send(&svc, post("/v1/groups", &key, &body)).await;
        assert_out_of_range(&a, &[FIELD], MAX_MONTHLY_CENTS);
    }

    // At the maximum: accepted, stored, and a quote prices (no overflow).
    let g = create_group(
        &svc,
        &key,
        &group_with_pepm("max.example", json!(MAX_MONTHLY_CENTS)),
    )
    .await;
    let gid = g["id"].as_str().unwrap().to_owned();
    assert_eq!(g["current_coverage"]["pepm_cents"], MAX_MONTHLY_CENTS);
    let q = quote_after_census(&app, &svc, &key, &gid).await;
    assert_eq!(q.status, 201, "{}", q.body);
    let cmp = &q.body["comparison"];
    assert_eq!(cmp["prior_pepm_cents"], MAX_MONTHLY_CENTS, "{}", q.body);
    assert_eq!(cmp["basis"], "current_coverage", "{}", q.body);

    // PATCH follows the same rule and leaves the group unchanged.
    let path = format!("/v1/groups/{gid}");
    for bad in [json!(MAX_MONTHLY_CENTS + 1), json!(i64::MAX)] {
        let body = json!({"current_coverage": {"pepm_cents": bad}});
        let a = send(&svc, patch(&path, &key, &body)).await;
        assert_out_of_range(&a, &[FIELD], MAX_MONTHLY_CENTS);
    }
    let read = send(&svc, get(&path, &key)).await;
    assert_eq!(
        read.body["current_coverage"]["pepm_cents"],
        MAX_MONTHLY_CENTS
    );

    // The OpenAPI document states the same maximum.
    let doc = send(&svc, TestRequest::get().uri("/v1/openapi.json")).await;
    let schemas = &doc.body["components"]["schemas"];
    let pepm = &schemas["CoverageWire"]["properties"]["pepm_cents"];
    assert_eq!(pepm["maximum"].as_f64(), Some(1e8), "{pepm}");
    assert_eq!(MAX_MONTHLY_CENTS, 100_000_000);
}

crate::http_on_both!(an_amount_that_overflows_in_pricing_answers_422);
async fn an_amount_that_overflows_in_pricing_answers_422(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    // A group stored before the maxima existed: its PEPM is i64::MAX.
    let g = create_group(&svc, &key, &group_body("legacy.example")).await;
    let gid = GroupId::parse(g["id"].as_str().unwrap()).unwrap();
    let scope = scope(&partner, Mode::Test);
    let mut stored = app.db.stores.groups.group(&scope, &gid).await.unwrap();
    stored.current_coverage = Some(CurrentCoverage {
        pepm_cents: Some(i64::MAX),
        ..stored.current_coverage.unwrap_or_default()
    });
    app.db
        .stores
        .groups
        .update_group(&scope, &stored)
        .await
        .unwrap();

    let q = quote_after_census(&app, &svc, &key, gid.as_str()).await;
    assert_error(&q, 422, "amount_out_of_range");
    let fields: Vec<&str> = q
        .body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(fields, ["error", "message"], "{}", q.body);
}

/// The example census and plan with `plan[name] = value`.
fn with_plan(fields: &[(&str, Value)]) -> Value {
    let mut p = plan();
    for (name, value) in fields {
        p[*name] = value.clone();
    }
    json!({"census": census(), "plan": p})
}

crate::http_on_both!(price_on_plan_amounts_are_bounded);
async fn price_on_plan_amounts_are_bounded(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let (m, a) = (MAX_MONTHLY_CENTS, MAX_ANNUAL_CENTS);

    // Annual plan amounts one cent over: each named.
    for name in [
        "deductible_individual_cents",
        "deductible_family_cents",
        "oop_max_individual_cents",
        "oop_max_family_cents",
    ] {
        for bad in [json!(a + 1), json!(i64::MAX)] {
            let r = price(&svc, &key, &with_plan(&[(name, bad)])).await;
            assert_out_of_range(&r, &[&format!("plan.{name}")], a);
        }
    }
    // Monthly rates one cent over.
    let r = price(&svc, &key, &with_plan(&[("pmpm_cents", json!(m + 1))])).await;
    assert_out_of_range(&r, &["plan.pmpm_cents"], m);
    let tiers = json!({"employee_only": m + 1, "employee_spouse": m,
                       "employee_children": m, "family": m});
    let r = price(&svc, &key, &with_plan(&[("monthly_rates_cents", tiers)])).await;
    assert_out_of_range(&r, &["plan.monthly_rates_cents.employee_only"], m);
    let member = json!([{"external_id": "E-001", "monthly_cents": i64::MAX}]);
    let r = price(&svc, &key, &with_plan(&[("member_rates_cents", member)])).await;
    assert_out_of_range(&r, &["plan.member_rates_cents[0].monthly_cents"], m);

    // Market plans: a copay and a rate over their maxima.
    let mut body = with_plan(&[]);
    body["market_plans"] = json!([{"metal_tier": "Platinum", "plan_type": "PPO",
        "pmpm_cents": m + 1, "copays_cents": {"specialist": a + 1}}]);
    let r = price(&svc, &key, &body).await;
    assert_error(&r, 400, "invalid_request");
    assert_eq!(
        r.fields(),
        [
            "market_plans[0].copays_cents.specialist",
            "market_plans[0].pmpm_cents",
        ],
        "{}",
        r.body
    );

    // At the maxima the rates price (the design stays within the IRS
    // limits an HSA plan must meet); a platinum benchmark may carry every
    // amount at its maximum.
    let mut body = with_plan(&[("pmpm_cents", json!(m))]);
    body["market_plans"] = json!([{"metal_tier": "Platinum", "plan_type": "PPO",
        "deductible_individual_cents": a, "oop_max_individual_cents": a,
        "oop_max_family_cents": a, "rx_deductible_cents": a,
        "copays_cents": {"specialist": a}, "pmpm_cents": m}]);
    let r = price_ok(&svc, &key, &body, 201).await;
    for p in r.body["plans"].as_array().unwrap() {
        assert!(p["pmpm_cents"].is_i64(), "{p}");
    }
}
