//! The partner portal walked in a real browser, as a partner's admin and
//! then a viewer would: the operator creates the partner, its sandbox key
//! and its users with the CLI (over the database `serve` runs on);
//! headless Chromium opens the set-password link, turns on two-factor
//! with a code computed from the page's secret, shows the sandbox key,
//! meets the refusal of a live key before live mode is enabled and mints
//! one after, registers a real local webhook receiver (which answers 500),
//! pings it, rotates the signing secret and resends the failed ping (the
//! receiver sees the same `webhook-id` twice). A viewer then sees no
//! button that changes anything.
//!
//! The main pages are saved as screenshots (`<target>/screenshots/
//! partner-portal-*`) at 1280×800 and 390×844, and axe-core may find no
//! serious or critical violation on them.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use domain::partner_user::Totp;

use crate::common::serve_process::{ServeDemo, Served};
use crate::common::webdriver::{Browser, axe};
use crate::common::webhook_receiver::Receiver;
use crate::common::{BIN, scratch, stdout_ok};

/// The admin's password.
const PASSWORD: &str = "Tangerine-Lamp-Orbit-42";
/// The viewer's password.
const VIEWER_PASSWORD: &str = "Juniper-Canal-Mosaic-17";

/// Starts `serve --demo` in `dir` over `url` on a port bound first, with
/// `public_base_url` set to it and insecure webhook endpoints allowed for
/// the local receiver (its log in `dir/serve.log`).
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
        .env("PARTNER_API_PUBLIC_BASE_URL", &format!("http://{addr}"))
        .env("PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS", "true")
        .env("PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE", "100000")
        // Retries after 10, 50 and 250 ms: a failed ping stops being
        // pending (and can be resent) within a second.
        .env("PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE", "0.01")
        .log("serve")
        .start()
}

/// The operator's CLI over the served database, in the same directory
/// (so the same sealing key) and with the same `public_base_url`.
struct Operator<'a> {
    dir: &'a Path,
    url: &'a str,
    base: String,
}

impl Operator<'_> {
    /// Runs `partner-api <args>`; its stdout.
    fn run(&self, args: &[&str]) -> String {
        let mut cmd = Command::new(BIN);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("PARTNER_API_") {
                cmd.env_remove(name);
            }
        }
        cmd.current_dir(self.dir)
            .env("PARTNER_API_LOG", "warn")
            .env("PARTNER_API_DATABASE_URL", self.url)
            .env("PARTNER_API_PUBLIC_BASE_URL", &self.base)
            .args(args);
        stdout_ok(&mut cmd)
    }

    /// Adds a user; the set-password link (the first line).
    fn add_user(&self, prt: &str, email: &str, role: &str) -> String {
        let out = self.run(&[
            "partner",
            "user",
            "add",
            "--partner",
            prt,
            "--email",
            email,
            "--role",
            role,
        ]);
        let link = out.lines().next().unwrap().trim().to_owned();
        assert!(
            link.starts_with(&format!("{}/partner/set-password?token=", self.base)),
            "{out}"
        );
        link
    }
}

/// Saves the page as `partner-portal-<page>-1280x800.png` (and at
/// 390×844 when `phone`), running axe-core at each size: its serious or
/// critical violations are added to `found` (the walk goes on, so that
/// one stylesheet rule does not hide the rest of the journey; they fail
/// the test at its end).
async fn look_at(browser: &Browser, page: &str, phone: bool, found: &mut Vec<String>) {
    let name = format!("partner-portal-{page}");
    let sizes: &[(u32, u32)] = if phone {
        &[(390, 844), (1280, 800)]
    } else {
        &[(1280, 800)]
    };
    for &(width, height) in sizes {
        let path = browser.screenshot(&name, width, height).await;
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size > 5 * 1024, "{} only {size} bytes", path.display());
        let Some(violations) = axe(browser).await else {
            continue;
        };
        for v in violations {
            if v.is_serious() {
                found.push(format!("{page} ({width} px): {v}"));
            } else {
                eprintln!("axe-core on the partner portal's {page} page ({width} px): {v}");
            }
        }
    }
}

/// Clicks the button or link `name` and waits until the page it opens
/// has loaded.
async fn follow(browser: &Browser, name: &str) {
    browser
        .execute("window.portalWalkLeft = true;", vec![])
        .await
        .unwrap();
    browser.click(name).await;
    wait_for_load(browser, name).await;
}

