//! The snake answer form a broker gets and the camel form an HR platform gets.

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::TestApp;
use crate::http::price_on_plan::{
    assumes, examples, int, is_id, items, keys, plan, price_ok, set, text,
};
use crate::http::price_on_plan_forms::{
    CAMEL_TOP, IGNORED, SNAKE_TOP, SNAKE_VERSION, check_camel_version,
};

/// The example plan without its family deductible and maximum.
fn plan_without_family() -> Value {
    let mut p = plan();
    let fields = p.as_object_mut().unwrap();
    fields.remove("deductible_family_cents");
    fields.remove("oop_max_family_cents");
    p
}

// -------------------------------------------------------- snake form --

crate::http_on_both!(a_broker_gets_the_snake_form);
async fn a_broker_gets_the_snake_form(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let a = price_ok(&svc, &key, &examples(), 201).await;
    let b = &a.body;
    assert_eq!(keys(b), set(SNAKE_TOP), "{b}");
    let qid = text(b, "/quote_id");
    assert!(is_id(qid, "qt_"), "{qid}");
    assert!(is_id(text(b, "/group_id"), "grp_"), "{b}");
    assert_eq!(a.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    assert_eq!(
        (&b["status"], &b["reason"]),
        (&json!("ready"), &Value::Null)
    );
    let plans = items(b, "/plans");
    let ids: Vec<&str> = plans.iter().map(|p| text(p, "/id")).collect();
    assert_eq!(ids, ["diamond", "value"]);
    for p in plans {
        assert_eq!(keys(p), set(SNAKE_VERSION), "{p}");
        assert_eq!(
            (&p["status"], &p["reason"]),
            (&json!("ready"), &Value::Null)
        );
        let pmpm = int(p, "/pmpm_cents");
        assert_eq!(
            pmpm,
            int(p, "/your_plan_pmpm_cents") + int(p, "/service_pmpm_cents"),
            "{p}"
        );
        // A PMPM plan: its own PMPM comes back unchanged.
        assert_eq!(int(p, "/your_plan_pmpm_cents"), 52_000, "{p}");
        assert_eq!(int(p, "/deductible_cents"), 340_000, "{p}");
        assert!(int(p, "/max_extra_cents") >= 0, "{p}");
        let (monthly, service) = (
            int(p, "/monthly_premium_cents"),
            int(p, "/service_monthly_cents"),
        );
        assert!(monthly > service && service > 0, "{p}");
        assert!(int(p, "/service_pmpm_cents") > 0, "{p}");
    }
    assert_eq!(plans[0]["plan_name"], "Diamond");
    assert_eq!(plans[1]["plan_name"], "Value");
    assert_eq!(int(&plans[0], "/oop_max_cents"), 170_000);
    assert_eq!(int(&plans[1], "/oop_max_cents"), 340_000);
    // Diamond caps lower, so its layer costs more.
    assert!(int(&plans[0], "/service_pmpm_cents") >= int(&plans[1], "/service_pmpm_cents"));

    let ignored = items(b, "/ignored_plans");
    assert_eq!(ignored.len(), 3, "{b}");
    for i in ignored {
        assert_eq!(keys(i), set(IGNORED), "{i}");
    }
    assert!(assumes(b, "Plan year starts 2026-12-01"), "{b}");
    assert!(assumes(b, "Company ZIP 94103"), "{b}");
    assert!(assumes(b, "generated company"), "{b}");
    assert!(!assumes(b, "Family deductible assumed"), "{b}");
    assert!(!assumes(b, "Family out-of-pocket maximum assumed"), "{b}");

    // Without the family amounts they default to twice the individual
    // ones (what the example plan says anyway), and that is disclosed.
    let mut defaulted = examples();
    defaulted["plan"] = plan_without_family();
    let d = price_ok(&svc, &key, &defaulted, 201).await;
    assert_ne!(d.body["quote_id"], b["quote_id"]);
    assert!(
        assumes(
            &d.body,
            "Family deductible assumed at twice the individual deductible"
        ),
        "{}",
        d.body
    );
    assert!(
        assumes(&d.body, "Family out-of-pocket maximum assumed at twice"),
        "{}",
        d.body
    );
    assert_eq!(d.body["plans"], b["plans"]);
}

crate::http_on_both!(an_hr_platform_gets_the_camel_form);
async fn an_hr_platform_gets_the_camel_form(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, hr) = app.hr_platform().await;
    let (_, broker) = app.broker().await;
    let a = price_ok(&svc, &hr, &examples(), 201).await;
    let b = &a.body;
    assert_eq!(keys(b), set(CAMEL_TOP), "{b}");
    let qid = text(b, "/quoteId");
    assert!(
        is_id(qid, "qt_") && is_id(text(b, "/groupId"), "grp_"),
        "{b}"
    );
    assert_eq!(a.header("location"), Some(&*format!("/v1/quotes/{qid}")));
    assert_eq!(
        (&b["status"], &b["reason"]),
        (&json!("ready"), &Value::Null)
    );
    assert_eq!(
        keys(&b["usedPlans"]),
        set(&["sent", "used", "baseCandidates", "benchmarkCandidates"])
    );
    let tm = json!({"simulated_plan_years": 2000, "census_members": 12,
                    "generated_at": "2026-11-21T13:14:00Z"});
    assert_eq!(b["time_machine"], tm);
    for i in items(b, "/ignoredPlans") {
        assert_eq!(keys(i), set(IGNORED), "{i}");
    }
    let versions = items(b, "/versions");
    let ids: Vec<&str> = versions.iter().map(|v| text(v, "/id")).collect();
    assert_eq!(ids, ["diamond", "value"]);
    for v in versions {
        check_camel_version(v);
        assert_eq!(
            (&v["status"], &v["reason"]),
            (&json!("ready"), &Value::Null)
        );
        assert_eq!(v["time_machine"], tm);
        assert_eq!(v["hsa"]["eligible"], true);
        assert_eq!(int(v, "/joint/basePmpmCents"), 52_000);
        assert_eq!(int(v, "/base_plan/deductible_individual_cents"), 340_000);
        assert_eq!(v["underlyingPlan"]["source"], "partner_plan");
        assert_eq!(v["underlyingPlan"]["brokerPlan"], Value::Null);
    }
    assert_eq!(versions[0]["name"], "Diamond");
    assert_eq!(
        int(&versions[0], "/member_oop_max/individual_cents"),
        170_000
    );
    assert_eq!(
        int(&versions[1], "/member_oop_max/individual_cents"),
        340_000
    );

    // Both forms carry the same figures.
    let s = price_ok(&svc, &broker, &examples(), 201).await;
    for (p, v) in items(&s.body, "/plans").iter().zip(versions) {
        let pairs = [
            ("/pmpm_cents", "/joint/totalPmpmCents"),
            ("/your_plan_pmpm_cents", "/joint/basePmpmCents"),
            ("/service_pmpm_cents", "/joint/serviceLayerPmpmCents"),
            ("/monthly_premium_cents", "/monthly/totalCents"),
            ("/service_monthly_cents", "/serviceOnly/monthlyCents"),
            ("/deductible_cents", "/joint/baseDeductibleIndividualCents"),
            ("/oop_max_cents", "/member_oop_max/individual_cents"),
            ("/max_extra_cents", "/worst_year/modeled_extra_cents"),
        ];
        for (snake, camel) in pairs {
            assert_eq!(int(p, snake), int(v, camel), "{snake} vs {camel}");
        }
    }
    assert_eq!(s.body["assumptions"], b["assumptions"]);
    assert_eq!(s.body["ignored_plans"], b["ignoredPlans"]);
}
