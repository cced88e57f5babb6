//! Failing closed (contract section 8): with a database that cannot be
//! reached, authenticated calls and `/readyz` answer 503 `not_configured`
//! while `/healthz` stays 200; with a reachable one `/readyz` is 200. A
//! database that answers but fails is a 500 naming the request id.

use actix_web::test::{self, TestRequest};
use domain::mode::Mode;
use http_api::HttpConfig;
use store_diesel::migrate::{self, Direction};
use store_diesel::{Database, Stores};
use testkit::db::TestDb;

use crate::http::{TestApp, assert_error, get, group_body, ports, post, send, unknown_key};

#[actix_web::test]
async fn an_unreachable_database_answers_503() {
    let db = Database::parse("postgres://postgres@127.0.0.1:1/none").unwrap();
    let stores = Stores::open(&db, 2).unwrap();
    let shared = server::compose::Shared::builtin().unwrap();
    let state =
        server::compose::Services::new(&stores, &ports(), &shared).app_state(HttpConfig::default());
    let svc = test::init_service(http_api::app(state)).await;
    let live = domain::api_key::ApiKey::from_bytes(Mode::Live, [1; 16]);
    for key in [unknown_key(), live.expose().to_owned()] {
        let a = send(&svc, get("/v1/ping", &key)).await;
        assert_error(&a, 503, "not_configured");
        assert!(a.body.get("details").is_none(), "{}", a.body);
        let a = send(&svc, post("/v1/groups", &key, &group_body("down.com"))).await;
        assert_error(&a, 503, "not_configured");
    }
    let a = send(&svc, TestRequest::get().uri("/readyz")).await;
    assert_error(&a, 503, "not_configured");
    let a = send(&svc, TestRequest::get().uri("/healthz")).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["status"], "ok");
    // Documentation needs no database either.
    let a = send(&svc, TestRequest::get().uri("/v1/openapi.json")).await;
    assert_eq!(a.status, 200);
}

crate::http_on_both!(a_reachable_database_is_ready);
async fn a_reachable_database_is_ready(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let a = send(&svc, TestRequest::get().uri("/readyz")).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["status"], "ready");
    let a = send(&svc, TestRequest::get().uri("/healthz")).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("ratelimit"), None);
}

crate::http_on_both!(a_failing_database_is_a_500_naming_the_request);
async fn a_failing_database_is_a_500_naming_the_request(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    assert_eq!(send(&svc, get("/v1/ping", &key)).await.status, 200);
    // Every table disappears under the running application. (The key
    // itself is now believed from memory for a second, and SQLite counts
    // limits in memory, so a ping may still answer: what reads the
    // database fails.)
    migrate::run(&app.db.db, Direction::DownAll).await.unwrap();
    for req in [
        get("/v1/groups", &key),
        post("/v1/groups", &key, &group_body("fail.com")),
    ] {
        let a = send(&svc, req).await;
        assert_error(&a, 500, "server_error");
        let id = a.header("request-id").unwrap();
        let message = a.body["message"].as_str().unwrap();
        assert!(message.contains(id), "{message}");
        assert!(a.body.get("details").is_none(), "{}", a.body);
        let text = String::from_utf8_lossy(&a.raw).to_lowercase();
        for cause in ["table", "relation", "sql", "diesel", "database error"] {
            assert!(!text.contains(cause), "the cause leaks: {text}");
        }
    }
}
