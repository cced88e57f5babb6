//! The employer's whole walk through the portal, step by step, on one database.

use std::path::Path;
use std::time::{Duration, Instant};

use domain::text::dollars as money;
use serde_json::{Value, json};

use crate::common::api::call;
use crate::common::webdriver::Browser;
use crate::common::webhook_receiver::{Receiver, Verifier};
use crate::portal_browser::{
    ACCOUNT_NUMBER, EMPLOYEES, PASSWORD, ROUTING_NUMBER, assert_not_stored, enroll, enroll_company,
    follow, look_at, page_says, post_form, start, value_of,
};

/// The whole journey over the database at `url` (`db` names it in
/// screenshots and messages).
pub(super) async fn journey(browser: &Browser, url: &str, db: &str, dir: &Path) {
    let server = start(dir, url);
    let key = server.demo_key();
    // The partner's webhook endpoint: a real receiver on this machine.
    let receiver = Receiver::start(&[], 200);
    let (status, endpoint) = call(
        &server,
        &key,
        "PUT",
        "/v1/webhook",
        Some(&json!({"url": receiver.url()})),
    );
    assert_eq!(status, 200, "{endpoint}");
    let secret = endpoint["secret"].as_str().unwrap().to_owned();

    // 1. The partner enrolls the group; the employer gets a link.
    let enrolled = enroll(&server, &key);

    // 2. Set the password: too short first, then a good one.
    browser.open(&enrolled.set_password_url).await;
    assert_eq!(browser.heading().await, "Set your password");
    page_says(browser, &["dana@acme-mfg.com"]).await;
    browser.fill("Password", "short").await;
    browser.fill("Password again", "short").await;
    follow(browser, "Set password and sign in").await;
    assert_eq!(browser.heading().await, "Set your password");
    let error = browser
        .one("the password's message", "//p[@id = 'password-error']")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(error, "Password must be 12 to 128 characters");
    look_at(browser, "set-password", db).await;
    browser.fill("Password", PASSWORD).await;
    browser.fill("Password again", PASSWORD).await;
    follow(browser, "Set password and sign in").await;
    assert_eq!(browser.heading().await, "Acme Manufacturing");
    page_says(
        browser,
        &[
            "Your password is set. Welcome to the employer portal.",
            "0% complete",
            "4 required steps remain.",
        ],
    )
    .await;
    assert_eq!(browser.definition("Company state").await, "sandbox");
    assert_eq!(browser.definition("Enrollment status").await, "onboarding");
    let quote = &enrolled.quote;
    assert_eq!(
        browser.definition("Plan").await,
        quote["plan"]["name"].as_str().unwrap()
    );
    assert_eq!(
        browser.definition("Monthly total").await,
        money(quote["monthly"]["total_cents"].as_i64().unwrap())
    );
    assert_eq!(browser.definition("Employees").await, "3");
    look_at(browser, "dashboard", db).await;

    // 3. The company profile: a refused EIN keeps what was typed.
    follow(browser, "Company profile").await;
    assert_eq!(browser.heading().await, "Company profile");
    let typed = [
        ("Legal name", "Acme Manufacturing LLC"),
        ("Street address", "200 W Adams St"),
        ("City", "Chicago"),
        ("State", "IL"),
        ("ZIP code", "60601"),
        ("Phone", "(312) 555-0100"),
        ("Your title", "CFO"),
    ];
    for (label, value) in typed {
        browser.fill(label, value).await;
    }
    browser.select("Entity type", "LLC").await;
    browser.fill("EIN", "00-1234567").await;
    follow(browser, "Save company profile").await;
    assert_eq!(browser.heading().await, "Company profile");
    let api = domain::onboarding::fields::ein("ein", "00-1234567").unwrap_err();
    let error = browser
        .one("the EIN's message", "//p[@id = 'ein-error']")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(error, format!("EIN {}", api.message));
    assert_eq!(
        browser
            .field("EIN")
            .await
            .attr("aria-invalid")
            .await
            .unwrap()
            .as_deref(),
        Some("true")
    );
    for (label, value) in typed {
        assert_eq!(value_of(browser, label).await, value, "{label} kept");
    }
    assert_eq!(value_of(browser, "EIN").await, "00-1234567");
    assert_eq!(value_of(browser, "Entity type").await, "llc");
    look_at(browser, "company-profile-error", db).await;
    // A valid EIN the sandbox verifier refuses (11-1111111).
    browser.fill("EIN", "11-1111111").await;
    follow(browser, "Save company profile").await;
    assert_eq!(browser.heading().await, "Acme Manufacturing LLC");
    page_says(browser, &["Company profile saved.", "25% complete"]).await;

    // 4. Business verification: refused, then the profile corrected and
    // verified (test mode verifies any other valid EIN at once).
    follow(browser, "Business verification").await;
    assert_eq!(browser.heading().await, "Business verification");
    look_at(browser, "business-verification", db).await;
    follow(browser, "Verify my business").await;
    page_says(
        browser,
        &[
            "Status: Action required",
            "The EIN does not match the legal name",
        ],
    )
    .await;
    follow(browser, "← Dashboard").await;
    follow(browser, "Company profile").await;
    assert_eq!(value_of(browser, "EIN").await, "11-1111111");
    browser.fill("EIN", "12-3456789").await;
    follow(browser, "Save company profile").await;
    page_says(browser, &["Company profile saved.", "25% complete"]).await;
    follow(browser, "Business verification").await;
    follow(browser, "Verify my business").await;
    page_says(
        browser,
        &["Status: Completed", "Your business is verified."],
    )
    .await;
    assert_eq!(browser.definition("EIN").await, "12-3456789");

    // 5. Banking: an account, then its two micro-deposits.
    follow(browser, "← Dashboard").await;
    follow(browser, "Banking").await;
    assert_eq!(browser.heading().await, "Banking");
    look_at(browser, "banking", db).await;
    browser.fill("Routing number", ROUTING_NUMBER).await;
    browser.fill("Account number", ACCOUNT_NUMBER).await;
    browser.select("Account type", "Checking").await;
    browser
        .fill("Account holder", "Acme Manufacturing LLC")
        .await;
    follow(browser, "Save bank account").await;
    let text = page_says(browser, &["Status: Pending", "Checking ending in 6789"]).await;
    assert!(!text.contains(ACCOUNT_NUMBER), "{text}");
    // Wrong amounts first: the step says so and how many tries are left.
    browser.fill("First deposit, in cents", "10").await;
    browser.fill("Second deposit, in cents", "20").await;
    follow(browser, "Confirm deposits").await;
    page_says(
        browser,
        &[
            "Status: Pending",
            "The amounts do not match the micro-deposits; 2 attempts remaining",
        ],
    )
    .await;
    browser.fill("First deposit, in cents", "32").await;
    browser.fill("Second deposit, in cents", "45").await;
    follow(browser, "Confirm deposits").await;
    let text = page_says(browser, &["Status: Completed", "Checking ending in 6789"]).await;
    assert!(!text.contains(ACCOUNT_NUMBER), "{text}");
    let html = browser.source().await.unwrap();
    assert!(
        !html.contains(ACCOUNT_NUMBER),
        "the account number in the HTML"
    );

    // 6. Plan setup: the default choices, the documents, the signature.
    follow(browser, "← Dashboard").await;
    page_says(browser, &["75% complete"]).await;
    follow(browser, "Plan setup").await;
    assert_eq!(browser.heading().await, "Plan setup");
    follow(browser, "Save plan choices").await;
    assert_eq!(browser.heading().await, "Plan setup");
    page_says(
        browser,
        &["The signatory is Dana Lee.", "Sign the plan documents"],
    )
    .await;
    let documents = browser
        .find_all(fantoccini::Locator::XPath("//details/summary"))
        .await
        .unwrap();
    assert_eq!(documents.len(), 3, "the plan summary, agreement and notice");
    look_at(browser, "plan-setup", db).await;
    browser.fill("Your full name", "dana lee").await;
    browser
        .field(
            "I have read and accept the plan summary, the service agreement and the privacy notice.",
        )
        .await
        .click()
        .await
        .unwrap();
    follow(browser, "Sign").await;
    page_says(
        browser,
        &[
            "Plan setup saved.",
            "100% complete",
            "Every required step is completed.",
        ],
    )
    .await;
    assert_eq!(browser.definition("Company state").await, "prod");
    assert_eq!(browser.definition("Enrollment status").await, "active");

    // 7. Employee invitations, recorded in test mode; the roster.
    follow(browser, "Employee invitations (optional)").await;
    assert_eq!(browser.heading().await, "Employee invitations");
    look_at(browser, "employee-invitations", db).await;
    follow(browser, "Send invitations").await;
    page_says(browser, &["Employee invitations saved."]).await;
    follow(browser, "Roster").await;
    assert_eq!(browser.heading().await, "Roster");
    for (id, first, last) in EMPLOYEES {
        let row = browser
            .one(
                &format!("the roster row of {id}"),
                &format!("//tbody/tr[td[2] = '{id}']"),
            )
            .await
            .text()
            .await
            .unwrap();
        assert!(row.contains(&format!("{first} {last}")), "{row}");
        assert!(row.contains("Recorded (test mode)"), "{row}");
    }
    look_at(browser, "roster", db).await;

    // 8. The partner sees the company live, and the events.
    let (status, enrollment) = call(
        &server,
        &key,
        "GET",
        &format!("/v1/enrollments/{}", enrolled.enrollment_id),
        None,
    );
    assert_eq!(status, 200, "{enrollment}");
    assert_eq!(
        enrollment["onboarding"]["percent_complete"], 100,
        "{enrollment}"
    );
    assert_eq!(
        enrollment["onboarding"]["blocking_remaining"], 0,
        "{enrollment}"
    );
    assert_eq!(enrollment["status"], "active", "{enrollment}");
    assert_eq!(enrollment["company_state"], "prod", "{enrollment}");
    let (status, group) = call(
        &server,
        &key,
        "GET",
        &format!("/v1/groups/{}", enrolled.group_id),
        None,
    );
    assert_eq!(status, 200, "{group}");
    assert_eq!(group["status"], "active", "{group}");
    assert_eq!(
        enrollment["employer_portal"]["set_password_url"],
        Value::Null,
        "{enrollment}"
    );
    let (status, events) = call(&server, &key, "GET", "/v1/events?limit=200", None);
    assert_eq!(status, 200, "{events}");
    let events = events["events"].as_array().unwrap();
    let of_type = |t: &str| {
        events
            .iter()
            .filter(|e| e["type"] == t && e["data"]["group_id"] == enrolled.group_id.as_str())
            .collect::<Vec<_>>()
    };
    // Newest first: the plan's signature made the company live, and its
    // `enrollment.updated` (status active) came just before the one
    // `group.state_changed`.
    let updated = of_type("enrollment.updated");
    let signed = updated
        .iter()
        .position(|e| {
            e["data"]["step"]["id"] == "plan_setup" && e["data"]["step"]["status"] == "completed"
        })
        .unwrap_or_else(|| panic!("no enrollment.updated for the signature: {updated:?}"));
    assert_eq!(updated[signed]["data"]["status"], "active", "{updated:?}");
    assert_eq!(
        updated[signed]["data"]["onboarding"]["percent_complete"], 100,
        "{updated:?}"
    );
    let [went_live] = of_type("group.state_changed")[..] else {
        panic!("not one group.state_changed: {events:?}");
    };
    assert_ne!(went_live["data"]["forced"], true, "{went_live}");
    let at = |e: &Value| events.iter().position(|x| x["id"] == e["id"]).unwrap();
    assert!(
        at(went_live) < at(updated[signed]),
        "group.state_changed before the signature's enrollment.updated: {events:?}"
    );

    // The receiver got every enrollment.updated and the one
    // group.state_changed, each signed so that standardwebhooks verifies it.
    let wanted = updated.len() + 1;
    let started = Instant::now();
    let arrivals = loop {
        let mine: Vec<_> = receiver
            .arrivals()
            .into_iter()
            .filter(|a| a.json()["data"]["group_id"] == enrolled.group_id.as_str())
            .collect();
        if mine.len() >= wanted {
            break mine;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{} of {wanted} deliveries after 30 s",
            mine.len()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let delivered = |t: &str| arrivals.iter().filter(|a| a.json()["type"] == t).count();
    assert_eq!(delivered("group.state_changed"), 1, "{arrivals:?}");
    assert_eq!(
        delivered("enrollment.updated"),
        updated.len(),
        "{arrivals:?}"
    );
    if let Some(verifier) = Verifier::find() {
        for arrival in &arrivals {
            verifier.check(&secret, arrival);
        }
    }

    // 9. Sign out; a wrong password; the right one; the used link.
    follow(browser, "Sign out").await;
    assert_eq!(browser.heading().await, "Sign in");
    page_says(browser, &["You are signed out."]).await;
    look_at(browser, "signed-out", db).await;
    browser.fill("Email", "dana@acme-mfg.com").await;
    browser.fill("Password", "copper kettle orbit 43").await;
    follow(browser, "Sign in").await;
    assert_eq!(browser.heading().await, "Sign in");
    page_says(browser, &["The email address or password is not correct."]).await;
    assert_eq!(value_of(browser, "Email").await, "dana@acme-mfg.com");
    look_at(browser, "sign-in-error", db).await;
    browser.fill("Password", PASSWORD).await;
    follow(browser, "Sign in").await;
    assert_eq!(browser.heading().await, "Acme Manufacturing LLC");
    assert_eq!(browser.definition("Company state").await, "prod");
    browser.open(&enrolled.set_password_url).await;
    assert_eq!(browser.heading().await, "This link was already used");
    look_at(browser, "used-link", db).await;
    browser
        .open(&format!("http://{}/portal/no-such-page", server.addr))
        .await;
    look_at(browser, "not-found", db).await;

    // 10. Five wrong passwords lock the account: then the right one is
    // refused with the very same message.
    browser
        .open(&format!("http://{}/portal/dashboard", server.addr))
        .await;
    follow(browser, "Sign out").await;
    for _ in 0..5 {
        browser.fill("Email", "dana@acme-mfg.com").await;
        browser.fill("Password", "not the password 1").await;
        follow(browser, "Sign in").await;
        page_says(browser, &["The email address or password is not correct."]).await;
    }
    browser.fill("Email", "dana@acme-mfg.com").await;
    browser.fill("Password", PASSWORD).await;
    follow(browser, "Sign in").await;
    assert_eq!(browser.heading().await, "Sign in");
    page_says(browser, &["The email address or password is not correct."]).await;

    // 11. A POST without its CSRF token changes nothing.
    let (status, page) = post_form(&server, "/portal/sign-in", "email=dana%40acme-mfg.com");
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("Your session expired"), "{page}");

    // 11b. Forgot password: the same answer whether or not the address
    // has an account (test mode sends no email).
    follow(browser, "Forgot your password?").await;
    assert_eq!(browser.heading().await, "Forgot your password?");
    look_at(browser, "forgot-password", db).await;
    browser.fill("Email", "dana@acme-mfg.com").await;
    follow(browser, "Email me a link").await;
    let known = page_says(browser, &["If an employer portal account exists"]).await;
    follow(browser, "Back to sign in").await;
    follow(browser, "Forgot your password?").await;
    browser.fill("Email", "nobody@acme-mfg.com").await;
    follow(browser, "Email me a link").await;
    let unknown = page_says(browser, &["If an employer portal account exists"]).await;
    assert_eq!(known, unknown);

    // 12. Another company's admin sees their own company only: no page
    // takes a company from the URL, and every page shows the session's.
    let other = enroll_company(
        &server,
        &key,
        "Globex Corporation",
        "globex.com",
        "Lee Park",
    );
    browser.open(&other.set_password_url).await;
    page_says(browser, &["lee@globex.com"]).await;
    browser.fill("Password", PASSWORD).await;
    browser.fill("Password again", PASSWORD).await;
    follow(browser, "Set password and sign in").await;
    assert_eq!(browser.heading().await, "Globex Corporation");
    assert_eq!(browser.definition("Company state").await, "sandbox");
    let text = page_says(browser, &["0% complete"]).await;
    assert!(!text.contains("Acme"), "{text}");
    follow(browser, "Company profile").await;
    assert_eq!(value_of(browser, "Legal name").await, "");
    assert_eq!(value_of(browser, "EIN").await, "");

    // 13. A signed-in form posted without its CSRF token (and past the
    // browser's own checks of the blank fields) is refused and saves
    // nothing.
    browser.fill("Legal name", "Globex Corporation Inc").await;
    browser
        .execute(
            "document.querySelectorAll('input[name=csrf]').forEach(e => e.remove()); \
             document.querySelectorAll('form').forEach(f => f.noValidate = true);",
            vec![],
        )
        .await
        .unwrap();
    follow(browser, "Save company profile").await;
    page_says(browser, &["Your session expired"]).await;
    browser
        .open(&format!("http://{}/portal/dashboard", server.addr))
        .await;
    page_says(browser, &["0% complete"]).await;
    follow(browser, "Company profile").await;
    assert_eq!(value_of(browser, "Legal name").await, "");

    // 14. The account number is nowhere in clear: not in the service's
    // log, not in the database (its files on SQLite, every row of every
    // table on PostgreSQL).
    let log = std::fs::read_to_string(dir.join("serve.log")).unwrap();
    assert!(!log.is_empty(), "the service logs its requests");
    assert!(
        !log.contains(ACCOUNT_NUMBER),
        "the account number in the log"
    );
    assert_not_stored(url, dir, ACCOUNT_NUMBER).await;

    // `serve --demo` told the newcomer where the employer portal is.
    let portal = format!("Employer portal: http://{}/portal/sign-in ", server.addr);
    assert!(
        server.stdout.iter().any(|l| l.starts_with(&portal)),
        "{:?}",
        server.stdout
    );
}
