//! `POST /v1/price-on-plan` through the real application: the status codes
//! (201, 200 `unavailable`, 202 `pricing`, 400, 409, 422, 429), the wait
//! budget and polling, finalizing an `in_review` answer, the lead it
//! keeps, idempotency and isolation. The two answer forms, their
//! snapshots, the rate bases, the market-plan classification and
//! `fields`/`exclude` are in `price_on_plan_forms.rs`.

use std::collections::BTreeSet;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use http_api::{HttpConfig, Limits};
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{Answer, TestApp, assert_error, create_group, get, group_body, post, put, send};

/// The endpoint.
pub(crate) const PATH: &str = "/v1/price-on-plan";

/// The service of a [`TestApp`].
pub(crate) trait Svc<B>:
    Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}
impl<T, B> Svc<B> for T where
    T: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}

/// `crates/server/examples/census.json`'s members: 12 rows, 11 employees
/// and a contractor, one employee without `dependents`.
pub(crate) fn census() -> Value {
    let file: Value = serde_json::from_str(include_str!("../../../examples/census.json")).unwrap();
    file["members"].clone()
}

/// `crates/server/examples/plan.json`: a PPO HSA plan at $520 PMPM, $3,400
/// deductible, $7,500 out-of-pocket maximum.
pub(crate) fn plan() -> Value {
    serde_json::from_str(include_str!("../../../examples/plan.json")).unwrap()
}

/// `crates/server/examples/market_plans.json`: 0 a platinum PPO benchmark,
/// 1 an HMO, 2 an HSA base candidate, 3 not HSA-eligible, 4 without rates.
pub(crate) fn market_plans() -> Value {
    serde_json::from_str(include_str!("../../../examples/market_plans.json")).unwrap()
}

/// The example census, plan and market plans (snake_case).
pub(crate) fn examples() -> Value {
    json!({"census": census(), "plan": plan(), "market_plans": market_plans()})
}

/// The example census and plan, without market plans.
pub(crate) fn census_and_plan() -> Value {
    json!({"census": census(), "plan": plan()})
}

/// `n` employee-only broker rows (`E0`, `E1`, …) in `zip`.
pub(crate) fn employees(n: usize, zip: &str) -> Value {
    let row = |i: usize| {
        let dob = format!("19{}-0{}-1{}", 60 + i % 40, 1 + i % 9, i % 10);
        json!({"external_id": format!("E{i}"), "dob": dob, "zip": zip, "dependents": []})
    };
    Value::Array((0..n).map(row).collect())
}

/// The keys of an object.
pub(crate) fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// A set of names.
pub(crate) fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

/// An integer field.
pub(crate) fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or_else(|| panic!("{pointer} is not an integer in {v}"))
}

/// A string field.
pub(crate) fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{pointer} is not a string in {v}"))
}

/// The items of an array field.
pub(crate) fn items<'a>(v: &'a Value, pointer: &str) -> &'a Vec<Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{pointer} is not an array in {v}"))
}

/// Whether `assumptions` has a sentence containing `part`.
pub(crate) fn assumes(answer: &Value, part: &str) -> bool {
    items(answer, "/assumptions")
        .iter()
        .filter_map(Value::as_str)
        .any(|s| s.contains(part))
}

/// `POST /v1/price-on-plan` with `body`.
pub(crate) async fn price<B: MessageBody>(svc: &impl Svc<B>, key: &str, body: &Value) -> Answer {
    send(svc, post(PATH, key, body)).await
}

/// [`price`], asserting `status`.
pub(crate) async fn price_ok<B: MessageBody>(
    svc: &impl Svc<B>,
    key: &str,
    body: &Value,
    status: u16,
) -> Answer {
    let a = price(svc, key, body).await;
    assert_eq!(a.status.as_u16(), status, "{}", a.body);
    a
}

