//! `GET /v1/groups/{id}/account` (contract section 3, Account): 404 until
//! the enrollment, funding and premium of the enrolled quote, spend from
//! the claims ledger with small cells suppressed, the test-mode ledger,
//! savings, and enrolled and waived counts.

use domain::account::ClaimsAggregate;
use domain::ids::GroupId;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{TestApp, assert_error, create_group, get, group_body, post, put, send};

/// A group of `n` employees, quoted at an 80% employer share (finalized
/// when in review) and enrolled; its id and the quote.
async fn enrolled<S, B>(
    app: &TestApp,
    svc: &S,
    key: &str,
    domain: &str,
    n: usize,
) -> (String, Value)
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
    let members: Vec<Value> = (0..n)
        .map(|i| json!({"external_id": format!("E{i}"), "dob": "1985-03-03", "zip": "60601", "dependents": []}))
        .collect();
    let a = send(
        svc,
        put(
            &format!("/v1/groups/{id}/census"),
            key,
            &json!({"members": members}),
        ),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.run_jobs().await;
    let q = send(
        svc,
        post(
            &format!("/v1/groups/{id}/quotes"),
            key,
            &json!({"employer_contribution_pct": 80}),
        ),
    )
    .await;
    assert_eq!(q.status, 201, "{}", q.body);
    let qid = q.body["id"]
        .as_str()
        .or(q.body["quoteId"].as_str())
        .unwrap()
        .to_owned();
    if q.body["status"] == "in_review" {
        let path = format!("/v1/test_helpers/quotes/{qid}/finalize");
        assert_eq!(send(svc, post(&path, key, &json!({}))).await.status, 200);
    }
    let body = json!({"quote_id": qid, "signatory": {"name": "D", "email": "d@x.com"}});
    let e = send(
        svc,
        post(&format!("/v1/groups/{id}/enrollments"), key, &body),
    )
    .await;
    assert_eq!(e.status, 201, "{}", e.body);
    (id, q.body)
}

fn account(gid: &str) -> String {
    format!("/v1/groups/{gid}/account")
}

