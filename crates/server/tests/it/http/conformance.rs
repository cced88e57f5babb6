//! The documents and the server agree (contract item: "the document and
//! the server never disagree"): every `/v1` operation of each served
//! document is sent as the document's own example request — ids replaced
//! by the ones this run created — to the real app, with a key of the
//! document's field style (a broker key for `/v1/openapi.json`, an HR
//! platform key for `?style=camel`), and every answer is validated against
//! the schema the document gives for its status. An operation added to the
//! document without an example request that works, or whose answer its
//! schema does not describe, fails here; so does one this walk does not
//! reach.

use std::collections::{BTreeMap, BTreeSet};

use actix_web::http::Method;
use actix_web::test::TestRequest;
use serde_json::{Value, json};
use testkit::db::TestDb;

use super::webhooks::{Receiver, Svc};
use crate::http::{Answer, TestApp, authed, put, send};

/// Which document and which key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `/v1/openapi.json`, a broker key.
    Snake,
    /// `/v1/openapi.json?style=camel`, an HR platform key.
    Camel,
}

impl Style {
    fn uri(self) -> &'static str {
        match self {
            Self::Snake => "/v1/openapi.json",
            Self::Camel => "/v1/openapi.json?style=camel",
        }
    }

    /// A snake_case key as this style spells it.
    fn key(self, snake: &str) -> String {
        match self {
            Self::Snake => snake.to_owned(),
            Self::Camel => domain::document::snake_to_camel(snake),
        }
    }
}

/// Validates `instance` against `schema`, whose `$ref`s point into the
/// document's components; every error, with where it is. Objects are
/// closed ([`closed`]): a key the document does not name is an error too.
fn violations(doc: &Value, schema: &Value, instance: &Value) -> Vec<String> {
    let mut components = doc["components"].clone();
    let mut members = BTreeSet::new();
    allof_refs(&components, &mut members);
    allof_refs(schema, &mut members);
    if let Some(Value::Object(schemas)) = components.get_mut("schemas") {
        for (name, s) in schemas.iter_mut() {
            closed(s, members.contains(name));
        }
    }
    let mut schema = schema.clone();
    closed(&mut schema, false);
    let root = json!({"components": components, "allOf": [schema], "unevaluatedProperties": false});
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("the schema does not compile: {e}\n{schema}"));
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The components named by a `$ref` directly inside an `allOf`: they are
/// parts of an object, so only the whole is closed.
fn allof_refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for part in map
                .get("allOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(r) = part["$ref"].as_str() {
                    out.insert(r.trim_start_matches("#/components/schemas/").to_owned());
                }
            }
            map.values().for_each(|v| allof_refs(v, out));
        }
        Value::Array(list) => list.iter().for_each(|v| allof_refs(v, out)),
        _ => {}
    }
}

/// Closes every object schema inside `s` that lists its properties and
/// says nothing of others (`unevaluatedProperties: false`), except the
/// parts of an `allOf` (`part`), whose whole is closed instead.
fn closed(s: &mut Value, part: bool) {
    let Some(map) = s.as_object_mut() else {
        return;
    };
    let object = map.contains_key("properties") || map.contains_key("allOf");
    if object && !part && !map.contains_key("additionalProperties") {
        map.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
    }
    for (key, inner) in map.iter_mut() {
        match (key.as_str(), inner) {
            ("properties", Value::Object(props)) => {
                props.values_mut().for_each(|p| closed(p, false))
            }
            ("items" | "additionalProperties", v) => closed(v, false),
            ("allOf", Value::Array(list)) => list.iter_mut().for_each(|p| closed(p, true)),
            ("oneOf" | "anyOf", Value::Array(list)) => {
                list.iter_mut().for_each(|p| closed(p, false))
            }
            _ => {}
        }
    }
}

/// Follows one `$ref` into the document's components.
fn resolved<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => &doc["components"]["schemas"][r.trim_start_matches("#/components/schemas/")],
        None => schema,
    }
}

