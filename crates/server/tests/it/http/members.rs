//! `POST /v1/groups/{id}/members`, `PATCH /v1/groups/{id}/members/{memberId}`
//! and the roster `GET /v1/groups/{id}/members` (contract section 3,
//! Members and roster).

use actix_web::test::TestRequest;
use http_api::Limits;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{
    Answer, TestApp, assert_error, authed, create_group, get, group_body, post, put, send,
};

fn census() -> Value {
    json!({"members": [
        {"external_id": "E1", "first_name": "Ana", "last_name": "Diaz", "email": "ana@acme-mfg.com",
         "dob": "1988-04-12", "zip": "60601",
         "dependents": [{"relationship": "child", "name": "Leo", "dob": "2016-09-30"}]},
        {"external_id": "E2", "first_name": "Ben", "last_name": "Okafor", "dob": "1979-11-02", "zip": "60614"},
    ]})
}

fn hire() -> Value {
    json!({"external_id": "E3", "first_name": "Chen", "last_name": "Wu", "email": "chen@acme-mfg.com",
           "dob": "1991-06-30", "zip": "60614"})
}

/// A PATCH with a JSON body.
fn patch(path: &str, key: &str, body: &Value) -> TestRequest {
    authed(TestRequest::patch().uri(path).set_json(body), key)
}

struct Group {
    id: String,
}

impl Group {
    fn members(&self) -> String {
        format!("/v1/groups/{}/members", self.id)
    }
    fn member(&self, id: &str) -> String {
        format!("/v1/groups/{}/members/{id}", self.id)
    }
}

/// A group with [`census`] and its comparison run; `enroll` also quotes
/// and enrolls it.
async fn setup<S, B>(app: &TestApp, svc: &S, key: &str, domain: &str, enroll: bool) -> Group
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
    let a = send(svc, put(&format!("/v1/groups/{id}/census"), key, &census())).await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.run_jobs().await;
    if enroll {
        let q = send(
            svc,
            post(&format!("/v1/groups/{id}/quotes"), key, &json!({})),
        )
        .await;
        assert_eq!(q.status, 201, "{}", q.body);
        let body =
            json!({"quote_id": q.body["id"], "signatory": {"name": "D", "email": "d@x.com"}});
        let e = send(
            svc,
            post(&format!("/v1/groups/{id}/enrollments"), key, &body),
        )
        .await;
        assert_eq!(e.status, 201, "{}", e.body);
    }
    Group { id }
}

fn fields(a: &Answer) -> Vec<String> {
    a.fields()
}

crate::http_on_both!(a_new_hire_joins_the_census_and_restarts_the_comparison);
async fn a_new_hire_joins_the_census_and_restarts_the_comparison(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = setup(&app, &svc, &key, "acme-mfg.com", false).await;
    app.clock.advance(1);
    let a = send(&svc, post(&g.members(), &key, &hire())).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert!(a.body["id"].as_str().unwrap().starts_with("mem_"));
    assert_eq!(a.body["external_id"], "E3");
    assert_eq!(a.body["zip"], "60614");
    assert_eq!(
        (a.body["termination_date"].clone(), a.body["cobra"].clone()),
        (Value::Null, Value::Null)
    );
    let group = send(&svc, get(&format!("/v1/groups/{}", g.id), &key)).await;
    assert_eq!(group.body["census_member_count"], 3);
    let census = send(&svc, get(&format!("/v1/groups/{}/census", g.id), &key)).await;
    assert_eq!(
        census.body["members"][0]["id"], a.body["id"],
        "newest first"
    );
    // The census changed: quotes wait for its comparison again.
    let q = send(
        &svc,
        post(&format!("/v1/groups/{}/quotes", g.id), &key, &json!({})),
    )
    .await;
    assert_error(&q, 409, "rates_pending");
    app.run_jobs().await;
    let q = send(
        &svc,
        post(&format!("/v1/groups/{}/quotes", g.id), &key, &json!({})),
    )
    .await;
    assert_eq!(q.body["census"]["employees"], 3, "{}", q.body);
}

