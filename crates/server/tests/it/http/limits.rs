//! Per-key rate limits (contract section 5): the sixth request of a key
//! limited to five per minute is a 429 with `Retry-After`, every
//! authenticated answer carries `RateLimit-Policy` and `RateLimit`, keys
//! are counted separately, and two applications over one database share
//! the count.

use actix_web::test;
use http_api::Limits;
use testkit::db::TestDb;

use crate::http::{Answer, TestApp, assert_error, get, send};

fn five() -> Limits {
    Limits {
        requests_per_minute: 5,
        ..Limits::default()
    }
}

/// The `r=` of the `requests` item of `RateLimit`.
fn remaining(a: &Answer) -> u32 {
    let field = a.header("ratelimit").unwrap();
    let item = field
        .split(',')
        .map(str::trim)
        .find(|i| i.starts_with("\"requests\";"))
        .unwrap_or_else(|| panic!("{field}"));
    item.split(';')
        .find_map(|p| p.strip_prefix("r="))
        .unwrap()
        .parse()
        .unwrap()
}

/// The `t=` of the `requests` item of `RateLimit`.
fn reset(a: &Answer) -> i64 {
    let field = a.header("ratelimit").unwrap();
    field
        .split(';')
        .find_map(|p| p.trim().strip_prefix("t="))
        .and_then(|t| t.split(',').next())
        .unwrap()
        .parse()
        .unwrap()
}

fn assert_limited(a: &Answer) {
    assert_error(a, 429, "rate_limited");
    let retry: i64 = a.header("retry-after").unwrap().parse().unwrap();
    assert!(retry >= 1, "{retry}");
    assert_eq!(retry, reset(a));
    assert_eq!(a.header("ratelimit-policy"), Some("\"requests\";q=5;w=60"));
    assert_eq!(remaining(a), 0);
}

crate::http_on_both!(the_sixth_request_is_limited);
async fn the_sixth_request_is_limited(db: TestDb) {
    let app = TestApp::with_limits(db, five());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let (_, other) = app.hr_platform().await;
    app.clock.advance(15);
    let mut left = Vec::new();
    for path in [
        "/v1/ping",
        "/v1/groups",
        "/v1/plans",
        "/v1/ping",
        "/v1/nope",
    ] {
        let a = send(&svc, get(path, &key)).await;
        assert!(a.status != 429, "{}", a.body);
        assert_eq!(a.header("ratelimit-policy"), Some("\"requests\";q=5;w=60"));
        assert_eq!(reset(&a), 45);
        left.push(remaining(&a));
    }
    assert_eq!(left, [4, 3, 2, 1, 0]);
    let a = send(&svc, get("/v1/ping", &key)).await;
    assert_limited(&a);
    assert_eq!(a.header("retry-after"), Some("45"));
    // Another key is counted on its own, even for an HR platform.
    let b = send(&svc, get("/v1/ping", &other)).await;
    assert_eq!(b.status, 200, "{}", b.body);
    assert_eq!(remaining(&b), 4);
    // Still limited within the window, free again after it.
    app.clock.advance(44);
    assert_limited(&send(&svc, get("/v1/ping", &key)).await);
    app.clock.advance(1);
    let a = send(&svc, get("/v1/ping", &key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(remaining(&a), 4);
    assert_eq!(reset(&a), 60);
}

crate::http_on_both!(unauthenticated_answers_carry_no_rate_limit_fields);
async fn unauthenticated_answers_carry_no_rate_limit_fields(db: TestDb) {
    let app = TestApp::with_limits(db, five());
    let svc = app.service().await;
    for req in [
        test::TestRequest::get().uri("/v1/ping"),
        test::TestRequest::get().uri("/healthz"),
    ] {
        let a = send(&svc, req).await;
        assert_eq!(a.header("ratelimit"), None);
        assert_eq!(a.header("ratelimit-policy"), None);
    }
}

/// PostgreSQL only: it is the backend for several server processes
/// (the embedded SQLite backend serves one process and counts in memory).
#[actix_web::test]
async fn two_applications_on_postgres_share_the_limit() {
    let Some(db) = testkit::db::postgres().await else {
        eprintln!(
            "SKIPPED: {} is not set; PostgreSQL not tested",
            testkit::db::PG_ENV
        );
        return;
    };
    let app = TestApp::with_limits(db, five());
    let first = app.service().await;
    let stores = app.db.second_process();
    let second = test::init_service(http_api::app(app.state_over(&stores))).await;
    let (_, key) = app.broker().await;
    let mut left = Vec::new();
    for i in 0..5 {
        let a = if i % 2 == 0 {
            send(&first, get("/v1/ping", &key)).await
        } else {
            send(&second, get("/v1/ping", &key)).await
        };
        assert_eq!(a.status, 200, "{}", a.body);
        left.push(remaining(&a));
    }
    assert_eq!(left, [4, 3, 2, 1, 0]);
    assert_limited(&send(&first, get("/v1/ping", &key)).await);
    assert_limited(&send(&second, get("/v1/ping", &key)).await);
}

crate::http_on_both!(group_reads_are_limited_like_every_request);
/// A group read is the request whose hit PostgreSQL makes in the read's
/// own statement: it is counted and refused exactly as every other, a
/// read of a missing group counts too, and a refused read shows nothing
/// of the group.
async fn group_reads_are_limited_like_every_request(db: TestDb) {
    let app = TestApp::with_limits(db, five());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let group =
        crate::http::create_group(&svc, &key, &crate::http::group_body("limited.example")).await;
    let path = format!("/v1/groups/{}", group["id"].as_str().unwrap());
    let mut left = Vec::new();
    for p in [path.as_str(), "/v1/groups/grp_000000000000", &path, &path] {
        let a = send(&svc, get(p, &key)).await;
        assert!(a.status == 200 || a.status == 404, "{}", a.body);
        left.push(remaining(&a));
    }
    assert_eq!(left, [3, 2, 1, 0]);
    let a = send(&svc, get(&path, &key)).await;
    assert_limited(&a);
    assert!(
        !a.body.to_string().contains("limited.example"),
        "{}",
        a.body
    );
}

crate::http_on_both!(concurrent_group_reads_are_counted_exactly);
/// Twenty group reads at once against a limit of five (one hit left to
/// another request): four answer the group and sixteen are refused, on
/// PostgreSQL whichever batch of the counter each read rides in.
async fn concurrent_group_reads_are_counted_exactly(db: TestDb) {
    let app = TestApp::with_limits(db, five());
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let (_, other) = app.hr_platform().await;
    let group =
        crate::http::create_group(&svc, &other, &crate::http::group_body("many.example")).await;
    let path = format!("/v1/groups/{}", group["id"].as_str().unwrap());
    let reads = (0..20).map(|_| send(&svc, get(&path, &other)));
    let answers = futures_util::future::join_all(reads).await;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status.as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        4,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        16,
        "{statuses:?}"
    );
    let mut left: Vec<u32> = answers
        .iter()
        .filter(|a| a.status == 200)
        .map(remaining)
        .collect();
    left.sort_unstable();
    assert_eq!(left, [0, 1, 2, 3]);
    // The other key was not charged.
    assert_eq!(remaining(&send(&svc, get("/v1/ping", &key)).await), 4);
}
