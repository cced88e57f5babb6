//! `POST /v1/groups/{id}/elections` (specification rules 1–6; contract
//! sections 3 and 9): rows applied or refused by index, the roster, login
//! emails only in live mode, `deductions.changed`, the capability, the
//! shared census-write limit and the dry run.

use domain::event::EventType;
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::partner::{Partner, PartnerKind};
use http_api::Limits;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{
    TestApp, assert_error, create_group, get, group_body, post, put, row_errors, scope, send,
};

/// A group of `key` with two members (E1 with an email), quoted (80%
/// employer share) and enrolled; its id.
async fn enrolled<S, B>(app: &TestApp, svc: &S, key: &str, domain: &str) -> String
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let g = create_group(svc, key, &group_body(domain)).await;
    let id = g["id"].as_str().unwrap().to_owned();
    let census = json!({"members": [
        {"external_id": "E1", "email": "ana@acme-mfg.com", "dob": "1988-04-12", "zip": "60601",
         "dependents": [{"relationship": "spouse", "dob": "1987-01-01"}]},
        {"external_id": "E2", "dob": "1979-11-02", "zip": "60614"},
    ]});
    let a = send(svc, put(&format!("/v1/groups/{id}/census"), key, &census)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.run_jobs().await;
    let body = json!({"employer_contribution_pct": 80});
    let q = send(svc, post(&format!("/v1/groups/{id}/quotes"), key, &body)).await;
    assert_eq!(q.status, 201, "{}", q.body);
    let body = json!({"quote_id": q.body["id"], "signatory": {"name": "D", "email": "d@x.com"}});
    let e = send(
        svc,
        post(&format!("/v1/groups/{id}/enrollments"), key, &body),
    )
    .await;
    assert_eq!(e.status, 201, "{}", e.body);
    id
}

fn rows() -> Value {
    json!({"elections": [
        {"external_id": "E1", "election": "enrolled", "tier": "employeeSpouse",
         "dependents": [{"relationship": "spouse"}], "effective_date": "2026-12-01"},
        {"external_id": "E2", "election": "waived", "waiver_reason": "other_employer_group"},
        {"external_id": "E2", "election": "enrolled", "tier": "family"},
        {"external_id": "E9", "election": "waived"},
    ]})
}

async fn deductions(app: &TestApp, partner: &Partner, mode: Mode) -> Vec<Value> {
    let page = app
        .db
        .stores
        .outbox
        .events(
            &scope(partner, mode),
            &domain::event::EventFilter::since(0),
            &PageRequest::first(200),
        )
        .await
        .unwrap();
    page.items
        .into_iter()
        .filter(|e| e.event.event_type() == EventType::DeductionsChanged)
        .map(|e| domain::document::recase(e.event.data.data(), &domain::document::snake_to_camel))
        .collect()
}

fn path(gid: &str) -> String {
    format!("/v1/groups/{gid}/elections")
}

