//! The embed-session offer page in a real browser: the binary runs `serve
//! --demo`, a group is created, censused and quoted over HTTP, and headless
//! Chromium (Debian's `chromium`) renders the session's URL.
//!
//! One test runs Chromium's own command line: the DOM and a screenshot
//! (copied to `target/embed-screenshot.png`). The others drive it through
//! WebDriver (`common::webdriver`): the page read as a person reads it,
//! screenshots at phone and desktop sizes under `target/screenshots/`, and
//! axe-core's accessibility check; and the harness itself on a small form.
//!
//! Without Chromium (and chromedriver, for WebDriver) the tests print
//! `SKIPPED` and pass, unless `CI` is set: then they fail (`.ci/run`
//! installs both, and axe-core).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use domain::text::dollars as money;

use crate::common::api::{call, quoted_group};
use crate::common::scratch;
use crate::common::serve_process::{ServeDemo, Served};
use crate::common::webdriver::{Browser, CHROMIUM, assert_accessible, axe};

/// Starts `serve --demo` on a free port over a fresh SQLite file in `dir`,
/// with `public_base_url` naming that port (the embed URL is built from
/// it).
fn start(dir: &Path) -> Served {
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    ServeDemo::new(dir, &url)
        .listen(&addr)
        .env("PARTNER_API_PUBLIC_BASE_URL", &format!("http://{addr}"))
        .start()
}

/// Runs Chromium headless with `args` (a fresh profile in `dir`) and
/// returns its stdout; fails after 120 s.
fn chromium(dir: &Path, args: &[&str]) -> String {
    let profile = dir.join(format!("profile-{}", args.len()));
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish in 120 s: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    assert!(status.success(), "chromium failed ({status}): {stderr}");
    reader.join().unwrap()
}

/// A running `serve --demo` and the URL of an embed session of its quote.
struct Offer {
    /// The server, killed on drop.
    _server: Served,
    /// The offer page's URL.
    url: String,
    /// The quote the page shows.
    quote: Value,
}

/// Starts `serve --demo` in `dir`, then creates, censuses and quotes a
/// group and opens an embed session of its quote, over HTTP.
fn offer(dir: &Path) -> Offer {
    let server = start(dir);
    let key = server.demo_key();
    let (gid, quote) = quoted_group(&server, &key, "Acme Manufacturing", "acme-mfg.com");
    let (status, session) = call(
        &server,
        &key,
        "POST",
        &format!("/v1/groups/{gid}/embed-sessions"),
        Some(&json!({})),
    );
    assert_eq!(status, 201, "{session}");
    let url = session["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("http://{}/embed/", server.addr)),
        "{url}"
    );
    let url = url.to_owned();
    Offer {
        _server: server,
        url,
        quote,
    }
}

#[test]
fn the_offer_page_renders_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{CHROMIUM} is missing and CI is set: install the chromium package"
        );
        eprintln!("SKIPPED: chromium not installed");
        return;
    }
    let dir = scratch("browser_embed");
    let offer = offer(&dir);
    let url = offer.url.as_str();
    let plan = offer.quote["plan"]["name"].as_str().unwrap();

    let dom = chromium(&dir, &["--dump-dom", url]);
    assert!(dom.contains(plan), "{plan} not in {dom}");
    assert!(dom.contains("<svg"), "no svg in {dom}");
    assert!(dom.contains("Monthly total"), "{dom}");

    let shot: PathBuf = dir.join("embed-screenshot.png");
    let arg = format!("--screenshot={}", shot.display());
    chromium(&dir, &[&arg, "--window-size=1024,768", url]);
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no {}: {e}", shot.display()));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.len() > 5 * 1024, "screenshot only {} bytes", png.len());
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("embed-screenshot.png");
    std::fs::copy(&shot, &target).unwrap();
    eprintln!(
        "screenshot: {} ({} bytes), copied to {}",
        shot.display(),
        png.len(),
        target.display()
    );
}

/// Starts the WebDriver browser, or says why the test is skipped.
async fn browser() -> Option<Browser> {
    let browser = Browser::start().await;
    if browser.is_none() {
        eprintln!("SKIPPED: chromium or chromedriver not installed");
    }
    browser
}

#[tokio::test]
async fn the_offer_page_reads_well_on_a_phone_and_a_desktop() {
    let Some(browser) = browser().await else {
        return;
    };
    let dir = scratch("browser_embed_webdriver");
    // Plain blocking HTTP: nothing else runs on this runtime meanwhile.
    let offer = offer(&dir);
    let plan = offer.quote["plan"]["name"].as_str().unwrap();
    let monthly = &offer.quote["monthly"];

    browser.open(&offer.url).await;
    assert_eq!(browser.heading().await, plan);
    assert_eq!(browser.title().await.unwrap(), format!("{plan} offer"));
    assert_eq!(
        browser.definition("Monthly total").await,
        money(monthly["total_cents"].as_i64().unwrap())
    );
    assert_eq!(
        browser.definition("Per employee per month").await,
        money(monthly["pepm_cents"].as_i64().unwrap())
    );
    let text = browser.page_text().await;
    assert!(text.contains("This link expires"), "{text}");

    for (width, height) in [(390, 844), (1280, 800)] {
        let path = browser.screenshot("embed-offer", width, height).await;
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size > 5 * 1024, "{} only {size} bytes", path.display());
    }
    assert_accessible(&browser, "the embed offer page").await;
}

/// A small form of every kind of control the harness finds by its label
/// or name.
const FORM: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign up</title></head>
<body><main>
<h1>Sign up</h1>
<form onsubmit="event.preventDefault(); document.querySelector('h1').textContent =
  'Welcome, ' + document.getElementById('name').value + ' on ' + document.getElementById('plan').value;">
<p><label for="name">Your name</label> <input id="name" name="name" value="old"></p>
<p><label>Plan <select id="plan"><option>Gold</option><option>Diamond</option></select></label></p>
<p><button>Sign up</button></p>
</form>
<dl><dt>Monthly total</dt><dd>$1,234.56</dd></dl>
<p><a href="#terms">Bob's "terms"</a></p>
</main></body></html>
"##;

#[tokio::test]
async fn the_browser_harness_finds_fields_by_label_and_controls_by_name() {
    let Some(browser) = browser().await else {
        return;
    };
    let dir = scratch("browser_harness");
    let page = dir.join("form.html");
    std::fs::write(&page, FORM).unwrap();
    browser.open(&format!("file://{}", page.display())).await;

    assert_eq!(browser.heading().await, "Sign up");
    assert_eq!(browser.definition("Monthly total").await, "$1,234.56");
    browser.fill("Your name", "Ana Diaz").await;
    browser.select("Plan", "Diamond").await;
    browser.click("Sign up").await;
    assert_eq!(browser.heading().await, "Welcome, Ana Diaz on Diamond");
    browser.click(r#"Bob's "terms""#).await;
    assert_eq!(
        browser.current_url().await.unwrap().fragment(),
        Some("terms")
    );
    assert_accessible(&browser, "the form").await;

    // axe-core does report: an image without a text alternative is
    // critical.
    browser
        .execute(
            "document.querySelector('main').append(document.createElement('img'));",
            vec![],
        )
        .await
        .unwrap();
    if let Some(violations) = axe(&browser).await {
        let alt = violations.iter().find(|v| v.id == "image-alt");
        assert!(
            alt.is_some_and(|v| v.is_serious() && v.targets == ["img"]),
            "{violations:?}"
        );
    }
}
