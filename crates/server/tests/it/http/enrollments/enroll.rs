//! Enrolling a group: hosted and embedded, test and live mode, camel case, replays.

use domain::event::EventType;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::json;
use testkit::db::TestDb;

use crate::http::enrollments::{
    Api, CREATED, Want, body, census, empty, enrollment, enrollments, has, one, refused,
};
use crate::http::{TestApp, assert_error, group_body, post, send};

crate::http_on_both!(a_hosted_enrollment_enrolls_the_group);
async fn a_hosted_enrollment_enrolls_the_group(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    assert_eq!(api.list(&key, &gid).await, empty());

    let a = api.enroll(&key, &gid, &body(&qid)).await;
    let id = Want::hosted(&gid, &qid).check(&a);
    assert_eq!(a.body["created_at"], "2026-11-21T13:14:00Z");
    api.state(&key, &gid, "enrolled", json!("sandbox")).await;
    let read = api.get(&enrollment(&id), &key).await;
    assert_eq!((read.status.as_u16(), &read.body), (200, &a.body));
    assert_eq!(api.list(&key, &gid).await, one(&a.body));
    let limited = api
        .get(&format!("{}?limit=1", enrollments(&gid)), &key)
        .await;
    assert_eq!(limited.body, one(&a.body));

    let created = api.events(&p, Mode::Test, CREATED).await;
    let data = json!({"enrollmentId": id, "groupId": gid, "quoteId": qid, "startDate": "2026-12-01",
                      "companyDomain": "acme-mfg.com", "onboardingMode": "hosted"});
    assert_eq!(created, vec![data]);
}

crate::http_on_both!(an_embedded_enrollment_has_no_portal_and_takes_the_sent_start);
async fn an_embedded_enrollment_has_no_portal_and_takes_the_sent_start(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    // A broker may send camelCase too.
    let b = json!({"quoteId": qid, "signatory": {"name": "Dana Lee", "email": "dana@acme-mfg.com"},
                   "onboardingMode": "embedded", "startDate": "2027-01-01"});
    let a = api.enroll(&key, &gid, &b).await;
    let hosted = Want::hosted(&gid, &qid).start("2027-01-01");
    let id = Want {
        onboarding: "embedded",
        ..hosted
    }
    .check(&a);
    assert!(a.body.get("employer_portal").is_none(), "{}", a.body);
    assert_eq!(api.get(&enrollment(&id), &key).await.body, a.body);
    let data = api.events(&p, Mode::Test, CREATED).await;
    assert_eq!(data.len(), 1);
    has!(data[0], {"startDate": "2027-01-01", "onboardingMode": "embedded"});
}

crate::http_on_both!(live_mode_enrolls_without_suppressing_the_invitation_and_is_isolated);
async fn live_mode_enrolls_without_suppressing_the_invitation_and_is_isolated(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let p = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let test = app.key(&p, Mode::Test).await;
    let live = app.key(&p, Mode::Live).await;
    // The same domain enrolled in both modes: the modes do not share domains.
    let (tg, tq) = api.quoted(&test, "acme-mfg.com").await;
    let (lg, lq) = api.quoted(&live, "acme-mfg.com").await;
    let t = api.enroll(&test, &tg, &body(&tq)).await;
    let tid = Want::hosted(&tg, &tq).check(&t);
    let l = api.enroll(&live, &lg, &body(&lq)).await;
    let lid = Want {
        mode: "live",
        ..Want::hosted(&lg, &lq)
    }
    .check(&l);
    let (tp, lp) = (&t.body["employer_portal"], &l.body["employer_portal"]);
    assert_eq!(lp["invite_suppressed"], false);
    assert_ne!(lp["set_password_url"], tp["set_password_url"]);

    for (id, gid, owner, other) in [(&lid, &lg, &live, &test), (&tid, &tg, &test, &live)] {
        assert_eq!(api.get(&enrollment(id), owner).await.status, 200);
        assert_error(&api.get(&enrollment(id), other).await, 404, "not_found");
        assert_error(&api.get(&enrollments(gid), other).await, 404, "not_found");
        assert_error(&api.enroll(other, gid, &body(&tq)).await, 404, "not_found");
    }
    // The test helper does not exist for a live key, even for its own group.
    assert_error(&api.go_live(&live, &lg).await, 404, "not_found");
    api.state(&live, &lg, "enrolled", json!("sandbox")).await;
    assert_eq!(api.events(&p, Mode::Test, CREATED).await.len(), 1);
    assert_eq!(api.events(&p, Mode::Live, CREATED).await.len(), 1);
}

