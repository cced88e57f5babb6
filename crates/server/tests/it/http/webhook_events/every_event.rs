//! Every event type reaching a broker in snake_case and an HR platform in camelCase.

use serde_json::json;
use testkit::db::TestDb;

use crate::http::webhook_events::{
    Hooked, Style, broker_employees, hr_employees, id_of, read_back,
};
use crate::http::webhooks::{Receiver, keys, ping, register};
use crate::http::{TestApp, create_group, get, group_body, post, put, send};

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
