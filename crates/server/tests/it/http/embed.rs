//! Embed sessions: `POST /v1/groups/{groupId}/embed-sessions` and the
//! offer page `GET /embed/{token}` (contract section 3, Embed sessions).

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use serde_json::{Value, json};
use testkit::db::TestDb;

use crate::http::{Answer, TestApp, assert_error, create_group, group_body, post, put, send};

/// The service of a [`TestApp`].
trait Svc<B>:
    Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}
impl<T, B> Svc<B> for T where
    T: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>
{
}

fn census() -> Value {
    json!({"members": [
        {"external_id": "E1", "first_name": "Ana", "last_name": "Diaz", "dob": "1988-04-12",
         "zip": "60601", "dependents": [{"relationship": "child", "name": "Leo", "dob": "2016-09-30"}]},
        {"external_id": "E2", "first_name": "Ben", "last_name": "Okafor", "dob": "1979-11-02", "zip": "60614"},
    ]})
}

/// A group with a processed census (no quote yet); its id.
async fn group<B: MessageBody>(
    app: &TestApp,
    svc: &impl Svc<B>,
    key: &str,
    domain: &str,
) -> String {
    let gid = create_group(svc, key, &group_body(domain)).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let a = send(
        svc,
        put(&format!("/v1/groups/{gid}/census"), key, &census()),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.run_jobs().await;
    gid
}

/// A new quote of `gid` on `plan` (asserting 201).
async fn quote<B: MessageBody>(svc: &impl Svc<B>, key: &str, gid: &str, plan: &str) -> Value {
    let path = format!("/v1/groups/{gid}/quotes");
    let a = send(svc, post(&path, key, &json!({"plan_id": plan}))).await;
    assert_eq!(a.status, 201, "{}", a.body);
    a.body
}

/// `POST /v1/groups/{gid}/embed-sessions` with `body`, to host `host`.
async fn create<B: MessageBody>(svc: &impl Svc<B>, key: &str, gid: &str, body: &Value) -> Answer {
    let path = format!("/v1/groups/{gid}/embed-sessions");
    send(
        svc,
        post(&path, key, body).insert_header(("host", "partner-api.example.test")),
    )
    .await
}

/// `GET` of the path of an embed `url`.
async fn open<B: MessageBody>(svc: &impl Svc<B>, url: &str) -> Answer {
    let path = &url[url.find("/embed/").unwrap()..];
    send(svc, TestRequest::get().uri(path)).await
}

fn text(a: &Answer) -> String {
    String::from_utf8(a.raw.clone()).unwrap()
}

/// `$1,234.56` from cents.
fn dollars(cents: i64) -> String {
    let whole = (cents / 100).to_string();
    let mut out = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("${out}.{:02}", cents % 100)
}

crate::http_on_both!(a_session_shows_the_newest_ready_quote);
async fn a_session_shows_the_newest_ready_quote(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let (_, key) = app.broker().await;
    let gid = group(&app, &svc, &key, "acme-mfg.com").await;
    quote(&svc, &key, &gid, "diamond").await;
    app.clock.advance(5);
    let newest = quote(&svc, &key, &gid, "value").await;

    for body in [json!({}), json!({"quote_id": newest["id"]})] {
        let a = create(&svc, &key, &gid, &body).await;
        assert_eq!(a.status, 201, "{}", a.body);
        let obj = a.body.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["expires_at", "id", "url"]);
        let id = a.body["id"].as_str().unwrap();
        assert!(id.starts_with("emb_") && id.len() == 16, "{id}");
        let url = a.body["url"].as_str().unwrap();
        // public_base_url, then an opaque token that names no id.
        let token = url
            .strip_prefix("http://127.0.0.1:8080/embed/")
            .unwrap_or_else(|| panic!("{url}"));
        assert_eq!(token.len(), 43, "{token}");
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        for id in [&gid, id, newest["id"].as_str().unwrap()] {
            assert!(!token.contains(&id[4..]), "{token} names {id}");
        }
        assert_eq!(a.header("location"), Some(url));
        // T0 + 5 s + 30 minutes.
        assert_eq!(a.body["expires_at"], "2026-11-21T13:44:05Z");

        let page = open(&svc, url).await;
        assert_eq!(page.status, 200);
        assert!(
            page.header("content-type")
                .unwrap()
                .starts_with("text/html"),
        );
        assert_eq!(page.header("cache-control"), Some("no-store"));
        assert!(
            page.header("content-security-policy")
                .unwrap()
                .contains("frame-ancestors *")
        );
        assert_eq!(page.header("x-frame-options"), None);
        let html = text(&page);
        let plan = newest["plan"]["name"].as_str().unwrap();
        assert!(html.contains(plan), "{html}");
        let total = newest["monthly"]["total_cents"].as_i64().unwrap();
        assert!(total > 100_000, "{total}");
        assert!(
            html.contains(&dollars(total)),
            "{} in {html}",
            dollars(total)
        );
        assert!(html.contains(&dollars(newest["monthly"]["pepm_cents"].as_i64().unwrap())));
        assert!(html.contains("<svg"), "{html}");
    }
}

crate::http_on_both!(hr_platforms_get_camel_case);
async fn hr_platforms_get_camel_case(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let (_, key) = app.hr_platform().await;
    let gid = group(&app, &svc, &key, "acme-mfg.com").await;
    quote(&svc, &key, &gid, "diamond").await;
    let a = create(&svc, &key, &gid, &json!({"quoteId": null})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["expiresAt"], "2026-11-21T13:44:00Z");
    assert_eq!(
        open(&svc, a.body["url"].as_str().unwrap()).await.status,
        200
    );
}