/// The example request body of an operation: the media type's example (or
/// its first named example), else its schema's.
fn example_body(doc: &Value, op: &Value) -> Option<Value> {
    let media = &op["requestBody"]["content"]["application/json"];
    if media.is_null() {
        return None;
    }
    media
        .get("example")
        .cloned()
        .or_else(|| {
            media["examples"]
                .as_object()
                .and_then(|e| e.values().next())
                .map(|e| e["value"].clone())
        })
        .or_else(|| resolved(doc, &media["schema"]).get("example").cloned())
        .or_else(|| Some(json!({})))
}

/// Every string of `value` that is an id of a kind this run created
/// (prefix and 12 hex) becomes that id.
fn with_ids(value: Value, ids: &BTreeMap<String, String>) -> Value {
    match value {
        Value::String(s) => {
            let kind = s.find('_').map(|i| &s[..=i]).unwrap_or_default();
            match ids.get(kind) {
                Some(id) if s.len() == kind.len() + 12 => Value::String(id.clone()),
                _ => Value::String(s),
            }
        }
        Value::Array(list) => Value::Array(list.into_iter().map(|v| with_ids(v, ids)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, with_ids(v, ids)))
                .collect(),
        ),
        other => other,
    }
}

/// One walk through a document.
struct Walk<'a> {
    app: &'a TestApp,
    style: Style,
    doc: Value,
    key: String,
    ids: BTreeMap<String, String>,
    sent: BTreeSet<(String, String)>,
}

impl Walk<'_> {
    /// The concrete path of a template, from the ids created so far.
    fn path(&self, template: &str) -> String {
        let id = |prefix: &str| {
            self.ids
                .get(prefix)
                .unwrap_or_else(|| panic!("{template}: no {prefix} id yet"))
                .clone()
        };
        let segments: Vec<&str> = template.split('/').collect();
        segments
            .iter()
            .enumerate()
            .map(|(i, s)| match *s {
                "{groupId}" => id("grp_"),
                "{memberId}" => id("mem_"),
                "{id}" => match segments.get(i.wrapping_sub(1)).copied() {
                    Some("quotes") => id("qt_"),
                    Some("enrollments") => id("enr_"),
                    Some("events") => id("evt_"),
                    other => panic!("{template}: no id kind for {other:?}"),
                },
                other => other.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Sends the operation's example request (with `edit` applied to its
    /// body), checks the answer is documented for its status and valid
    /// against its schema, expects `2xx`, and learns the id it names.
    async fn example<B: actix_web::body::MessageBody>(
        &mut self,
        svc: &impl Svc<B>,
        method: &str,
        template: &str,
        edit: impl FnOnce(&mut Value),
    ) -> Answer {
        self.expect(svc, method, template, edit, None).await
    }

    /// [`Self::example`], expecting `status` (`None`: any 2xx).
    async fn expect<B: actix_web::body::MessageBody>(
        &mut self,
        svc: &impl Svc<B>,
        method: &str,
        template: &str,
        edit: impl FnOnce(&mut Value),
        status_wanted: Option<u16>,
    ) -> Answer {
        let op = self.doc["paths"][template][method].clone();
        assert!(op.is_object(), "{method} {template} is not in the document");
        let at = format!("{:?} {method} {template}", self.style);
        let path = self.path(template);
        let mut req = TestRequest::default()
            .method(Method::from_bytes(method.to_uppercase().as_bytes()).unwrap())
            .uri(&path);
        if let Some(body) = example_body(&self.doc, &op) {
            let mut body = with_ids(body, &self.ids);
            edit(&mut body);
            req = req
                .insert_header(("content-type", "application/json"))
                .set_payload(body.to_string());
        }
        if template.starts_with("/v1/") {
            req = authed(req, &self.key);
        }
        let a = send(svc, req).await;
        self.sent.insert((method.to_owned(), template.to_owned()));
        let status = a.status.as_u16().to_string();
        let response = &op["responses"][&status];
        assert!(
            response.is_object(),
            "{at}: {status} is not documented: {}",
            a.body
        );
        match status_wanted {
            Some(want) => assert_eq!(a.status.as_u16(), want, "{at}: {}", a.body),
            None => assert!(a.status.is_success(), "{at}: {status} {}", a.body),
        }
        match response["content"]["application/json"]["schema"] {
            Value::Null => assert!(a.raw.is_empty(), "{at}: a body where none is documented"),
            ref schema => {
                let errors = violations(&self.doc, schema, &a.body);
                assert!(
                    errors.is_empty(),
                    "{at} {status}: {errors:#?}\n{:#}",
                    a.body
                );
            }
        }
        if let Some(id) = a.body["id"].as_str()
            && let Some(i) = id.find('_')
        {
            self.ids.insert(id[..=i].to_owned(), id.to_owned());
        }
        a
    }

    /// The documented operations this walk did not send.
    fn unsent(&self) -> Vec<String> {
        let mut missing = Vec::new();
        for (path, item) in self.doc["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                if !self.sent.contains(&(method.clone(), path.clone())) {
                    missing.push(format!("{method} {path}"));
                }
            }
        }
        missing
    }
}

