//! Employer groups (contract section 3): create, read, partial update,
//! validation, read-only fields, and the domain conflict with an enrolled
//! group of the same mode.

use domain::group::{CompanyState, GroupStatus};
use domain::ids::GroupId;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use domain::store::GroupAdvance;
use serde_json::{Value, json};
use testkit::db::TestDb;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::http::{TestApp, assert_error, create_group, get, group_body, patch, post, scope, send};

/// Parses an RFC 3339 UTC timestamp of second precision.
fn instant(v: &Value) -> i64 {
    let text = v.as_str().unwrap();
    assert!(text.ends_with('Z') && text.len() == 20, "{text}");
    OffsetDateTime::parse(text, &Rfc3339)
        .unwrap()
        .unix_timestamp()
}

crate::http_on_both!(a_group_is_created_and_read);
async fn a_group_is_created_and_read(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = group_body("acme-mfg.com");
    let a = send(&svc, post("/v1/groups", &key, &body)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let g = &a.body;
    let id = g["id"].as_str().unwrap();
    assert!(GroupId::parse(id).is_ok(), "{id}");
    assert_eq!(
        a.header("location"),
        Some(format!("/v1/groups/{id}").as_str())
    );
    for field in [
        "company_name",
        "domain",
        "external_id",
        "address",
        "contact",
        "current_coverage",
    ] {
        assert_eq!(g[field], body[field], "{field}");
    }
    assert_eq!(g["mode"], "test");
    assert_eq!(g["status"], "created");
    assert_eq!(g["company_state"], Value::Null);
    assert!(g.as_object().unwrap().contains_key("company_state"));
    assert_eq!(g["census_member_count"], 0);
    assert_eq!(instant(&g["created_at"]), app.clock.secs());
    assert_eq!(g["created_at"], "2026-11-21T13:14:00Z");
    assert_eq!(g["updated_at"], g["created_at"]);
    let read = send(&svc, get(&format!("/v1/groups/{id}"), &key)).await;
    assert_eq!(read.status, 200);
    assert_eq!(&read.body, g);

    // Only the two required fields: the optional ones read back as null.
    let min = create_group(
        &svc,
        &key,
        &json!({"company_name": "Min", "domain": "min.io"}),
    )
    .await;
    for field in ["external_id", "address", "contact", "current_coverage"] {
        assert_eq!(min[field], Value::Null, "{field}");
    }
}

crate::http_on_both!(invalid_fields_are_each_named);
async fn invalid_fields_are_each_named(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let a = send(&svc, post("/v1/groups", &key, &json!({}))).await;
    assert_error(&a, 400, "invalid_request");
    let mut fields = a.fields();
    fields.sort();
    assert_eq!(fields, ["company_name", "domain"]);

    let cases: [(&str, Value, &str); 12] = [
        ("/domain", json!("Acme.com"), "domain"),
        ("/domain", json!("acme"), "domain"),
        ("/domain", json!("-acme.com"), "domain"),
        ("/company_name", json!(" "), "company_name"),
        ("/company_name", json!("x".repeat(201)), "company_name"),
        ("/address/state", json!("Illinois"), "address.state"),
        ("/address/state", json!("il"), "address.state"),
        ("/address/zip", json!("6060"), "address.zip"),
        ("/address/zip", json!("60601-1234"), "address.zip"),
        ("/contact/email", json!("dana.acme.com"), "contact.email"),
        (
            "/current_coverage/pepm_cents",
            json!(-1),
            "current_coverage.pepm_cents",
        ),
        (
            "/current_coverage/renewal_date",
            json!("01/01/2027"),
            "current_coverage.renewal_date",
        ),
    ];
    for (pointer, value, field) in cases {
        let mut body = group_body("valid.com");
        *body.pointer_mut(pointer).unwrap() = value.clone();
        let a = send(&svc, post("/v1/groups", &key, &body)).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), [field], "{pointer} = {value}: {}", a.body);
    }
    // All at once: one detail each.
    let mut body = group_body("Bad Domain");
    body["address"]["state"] = json!("ZZZ");
    body["address"]["zip"] = json!("abcde");
    body["contact"]["email"] = json!("nobody");
    body["current_coverage"]["pepm_cents"] = json!(-5);
    body["current_coverage"]["renewal_date"] = json!("2027-02-30");
    let a = send(&svc, post("/v1/groups", &key, &body)).await;
    let mut fields = a.fields();
    fields.sort();
    assert_eq!(
        fields,
        [
            "address.state",
            "address.zip",
            "contact.email",
            "current_coverage.pepm_cents",
            "current_coverage.renewal_date",
            "domain"
        ]
    );
    // Nothing was created; 200 characters is still fine.
    let list = send(&svc, get("/v1/groups", &key)).await;
    assert_eq!(list.body["groups"], json!([]));
    let long = create_group(
        &svc,
        &key,
        &json!({"company_name": "x".repeat(200), "domain": "a.b"}),
    )
    .await;
    assert_eq!(long["company_name"].as_str().unwrap().len(), 200);
}

