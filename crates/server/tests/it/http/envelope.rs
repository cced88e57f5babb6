//! The error envelope (contract section 1): malformed bodies, wrong
//! content types and types, oversized bodies, unknown paths and wrong
//! methods all answer `{ error, message, details? }` as JSON with a
//! `Request-Id`, never a framework default body.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::{Answer, TestApp, assert_error, authed, get, json, post, send};

/// The envelope holds `error`, `message` and optionally `details`, as JSON.
fn assert_envelope(a: &Answer) {
    assert_eq!(a.header("content-type"), Some("application/json"), "{a:?}");
    let obj = a
        .body
        .as_object()
        .unwrap_or_else(|| panic!("not JSON: {a:?}"));
    assert!(
        obj.keys()
            .all(|k| ["error", "message", "details"].contains(&k.as_str())),
        "{}",
        a.body
    );
    let text = String::from_utf8_lossy(&a.raw).to_lowercase();
    for leak in [
        "json deserialize",
        "payload reached size limit",
        "actix",
        "method not allowed",
    ] {
        assert!(!text.contains(leak), "{text}");
    }
}

fn raw(
    method: Method,
    path: &str,
    key: &str,
    content_type: Option<&str>,
    body: &str,
) -> TestRequest {
    let mut req = authed(
        TestRequest::default()
            .method(method)
            .uri(path)
            .set_payload(body.to_owned()),
        key,
    );
    if let Some(ct) = content_type {
        req = req.insert_header(("content-type", ct));
    }
    req
}

crate::http_on_both!(malformed_bodies_name_the_field);
async fn malformed_bodies_name_the_field(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let cases = [
        (Some("application/json"), r#"{"company_name":"#, "body"),
        (Some("application/json"), "", "body"),
        (Some("application/json"), "[1,2]", "body"),
        (Some("application/json"), "null", "body"),
        (
            Some("text/plain"),
            r#"{"company_name":"A","domain":"a.com"}"#,
            "Content-Type",
        ),
        (
            Some("application/x-www-form-urlencoded"),
            "company_name=A",
            "Content-Type",
        ),
        (
            None,
            r#"{"company_name":"A","domain":"a.com"}"#,
            "Content-Type",
        ),
        (
            Some("application/json"),
            r#"{"company_name":5,"domain":"a.com"}"#,
            "company_name",
        ),
        (
            Some("application/json"),
            r#"{"company_name":"A","domain":["a.com"]}"#,
            "domain",
        ),
        (
            Some("application/json"),
            r#"{"company_name":"A","domain":"a.com","address":"x"}"#,
            "address",
        ),
        (
            Some("application/json"),
            r#"{"company_name":"A","domain":"a.com","address":{"zip":60601}}"#,
            "address.zip",
        ),
        (
            Some("application/json"),
            r#"{"company_name":"A","domain":"a.com","current_coverage":{"pepm_cents":780.5}}"#,
            "current_coverage.pepm_cents",
        ),
    ];
    for (ct, body, field) in cases {
        let a = send(&svc, raw(Method::POST, "/v1/groups", &key, ct, body)).await;
        assert_error(&a, 400, "invalid_request");
        assert_envelope(&a);
        assert_eq!(a.fields(), [field], "{ct:?} {body}: {}", a.body);
    }
    // The same rules on PATCH.
    let g = send(
        &svc,
        post(
            "/v1/groups",
            &key,
            &json!({"company_name": "A", "domain": "a.com"}),
        ),
    )
    .await;
    let path = format!("/v1/groups/{}", g.body["id"].as_str().unwrap());
    for (ct, body, field) in [
        (Some("application/json"), "{", "body"),
        (Some("text/plain"), "{}", "Content-Type"),
        (
            Some("application/json"),
            r#"{"company_name":5}"#,
            "company_name",
        ),
    ] {
        let a = send(&svc, raw(Method::PATCH, &path, &key, ct, body)).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), [field], "{body}: {}", a.body);
    }
    // JSON with a charset or a +json suffix is JSON.
    let ok = send(
        &svc,
        raw(
            Method::PATCH,
            &path,
            &key,
            Some("application/json; charset=utf-8"),
            r#"{"external_id":"x"}"#,
        ),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
}