crate::http_on_both!(bad_new_hires_are_refused_and_change_nothing);
async fn bad_new_hires_are_refused_and_change_nothing(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = setup(&app, &svc, &key, "acme-mfg.com", false).await;
    let cases = [
        (
            json!({"external_id": "E9", "dob": "1990-01-01", "zip": "606"}),
            vec!["zip"],
        ),
        (
            json!({"external_id": "E9", "age": 40, "zip": "60601"}),
            vec!["dob"],
        ),
        (
            json!({"external_id": "E9", "dob": "1990-01-01", "zip": "60601", "shoe": 9}),
            vec!["shoe"],
        ),
        (
            json!({"external_id": "E9", "dob": "1990-01-01", "zip": "60601", "status": "terminated"}),
            vec!["termination_date"],
        ),
        (
            json!({"external_id": "E9", "dob": "1990-01-01", "zip": "60601", "termination_date": "2026-12-01"}),
            vec!["termination_date"],
        ),
        (
            json!({"id": "mem_000000000000", "zip": "60601"}),
            vec!["id"],
        ),
    ];
    for (body, want) in cases {
        let a = send(&svc, post(&g.members(), &key, &body)).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(fields(&a), want, "{body}: {}", a.body);
    }
    // The same external id or email as another member: 409.
    for dup in [
        json!({"external_id": "E1", "dob": "1990-01-01", "zip": "60601"}),
        json!({"external_id": "E9", "email": "ANA@acme-mfg.com", "dob": "1990-01-01", "zip": "60601"}),
    ] {
        assert_error(
            &send(&svc, post(&g.members(), &key, &dup)).await,
            409,
            "conflict",
        );
    }
    let group = send(&svc, get(&format!("/v1/groups/{}", g.id), &key)).await;
    assert_eq!(group.body["census_member_count"], 2);
    // Another partner's group, and an unknown one.
    let (_, other) = app.broker().await;
    assert_error(
        &send(&svc, post(&g.members(), &other, &hire())).await,
        404,
        "not_found",
    );
    let unknown = "/v1/groups/grp_000000000000/members";
    assert_error(
        &send(&svc, post(unknown, &key, &hire())).await,
        404,
        "not_found",
    );
}

crate::http_on_both!(member_writes_count_as_census_writes);
async fn member_writes_count_as_census_writes(db: TestDb) {
    let limits = Limits {
        census_writes_per_minute: 2,
        ..Limits::default()
    };
    let app = TestApp::with_limits(db, limits);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = setup(&app, &svc, &key, "acme-mfg.com", false).await; // one write
    let a = send(&svc, post(&g.members(), &key, &hire())).await; // two
    assert_eq!(a.status, 201, "{}", a.body);
    let id = a.body["id"].as_str().unwrap().to_owned();
    let a = send(&svc, patch(&g.member(&id), &key, &json!({"zip": "60601"}))).await;
    assert_error(&a, 429, "rate_limited");
}