crate::http_on_both!(the_account_exists_from_the_enrollment);
async fn the_account_exists_from_the_enrollment(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(&svc, &key, &group_body("early.com")).await;
    assert_error(
        &send(&svc, get(&account(g["id"].as_str().unwrap()), &key)).await,
        404,
        "not_found",
    );
    assert_error(
        &send(&svc, get(&account("grp_000000000000"), &key)).await,
        404,
        "not_found",
    );
    let (gid, quote) = enrolled(&app, &svc, &key, "acme-mfg.com", 3).await;
    let (_, other) = app.broker().await;
    assert_error(
        &send(&svc, get(&account(&gid), &other)).await,
        404,
        "not_found",
    );

    // Two elections: one enrolled, one waived.
    let rows = json!({"elections": [
        {"external_id": "E0", "election": "enrolled", "tier": "employeeOnly", "effective_date": "2026-12-01"},
        {"external_id": "E1", "election": "waived"}]});
    assert_eq!(
        send(
            &svc,
            post(&format!("/v1/groups/{gid}/elections"), &key, &rows)
        )
        .await
        .status,
        200
    );
    let a = send(&svc, get(&account(&gid), &key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let b = &a.body;
    assert_eq!(
        (&b["group_id"], &b["as_of"]),
        (&json!(gid), &json!("2026-11-21T13:14:00Z"))
    );
    let monthly = quote["monthly"]["total_cents"].as_i64().unwrap();
    assert_eq!(b["funding"]["monthly_cents"], monthly);
    let split: i64 = [
        "expected_claims_cents",
        "stop_loss_cents",
        "care_navigation_cents",
        "admin_fees_cents",
    ]
    .iter()
    .map(|k| b["funding"][k].as_i64().unwrap())
    .sum();
    assert!((monthly - split).abs() <= 4, "{split} of {monthly}");
    assert_eq!(
        b["premium_breakdown"]["employee_cents"],
        quote["employee_contribution"]["premium_cents"]
    );
    assert_eq!(
        b["premium_breakdown"]["employee_cents"].as_i64().unwrap()
            + b["premium_breakdown"]["employer_cents"].as_i64().unwrap(),
        monthly
    );
    assert_eq!(
        b["savings"]["monthly_cents"],
        quote["comparison"]["savings_monthly_cents"]
    );
    assert_eq!(
        (&b["enrolled_count"], &b["waived_count"]),
        (&json!(1), &json!(1))
    );
    // Three members: the generated test-mode ledger is all small cells.
    assert_eq!(b["period"], "2026-10");
    assert_eq!(
        (&b["spend"]["suppressed"], &b["spend"]["categories"]),
        (&json!(true), &json!([]))
    );
    assert!(b["spend"]["total_cents"].as_i64().unwrap() > 0);
    let text = b.to_string();
    assert!(!text.contains("E0") && !text.contains("1985"), "{text}");
}

crate::http_on_both!(categories_show_when_every_cell_has_11_members);
async fn categories_show_when_every_cell_has_11_members(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    // A generated ledger for 400 members reaches 11 in every category.
    let (gid, _) = enrolled(&app, &svc, &key, "big.com", 400).await;
    let a = send(&svc, get(&account(&gid), &key)).await;
    let spend = &a.body["spend"];
    assert_eq!(spend["suppressed"], false, "{spend}");
    let cats = spend["categories"].as_array().unwrap();
    assert_eq!(cats.len(), 7);
    let sum: i64 = cats
        .iter()
        .map(|c| c["amount_cents"].as_i64().unwrap())
        .sum();
    assert_eq!(sum, spend["total_cents"].as_i64().unwrap());
    // Stable: the same group reads the same figures.
    assert_eq!(
        send(&svc, get(&account(&gid), &key)).await.body["spend"],
        *spend
    );

    // Imported claims replace the generated ledger; one cell of 10 members
    // suppresses every category, 11 shows them.
    let id = GroupId::parse(&gid).unwrap();
    let row = |category: &str, n: u32| ClaimsAggregate {
        month: "2026-11".to_owned(),
        category: category.to_owned(),
        amount_cents: 50_000,
        member_count: n,
    };
    app.state
        .accounts
        .import(&id, &[row("pharmacy", 40), row("inpatient", 10)])
        .await
        .unwrap();
    let a = send(&svc, get(&account(&gid), &key)).await;
    assert_eq!(a.body["period"], "2026-11");
    assert_eq!(
        a.body["spend"],
        json!({"suppressed": true, "total_cents": 100_000, "categories": []})
    );
    app.state
        .accounts
        .import(&id, &[row("inpatient", 11)])
        .await
        .unwrap();
    let a = send(&svc, get(&account(&gid), &key)).await;
    assert_eq!(
        a.body["spend"],
        json!({"suppressed": false, "total_cents": 100_000, "categories": [
            {"category": "pharmacy", "amount_cents": 50_000}, {"category": "inpatient", "amount_cents": 50_000}]})
    );
    // A bad row imports nothing.
    let bad = ClaimsAggregate {
        month: "2026-13".to_owned(),
        ..row("dental", 50)
    };
    assert!(
        app.state
            .accounts
            .import(&id, &[row("pharmacy", 99), bad])
            .await
            .is_err()
    );
    assert_eq!(
        send(&svc, get(&account(&gid), &key)).await.body["spend"]["total_cents"],
        100_000
    );
}

crate::http_on_both!(live_mode_has_no_generated_spend_and_hr_reads_camel_case);
async fn live_mode_has_no_generated_spend_and_hr_reads_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let live = app.partner("Live Co", PartnerKind::Broker, true).await;
    let key = app.key(&live, Mode::Live).await;
    let (gid, _) = enrolled(&app, &svc, &key, "acme-mfg.com", 3).await;
    let a = send(&svc, get(&account(&gid), &key)).await;
    assert_eq!(a.body["period"], Value::Null);
    assert_eq!(
        a.body["spend"],
        json!({"suppressed": false, "total_cents": 0, "categories": []})
    );

    let (_, hr) = app.hr_platform().await;
    let (gid, _) = enrolled(&app, &svc, &hr, "payroll.com", 3).await;
    let a = send(&svc, get(&account(&gid), &hr)).await;
    assert!(
        a.body["premiumBreakdown"]["employeeCents"].is_i64(),
        "{}",
        a.body
    );
    assert!(a.body["spend"]["totalCents"].is_i64());
    assert!(a.body.get("enrolledCount").is_some());
}
