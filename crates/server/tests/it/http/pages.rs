//! Cursor pagination of `GET /v1/groups` (contract section 1): newest
//! first, stable while new items arrive, `limit` 1..200 (default 50),
//! opaque cursors bound to their list.

use domain::group::GroupFields;
use domain::mode::Mode;
use domain::page::{Cursor, encode_cursor};
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{Answer, TestApp, assert_error, create_group, get, scope, send};

/// The ids of a page.
fn ids(a: &Answer) -> Vec<String> {
    a.body["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The next cursor of a page, if any.
fn next(a: &Answer) -> Option<String> {
    a.body["next_cursor"].as_str().map(str::to_owned)
}

/// Creates `n` groups one second apart; returns their ids, oldest first.
async fn seed<S, B>(app: &TestApp, svc: &S, key: &str, n: usize, tag: &str) -> Vec<String>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut out = Vec::new();
    for i in 0..n {
        app.clock.advance(1);
        let body =
            json!({"company_name": format!("Group {tag}{i}"), "domain": format!("{tag}{i}.com")});
        let g = create_group(svc, key, &body).await;
        out.push(g["id"].as_str().unwrap().to_owned());
    }
    out
}

crate::http_on_both!(pages_walk_newest_first_and_stay_stable);
async fn pages_walk_newest_first_and_stay_stable(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let mut made = seed(&app, &svc, &key, 5, "g").await;
    made.reverse();

    let p1 = send(&svc, get("/v1/groups?limit=2", &key)).await;
    assert_eq!(p1.status, 200, "{}", p1.body);
    assert_eq!(ids(&p1), made[0..2]);
    let c1 = next(&p1).unwrap();

    // New groups arrive between the pages: later pages do not shift.
    let newer = seed(&app, &svc, &key, 2, "late").await;

    let p2 = send(&svc, get(&format!("/v1/groups?limit=2&cursor={c1}"), &key)).await;
    assert_eq!(p2.status, 200, "{}", p2.body);
    assert_eq!(ids(&p2), made[2..4]);
    let c2 = next(&p2).unwrap();
    let p3 = send(&svc, get(&format!("/v1/groups?cursor={c2}&limit=2"), &key)).await;
    assert_eq!(ids(&p3), made[4..5]);
    assert_eq!(p3.body["next_cursor"], Value::Null);
    assert!(p3.body.as_object().unwrap().contains_key("next_cursor"));

    // A cursor can be replayed, and a fresh walk starts with the newcomers.
    let again = send(&svc, get(&format!("/v1/groups?limit=2&cursor={c1}"), &key)).await;
    assert_eq!(again.body, p2.body);
    let fresh = send(&svc, get("/v1/groups?limit=2", &key)).await;
    assert_eq!(ids(&fresh), [newer[1].clone(), newer[0].clone()]);
    // One page holding everything has no next cursor.
    let all = send(&svc, get("/v1/groups?limit=7", &key)).await;
    assert_eq!(all.body["groups"].as_array().unwrap().len(), 7);
    assert_eq!(all.body["next_cursor"], Value::Null);
    let max = send(&svc, get("/v1/groups?limit=200", &key)).await;
    assert_eq!(max.status, 200);
}

crate::http_on_both!(groups_of_one_second_are_listed_newest_first);
async fn groups_of_one_second_are_listed_newest_first(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let mut created = Vec::new();
    for (i, step_ms) in [3, 1, 250, 1, 600].into_iter().enumerate() {
        app.clock.advance_ms(step_ms);
        let body =
            json!({"company_name": format!("Same second {i}"), "domain": format!("s{i}.com")});
        created.push(
            create_group(&svc, &key, &body).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let first = send(&svc, get("/v1/groups?limit=3", &key)).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let second = send(
        &svc,
        get(
            &format!("/v1/groups?limit=3&cursor={}", next(&first).unwrap()),
            &key,
        ),
    )
    .await;
    let listed: Vec<String> = ids(&first).into_iter().chain(ids(&second)).collect();
    created.reverse();
    assert_eq!(listed, created);
    let stamps: Vec<&str> = first.body["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["created_at"].as_str().unwrap())
        .collect();
    assert!(
        stamps.iter().all(|s| *s == "2026-11-21T13:14:00Z"),
        "{stamps:?}"
    );
}

crate::http_on_both!(bad_limits_and_cursors_are_refused);
async fn bad_limits_and_cursors_are_refused(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    seed(&app, &svc, &key, 3, "b").await;
    for limit in ["0", "201", "abc", "-1", "1.5", "", "1e2", "%20"] {
        let a = send(&svc, get(&format!("/v1/groups?limit={limit}"), &key)).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), ["limit"], "limit={limit}: {}", a.body);
    }
    let real = next(&send(&svc, get("/v1/groups?limit=1", &key)).await).unwrap();
    let some_id = format!("grp_{}", "0".repeat(12));
    let of_quotes = encode_cursor(
        "quotes",
        &Cursor {
            created_at: app.clock.secs(),
            id: some_id.clone(),
        },
    );
    // URL-safe base64 of `groups|x|grp_1`: the right list, no time.
    let no_time = "Z3JvdXBzfHh8Z3JwXzE";
    for cursor in [
        "garbage!!",
        "abc",
        "",
        of_quotes.as_str(),
        no_time,
        &format!("{real}%25"),
    ] {
        let a = send(&svc, get(&format!("/v1/groups?cursor={cursor}"), &key)).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), ["cursor"], "cursor={cursor}: {}", a.body);
    }
    // A cursor built for this list is accepted (it is opaque, not secret).
    let of_groups = encode_cursor(
        "groups",
        &Cursor {
            created_at: app.clock.secs() + 1,
            id: some_id,
        },
    );
    let a = send(&svc, get(&format!("/v1/groups?cursor={of_groups}"), &key)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["groups"].as_array().unwrap().len(), 3);
}

crate::http_on_both!(the_default_page_is_50);
async fn the_default_page_is_50(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (partner, key) = app.broker().await;
    let s = scope(&partner, Mode::Test);
    for i in 0..51 {
        let fields = GroupFields {
            company_name: Some(format!("Bulk {i}")),
            domain: Some(format!("bulk{i}.com")),
            ..GroupFields::default()
        };
        app.state.groups.create(&s, fields).await.unwrap();
    }
    let p1 = send(&svc, get("/v1/groups", &key)).await;
    assert_eq!(p1.status, 200, "{}", p1.body);
    assert_eq!(ids(&p1).len(), 50);
    let c = next(&p1).unwrap();
    let p2 = send(&svc, get(&format!("/v1/groups?cursor={c}"), &key)).await;
    assert_eq!(ids(&p2).len(), 1);
    assert_eq!(p2.body["next_cursor"], Value::Null);
    let mut every: Vec<String> = ids(&p1).into_iter().chain(ids(&p2)).collect();
    every.sort();
    every.dedup();
    assert_eq!(every.len(), 51);
}
