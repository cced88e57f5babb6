//! Refused enrollments: bad bodies and pages, foreign resources, conflicts, expired quotes.

use actix_web::test::TestRequest;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::enrollments::{
    Api, CREATED, Want, big_census, body, empty, enrollment, enrollments, one, refused,
};
use crate::http::{TestApp, assert_error, authed, send};

crate::http_on_both!(bad_bodies_are_refused_naming_the_field_and_change_nothing);
async fn bad_bodies_are_refused_naming_the_field_and_change_nothing(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let (_, sibling) = api.quoted(&key, "other.com").await;
    let (_, skey) = app.broker().await;
    let (_, foreign) = api.quoted(&skey, "foreign.com").await;
    let (not_ours, long) = ("is not a quote of this group", "x".repeat(201));
    // [changes to a valid body (null removes), the field named, its message]
    let cases = json!([
        [{"quote_id": null}, "quote_id", "is required"],
        [{"quote_id": "qt_xyz"}, "quote_id", "must be a quote id (qt_ and 12 hex characters)"],
        [{"quote_id": gid}, "quote_id", null],
        [{"quote_id": 7}, "quote_id", null],
        [{"quote_id": sibling}, "quote_id", not_ours],
        [{"quote_id": foreign}, "quote_id", not_ours],
        [{"quote_id": "qt_000000000000"}, "quote_id", not_ours],
        [{"signatory": null}, "signatory", "is required"],
        [{"signatory": "Dana"}, "signatory", null],
        [{"signatory": {"name": "Dana"}}, "signatory.email", "is required"],
        [{"signatory": {"name": "D", "email": "d.acme"}}, "signatory.email", null],
        [{"signatory": {"name": "", "email": "d@a.com"}}, "signatory.name", null],
        [{"signatory": {"name": " ", "email": "d@a.com"}}, "signatory.name", null],
        [{"signatory": {"name": long, "email": "d@a.com"}}, "signatory.name", null],
        [{"signatory": {"name": "D", "email": "d@a.com", "ph": 1}}, "signatory.ph", null],
        [{"onboarding_mode": "x"}, "onboarding_mode", "must be hosted or embedded"],
        [{"start_date": "2026-13-01"}, "start_date", "must be a date (YYYY-MM-DD)"],
        [{"plan": "diamond"}, "plan", "is not a known field"],
        [{"quoteId": qid}, "quote_id", null],
    ]);
    for case in cases.as_array().unwrap() {
        let mut b = body(&qid);
        for (k, v) in case[0].as_object().unwrap() {
            b[k] = v.clone();
        }
        b.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        let a = api.enroll(&key, &gid, &b).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(
            a.fields(),
            vec![case[1].as_str().unwrap()],
            "{b} -> {}",
            a.body
        );
        if let Some(m) = case[2].as_str() {
            assert_eq!(a.body["details"][0]["message"], m, "{b}");
        }
    }
    let form = TestRequest::post().uri(&enrollments(&gid));
    let form = authed(form.set_payload("quote_id=x"), &key);
    assert_error(&send(&svc, form).await, 400, "invalid_request");
    api.unchanged(&key, &gid).await;
    assert!(api.events(&p, Mode::Test, CREATED).await.is_empty());
    Want::hosted(&gid, &qid).check(&api.enroll(&key, &gid, &body(&qid)).await);
}

crate::http_on_both!(unknown_foreign_or_other_mode_resources_are_not_found);
async fn unknown_foreign_or_other_mode_resources_are_not_found(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let owner = app.partner("Owner", PartnerKind::Broker, true).await;
    let key = app.key(&owner, Mode::Test).await;
    let live = app.key(&owner, Mode::Live).await;
    let (_, other) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let (b, g) = (body(&qid), gid.as_str());
    let groups = [
        ("grp_000000000000", &key),
        ("grp_XYZ", &key),
        (g, &other),
        (g, &live),
    ];
    for (g, k) in groups {
        let a = api.enroll(k, g, &b).await;
        refused(&a, 404, "not_found", "no such group in this mode");
        assert_error(&api.get(&enrollments(g), k).await, 404, "not_found");
    }
    api.unchanged(&key, &gid).await;
    let id = Want::hosted(&gid, &qid).check(&api.enroll(&key, &gid, &b).await);
    let unknown = api.get("/v1/enrollments/enr_000000000000", &key).await;
    refused(
        &unknown,
        404,
        "not_found",
        "no such enrollment in this mode",
    );
    let path = enrollment(&id);
    let (grp, longer) = (path.replace("enr_", "grp_"), format!("{path}0"));
    let paths = [
        (&path, &other),
        (&path, &live),
        (&grp, &key),
        (&longer, &key),
    ];
    for (path, k) in paths {
        let r = api.get(path, k).await;
        assert_error(&r, 404, "not_found");
        assert_eq!(r.body, unknown.body, "{path}");
    }
}

crate::http_on_both!(a_second_enrollment_of_the_group_is_a_conflict);
async fn a_second_enrollment_of_the_group_is_a_conflict(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let first = api.enroll(&key, &gid, &body(&qid)).await;
    Want::hosted(&gid, &qid).check(&first);
    let newer = api.quote(&key, &gid).await;
    let mut embedded = body(newer["id"].as_str().unwrap());
    embedded["onboarding_mode"] = json!("embedded");
    for b in [body(&qid), embedded] {
        let a = api.enroll(&key, &gid, &b).await;
        refused(&a, 409, "conflict", "the group already has an enrollment");
    }
    assert_eq!(api.list(&key, &gid).await, one(&first.body));
    assert_eq!(api.events(&p, Mode::Test, CREATED).await.len(), 1);
}

