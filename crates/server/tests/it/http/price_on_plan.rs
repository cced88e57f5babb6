//! `POST /v1/price-on-plan` through the real application: the status codes
//! (201, 200 `unavailable`, 202 `pricing`, 400, 409, 422, 429), the wait
//! budget and polling, finalizing an `in_review` answer, the lead it
//! keeps, idempotency and isolation. The two answer forms, their
//! snapshots, the rate bases, the market-plan classification and
//! `fields`/`exclude` are in `price_on_plan_forms.rs`.

mod invalid;
mod pending;
mod refusals;
mod stored;
mod unavailable;

use std::collections::BTreeSet;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use http_api::{HttpConfig, Limits};
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{Answer, TestApp, get, post, send};

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
pub(super) fn keyed(req: TestRequest, key: &str) -> TestRequest {
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
pub(super) fn assert_pending(a: &Answer, camel: bool) -> String {
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

/// The example body with `key` set to `value` at the top level.
pub(super) fn with_top(key: &str, value: Value) -> Value {
    let mut b = census_and_plan();
    b[key] = value;
    b
}
