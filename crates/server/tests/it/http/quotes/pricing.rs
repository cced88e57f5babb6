//! Quotes priced from the stored census: comparisons, determinism, review and finalize.

use actix_web::test::TestRequest;
use domain::event::EventType;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::quotes::{
    bare_group, employees, events, figures, households, id, live_broker, member, quote, quotes_of,
    ready, setup,
};
use crate::http::{T0, TestApp, assert_error, authed, get, group_body, post, send};

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
