//! A live employer's portal forms over HTTP: each refused form names its
//! field and saves nothing, the operator's review and the micro-deposits
//! take the company through, and a forgotten password is emailed as a new
//! link (through the job queue) that replaces the old one.

use domain::email::EmailKind;
use domain::ids::GroupId;
use domain::mode::Mode;
use domain::partner::PartnerKind;
use domain::services::onboarding::Review;
use serde_json::Value;
use testkit::db::TestDb;

use super::{Browser, Page, set_password};
use crate::http::TestApp;
use crate::http::enrollments::{Api, body};

/// The set-password token in an email's text.
fn token_in(text: &str) -> String {
    let at = text
        .find("token=")
        .unwrap_or_else(|| panic!("no link in {text}"));
    text[at + 6..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect()
}

/// Asserts a refused form: 400, the field's message beside the field, and
/// what was typed kept.
fn refused(page: &Page, field: &str, message: &str, kept: &str) {
    assert_eq!(page.status, 400, "{}", page.text);
    let error = format!("id=\"{field}-error\"");
    assert!(page.text.contains(&error), "no {error}: {}", page.text);
    assert!(page.text.contains(message), "{message:?}: {}", page.text);
    assert!(page.text.contains(kept), "{kept:?} not kept: {}", page.text);
}

crate::http_on_both!(live_forms_name_their_field_and_a_forgotten_password_is_emailed);
async fn live_forms_name_their_field_and_a_forgotten_password_is_emailed(db: TestDb) {
    let app = TestApp::new(db);
    let svc = app.full_service().await;
    let api = Api(&app, &svc);
    let live = app.partner("Live Brokers", PartnerKind::Broker, true).await;
    let key = app.key(&live, Mode::Live).await;
    let (gid, qid) = api.quoted(&key, "acme-mfg.com").await;
    let e = api.enroll(&key, &gid, &body(&qid)).await;
    assert_eq!(e.status, 201, "{}", e.body);
    let enrollment = format!("/v1/enrollments/{}", e.body["id"].as_str().unwrap());
    let group = GroupId::parse(&gid).unwrap();
    let onboarding = || async {
        let read = api.get(&enrollment, &key).await;
        assert_eq!(read.status, 200, "{}", read.body);
        read.body["onboarding"].clone()
    };

    // Live mode emails the invitation, through the job queue.
    app.run_jobs().await;
    let invite = app
        .mail
        .sent()
        .into_iter()
        .find(|m| m.kind == EmailKind::PortalInvite && m.to == "dana@acme-mfg.com")
        .unwrap_or_else(|| panic!("the portal invitation is not emailed"));
    let mut b = Browser {
        svc: &svc,
        cookie: None,
    };
    let page = set_password(&mut b, &token_in(&invite.text)).await;
    assert_eq!(page.status, 303, "{}", page.text);

    // Company profile: an EIN with an unassigned prefix.
    let before = onboarding().await;
    let csrf = b.get("/portal/steps/company-profile").await.csrf();
    let mut profile = vec![
        ("csrf", csrf.as_str()),
        ("legal_name", "Acme Manufacturing LLC"),
        ("ein", "00-1234567"),
        ("entity_type", "llc"),
        ("line1", "200 W Adams St"),
        ("city", "Chicago"),
        ("state", "IL"),
        ("zip", "60601"),
        ("phone", "(312) 555-0100"),
        ("signatory_title", "CFO"),
    ];
    let page = b.post("/portal/steps/company-profile", &profile).await;
    refused(&page, "ein", "EIN", "Acme Manufacturing LLC");
    assert_eq!(
        onboarding().await,
        before,
        "a refused profile saved nothing"
    );
    profile[2] = ("ein", "12-3456789");
    let page = b.post("/portal/steps/company-profile", &profile).await;
    assert_eq!(page.status, 303, "{}", page.text);

    // Business verification waits for the operator in live mode.
    let page = b
        .post("/portal/steps/business-verification", &[("csrf", &csrf)])
        .await;
    assert_eq!(page.status, 303, "{}", page.text);
    let steps = onboarding().await;
    assert_eq!(step_status(&steps, "business_verification"), "pending");
    app.services()
        .onboarding()
        .review(&group, Review::Verify)
        .await
        .unwrap();

    // Banking: a routing number that fails its checksum, then a good one;
    // deposits that are not numbers, then the right ones.
    let before = onboarding().await;
    let mut bank = vec![
        ("csrf", csrf.as_str()),
        ("routing_number", "011000016"),
        ("account_number", "000123456789"),
        ("account_type", "checking"),
        ("holder_name", "Acme Manufacturing LLC"),
    ];
    let page = b.post("/portal/steps/banking/account", &bank).await;
    refused(&page, "routing_number", "routing number", "011000016");
    assert!(
        !page.text.contains("000123456789"),
        "the account number shown"
    );
    assert_eq!(
        onboarding().await,
        before,
        "a refused account saved nothing"
    );
    bank[1] = ("routing_number", "011000015");
    let page = b.post("/portal/steps/banking/account", &bank).await;
    assert_eq!(page.status, 303, "{}", page.text);
    let before = onboarding().await;
    let page = b
        .post(
            "/portal/steps/banking/deposits",
            &[
                ("csrf", &csrf),
                ("first_amount", "ten"),
                ("second_amount", ""),
            ],
        )
        .await;
    assert_eq!(page.status, 400, "{}", page.text);
    assert_eq!(
        onboarding().await,
        before,
        "refused deposits counted nothing"
    );
    let [first, second] = app.services().onboarding().deposits(&group).await.unwrap();
    let (first, second) = (first.to_string(), second.to_string());
    let page = b
        .post(
            "/portal/steps/banking/deposits",
            &[
                ("csrf", &csrf),
                ("first_amount", &first),
                ("second_amount", &second),
            ],
        )
        .await;
    assert_eq!(page.status, 303, "{}", page.text);
    assert_eq!(step_status(&onboarding().await, "banking"), "completed");

    // Plan setup: the default choices, then a signature by another name.
    let page = b
        .post("/portal/steps/plan-setup/choices", &[("csrf", &csrf)])
        .await;
    assert!(page.status == 303 || page.status == 200, "{}", page.text);
    let before = onboarding().await;
    let page = b
        .post(
            "/portal/steps/plan-setup/sign",
            &[
                ("csrf", &csrf),
                ("signer_name", "Pat Someone"),
                ("accepted", "true"),
            ],
        )
        .await;
    refused(&page, "signer_name", "signatory", "Pat Someone");
    assert_eq!(
        onboarding().await,
        before,
        "a refused signature saved nothing"
    );
    let page = b
        .post(
            "/portal/steps/plan-setup/sign",
            &[
                ("csrf", &csrf),
                ("signer_name", "Dana Lee"),
                ("accepted", "true"),
            ],
        )
        .await;
    assert_eq!(page.status, 303, "{}", page.text);
    let read = api.get(&enrollment, &key).await;
    assert_eq!(read.body["status"], "in_review", "{}", read.body);
    assert_eq!(
        read.body["onboarding"]["blocking_remaining"], 0,
        "{}",
        read.body
    );

    // The operator's go-live (what `partner-api group go-live` calls; the
    // CLI itself is tested in it/cli.rs) takes the company to prod.
    app.services()
        .enrollments()
        .go_live_any(&group)
        .await
        .unwrap();
    let read = api.get(&enrollment, &key).await;
    assert_eq!(read.body["status"], "active", "{}", read.body);
    assert_eq!(read.body["company_state"], "prod", "{}", read.body);
    let read = api.get(&format!("/v1/groups/{gid}"), &key).await;
    assert_eq!(read.body["status"], "active", "{}", read.body);

    // A forgotten password: signed out, the reset link is emailed; it
    // opens the set-password page, and the invitation's link no longer does.
    let page = b.post("/portal/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!(page.status, 303, "{}", page.text);
    let csrf = b.get("/portal/forgot-password").await.csrf();
    let page = b
        .post(
            "/portal/forgot-password",
            &[("csrf", &csrf), ("email", "DANA@acme-mfg.com")],
        )
        .await;
    assert_eq!(page.status, 303, "{}", page.text);
    let page = b.get(page.location.as_deref().unwrap()).await;
    assert!(
        page.text.contains("If an employer portal account exists"),
        "{}",
        page.text
    );
    app.run_jobs().await;
    let reset = app
        .mail
        .sent()
        .into_iter()
        .find(|m| m.kind == EmailKind::PasswordReset)
        .unwrap_or_else(|| panic!("the reset link is not emailed"));
    assert_eq!(reset.to, "dana@acme-mfg.com");
    let link = b
        .get(&format!(
            "/portal/set-password?token={}",
            token_in(&reset.text)
        ))
        .await;
    assert_eq!(link.status, 200, "{}", link.text);
    assert!(link.text.contains("dana@acme-mfg.com"), "{}", link.text);
    let old = b
        .get(&format!(
            "/portal/set-password?token={}",
            token_in(&invite.text)
        ))
        .await;
    assert_ne!(old.status, 200, "{}", old.text);
}

/// The status of step `name` in an enrollment's `onboarding`.
fn step_status(onboarding: &Value, name: &str) -> String {
    let steps = onboarding["steps"].as_array().unwrap();
    steps
        .iter()
        .find(|s| s["step"] == name || s["id"] == name || s["name"] == name)
        .and_then(|s| s["status"].as_str())
        .unwrap_or_else(|| panic!("no step {name} in {onboarding}"))
        .to_owned()
}
