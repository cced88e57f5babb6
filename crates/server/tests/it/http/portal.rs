//! The employer portal over HTTP through the whole application (API and
//! portal): its security headers, CSRF, sign-in with the account lockout
//! and the per-address failed-auth limit, session clocks, sign-out and a
//! password change revoking sessions, and the company a session sees.

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::{self, TestRequest};
use domain::partner::PartnerKind;
use http_api::Limits;
use serde_json::json;
use testkit::db::TestDb;

use super::enrollments::{Api, body};
use crate::http::TestApp;

const PASSWORD: &str = "a long enough passphrase";

mod forms;

/// One portal answer: status, headers we check, the session cookie it
/// set, and the page.
struct Page {
    status: u16,
    location: Option<String>,
    cookie: Option<String>,
    headers: actix_web::http::header::HeaderMap,
    text: String,
}

impl Page {
    /// The CSRF token of the page's forms.
    fn csrf(&self) -> String {
        let at = self
            .text
            .find("name=\"csrf\" value=\"")
            .unwrap_or_else(|| panic!("no form on {}", self.text));
        let rest = &self.text[at + 19..];
        rest[..rest.find('"').unwrap()].to_owned()
    }
}

async fn call<S, B>(svc: &S, req: TestRequest) -> Page
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let res = test::call_service(
        svc,
        req.peer_addr("10.0.0.9:4000".parse().unwrap()).to_request(),
    )
    .await;
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let location = headers
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned());
    let cookie = res
        .response()
        .cookies()
        .find(|c| c.name() == "portal_session")
        .map(|c| c.value().to_owned());
    let bytes = test::read_body(res).await;
    Page {
        status,
        location,
        cookie,
        headers,
        text: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

fn with_cookie(req: TestRequest, cookie: &str) -> TestRequest {
    req.cookie(actix_web::cookie::Cookie::new(
        "portal_session",
        cookie.to_owned(),
    ))
}

/// A browser: its session cookie, kept across answers.
struct Browser<'a, S> {
    svc: &'a S,
    cookie: Option<String>,
}

impl<S, B> Browser<'_, S>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    async fn send(&mut self, req: TestRequest) -> Page {
        let req = match &self.cookie {
            Some(c) => with_cookie(req, c),
            None => req,
        };
        let page = call(self.svc, req).await;
        if let Some(c) = &page.cookie {
            self.cookie = Some(c.clone()).filter(|c| !c.is_empty());
        }
        page
    }

    async fn get(&mut self, path: &str) -> Page {
        self.send(TestRequest::get().uri(path)).await
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        self.send(TestRequest::post().uri(path).set_form(form))
            .await
    }

    /// Signs in through the form.
    async fn sign_in(&mut self, email: &str, password: &str) -> Page {
        let csrf = self.get("/portal/sign-in").await.csrf();
        self.post(
            "/portal/sign-in",
            &[("csrf", &csrf), ("email", email), ("password", password)],
        )
        .await
    }
}

/// A hosted test-mode enrollment of a new broker: its id, its
/// set-password token and its scope.
async fn enrolled<S, B>(
    app: &TestApp,
    svc: &S,
    domain: &str,
) -> (String, String, domain::scope::Scope)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let api = Api(app, svc);
    let (partner, key) = app.broker().await;
    let (gid, qid) = api.quoted(&key, domain).await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(e.status, 201, "{}", e.body);
    let url = e.body["employer_portal"]["set_password_url"]
        .as_str()
        .unwrap();
    let token = url.rsplit("token=").next().unwrap().to_owned();
    (
        e.body["id"].as_str().unwrap().to_owned(),
        token,
        crate::http::scope(&partner, domain::mode::Mode::Test),
    )
}

/// Sets the password from the link's page.
async fn set_password<S, B>(b: &mut Browser<'_, S>, token: &str) -> Page
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let page = b.get(&format!("/portal/set-password?token={token}")).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let csrf = page.csrf();
    b.post(
        "/portal/set-password",
        &[
            ("csrf", &csrf),
            ("token", token),
            ("password", PASSWORD),
            ("password_confirmation", PASSWORD),
        ],
    )
    .await
}

