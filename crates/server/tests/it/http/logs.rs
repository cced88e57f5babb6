//! The request log (contract section 0): one structured line per request
//! with request id, method, route template, status and latency, and never
//! a key, a name, an email or a body.

use std::io::Write;
use std::sync::{Arc, Mutex};

use actix_web::test::TestRequest;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::{Answer, TestApp, get, patch, post, send};

/// A shared, growable log buffer.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// The one log line naming `a`'s request id.
fn line_of<'a>(log: &'a str, a: &Answer) -> &'a str {
    let id = a.header("request-id").unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(id)).collect();
    assert_eq!(lines.len(), 1, "{id}:\n{log}");
    lines[0]
}

crate::http_on_both!(one_line_per_request_and_nothing_personal);
async fn one_line_per_request_and_nothing_personal(db: TestDb) {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .without_time()
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = json!({
        "company_name": "Quixotic Widgets Ltd",
        "domain": "quixotic-widgets.com",
        "contact": {"name": "Zebulon Featherstonehaugh", "email": "zebulon@quixotic-widgets.com"},
        "address": {"line1": "77 Sunflower Lane", "zip": "60601"}
    });
    let idem = "idem-9f3b2c71d0";
    let created = send(
        &svc,
        post("/v1/groups", &key, &body).insert_header(("idempotency-key", idem)),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.body["id"].as_str().unwrap().to_owned();
    let replayed = send(
        &svc,
        post("/v1/groups", &key, &body).insert_header(("idempotency-key", idem)),
    )
    .await;
    let read = send(&svc, get(&format!("/v1/groups/{id}"), &key)).await;
    let changed = send(
        &svc,
        patch(
            &format!("/v1/groups/{id}"),
            &key,
            &json!({"contact": {"name": "Ophelia Marchbanks"}}),
        ),
    )
    .await;
    let refused = send(&svc, get("/v1/ping", &format!("{key}0"))).await;
    let missing = send(&svc, TestRequest::get().uri("/nope")).await;
    drop(_guard);
    let log = buffer.text();

    let expect = [
        (&created, "POST", "/v1/groups", 201),
        (&replayed, "POST", "/v1/groups", 201),
        (&read, "GET", "/v1/groups/{groupId}", 200),
        (&changed, "PATCH", "/v1/groups/{groupId}", 200),
        (&refused, "GET", "/v1/ping", 401),
        (&missing, "GET", "(unmatched)", 404),
    ];
    for (answer, method, route, status) in expect {
        let line = line_of(&log, answer);
        assert!(line.contains(&format!("method={method}")), "{line}");
        assert!(line.contains(&format!("route={route}")), "{line}");
        assert!(line.contains(&format!("status={status}")), "{line}");
        assert!(line.contains("latency_ms="), "{line}");
        assert_eq!(answer.status.as_u16(), status);
    }
    for secret in [
        key.as_str(),
        &key[9..],
        "Quixotic Widgets",
        "Zebulon",
        "Featherstonehaugh",
        "zebulon@quixotic-widgets.com",
        "Ophelia",
        "Sunflower",
        idem,
        &body.to_string(),
    ] {
        assert!(!log.contains(secret), "the log holds {secret:?}:\n{log}");
    }
}
