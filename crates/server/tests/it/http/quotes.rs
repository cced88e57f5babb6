//! `POST /v1/groups/{id}/quotes`, `GET /v1/groups/{id}/quotes`, `GET /v1/quotes/{id}` and the finalize test helper.

mod pricing;
mod reads;
mod refusals;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use domain::event::{EventType, NewEvent};
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::partner::{Partner, PartnerKind};
use serde_json::{Value, json};

use crate::http::{Answer, TestApp, create_group, group_body, post, put, scope, send};

/// The service of a [`TestApp`].
pub(super) trait Svc<B>:
    Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}
impl<T, B> Svc<B> for T where
    T: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}

/// A broker census row: an employee born in 1985 in `zip` with `deps`.
pub(super) fn member(ext: &str, zip: &str, deps: Value) -> Value {
    json!({"external_id": ext, "dob": "1985-06-15", "zip": zip, "dependents": deps})
}

/// One household of each tier: 4 employees, 9 covered lives.
pub(super) fn households() -> Value {
    let child = json!({"relationship": "child", "dob": "2016-09-30"});
    let spouse = json!({"relationship": "spouse", "dob": "1986-01-01"});
    json!({"members": [
        member("E1", "60601", json!([])),
        member("E2", "60614", json!([spouse])),
        member("E3", "60601", json!([child])),
        member("E4", "60601", json!([spouse, child, child])),
    ]})
}

/// `n` employee-only members in Chicago.
pub(super) fn employees(n: u64) -> Value {
    let members: Vec<Value> = (0..n)
        .map(|i| member(&format!("E{i}"), "60601", json!([])))
        .collect();
    json!({"members": members})
}

/// A group without current coverage (its comparison uses the benchmark)
/// and without an address ZIP.
pub(super) fn bare_group(domain: &str) -> Value {
    json!({"company_name": "Bare Co", "domain": domain})
}

pub(super) fn quotes_of(gid: &str) -> String {
    format!("/v1/groups/{gid}/quotes")
}

pub(super) fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_owned()
}

/// A quote's figures: everything but its identity and times.
pub(super) fn figures(q: &Value) -> Value {
    let mut f = q.clone();
    for k in ["id", "created_at", "expires_at", "createdAt", "expiresAt"] {
        f.as_object_mut().unwrap().remove(k);
    }
    f
}

/// Creates `group`, writes `census` (asserting 200) and, when `process`,
/// runs its market comparison; returns the group id.
pub(super) async fn setup<B: MessageBody>(
    app: &TestApp,
    svc: &impl Svc<B>,
    key: &str,
    (group, census): (Value, Value),
    process: bool,
) -> String {
    let gid = id(&create_group(svc, key, &group).await);
    let a = send(svc, put(&format!("/v1/groups/{gid}/census"), key, &census)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    if process {
        assert_eq!(app.run_jobs().await, 1);
    }
    gid
}

/// A group (with current coverage) of [`households`], ready to quote.
pub(super) async fn ready<B: MessageBody>(
    app: &TestApp,
    svc: &impl Svc<B>,
    key: &str,
    domain: &str,
) -> String {
    setup(app, svc, key, (group_body(domain), households()), true).await
}

/// `POST /v1/groups/{gid}/quotes` with `body`.
pub(super) async fn quote<B: MessageBody>(
    svc: &impl Svc<B>,
    key: &str,
    gid: &str,
    body: Value,
) -> Answer {
    send(svc, post(&quotes_of(gid), key, &body)).await
}

/// A broker with live mode enabled: its test and live keys.
pub(super) async fn live_broker(app: &TestApp) -> (Partner, String, String) {
    let p = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let (test, live) = (app.key(&p, Mode::Test).await, app.key(&p, Mode::Live).await);
    (p, test, live)
}

/// The outbox events of type `kind` of `partner` in test mode.
pub(super) async fn events(app: &TestApp, partner: &Partner, kind: EventType) -> Vec<NewEvent> {
    let (scope, first) = (scope(partner, Mode::Test), PageRequest::first(200));
    let page = app
        .db
        .stores
        .outbox
        .events(&scope, &domain::event::EventFilter::since(0), &first)
        .await
        .unwrap();
    let all = page.items.into_iter().map(|e| e.event);
    all.filter(|e| e.event_type() == kind).collect()
}
