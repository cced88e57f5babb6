//! The OpenAPI 3.1 document and the reference page (contract section 0):
//! served without a key, every operation with a schema and an example for
//! its success answer and its body, bearer security on `/v1`; and
//! `GET /v1/plans`.

use actix_web::test::TestRequest;
use serde_json::Value;
use testkit::db::TestDb;

use crate::http::{TestApp, get, send};

/// Follows a `$ref` into `components.schemas`.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.strip_prefix("#/components/schemas/").unwrap();
            let target = &doc["components"]["schemas"][name];
            assert!(target.is_object(), "{r} does not resolve");
            target
        }
        None => schema,
    }
}

/// Whether a `content` map has a JSON schema and an example, on the media
/// type or on the schema it refers to.
fn documented(doc: &Value, content: &Value) -> bool {
    let Some(media) = content.as_object() else {
        return false;
    };
    media.values().any(|m| {
        let schema = &m["schema"];
        schema.is_object()
            && (m.get("example").is_some()
                || m["examples"].as_object().is_some_and(|e| !e.is_empty())
                || resolve(doc, schema).get("example").is_some())
    })
}

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

crate::http_on_both!(the_document_is_served_and_complete);
async fn the_document_is_served_and_complete(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let a = send(&svc, TestRequest::get().uri("/v1/openapi.json")).await;
    assert_eq!(a.status, 200, "{:?}", a);
    assert!(
        a.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let doc = &a.body;
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    assert!(doc["info"]["title"].is_string());
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    let paths = doc["paths"].as_object().unwrap();
    let mut operations = 0;
    for (path, item) in paths {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            operations += 1;
            let at = format!("{method} {path}");
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses
                    .iter()
                    .any(|(s, r)| s == "204"
                        || (s.starts_with('2') && documented(doc, &r["content"]))),
                "{at}: no documented 2xx answer (204 has no body)"
            );
            for (status, r) in responses {
                assert!(r["description"].is_string(), "{at} {status}");
                assert!(
                    r["headers"]["Request-Id"].is_object(),
                    "{at} {status}: no Request-Id header"
                );
                if status == "429" {
                    assert!(r["headers"]["Retry-After"].is_object(), "{at} {status}");
                }
                if status == "201" {
                    assert!(r["headers"]["Location"].is_object(), "{at} {status}");
                }
            }
            if method == "post" || method == "put" {
                let takes_key = op["parameters"].as_array().is_some_and(|ps| {
                    ps.iter()
                        .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header")
                });
                assert!(takes_key, "{at}: no Idempotency-Key");
            }
            if let Some(body) = op.get("requestBody") {
                assert!(
                    documented(doc, &body["content"]),
                    "{at}: body lacks schema or example"
                );
            }
            if path.starts_with("/v1/") {
                let security = op["security"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{at}: no security"));
                assert!(
                    security.iter().any(|s| s.get("bearer").is_some()),
                    "{at}: no bearer security"
                );
                assert!(responses.contains_key("401"), "{at}: no 401");
            }
        }
    }
    assert!(operations >= 8, "{operations}");
    // Every event type a partner can receive has its webhook, with its
    // payload's schema.
    let webhooks = doc["webhooks"].as_object().unwrap();
    for t in domain::event::EventType::ALL {
        let hook = &webhooks
            .get(t.as_str())
            .unwrap_or_else(|| panic!("no webhook {}", t.as_str()))["post"];
        let envelope = &hook["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(
            envelope["properties"]["type"]["enum"],
            serde_json::json!([t.as_str()])
        );
        let data = &envelope["properties"]["data"];
        if let Some(name) = data["$ref"].as_str() {
            let name = name.trim_start_matches("#/components/schemas/");
            assert!(doc["components"]["schemas"][name].is_object(), "{name}");
        }
    }
    assert_eq!(webhooks.len(), domain::event::EventType::ALL.len());
    // The document served is the one the crate builds, with this
    // service's `public_base_url` as its server.
    assert_eq!(
        doc["servers"],
        serde_json::json!([{"url": domain::services::enrollments::DEFAULT_PUBLIC_BASE_URL}])
    );
    let built = http_api::documents(domain::services::enrollments::DEFAULT_PUBLIC_BASE_URL);
    assert_eq!(doc, built.snake());
}

