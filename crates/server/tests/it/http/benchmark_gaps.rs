//! Rating areas without public benchmark data for the plan year (2026:
//! FL-22, SC-09, SC-19) are priced with their state's median priced area,
//! and every answer that uses one says so in `assumptions`.

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::{plan, price_ok};
use crate::http::{TestApp, create_group, post, put, send};

/// `n` employees in `zip`.
fn members(zip: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"external_id": format!("E{i}"), "dob": "1980-03-15", "zip": zip, "dependents": []}))
        .collect()
}

/// The assumption sentences of an answer.
fn assumptions(body: &Value) -> Vec<&str> {
    body["assumptions"]
        .as_array()
        .unwrap_or_else(|| panic!("no assumptions in {body}"))
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

crate::http_on_both!(a_gulf_county_group_is_quoted_on_the_florida_median_area);
async fn a_gulf_county_group_is_quoted_on_the_florida_median_area(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(
        &svc,
        &key,
        &json!({"company_name": "Port St. Joe Marine", "domain": "psj-marine.example",
                "address": {"city": "Port St. Joe", "state": "FL", "zip": "32456"}}),
    )
    .await;
    let gid = g["id"].as_str().unwrap();
    let census = json!({"members": members("32456", 3)});
    let a = send(
        &svc,
        put(&format!("/v1/groups/{gid}/census"), &key, &census),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(app.run_jobs().await, 1);

    let q = send(
        &svc,
        post(&format!("/v1/groups/{gid}/quotes"), &key, &json!({})),
    )
    .await;
    assert_eq!(q.status, 201, "{}", q.body);
    assert!(
        q.body["monthly"]["total_cents"].as_i64().unwrap() > 0,
        "{}",
        q.body
    );
    assert!(
        assumptions(&q.body).contains(
            &"ZIP 32456 is in FL-22, which has no 2026 public benchmark; priced with the FL median area FL-09."
        ),
        "{}",
        q.body
    );
}

crate::http_on_both!(price_on_plan_in_south_carolina_gaps_names_the_stand_in);
async fn price_on_plan_in_south_carolina_gaps_names_the_stand_in(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let mut census = members("29030", 2);
    census.extend(members("29821", 1).into_iter().map(|mut m| {
        m["external_id"] = json!("E9");
        m
    }));
    let body = json!({"census": census, "plan": plan()});
    let a = price_ok(&svc, &key, &body, 201).await;
    let lines = assumptions(&a.body);
    for line in [
        "ZIP 29030 is in SC-09, which has no 2026 public benchmark; priced with the SC median area SC-18.",
        "ZIP 29821 is in SC-19, which has no 2026 public benchmark; priced with the SC median area SC-18.",
    ] {
        assert!(lines.contains(&line), "{line}: {}", a.body);
    }
}
