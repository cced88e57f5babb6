//! Hostile input: control characters in string fields and repeated JSON
//! keys get the same 400 on both databases (a row error in a census), and
//! change nothing.

use actix_web::test::TestRequest;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::group_count;
use crate::http::{
    TestApp, assert_error, authed, create_group, get, group_body, patch, post, put, put_csv,
    row_errors, send,
};

/// One character of each refused range, and the line breaks.
const CONTROLS: [&str; 7] = ["\u{0}", "\u{1}", "\n", "\t", "\u{1f}", "\u{7f}", "\u{85}"];

/// `method path` with a raw JSON body.
fn raw(method: &str, path: &str, key: &str, body: &str) -> TestRequest {
    let req = match method {
        "PUT" => TestRequest::put(),
        "PATCH" => TestRequest::patch(),
        _ => TestRequest::post(),
    };
    authed(
        req.uri(path)
            .insert_header(("content-type", "application/json"))
            .set_payload(body.to_owned()),
        key,
    )
}

crate::http_on_both!(control_characters_in_a_string_field_are_400_naming_it);
async fn control_characters_in_a_string_field_are_400_naming_it(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(&svc, &key, &group_body("acme-mfg.com")).await;
    let gid = g["id"].as_str().unwrap().to_owned();
    let before = group_count(&svc, &key).await;

    for c in CONTROLS {
        for (field, pointer) in [
            ("company_name", "/company_name"),
            ("external_id", "/external_id"),
            ("address.city", "/address/city"),
            ("contact.email", "/contact/email"),
            ("current_coverage.carrier", "/current_coverage/carrier"),
        ] {
            let mut body = group_body(&format!("x{}.com", field.len()));
            *body.pointer_mut(pointer).unwrap() = json!(format!("A{c}B"));
            let a = send(&svc, post("/v1/groups", &key, &body)).await;
            assert_error(&a, 400, "invalid_request");
            assert_eq!(a.fields(), [field], "{c:?} {}", a.body);
            assert!(
                a.body["message"]
                    .as_str()
                    .unwrap()
                    .contains("control characters")
            );
        }
        let a = send(
            &svc,
            patch(
                &format!("/v1/groups/{gid}"),
                &key,
                &json!({"external_id": format!("crm{c}")}),
            ),
        )
        .await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), ["external_id"], "{c:?}");
    }
    // Nothing was created or changed.
    assert_eq!(group_count(&svc, &key).await, before);
    let g = send(&svc, get(&format!("/v1/groups/{gid}"), &key)).await;
    assert_eq!(g.body["external_id"], "crm-4411");

    // HR platforms see the field in their own style.
    let (_, hr) = app.hr_platform().await;
    let mut body = group_body("hr-example.com");
    body["company_name"] = json!("Nul\u{0}Co");
    let a = send(&svc, post("/v1/groups", &hr, &body)).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["companyName"]);

    // Price-on-plan's company fields.
    let a = send(
        &svc,
        post(
            "/v1/price-on-plan",
            &key,
            &json!({"company": {"name": "Acme\u{0}", "domain": "acme.example"}}),
        ),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert!(
        a.fields().contains(&"company.name".to_owned()),
        "{}",
        a.body
    );

    // The webhook URL.
    let a = send(
        &svc,
        put(
            "/v1/webhook",
            &key,
            &json!({"url": "https://example.com/\u{0}"}),
        ),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["url"]);
}

crate::http_on_both!(a_census_row_with_a_control_character_is_a_row_error);
async fn a_census_row_with_a_control_character_is_a_row_error(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = create_group(&svc, &key, &group_body("acme-mfg.com")).await;
    let path = format!("/v1/groups/{}/census", g["id"].as_str().unwrap());
    let row = |id: &str, email: &str| {
        json!({"external_id": id, "first_name": "Ana", "last_name": "Diaz", "email": email,
               "dob": "1988-04-12", "zip": "60601"})
    };
    let body = json!({"members": [
        row("E-1", "ana@acme-mfg.com"),
        row("E-\u{0}2", "ben@acme-mfg.com"),
        row("E-3", "cy@acme\u{0}-mfg.com"),
        {"external_id": "E-4", "dob": "1979-11-02", "zip": "60614",
         "dependents": [{"relationship": "child", "name": "Leo\u{7}", "dob": "2016-09-30"}]},
    ]});
    let a = send(&svc, put(&path, &key, &body)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let errors = row_errors(&a);
    assert_eq!(
        errors,
        [
            ("members[1].external_id".to_owned(), 1),
            ("members[2].email".to_owned(), 2),
            ("members[3].dependents[0].name".to_owned(), 3),
        ]
    );
    assert_eq!(
        (a.body["received"].as_u64(), a.body["accepted"].as_u64()),
        (Some(4), Some(1))
    );

    // The same in CSV: the row error points at the CSV data row.
    let text = "external_id,dob,zip,email\nE-1,1988-04-12,60601,a@acme-mfg.com\n\
                E-2,1979-11-02,60614,b@acme\u{0}-mfg.com\n";
    let a = send(&svc, put_csv(&path, &key, text)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body["errors"][0]["field"], "members[1].email",
        "{}",
        a.body
    );
    assert_eq!(a.body["errors"][0]["index"], 1);
    assert_eq!(a.body["accepted"], 1);

    // Every row bad: 400, nothing applied.
    let a = send(
        &svc,
        put(
            &path,
            &key,
            &json!({"members": [row("E-\u{0}", "a@b.com")]}),
        ),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    let census = send(&svc, get(&path, &key)).await;
    assert_eq!(census.body["members"].as_array().map(Vec::len), Some(1));
}

crate::http_on_both!(a_repeated_json_key_is_400_naming_it);
async fn a_repeated_json_key_is_400_naming_it(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let before = group_count(&svc, &key).await;
    for (body, field) in [
        (
            r#"{"company_name":"A","company_name":"B","domain":"a.com"}"#,
            "company_name",
        ),
        (
            r#"{"company_name":"A","domain":"a.com","address":{"zip":"60601","zip":"10001"}}"#,
            "address.zip",
        ),
    ] {
        let a = send(&svc, raw("POST", "/v1/groups", &key, body)).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), [field], "{body}: {}", a.body);
        assert!(
            a.body["message"]
                .as_str()
                .unwrap()
                .contains("more than once")
        );
    }
    assert_eq!(group_count(&svc, &key).await, before);

    let g = create_group(&svc, &key, &group_body("acme-mfg.com")).await;
    let path = format!("/v1/groups/{}/census", g["id"].as_str().unwrap());
    let body =
        r#"{"members":[{"external_id":"E1","dob":"1988-04-12","dob":"1990-01-01","zip":"60601"}]}"#;
    let a = send(&svc, raw("PUT", &path, &key, body)).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["members[0].dob"]);
    let census = send(&svc, get(&path, &key)).await;
    assert_eq!(census.body["members"], Value::Array(Vec::new()));
}

crate::http_on_both!(a_method_the_path_does_not_serve_is_405_whatever_its_key);
async fn a_method_the_path_does_not_serve_is_405_whatever_its_key(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    for bad in ["", &"k".repeat(300)] {
        let a = send(
            &svc,
            raw("PUT", "/v1/groups", &key, "{}").insert_header(("idempotency-key", bad.to_owned())),
        )
        .await;
        assert_error(&a, 405, "invalid_request");
    }
    // On a served method the key is still checked.
    let a = send(
        &svc,
        raw("POST", "/v1/groups", &key, "{}").insert_header(("idempotency-key", "")),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["Idempotency-Key"]);
}
