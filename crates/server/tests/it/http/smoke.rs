//! The first call of an integration: `GET /v1/ping` with a test key.

use serde_json::json;
use testkit::db::TestDb;

use crate::http::{TestApp, get, send};

crate::http_on_both!(ping_answers_with_the_partner_and_mode);
async fn ping_answers_with_the_partner_and_mode(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let a = send(&svc, get("/v1/ping", &key)).await;
    assert_eq!(a.status, 200, "{:?}", a.body);
    assert_eq!(
        a.body,
        json!({"ok": true, "partner": {"id": partner.id.as_str(), "name": "Acme Brokers"}, "mode": "test"})
    );
    let rid = a.header("request-id").unwrap();
    assert!(rid.starts_with("req_") && rid.len() == 16, "{rid}");
    assert_eq!(
        a.header("ratelimit-policy"),
        Some("\"requests\";q=120;w=60")
    );
}
