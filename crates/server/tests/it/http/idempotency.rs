//! `Idempotency-Key` (contract section 4): replay of the stored answer
//! (4xx included) with `Idempotent-Replay: true`, mismatches, key shape,
//! partner scope, exactly one execution under concurrency, and a key freed
//! when its begin failed after committing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use actix_web::test::TestRequest;
use domain::idempotency::{Begin, Completion, IdempotentRequest};
use domain::mode::Mode;
use domain::partner::PartnerKind;
use domain::scope::Scope;
use domain::store::{IdempotencyStore, StoreError, StoreResult};
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::price_on_plan::group_count;
use crate::http::{TestApp, assert_error, get, group_body, patch, post, send};

fn keyed(req: TestRequest, key: &str) -> TestRequest {
    req.insert_header(("idempotency-key", key.to_owned()))
}

crate::http_on_both!(a_repeat_replays_the_first_answer);
async fn a_repeat_replays_the_first_answer(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = group_body("idem.com");
    let first = send(&svc, keyed(post("/v1/groups", &key, &body), "order-1")).await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.header("idempotent-replay"), None);
    app.clock.advance(60 * 60);
    let second = send(&svc, keyed(post("/v1/groups", &key, &body), "order-1")).await;
    assert_eq!(second.status, 201);
    assert_eq!(second.raw, first.raw);
    assert_eq!(second.header("idempotent-replay"), Some("true"));
    assert_eq!(second.header("location"), first.header("location"));
    assert_eq!(second.header("content-type"), Some("application/json"));
    assert_ne!(second.header("request-id"), first.header("request-id"));
    // The same body in the other style and field order is the same request.
    let camel = json!({
        "currentCoverage": {"renewalDate": "2027-01-01", "pepmCents": 78000,
                            "carrier": "Blue Plan", "planType": "fully_insured"},
        "contact": {"title": "HR Director", "email": "dana@acme-mfg.com", "name": "Dana Lee"},
        "address": {"zip": "60601", "state": "IL", "city": "Chicago", "line1": "1 Main St"},
        "externalId": "crm-4411", "domain": "idem.com", "companyName": "Acme Manufacturing"
    });
    let third = send(&svc, keyed(post("/v1/groups", &key, &camel), "order-1")).await;
    assert_eq!(third.raw, first.raw);
    assert_eq!(third.header("idempotent-replay"), Some("true"));
    assert_eq!(group_count(&svc, &key).await, 1);
    // A new key executes again.
    let other = send(&svc, keyed(post("/v1/groups", &key, &body), "order-2")).await;
    assert_eq!(other.status, 201);
    assert_ne!(other.body["id"], first.body["id"]);
    assert_eq!(group_count(&svc, &key).await, 2);
}

crate::http_on_both!(a_reused_key_with_another_request_is_refused);
async fn a_reused_key_with_another_request_is_refused(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let first = send(
        &svc,
        keyed(post("/v1/groups", &key, &group_body("one.com")), "k"),
    )
    .await;
    assert_eq!(first.status, 201);
    let a = send(
        &svc,
        keyed(post("/v1/groups", &key, &group_body("two.com")), "k"),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), ["Idempotency-Key"]);
    assert_eq!(a.header("idempotent-replay"), None);
    // Another path (here: with a query) is another request.
    let a = send(
        &svc,
        keyed(post("/v1/groups?x=1", &key, &group_body("one.com")), "k"),
    )
    .await;
    assert_eq!(a.fields(), ["Idempotency-Key"]);
    assert_eq!(group_count(&svc, &key).await, 1);

    // PATCH is not keyed: the header is ignored and each PATCH executes.
    let path = format!("/v1/groups/{}", first.body["id"].as_str().unwrap());
    for name in ["First", "Second"] {
        let a = send(
            &svc,
            keyed(patch(&path, &key, &json!({"company_name": name})), "k"),
        )
        .await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body["company_name"], name);
        assert_eq!(a.header("idempotent-replay"), None);
    }
    // Nor is GET.
    let a = send(&svc, keyed(get("/v1/groups", &key), "k")).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.header("idempotent-replay"), None);
}

crate::http_on_both!(client_errors_are_stored_and_replayed);
async fn client_errors_are_stored_and_replayed(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, broker) = app.broker().await;
    let (_, hr) = app.hr_platform().await;
    let bad = json!({"company_name": "A", "domain": "BAD", "current_coverage": {"pepm_cents": -1}});
    for key in [&broker, &hr] {
        let first = send(&svc, keyed(post("/v1/groups", key, &bad), "bad-1")).await;
        assert_error(&first, 400, "invalid_request");
        let second = send(&svc, keyed(post("/v1/groups", key, &bad), "bad-1")).await;
        assert_error(&second, 400, "invalid_request");
        assert_eq!(second.raw, first.raw);
        assert_eq!(second.header("idempotent-replay"), Some("true"));
        assert_eq!(second.header("content-type"), Some("application/json"));
    }
    // The replayed error keeps the caller's style.
    let hr_replay = send(&svc, keyed(post("/v1/groups", &hr, &bad), "bad-1")).await;
    let mut fields = hr_replay.fields();
    fields.sort();
    assert_eq!(fields, ["currentCoverage.pepmCents", "domain"]);
    // Nothing was created.
    assert_eq!(group_count(&svc, &broker).await, 0);
}

