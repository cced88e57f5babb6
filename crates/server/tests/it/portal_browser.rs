//! The hosted employer portal walked in a real browser, as the employer
//! would: the partner enrolls a group over HTTP (demo key, snake_case),
//! then headless Chromium opens the set-password link, completes every
//! checklist step through the portal's forms (fields found by their labels,
//! buttons and links by their names), reads the roster, signs out and in
//! again; the API then shows the company live. The same journey runs over
//! a fresh SQLite file and over a fresh PostgreSQL database (skipped when
//! `PARTNER_API_TEST_POSTGRES_URL` is unset).
//!
//! The server runs on a port the test bound first, with `public_base_url`
//! set to it, so the links the API hands out are followed as they are. A
//! real local webhook receiver gets the `enrollment.updated` events and
//! the one `group.state_changed`, each verified with the `standardwebhooks`
//! package. The walk also meets the verifier's refusal (EIN
//! `11-1111111`), wrong micro-deposit amounts, the account lockout, a POST
//! without its CSRF token, and a second company whose admin sees only
//! their own company.
//!
//! The pages a person lingers on are saved as screenshots at two phone
//! sizes and a desktop size (`<target>/screenshots/portal-*`); at each
//! size nothing may be cut off sideways and axe-core may find no serious
//! or critical violation.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use domain::text::dollars as money;

use crate::common::api::{call, created_group};
use crate::common::scratch;
use crate::common::serve_process::{ServeDemo, Served};
use crate::common::webdriver::{Browser, assert_accessible};
use crate::common::webhook_receiver::{Receiver, Verifier};

/// The signatory's password (not a common one, not the email).
const PASSWORD: &str = "copper kettle orbit 42";
/// The bank account number typed once and never shown again.
const ACCOUNT_NUMBER: &str = "000123456789";
/// The bank's routing number (not a secret: stored as typed, which shows
/// that a scan for the account number read the bank step).
const ROUTING_NUMBER: &str = "011000015";

/// The census: three employees with names and external ids.
const EMPLOYEES: [(&str, &str, &str); 3] = [
    ("E1", "Ana", "Diaz"),
    ("E2", "Ben", "Okafor"),
    ("E3", "Cy", "Moss"),
];

/// Starts `serve --demo` in `dir` over `url` on a port bound first, with
/// `public_base_url` set to it (limits high enough for polling, insecure
/// webhook endpoints allowed for the local receiver; its log, at debug
/// level, in `dir/serve.log`).
fn start(dir: &Path, url: &str) -> Served {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    ServeDemo::new(dir, url)
        .without_inherited_config()
        .listen(&addr)
        .env("PARTNER_API_LOG", "debug")
        .env("PARTNER_API_PUBLIC_BASE_URL", &format!("http://{addr}"))
        .env("PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS", "true")
        .env("PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE", "100000")
        .env("PARTNER_API_RATE_LIMITS__QUOTE_CREATES_PER_HOUR", "100000")
        .log("serve")
        .start()
}

/// What the partner's side of the journey made.
struct Enrolled {
    group_id: String,
    enrollment_id: String,
    /// The quote enrolled.
    quote: Value,
    /// The set-password link, on the server's real address.
    set_password_url: String,
}

/// Step 1: a group, its census, a quote (retried while the market
/// comparison runs) and a hosted enrollment, over HTTP.
fn enroll(server: &Served, key: &str) -> Enrolled {
    enroll_company(
        server,
        key,
        "Acme Manufacturing",
        "acme-mfg.com",
        "Dana Lee",
    )
}