async fn walk(db: TestDb, style: Style) {
    let app = TestApp::with_webhooks(db, 1.0);
    let svc = app.service().await;
    let (_, key) = match style {
        Style::Snake => app.broker().await,
        Style::Camel => app.hr_platform().await,
    };
    let doc = send(&svc, TestRequest::get().uri(style.uri())).await.body;
    let mut w = Walk {
        app: &app,
        style,
        doc,
        key,
        ids: BTreeMap::new(),
        sent: BTreeSet::new(),
    };
    let k = |name: &str| style.key(name);
    let keep = |_: &mut Value| {};

    w.example(&svc, "get", "/healthz", keep).await;
    w.example(&svc, "get", "/readyz", keep).await;
    w.example(&svc, "get", "/v1/ping", keep).await;
    w.example(&svc, "get", "/v1/plans", keep).await;

    // Webhooks: the example's host does not resolve here, so the endpoint
    // is a local receiver.
    let receiver = Receiver::answering(204);
    w.example(&svc, "put", "/v1/webhook", |b| {
        b["url"] = json!(receiver.url())
    })
    .await;
    w.example(&svc, "get", "/v1/webhook", keep).await;
    w.example(&svc, "post", "/v1/webhook/test", keep).await;
    w.example(&svc, "get", "/v1/webhook/deliveries", keep).await;
    w.example(&svc, "post", "/v1/webhook/rotate_secret", keep)
        .await;
    w.example(&svc, "post", "/v1/webhook/replay", keep).await;

    // A group, its census and a quote.
    w.example(&svc, "post", "/v1/groups", keep).await;
    w.example(&svc, "get", "/v1/groups", keep).await;
    w.example(&svc, "get", "/v1/groups/{groupId}", keep).await;
    w.example(&svc, "patch", "/v1/groups/{groupId}", keep).await;
    w.example(&svc, "put", "/v1/groups/{groupId}/census", keep)
        .await;
    w.example(&svc, "get", "/v1/groups/{groupId}/census", keep)
        .await;
    w.app.run_jobs().await;
    w.example(&svc, "post", "/v1/groups/{groupId}/quotes", keep)
        .await;
    w.example(&svc, "get", "/v1/groups/{groupId}/quotes", keep)
        .await;
    w.example(&svc, "get", "/v1/quotes/{id}", keep).await;
    w.example(&svc, "post", "/v1/groups/{groupId}/embed-sessions", keep)
        .await;

    // The enrollment (hosted), live in test mode, then members.
    w.example(&svc, "post", "/v1/groups/{groupId}/enrollments", |b| {
        b[k("onboarding_mode")] = json!("hosted");
    })
    .await;
    w.example(&svc, "get", "/v1/groups/{groupId}/enrollments", keep)
        .await;
    w.example(&svc, "get", "/v1/enrollments/{id}", keep).await;
    w.example(&svc, "post", "/v1/enrollments/{id}/portal_links", keep)
        .await;
    w.example(&svc, "get", "/v1/enrollments/{id}/onboarding", keep)
        .await;
    w.example(
        &svc,
        "post",
        "/v1/test_helpers/groups/{groupId}/go_live",
        keep,
    )
    .await;
    w.example(&svc, "post", "/v1/groups/{groupId}/members", keep)
        .await;
    w.example(
        &svc,
        "patch",
        "/v1/groups/{groupId}/members/{memberId}",
        keep,
    )
    .await;
    w.example(&svc, "get", "/v1/groups/{groupId}/members", keep)
        .await;
    // Elections are for benefits-administering partners: an HR platform
    // key is refused, as documented.
    let refused = (style == Style::Camel).then_some(403);
    w.expect(
        &svc,
        "post",
        "/v1/groups/{groupId}/elections",
        keep,
        refused,
    )
    .await;
    w.example(&svc, "get", "/v1/groups/{groupId}/account", keep)
        .await;

    // A second group, enrolled embedded, through every onboarding step.
    w.example(&svc, "post", "/v1/groups", |b| {
        b["domain"] = json!("embedded.example");
        b[k("external_id")] = json!("crm-embedded");
    })
    .await;
    // Above the in-review threshold (200 employees), so the quote waits
    // for underwriting, which the test helper stands in for.
    let census: Vec<Value> = (0..201)
        .map(|i| json!({k("external_id"): format!("E{i}"), k("first_name"): "Em", k("last_name"): "Ployee",
                        "dob": "1985-01-01", "zip": "60601"}))
        .collect();
    let gid = w.ids["grp_"].clone();
    let a = send(
        &svc,
        put(
            &format!("/v1/groups/{gid}/census"),
            &w.key,
            &json!({"members": census}),
        ),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    w.app.run_jobs().await;
    let quote = w
        .example(&svc, "post", "/v1/groups/{groupId}/quotes", keep)
        .await;
    assert_eq!(quote.body["status"], "in_review", "{}", quote.body);
    w.example(&svc, "post", "/v1/test_helpers/quotes/{id}/finalize", keep)
        .await;
    w.example(&svc, "post", "/v1/groups/{groupId}/enrollments", |b| {
        b[k("onboarding_mode")] = json!("embedded");
    })
    .await;
    let step = |name: &str| format!("/v1/enrollments/{{id}}/onboarding/{name}");
    for (method, name) in [
        ("put", "company_profile"),
        ("post", "business_verification"),
        ("put", "banking"),
        ("post", "banking/verify"),
        ("put", "plan_setup"),
        ("post", "plan_setup/sign"),
        ("post", "employee_invitations"),
    ] {
        w.example(&svc, method, &step(name), keep).await;
    }

    // Events, delivered to the receiver first (a pending one is not
    // resent).
    while w.app.deliver().await > 0 {}
    let list = w.example(&svc, "get", "/v1/events", keep).await;
    let first = list.body["events"][0]["id"].as_str().unwrap().to_owned();
    w.ids.insert("evt_".to_owned(), first);
    w.example(&svc, "get", "/v1/events/{id}", keep).await;
    w.example(&svc, "post", "/v1/events/{id}/resend", keep)
        .await;

    // Price-on-plan, and its stored answer read back.
    let a = w.example(&svc, "post", "/v1/price-on-plan", keep).await;
    let quote = a.body[k("quote_id")].as_str().unwrap().to_owned();
    w.ids.insert("qt_".to_owned(), quote);
    w.example(&svc, "get", "/v1/quotes/{id}", keep).await;

    w.example(&svc, "delete", "/v1/webhook", keep).await;

    let unsent = w.unsent();
    assert!(unsent.is_empty(), "{style:?}: not sent: {unsent:#?}");
}

crate::http_on_both!(the_broker_document_s_examples_work_and_its_schemas_hold);
async fn the_broker_document_s_examples_work_and_its_schemas_hold(db: TestDb) {
    walk(db, Style::Snake).await;
}

crate::http_on_both!(the_hr_platform_document_s_examples_work_and_its_schemas_hold);
async fn the_hr_platform_document_s_examples_work_and_its_schemas_hold(db: TestDb) {
    walk(db, Style::Camel).await;
}
