//! The test `ping` and every event type over real HTTP (specification,
//! Events; contract sections 3 and 6): each fires at the moment the
//! specification names,
//! carries its documented data in the partner's field style (snake_case
//! for brokers, camelCase for HR platforms), verifies, and reads back
//! through `GET /v1/events/{id}` as delivered; no delivery without an
//! endpoint; test and live endpoints kept apart; `GET /v1/events` with
//! each event's `delivery`.

use actix_web::body::MessageBody;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::webhooks::{
    Receiver, Reply, Svc, assert_verifies, at, delivery, event, keys, newest_event, ping,
    processed_census, register, verify,
};
use crate::http::{T0, TestApp, assert_error, create_group, get, group_body, post, put, send};

/// The field style of a partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Brokers.
    Snake,
    /// HR platforms.
    Camel,
}

/// A webhook receiver registered for a partner's test mode.
struct Hooked<'a> {
    app: &'a TestApp,
    rx: Receiver,
    secret: String,
    style: Style,
    /// Every body delivered so far.
    bodies: Vec<Value>,
}

impl Hooked<'_> {
    /// Delivers what is due: exactly one new delivery, which must verify
    /// and be the envelope of a `kind` event created now; its body.
    async fn next(&mut self, kind: &str) -> Value {
        let before = self.rx.received().len();
        assert_eq!(self.app.deliver().await, 1, "{kind}: one attempt due");
        let got = self.rx.received();
        assert_eq!(got.len(), before + 1, "{kind}: one delivery");
        let body = self.check_last(kind);
        self.bodies.push(body.clone());
        body
    }

    /// Checks the last delivery: a signed POST of the envelope of a `kind`
    /// event created at the app's current time, in this partner's style.
    fn check_last(&self, kind: &str) -> Value {
        let r = self.rx.last();
        let now = self.app.clock.secs();
        assert_eq!(r.method, "POST");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(
            r.header("webhook-timestamp"),
            Some(now.to_string().as_str())
        );
        assert_verifies(&self.secret, &r, now);
        let body = r.json();
        assert_eq!(r.header("webhook-id"), body["id"].as_str(), "{body}");
        let created = match self.style {
            Style::Snake => "created_at",
            Style::Camel => "createdAt",
        };
        let mut want = vec!["data", created, "id", "mode", "type"];
        want.sort_unstable();
        assert_eq!(keys(&body), want, "{body}");
        let id = body["id"].as_str().unwrap();
        assert!(id.starts_with("evt_") && id.len() == 16, "{body}");
        assert_eq!(body["type"], kind, "{body}");
        assert_eq!(body["mode"], "test", "{body}");
        assert_eq!(body[created], at(now - T0), "{body}");
        if self.style == Style::Camel {
            let mut snake = Vec::new();
            snake_keys(&body, &mut snake);
            assert!(snake.is_empty(), "snake_case keys {snake:?} in {body}");
        }
        body
    }

    /// Nothing is due.
    async fn nothing(&self, when: &str) {
        assert_eq!(self.app.deliver().await, 0, "an event fired {when}");
    }
}

/// Collects the object keys of `v` (at any depth) that contain `_`.
fn snake_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, item) in map {
                if k.contains('_') {
                    out.push(k.clone());
                }
                snake_keys(item, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| snake_keys(i, out)),
        _ => {}
    }
}

/// Every delivered body reads back through `GET /v1/events/{id}` with the
/// same envelope, delivered at the first attempt.
async fn read_back<B: MessageBody>(svc: &impl Svc<B>, key: &str, hooked: &Hooked<'_>) {
    let last_status = match hooked.style {
        Style::Snake => "last_status_code",
        Style::Camel => "lastStatusCode",
    };
    for body in &hooked.bodies {
        let mut e = event(svc, key, body["id"].as_str().unwrap()).await;
        let d = e.as_object_mut().unwrap().remove("delivery").unwrap();
        assert_eq!(&e, body);
        assert_eq!(
            (&d["state"], &d["attempts"], &d[last_status]),
            (&json!("delivered"), &json!(1), &json!(204)),
            "{d}"
        );
    }
}