/// [`enroll`] for another company, domain and signatory (whose address
/// is `first-name@domain`).
fn enroll_company(
    server: &Served,
    key: &str,
    company: &str,
    domain: &str,
    signatory: &str,
) -> Enrolled {
    let email = format!(
        "{}@{domain}",
        signatory.split(' ').next().unwrap().to_lowercase()
    );
    let gid = created_group(server, key, company, domain);
    let members: Vec<Value> = EMPLOYEES
        .iter()
        .zip(["1988-04-12", "1979-11-02", "1992-01-20"])
        .map(|((id, first, last), dob)| {
            json!({"external_id": id, "first_name": first, "last_name": last,
                   "dob": dob, "zip": "60601"})
        })
        .collect();
    let (status, body) = call(
        server,
        key,
        "PUT",
        &format!("/v1/groups/{gid}/census"),
        Some(&json!({ "members": members })),
    );
    assert_eq!(status, 200, "{body}");
    let started = Instant::now();
    let quote = loop {
        let (status, body) = call(
            server,
            key,
            "POST",
            &format!("/v1/groups/{gid}/quotes"),
            Some(&json!({})),
        );
        if status == 201 {
            break body;
        }
        assert_eq!(
            (status, &body["error"]),
            (409, &json!("rates_pending")),
            "{body}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "rates still pending after 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let (status, enrollment) = call(
        server,
        key,
        "POST",
        &format!("/v1/groups/{gid}/enrollments"),
        Some(&json!({"quote_id": quote["id"],
            "signatory": {"name": signatory, "email": email}})),
    );
    assert_eq!(status, 201, "{enrollment}");
    assert_eq!(
        enrollment["onboarding"]["percent_complete"], 0,
        "{enrollment}"
    );
    let link = enrollment["employer_portal"]["set_password_url"]
        .as_str()
        .unwrap_or_else(|| panic!("no set_password_url: {enrollment}"));
    // public_base_url is the server's own address: the link is used as
    // the API hands it out.
    let base = format!("http://{}", server.addr);
    assert!(
        link.starts_with(&format!("{base}/portal/set-password?token=")),
        "{link}"
    );
    assert_eq!(
        enrollment["employer_portal"]["signin_url"],
        format!("{base}/portal/sign-in"),
        "{enrollment}"
    );
    Enrolled {
        group_id: gid,
        quote,
        enrollment_id: enrollment["id"].as_str().unwrap().to_owned(),
        set_password_url: link.to_owned(),
    }
}

/// What a page shows cut off sideways: the document wider than the
/// viewport, or a box (not a form control) whose content is wider than it
/// and is clipped or scrolled. One line each; empty when nothing is.
const CUT_OFF: &str = r"
    const cut = [];
    const root = document.documentElement;
    if (root.scrollWidth > window.innerWidth) {
        cut.push(`the page is ${root.scrollWidth} px wide`);
    }
    for (const e of document.querySelectorAll('body *')) {
        if (['INPUT', 'SELECT', 'TEXTAREA'].includes(e.tagName) || e.clientWidth <= 1) continue;
        if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible') {
            cut.push(`${e.tagName.toLowerCase()}.${e.className}: ${e.scrollWidth} px in ${e.clientWidth}`);
        }
    }
    return cut;";

/// Looks at the page on a small phone, a phone and a desktop: saves it as
/// `portal-<page>-<db>-<w>x<h>.png` at 360×780, 390×844 and 1280×800,
/// checks that nothing is cut off sideways, and runs axe-core at each
/// size (a region that scrolls only on a phone is checked there).
async fn look_at(browser: &Browser, page: &str, db: &str) {
    let name = format!("portal-{page}-{db}");
    for (width, height) in [(360, 780), (390, 844), (1280, 800)] {
        let path = browser.screenshot(&name, width, height).await;
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size > 5 * 1024, "{} only {size} bytes", path.display());
        assert_accessible(
            browser,
            &format!("the portal's {page} page ({db}, {width} px)"),
        )
        .await;
        let cut = browser.execute(CUT_OFF, vec![]).await.unwrap();
        assert_eq!(cut, json!([]), "{page} is cut off at {width} px");
    }
}

