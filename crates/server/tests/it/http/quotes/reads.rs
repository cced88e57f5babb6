//! Reading quotes back: newest-first pages, scope, camel case and idempotent replays.

use serde_json::json;
use testkit::db::TestDb;

use crate::http::quotes::{id, live_broker, quote, quotes_of, ready, setup};
use crate::http::{TestApp, assert_error, get, post, send};

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
