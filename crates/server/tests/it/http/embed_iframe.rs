//! The offer iframe's own endpoints over HTTP (onboarding §5): an address
//! outside the group's domain refused with `email_not_allowed`, a wrong
//! code with `verification_failed` and `attemptsRemaining`, the test-mode
//! code, the plan documents, the acceptance recorded on the quote with
//! `quote.accepted`; the code-send limit, `session_expired`, the framing
//! rule from the partner's embed origins, and no CORS.

use actix_web::test::TestRequest;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::{Value, json};
use testkit::db::TestDb;

use super::enrollments::Api;
use crate::http::{TestApp, assert_error, get, send};

/// An iframe call (no key, camelCase body).
fn call(path: &str, body: &Value) -> TestRequest {
    TestRequest::post()
        .uri(path)
        .insert_header(("content-type", "application/json"))
        .set_payload(body.to_string())
}

/// The path of the session's `url`.
fn path_of(url: &str) -> String {
    url[url.find("/embed/").unwrap()..].to_owned()
}

crate::http_on_both!(an_employer_verifies_an_address_reads_the_documents_and_accepts);
async fn an_employer_verifies_an_address_reads_the_documents_and_accepts(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let api = Api(&app, &svc);
    let (_, key) = app.hr_platform().await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let s = api
        .post(
            &format!("/v1/groups/{gid}/embed-sessions"),
            &key,
            &json!({}),
        )
        .await;
    assert_eq!(s.status, 201, "{}", s.body);
    let page = path_of(s.body["url"].as_str().unwrap());

    // Another domain; a malformed address.
    let a = send(
        &svc,
        call(
            &format!("{page}/email"),
            &json!({"email": "dana@gmail.com"}),
        ),
    )
    .await;
    assert_error(&a, 422, "email_not_allowed");
    let a = send(
        &svc,
        call(&format!("{page}/email"), &json!({"email": "dana"})),
    )
    .await;
    assert_error(&a, 400, "invalid_request");
    // Nothing to verify yet.
    let a = send(
        &svc,
        call(&format!("{page}/verify"), &json!({"code": "424242"})),
    )
    .await;
    assert_error(&a, 422, "verification_failed");
    assert_eq!(a.body["details"][0]["attemptsRemaining"], 0, "{}", a.body);

    let a = send(
        &svc,
        call(
            &format!("{page}/email"),
            &json!({"email": "Dana@HR.acme-mfg.com"}),
        ),
    )
    .await;
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(
        a.body,
        json!({"codeSentTo": "d\u{2022}\u{2022}\u{2022}@hr.acme-mfg.com"})
    );
    assert!(app.mail.sent().is_empty(), "test mode sends no email");

    let a = send(
        &svc,
        call(&format!("{page}/verify"), &json!({"code": "123456"})),
    )
    .await;
    assert_error(&a, 422, "verification_failed");
    assert_eq!(
        a.body["details"],
        json!([{"field": "code", "message": "the code is not correct", "attemptsRemaining": 4}])
    );
    let a = send(&svc, get(&format!("{page}/documents"), "")).await;
    assert_error(&a, 409, "conflict");
    let a = send(
        &svc,
        call(&format!("{page}/accept"), &json!({"name": "Dana Lee"})),
    )
    .await;
    assert_error(&a, 409, "conflict");

    let a = send(
        &svc,
        call(&format!("{page}/verify"), &json!({"code": "424242"})),
    )
    .await;
    assert_eq!(
        (a.status.as_u16(), &a.body),
        (200, &json!({"verified": true}))
    );
    let docs = send(&svc, get(&format!("{page}/documents"), "")).await;
    assert_eq!(docs.status, 200, "{}", docs.body);
    let list = docs.body["documents"].as_array().unwrap();
    let names: Vec<&str> = list.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["plan_summary", "service_agreement", "privacy_notice"]
    );
    let one = send(&svc, get(list[0]["url"].as_str().unwrap(), "")).await;
    assert_eq!(one.status, 200);
    assert!(
        one.header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    assert!(
        one.header("content-disposition")
            .unwrap()
            .starts_with("attachment")
    );
    assert!(!one.raw.is_empty());

    let a = send(
        &svc,
        call(&format!("{page}/accept"), &json!({"name": "Dana Lee"})),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (&a.body["name"], &a.body["email"]),
        (&json!("Dana Lee"), &json!("dana@hr.acme-mfg.com"))
    );
    let accepted_at = a.body["acceptedAt"].clone();
    // On the quote, and as quote.accepted (camelCase for an HR platform).
    let q = api.get(&format!("/v1/quotes/{qid}"), &key).await;
    assert_eq!(
        q.body["acceptance"],
        json!({"name": "Dana Lee", "email": "dana@hr.acme-mfg.com", "acceptedAt": accepted_at})
    );
    let events = api.get("/v1/events?type=quote.accepted", &key).await;
    let found: Vec<&Value> = events.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "quote.accepted")
        .collect();
    assert_eq!(found.len(), 1, "{}", events.body);
    assert_eq!(
        found[0]["data"],
        json!({"quoteId": qid, "groupId": gid, "name": "Dana Lee",
               "email": "dana@hr.acme-mfg.com", "acceptedAt": accepted_at})
    );

    // A second session cannot accept the same quote again.
    let s2 = api
        .post(
            &format!("/v1/groups/{gid}/embed-sessions"),
            &key,
            &json!({}),
        )
        .await;
    let page2 = path_of(s2.body["url"].as_str().unwrap());
    send(
        &svc,
        call(
            &format!("{page2}/email"),
            &json!({"email": "ben@acme-mfg.com"}),
        ),
    )
    .await;
    send(
        &svc,
        call(&format!("{page2}/verify"), &json!({"code": "424242"})),
    )
    .await;
    let a = send(
        &svc,
        call(&format!("{page2}/accept"), &json!({"name": "Ben Okafor"})),
    )
    .await;
    assert_error(&a, 409, "conflict");
    assert_eq!(a.body["message"], "this offer was already accepted");
}