/// How many groups the key sees.
pub(crate) async fn group_count<B: MessageBody>(svc: &impl Svc<B>, key: &str) -> usize {
    let a = send(svc, get("/v1/groups?limit=200", key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    items(&a.body, "/groups").len()
}

/// The application with `limits` and a wait budget of `budget`.
pub(crate) fn app_with(db: TestDb, limits: Limits, budget: Duration) -> TestApp {
    TestApp::with_parts(
        db,
        HttpConfig {
            limits,
            trusted_proxies: Vec::new(),
            body_timeout: std::time::Duration::from_secs(60),
        },
        |p| p.wait_budget = budget,
    )
}

/// Limits with `n` quote creates an hour.
pub(crate) fn quote_creates(n: u32) -> Limits {
    Limits {
        quote_creates_per_hour: n,
        ..Limits::default()
    }
}

/// A request with an `Idempotency-Key`.
fn keyed(req: TestRequest, key: &str) -> TestRequest {
    req.insert_header(("idempotency-key", key.to_owned()))
}

/// Whether `s` is `prefix` + 12 lowercase hex characters.
pub(crate) fn is_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|h| {
        h.len() == 12
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Snake pending (202) keys.
const SNAKE_PENDING: &[&str] = &[
    "status",
    "quote_id",
    "group_id",
    "retry_after_seconds",
    "message",
    "ignored_plans",
];

/// Camel pending (202) keys.
const CAMEL_PENDING: &[&str] = &[
    "quoteId",
    "groupId",
    "status",
    "retryAfterSeconds",
    "baseFromMarket",
    "note",
    "ignoredPlans",
    "usedPlans",
    "estimatedReadyAt",
    "waitingOn",
    "waitingOnNote",
    "sweep",
];

/// Asserts a 202 `pricing` answer (its `Retry-After` header equal to the
/// body's seconds, at least 1; its pending quote's id, and that quote's
/// `Location`) and returns the group id.
fn assert_pending(a: &Answer, camel: bool) -> String {
    assert_eq!(a.status, 202, "{}", a.body);
    let b = &a.body;
    assert_eq!(b["status"], "pricing", "{b}");
    let (pending, retry, group, quote) = if camel {
        (CAMEL_PENDING, "/retryAfterSeconds", "/groupId", "/quoteId")
    } else {
        (
            SNAKE_PENDING,
            "/retry_after_seconds",
            "/group_id",
            "/quote_id",
        )
    };
    assert_eq!(keys(b), set(pending), "{b}");
    let secs = int(b, retry);
    assert!(secs >= 1, "{b}");
    assert_eq!(a.header("retry-after"), Some(&*secs.to_string()));
    let qid = text(b, quote);
    assert!(is_id(qid, "qt_"), "{qid}");
    assert_eq!(
        a.header("location"),
        Some(&*format!("/v1/quotes/{qid}")),
        "a pending answer is polled at its quote"
    );
    let gid = text(b, group);
    assert!(is_id(gid, "grp_"), "{gid}");
    gid.to_owned()
}

// ---------------------------------------------------------------- 200 --

crate::http_on_both!(market_plans_without_a_base_answer_200_unavailable);
async fn market_plans_without_a_base_answer_200_unavailable(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;
    let body = json!({
        "census": census(),
        "marketPlans": [
            {"carrier": "Kaiser Permanente", "planName": "Gold HMO", "metalTier": "Gold",
             "planType": "HMO", "pmpmCents": 70000},
            {"carrier": "Blue Shield", "planName": "Platinum PPO", "metalTier": "Platinum",
             "planType": "PPO", "pmpmCents": 95000},
        ],
    });
    let a = price_ok(&svc, &hr, &body, 200).await;
    let b = &a.body;
    assert_eq!(b["status"], "unavailable", "{b}");
    assert!(text(b, "/reason").contains("qualifies as a base"), "{b}");
    let ignored = items(b, "/ignoredPlans");
    assert_eq!(ignored.len(), 1, "{b}");
    assert_eq!(ignored[0]["index"], 0);
    assert_eq!(ignored[0]["carrier"], "Kaiser Permanente");
    assert_eq!(ignored[0]["planName"], "Gold HMO");
    assert!(text(&ignored[0], "/reason").contains("HMO"), "{b}");
    let used = json!({"sent": 2, "used": 1, "baseCandidates": 0, "benchmarkCandidates": 1});
    assert_eq!(b["usedPlans"], used);
    let versions = items(b, "/versions");
    assert_eq!(versions.len(), 2, "{b}");
    for v in versions {
        assert_eq!(v["status"], "unavailable", "{v}");
        assert!(!text(v, "/reason").is_empty(), "{v}");
    }
    // It is an answer, not an error: a quote that reads back.
    let qid = text(b, "/quoteId");
    assert_eq!(a.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &hr)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(&read.body, b);
    // The same body again finds it.
    let again = price_ok(&svc, &hr, &body, 200).await;
    assert_eq!(again.raw, a.raw);
    assert_eq!(group_count(&svc, &hr).await, 1);
}

crate::http_on_both!(a_plan_below_both_versions_answers_200_unavailable);
async fn a_plan_below_both_versions_answers_200_unavailable(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let mut low = plan();
    for (k, v) in [
        ("deductible_individual_cents", 170_000),
        ("deductible_family_cents", 340_000),
        ("oop_max_individual_cents", 170_000),
        ("oop_max_family_cents", 340_000),
    ] {
        low[k] = json!(v);
    }
    let body = json!({"census": census(), "plan": low});

    let a = price_ok(&svc, &broker, &body, 200).await;
    let b = &a.body;
    assert_eq!(b["status"], "unavailable", "{b}");
    assert!(
        text(b, "/reason").contains("no version can be built on"),
        "{b}"
    );
    let plans = items(b, "/plans");
    let ids: Vec<&str> = plans.iter().map(|p| text(p, "/id")).collect();
    assert_eq!(ids, ["diamond", "value"]);
    for p in plans {
        assert_eq!(p["status"], "unavailable", "{p}");
        assert!(!text(p, "/reason").is_empty(), "{p}");
    }

    let a = price_ok(&svc, &hr, &body, 200).await;
    let b = &a.body;
    assert_eq!(b["status"], "unavailable", "{b}");
    assert!(b["reason"].is_string(), "{b}");
    for v in items(b, "/versions") {
        assert_eq!(v["status"], "unavailable", "{v}");
        assert!(!text(v, "/reason").is_empty(), "{v}");
    }
}

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

/// The example body with `key` set to `value` at the top level.
fn with_top(key: &str, value: Value) -> Value {
    let mut b = census_and_plan();
    b[key] = value;
    b
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

// ---------------------------------------------------------------- 422 --

crate::http_on_both!(unpriceable_censuses_are_422_and_leave_nothing);
async fn unpriceable_censuses_are_422_and_leave_nothing(db: TestDb) {
    let app = app_with(db, quote_creates(1), Duration::from_secs(10));
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let all = census();
    let contractor: Vec<Value> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["employment_type"] == "contractor")
        .cloned()
        .collect();
    assert_eq!(contractor.len(), 1);
    let a = price(&svc, &key, &json!({"census": contractor, "plan": plan()})).await;
    assert_error(&a, 422, "census_required");

    let mut terminated = employees(3, "60601");
    for m in terminated.as_array_mut().unwrap() {
        m["status"] = json!("terminated");
    }
    let a = price(&svc, &key, &json!({"census": terminated, "plan": plan()})).await;
    assert_error(&a, 422, "census_required");

    // No rate-card area for the census ZIP, and no company ZIP.
    let nowhere = json!({"census": employees(3, "00000"), "plan": plan()});
    let a = price(&svc, &key, &nowhere).await;
    assert_error(&a, 422, "market_unavailable");

    assert_eq!(group_count(&svc, &key).await, 0);
    // Uncharged: the one create of the hour prices the same census with a
    // priced company ZIP to fall back on.
    let mut located = nowhere.clone();
    located["company"] = json!({"zip": "60601"});
    let a = price_ok(&svc, &key, &located, 201).await;
    let stand_in = "3 employees whose ZIP has no priced rating area rated in area IL-01";
    assert!(assumes(&a.body, stand_in), "{}", a.body);
    assert_eq!(group_count(&svc, &key).await, 1);
}

// ---------------------------------------------------------------- 409 --

crate::http_on_both!(a_domain_held_by_an_enrolled_group_is_409);
async fn a_domain_held_by_an_enrolled_group_is_409(db: TestDb) {
    // Three creates an hour: the group's quote, the first lead, and one
    // after the conflict, which starts no pricing and costs nothing.
    let app = app_with(db, quote_creates(3), Duration::from_secs(10));
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = text(
        &create_group(&svc, &key, &group_body("held.com")).await,
        "/id",
    )
    .to_owned();
    let census_path = format!("/v1/groups/{gid}/census");
    let members = json!({"members": employees(2, "60601")});
    let a = send(&svc, put(&census_path, &key, &members)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.run_jobs().await;
    let q = send(
        &svc,
        post(&format!("/v1/groups/{gid}/quotes"), &key, &json!({})),
    )
    .await;
    assert_eq!(q.status, 201, "{}", q.body);
    let company = json!({"name": "Acme", "domain": "held.com"});
    let body = with_top("company", company);

    // Not yet enrolled: the domain is free to use for a lead.
    price_ok(&svc, &key, &body, 201).await;
    assert_eq!(group_count(&svc, &key).await, 2);

    let enroll = json!({"quote_id": q.body["id"],
                        "signatory": {"name": "Dana Lee", "email": "dana@held.com"}});
    let e = send(
        &svc,
        post(&format!("/v1/groups/{gid}/enrollments"), &key, &enroll),
    )
    .await;
    assert_eq!(e.status, 201, "{}", e.body);
    let mut other = body.clone();
    other["company"]["name"] = json!("Acme Again");
    let a = price(&svc, &key, &other).await;
    assert_error(&a, 409, "conflict");
    assert_eq!(group_count(&svc, &key).await, 2);
    let elsewhere = with_top("company", json!({"name": "Acme", "domain": "free.com"}));
    price_ok(&svc, &key, &elsewhere, 201).await;
    assert_eq!(group_count(&svc, &key).await, 3);
}

// ---------------------------------------------------- 202 and polling --

crate::http_on_both!(a_zero_budget_answers_202_then_the_same_body_finds_the_answer);
async fn a_zero_budget_answers_202_then_the_same_body_finds_the_answer(db: TestDb) {
    let app = app_with(db, quote_creates(1), Duration::ZERO);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let body = examples();

    let first = price(&svc, &key, &body).await;
    let gid = assert_pending(&first, false);
    assert_eq!(
        items(&first.body, "/ignored_plans").len(),
        3,
        "{}",
        first.body
    );
    let again = price(&svc, &key, &body).await;
    assert_eq!(assert_pending(&again, false), gid);
    // Another key of the same partner and mode finds the same pricing.
    let second_key = app.key(&partner, Mode::Test).await;
    let other_key = price(&svc, &second_key, &body).await;
    assert_eq!(assert_pending(&other_key, false), gid);
    assert_eq!(group_count(&svc, &key).await, 1);

    // While pricing, the group's quote is listed as `pricing` and reads
    // back as the pending answer.
    let list = send(&svc, get(&format!("/v1/groups/{gid}/quotes"), &key)).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let listed = items(&list.body, "/quotes");
    assert_eq!(listed.len(), 1, "{}", list.body);
    assert_eq!(listed[0]["status"], "pricing");
    let qid = text(&listed[0], "/id").to_owned();
    assert_eq!(first.body["quote_id"], json!(qid));
    let polled = first.header("location").unwrap().to_owned();
    let read = send(&svc, get(&polled, &key)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["status"], "pricing", "{}", read.body);
    assert_eq!(read.body["group_id"], json!(gid));
    assert_eq!(read.body["quote_id"], json!(qid));
    assert!(
        int(&read.body, "/retry_after_seconds") >= 1,
        "{}",
        read.body
    );

    assert_eq!(app.run_jobs().await, 1);

    // The same body — camelCase, keys in another order, trimmed — is the
    // same request: the finished answer, not a new pricing.
    let camel = json!({
        "fields": ["pmpm_cents"],
        "marketPlans": market_plans(),
        "plan": {
            "pmpmCents": 52000, "coinsurancePct": 20, "oopMaxFamilyCents": 1500000,
            "oopMaxIndividualCents": 750000, "deductibleFamilyCents": 680000,
            "deductibleIndividualCents": 340000, "hsaEligible": true, "network": "Full PPO",
            "planType": "PPO", "planName": "Silver Full PPO HSA 3400",
            "carrier": "Blue Shield of California"
        },
        "census": census(),
    });
    let done = price_ok(&svc, &key, &camel, 201).await;
    assert_eq!(done.body["group_id"], json!(gid));
    assert_eq!(done.body["quote_id"], json!(qid));
    assert_eq!(done.body["status"], "ready");
    assert_eq!(done.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    assert_eq!(done.header("retry-after"), None);

    let full = price_ok(&svc, &key, &body, 201).await;
    assert_eq!(items(&full.body, "/plans").len(), 2, "{}", full.body);
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &key)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body, full.body);

    // Polling is free: one create an hour, and the same body answers
    // again and again; another body is a new pricing, and limited.
    for _ in 0..5 {
        let a = price_ok(&svc, &key, &body, 201).await;
        assert_eq!(a.raw, full.raw);
    }
    let list = send(&svc, get(&format!("/v1/groups/{gid}/quotes"), &key)).await;
    assert_eq!(list.body["quotes"][0]["status"], "ready", "{}", list.body);
    let other = price(&svc, &key, &census_and_plan()).await;
    assert_error(&other, 429, "rate_limited");
    assert_eq!(group_count(&svc, &key).await, 1);
}

crate::http_on_both!(a_zero_budget_pending_answer_in_the_camel_form);
async fn a_zero_budget_pending_answer_in_the_camel_form(db: TestDb) {
    let app = TestApp::with_wait_budget(db, Duration::ZERO);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;
    let first = price(&svc, &hr, &examples()).await;
    let gid = assert_pending(&first, true);
    let b = &first.body;
    assert_eq!(b["baseFromMarket"], false);
    let used = json!({"sent": 5, "used": 2, "baseCandidates": 1, "benchmarkCandidates": 1});
    assert_eq!(b["usedPlans"], used);
    assert_eq!(keys(&b["sweep"]), set(&["step", "planCount"]));
    let ignored: Vec<i64> = items(b, "/ignoredPlans")
        .iter()
        .map(|p| int(p, "/index"))
        .collect();
    assert_eq!(ignored, [1, 3, 4]);
    let ready_at = text(b, "/estimatedReadyAt");
    assert!(
        ready_at.starts_with("2026-11-21T13:1") && ready_at.ends_with('Z'),
        "{ready_at}"
    );

    // Without a plan the base comes from the market.
    let market = json!({"census": census(), "marketPlans": market_plans()});
    let m = price(&svc, &hr, &market).await;
    assert_pending(&m, true);
    assert_eq!(m.body["baseFromMarket"], true, "{}", m.body);

    // Listed in the HR platform's style.
    let list = send(&svc, get(&format!("/v1/groups/{gid}/quotes"), &hr)).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let summary = &items(&list.body, "/quotes")[0];
    let summary_keys = [
        "id",
        "groupId",
        "mode",
        "kind",
        "status",
        "expiresAt",
        "createdAt",
    ];
    assert_eq!(keys(summary), set(&summary_keys), "{summary}");
    assert_eq!(summary["kind"], "price_on_plan");
    assert_eq!(summary["status"], "pricing");
    assert!(list.body.get("nextCursor").is_some(), "{}", list.body);

    assert_eq!(app.run_jobs().await, 2);
    let done = price_ok(&svc, &hr, &examples(), 201).await;
    assert_eq!(done.body["groupId"], json!(gid));
    assert_eq!(done.body["status"], "ready");
}

crate::http_on_both!(a_pricing_past_a_tiny_budget_finishes_in_the_background);
async fn a_pricing_past_a_tiny_budget_finishes_in_the_background(db: TestDb) {
    let app = TestApp::with_wait_budget(db, Duration::from_millis(1));
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = json!({"census": employees(2_000, "60601"), "plan": plan()});
    let first = price(&svc, &key, &body).await;
    let gid = assert_pending(&first, false);
    let mut finished = None;
    for _ in 0..300 {
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
        let a = price(&svc, &key, &body).await;
        match a.status.as_u16() {
            202 => assert_eq!(assert_pending(&a, false), gid),
            201 => {
                finished = Some(a);
                break;
            }
            other => panic!("{other}: {}", a.body),
        }
    }
    let done = finished.unwrap_or_else(|| panic!("still pricing after 60 s"));
    assert_eq!(done.body["group_id"], json!(gid));
    assert_eq!(
        done.body["status"], "in_review",
        "2,000 employees: {}",
        done.body
    );
    assert_eq!(group_count(&svc, &key).await, 1);
}

// ---------------------------------------------------------- in review --

crate::http_on_both!(an_in_review_answer_is_finalized_like_any_quote);
async fn an_in_review_answer_is_finalized_like_any_quote(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    // Above the in-review threshold (200 employees).
    let body = json!({"census": employees(201, "60601"), "plan": plan()});
    let a = price_ok(&svc, &key, &body, 201).await;
    assert_eq!(a.body["status"], "in_review", "{}", a.body);
    for p in items(&a.body, "/plans") {
        assert_eq!(p["status"], "in_review", "{p}");
    }
    let (qid, gid) = (text(&a.body, "/quote_id"), text(&a.body, "/group_id"));

    let path = format!("/v1/test_helpers/quotes/{qid}/finalize");
    let f = send(&svc, post(&path, &key, &json!({}))).await;
    // Underwriting finalized it: the event is sent ...
    let scope = crate::http::scope(&partner, Mode::Test);
    let first = domain::page::PageRequest::first(200);
    let page = app
        .db
        .stores
        .outbox
        .events(&scope, &domain::event::EventFilter::since(0), &first)
        .await
        .unwrap();
    let finalized: Vec<_> = page
        .items
        .into_iter()
        .map(|e| e.event)
        .filter(|e| e.event_type() == domain::event::EventType::QuoteFinalized)
        .collect();
    assert_eq!(finalized.len(), 1);
    let data = json!({"quoteId": qid, "groupId": gid, "status": "ready"});
    assert_eq!(
        domain::document::recase(finalized[0].data.data(), &domain::document::snake_to_camel),
        data
    );
    // ... and the quote reads back `ready`, every version with it.
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &key)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["status"], "ready", "{}", read.body);
    for p in items(&read.body, "/plans") {
        assert_eq!(p["status"], "ready", "{p}");
    }
    let again = price_ok(&svc, &key, &body, 201).await;
    assert_eq!(again.body, read.body);
    // The helper answers the finalized quote (its stored answer, `ready`).
    assert_eq!(f.status, 200, "{}", f.body);
    assert_eq!(f.body["status"], "ready", "{}", f.body);
}

// --------------------------------------------------------------- lead --

crate::http_on_both!(the_census_is_kept_as_a_lead_of_the_company);
async fn the_census_is_kept_as_a_lead_of_the_company(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let company = json!({"name": "Acme Robotics", "domain": "acme-robotics.example",
                         "external_id": "crm-77", "zip": "94103", "state": "CA"});
    let a = price_ok(&svc, &key, &with_top("company", company), 201).await;
    let (qid, gid) = (text(&a.body, "/quote_id"), text(&a.body, "/group_id"));

    let g = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.body["status"], "quoted");
    assert_eq!(g.body["company_name"], "Acme Robotics");
    assert_eq!(g.body["domain"], "acme-robotics.example");
    assert_eq!(g.body["external_id"], "crm-77");
    assert_eq!(g.body["address"]["zip"], "94103", "{}", g.body);
    assert_eq!(g.body["address"]["state"], "CA", "{}", g.body);
    assert_eq!(g.body["census_member_count"], 12, "{}", g.body);

    let c = send(&svc, get(&format!("/v1/groups/{gid}/census"), &key)).await;
    assert_eq!(c.status, 200, "{}", c.body);
    let rows = census();
    let sent: BTreeSet<&str> = items(&rows, "")
        .iter()
        .map(|m| text(m, "/external_id"))
        .collect();
    let members = items(&c.body, "/members");
    let stored: BTreeSet<&str> = members.iter().map(|m| text(m, "/external_id")).collect();
    assert_eq!(stored, sent);

    let list = send(&svc, get(&format!("/v1/groups/{gid}/quotes"), &key)).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let summary = json!({"id": qid, "group_id": gid, "mode": "test", "kind": "price_on_plan",
                         "status": "ready", "expires_at": "2026-12-21T13:14:00Z",
                         "created_at": "2026-11-21T13:14:00Z"});
    assert_eq!(list.body["quotes"], json!([summary]));
    assert_eq!(list.body["next_cursor"], Value::Null);

    // A price-on-plan quote is not one to enroll with.
    let enroll = json!({"quote_id": qid,
                        "signatory": {"name": "Dana Lee", "email": "dana@acme-robotics.example"}});
    let e = send(
        &svc,
        post(&format!("/v1/groups/{gid}/enrollments"), &key, &enroll),
    )
    .await;
    assert_error(&e, 409, "conflict");
    let g = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(g.body["status"], "quoted");
}