crate::http_on_both!(keys_must_be_1_to_255_characters);
async fn keys_must_be_1_to_255_characters(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    for bad in [String::new(), "k".repeat(256)] {
        let a = send(
            &svc,
            keyed(post("/v1/groups", &key, &group_body("len.com")), &bad),
        )
        .await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), ["Idempotency-Key"], "{}", a.body);
    }
    assert_eq!(group_count(&svc, &key).await, 0);
    let longest = "k".repeat(255);
    let a = send(
        &svc,
        keyed(post("/v1/groups", &key, &group_body("len.com")), &longest),
    )
    .await;
    assert_eq!(a.status, 201, "{}", a.body);
    let a = send(
        &svc,
        keyed(post("/v1/groups", &key, &group_body("len.com")), &longest),
    )
    .await;
    assert_eq!(a.header("idempotent-replay"), Some("true"));
}

crate::http_on_both!(keys_are_scoped_to_partner_and_mode);
async fn keys_are_scoped_to_partner_and_mode(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let a = app.partner("Partner A", PartnerKind::Broker, true).await;
    let a_test = app.key(&a, Mode::Test).await;
    let a_test2 = app.key(&a, Mode::Test).await;
    let a_live = app.key(&a, Mode::Live).await;
    let b = app.partner("Partner B", PartnerKind::Broker, false).await;
    let b_test = app.key(&b, Mode::Test).await;
    let body = group_body("scoped.com");
    let first = send(&svc, keyed(post("/v1/groups", &a_test, &body), "shared")).await;
    assert_eq!(first.status, 201);
    let mut seen = vec![first.body["id"].clone()];
    for key in [&b_test, &a_live] {
        let r = send(&svc, keyed(post("/v1/groups", key, &body), "shared")).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.header("idempotent-replay"), None);
        assert!(!seen.contains(&r.body["id"]));
        seen.push(r.body["id"].clone());
    }
    // Another key of the same partner and mode shares the record.
    let r = send(&svc, keyed(post("/v1/groups", &a_test2, &body), "shared")).await;
    assert_eq!(r.header("idempotent-replay"), Some("true"));
    assert_eq!(r.raw, first.raw);
}

crate::http_on_both!(concurrent_repeats_execute_once);
async fn concurrent_repeats_execute_once(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = group_body("race.com");
    let answers = futures_util::future::join_all(
        (0..50).map(|_| send(&svc, keyed(post("/v1/groups", &key, &body), "race"))),
    )
    .await;
    let mut ids: Vec<Value> = Vec::new();
    let (mut created, mut in_flight) = (0, 0);
    for a in &answers {
        match a.status.as_u16() {
            201 => {
                created += 1;
                ids.push(a.body["id"].clone());
            }
            409 => {
                in_flight += 1;
                assert_error(a, 409, "conflict");
                assert_eq!(a.header("retry-after"), Some("1"));
            }
            other => panic!("unexpected {other}: {}", a.body),
        }
    }
    assert_eq!(created + in_flight, 50);
    assert!(created >= 1);
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let replays = answers
        .iter()
        .filter(|a| a.header("idempotent-replay") == Some("true"))
        .count();
    assert_eq!(replays, created - 1);
    assert_eq!(group_count(&svc, &key).await, 1);
    // Once finished, a retry replays.
    let again = send(&svc, keyed(post("/v1/groups", &key, &body), "race")).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.header("idempotent-replay"), Some("true"));
    assert_eq!(again.body["id"], ids[0]);
}