crate::http_on_both!(an_update_changes_only_what_is_sent);
async fn an_update_changes_only_what_is_sent(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = setup(&app, &svc, &key, "acme-mfg.com", false).await;
    let added = send(&svc, post(&g.members(), &key, &hire())).await;
    let id = added.body["id"].as_str().unwrap().to_owned();
    let a = send(
        &svc,
        patch(
            &g.member(&id),
            &key,
            &json!({"zip": "60601", "last_name": null}),
        ),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (&a.body["zip"], &a.body["last_name"], &a.body["id"]),
        (&json!("60601"), &json!("Wu"), &json!(id))
    );
    // Bad fields, a taken external id, an unknown member.
    let a = send(
        &svc,
        patch(&g.member(&id), &key, &json!({"zip": "x", "dob": "soon"})),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    let a = send(
        &svc,
        patch(&g.member(&id), &key, &json!({"external_id": "E1"})),
    )
    .await;
    assert_error(&a, 409, "conflict");
    for path in [g.member("mem_000000000000"), g.member("nope")] {
        assert_error(
            &send(&svc, patch(&path, &key, &json!({"zip": "60601"}))).await,
            404,
            "not_found",
        );
    }
    let (_, other) = app.broker().await;
    assert_error(
        &send(
            &svc,
            patch(&g.member(&id), &other, &json!({"zip": "60601"})),
        )
        .await,
        404,
        "not_found",
    );
}

crate::http_on_both!(a_termination_after_enrollment_opens_cobra);
async fn a_termination_after_enrollment_opens_cobra(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    // Before the enrollment a termination has no COBRA.
    let before = setup(&app, &svc, &key, "early.com", false).await;
    let stored = send(&svc, get(&format!("/v1/groups/{}/census", before.id), &key)).await;
    let id = stored.body["members"][0]["id"].as_str().unwrap().to_owned();
    let a = send(
        &svc,
        patch(&before.member(&id), &key, &json!({"status": "terminated"})),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(fields(&a), ["termination_date"]);
    let t = json!({"status": "terminated", "termination_date": "2026-12-15"});
    let a = send(&svc, patch(&before.member(&id), &key, &t)).await;
    assert_eq!(
        (a.status.as_u16(), &a.body["cobra"]),
        (200, &Value::Null),
        "{}",
        a.body
    );

    // After it: eligible until the termination date + 60 days.
    let g = setup(&app, &svc, &key, "acme-mfg.com", true).await;
    let stored = send(&svc, get(&format!("/v1/groups/{}/census", g.id), &key)).await;
    let id = stored.body["members"][0]["id"].as_str().unwrap().to_owned();
    let a = send(&svc, patch(&g.member(&id), &key, &t)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["termination_date"], "2026-12-15");
    assert_eq!(
        a.body["cobra"],
        json!({"status": "eligible", "election_deadline": "2027-02-13"})
    );
    // A census replace that keeps the member keeps its termination.
    let a = send(
        &svc,
        put(&format!("/v1/groups/{}/census", g.id), &key, &census()),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let roster = send(&svc, get(&g.members(), &key)).await;
    let ana = roster.body["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == json!(id))
        .unwrap()
        .clone();
    assert_eq!(ana["cobra"]["election_deadline"], "2027-02-13", "{ana}");
    // Active again: the termination is gone.
    let a = send(
        &svc,
        patch(&g.member(&id), &key, &json!({"status": "active"})),
    )
    .await;
    assert_eq!(
        (&a.body["termination_date"], &a.body["cobra"]),
        (&Value::Null, &Value::Null),
        "{}",
        a.body
    );
}

crate::http_on_both!(the_roster_exists_from_the_enrollment_without_dependent_identities);
async fn the_roster_exists_from_the_enrollment_without_dependent_identities(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let early = setup(&app, &svc, &key, "early.com", false).await;
    let a = send(&svc, get(&early.members(), &key)).await;
    assert_error(&a, 404, "not_found");
    assert_eq!(
        a.body["message"],
        "the group has no roster until its enrollment"
    );
    assert_error(
        &send(&svc, get("/v1/groups/grp_000000000000/members", &key)).await,
        404,
        "not_found",
    );

    let g = setup(&app, &svc, &key, "acme-mfg.com", true).await;
    let a = send(&svc, get(&format!("{}?limit=1", g.members()), &key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let cursor = a.body["next_cursor"].as_str().unwrap().to_owned();
    let b = send(
        &svc,
        get(&format!("{}?limit=1&cursor={cursor}", g.members()), &key),
    )
    .await;
    assert_eq!(b.body["next_cursor"], Value::Null);
    let mut all: Vec<Value> = a.body["members"].as_array().unwrap().clone();
    all.extend(b.body["members"].as_array().unwrap().clone());
    let ana = all.iter().find(|m| m["external_id"] == "E1").unwrap();
    let keys: Vec<&str> = ana
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "cobra",
            "dependent_count",
            "effective_date",
            "enrollment_status",
            "external_id",
            "first_name",
            "id",
            "invitation_status",
            "last_name",
            "status",
            "tier"
        ]
    );
    assert_eq!(
        (
            &ana["dependent_count"],
            &ana["enrollment_status"],
            &ana["invitation_status"]
        ),
        (&json!(1), &json!("pending"), &json!("not_sent"))
    );
    let text = serde_json::to_string(&all).unwrap();
    assert!(
        !text.contains("Leo") && !text.contains("1988-04-12"),
        "{text}"
    );
    assert_error(
        &send(&svc, get(&format!("{}?limit=0", g.members()), &key)).await,
        400,
        "invalid_request",
    );
}

crate::http_on_both!(hr_platforms_manage_members_in_camel_case);
async fn hr_platforms_manage_members_in_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.hr_platform().await;
    let g = setup(&app, &svc, &key, "acme-mfg.com", true).await;
    let body = json!({"externalId": "E3", "age": 33, "zip": "60614", "status": "terminated",
                      "terminationDate": "2026-12-15"});
    let a = send(&svc, post(&g.members(), &key, &body)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["terminationDate"], "2026-12-15");
    assert_eq!(a.body["cobra"]["electionDeadline"], "2027-02-13");
    let roster = send(&svc, get(&g.members(), &key)).await;
    assert!(
        roster.body["members"][0]["enrollmentStatus"].is_string(),
        "{}",
        roster.body
    );
    assert!(roster.body.get("nextCursor").is_some());
}