crate::http_on_both!(without_a_company_the_lead_gets_a_generated_one);
async fn without_a_company_the_lead_gets_a_generated_one(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let a = price_ok(&svc, &key, &census_and_plan(), 201).await;
    assert!(assumes(&a.body, "Company"), "{}", a.body);
    let gid = text(&a.body, "/group_id");
    let g = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.body["status"], "quoted");
    let name = text(&g.body, "/company_name");
    let date = name
        .strip_prefix("Price-on-plan lead ")
        .unwrap_or_else(|| panic!("{name}"));
    let shape = date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    assert!(shape, "{name}");
    let hex = gid.trim_start_matches("grp_");
    assert_eq!(g.body["domain"], json!(format!("lead-{hex}.invalid")));
    // The first census ZIP stands in for the company's.
    assert_eq!(g.body["address"]["zip"], "94103", "{}", g.body);
    let c = send(&svc, get(&format!("/v1/groups/{gid}/census"), &key)).await;
    assert_eq!(items(&c.body, "/members").len(), 12, "{}", c.body);
}

// -------------------------------------------------------- idempotency --

crate::http_on_both!(an_idempotency_key_replays_a_finished_answer_only);
async fn an_idempotency_key_replays_a_finished_answer_only(db: TestDb) {
    let app = TestApp::with_wait_budget(db, Duration::ZERO);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = examples();
    let req = || keyed(post(PATH, &key, &body), "pop-1");

    // A 202 carries Retry-After: not stored, the key stays usable.
    let first = send(&svc, req()).await;
    let gid = assert_pending(&first, false);
    assert_eq!(first.header("idempotent-replay"), None);
    let again = send(&svc, req()).await;
    assert_eq!(assert_pending(&again, false), gid);
    assert_eq!(again.header("idempotent-replay"), None);

    assert_eq!(app.run_jobs().await, 1);
    let done = send(&svc, req()).await;
    assert_eq!(done.status, 201, "{}", done.body);
    assert_eq!(done.header("idempotent-replay"), None);
    assert_eq!(done.body["group_id"], json!(gid));

    // The finished answer is stored: a replay, byte for byte.
    app.clock.advance(60 * 60);
    let replay = send(&svc, req()).await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replay"), Some("true"));
    assert_eq!(replay.raw, done.raw);
    assert_eq!(replay.header("location"), done.header("location"));
    assert_eq!(group_count(&svc, &key).await, 1);
}

