//! Field style (contract section 1): broker keys get snake_case, HR
//! platform keys camelCase; either kind may send either style; a field
//! sent in both styles and unknown fields are 400s naming them; error
//! paths follow the caller's style.

use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{TestApp, assert_error, create_group, get, group_body, patch, post, send};

/// Every object key of `v`, with its path.
fn keys(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let path = format!("{at}/{k}");
                out.push(path.clone());
                keys(v, &path, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, at, out)),
        _ => {}
    }
}

/// `group_body` in camelCase.
fn camel_body(domain: &str) -> Value {
    http_api::casing::to_style(group_body(domain), http_api::casing::Style::Camel)
}

crate::http_on_both!(brokers_get_snake_case);
async fn brokers_get_snake_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    // A broker may send camelCase and still gets snake_case.
    let g = create_group(&svc, &key, &camel_body("snake.com")).await;
    assert_eq!(g["company_name"], "Acme Manufacturing");
    assert_eq!(g["census_member_count"], 0);
    assert_eq!(g["current_coverage"]["pepm_cents"], 78000);
    assert_eq!(g["current_coverage"]["plan_type"], "fully_insured");
    let mut all = Vec::new();
    keys(&g, "", &mut all);
    assert!(
        all.iter()
            .all(|k| !k.chars().any(|c| c.is_ascii_uppercase())),
        "{all:?}"
    );
    let list = send(&svc, get("/v1/groups", &key)).await;
    assert!(list.body.get("next_cursor").is_some(), "{}", list.body);
    assert!(list.body.get("nextCursor").is_none(), "{}", list.body);
    assert_eq!(list.body["groups"][0]["company_name"], "Acme Manufacturing");
}

crate::http_on_both!(hr_platforms_get_camel_case);
async fn hr_platforms_get_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.hr_platform().await;
    // An HR platform may send snake_case and still gets camelCase.
    let g = create_group(&svc, &key, &group_body("camel.com")).await;
    assert_eq!(g["companyName"], "Acme Manufacturing");
    assert_eq!(g["censusMemberCount"], 0);
    assert_eq!(g["currentCoverage"]["pepmCents"], 78000);
    assert_eq!(g["currentCoverage"]["renewalDate"], "2027-01-01");
    assert_eq!(g["externalId"], "crm-4411");
    assert!(g["companyState"].is_null());
    assert!(g["createdAt"].is_string() && g["updatedAt"].is_string());
    let mut all = Vec::new();
    keys(&g, "", &mut all);
    assert!(all.len() > 20, "{all:?}");
    assert!(all.iter().all(|k| !k.contains('_')), "{all:?}");
    // Values are never re-cased.
    assert_eq!(g["currentCoverage"]["planType"], "fully_insured");

    let id = g["id"].as_str().unwrap();
    let read = send(&svc, get(&format!("/v1/groups/{id}"), &key)).await;
    assert_eq!(read.body, g);
    let list = send(&svc, get("/v1/groups", &key)).await;
    assert_eq!(list.body, json!({"groups": [g], "nextCursor": null}));
    let changed = send(
        &svc,
        patch(
            &format!("/v1/groups/{id}"),
            &key,
            &json!({"currentCoverage": {"pepmCents": 1}}),
        ),
    )
    .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert_eq!(changed.body["currentCoverage"]["pepmCents"], 1);
}

crate::http_on_both!(a_field_in_both_styles_is_refused);
async fn a_field_in_both_styles_is_refused(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let body = json!({"company_name": "A", "companyName": "B", "domain": "both.com"});
    let a = send(&svc, post("/v1/groups", &broker, &body)).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["company_name"]);
    let a = send(&svc, post("/v1/groups", &hr, &body)).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["companyName"]);
    let nested = json!({"company_name": "A", "domain": "both.com",
                        "current_coverage": {"pepm_cents": 1, "pepmCents": 1}});
    let a = send(&svc, post("/v1/groups", &hr, &nested)).await;
    assert_eq!(a.fields(), ["currentCoverage.pepmCents"]);
    let a = send(&svc, post("/v1/groups", &broker, &nested)).await;
    assert_eq!(a.fields(), ["current_coverage.pepm_cents"]);
    // Nothing was created.
    let list = send(&svc, get("/v1/groups", &broker)).await;
    assert_eq!(list.body["groups"], json!([]));
}