/// Clicks the button or link `name` and waits until the page it opens
/// has loaded: a form's POST and its redirect can outlast what WebDriver's
/// click waits for, and the old page must not be read as the new one.
async fn follow(browser: &Browser, name: &str) {
    browser
        .execute("window.portalWalkLeft = true;", vec![])
        .await
        .unwrap();
    browser.click(name).await;
    let started = Instant::now();
    loop {
        let loaded = browser
            .execute(
                "return window.portalWalkLeft === undefined \
                 && document.readyState === 'complete';",
                vec![],
            )
            .await;
        if matches!(loaded, Ok(Value::Bool(true))) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{name:?} opened no page within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The value of the field labelled `label`.
async fn value_of(browser: &Browser, label: &str) -> String {
    browser
        .field(label)
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

/// The page's text, which must contain each of `expected`.
async fn page_says(browser: &Browser, expected: &[&str]) -> String {
    let text = browser.page_text().await;
    for e in expected {
        assert!(text.contains(e), "{e:?} not on the page: {text}");
    }
    text
}

/// The whole journey over the database at `url` (`db` names it in
/// screenshots and messages).
async fn journey(browser: &Browser, url: &str, db: &str, dir: &Path) {
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

/// Asserts `secret` is in no file of the SQLite database in `dir` (the
/// database, its WAL and shared memory) or in no row of any table of the
/// PostgreSQL database at `url` (bytes columns read as hex too).
async fn assert_not_stored(url: &str, dir: &Path, secret: &str) {
    let db = store_diesel::Database::parse(url).unwrap();
    match &db {
        store_diesel::Database::Sqlite { .. } => {
            let mut files = 0;
            let mut seen = false;
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if !name.starts_with("partner-api.sqlite") {
                    continue;
                }
                files += 1;
                let bytes = std::fs::read(&path).unwrap();
                let holds = |text: &str| bytes.windows(text.len()).any(|w| w == text.as_bytes());
                assert!(!holds(secret), "the account number in clear in {name}");
                seen |= holds(ROUTING_NUMBER);
            }
            assert!(files > 0, "no SQLite files in {}", dir.display());
            assert!(seen, "the scan never read the stored bank step");
        }
        store_diesel::Database::Postgres { .. } => {
            let tables = testkit::db::texts(
                &db,
                "SELECT table_name::text AS value FROM information_schema.tables \
                 WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
            )
            .await;
            let mut seen = false;
            let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
            for table in tables {
                let rows = testkit::db::texts(
                    &db,
                    &format!("SELECT row_to_json(t)::text AS value FROM \"{table}\" t"),
                )
                .await;
                for row in rows {
                    assert!(
                        !row.contains(secret) && !row.contains(&hex),
                        "the account number in clear in {table}"
                    );
                    seen |= row.contains(ROUTING_NUMBER);
                }
            }
            assert!(seen, "the scan never read the stored bank step");
        }
    }
}

/// A form POST without a session or CSRF token, over a plain socket;
/// (status, page).
fn post_form(server: &Served, path: &str, form: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(&server.addr).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{form}",
        server.addr,
        form.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, text)
}

/// Starts the browser, or says why the test is skipped.
async fn browser() -> Option<Browser> {
    let browser = Browser::start().await;
    if browser.is_none() {
        eprintln!("SKIPPED: chromium or chromedriver not installed");
    }
    browser
}

#[tokio::test]
async fn an_employer_completes_the_portal_in_a_browser_on_sqlite() {
    let Some(browser) = browser().await else {
        return;
    };
    let dir = scratch("portal_browser_sqlite");
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    journey(&browser, &url, "sqlite", &dir).await;
}

#[tokio::test]
async fn an_employer_completes_the_portal_in_a_browser_on_postgres() {
    let Some(db) = testkit::db::postgres().await else {
        eprintln!("SKIPPED: {} is not set", testkit::db::PG_ENV);
        return;
    };
    let Some(browser) = browser().await else {
        return;
    };
    let dir = scratch("portal_browser_postgres");
    journey(&browser, &db.url, "postgres", &dir).await;
}
