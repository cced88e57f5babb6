//! Price-on-plan answering 200 with every version `unavailable`.

use serde_json::json;
use testkit::db::TestDb;

use crate::http::price_on_plan::{census, group_count, items, plan, price_ok, text};
use crate::http::{TestApp, get, send};

// ---------------------------------------------------------------- 200 --

crate::http_on_both!(market_plans_without_a_base_answer_200_unavailable);
async fn market_plans_without_a_base_answer_200_unavailable(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;
    let body = json!({
        "census": census(),
        "marketPlans": [
            {"carrier": "Kaiser Permanente", "planName": "Gold HMO", "metalTier": "Gold",
             "planType": "HMO", "pmpmCents": 70000},
            {"carrier": "Blue Shield", "planName": "Platinum PPO", "metalTier": "Platinum",
             "planType": "PPO", "pmpmCents": 95000},
        ],
    });
    let a = price_ok(&svc, &hr, &body, 200).await;
    let b = &a.body;
    assert_eq!(b["status"], "unavailable", "{b}");
    assert!(text(b, "/reason").contains("qualifies as a base"), "{b}");
    let ignored = items(b, "/ignoredPlans");
    assert_eq!(ignored.len(), 1, "{b}");
    assert_eq!(ignored[0]["index"], 0);
    assert_eq!(ignored[0]["carrier"], "Kaiser Permanente");
    assert_eq!(ignored[0]["planName"], "Gold HMO");
    assert!(text(&ignored[0], "/reason").contains("HMO"), "{b}");
    let used = json!({"sent": 2, "used": 1, "baseCandidates": 0, "benchmarkCandidates": 1});
    assert_eq!(b["usedPlans"], used);
    let versions = items(b, "/versions");
    assert_eq!(versions.len(), 2, "{b}");
    for v in versions {
        assert_eq!(v["status"], "unavailable", "{v}");
        assert!(!text(v, "/reason").is_empty(), "{v}");
    }
    // It is an answer, not an error: a quote that reads back.
    let qid = text(b, "/quoteId");
    assert_eq!(a.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    let read = send(&svc, get(&format!("/v1/quotes/{qid}"), &hr)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(&read.body, b);
    // The same body again finds it.
    let again = price_ok(&svc, &hr, &body, 200).await;
    assert_eq!(again.raw, a.raw);
    assert_eq!(group_count(&svc, &hr).await, 1);
}

crate::http_on_both!(a_plan_below_both_versions_answers_200_unavailable);
async fn a_plan_below_both_versions_answers_200_unavailable(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let mut low = plan();
    for (k, v) in [
        ("deductible_individual_cents", 170_000),
        ("deductible_family_cents", 340_000),
        ("oop_max_individual_cents", 170_000),
        ("oop_max_family_cents", 340_000),
    ] {
        low[k] = json!(v);
    }
    let body = json!({"census": census(), "plan": low});

    let a = price_ok(&svc, &broker, &body, 200).await;
    let b = &a.body;
    assert_eq!(b["status"], "unavailable", "{b}");
    assert!(
        text(b, "/reason").contains("no version can be built on"),
        "{b}"
    );
    let plans = items(b, "/plans");
    let ids: Vec<&str> = plans.iter().map(|p| text(p, "/id")).collect();
    assert_eq!(ids, ["diamond", "value"]);
    for p in plans {
        assert_eq!(p["status"], "unavailable", "{p}");
        assert!(!text(p, "/reason").is_empty(), "{p}");
    }

    let a = price_ok(&svc, &hr, &body, 200).await;
    let b = &a.body;
    assert_eq!(b["status"], "unavailable", "{b}");
    assert!(b["reason"].is_string(), "{b}");
    for v in items(b, "/versions") {
        assert_eq!(v["status"], "unavailable", "{v}");
        assert!(!text(v, "/reason").is_empty(), "{v}");
    }
}
