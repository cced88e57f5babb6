//! `POST /v1/groups/{id}/quotes`, `GET /v1/groups/{id}/quotes`, `GET /v1/quotes/{id}` and the finalize test helper.

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use domain::event::{EventType, NewEvent};
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::partner::{Partner, PartnerKind};
use http_api::Limits;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{
    Answer, T0, TestApp, assert_error, authed, create_group, get, group_body, post, put, scope,
    send,
};

/// The service of a [`TestApp`].
trait Svc<B>:
    Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}
impl<T, B> Svc<B> for T where
    T: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}

/// A broker census row: an employee born in 1985 in `zip` with `deps`.
fn member(ext: &str, zip: &str, deps: Value) -> Value {
    json!({"external_id": ext, "dob": "1985-06-15", "zip": zip, "dependents": deps})
}

/// One household of each tier: 4 employees, 9 covered lives.
fn households() -> Value {
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
fn employees(n: u64) -> Value {
    let members: Vec<Value> = (0..n)
        .map(|i| member(&format!("E{i}"), "60601", json!([])))
        .collect();
    json!({"members": members})
}

/// A group without current coverage (its comparison uses the benchmark)
/// and without an address ZIP.
fn bare_group(domain: &str) -> Value {
    json!({"company_name": "Bare Co", "domain": domain})
}

fn quotes_of(gid: &str) -> String {
    format!("/v1/groups/{gid}/quotes")
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap().to_owned()
}

/// A quote's figures: everything but its identity and times.
fn figures(q: &Value) -> Value {
    let mut f = q.clone();
    for k in ["id", "created_at", "expires_at", "createdAt", "expiresAt"] {
        f.as_object_mut().unwrap().remove(k);
    }
    f
}

/// Creates `group`, writes `census` (asserting 200) and, when `process`,
/// runs its market comparison; returns the group id.
async fn setup<B: MessageBody>(
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
async fn ready<B: MessageBody>(
    app: &TestApp,
    svc: &impl Svc<B>,
    key: &str,
    domain: &str,
) -> String {
    setup(app, svc, key, (group_body(domain), households()), true).await
}

/// `POST /v1/groups/{gid}/quotes` with `body`.
async fn quote<B: MessageBody>(svc: &impl Svc<B>, key: &str, gid: &str, body: Value) -> Answer {
    send(svc, post(&quotes_of(gid), key, &body)).await
}

/// A broker with live mode enabled: its test and live keys.
async fn live_broker(app: &TestApp) -> (Partner, String, String) {
    let p = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let (test, live) = (app.key(&p, Mode::Test).await, app.key(&p, Mode::Live).await);
    (p, test, live)
}

/// The outbox events of type `kind` of `partner` in test mode.
async fn events(app: &TestApp, partner: &Partner, kind: EventType) -> Vec<NewEvent> {
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

crate::http_on_both!(a_quote_prices_the_stored_census);
async fn a_quote_prices_the_stored_census(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = ready(&app, &svc, &key, "a.com").await;
    let a = quote(&svc, &key, &gid, json!({})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let q = &a.body;
    let qid = id(q);
    assert!(qid.starts_with("qt_") && qid.len() == 15, "{qid}");
    assert_eq!(a.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    assert_eq!(
        (q["group_id"].as_str(), q["mode"].as_str()),
        (Some(&*gid), Some("test"))
    );
    assert_eq!(q["status"], "ready");
    assert_eq!(q["pricing_basis"], "market_rates");
    assert_eq!(q["plan"], json!({"id": "diamond", "name": "Diamond"}));
    assert_eq!(q["plan_year_start_date"], "2026-12-01");
    assert_eq!(q["created_at"], "2026-11-21T13:14:00Z");
    assert_eq!(q["expires_at"], "2026-12-21T13:14:00Z");
    let c = &q["census"];
    assert_eq!(
        (c["employees"].as_u64(), c["covered_lives"].as_u64()),
        (Some(4), Some(9))
    );
    let tiers =
        json!({"employee_only": 1, "employee_spouse": 1, "employee_children": 1, "family": 1});
    assert_eq!(c["tiers"], tiers);
    let monthly = q["monthly"]["total_cents"].as_i64().unwrap();
    assert!(monthly > 0, "{q}");
    assert_eq!(q["annual"]["total_cents"].as_i64(), Some(12 * monthly));
    // PEPM and the tier averages spread the total, each rounded to a cent.
    let pepm = q["monthly"]["pepm_cents"].as_i64().unwrap();
    assert!((pepm * 4 - monthly).abs() <= 2, "{pepm} × 4 vs {monthly}");
    let by_tier = q["monthly"]["by_tier"].as_object().unwrap();
    let avg = |t: &str| by_tier[t]["avg_cents"].as_i64().unwrap();
    assert!(by_tier.values().all(|line| line["count"] == 1), "{q}");
    let sum: i64 = by_tier.keys().map(|t| avg(t)).sum();
    assert!((sum - monthly).abs() <= 4, "tiers sum {sum} vs {monthly}");
    assert!(
        avg("family") > avg("employee_spouse") && avg("employee_spouse") > avg("employee_only")
    );
    let paid_in_full = json!({"premium_cents": 0, "employer_contribution_pct": 100});
    assert_eq!(q["employee_contribution"], paid_in_full);
    assert!(!q["pricing"]["source"].as_str().unwrap().is_empty(), "{q}");
    assert_eq!(q["pricing"]["updated_at"], "2026-11-21T00:00:00Z");
    assert!(!q["assumptions"].as_array().unwrap().is_empty());

    // `value` is another plan and another price.
    let v = quote(&svc, &key, &gid, json!({"plan_id": "value"})).await;
    assert_eq!(v.status, 201, "{}", v.body);
    assert_eq!(v.body["plan"], json!({"id": "value", "name": "Value"}));
    assert_ne!(v.body["monthly"]["total_cents"].as_i64(), Some(monthly));

    // The employees pay the share the employer does not (rounded).
    let c = quote(&svc, &key, &gid, json!({"employer_contribution_pct": 80})).await;
    assert_eq!(c.status, 201, "{}", c.body);
    assert_eq!(c.body["monthly"], q["monthly"]);
    let share =
        json!({"premium_cents": (monthly * 20 + 50) / 100, "employer_contribution_pct": 80});
    assert_eq!(c.body["employee_contribution"], share);

    // An empty body is `{}`.
    let e = send(
        &svc,
        authed(TestRequest::post().uri(&quotes_of(&gid)), &key),
    )
    .await;
    assert_eq!(e.status, 201, "{}", e.body);
    assert_eq!(figures(&e.body), figures(q));
}

crate::http_on_both!(the_comparison_uses_current_coverage_else_the_benchmark);
async fn the_comparison_uses_current_coverage_else_the_benchmark(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let with = ready(&app, &svc, &key, "a.com").await;
    let a = quote(&svc, &key, &with, json!({})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let c = &a.body["comparison"];
    assert_eq!(
        (c["basis"].as_str(), c["prior_pepm_cents"].as_i64()),
        (Some("current_coverage"), Some(78000))
    );
    let savings = 78000 * 4 - a.body["monthly"]["total_cents"].as_i64().unwrap();
    assert_eq!(c["savings_monthly_cents"].as_i64(), Some(savings));
    assert_eq!(c["savings_annual_cents"].as_i64(), Some(12 * savings));

    let without = setup(&app, &svc, &key, (bare_group("b.com"), households()), true).await;
    let b = quote(&svc, &key, &without, json!({})).await;
    assert_eq!(b.status, 201, "{}", b.body);
    assert_eq!(b.body["comparison"]["basis"], "benchmark");
    let bench = b.body["benchmark"]["pepm_cents"].as_i64().unwrap();
    assert!(bench > 0);
    assert_eq!(
        b.body["comparison"]["prior_pepm_cents"].as_i64(),
        Some(bench)
    );
    assert!(
        !b.body["benchmark"]["plan_name"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    // The same census prices the same: only the prior cost differs.
    assert_eq!(b.body["monthly"], a.body["monthly"]);
}

crate::http_on_both!(quotes_are_deterministic_for_any_plan_year_start);
async fn quotes_are_deterministic_for_any_plan_year_start(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = ready(&app, &svc, &key, "a.com").await;
    let first = quote(&svc, &key, &gid, json!({})).await;
    app.clock.advance(5);
    let second = quote(&svc, &key, &gid, json!({})).await;
    assert_eq!(second.status, 201, "{}", second.body);
    assert_ne!(second.body["id"], first.body["id"]);
    assert_eq!(figures(&second.body), figures(&first.body));
    // The default start sent explicitly is the same request.
    let third = quote(
        &svc,
        &key,
        &gid,
        json!({"plan_year_start_date": "2026-12-01"}),
    )
    .await;
    assert_eq!(figures(&third.body), figures(&first.body));

    // Another start is simulated by the quote itself, just as repeatably.
    let later = json!({"plan_year_start_date": "2027-01-01"});
    let a = quote(&svc, &key, &gid, later.clone()).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(
        (
            a.body["plan_year_start_date"].as_str(),
            a.body["status"].as_str()
        ),
        (Some("2027-01-01"), Some("ready"))
    );
    assert!(a.body["monthly"]["total_cents"].as_i64().unwrap() > 0);
    let b = quote(&svc, &key, &gid, later).await;
    assert_eq!(b.status, 201, "{}", b.body);
    assert_eq!(figures(&b.body), figures(&a.body));
}

crate::http_on_both!(bad_bodies_are_400_naming_each_field);
async fn bad_bodies_are_400_naming_each_field(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = ready(&app, &svc, &key, "a.com").await;
    let (start, pct) = ("plan_year_start_date", "employer_contribution_pct");
    let cases = [
        (json!({"plan_id": "gold"}), "plan_id"),
        (json!({start: "12/01/2026"}), start),
        (json!({start: "2026-11-20"}), start),
        (json!({start: "2027-11-23"}), start),
        (json!({pct: 101}), pct),
        (json!({pct: -1}), pct),
        (json!({pct: "x"}), pct),
        (json!({"plan": "diamond"}), "plan"),
    ];
    for (body, field) in cases {
        let a = quote(&svc, &key, &gid, body.clone()).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), [field], "{body}");
    }
    let a = quote(&svc, &key, &gid, json!({"plan_id": "gold", pct: 200})).await;
    assert_eq!(a.fields(), ["plan_id", pct]);
    let a = quote(
        &svc,
        &key,
        &gid,
        json!({"plan_id": "value", "planId": "value"}),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    // Today and 366 days ahead are the bounds; camelCase is accepted.
    for day in ["2026-11-21", "2027-11-22"] {
        let a = quote(
            &svc,
            &key,
            &gid,
            json!({"planYearStartDate": day, "planId": "value"}),
        )
        .await;
        assert_eq!(a.status, 201, "{day}: {}", a.body);
        assert_eq!(
            (a.body[start].as_str(), a.body["plan"]["id"].as_str()),
            (Some(day), Some("value"))
        );
    }
    let list = send(&svc, get(&quotes_of(&gid), &key)).await;
    assert_eq!(list.body["quotes"].as_array().unwrap().len(), 2);

    // A member born after the plan-year start is named by its census row.
    let mut baby = member("B1", "60601", json!([]));
    baby["dob"] = json!("2026-12-15");
    let census = json!({"members": [member("E1", "60601", json!([])), baby]});
    let gid = setup(&app, &svc, &key, (group_body("b.com"), census), true).await;
    let a = quote(&svc, &key, &gid, json!({})).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["members[1].dob"]);
    assert_eq!(a.body["details"][0]["index"], 1);
    let a = quote(&svc, &key, &gid, json!({start: "2027-01-01"})).await;
    assert_eq!(a.body["census"]["employees"], 2, "{}", a.body);
}

crate::http_on_both!(groups_outside_the_scope_are_404);
async fn groups_outside_the_scope_are_404(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, test, live) = live_broker(&app).await;
    let (_, other) = app.broker().await;
    let mine = ready(&app, &svc, &test, "a.com").await;
    let theirs = ready(&app, &svc, &other, "b.com").await;
    let live_group = ready(&app, &svc, &live, "c.com").await;
    let body = json!({"plan_id": "value"});
    for (key, gid) in [
        (&test, "grp_000000000000"),
        (&test, "grp_nothex"),
        (&test, "nope"),
        (&test, &theirs),
        (&test, &live_group),
        (&live, &mine),
    ] {
        assert_error(&quote(&svc, key, gid, body.clone()).await, 404, "not_found");
    }
    // Each is quotable by its own key.
    for (key, gid, mode) in [
        (&test, &mine, "test"),
        (&live, &live_group, "live"),
        (&other, &theirs, "test"),
    ] {
        let a = quote(&svc, key, gid, body.clone()).await;
        assert_eq!(
            (a.status.as_u16(), a.body["mode"].as_str()),
            (201, Some(mode)),
            "{}",
            a.body
        );
    }
}

crate::http_on_both!(a_running_comparison_is_409_rates_pending);
async fn a_running_comparison_is_409_rates_pending(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = setup(&app, &svc, &key, (group_body("a.com"), households()), false).await;
    let a = quote(&svc, &key, &gid, json!({})).await;
    assert_error(&a, 409, "rates_pending");
    let retry: u32 = a.header("retry-after").unwrap().parse().unwrap();
    assert!(retry >= 1, "{retry}");
    assert_eq!(app.run_jobs().await, 1);
    assert_eq!(quote(&svc, &key, &gid, json!({})).await.status, 201);
    // A new census write starts a new comparison.
    let a = send(
        &svc,
        put(&format!("/v1/groups/{gid}/census"), &key, &employees(3)),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_error(
        &quote(&svc, &key, &gid, json!({})).await,
        409,
        "rates_pending",
    );
    assert_eq!(app.run_jobs().await, 1);
    let a = quote(&svc, &key, &gid, json!({})).await;
    assert_eq!(a.body["census"]["employees"], 3, "{}", a.body);
}

crate::http_on_both!(no_counted_employee_is_422_census_required);
async fn no_counted_employee_is_422_census_required(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let empty = id(&create_group(&svc, &key, &group_body("a.com")).await);
    assert_error(
        &quote(&svc, &key, &empty, json!({})).await,
        422,
        "census_required",
    );
    let mut gone = member("T1", "60601", json!([]));
    gone["status"] = json!("terminated");
    let mut contractor = member("C1", "60601", json!([]));
    contractor["employment_type"] = json!("contractor");
    let census = json!({"members": [gone, contractor]});
    let gid = setup(&app, &svc, &key, (group_body("b.com"), census), true).await;
    assert_error(
        &quote(&svc, &key, &gid, json!({})).await,
        422,
        "census_required",
    );
}

crate::http_on_both!(an_unpriced_zip_is_422_market_unavailable);
async fn an_unpriced_zip_is_422_market_unavailable(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    // Neither "00000" nor "09001" (military mail) maps to a rating area of
    // the built-in card, and this group has no address ZIP to fall back on.
    let unpriced =
        || json!({"members": [member("E1", "00000", json!([])), member("E2", "09001", json!([]))]});
    let gid = setup(&app, &svc, &key, (bare_group("a.com"), unpriced()), true).await;
    assert_error(
        &quote(&svc, &key, &gid, json!({})).await,
        422,
        "market_unavailable",
    );
    // The group's address ZIP (60601) stands in for them.
    let gid = setup(&app, &svc, &key, (group_body("b.com"), unpriced()), true).await;
    let a = quote(&svc, &key, &gid, json!({})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["census"]["employees"], 2);
}

crate::http_on_both!(above_200_employees_a_quote_is_in_review);
async fn above_200_employees_a_quote_is_in_review(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    for (n, status) in [(200, "ready"), (201, "in_review")] {
        let gid = setup(
            &app,
            &svc,
            &key,
            (group_body(&format!("g{n}.com")), employees(n)),
            true,
        )
        .await;
        let a = quote(&svc, &key, &gid, json!({})).await;
        assert_eq!(a.status, 201, "{}", a.body);
        assert_eq!(
            (
                a.body["status"].as_str(),
                a.body["census"]["employees"].as_u64()
            ),
            (Some(status), Some(n))
        );
    }
}

crate::http_on_both!(finalize_makes_an_in_review_quote_ready);
async fn finalize_makes_an_in_review_quote_ready(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, test, live) = live_broker(&app).await;
    let gid = setup(
        &app,
        &svc,
        &test,
        (group_body("a.com"), employees(201)),
        true,
    )
    .await;
    let created = quote(&svc, &test, &gid, json!({})).await;
    assert_eq!(created.body["status"], "in_review", "{}", created.body);
    let qid = id(&created.body);
    let finalize = |q: &str, key: &str| {
        post(
            &format!("/v1/test_helpers/quotes/{q}/finalize"),
            key,
            &json!({}),
        )
    };

    // A live key does not see the helper at all.
    assert_error(&send(&svc, finalize(&qid, &live)).await, 404, "not_found");
    app.clock.advance(10);
    let a = send(&svc, finalize(&qid, &test)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let mut expected = created.body.clone();
    expected["status"] = json!("ready");
    assert_eq!(a.body, expected);
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &test)).await;
    assert_eq!(read.body, expected);

    assert_error(&send(&svc, finalize(&qid, &test)).await, 409, "conflict");
    for unknown in ["qt_000000000000", "qt_zz", "nope"] {
        assert_error(
            &send(&svc, finalize(unknown, &test)).await,
            404,
            "not_found",
        );
    }
    let finalized = events(&app, &partner, EventType::QuoteFinalized).await;
    assert_eq!(finalized.len(), 1);
    assert_eq!(
        domain::document::recase(finalized[0].data.data(), &domain::document::snake_to_camel),
        json!({"quoteId": qid, "groupId": gid, "status": "ready"})
    );
    assert_eq!(finalized[0].created_at, T0 + 10);
}

crate::http_on_both!(the_comparison_job_announces_census_processed);
async fn the_comparison_job_announces_census_processed(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let mut census = households();
    census["members"]
        .as_array_mut()
        .unwrap()
        .push(member("E5", "606", json!([])));
    let gid = setup(&app, &svc, &key, (group_body("a.com"), census), false).await;
    assert!(
        events(&app, &partner, EventType::CensusProcessed)
            .await
            .is_empty()
    );
    assert_eq!(app.run_jobs().await, 1);
    assert_eq!(app.run_jobs().await, 0);
    let processed = events(&app, &partner, EventType::CensusProcessed).await;
    assert_eq!(processed.len(), 1);
    let data =
        json!({"groupId": gid, "received": 5, "accepted": 4, "memberCount": 4, "errorCount": 1});
    assert_eq!(
        domain::document::recase(processed[0].data.data(), &domain::document::snake_to_camel),
        data
    );
    assert_eq!(processed[0].created_at, T0);
}

crate::http_on_both!(quote_creates_are_limited_but_not_by_pending_or_missing_groups);
async fn quote_creates_are_limited_but_not_by_pending_or_missing_groups(db: TestDb) {
    let limits = Limits {
        quote_creates_per_hour: 2,
        ..Limits::default()
    };
    let app = TestApp::with_limits(db, limits);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let (_, other) = app.broker().await;
    let theirs = ready(&app, &svc, &other, "b.com").await;
    let gid = setup(&app, &svc, &key, (group_body("a.com"), households()), false).await;
    // Neither a `rates_pending` answer nor a 404 is charged.
    for _ in 0..3 {
        assert_error(
            &quote(&svc, &key, &gid, json!({})).await,
            409,
            "rates_pending",
        );
        assert_error(
            &quote(&svc, &key, &theirs, json!({})).await,
            404,
            "not_found",
        );
        assert_error(
            &quote(&svc, &key, "grp_000000000000", json!({})).await,
            404,
            "not_found",
        );
        // A bad body is a 400 before the group or the comparison is looked
        // at, and is not charged either.
        let past = json!({"plan_year_start_date": "2026-11-20"});
        for g in [gid.as_str(), "grp_000000000000"] {
            let a = quote(&svc, &key, g, past.clone()).await;
            assert_error(&a, 400, "invalid_request");
            assert_eq!(a.body["details"][0]["field"], "plan_year_start_date");
        }
    }
    assert_eq!(app.run_jobs().await, 1);
    let first = quote(&svc, &key, &gid, json!({})).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let remaining = first.header("ratelimit").unwrap();
    assert!(remaining.contains("\"quote_creates\";r=1"), "{remaining}");
    assert_eq!(quote(&svc, &key, &gid, json!({})).await.status, 201);
    let a = quote(&svc, &key, &gid, json!({})).await;
    assert_error(&a, 429, "rate_limited");
    let retry: i64 = a.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry), "{retry}");
    // Another key has its own count; the window frees a slot on time.
    assert_eq!(quote(&svc, &other, &theirs, json!({})).await.status, 201);
    app.clock.advance(retry);
    assert_eq!(quote(&svc, &key, &gid, json!({})).await.status, 201);
}

crate::http_on_both!(quote_lists_page_newest_first);
async fn quote_lists_page_newest_first(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let (_, other) = app.broker().await;
    let (g1, g2) = (
        ready(&app, &svc, &key, "a.com").await,
        ready(&app, &svc, &key, "b.com").await,
    );
    let mut made = Vec::new();
    for plan in ["diamond", "value", "diamond"] {
        made.push(quote(&svc, &key, &g1, json!({"plan_id": plan})).await.body);
        app.clock.advance(1);
    }
    assert_eq!(quote(&svc, &key, &g2, json!({})).await.status, 201);
    made.reverse();
    let page1 = send(&svc, get(&format!("{}?limit=2", quotes_of(&g1)), &key)).await;
    assert_eq!(page1.status, 200, "{}", page1.body);
    assert_eq!(page1.body["quotes"], json!(made[..2]));
    let cursor = page1.body["next_cursor"].as_str().unwrap();
    let page2 = send(
        &svc,
        get(&format!("{}?limit=2&cursor={cursor}", quotes_of(&g1)), &key),
    )
    .await;
    assert_eq!(page2.body["quotes"], json!(made[2..]));
    assert!(page2.body["next_cursor"].is_null(), "{}", page2.body);
    let all = send(&svc, get(&quotes_of(&g1), &key)).await;
    assert_eq!(all.body, json!({"quotes": made, "next_cursor": null}));

    let a = send(
        &svc,
        get(&format!("{}?cursor={cursor}", quotes_of(&g2)), &key),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["cursor"]);
    let a = send(&svc, get(&format!("{}?limit=0", quotes_of(&g1)), &key)).await;
    assert_eq!(a.fields(), ["limit"]);
    assert_error(
        &send(&svc, get(&quotes_of(&g1), &other)).await,
        404,
        "not_found",
    );
    let a = send(&svc, get(&quotes_of(&g2), &key)).await;
    assert_eq!(a.body["quotes"].as_array().unwrap().len(), 1);
}

crate::http_on_both!(a_quote_reads_back_only_in_its_scope);
async fn a_quote_reads_back_only_in_its_scope(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, test, live) = live_broker(&app).await;
    let (_, other) = app.broker().await;
    let gid = ready(&app, &svc, &test, "a.com").await;
    let created = quote(&svc, &test, &gid, json!({"employer_contribution_pct": 50})).await;
    let qid = id(&created.body);
    app.clock.advance(60);
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &test)).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.body, created.body);
    for (key, path) in [
        (&other, &*qid),
        (&live, &*qid),
        (&test, "qt_000000000000"),
        (&test, "qt_123"),
        (&test, "grp_000000000000"),
    ] {
        let a = send(&svc, get(&format!("/v1/quotes/{path}"), key)).await;
        assert_error(&a, 404, "not_found");
    }
}