crate::http_on_both!(patch_changes_only_the_sent_fields);
async fn patch_changes_only_the_sent_fields(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(&svc, &key, &group_body("patch.com")).await;
    let path = format!("/v1/groups/{}", g["id"].as_str().unwrap());
    app.clock.advance(90);

    let a = send(
        &svc,
        patch(&path, &key, &json!({"company_name": "Acme Renamed"})),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let mut expected = g.clone();
    expected["company_name"] = json!("Acme Renamed");
    expected["updated_at"] = json!("2026-11-21T13:15:30Z");
    assert_eq!(a.body, expected);
    assert!(instant(&a.body["updated_at"]) >= instant(&a.body["created_at"]));

    // A nested object is replaced as sent; camelCase works too.
    let cov = json!({"plan_type": "level_funded", "carrier": "Other", "pepm_cents": 0,
                     "renewal_date": "2028-01-01"});
    let a = send(&svc, patch(&path, &key, &json!({"currentCoverage": cov}))).await;
    assert_eq!(a.status, 200, "{}", a.body);
    expected["current_coverage"] = cov;
    assert_eq!(a.body, expected);

    // A field sent as null is left unchanged; an empty patch changes nothing.
    for body in [json!({"external_id": null, "address": null}), json!({})] {
        let a = send(&svc, patch(&path, &key, &body)).await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body, expected);
    }
    // An invalid value changes nothing.
    let a = send(
        &svc,
        patch(
            &path,
            &key,
            &json!({"company_name": "Ok", "domain": "NOPE"}),
        ),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["domain"]);
    let read = send(&svc, get(&path, &key)).await;
    assert_eq!(read.body, expected);
}

crate::http_on_both!(read_only_fields_cannot_be_patched);
async fn read_only_fields_cannot_be_patched(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let g = create_group(&svc, &key, &group_body("ro.com")).await;
    let path = format!("/v1/groups/{}", g["id"].as_str().unwrap());
    let cases = [
        ("status", json!("enrolled")),
        ("mode", json!("live")),
        ("id", json!("grp_000000000000")),
        ("census_member_count", json!(10)),
        ("company_state", json!("prod")),
        ("created_at", json!("2020-01-01T00:00:00Z")),
        ("updated_at", json!("2020-01-01T00:00:00Z")),
    ];
    for (field, value) in cases {
        let a = send(
            &svc,
            patch(&path, &key, &json!({ field: value, "company_name": "X" })),
        )
        .await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), [field], "{}", a.body);
        assert_eq!(a.body["details"][0]["message"], "is read-only");
    }
    // Also on create, and in camelCase for an HR platform.
    let mut body = group_body("ro2.com");
    body["status"] = json!("active");
    let a = send(&svc, post("/v1/groups", &key, &body)).await;
    assert_eq!(a.fields(), ["status"]);
    let g2 = create_group(&svc, &hr, &group_body("ro3.com")).await;
    let path2 = format!("/v1/groups/{}", g2["id"].as_str().unwrap());
    let a = send(&svc, patch(&path2, &hr, &json!({"censusMemberCount": 3}))).await;
    assert_eq!(a.fields(), ["censusMemberCount"]);
    assert_eq!(a.body["details"][0]["message"], "is read-only");
    // Nothing changed.
    assert_eq!(send(&svc, get(&path, &key)).await.body, g);
}

crate::http_on_both!(an_enrolled_domain_is_a_conflict);
async fn an_enrolled_domain_is_a_conflict(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let a = app
        .partner("Alpha Brokers", PartnerKind::Broker, false)
        .await;
    let a_key = app.key(&a, Mode::Test).await;
    let b = app
        .partner("Beta Payroll", PartnerKind::HrPlatform, true)
        .await;
    let b_key = app.key(&b, Mode::Test).await;
    let b_live = app.key(&b, Mode::Live).await;

    // Two merely created groups may share a domain.
    let held = create_group(&svc, &a_key, &group_body("taken.com")).await;
    create_group(&svc, &b_key, &group_body("taken.com")).await;
    let id = GroupId::parse(held["id"].as_str().unwrap()).unwrap();
    app.db
        .stores
        .groups
        .advance_group(
            &scope(&a, Mode::Test),
            &id,
            &GroupAdvance {
                status: GroupStatus::Enrolled,
                company_state: Some(CompanyState::Sandbox),
                events: Vec::new(),
                now: app.clock.secs(),
            },
        )
        .await
        .unwrap();
    let read = send(&svc, get(&format!("/v1/groups/{}", id.as_str()), &a_key)).await;
    assert_eq!(read.body["status"], "enrolled");
    assert_eq!(read.body["company_state"], "sandbox");

    let other = create_group(&svc, &b_key, &group_body("free.com")).await;
    let other_path = format!("/v1/groups/{}", other["id"].as_str().unwrap());
    let answers = [
        send(&svc, post("/v1/groups", &a_key, &group_body("taken.com"))).await,
        send(&svc, post("/v1/groups", &b_key, &group_body("taken.com"))).await,
        send(
            &svc,
            patch(&other_path, &b_key, &json!({"domain": "taken.com"})),
        )
        .await,
    ];
    for r in &answers {
        assert_error(r, 409, "conflict");
        let message = r.body["message"].as_str().unwrap();
        for secret in [
            a.id.as_str(),
            b.id.as_str(),
            "Alpha",
            "Beta",
            held["id"].as_str().unwrap(),
        ] {
            assert!(!message.contains(secret), "{message}");
        }
    }
    // The refused patch changed nothing.
    assert_eq!(
        send(&svc, get(&other_path, &b_key)).await.body["domain"],
        "free.com"
    );
    // The other mode is another namespace.
    let live = create_group(&svc, &b_live, &group_body("taken.com")).await;
    assert_eq!(live["mode"], "live");
    // The enrolled group itself may keep (re-send) its domain.
    let own = format!("/v1/groups/{}", id.as_str());
    let r = send(&svc, patch(&own, &a_key, &json!({"domain": "taken.com"}))).await;
    assert_eq!(r.status, 200, "{}", r.body);
}