crate::http_on_both!(an_in_review_quote_is_a_conflict_until_finalized);
async fn an_in_review_quote_is_a_conflict_until_finalized(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, q) = api.setup(&key, "acme-mfg.com", &big_census(201)).await;
    assert_eq!(
        (&q["status"], &q["census"]["employees"]),
        (&json!("in_review"), &json!(201))
    );
    let qid = q["id"].as_str().unwrap();
    let a = api.enroll(&key, &gid, &body(qid)).await;
    let message = "the quote is in review; it must be finalized first";
    refused(&a, 409, "conflict", message);
    api.unchanged(&key, &gid).await;
    let finalize = format!("/v1/test_helpers/quotes/{qid}/finalize");
    let f = api.post(&finalize, &key, &json!({})).await;
    assert_eq!(f.body["status"], "ready", "{}", f.body);
    Want::hosted(&gid, qid).check(&api.enroll(&key, &gid, &body(qid)).await);
}

crate::http_on_both!(an_enrolled_domain_blocks_other_groups_of_the_mode);
async fn an_enrolled_domain_blocks_other_groups_of_the_mode(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (rival_p, rival) = app.hr_platform().await;
    // All three exist before any enrolls; then only the first may enroll.
    let (own_g, own_q) = api.quoted(&key, "shared.com").await;
    let (same_g, same_q) = api.quoted(&key, "shared.com").await;
    let (rival_g, rival_q) = api.quoted(&rival, "shared.com").await;
    let a = api.enroll(&key, &own_g, &body(&own_q)).await;
    Want::hosted(&own_g, &own_q).domain("shared.com").check(&a);
    let message = "an enrolled group already exists for this domain";
    for (g, q, k) in [(&same_g, &same_q, &key), (&rival_g, &rival_q, &rival)] {
        refused(&api.enroll(k, g, &body(q)).await, 409, "conflict", message);
        api.unchanged(k, g).await;
    }
    // Still held once the first group is live.
    assert_eq!(api.go_live(&key, &own_g).await.status, 200);
    let r = api.enroll(&rival, &rival_g, &body(&rival_q)).await;
    refused(&r, 409, "conflict", message);
    api.unchanged(&rival, &rival_g).await;
    assert!(api.events(&rival_p, Mode::Test, CREATED).await.is_empty());
}

crate::http_on_both!(an_expired_quote_is_gone_and_a_new_quote_enrolls);
async fn an_expired_quote_is_gone_and_a_new_quote_enrolls(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (early_g, early_q) = api.quoted(&key, "early.com").await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    // One second before `expires_at` (2026-12-21T13:14:00Z) a quote still holds.
    app.clock.advance(30 * 86400 - 1);
    let a = api.enroll(&key, &early_g, &body(&early_q)).await;
    let want = Want::hosted(&early_g, &early_q).domain("early.com");
    want.check(&a);
    assert_eq!(a.body["created_at"], "2026-12-21T13:13:59Z");
    app.clock.advance(1);
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    let message = "the quote has expired; create a new quote and retry";
    refused(&a, 410, "quote_expired", message);
    api.unchanged(&key, &gid).await;
    let q = api.quote(&key, &gid).await;
    assert_eq!(q["plan_year_start_date"], "2027-01-01");
    let new_q = q["id"].as_str().unwrap();
    let a = api.enroll(&key, &gid, &body(new_q)).await;
    Want::hosted(&gid, new_q).start("2027-01-01").check(&a);
}

crate::http_on_both!(the_list_checks_its_page_parameters);
async fn the_list_checks_its_page_parameters(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, _) = api.quoted(&key, "acme-mfg.com").await;
    let list = enrollments(&gid);
    for query in ["limit=0", "limit=201", "limit=x", "cursor=!"] {
        let a = api.get(&format!("{list}?{query}"), &key).await;
        assert_error(&a, 400, "invalid_request");
        let field = query.split('=').next().unwrap();
        assert_eq!(a.fields(), vec![field], "{query}");
    }
    let a = api.get(&format!("{list}?limit=200"), &key).await;
    assert_eq!(a.body, empty());
}

crate::http_on_both!(every_bad_field_is_named_at_once_and_a_start_is_not_past);
async fn every_bad_field_is_named_at_once_and_a_start_is_not_past(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let bad = json!({"signatory": {"name": " ", "email": "dana"}, "start_date": "x"});
    let a = api.enroll(&key, &gid, &bad).await;
    assert_error(&a, 400, "invalid_request");
    let mut fields: Vec<&str> = a.body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "quote_id",
            "signatory.email",
            "signatory.name",
            "start_date"
        ]
    );
    let mut past = body(&qid);
    past["start_date"] = json!("2026-11-20");
    let a = api.enroll(&key, &gid, &past).await;
    refused(
        &a,
        400,
        "invalid_request",
        "start_date: must not be in the past",
    );
    api.unchanged(&key, &gid).await;
}