fn id_of(v: &Value) -> String {
    v["id"].as_str().unwrap().to_owned()
}

/// `n` broker census rows (employee only, Chicago).
fn broker_employees(n: u64) -> Value {
    let members: Vec<Value> = (0..n)
        .map(|i| json!({"external_id": format!("E{i}"), "dob": "1985-06-15", "zip": "60601"}))
        .collect();
    json!({"members": members})
}

/// `n` HR platform census rows (employee only, Chicago).
fn hr_employees(n: u64) -> Value {
    let members: Vec<Value> = (0..n)
        .map(
            |i| json!({"externalId": format!("E{i}"), "age": 40, "zip": "60601", "dependents": []}),
        )
        .collect();
    json!({"members": members})
}

crate::http_on_both!(every_event_reaches_a_broker_in_snake_case_when_it_happens);
async fn every_event_reaches_a_broker_in_snake_case_when_it_happens(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(204);
    let secret = register(&svc, &key, rx.url()).await;
    let mut h = Hooked {
        app: &app,
        rx,
        secret,
        style: Style::Snake,
        bodies: Vec::new(),
    };

    // census.processed: when the comparison finishes, not at the write.
    let gid = id_of(&create_group(&svc, &key, &group_body("acme-mfg.com")).await);
    h.nothing("on a group create").await;
    let census = json!({"members": [
        {"external_id": "E1", "email": "ana@acme-mfg.com", "dob": "1988-04-12", "zip": "60601",
         "dependents": [{"relationship": "spouse", "dob": "1987-01-01"}]},
        {"external_id": "E2", "dob": "1979-11-02", "zip": "60614"},
        {"external_id": "E3", "dob": "1979-11-02", "zip": "606"},
    ]});
    let a = send(
        &svc,
        put(&format!("/v1/groups/{gid}/census"), &key, &census),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    h.nothing("before the comparison finished").await;
    app.clock.advance(1);
    assert_eq!(app.run_jobs().await, 1);
    let e = h.next("census.processed").await;
    assert_eq!(
        e["data"],
        json!({"group_id": gid, "received": 3, "accepted": 2, "member_count": 2,
               "error_count": 1})
    );

    // A ready quote announces nothing; enrollment.created.
    app.clock.advance(1);
    let body = json!({"employer_contribution_pct": 80});
    let q = send(&svc, post(&format!("/v1/groups/{gid}/quotes"), &key, &body)).await;
    assert_eq!(q.status, 201, "{}", q.body);
    assert_eq!(q.body["status"], "ready");
    let qid = id_of(&q.body);
    h.nothing("on a ready quote").await;
    app.clock.advance(1);
    let body =
        json!({"quote_id": qid, "signatory": {"name": "Dana Lee", "email": "dana@acme-mfg.com"}});
    let enr = send(
        &svc,
        post(&format!("/v1/groups/{gid}/enrollments"), &key, &body),
    )
    .await;
    assert_eq!(enr.status, 201, "{}", enr.body);
    let e = h.next("enrollment.created").await;
    assert_eq!(
        e["data"],
        json!({"enrollment_id": id_of(&enr.body), "group_id": gid, "quote_id": qid,
               "start_date": "2026-12-01", "company_domain": "acme-mfg.com",
               "onboarding_mode": "hosted"})
    );

    // deductions.changed: one per elections submission.
    app.clock.advance(1);
    let roster = send(&svc, get(&format!("/v1/groups/{gid}/census"), &key)).await;
    let member_id = |ext: &str| {
        roster.body["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["external_id"] == ext)
            .map(id_of)
            .unwrap()
    };
    let rows = json!({"elections": [
        {"external_id": "E1", "election": "enrolled", "tier": "employeeSpouse",
         "dependents": [{"relationship": "spouse"}], "effective_date": "2026-12-01"},
        {"external_id": "E2", "election": "waived", "waiver_reason": "other_employer_group"},
    ]});
    let a = send(
        &svc,
        post(&format!("/v1/groups/{gid}/elections"), &key, &rows),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let e = h.next("deductions.changed").await;
    assert_eq!(keys(&e["data"]), ["group_id", "members"], "{e}");
    assert_eq!(e["data"]["group_id"], gid);
    let members = e["data"]["members"].as_array().unwrap();
    assert_eq!(members.len(), 2, "{e}");
    for m in members {
        assert_eq!(
            keys(m),
            [
                "effective_date",
                "election",
                "employee_monthly_cents",
                "employer_monthly_cents",
                "external_id",
                "member_id",
                "tier"
            ],
            "{m}"
        );
        assert_eq!(
            m["member_id"],
            member_id(m["external_id"].as_str().unwrap())
        );
    }
    let e1 = members.iter().find(|m| m["external_id"] == "E1").unwrap();
    assert_eq!(
        (&e1["election"], &e1["tier"], &e1["effective_date"]),
        (
            &json!("enrolled"),
            &json!("employeeSpouse"),
            &json!("2026-12-01")
        )
    );
    let (employee, employer) = (
        e1["employee_monthly_cents"].as_i64().unwrap(),
        e1["employer_monthly_cents"].as_i64().unwrap(),
    );
    assert!(employee > 0 && (employee * 4 - employer).abs() <= 4, "{e1}");
    let e2 = members.iter().find(|m| m["external_id"] == "E2").unwrap();
    assert_eq!(
        (
            &e2["election"],
            &e2["employee_monthly_cents"],
            &e2["employer_monthly_cents"]
        ),
        (&json!("waived"), &json!(0), &json!(0))
    );

    // group.state_changed: the go-live.
    app.clock.advance(1);
    let path = format!("/v1/test_helpers/groups/{gid}/go_live");
    let a = send(&svc, post(&path, &key, &json!({}))).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let e = h.next("group.state_changed").await;
    assert_eq!(
        e["data"],
        json!({"group_id": gid, "company_domain": "acme-mfg.com",
               "previous_state": "sandbox", "state": "prod", "forced": true})
    );

    // quote.finalized: an in_review quote (above 200 employees) finalized.
    app.clock.advance(1);
    let big = id_of(&create_group(&svc, &key, &group_body("big-co.com")).await);
    let census = broker_employees(201);
    let a = send(
        &svc,
        put(&format!("/v1/groups/{big}/census"), &key, &census),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.clock.advance(1);
    assert_eq!(app.run_jobs().await, 1);
    let e = h.next("census.processed").await;
    assert_eq!(
        e["data"],
        json!({"group_id": big, "received": 201, "accepted": 201, "member_count": 201,
               "error_count": 0})
    );
    app.clock.advance(1);
    let q = send(
        &svc,
        post(&format!("/v1/groups/{big}/quotes"), &key, &json!({})),
    )
    .await;
    assert_eq!(q.body["status"], "in_review", "{}", q.body);
    let qid = id_of(&q.body);
    h.nothing("on an in_review quote").await;
    app.clock.advance(1);
    let path = format!("/v1/test_helpers/quotes/{qid}/finalize");
    let a = send(&svc, post(&path, &key, &json!({}))).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let e = h.next("quote.finalized").await;
    assert_eq!(
        e["data"],
        json!({"quote_id": qid, "group_id": big, "status": "ready"})
    );

    // ping.
    app.clock.advance(1);
    let a = ping(&svc, &key).await;
    assert_eq!(a.body["delivered"], true, "{}", a.body);
    let e = h.check_last("ping");
    assert_eq!(e["data"], json!({}));
    assert_eq!(e["id"], a.body["id"]);
    h.bodies.push(e);
    h.nothing("after everything was delivered").await;

    assert_eq!(h.rx.received().len(), 7);
    read_back(&svc, &key, &h).await;
}

crate::http_on_both!(an_hr_platform_gets_every_event_in_camel_case);
async fn an_hr_platform_gets_every_event_in_camel_case(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.hr_platform().await;
    let rx = Receiver::answering(204);
    let secret = register(&svc, &key, rx.url()).await;
    let mut h = Hooked {
        app: &app,
        rx,
        secret,
        style: Style::Camel,
        bodies: Vec::new(),
    };

    let group = json!({"companyName": "Payroll Client", "domain": "payroll-client.com"});
    let gid = id_of(&create_group(&svc, &key, &group).await);
    let census = json!({"members": [
        {"externalId": "E1", "age": 40, "zip": "60601", "dependents": []},
        {"externalId": "E2", "age": 33, "zip": "60601",
         "dependents": [{"relationship": "child", "age": 4}]},
    ]});
    let a = send(
        &svc,
        put(&format!("/v1/groups/{gid}/census"), &key, &census),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    h.nothing("before the comparison finished").await;
    app.clock.advance(1);
    assert_eq!(app.run_jobs().await, 1);
    let e = h.next("census.processed").await;
    assert_eq!(
        e["data"],
        json!({"groupId": gid, "received": 2, "accepted": 2, "memberCount": 2, "errorCount": 0})
    );

    app.clock.advance(1);
    let q = send(
        &svc,
        post(&format!("/v1/groups/{gid}/quotes"), &key, &json!({})),
    )
    .await;
    assert_eq!(q.status, 201, "{}", q.body);
    let qid = id_of(&q.body);
    h.nothing("on a ready quote").await;
    app.clock.advance(1);
    let body = json!({"quoteId": qid, "signatory": {"name": "Dana Lee", "email": "dana@payroll-client.com"}});
    let enr = send(
        &svc,
        post(&format!("/v1/groups/{gid}/enrollments"), &key, &body),
    )
    .await;
    assert_eq!(enr.status, 201, "{}", enr.body);
    let e = h.next("enrollment.created").await;
    assert_eq!(
        e["data"],
        json!({"enrollmentId": id_of(&enr.body), "groupId": gid, "quoteId": qid,
               "startDate": "2026-12-01", "companyDomain": "payroll-client.com",
               "onboardingMode": "hosted"})
    );

    app.clock.advance(1);
    let path = format!("/v1/test_helpers/groups/{gid}/go_live");
    let a = send(&svc, post(&path, &key, &json!({}))).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let e = h.next("group.state_changed").await;
    assert_eq!(
        e["data"],
        json!({"groupId": gid, "companyDomain": "payroll-client.com",
               "previousState": "sandbox", "state": "prod", "forced": true})
    );

    app.clock.advance(1);
    let group = json!({"companyName": "Big Client", "domain": "big-client.com"});
    let big = id_of(&create_group(&svc, &key, &group).await);
    let census = hr_employees(201);
    let a = send(
        &svc,
        put(&format!("/v1/groups/{big}/census"), &key, &census),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.clock.advance(1);
    assert_eq!(app.run_jobs().await, 1);
    let e = h.next("census.processed").await;
    assert_eq!(e["data"]["memberCount"], 201, "{e}");
    app.clock.advance(1);
    let q = send(
        &svc,
        post(&format!("/v1/groups/{big}/quotes"), &key, &json!({})),
    )
    .await;
    assert_eq!(q.body["status"], "in_review", "{}", q.body);
    let qid = id_of(&q.body);
    app.clock.advance(1);
    let path = format!("/v1/test_helpers/quotes/{qid}/finalize");
    let a = send(&svc, post(&path, &key, &json!({}))).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let e = h.next("quote.finalized").await;
    assert_eq!(
        e["data"],
        json!({"quoteId": qid, "groupId": big, "status": "ready"})
    );

    app.clock.advance(1);
    let a = ping(&svc, &key).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body,
        json!({"id": a.body["id"], "type": "ping", "delivered": true, "statusCode": 204})
    );
    let e = h.check_last("ping");
    assert_eq!(e["data"], json!({}));
    h.bodies.push(e);
    h.nothing("after everything was delivered").await;

    assert_eq!(h.rx.received().len(), 6);
    read_back(&svc, &key, &h).await;
}

// ---------------------------------------------------------------------------
// Endpoints: none, and one per mode
// ---------------------------------------------------------------------------

crate::http_on_both!(events_without_an_endpoint_are_not_delivered);
async fn events_without_an_endpoint_are_not_delivered(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let rx = Receiver::answering(204);
    processed_census(&app, &svc, &key, "acme-mfg.com").await;
    let id = newest_event(&svc, &key).await;
    assert_eq!(delivery(&svc, &key, &id).await["state"], "pending");
    app.deliver().await;
    let d = delivery(&svc, &key, &id).await;
    assert_eq!(
        (&d["state"], &d["last_status_code"], &d["next_attempt_at"]),
        (&json!("no_endpoint"), &Value::Null, &Value::Null)
    );
    // Registering later does not resend it.
    register(&svc, &key, rx.url()).await;
    assert_eq!(app.deliver().await, 0);
    app.clock.advance(3_600);
    assert_eq!(app.deliver().await, 0);
    assert!(rx.received().is_empty());
    assert_eq!(delivery(&svc, &key, &id).await["state"], "no_endpoint");
}

crate::http_on_both!(test_and_live_endpoints_are_kept_apart);
async fn test_and_live_endpoints_are_kept_apart(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let partner = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let (test, live) = (
        app.key(&partner, Mode::Test).await,
        app.key(&partner, Mode::Live).await,
    );
    let (test_rx, live_rx) = (Receiver::answering(204), Receiver::answering(204));
    let test_secret = register(&svc, &test, test_rx.url()).await;
    let live_secret = register(&svc, &live, live_rx.url()).await;
    assert_ne!(test_secret, live_secret);

    // Pings.
    let t = ping(&svc, &test).await;
    assert_eq!(t.body["delivered"], true, "{}", t.body);
    let l = ping(&svc, &live).await;
    assert_eq!(l.body["delivered"], true, "{}", l.body);
    // Events of each mode.
    processed_census(&app, &svc, &test, "test-co.com").await;
    processed_census(&app, &svc, &live, "live-co.com").await;
    assert_eq!(app.deliver().await, 2);

    let now = app.clock.secs();
    for (rx, secret, other, mode, ping_id) in [
        (&test_rx, &test_secret, &live_secret, "test", &t.body["id"]),
        (&live_rx, &live_secret, &test_secret, "live", &l.body["id"]),
    ] {
        let got = rx.received();
        let types: Vec<Value> = got.iter().map(|r| r.json()["type"].clone()).collect();
        assert_eq!(types, [json!("ping"), json!("census.processed")], "{mode}");
        assert_eq!(got[0].json()["id"], *ping_id);
        for r in &got {
            assert_eq!(r.json()["mode"], mode);
            assert_verifies(secret, r, now);
            assert!(verify(other, r, now).is_err());
        }
    }
    // Each mode reads only its own events.
    let test_ping = t.body["id"].as_str().unwrap();
    let a = send(&svc, get(&format!("/v1/events/{test_ping}"), &live)).await;
    assert_error(&a, 404, "not_found");
}

// ---------------------------------------------------------------------------
// GET /v1/events
// ---------------------------------------------------------------------------

crate::http_on_both!(events_are_listed_with_their_delivery);
async fn events_are_listed_with_their_delivery(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    // Before any endpoint: no_endpoint.
    processed_census(&app, &svc, &key, "acme-mfg.com").await;
    app.deliver().await;
    let rx = Receiver::start(vec![Reply::status(204), Reply::status(500)]);
    register(&svc, &key, rx.url()).await;
    app.clock.advance(1);
    let delivered = ping(&svc, &key).await.body["id"].clone();
    app.clock.advance(1);
    let pending = ping(&svc, &key).await.body["id"].clone();

    let a = send(&svc, get("/v1/events", &key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let events = a.body["events"].as_array().unwrap();
    assert_eq!(events.len(), 3, "{}", a.body);
    assert_eq!((&events[0]["id"], &events[1]["id"]), (&pending, &delivered));
    assert_eq!(events[2]["type"], "census.processed");
    let deliveries: Vec<&Value> = events.iter().map(|e| &e["delivery"]).collect();
    assert_eq!(
        deliveries[..2],
        [
            &json!({"state": "pending", "attempts": 1, "last_status_code": 500,
                    "next_attempt_at": at(3)}),
            &json!({"state": "delivered", "attempts": 1, "last_status_code": 204,
                    "next_attempt_at": null}),
        ]
    );
    let d = deliveries[2];
    assert_eq!(
        (&d["state"], &d["last_status_code"], &d["next_attempt_at"]),
        (&json!("no_endpoint"), &Value::Null, &Value::Null)
    );
    assert_eq!(
        keys(d),
        ["attempts", "last_status_code", "next_attempt_at", "state"]
    );
    // The same objects one by one.
    for e in events {
        let one = event(&svc, &key, e["id"].as_str().unwrap()).await;
        assert_eq!(&one, e);
    }
}

// ---------------------------------------------------------------------------
// The test ping
// ---------------------------------------------------------------------------

crate::http_on_both!(the_test_ping_is_signed_delivered_and_reported);
async fn the_test_ping_is_signed_delivered_and_reported(db: TestDb) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    assert_error(&ping(&svc, &key).await, 404, "not_found");

    let rx = Receiver::start(vec![Reply::status(204), Reply::status(500)]);
    let secret = register(&svc, &key, rx.url()).await;
    let a = ping(&svc, &key).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let id = a.body["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("evt_") && id.len() == 16, "{id}");
    assert_eq!(
        a.body,
        json!({"id": id, "type": "ping", "delivered": true, "status_code": 204})
    );

    let got = rx.received();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/hooks/benefits")
    );
    assert_eq!(r.header("webhook-id"), Some(id.as_str()));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("webhook-timestamp"), Some(T0.to_string().as_str()));
    assert!(r.header("webhook-signature").unwrap().starts_with("v1,"));
    assert_eq!(
        r.json(),
        json!({"id": id, "type": "ping", "created_at": at(0), "mode": "test", "data": {}})
    );
    assert_verifies(&secret, r, app.clock.secs());
    // A changed body or id does not verify.
    let mut tampered = r.clone();
    tampered.body.push(b' ');
    assert!(verify(&secret, &tampered, app.clock.secs()).is_err());
    assert_eq!(
        delivery(&svc, &key, &id).await,
        json!({"state": "delivered", "attempts": 1, "last_status_code": 204,
               "next_attempt_at": null})
    );

    // The receiver now answers 500: not delivered, retried later.
    app.clock.advance(2);
    let a = ping(&svc, &key).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (
            &a.body["type"],
            &a.body["delivered"],
            &a.body["status_code"]
        ),
        (&json!("ping"), &json!(false), &json!(500))
    );
    let failed = a.body["id"].as_str().unwrap();
    assert_ne!(failed, id);
    assert_eq!(rx.received().len(), 2);
    assert_verifies(&secret, &rx.last(), app.clock.secs());
    assert_eq!(
        delivery(&svc, &key, failed).await,
        json!({"state": "pending", "attempts": 1, "last_status_code": 500,
               "next_attempt_at": at(3)})
    );
}
