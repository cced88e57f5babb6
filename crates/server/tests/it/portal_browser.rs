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

mod walk;

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::api::{call, created_group};
use crate::common::scratch;
use crate::common::serve_process::{ServeDemo, Served};
use crate::common::webdriver::{Browser, assert_accessible};
use crate::portal_browser::walk::journey;

/// The signatory's password (not a common one, not the email).
pub(super) const PASSWORD: &str = "copper kettle orbit 42";
/// The bank account number typed once and never shown again.
pub(super) const ACCOUNT_NUMBER: &str = "000123456789";
/// The bank's routing number (not a secret: stored as typed, which shows
/// that a scan for the account number read the bank step).
pub(super) const ROUTING_NUMBER: &str = "011000015";

/// The census: three employees with names and external ids.
pub(super) const EMPLOYEES: [(&str, &str, &str); 3] = [
    ("E1", "Ana", "Diaz"),
    ("E2", "Ben", "Okafor"),
    ("E3", "Cy", "Moss"),
];

/// Starts `serve --demo` in `dir` over `url` on a port bound first, with
/// `public_base_url` set to it (limits high enough for polling, insecure
/// webhook endpoints allowed for the local receiver; its log, at debug
/// level, in `dir/serve.log`).
pub(super) fn start(dir: &Path, url: &str) -> Served {
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
pub(super) struct Enrolled {
    group_id: String,
    enrollment_id: String,
    /// The quote enrolled.
    quote: Value,
    /// The set-password link, on the server's real address.
    set_password_url: String,
}

/// Step 1: a group, its census, a quote (retried while the market
/// comparison runs) and a hosted enrollment, over HTTP.
pub(super) fn enroll(server: &Served, key: &str) -> Enrolled {
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
pub(super) fn enroll_company(
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
pub(super) async fn look_at(browser: &Browser, page: &str, db: &str) {
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
pub(super) async fn follow(browser: &Browser, name: &str) {
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
pub(super) async fn value_of(browser: &Browser, label: &str) -> String {
    browser
        .field(label)
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

/// The page's text, which must contain each of `expected`.
pub(super) async fn page_says(browser: &Browser, expected: &[&str]) -> String {
    let text = browser.page_text().await;
    for e in expected {
        assert!(text.contains(e), "{e:?} not on the page: {text}");
    }
    text
}

/// Asserts `secret` is in no file of the SQLite database in `dir` (the
/// database, its WAL and shared memory) or in no row of any table of the
/// PostgreSQL database at `url` (bytes columns read as hex too).
pub(super) async fn assert_not_stored(url: &str, dir: &Path, secret: &str) {
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
pub(super) fn post_form(server: &Served, path: &str, form: &str) -> (u16, String) {
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
pub(super) async fn browser() -> Option<Browser> {
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
