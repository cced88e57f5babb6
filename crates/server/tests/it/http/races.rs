//! Concurrent requests that race for one state change: exactly one wins,
//! the other is told why, and the change is announced once.

use domain::event::EventType;
use domain::mode::Mode;
use domain::page::PageRequest;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::{TestApp, create_group, group_body, post, put, scope, send};

crate::http_on_both!(of_two_concurrent_go_lives_one_wins);
async fn of_two_concurrent_go_lives_one_wins(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let census = json!({"members": [{"external_id": "E1", "dob": "1988-04-12", "zip": "60601"}]});
    for n in 0..5 {
        let g = create_group(&svc, &key, &group_body(&format!("race{n}.com"))).await;
        let gid = g["id"].as_str().unwrap();
        let a = send(
            &svc,
            put(&format!("/v1/groups/{gid}/census"), &key, &census),
        )
        .await;
        assert_eq!(a.status, 200, "{}", a.body);
        app.run_jobs().await;
        let q = send(
            &svc,
            post(&format!("/v1/groups/{gid}/quotes"), &key, &json!({})),
        )
        .await;
        let body =
            json!({"quote_id": q.body["id"], "signatory": {"name": "D", "email": "d@race.com"}});
        let e = send(
            &svc,
            post(&format!("/v1/groups/{gid}/enrollments"), &key, &body),
        )
        .await;
        assert_eq!(e.status, 201, "{}", e.body);

        let path = format!("/v1/test_helpers/groups/{gid}/go_live");
        let (a, b) = futures_util::future::join(
            send(&svc, post(&path, &key, &json!({}))),
            send(&svc, post(&path, &key, &json!({}))),
        )
        .await;
        let mut statuses = [a.status.as_u16(), b.status.as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "{} / {}", a.body, b.body);
        let loser = if a.status == 409 { &a } else { &b };
        assert_eq!(loser.body["error"], "conflict");
        assert_eq!(loser.body["message"], "the group is already live");
    }
    let events = app
        .db
        .stores
        .outbox
        .events(
            &scope(&partner, Mode::Test),
            &domain::event::EventFilter::since(0),
            &PageRequest::first(200),
        )
        .await
        .unwrap();
    let went_live = events
        .items
        .iter()
        .filter(|e| e.event.event_type() == EventType::GroupStateChanged)
        .count();
    assert_eq!(went_live, 5, "one group.state_changed per group");
}

crate::http_on_both!(of_two_concurrent_finalizations_one_wins);
async fn of_two_concurrent_finalizations_one_wins(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let members: Vec<_> = (0..201)
        .map(|i| json!({"external_id": format!("E{i}"), "dob": "1985-01-01", "zip": "60601"}))
        .collect();
    let g = create_group(&svc, &key, &group_body("big.com")).await;
    let gid = g["id"].as_str().unwrap();
    let a = send(
        &svc,
        put(
            &format!("/v1/groups/{gid}/census"),
            &key,
            &json!({"members": members}),
        ),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.run_jobs().await;
    for _ in 0..5 {
        let q = send(
            &svc,
            post(&format!("/v1/groups/{gid}/quotes"), &key, &json!({})),
        )
        .await;
        assert_eq!(q.body["status"], "in_review", "{}", q.body);
        let path = format!(
            "/v1/test_helpers/quotes/{}/finalize",
            q.body["id"].as_str().unwrap()
        );
        let (a, b) = futures_util::future::join(
            send(&svc, post(&path, &key, &json!({}))),
            send(&svc, post(&path, &key, &json!({}))),
        )
        .await;
        let mut statuses = [a.status.as_u16(), b.status.as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "{} / {}", a.body, b.body);
    }
    let events = app
        .db
        .stores
        .outbox
        .events(
            &scope(&partner, Mode::Test),
            &domain::event::EventFilter::since(0),
            &PageRequest::first(200),
        )
        .await
        .unwrap();
    let finalized = events
        .items
        .iter()
        .filter(|e| e.event.event_type() == EventType::QuoteFinalized)
        .count();
    assert_eq!(finalized, 5, "one quote.finalized per quote");
}