#[test]
fn the_document_lists_every_route() {
    let doc = serde_json::to_value(http_api::openapi()).unwrap();
    for (path, methods) in [
        ("/v1/ping", &["get"][..]),
        ("/v1/plans", &["get"]),
        ("/v1/groups", &["get", "post"]),
        ("/v1/groups/{groupId}", &["get", "patch"]),
        ("/v1/webhook", &["get", "put", "delete"]),
        ("/v1/webhook/test", &["post"]),
        ("/v1/webhook/rotate_secret", &["post"]),
        ("/v1/webhook/deliveries", &["get"]),
        ("/v1/webhook/replay", &["post"]),
        ("/v1/events/{id}/resend", &["post"]),
        ("/healthz", &["get"]),
        ("/readyz", &["get"]),
    ] {
        for m in methods {
            assert!(doc["paths"][path][m].is_object(), "{m} {path} is missing");
        }
    }
    // The probes need no key: their one security requirement is empty.
    for path in ["/healthz", "/readyz"] {
        assert_eq!(
            doc["paths"][path]["get"]["security"],
            serde_json::json!([{}]),
            "{path}"
        );
    }
    // The delivery log's closed sets are enums in the document.
    let attempt = &doc["components"]["schemas"];
    assert_eq!(
        attempt["OutcomeOut"]["enum"],
        serde_json::json!(["succeeded", "failed", "cancelled"])
    );
    assert_eq!(
        attempt["FailureReasonOut"]["enum"],
        serde_json::json!([
            "timeout",
            "connection_refused",
            "dns_error",
            "tls_error",
            "http_status",
            "blocked_address"
        ])
    );
    assert_eq!(
        attempt["EndpointStateOut"]["enum"],
        serde_json::json!(["enabled", "disabled"])
    );
}