crate::http_on_both!(hr_platforms_quote_in_camel_case);
async fn hr_platforms_quote_in_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.hr_platform().await;
    let group = json!({"companyName": "Payroll Client", "domain": "p.com",
                       "currentCoverage": {"pepmCents": 65000}});
    let census = json!({"members": [
        {"externalId": "E1", "age": 40, "zip": "60601", "dependents": []},
        {"externalId": "E2", "age": 33, "zip": "60601", "dependents": [{"relationship": "child", "age": 4}]},
    ]});
    let gid = setup(&app, &svc, &key, (group, census), true).await;
    let body = json!({"planId": "value", "planYearStartDate": "2027-01-01", "employerContributionPct": 90});
    let a = quote(&svc, &key, &gid, body).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let q = &a.body;
    assert_eq!(q["pricingBasis"], "market_rates");
    assert_eq!(q["planYearStartDate"], "2027-01-01");
    assert_eq!(
        (q["plan"]["id"].as_str(), q["groupId"].as_str()),
        (Some("value"), Some(&*gid))
    );
    assert_eq!(q["expiresAt"], "2026-12-21T13:14:00Z");
    assert_eq!(q["census"]["coveredLives"], 3);
    assert_eq!(q["census"]["tiers"]["employeeChildren"], 1);
    let line = &q["monthly"]["byTier"]["employeeOnly"];
    assert!(
        line["count"] == 1 && line["avgCents"].as_i64().unwrap() > 0,
        "{q}"
    );
    assert_eq!(q["comparison"]["priorPepmCents"], 65000);
    assert_eq!(q["employeeContribution"]["employerContributionPct"], 90);
    assert!(
        q.get("pricing_basis").is_none() && q.get("expires_at").is_none(),
        "{q}"
    );
    // Snake case in the request is accepted too; errors use camelCase.
    let a = quote(&svc, &key, &gid, json!({"plan_id": "diamond"})).await;
    assert_eq!(a.body["plan"]["id"], "diamond", "{}", a.body);
    let a = quote(&svc, &key, &gid, json!({"planYearStartDate": "soon"})).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["planYearStartDate"]);
    let list = send(&svc, get(&quotes_of(&gid), &key)).await;
    assert!(list.body["nextCursor"].is_null() && list.body.get("next_cursor").is_none());
    assert_eq!(list.body["quotes"][1]["pricingBasis"], "market_rates");
}

crate::http_on_both!(an_idempotent_create_replays_the_quote);
async fn an_idempotent_create_replays_the_quote(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = ready(&app, &svc, &key, "a.com").await;
    let keyed = || {
        let req = post(&quotes_of(&gid), &key, &json!({"plan_id": "value"}));
        req.insert_header(("idempotency-key", "quote-1"))
    };
    let first = send(&svc, keyed()).await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.header("idempotent-replay"), None);
    app.clock.advance(30);
    let second = send(&svc, keyed()).await;
    assert_eq!(second.status, 201);
    assert_eq!(second.raw, first.raw);
    assert_eq!(second.header("idempotent-replay"), Some("true"));
    assert_eq!(second.header("location"), first.header("location"));
    let list = send(&svc, get(&quotes_of(&gid), &key)).await;
    assert_eq!(list.body["quotes"], json!([first.body]));
}