crate::http_on_both!(unknown_fields_are_each_named);
async fn unknown_fields_are_each_named(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let body = json!({
        "company_name": "A", "domain": "unknown.com", "colour": "red",
        "address": {"zip": "60601", "plus4": "1234"},
        "contact": {"name": "N", "phone": "555"}
    });
    for key in [&broker, &hr] {
        let a = send(&svc, post("/v1/groups", key, &body)).await;
        assert_error(&a, 400, "invalid_request");
        let mut fields = a.fields();
        fields.sort();
        assert_eq!(fields, ["address.plus4", "colour", "contact.phone"]);
        for d in a.body["details"].as_array().unwrap() {
            assert!(d["message"].as_str().unwrap().contains("not a known field"));
        }
    }
    // A camelCase unknown field is named in the caller's style.
    let body = json!({"company_name": "A", "domain": "unknown.com", "faxNumber": "1"});
    let a = send(&svc, post("/v1/groups", &hr, &body)).await;
    assert_eq!(a.fields(), ["faxNumber"]);
    let a = send(&svc, post("/v1/groups", &broker, &body)).await;
    assert_eq!(a.fields(), ["fax_number"]);
}

crate::http_on_both!(error_paths_follow_the_callers_style);
async fn error_paths_follow_the_callers_style(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let mut body = group_body("paths.com");
    body["current_coverage"]["pepm_cents"] = json!(-1);
    body["current_coverage"]["renewal_date"] = json!("2027-13-40");
    body["company_name"] = json!("");
    let a = send(&svc, post("/v1/groups", &hr, &body)).await;
    assert_error(&a, 400, "invalid_request");
    let mut fields = a.fields();
    fields.sort();
    assert_eq!(
        fields,
        [
            "companyName",
            "currentCoverage.pepmCents",
            "currentCoverage.renewalDate"
        ]
    );
    let a = send(&svc, post("/v1/groups", &broker, &body)).await;
    let mut fields = a.fields();
    fields.sort();
    assert_eq!(
        fields,
        [
            "company_name",
            "current_coverage.pepm_cents",
            "current_coverage.renewal_date"
        ]
    );
    // A wrong type too.
    let bad = json!({"companyName": "A", "domain": "paths.com", "currentCoverage": {"pepmCents": "many"}});
    let a = send(&svc, post("/v1/groups", &hr, &bad)).await;
    assert_eq!(a.fields(), ["currentCoverage.pepmCents"]);
    // A one-field message names the field the same way.
    let message = a.body["message"].as_str().unwrap();
    assert!(
        message.starts_with("currentCoverage.pepmCents: "),
        "{message}"
    );
    let a = send(&svc, post("/v1/groups", &broker, &bad)).await;
    assert_eq!(a.fields(), ["current_coverage.pepm_cents"]);
    let message = a.body["message"].as_str().unwrap();
    assert!(
        message.starts_with("current_coverage.pepm_cents: "),
        "{message}"
    );
    // Missing required fields.
    let a = send(&svc, post("/v1/groups", &hr, &json!({}))).await;
    let mut fields = a.fields();
    fields.sort();
    assert_eq!(fields, ["companyName", "domain"]);
}

crate::http_on_both!(row_errors_of_a_partly_applied_write_use_the_callers_style);
async fn row_errors_of_a_partly_applied_write_use_the_callers_style(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.hr_platform().await;
    let g = crate::http::create_group(&svc, &key, &crate::http::group_body("acme-mfg.com")).await;
    let gid = g["id"].as_str().unwrap();
    let body = serde_json::json!({"members": [
        {"externalId": "E1", "age": 40, "zip": "60601"},
        {"externalId": "E2", "age": 41, "zip": "60601", "hireDate": "soon"},
    ]});
    let a = send(
        &svc,
        crate::http::put(&format!("/v1/groups/{gid}/census"), &key, &body),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body["errors"][0]["field"], "members[1].hireDate",
        "{}",
        a.body
    );
}