crate::http_on_both!(the_hr_platform_document_is_camel_case);
async fn the_hr_platform_document_is_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let snake = send(&svc, TestRequest::get().uri("/v1/openapi.json?style=snake")).await;
    let plain = send(&svc, TestRequest::get().uri("/v1/openapi.json")).await;
    assert_eq!(snake.body, plain.body);
    let a = send(&svc, TestRequest::get().uri("/v1/openapi.json?style=camel")).await;
    assert_eq!(a.status, 200, "{:?}", a);
    let doc = &a.body;
    let group = &doc["components"]["schemas"]["GroupOut"];
    assert!(group["properties"]["companyName"].is_object(), "{group}");
    assert!(group["properties"].get("company_name").is_none(), "{group}");
    let required = group["required"].as_array().unwrap();
    assert!(required.contains(&Value::from("companyName")), "{group}");
    assert!(group["example"]["companyName"].is_string(), "{group}");
    // The same paths, operations and parameters (`groupId` stays).
    assert_eq!(
        doc["paths"].as_object().unwrap().keys().collect::<Vec<_>>(),
        plain.body["paths"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
    // Webhooks arrive camelCase too.
    let envelope = &doc["webhooks"]["enrollment.created"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    assert!(
        envelope["properties"]["createdAt"].is_object(),
        "{envelope}"
    );
    let payload = &doc["components"]["schemas"]["EnrollmentCreatedEvent"];
    assert!(
        payload["properties"]["enrollmentId"].is_object(),
        "{payload}"
    );
    // Price-on-plan answers in each document with its own form (`plans`
    // for brokers, `versions` for HR platforms), keys as the
    // specification spells them; its request is typed and re-cased like
    // any other.
    let answer = |d: &Value, status: &str| {
        d["paths"]["/v1/price-on-plan"]["post"]["responses"][status]["content"]["application/json"]
            ["schema"]["$ref"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        answer(&plain.body, "201"),
        "#/components/schemas/PriceOnPlanPlans"
    );
    assert_eq!(
        answer(&plain.body, "202"),
        "#/components/schemas/PriceOnPlanPlansPending"
    );
    assert_eq!(
        answer(doc, "201"),
        "#/components/schemas/PriceOnPlanVersions"
    );
    assert_eq!(
        answer(doc, "202"),
        "#/components/schemas/PriceOnPlanVersionsPending"
    );
    let versions = &doc["components"]["schemas"]["PriceOnPlanVersions"]["properties"];
    for key in ["quoteId", "versions", "time_machine", "ignoredPlans"] {
        assert!(versions[key].is_object(), "{key}: {versions}");
    }
    let version = &doc["components"]["schemas"]["PriceOnPlanVersion"]["properties"];
    for key in [
        "pricedAgainst",
        "worst_year",
        "serviceOnly",
        "monthly_rates_by_household",
    ] {
        assert!(version[key].is_object(), "{key}: {version}");
    }
    assert!(
        doc["components"]["schemas"]
            .get("PriceOnPlanPlans")
            .is_none()
    );
    assert!(
        plain.body["components"]["schemas"]
            .get("PriceOnPlanVersions")
            .is_none()
    );
    assert!(
        plain.body["components"]["schemas"]["PriceOnPlanPlans"]["properties"]["plans"].is_object()
    );
    let input = &doc["components"]["schemas"]["PriceOnPlanInput"];
    assert!(input["properties"]["marketPlans"].is_object(), "{input}");
    let plan = &doc["components"]["schemas"]["PartnerPlanIn"];
    assert!(plan["properties"]["planName"].is_object(), "{plan}");
    for bad in [
        "/v1/openapi.json?style=kebab",
        "/v1/openapi.json?format=yaml",
    ] {
        let a = send(&svc, TestRequest::get().uri(bad)).await;
        crate::http::assert_error(&a, 400, "invalid_request");
    }
}

crate::http_on_both!(the_reference_page_is_html);
async fn the_reference_page_is_html(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let a = send(&svc, TestRequest::get().uri("/docs/")).await;
    assert_eq!(a.status, 200);
    assert!(
        a.header("content-type").unwrap().starts_with("text/html"),
        "{a:?}"
    );
    let html = String::from_utf8_lossy(&a.raw).to_lowercase();
    assert!(
        html.contains("<html") || html.contains("<!doctype html"),
        "{html}"
    );
    // `/docs`, the name the contract gives, leads there.
    let a = send(&svc, TestRequest::get().uri("/docs")).await;
    assert_eq!(a.status, 308, "{a:?}");
    assert_eq!(a.header("location"), Some("/docs/"));
}

crate::http_on_both!(plans_lists_both_versions);
async fn plans_lists_both_versions(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let a = send(&svc, get("/v1/plans", &broker)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let plans = a.body["plans"].as_array().unwrap();
    let ids: Vec<&str> = plans.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["diamond", "value"]);
    for p in plans {
        assert!(p["name"].is_string());
        assert!(
            p["facts"]["member_oop_max_individual_cents"].is_i64(),
            "{p}"
        );
        assert!(p["display_names"].is_array());
    }
    let b = send(&svc, get("/v1/plans", &hr)).await;
    assert_eq!(b.status, 200);
    assert!(
        b.body["plans"][0]["facts"]["memberOopMaxIndividualCents"].is_i64(),
        "{}",
        b.body
    );
    assert!(b.body["plans"][0]["displayNames"].is_array());
    // A key is needed.
    let c = send(&svc, TestRequest::get().uri("/v1/plans")).await;
    assert_eq!(c.status, 401);
}

/// Redocly's linter (recommended rules, `redocly.yaml`) finds no error and
/// no warning in either served document. `.ci/run` installs it under
/// `<target>/redocly`; without it the test is skipped with a note, except
/// under CI.
#[test]
fn redocly_finds_nothing_in_either_document() {
    use crate::common::webdriver::{target_dir, under_ci};

    let redocly = target_dir().join("redocly/node_modules/.bin/redocly");
    if !redocly.exists() {
        assert!(
            !under_ci(),
            "no redocly at {} and CI is set: .ci/run installs it",
            redocly.display()
        );
        eprintln!(
            "NOTE: redocly not installed at {}: lint skipped \
             (`npm install --prefix <target>/redocly @redocly/cli@<version of .ci/run>`)",
            redocly.display()
        );
        return;
    }
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../redocly.yaml");
    let dir = crate::common::scratch("redocly");
    let documents = http_api::documents(domain::services::enrollments::DEFAULT_PUBLIC_BASE_URL);
    for (name, document) in [("snake", documents.snake()), ("camel", documents.camel())] {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_vec_pretty(document).unwrap()).unwrap();
        let out = std::process::Command::new(&redocly)
            .arg("lint")
            .arg(&path)
            .arg("--config")
            .arg(&config)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "redocly printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(
            (&report["totals"]["errors"], &report["totals"]["warnings"]),
            (&Value::from(0), &Value::from(0)),
            "{name}: {:#}",
            report["problems"]
        );
    }
}