crate::http_on_both!(codes_are_limited_sessions_expire_and_framing_follows_the_partner);
async fn codes_are_limited_sessions_expire_and_framing_follows_the_partner(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let api = Api(&app, &svc);
    let (partner, key) = app.broker().await;
    let (gid, _) = api.quoted(&key, "acme-mfg.com").await;
    let s = api
        .post(
            &format!("/v1/groups/{gid}/embed-sessions"),
            &key,
            &json!({}),
        )
        .await;
    let page = path_of(s.body["url"].as_str().unwrap());

    // Test mode, no origins: any page may frame it; no cookie, no CORS.
    let p = send(
        &svc,
        TestRequest::get()
            .uri(&page)
            .insert_header(("origin", "https://evil.example")),
    )
    .await;
    assert_eq!(p.status, 200);
    let csp = p.header("content-security-policy").unwrap().to_owned();
    assert!(csp.ends_with("frame-ancestors *"), "{csp}");
    assert!(p.header("set-cookie").is_none());
    assert!(
        csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"),
        "{csp}"
    );
    let html = String::from_utf8(p.raw.clone()).unwrap();
    for part in [
        "Get started",
        "Preliminary pricing.",
        "final pricing is confirmed in underwriting",
        "compared with your current coverage",
        "<script src=\"/embed/assets/offer.js\" defer></script>",
    ] {
        assert!(html.contains(part), "{part} not in {html}");
    }
    let js = send(&svc, TestRequest::get().uri("/embed/assets/offer.js")).await;
    assert_eq!(js.status, 200);
    assert!(
        js.header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(String::from_utf8(js.raw).unwrap().contains("/verify"));
    // Styles come from this origin's stylesheet only: no inline style.
    assert!(
        csp.contains("style-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert!(html.contains("<link rel=\"stylesheet\" href=\"/embed/assets/offer.css\">"));
    let css = send(&svc, TestRequest::get().uri("/embed/assets/offer.css")).await;
    assert_eq!(css.status, 200);
    assert!(css.header("content-type").unwrap().starts_with("text/css"));
    assert!(String::from_utf8(css.raw).unwrap().contains("[hidden]"));
    let email = json!({"email": "ana@acme-mfg.com"});
    for _ in 0..5 {
        let a = send(
            &svc,
            call(&format!("{page}/email"), &email)
                .insert_header(("origin", "https://evil.example")),
        )
        .await;
        assert_eq!(a.status, 202, "{}", a.body);
        assert!(a.header("access-control-allow-origin").is_none());
    }
    let a = send(&svc, call(&format!("{page}/email"), &email)).await;
    assert_error(&a, 429, "rate_limited");
    assert!(a.header("retry-after").is_some());
    let pre = TestRequest::default()
        .method(actix_web::http::Method::OPTIONS)
        .uri(&format!("{page}/email"))
        .insert_header(("origin", "https://evil.example"))
        .insert_header(("access-control-request-method", "POST"));
    let a = send(&svc, pre).await;
    assert!(
        a.header("access-control-allow-origin").is_none(),
        "{:?}",
        a.headers
    );

    // The partner's origins replace the wildcard.
    let partners = app.services().partners();
    let origins = vec![
        "https://App.Example.com/".to_owned(),
        "http://127.0.0.1:9000".to_owned(),
    ];
    partners
        .set_embed_origins(&partner.id, &origins)
        .await
        .unwrap();
    let p = send(&svc, TestRequest::get().uri(&page)).await;
    let csp = p.header("content-security-policy").unwrap();
    assert!(
        csp.ends_with("frame-ancestors https://app.example.com http://127.0.0.1:9000"),
        "{csp}"
    );
    assert!(
        partners
            .set_embed_origins(&partner.id, &["app.example.com".into()])
            .await
            .is_err()
    );

    // Expired: the page is 410 and every endpoint session_expired.
    app.clock.advance(30 * 60);
    assert_eq!(send(&svc, TestRequest::get().uri(&page)).await.status, 410);
    let a = send(
        &svc,
        call(&format!("{page}/verify"), &json!({"code": "424242"})),
    )
    .await;
    assert_error(&a, 410, "session_expired");
    let a = send(
        &svc,
        call("/embed/unknown-token/verify", &json!({"code": "424242"})),
    )
    .await;
    assert_error(&a, 404, "not_found");

    // A day after expiry the purge deletes the session: the link is gone.
    let stores = &app.db.stores;
    let housekeeping = domain::services::housekeeping::Housekeeping::new(
        std::sync::Arc::clone(&stores.idempotency),
        std::sync::Arc::clone(&app.ports.clock),
    )
    .with_embeds(std::sync::Arc::clone(&stores.embed));
    assert_eq!(housekeeping.purge_embeds().await.unwrap(), 0);
    app.clock.advance(86_400 + 1);
    assert_eq!(housekeeping.purge_embeds().await.unwrap(), 1);
    assert_eq!(send(&svc, TestRequest::get().uri(&page)).await.status, 404);

    // Live mode with no origins: no page may frame it.
    let live = app.partner("Live HR", PartnerKind::HrPlatform, true).await;
    let live_key = app.key(&live, Mode::Live).await;
    let (gid, _) = api.quoted(&live_key, "live-co.com").await;
    let s = api
        .post(
            &format!("/v1/groups/{gid}/embed-sessions"),
            &live_key,
            &json!({}),
        )
        .await;
    let p = send(
        &svc,
        TestRequest::get().uri(&path_of(s.body["url"].as_str().unwrap())),
    )
    .await;
    assert!(
        p.header("content-security-policy")
            .unwrap()
            .ends_with("frame-ancestors 'none'")
    );
}