crate::http_on_both!(going_live_makes_the_group_active_in_prod);
async fn going_live_makes_the_group_active_in_prod(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let fresh = api.post("/v1/groups", &key, &group_body("fresh.com")).await;
    let fresh = fresh.body["id"].as_str().unwrap();
    let early = "the group has no provisioned company yet; create its enrollment first";
    refused(&api.go_live(&key, fresh).await, 409, "conflict", early);
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    refused(&api.go_live(&key, &gid).await, 409, "conflict", early);
    api.unchanged(&key, &gid).await;

    let created = api.enroll(&key, &gid, &body(&qid)).await;
    let id = Want::hosted(&gid, &qid).check(&created);
    app.clock.advance(60);
    let live = api.go_live(&key, &gid).await;
    assert_eq!(live.status, 200, "{}", live.body);
    has!(live.body, {"id": gid, "status": "active", "company_state": "prod",
                     "updated_at": "2026-11-21T13:15:00Z"});
    let read = api.state(&key, &gid, "active", json!("prod")).await;
    assert_eq!(read, live.body);

    // A forced go-live: the company is prod and the enrollment active, no
    // step completed.
    let mut want = created.body.clone();
    want["company_state"] = json!("prod");
    want["status"] = json!("active");
    assert_eq!(api.get(&enrollment(&id), &key).await.body, want);
    assert_eq!(api.list(&key, &gid).await, one(&want));

    let again = api.go_live(&key, &gid).await;
    refused(&again, 409, "conflict", "the group is already live");
    let (_, other) = app.hr_platform().await;
    let g = gid.as_str();
    for (g, k) in [("grp_000000000000", &key), ("grp_x", &key), (g, &other)] {
        assert_error(&api.go_live(k, g).await, 404, "not_found");
    }
    let changed = api
        .events(&p, Mode::Test, EventType::GroupStateChanged)
        .await;
    // No step was completed: the go-live was forced.
    let data = json!({"groupId": gid, "companyDomain": "acme-mfg.com",
                      "previousState": "sandbox", "state": "prod", "forced": true});
    assert_eq!(changed, vec![data]);
}

crate::http_on_both!(an_hr_platform_speaks_camel_case);
async fn an_hr_platform_speaks_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.hr_platform().await;
    let (gid, q) = api.setup(&key, "payroll-client.com", &census()).await;
    has!(q, {"status": "ready", "planYearStartDate": "2026-12-01"});
    let qid = q["id"].as_str().unwrap();
    let sig = json!({"name": "Dana Lee", "email": "dana@payroll-client.com"});
    let a = api.enroll(&key, &gid, &json!({"signatory": sig})).await;
    assert_error(&a, 400, "invalid_request");
    assert_eq!(a.fields(), vec!["quoteId"]);

    let b = json!({"quoteId": qid, "signatory": sig, "onboardingMode": "hosted"});
    let a = api.enroll(&key, &gid, &b).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let e = &a.body;
    has!(e, {"groupId": gid, "quoteId": qid, "mode": "test", "status": "onboarding",
             "startDate": "2026-12-01", "companyDomain": "payroll-client.com",
             "companyState": "sandbox", "onboardingMode": "hosted"});
    has!(e["onboarding"], {"percentComplete": 0, "blockingRemaining": 4});
    assert_eq!(
        e["onboarding"]["steps"][0]["requirements"],
        json!([
            "legalName",
            "ein",
            "entityType",
            "address",
            "phone",
            "signatoryTitle"
        ]),
        "requirements are field names in the key's field style"
    );
    let named = [
        "id",
        "nextSteps",
        "createdAt",
        "employerPortal",
        "onboarding",
    ];
    assert!(named.iter().all(|k| e.get(k).is_some()), "{e}");
    assert_eq!(e.as_object().unwrap().len(), 13, "{e}");
    let portal = &e["employerPortal"];
    has!(portal, {"provisioned": true, "inviteSuppressed": true});
    let named = ["signinUrl", "setPasswordUrl"];
    assert!(named.iter().all(|k| portal[k].is_string()), "{portal}");
    let listed = json!({"enrollments": [e], "count": 1, "nextCursor": null});
    assert_eq!(api.get(&enrollments(&gid), &key).await.body, listed);
    let live = api.go_live(&key, &gid).await;
    has!(live.body, {"status": "active", "companyState": "prod"});
    let read = api.get(&enrollment(e["id"].as_str().unwrap()), &key).await;
    assert_eq!(read.body["companyState"], "prod");
}

crate::http_on_both!(an_idempotent_retry_replays_the_enrollment);
async fn an_idempotent_retry_replays_the_enrollment(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (p, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let keyed = |k: &str| {
        let req = post(&enrollments(&gid), &key, &body(&qid));
        req.insert_header(("idempotency-key", k.to_owned()))
    };
    let first = send(&svc, keyed("enroll-1")).await;
    Want::hosted(&gid, &qid).check(&first);
    assert_eq!(first.header("idempotent-replay"), None);
    app.clock.advance(3600);
    let second = send(&svc, keyed("enroll-1")).await;
    assert_eq!((second.status.as_u16(), &second.raw), (201, &first.raw));
    assert_eq!(second.header("idempotent-replay"), Some("true"));
    assert_eq!(second.header("location"), first.header("location"));
    assert_eq!(api.events(&p, Mode::Test, CREATED).await.len(), 1);
    // Another key executes again, and the group already has its enrollment.
    assert_error(&send(&svc, keyed("enroll-2")).await, 409, "conflict");
}