crate::http_on_both!(without_a_ready_quote_it_is_409);
async fn without_a_ready_quote_it_is_409(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let (_, key) = app.broker().await;
    let gid = group(&app, &svc, &key, "acme-mfg.com").await;
    assert_error(&create(&svc, &key, &gid, &json!({})).await, 409, "conflict");
    // An expired quote is not a default either.
    quote(&svc, &key, &gid, "diamond").await;
    assert_eq!(create(&svc, &key, &gid, &json!({})).await.status, 201);
    app.clock.advance(31 * 24 * 3600);
    assert_error(&create(&svc, &key, &gid, &json!({})).await, 409, "conflict");
}

crate::http_on_both!(a_quote_of_another_group_is_400);
async fn a_quote_of_another_group_is_400(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let (_, key) = app.broker().await;
    let (_, other_key) = app.broker().await;
    let gid = group(&app, &svc, &key, "acme-mfg.com").await;
    let other = group(&app, &svc, &key, "beta.com").await;
    let foreign = quote(&svc, &key, &other, "diamond").await;
    let theirs_group = group(&app, &svc, &other_key, "gamma.com").await;
    let theirs = quote(&svc, &other_key, &theirs_group, "diamond").await;
    for qid in [
        foreign["id"].clone(),
        theirs["id"].clone(),
        json!("qt_000000000000"),
        json!("nope"),
    ] {
        let a = create(&svc, &key, &gid, &json!({"quote_id": qid})).await;
        assert_error(&a, 400, "invalid_request");
        assert_eq!(a.fields(), ["quote_id"], "{}", a.body);
    }
    let a = create(&svc, &key, &gid, &json!({"quote_id": 7, "extra": 1})).await;
    assert_error(&a, 400, "invalid_request");
}

crate::http_on_both!(groups_of_another_partner_or_mode_are_404);
async fn groups_of_another_partner_or_mode_are_404(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let p = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let (test, live) = (app.key(&p, Mode::Test).await, app.key(&p, Mode::Live).await);
    let (_, other) = app.broker().await;
    let gid = group(&app, &svc, &test, "acme-mfg.com").await;
    let q = quote(&svc, &test, &gid, "diamond").await;
    for (key, g) in [
        (&live, gid.as_str()),
        (&other, gid.as_str()),
        (&test, "grp_000000000000"),
        (&test, "nope"),
    ] {
        for body in [json!({}), json!({"quote_id": q["id"]})] {
            assert_error(&create(&svc, key, g, &body).await, 404, "not_found");
        }
    }
}

crate::http_on_both!(a_tampered_token_is_404_and_an_old_one_410);
async fn a_tampered_token_is_404_and_an_old_one_410(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let (_, key) = app.broker().await;
    let gid = group(&app, &svc, &key, "acme-mfg.com").await;
    quote(&svc, &key, &gid, "diamond").await;
    let a = create(&svc, &key, &gid, &json!({})).await;
    let url = a.body["url"].as_str().unwrap().to_owned();

    // Flip one character of the token, at its start and at its end.
    for at in [url.find("/embed/").unwrap() + 7, url.len() - 1] {
        let mut bytes = url.clone().into_bytes();
        bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
        let bad = String::from_utf8(bytes).unwrap();
        let page = open(&svc, &bad).await;
        assert_eq!(page.status, 404, "{bad}");
        assert!(
            page.header("content-type")
                .unwrap()
                .starts_with("text/html")
        );
        assert!(text(&page).contains("not valid"));
    }
    for bad in ["/embed/x", "/embed/x.y", "/embed/..."] {
        assert_eq!(open(&svc, bad).await.status, 404, "{bad}");
    }

    app.clock.advance(30 * 60 - 1);
    assert_eq!(open(&svc, &url).await.status, 200);
    app.clock.advance(2);
    let page = open(&svc, &url).await;
    assert_eq!(page.status, 410);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert!(
        text(&page).contains("offer link expired"),
        "{}",
        text(&page)
    );
}

crate::http_on_both!(a_stale_quote_gets_no_session_and_its_open_page_says_so);
async fn a_stale_quote_gets_no_session_and_its_open_page_says_so(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let (_, key) = app.broker().await;
    let gid = group(&app, &svc, &key, "acme-mfg.com").await;
    let q = quote(&svc, &key, &gid, "diamond").await;
    let qid = q["id"].as_str().unwrap().to_owned();
    let a = create(&svc, &key, &gid, &json!({})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let url = a.body["url"].as_str().unwrap().to_owned();
    assert_eq!(open(&svc, &url).await.status, 200);

    // A material census change: a new employee with other rating inputs.
    let mut changed = census();
    changed["members"].as_array_mut().unwrap().push(json!({
        "external_id": "E3", "first_name": "Cy", "last_name": "Park",
        "dob": "1960-02-03", "zip": "60601"
    }));
    let a = send(
        &svc,
        put(&format!("/v1/groups/{gid}/census"), &key, &changed),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    app.run_jobs().await;

    // The page that was open now shows no price.
    let page = open(&svc, &url).await;
    assert_eq!(page.status, 410);
    let html = text(&page);
    assert!(html.contains("out of date"), "{html}");
    assert!(html.contains("census changed"), "{html}");
    assert!(!html.contains('$'), "{html}");

    // No new session on the stale quote, named or by default.
    for body in [json!({"quote_id": qid}), json!({})] {
        let a = create(&svc, &key, &gid, &body).await;
        assert_error(&a, 410, "quote_expired");
        assert!(
            a.body["message"]
                .as_str()
                .unwrap()
                .contains("census changed"),
            "{}",
            a.body
        );
    }

    // A fresh quote is current again.
    quote(&svc, &key, &gid, "diamond").await;
    let a = create(&svc, &key, &gid, &json!({})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(
        open(&svc, a.body["url"].as_str().unwrap()).await.status,
        200
    );
}
