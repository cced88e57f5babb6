//! Refused quotes: 400, 404, 409 `rates_pending`, 422, and the quote-create limit.

use http_api::Limits;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::quotes::{
    bare_group, employees, households, id, live_broker, member, quote, quotes_of, ready, setup,
};
use crate::http::{TestApp, assert_error, create_group, get, group_body, put, send};

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
