//! The employer portal links of a hosted enrollment: emailed when live, replaced, used once.

use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::enrollments::{Api, body};
use crate::http::{TestApp, assert_error};

crate::http_on_both!(a_live_hosted_enrollment_emails_the_portal_invitation);
async fn a_live_hosted_enrollment_emails_the_portal_invitation(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    // Test mode: provisioned, nothing sent.
    let (_, test_key) = app.broker().await;
    let (gid, qid) = api.quoted(&test_key, "test-mode.com").await;
    assert_eq!(api.enroll(&test_key, &gid, &body(&qid)).await.status, 201);
    assert!(app.mail.sent().is_empty());
    // Live mode: the signatory gets the set-password link.
    let live = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let key = app.key(&live, Mode::Live).await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let a = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(a.status, 201, "{}", a.body);
    // The invitation waits in the job queue: the request never waits on
    // the mail server.
    assert!(app.mail.sent().is_empty());
    app.run_jobs().await;
    let sent = app.mail.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].to, "dana@acme-mfg.com");
    let link = a.body["employer_portal"]["set_password_url"]
        .as_str()
        .unwrap();
    assert!(sent[0].text.contains(link), "{}", sent[0].text);
    assert!(sent[0].html.contains(link), "{}", sent[0].html);
    // Embedded mode provisions no portal admin and sends nothing.
    let (gid, qid) = api.quoted(&key, "embedded.com").await;
    let mut embedded = body(&qid);
    embedded["onboarding_mode"] = json!("embedded");
    assert_eq!(api.enroll(&key, &gid, &embedded).await.status, 201);
    app.run_jobs().await;
    assert_eq!(app.mail.sent().len(), 1);
}

/// The token of a set-password URL under the default `public_base_url`.
fn token_of(url: &str) -> String {
    let token = url
        .strip_prefix("http://127.0.0.1:8080/portal/set-password?token=")
        .unwrap_or_else(|| panic!("not a set-password URL: {url}"));
    assert_eq!(token.len(), 64, "{url}");
    token.to_owned()
}

crate::http_on_both!(portal_links_replace_the_link_and_a_used_link_is_never_shown);
async fn portal_links_replace_the_link_and_a_used_link_is_never_shown(db: TestDb) {
    use domain::portal::LinkState;
    use domain::services::portal::NewPassword;

    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(e.status, 201, "{}", e.body);
    let eid = e.body["id"].as_str().unwrap().to_owned();
    let portal = &e.body["employer_portal"];
    assert_eq!(portal["signin_url"], "http://127.0.0.1:8080/portal/sign-in");
    let first = token_of(portal["set_password_url"].as_str().unwrap());
    // The enrollment shows the same link when read again.
    let read = api.get(&format!("/v1/enrollments/{eid}"), &key).await;
    assert_eq!(read.body["employer_portal"], e.body["employer_portal"]);

    let issued = api
        .post(
            &format!("/v1/enrollments/{eid}/portal_links"),
            &key,
            &json!({}),
        )
        .await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let fields: Vec<_> = issued.body.as_object().unwrap().keys().cloned().collect();
    assert_eq!(fields, ["expires_at", "set_password_url", "signin_url"]);
    let second = token_of(issued.body["set_password_url"].as_str().unwrap());
    assert_ne!(first, second);
    let created = time::OffsetDateTime::from_unix_timestamp(app.clock.secs()).unwrap();
    let expires = time::OffsetDateTime::parse(
        issued.body["expires_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert_eq!(expires - created, time::Duration::days(7));
    let read = api.get(&format!("/v1/enrollments/{eid}"), &key).await;
    assert_eq!(
        read.body["employer_portal"]["set_password_url"],
        issued.body["set_password_url"]
    );
    // The older link stopped working; test mode emailed nothing.
    let portal_svc = app
        .services()
        .portal(domain::rate_limit::Policy::failed_auth(30));
    assert_eq!(portal_svc.link(&first).await.unwrap().0, LinkState::Used);
    assert_eq!(portal_svc.link(&second).await.unwrap().0, LinkState::Usable);
    app.run_jobs().await;
    assert!(app.mail.sent().is_empty());

    // Once used, the enrollment shows no link at all.
    let password = "a long enough passphrase";
    portal_svc
        .set_password(
            None,
            NewPassword {
                token: &second,
                password,
                confirmation: password,
            },
        )
        .await
        .unwrap();
    let read = api.get(&format!("/v1/enrollments/{eid}"), &key).await;
    assert_eq!(
        read.body["employer_portal"]["set_password_url"],
        Value::Null
    );
    assert_eq!(portal_svc.link(&second).await.unwrap().0, LinkState::Used);

    // An embedded enrollment has no portal; another partner's is not found.
    let (gid, qid) = api.quoted(&key, "embedded.com").await;
    let mut embedded = body(&qid);
    embedded["onboarding_mode"] = json!("embedded");
    let emb = api.enroll(&key, &gid, &embedded).await;
    let emb_id = emb.body["id"].as_str().unwrap();
    let refused = api
        .post(
            &format!("/v1/enrollments/{emb_id}/portal_links"),
            &key,
            &json!({}),
        )
        .await;
    assert_error(&refused, 409, "conflict");
    let (_, other) = app.hr_platform().await;
    let hidden = api
        .post(
            &format!("/v1/enrollments/{eid}/portal_links"),
            &other,
            &json!({}),
        )
        .await;
    assert_error(&hidden, 404, "not_found");
}

crate::http_on_both!(a_live_portal_link_is_emailed_to_the_signatory);
async fn a_live_portal_link_is_emailed_to_the_signatory(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.service().await;
    let api = Api(&app, &svc);
    let live = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let key = app.key(&live, Mode::Live).await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    let eid = e.body["id"].as_str().unwrap();
    let issued = api
        .post(
            &format!("/v1/enrollments/{eid}/portal_links"),
            &key,
            &json!({}),
        )
        .await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    app.run_jobs().await;
    let sent = app.mail.sent();
    assert_eq!(sent.len(), 2, "the invitation, then the new link");
    assert_eq!(sent[1].kind, domain::email::EmailKind::PortalLink);
    assert_eq!(sent[1].to, "dana@acme-mfg.com");
    let url = issued.body["set_password_url"].as_str().unwrap();
    assert!(sent[1].text.contains(url), "{}", sent[1].text);
    assert!(
        !sent[0].text.contains(url),
        "the invitation's link is another"
    );
}