crate::http_on_both!(an_idempotency_key_replays_a_direct_201);
async fn an_idempotency_key_replays_a_direct_201(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = census_and_plan();
    let first = send(&svc, keyed(post(PATH, &key, &body), "pop-2")).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let replay = send(&svc, keyed(post(PATH, &key, &body), "pop-2")).await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.header("idempotent-replay"), Some("true"));
    assert_eq!(replay.raw, first.raw);
    assert_eq!(replay.header("location"), first.header("location"));
    assert_eq!(group_count(&svc, &key).await, 1);
}

// ---------------------------------------------------------- isolation --

crate::http_on_both!(another_partner_or_mode_does_not_find_the_quote);
async fn another_partner_or_mode_does_not_find_the_quote(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let a = app.partner("Partner A", PartnerKind::Broker, true).await;
    let a_test = app.key(&a, Mode::Test).await;
    let a_live = app.key(&a, Mode::Live).await;
    let b = app.partner("Partner B", PartnerKind::Broker, false).await;
    let b_test = app.key(&b, Mode::Test).await;
    let body = census_and_plan();

    let mine = price_ok(&svc, &a_test, &body, 201).await;
    let qid = text(&mine.body, "/quote_id");
    let theirs = price_ok(&svc, &b_test, &body, 201).await;
    assert_ne!(theirs.body["quote_id"], mine.body["quote_id"]);
    assert_ne!(theirs.body["group_id"], mine.body["group_id"]);
    assert_eq!(group_count(&svc, &a_test).await, 1);
    assert_eq!(group_count(&svc, &b_test).await, 1);

    let path = format!("/v1/quotes/{qid}");
    for key in [&b_test, &a_live] {
        let r = send(&svc, get(&path, key)).await;
        assert_error(&r, 404, "not_found");
    }
    let live = price_ok(&svc, &a_live, &body, 201).await;
    assert_ne!(live.body["group_id"], mine.body["group_id"]);
    assert_eq!(group_count(&svc, &a_live).await, 1);
    assert_eq!(group_count(&svc, &a_test).await, 1);
    let own = send(&svc, get(&path, &a_test)).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(own.body, mine.body);
}