crate::http_on_both!(a_retry_later_answer_is_not_replayed);
async fn a_retry_later_answer_is_not_replayed(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let g = send(&svc, post("/v1/groups", &key, &group_body("acme-mfg.com"))).await;
    let gid = g.body["id"].as_str().unwrap();
    let census = json!({"members": [{"external_id": "E1", "dob": "1988-04-12", "zip": "60601"}]});
    let path = format!("/v1/groups/{gid}/census");
    let a = send(&svc, crate::http::put(&path, &key, &census)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    // While the comparison runs: 409 rates_pending with Retry-After ...
    let quotes = format!("/v1/groups/{gid}/quotes");
    let first = send(&svc, keyed(post(&quotes, &key, &json!({})), "q-1")).await;
    assert_error(&first, 409, "rates_pending");
    assert!(first.header("retry-after").is_some());
    // ... which is not stored: the retry the answer asks for, with the same
    // key, executes once the comparison is done.
    app.run_jobs().await;
    let retry = send(&svc, keyed(post(&quotes, &key, &json!({})), "q-1")).await;
    assert_eq!(retry.status, 201, "{}", retry.body);
    assert!(retry.header("idempotent-replay").is_none());
    let replay = send(&svc, keyed(post(&quotes, &key, &json!({})), "q-1")).await;
    assert_eq!(replay.header("idempotent-replay"), Some("true"));
    assert_eq!(replay.body, retry.body);
}

crate::http_on_both!(a_key_whose_answer_was_lost_answers_with_the_group_it_made);
async fn a_key_whose_answer_was_lost_answers_with_the_group_it_made(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = group_body("lost-answer.com");
    let first = send(&svc, keyed(post("/v1/groups", &key, &body), "order-7")).await;
    assert_eq!(first.status, 201, "{}", first.body);
    // The process that made the group died before the key stored its
    // answer: once the dead owner is found, the key's record is released.
    testkit::db::execute(&app.db.db, "DELETE FROM idempotency").await;
    let again = send(&svc, keyed(post("/v1/groups", &key, &body), "order-7")).await;
    assert_eq!(again.status, 201, "{}", again.body);
    assert_eq!(again.body["id"], first.body["id"]);
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(group_count(&svc, &key).await, 1);
    // Another key makes another group.
    let other = send(&svc, keyed(post("/v1/groups", &key, &body), "order-8")).await;
    assert_eq!(other.status, 201, "{}", other.body);
    assert_ne!(other.body["id"], first.body["id"]);
    assert_eq!(group_count(&svc, &key).await, 2);
    // Past the 24 h replay window the key is free for a new group.
    app.clock.advance(24 * 60 * 60 + 1);
    testkit::db::execute(&app.db.db, "DELETE FROM idempotency").await;
    let later = send(&svc, keyed(post("/v1/groups", &key, &body), "order-7")).await;
    assert_eq!(later.status, 201, "{}", later.body);
    assert_ne!(later.body["id"], first.body["id"]);
    assert_eq!(group_count(&svc, &key).await, 3);
}

/// The store's idempotency records, except that the first `begin` commits
/// and then reports the database unavailable, as when the acknowledgement
/// of its COMMIT is lost with the connection.
struct LostAcknowledgement {
    inner: Arc<dyn IdempotencyStore>,
    lost: AtomicBool,
}

#[async_trait::async_trait]
impl IdempotencyStore for LostAcknowledgement {
    async fn begin(
        &self,
        scope: &Scope,
        request: &IdempotentRequest,
        now: i64,
    ) -> StoreResult<Begin> {
        let begun = self.inner.begin(scope, request, now).await?;
        if self.lost.swap(true, Ordering::SeqCst) {
            return Ok(begun);
        }
        Err(StoreError::Unavailable(
            "connection closed on commit".into(),
        ))
    }

    async fn complete<'a>(&self, scope: &Scope, done: Completion<'a>) -> StoreResult<()> {
        self.inner.complete(scope, done).await
    }

    async fn release(&self, scope: &Scope, request: &IdempotentRequest) -> StoreResult<()> {
        self.inner.release(scope, request).await
    }

    async fn purge_idempotency(&self, now: i64) -> StoreResult<u64> {
        self.inner.purge_idempotency(now).await
    }
}

crate::http_on_both!(a_key_whose_begin_failed_after_committing_is_free_for_its_retry);
async fn a_key_whose_begin_failed_after_committing_is_free_for_its_retry(db: TestDb) {
    let mut app = TestApp::new(db);
    app.state.idempotency = Arc::new(LostAcknowledgement {
        inner: Arc::clone(&app.state.idempotency),
        lost: AtomicBool::new(false),
    });
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let body = group_body("lost-begin.com");
    let first = send(&svc, keyed(post("/v1/groups", &key, &body), "order-9")).await;
    assert_error(&first, 503, "not_configured");
    // The record the failed begin committed is released with it: the
    // retry executes at once instead of meeting 409 until the lease ends.
    let retry = send(&svc, keyed(post("/v1/groups", &key, &body), "order-9")).await;
    assert_eq!(retry.status, 201, "{}", retry.body);
    assert_eq!(group_count(&svc, &key).await, 1);
    let replay = send(&svc, keyed(post("/v1/groups", &key, &body), "order-9")).await;
    assert_eq!(replay.header("idempotent-replay"), Some("true"));
    assert_eq!(replay.body["id"], retry.body["id"]);
}