crate::http_on_both!(elections_are_recorded_and_deductions_announced);
async fn elections_are_recorded_and_deductions_announced(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let gid = enrolled(&app, &svc, &key, "acme-mfg.com").await;
    let a = send(&svc, post(&path(&gid), &key, &rows())).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (
            &a.body["received"],
            &a.body["accepted"],
            &a.body["enrolled"],
            &a.body["waived"]
        ),
        (&json!(4), &json!(2), &json!(1), &json!(1))
    );
    assert_eq!(
        (&a.body["invited"], &a.body["invites_suppressed"]),
        (&json!(0), &json!("test-mode"))
    );
    assert_eq!(a.body["deductions_webhook"], true);
    let errors = row_errors(&a);
    assert_eq!(
        errors,
        [
            ("elections[2].effective_date".to_owned(), 2),
            ("elections[3].external_id".to_owned(), 3),
        ]
    );
    // The roster shows the elections; test mode sends no email.
    let roster = send(&svc, get(&format!("/v1/groups/{gid}/members"), &key)).await;
    let by_ext = |e: &str| {
        roster.body["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["external_id"] == e)
            .unwrap()
            .clone()
    };
    let ana = by_ext("E1");
    assert_eq!(
        (
            &ana["enrollment_status"],
            &ana["tier"],
            &ana["effective_date"],
            &ana["invitation_status"]
        ),
        (
            &json!("enrolled"),
            &json!("employeeSpouse"),
            &json!("2026-12-01"),
            &json!("suppressed")
        )
    );
    assert_eq!(by_ext("E2")["enrollment_status"], "waived");
    assert!(app.mail.sent().is_empty());
    // One deductions.changed per submission, priced from the enrollment's quote.
    let events = deductions(&app, &partner, Mode::Test).await;
    assert_eq!(events.len(), 1);
    let members = events[0]["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    let e1 = members.iter().find(|m| m["externalId"] == "E1").unwrap();
    let (employee, employer) = (
        e1["employeeMonthlyCents"].as_i64().unwrap(),
        e1["employerMonthlyCents"].as_i64().unwrap(),
    );
    assert!(employee > 0 && employer > 0, "{e1}");
    assert!((employee * 4 - employer).abs() <= 4, "an 80/20 split: {e1}");
    let e2 = members.iter().find(|m| m["externalId"] == "E2").unwrap();
    assert_eq!(
        (&e2["election"], &e2["employeeMonthlyCents"], &e2["tier"]),
        (&json!("waived"), &json!(0), &Value::Null)
    );
}

crate::http_on_both!(refusals_change_nothing);
async fn refusals_change_nothing(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    // Before the enrollment: 409.
    let g = create_group(&svc, &key, &group_body("early.com")).await;
    let a = send(&svc, post(&path(g["id"].as_str().unwrap()), &key, &rows())).await;
    assert_error(&a, 409, "conflict");
    let gid = enrolled(&app, &svc, &key, "acme-mfg.com").await;
    // No valid row: 400 with every row's details.
    let bad = json!({"elections": [{"external_id": "E1", "election": "enrolled", "tier": "family"},
                                    {"externalId": "E2", "election": "maybe"}]});
    let a = send(&svc, post(&path(&gid), &key, &bad)).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(
        a.fields(),
        ["elections[0].effective_date", "elections[1].election"]
    );
    for body in [
        json!({"elections": []}),
        json!({"rows": []}),
        json!({"elections": {}}),
    ] {
        assert_error(
            &send(&svc, post(&path(&gid), &key, &body)).await,
            400,
            "invalid_request",
        );
    }
    // Another partner's group, an unknown one.
    let (_, other) = app.broker().await;
    assert_error(
        &send(&svc, post(&path(&gid), &other, &rows())).await,
        404,
        "not_found",
    );
    assert_error(
        &send(&svc, post(&path("grp_000000000000"), &key, &rows())).await,
        404,
        "not_found",
    );
    // An HR platform key lacks the capability.
    let (_, hr) = app.hr_platform().await;
    assert_error(
        &send(&svc, post(&path(&gid), &hr, &rows())).await,
        403,
        "forbidden",
    );
    // A dry run answers as the write would and changes nothing.
    let dry = send(
        &svc,
        post(&format!("{}?dry_run=true", path(&gid)), &key, &rows()),
    )
    .await;
    assert_eq!(
        (dry.status.as_u16(), &dry.body["accepted"]),
        (200, &json!(2)),
        "{}",
        dry.body
    );
    let roster = send(&svc, get(&format!("/v1/groups/{gid}/members"), &key)).await;
    for m in roster.body["members"].as_array().unwrap() {
        assert_eq!(m["enrollment_status"], "pending", "{m}");
    }
    assert!(deductions(&app, &partner, Mode::Test).await.is_empty());
}

crate::http_on_both!(live_mode_emails_enrolled_members_a_login);
async fn live_mode_emails_enrolled_members_a_login(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let live = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let key = app.key(&live, Mode::Live).await;
    let gid = enrolled(&app, &svc, &key, "acme-mfg.com").await;
    let a = send(&svc, post(&path(&gid), &key, &rows())).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (&a.body["invited"], &a.body["invites_suppressed"]),
        (&json!(1), &Value::Null)
    );
    // The enrollment's portal invitation, then one member login, both
    // sent by the job worker.
    app.run_jobs().await;
    let logins: Vec<_> = app
        .mail
        .sent()
        .into_iter()
        .filter(|m| m.kind == domain::email::EmailKind::MemberLogin)
        .collect();
    assert_eq!(logins.len(), 1);
    assert_eq!(logins[0].to, "ana@acme-mfg.com");
    // No `members.login_url` here: the email carries no link rather than
    // one that leads nowhere.
    assert!(!logins[0].text.contains("http"), "{}", logins[0].text);
    assert!(
        logins[0].text.contains("will tell you where to sign in"),
        "{}",
        logins[0].text
    );
    // The same submission again sends no second login.
    let again = send(&svc, post(&path(&gid), &key, &rows())).await;
    assert_eq!(again.body["invited"], 0, "{}", again.body);
    app.run_jobs().await;
    let logins = app
        .mail
        .sent()
        .into_iter()
        .filter(|m| m.kind == domain::email::EmailKind::MemberLogin)
        .count();
    assert_eq!(logins, 1);
    let roster = send(&svc, get(&format!("/v1/groups/{gid}/members"), &key)).await;
    let ana = roster.body["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["external_id"] == "E1")
        .unwrap()
        .clone();
    assert_eq!(ana["invitation_status"], "sent");
    // One deductions.changed per submission.
    assert_eq!(deductions(&app, &live, Mode::Live).await.len(), 2);
}

crate::http_on_both!(elections_share_the_census_write_limit);
async fn elections_share_the_census_write_limit(db: TestDb) {
    let limits = Limits {
        census_writes_per_minute: 2,
        ..Limits::default()
    };
    let app = TestApp::with_limits(db, limits);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let gid = enrolled(&app, &svc, &key, "acme-mfg.com").await; // one write
    assert_eq!(
        send(&svc, post(&path(&gid), &key, &rows())).await.status,
        200
    ); // two
    // A dry run is not charged; a real write is refused.
    let dry = send(
        &svc,
        post(&format!("{}?dry_run=true", path(&gid)), &key, &rows()),
    )
    .await;
    assert_eq!(dry.status, 200, "{}", dry.body);
    assert_error(
        &send(&svc, post(&path(&gid), &key, &rows())).await,
        429,
        "rate_limited",
    );
}