crate::http_on_both!(portal_pages_carry_the_security_headers_and_check_csrf);
async fn portal_pages_carry_the_security_headers_and_check_csrf(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let mut b = Browser {
        svc: &svc,
        cookie: None,
    };
    let page = b.get("/portal/sign-in").await;
    assert_eq!(page.status, 200);
    let h = |name: &str| page.headers.get(name).unwrap().to_str().unwrap().to_owned();
    assert_eq!(
        h("content-security-policy"),
        "default-src 'self'; frame-ancestors 'none'"
    );
    assert_eq!(h("cache-control"), "no-store");
    assert!(h("content-type").starts_with("text/html"));
    let set = page.headers.get("set-cookie").unwrap().to_str().unwrap();
    for part in ["HttpOnly", "SameSite=Lax", "Path=/portal"] {
        assert!(set.contains(part), "{set}");
    }
    assert!(!set.contains("Secure"), "http public_base_url: {set}");
    assert_eq!(b.cookie.as_deref().map(str::len), Some(64));
    // A form without the session's token does nothing.
    let forged = b
        .post(
            "/portal/sign-in",
            &[
                ("csrf", "forged"),
                ("email", "x@y.co"),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(forged.status, 400);
    assert!(
        forged.text.contains("Your session expired"),
        "{}",
        forged.text
    );
    // Signed-in pages send a visitor to sign-in; unknown pages are HTML.
    let dash = b.get("/portal/dashboard").await;
    assert_eq!(
        (dash.status, dash.location.as_deref()),
        (303, Some("/portal/sign-in"))
    );
    let missing = b.get("/portal/nothing-here").await;
    assert_eq!(missing.status, 404);
    assert!(missing.text.contains("Page not found"));
    assert!(missing.headers.get("content-security-policy").is_some());
}

crate::http_on_both!(a_link_signs_in_once_and_the_session_sees_only_its_company);
async fn a_link_signs_in_once_and_the_session_sees_only_its_company(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let (_, token, _) = enrolled(&app, &svc, "acme-mfg.com").await;
    let mut b = Browser {
        svc: &svc,
        cookie: None,
    };
    // A weak password is refused with the API's message.
    let page = b.get(&format!("/portal/set-password?token={token}")).await;
    let csrf = page.csrf();
    let weak = b
        .post(
            "/portal/set-password",
            &[
                ("csrf", &csrf),
                ("token", &token),
                ("password", "short"),
                ("password_confirmation", "short"),
            ],
        )
        .await;
    assert_eq!(weak.status, 400);
    assert!(
        weak.text.contains("Password must be 12 to 128 characters"),
        "{}",
        weak.text
    );
    let visitor = b.cookie.clone().unwrap();
    let done = set_password(&mut b, &token).await;
    assert_eq!(done.status, 303, "{}", done.text);
    assert_eq!(
        done.location.as_deref(),
        Some("/portal/dashboard?welcome=1")
    );
    assert_ne!(
        b.cookie.as_deref(),
        Some(visitor.as_str()),
        "a new id at sign-in"
    );
    let dash = b.get("/portal/dashboard?welcome=1").await;
    assert_eq!(dash.status, 200);
    assert!(dash.text.contains("Acme"), "{}", dash.text);
    assert!(dash.text.contains("0% complete"));
    assert!(dash.text.contains("sandbox"));
    // The link works once.
    let again = b.get(&format!("/portal/set-password?token={token}")).await;
    assert_eq!(again.status, 410);
    assert!(again.text.contains("already used"));
    let unknown = b.get("/portal/set-password?token=abc").await;
    assert_eq!(unknown.status, 404);
    // The visitor's old session id signs nobody in.
    let mut old = Browser {
        svc: &svc,
        cookie: Some(visitor),
    };
    assert_eq!(old.get("/portal/dashboard").await.status, 303);
}

crate::http_on_both!(five_failures_lock_the_account_and_the_address_limit_answers_429);
async fn five_failures_lock_the_account_and_the_address_limit_answers_429(db: TestDb) {
    let app = TestApp::with_limits(
        db,
        Limits {
            failed_auth_per_minute: 7,
            ..Limits::default()
        },
    );
    let svc = app.full_service().await;
    let (_, token, _) = enrolled(&app, &svc, "acme-mfg.com").await;
    let mut b = Browser {
        svc: &svc,
        cookie: None,
    };
    set_password(&mut b, &token).await;
    let mut other = Browser {
        svc: &svc,
        cookie: None,
    };
    for _ in 0..5 {
        let p = other
            .sign_in("dana@acme-mfg.com", "not the password!")
            .await;
        assert_eq!(p.status, 401);
        assert!(
            p.text
                .contains("The email address or password is not correct.")
        );
    }
    // Locked: the right password answers exactly as a wrong one.
    let locked = other.sign_in("dana@acme-mfg.com", PASSWORD).await;
    assert_eq!(locked.status, 401, "{}", locked.text);
    let unknown = other.sign_in("nobody@acme-mfg.com", PASSWORD).await;
    assert_eq!(unknown.status, 401);
    // The address's failed-auth limit (7 a minute) is now spent.
    let limited = other.sign_in("nobody@acme-mfg.com", PASSWORD).await;
    assert_eq!(limited.status, 429, "{}", limited.text);
    assert!(limited.headers.get("retry-after").is_some());
    // 15 minutes later the lock and the window are over.
    app.clock.advance(15 * 60);
    let ok = other.sign_in(" Dana@Acme-Mfg.com ", PASSWORD).await;
    assert_eq!(
        (ok.status, ok.location.as_deref()),
        (303, Some("/portal/dashboard"))
    );
}

crate::http_on_both!(sessions_end_idle_at_sign_out_and_at_a_password_change);
async fn sessions_end_idle_at_sign_out_and_at_a_password_change(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let (eid, token, scope) = enrolled(&app, &svc, "acme-mfg.com").await;
    let mut first = Browser {
        svc: &svc,
        cookie: None,
    };
    set_password(&mut first, &token).await;
    // 29 minutes idle is fine; 30 more is not.
    app.clock.advance(29 * 60);
    assert_eq!(first.get("/portal/dashboard").await.status, 200);
    app.clock.advance(30 * 60);
    assert_eq!(first.get("/portal/dashboard").await.status, 303);
    // Sign-out ends the session on the server, not only in the browser.
    let mut second = Browser {
        svc: &svc,
        cookie: None,
    };
    second.sign_in("dana@acme-mfg.com", PASSWORD).await;
    let kept = second.cookie.clone().unwrap();
    let csrf = second.get("/portal/dashboard").await.csrf();
    let out = second.post("/portal/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!(
        out.location.as_deref(),
        Some("/portal/sign-in?signed_out=1")
    );
    let mut replay = Browser {
        svc: &svc,
        cookie: Some(kept),
    };
    assert_eq!(replay.get("/portal/dashboard").await.status, 303);
    // A new password (from a new link) ends every other session.
    let mut third = Browser {
        svc: &svc,
        cookie: None,
    };
    third.sign_in("dana@acme-mfg.com", PASSWORD).await;
    assert_eq!(third.get("/portal/dashboard").await.status, 200);
    let api = Api(&app, &svc);
    let key = app
        .key(
            &app.partner("Other", PartnerKind::Broker, false).await,
            domain::mode::Mode::Test,
        )
        .await;
    assert_eq!(
        api.post(
            &format!("/v1/enrollments/{eid}/portal_links"),
            &key,
            &json!({})
        )
        .await
        .status,
        404,
        "another partner's enrollment"
    );
    let fresh = app
        .services()
        .portal(domain::rate_limit::Policy::failed_auth(30));
    let link = fresh
        .new_link(&scope, &domain::ids::EnrollmentId::parse(&eid).unwrap())
        .await
        .unwrap();
    let token = link
        .set_password_url
        .rsplit("token=")
        .next()
        .unwrap()
        .to_owned();
    let mut fourth = Browser {
        svc: &svc,
        cookie: None,
    };
    set_password(&mut fourth, &token).await;
    assert_eq!(third.get("/portal/dashboard").await.status, 303);
    assert_eq!(fourth.get("/portal/dashboard").await.status, 200);
}

crate::http_on_both!(a_live_company_invites_its_employees_by_email_once_the_plan_is_signed);
async fn a_live_company_invites_its_employees_by_email_once_the_plan_is_signed(db: TestDb) {
    use domain::ids::{EnrollmentId, GroupId};
    use domain::onboarding::StepStatus;
    use domain::onboarding::fields::AddressInput;
    use domain::services::onboarding::{BankInput, PlanInput, ProfileInput, Review, SignInput};

    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let api = Api(&app, &svc);
    let live = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let key = app.key(&live, domain::mode::Mode::Live).await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    let id = EnrollmentId::parse(e.body["id"].as_str().unwrap()).unwrap();
    let group = GroupId::parse(&gid).unwrap();
    let scope = crate::http::scope(&live, domain::mode::Mode::Live);
    let onboarding = app.services().onboarding();
    onboarding
        .save_profile(
            &scope,
            &id,
            ProfileInput {
                legal_name: Some("Acme Manufacturing LLC".into()),
                ein: Some("12-3456789".into()),
                entity_type: Some("llc".into()),
                address: Some(AddressInput {
                    line1: Some("1 Main St".into()),
                    line2: None,
                    city: Some("Chicago".into()),
                    state: Some("IL".into()),
                    zip: Some("60601".into()),
                }),
                phone: Some("(312) 555-0100".into()),
                signatory_title: Some("CFO".into()),
            },
        )
        .await
        .unwrap();
    let step = onboarding.request_verification(&scope, &id).await.unwrap();
    assert_eq!(
        step.status,
        StepStatus::Pending,
        "live mode waits for a review"
    );
    onboarding.review(&group, Review::Verify).await.unwrap();
    onboarding
        .save_bank(
            &scope,
            &id,
            BankInput {
                routing_number: Some("011000015".into()),
                account_number: Some("000123456789".into()),
                account_type: Some("checking".into()),
                holder_name: Some("Acme Manufacturing LLC".into()),
            },
        )
        .await
        .unwrap();
    let [a, b] = onboarding.deposits(&group).await.unwrap();
    onboarding
        .confirm_deposits(&scope, &id, &[i64::from(a), i64::from(b)])
        .await
        .unwrap();
    onboarding
        .save_plan(&scope, &id, PlanInput::default())
        .await
        .unwrap();
    onboarding
        .sign_plan(
            &scope,
            &id,
            SignInput {
                signer_name: Some("dana  LEE".into()),
                accepted: Some(true),
                ip: Some("10.0.0.9".into()),
                user_agent: Some("test".into()),
            },
        )
        .await
        .unwrap();
    let read = api
        .get(&format!("/v1/enrollments/{}", id.as_str()), &key)
        .await;
    assert_eq!(read.body["status"], "in_review", "{}", read.body);
    app.run_jobs().await;
    let before = app.mail.sent().len();
    let step = onboarding.send_invitations(&scope, &id).await.unwrap();
    assert_eq!(step.status, StepStatus::Completed);
    app.run_jobs().await;
    let sent = app.mail.sent();
    let invites: Vec<_> = sent[before..]
        .iter()
        .filter(|m| m.kind == domain::email::EmailKind::EmployeeInvite)
        .collect();
    // One employee of the census has an address.
    assert_eq!(invites.len(), 1, "{sent:?}");
    assert_eq!(invites[0].to, "ana@acme-mfg.com");
    assert!(
        invites[0].text.contains("Acme Manufacturing"),
        "{}",
        invites[0].text
    );
    assert!(invites[0].html.contains("Coverage starts on 2026-12-01"));
}

crate::http_on_both!(ein_22_2222222_completes_later_by_the_scaled_job);
async fn ein_22_2222222_completes_later_by_the_scaled_job(db: TestDb) {
    use domain::ids::EnrollmentId;
    use domain::onboarding::StepStatus;
    use domain::onboarding::fields::AddressInput;
    use domain::services::onboarding::ProfileInput;

    // 60 s × 0.01: the sandbox's answer is due 0.6 s later.
    let app = TestApp::with_parts(db, http_api::HttpConfig::default(), |parts| {
        parts.verification_time_scale = 0.01;
    });
    let svc = app.full_service().await;
    let (eid, _, scope) = enrolled(&app, &svc, "acme-mfg.com").await;
    let id = EnrollmentId::parse(&eid).unwrap();
    let onboarding = app.services().onboarding();
    let profile = ProfileInput {
        legal_name: Some("Acme Manufacturing LLC".into()),
        ein: Some("22-2222222".into()),
        entity_type: Some("llc".into()),
        address: Some(AddressInput {
            line1: Some("1 Main St".into()),
            line2: None,
            city: Some("Chicago".into()),
            state: Some("IL".into()),
            zip: Some("60601".into()),
        }),
        phone: Some("312 555 0100".into()),
        signatory_title: Some("CFO".into()),
    };
    onboarding.save_profile(&scope, &id, profile).await.unwrap();
    let step = onboarding.request_verification(&scope, &id).await.unwrap();
    assert_eq!(step.status, StepStatus::Pending);
    // Not due yet: the job waits.
    app.run_jobs().await;
    let view = onboarding.view(&scope, &id).await.unwrap();
    assert_eq!(view.steps[1].status, StepStatus::Pending);
    app.clock.advance(1);
    app.run_jobs().await;
    let view = onboarding.view(&scope, &id).await.unwrap();
    assert_eq!(view.steps[1].status, StepStatus::Completed);
    assert_eq!(view.progress.percent_complete, 50);
}
