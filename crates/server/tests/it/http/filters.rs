//! List filters over HTTP (contract §10): groups by `external_id`,
//! `domain` and `status`; a group's quotes by `status` and `type`; events
//! by `type` and a `created_gte`/`created_lt` window; the roster by
//! `status` and `enrollment_status`. A bad value and an unknown parameter
//! are 400 naming it, before the resource is looked up.

use serde_json::{Value, json};
use testkit::db::TestDb;

use super::enrollments::{Api, body};
use crate::http::{Answer, TestApp, assert_error, create_group, get, group_body, patch, send};

/// The `field` of each item of the list `key` of `a`.
fn each(a: &Answer, key: &str, field: &str) -> Vec<Value> {
    assert_eq!(a.status, 200, "{}", a.body);
    a.body[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {}", a.body))
        .iter()
        .map(|i| i[field].clone())
        .collect()
}

/// Asserts a 400 naming `field`.
fn names(a: &Answer, field: &str) {
    assert_error(a, 400, "invalid_request");
    assert_eq!(a.body["details"][0]["field"], field, "{}", a.body);
}

crate::http_on_both!(groups_are_found_by_external_id_domain_and_status);
async fn groups_are_found_by_external_id_domain_and_status(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let mut first = group_body("acme-mfg.com");
    first["external_id"] = json!("crm-1");
    let acme = create_group(&svc, &key, &first).await;
    // A second later, so that the newest-first order is the creation order.
    app.clock.advance(1);
    let mut second = group_body("globex.com");
    second["external_id"] = json!("crm-2");
    let globex = create_group(&svc, &key, &second).await;
    let list = |q: &str| send(&svc, get(&format!("/v1/groups?{q}"), &key));

    assert_eq!(
        each(&list("external_id=crm-2").await, "groups", "id"),
        [globex["id"].clone()]
    );
    assert_eq!(
        each(&list("domain=ACME-MFG.com").await, "groups", "id"),
        [acme["id"].clone()]
    );
    assert_eq!(
        each(&list("status=created&limit=1").await, "groups", "id"),
        [globex["id"].clone()]
    );
    assert!(each(&list("status=active").await, "groups", "id").is_empty());
    assert!(
        each(
            &list("external_id=crm-1&domain=globex.com").await,
            "groups",
            "id"
        )
        .is_empty()
    );
    assert!(each(&list("external_id=nobody").await, "groups", "id").is_empty());

    names(&list("status=bogus").await, "status");
    let unknown = list("externalId=crm-1").await;
    names(&unknown, "externalId");
    assert!(
        unknown.body["message"]
            .as_str()
            .unwrap()
            .contains("it takes external_id, domain, status, limit, cursor"),
        "{}",
        unknown.body
    );
}

crate::http_on_both!(quotes_are_found_by_status_and_type);
async fn quotes_are_found_by_status_and_type(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let api = Api(&app, &svc);
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let list = |q: &str| send(&svc, get(&format!("/v1/groups/{gid}/quotes?{q}"), &key));
    assert_eq!(
        each(&list("status=ready").await, "quotes", "id"),
        [json!(qid)]
    );
    assert_eq!(
        each(&list("type=quote&status=ready").await, "quotes", "id"),
        [json!(qid)]
    );
    assert!(each(&list("status=pricing").await, "quotes", "id").is_empty());
    assert!(each(&list("type=price_on_plan").await, "quotes", "id").is_empty());
    names(&list("type=market").await, "type");
    names(&list("status=done").await, "status");
    // Checked before the group is looked up: a bad filter on an unknown
    // group is the 400, not the 404.
    let unknown = send(
        &svc,
        get("/v1/groups/grp_000000000000/quotes?type=market", &key),
    )
    .await;
    names(&unknown, "type");
}

crate::http_on_both!(events_are_found_by_type_and_creation_window);
async fn events_are_found_by_type_and_creation_window(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let api = Api(&app, &svc);
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let before = app.clock.secs();
    app.clock.advance(10);
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(e.status, 201, "{}", e.body);
    let at = app.clock.secs();
    let stamp = |secs: i64| domain::ports::rfc3339(secs);
    let list = |q: String| send(&svc, get(&format!("/v1/events?{q}"), &key));

    let created = each(
        &list("type=enrollment.created".to_owned()).await,
        "events",
        "type",
    );
    assert_eq!(created, [json!("enrollment.created")]);
    let all = each(&list(String::new()).await, "events", "type");
    assert!(all.len() > 1, "{all:?}");
    // The window [at, at + 1) holds what the enrollment sent, and no
    // earlier event; [before, at) holds none of it.
    let window = each(
        &list(format!(
            "created_gte={}&created_lt={}",
            stamp(at),
            stamp(at + 1)
        ))
        .await,
        "events",
        "type",
    );
    assert!(window.contains(&json!("enrollment.created")), "{window:?}");
    assert!(!window.contains(&json!("census.processed")), "{window:?}");
    let earlier = each(
        &list(format!(
            "created_gte={}&created_lt={}",
            stamp(before),
            stamp(at)
        ))
        .await,
        "events",
        "type",
    );
    assert!(
        !earlier.contains(&json!("enrollment.created")),
        "{earlier:?}"
    );
    // A fraction rounds up, as the shown times compare.
    let fraction = stamp(at).replace('Z', ".5Z");
    let after = each(
        &list(format!("created_gte={}", fraction.replace(':', "%3A"))).await,
        "events",
        "type",
    );
    assert!(after.is_empty(), "{after:?}");

    names(&list("type=enrollment".to_owned()).await, "type");
    names(
        &list("created_gte=yesterday".to_owned()).await,
        "created_gte",
    );
    names(
        &list("created_lt=2026-13-01T00:00:00Z".to_owned()).await,
        "created_lt",
    );
    names(
        &list("since=2026-11-01T00:00:00Z".to_owned()).await,
        "since",
    );
}

crate::http_on_both!(the_roster_is_found_by_status_and_enrollment_status);
async fn the_roster_is_found_by_status_and_enrollment_status(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let api = Api(&app, &svc);
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(e.status, 201, "{}", e.body);
    let list = |q: &str| send(&svc, get(&format!("/v1/groups/{gid}/members?{q}"), &key));
    let everyone = each(&list("").await, "members", "id");
    assert!(everyone.len() >= 2, "{everyone:?}");
    let leaver = everyone[0].as_str().unwrap().to_owned();
    let done = send(
        &svc,
        patch(
            &format!("/v1/groups/{gid}/members/{leaver}"),
            &key,
            &json!({"status": "terminated", "termination_date": "2026-12-15"}),
        ),
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.body);

    assert_eq!(
        each(&list("status=terminated").await, "members", "id"),
        [json!(leaver)]
    );
    let active = each(&list("status=active").await, "members", "id");
    assert_eq!(active.len(), everyone.len() - 1, "{active:?}");
    assert!(!active.contains(&json!(leaver)));
    assert_eq!(
        each(&list("enrollment_status=pending").await, "members", "id").len(),
        everyone.len()
    );
    assert!(each(&list("enrollment_status=enrolled").await, "members", "id").is_empty());
    names(&list("status=fired").await, "status");
    names(&list("enrollment_status=yes").await, "enrollment_status");
}

crate::http_on_both!(every_get_refuses_a_parameter_it_does_not_take);
async fn every_get_refuses_a_parameter_it_does_not_take(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let (_, key) = app.broker().await;
    let group = create_group(&svc, &key, &group_body("acme-mfg.com")).await;
    let gid = group["id"].as_str().unwrap();
    for path in [
        "/v1/ping?verbose=1".to_owned(),
        format!("/v1/groups/{gid}?expand=quotes"),
        "/v1/plans?x".to_owned(),
        "/v1/groups/grp_000000000000?expand=quotes".to_owned(),
    ] {
        let a = send(&svc, get(&path, &key)).await;
        assert_error(&a, 400, "invalid_request");
        assert!(
            a.body["message"]
                .as_str()
                .unwrap()
                .contains("it takes none"),
            "{path}: {}",
            a.body
        );
    }
    // A key comes first: without one, the answer is 401.
    let a = send(
        &svc,
        actix_web::test::TestRequest::get().uri("/v1/groups?x=1"),
    )
    .await;
    assert_error(&a, 401, "unauthorized");
}