crate::http_on_both!(an_oversized_body_is_413);
async fn an_oversized_body_is_413(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let big = format!(
        r#"{{"company_name":"{}","domain":"big.com"}}"#,
        "a".repeat(32 * 1024 * 1024)
    );
    let a = send(
        &svc,
        raw(
            Method::POST,
            "/v1/groups",
            &key,
            Some("application/json"),
            &big,
        ),
    )
    .await;
    assert_error(&a, 413, "invalid_request");
    assert_envelope(&a);
    // Exactly 32 MiB is read (and refused for what it says, not its size).
    let limit = format!(
        r#"{{"company_name":"{}","domain":"big.com"}}"#,
        "a".repeat(32 * 1024 * 1024 - 38)
    );
    assert_eq!(limit.len(), 32 * 1024 * 1024);
    let a = send(
        &svc,
        raw(
            Method::POST,
            "/v1/groups",
            &key,
            Some("application/json"),
            &limit,
        ),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["company_name"]);
    // Also when the idempotency layer reads the body first.
    let req = raw(
        Method::POST,
        "/v1/groups",
        &key,
        Some("application/json"),
        &big,
    )
    .insert_header(("idempotency-key", "big-1"));
    let a = send(&svc, req).await;
    assert_error(&a, 413, "invalid_request");
    assert_envelope(&a);
    let list = send(&svc, get("/v1/groups", &key)).await;
    assert_eq!(list.body["groups"], json!([]));
}

crate::http_on_both!(unknown_paths_are_404);
async fn unknown_paths_are_404(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    for path in [
        "/v1/nope",
        "/v1/groups/grp_000000000000/nope",
        "/v2/groups",
        "/nope",
        "/",
    ] {
        let a = send(&svc, get(path, &key)).await;
        assert_error(&a, 404, "not_found");
        assert_envelope(&a);
    }
    // Outside /v1 no key is needed to learn that a path does not exist.
    let a = send(&svc, TestRequest::get().uri("/nope")).await;
    assert_error(&a, 404, "not_found");
    assert_envelope(&a);
    // Inside /v1 the key is checked first (contract section 2, order of checks).
    let a = send(&svc, TestRequest::get().uri("/v1/nope")).await;
    assert_error(&a, 401, "unauthorized");
    assert_envelope(&a);
}

crate::http_on_both!(wrong_methods_are_405_with_allow);
async fn wrong_methods_are_405_with_allow(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let cases = [
        (Method::DELETE, "/v1/groups", "GET, POST"),
        (Method::PUT, "/v1/groups", "GET, POST"),
        (Method::PUT, "/v1/groups/grp_000000000000", "GET, PATCH"),
        (Method::DELETE, "/v1/groups/grp_000000000000", "GET, PATCH"),
        (Method::POST, "/v1/ping", "GET"),
        (Method::POST, "/healthz", "GET"),
        (Method::POST, "/v1/openapi.json", "GET"),
        (Method::DELETE, "/docs/", "GET"),
        (Method::PUT, "/docs", "GET"),
    ];
    for (method, path, allow) in cases {
        let a = send(&svc, json(method.clone(), path, &key, &json!({}))).await;
        assert_error(&a, 405, "invalid_request");
        assert_envelope(&a);
        assert_eq!(a.header("allow"), Some(allow), "{method} {path}");
        assert_eq!(a.fields(), ["method"], "{}", a.body);
    }
}

crate::http_on_both!(every_answer_has_a_request_id);
async fn every_answer_has_a_request_id(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let mut seen = std::collections::HashSet::new();
    for req in [
        get("/v1/ping", &key),
        get("/v1/groups", &key),
        get("/v1/nope", &key),
        TestRequest::get().uri("/healthz"),
        TestRequest::get().uri("/readyz"),
        TestRequest::get().uri("/v1/openapi.json"),
        TestRequest::get().uri("/v1/ping"),
    ] {
        let a = send(&svc, req).await;
        let id = a.header("request-id").unwrap().to_owned();
        assert!(crate::http::is_request_id(&id), "{id}");
        assert!(seen.insert(id), "request ids repeat");
    }
}