/// Clicks the first of the buttons reading `name` (the delivery log has
/// one per failed attempt of an event) and waits for the page it opens.
async fn follow_first(browser: &Browser, name: &str) {
    browser
        .execute("window.portalWalkLeft = true;", vec![])
        .await
        .unwrap();
    let xpath = format!(
        "(//button[normalize-space() = {}])[1]",
        crate::common::webdriver::literal(name)
    );
    browser
        .one(&format!("the first button {name:?}"), &xpath)
        .await
        .click()
        .await
        .unwrap();
    wait_for_load(browser, name).await;
}

/// Waits until the page that clicking `name` opened has loaded.
async fn wait_for_load(browser: &Browser, name: &str) {
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

/// The page's text, which must contain each of `expected`.
async fn page_says(browser: &Browser, expected: &[&str]) -> String {
    let text = browser.page_text().await;
    for e in expected {
        assert!(text.contains(e), "{e:?} not on the page: {text}");
    }
    text
}

/// How many elements `xpath` finds.
async fn count(browser: &Browser, xpath: &str) -> usize {
    browser
        .find_all(fantoccini::Locator::XPath(xpath))
        .await
        .unwrap()
        .len()
}

/// How many buttons read `name`.
async fn buttons(browser: &Browser, name: &str) -> usize {
    count(
        browser,
        &format!(
            "//button[normalize-space() = {}]",
            crate::common::webdriver::literal(name)
        ),
    )
    .await
}

/// The text of the one element with id `id`.
async fn by_id(browser: &Browser, id: &str) -> String {
    browser
        .one(&format!("#{id}"), &format!("//*[@id = '{id}']"))
        .await
        .text()
        .await
        .unwrap()
}

/// Sets a password through the set-password link.
async fn set_password(browser: &Browser, link: &str, email: &str, password: &str) {
    browser.open(link).await;
    assert_eq!(browser.heading().await, "Set your password");
    page_says(browser, &[email]).await;
    browser.fill("Password", password).await;
    browser.fill("Password again", password).await;
    follow(browser, "Set password and sign in").await;
}

/// The path of the page the browser shows.
async fn path_of(browser: &Browser) -> String {
    browser.current_url().await.unwrap().path().to_owned()
}

async fn walk(browser: &Browser, dir: &Path, url: &str) {
    let started = Instant::now();
    let mut found = Vec::new();
    let url = url.to_owned();
    let server = start(dir, &url);
    let base = format!("http://{}", server.addr);
    let op = Operator {
        dir,
        url: &url,
        base: base.clone(),
    };

    // 1. The operator creates the partner, its sandbox key and an admin.
    let prt = op
        .run(&[
            "partner",
            "create",
            "--name",
            "Lakeside Benefits",
            "--kind",
            "broker",
        ])
        .trim()
        .to_owned();
    assert!(prt.starts_with("prt_"), "{prt}");
    let key_out = op.run(&[
        "--json",
        "key",
        "create",
        "--partner",
        &prt,
        "--mode",
        "test",
    ]);
    let key_out: serde_json::Value = serde_json::from_str(&key_out).unwrap();
    let key_out = key_out["key"].as_str().unwrap().to_owned();
    let test_key = key_out.lines().next().unwrap().trim().to_owned();
    assert!(test_key.starts_with("psk_test_"), "{key_out}");
    let admin_link = op.add_user(&prt, "ada@lakeside.example", "admin");

    set_password(browser, &admin_link, "ada@lakeside.example", PASSWORD).await;
    assert_eq!(path_of(browser).await, "/partner/overview");
    assert_eq!(browser.heading().await, "Lakeside Benefits");
    page_says(browser, &["Go-live checklist", &prt]).await;
    look_at(browser, "overview", true, &mut found).await;

    // 2. Two-factor: the code computed from the page's secret.
    browser.open(&format!("{base}/partner/security")).await;
    assert_eq!(browser.heading().await, "Security");
    assert!(
        count(browser, "//div[@role = 'img' and contains(@class, 'qr')]/*").await > 0,
        "no QR code"
    );
    let secret = by_id(browser, "totp-secret").await;
    look_at(browser, "security", false, &mut found).await;
    let totp = Totp::from_base32(&secret).unwrap_or_else(|| panic!("not base32: {secret}"));
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    browser.fill("Code from the app", &totp.code_at(now)).await;
    follow(browser, "Turn on two-factor").await;
    let codes = count(browser, "//ul[contains(@class, 'codes')]/li/code").await;
    assert_eq!(codes, 10, "{}", browser.page_text().await);
    page_says(browser, &["Two-factor authentication is on"]).await;
    look_at(browser, "recovery-codes", false, &mut found).await;

    // 3. The sandbox key, shown again.
    browser.open(&format!("{base}/partner/keys")).await;
    assert_eq!(browser.heading().await, "API keys");
    follow(browser, "Show the sandbox key").await;
    assert_eq!(by_id(browser, "shown-key").await, test_key);
    look_at(browser, "keys", true, &mut found).await;

    // 4. The live key: refused before live mode, shown once after.
    follow(browser, "Mint the live key").await;
    let alert = browser
        .one("the error", "//*[@role = 'alert']")
        .await
        .text()
        .await
        .unwrap();
    assert!(alert.to_lowercase().contains("live"), "{alert}");
    assert!(alert.to_lowercase().contains("enabled"), "{alert}");
    assert_eq!(count(browser, "//*[@id = 'shown-key']").await, 0);
    look_at(browser, "keys-live-refused", false, &mut found).await;
    op.run(&["partner", "enable-live", &prt, "--force"]);
    browser.open(&format!("{base}/partner/keys")).await;
    follow(browser, "Mint the live key").await;
    let live = by_id(browser, "shown-key").await;
    assert!(live.starts_with("psk_live_"), "{live}");
    // Reloaded (opened again: a reload of the POST's answer would
    // resubmit the form), the page no longer shows it.
    browser.open(&format!("{base}/partner/keys")).await;
    assert_eq!(count(browser, "//*[@id = 'shown-key']").await, 0);
    assert!(!browser.page_text().await.contains(&live));

    // The checklist turns green from facts: (b) live mode enabled, (c)
    // the agreements the operator records, (d) the live key just minted;
    // (a) and (e) are still to do.
    op.run(&["partner", "agreements", &prt, "--commercial", "done"]);
    browser.open(&format!("{base}/partner/overview")).await;
    let text = browser.page_text().await;
    assert!(text.contains("3 of 5 steps done"), "{text}");
    assert_eq!(
        count(
            browser,
            "//ol[@class='golive']/li[span[@class='status completed']]"
        )
        .await,
        3
    );
    assert_eq!(
        count(
            browser,
            "//ol[@class='golive']/li[span[@class='status pending']]/strong[.='(a)' or .='(e)']"
        )
        .await,
        2
    );
    look_at(browser, "overview-live", false, &mut found).await;

    // 5. Webhooks: a receiver that answers 500.
    let receiver = Receiver::start(&[], 500);
    browser.open(&format!("{base}/partner/webhooks")).await;
    assert_eq!(browser.heading().await, "Webhooks");
    browser.fill("Endpoint URL", &receiver.url()).await;
    follow(browser, "Register endpoint").await;
    let first_secret = by_id(browser, "signing-secret").await;
    assert!(first_secret.starts_with("whsec_"), "{first_secret}");
    follow(browser, "Send a test ping").await;
    let text = page_says(browser, &["answered 500; it will be retried"]).await;
    let ping_id = text
        .split_whitespace()
        .find(|w| w.starts_with("evt_"))
        .unwrap()
        .to_owned();
    assert!(!ping_id.is_empty());
    // The synchronous attempt arrived (a quick retry may follow it).
    assert!(
        !receiver.of(&ping_id).is_empty(),
        "{:?}",
        receiver.arrivals()
    );
    look_at(browser, "webhooks", true, &mut found).await;
    browser.fill("Grace period (hours, 0 to 72)", "24").await;
    follow(browser, "Rotate the signing secret").await;
    let second_secret = by_id(browser, "signing-secret").await;
    assert_ne!(second_secret, first_secret);
    // The retries (10, 50, 250 ms) fail too; until the last one has, the
    // event is pending and a resend is refused.
    let flash = format!("{ping_id} is being delivered again, with the same webhook-id.");
    let waited = Instant::now();
    let before = loop {
        browser.open(&format!("{base}/partner/webhooks")).await;
        let before = receiver.of(&ping_id).len();
        follow_first(browser, &format!("Resend {ping_id}")).await;
        let text = browser.page_text().await;
        if text.contains(&flash) {
            break before;
        }
        assert!(
            text.contains("This event's delivery is still pending"),
            "{text}"
        );
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the ping is still pending after 30 s: {text}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(before >= 1, "{:?}", receiver.arrivals());
    look_at(browser, "webhooks-resent", false, &mut found).await;
    let waited = Instant::now();
    while receiver.of(&ping_id).len() <= before {
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the resent ping did not arrive: {:?}",
            receiver.arrivals()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let arrivals = receiver.of(&ping_id);
    assert!(
        arrivals
            .iter()
            .all(|a| a.id() == ping_id && a.answered == 500)
    );
    assert_eq!(arrivals[0].body, arrivals[before].body, "the resend's body");

    // The read-only pages: the ping among the events (its payload and
    // attempts on its own page), the groups, the audit log of it all.
    browser.open(&format!("{base}/partner/events")).await;
    assert_eq!(browser.heading().await, "Events");
    assert!(browser.page_text().await.contains(&ping_id));
    look_at(browser, "events", false, &mut found).await;
    browser
        .open(&format!("{base}/partner/events/{ping_id}"))
        .await;
    let text = browser.page_text().await;
    assert!(text.contains("\"type\": \"ping\""), "{text}");
    assert!(text.contains("failed (http_status)"), "{text}");
    browser.open(&format!("{base}/partner/groups")).await;
    assert!(
        browser
            .page_text()
            .await
            .contains("No groups in test mode yet."),
        "{}",
        browser.page_text().await
    );
    browser.open(&format!("{base}/partner/audit")).await;
    let text = browser.page_text().await;
    for action in [
        "password_set",
        "two_factor_enrolled",
        "key_shown",
        "key_minted",
        "endpoint_changed",
        "ping_sent",
        "secret_rotated",
        "event_resent",
    ] {
        assert!(
            text.contains(action),
            "{action} missing from the audit log: {text}"
        );
    }
    look_at(browser, "audit", true, &mut found).await;
    browser.open(&format!("{base}/partner/team")).await;
    look_at(browser, "team", false, &mut found).await;
    browser.open(&format!("{base}/partner/embed-origins")).await;
    look_at(browser, "embed-origins", false, &mut found).await;

    // 6. A viewer sees no button that changes anything.
    follow(browser, "Sign out").await;
    let viewer_link = op.add_user(&prt, "vic@lakeside.example", "viewer");
    set_password(
        browser,
        &viewer_link,
        "vic@lakeside.example",
        VIEWER_PASSWORD,
    )
    .await;
    browser.open(&format!("{base}/partner/keys")).await;
    follow(browser, "Sign out").await;
    browser.open(&format!("{base}/partner/sign-in")).await;
    assert_eq!(browser.heading().await, "Sign in");
    browser.fill("Email", "vic@lakeside.example").await;
    browser.fill("Password", VIEWER_PASSWORD).await;
    follow(browser, "Sign in").await;
    assert_eq!(path_of(browser).await, "/partner/overview");
    page_says(browser, &["(viewer)"]).await;
    browser.open(&format!("{base}/partner/keys")).await;
    assert_eq!(browser.heading().await, "API keys");
    assert_eq!(buttons(browser, "Show the sandbox key").await, 0);
    assert_eq!(buttons(browser, "Mint the live key").await, 0);
    look_at(browser, "keys-viewer", false, &mut found).await;
    browser.open(&format!("{base}/partner/webhooks")).await;
    assert_eq!(browser.heading().await, "Webhooks");
    assert_eq!(buttons(browser, "Rotate the signing secret").await, 0);
    assert_eq!(buttons(browser, "Send a test ping").await, 0);
    assert_eq!(buttons(browser, &format!("Resend {ping_id}")).await, 0);
    look_at(browser, "webhooks-viewer", false, &mut found).await;
    eprintln!("partner portal walk: {:?}", started.elapsed());
    assert!(
        found.is_empty(),
        "axe-core: {} serious or critical violation(s) in the partner portal:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[tokio::test]
async fn a_partner_walks_the_partner_portal_in_a_browser_on_sqlite() {
    let Some(browser) = Browser::start().await else {
        eprintln!("SKIPPED: chromium or chromedriver not installed");
        return;
    };
    let dir = scratch("partner_browser_sqlite");
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    walk(&browser, &dir, &url).await;
}

#[tokio::test]
async fn a_partner_walks_the_partner_portal_in_a_browser_on_postgres() {
    let Some(db) = testkit::db::postgres().await else {
        eprintln!("SKIPPED: {} is not set", testkit::db::PG_ENV);
        return;
    };
    let Some(browser) = Browser::start().await else {
        eprintln!("SKIPPED: chromium or chromedriver not installed");
        return;
    };
    let dir = scratch("partner_browser_postgres");
    walk(&browser, &dir, &db.url).await;
}
