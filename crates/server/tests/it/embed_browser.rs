//! The offer iframe walked in a real browser, framed as a partner frames
//! it: `serve --demo` runs on one local origin and a small host on another
//! serves the partner's page with an `<iframe>` of the embed URL.
//! Headless Chromium, inside the frame, tries an address at another
//! domain (refused), one at the company's domain, a wrong code, the test
//! code `424242`, opens the plan documents and accepts the offer. The
//! partner's webhook receiver then gets `quote.accepted` (verified with
//! the `standardwebhooks` package) and the API shows `quote.acceptance`.
//!
//! In live mode, with the partner's embed origins set to the host's
//! `http://127.0.0.1:PORT`, the same page framed from
//! `http://localhost:PORT` (another origin) shows nothing of the offer,
//! while the allowed origin shows it.
//!
//! Screenshots of the framed offer at 390×844 and 1280×800
//! (`<target>/screenshots/embed-frame-*`); axe-core may find no serious or
//! critical violation inside the frame, at any step.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::Locator;
use serde_json::{Value, json};

use crate::common::api::{call, quoted_group};
use crate::common::serve_process::{ServeDemo, Served};
use crate::common::webdriver::{Browser, assert_accessible, literal, text};
use crate::common::webhook_receiver::{Receiver, Verifier};
use crate::common::{BIN, scratch};

/// Starts `serve --demo` over a fresh SQLite file in `dir` on a port
/// bound first, with `public_base_url` set to it (insecure webhook
/// endpoints allowed for the local receiver; its log in `dir/serve.log`).
fn start(dir: &Path) -> Served {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    ServeDemo::new(dir, &url)
        .without_inherited_config()
        .listen(&addr)
        .env("PARTNER_API_PUBLIC_BASE_URL", &format!("http://{addr}"))
        .env("PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS", "true")
        .env("PARTNER_API_RATE_LIMITS__QUOTE_CREATES_PER_HOUR", "100000")
        .log("serve")
        .start()
}

/// Runs an operator command on the database of the server in `dir`;
/// returns its stdout.
fn operator(dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new(BIN);
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("PARTNER_API_") {
            cmd.env_remove(var);
        }
    }
    let out = cmd
        .current_dir(dir)
        .env(
            "PARTNER_API_DATABASE_URL",
            format!("sqlite://{}", dir.join("partner-api.sqlite").display()),
        )
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "partner-api {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The partner's site: serves each registered path's HTML on
/// 127.0.0.1, which the browser also reaches as `localhost` (another
/// origin of the same host).
struct PartnerSite {
    port: u16,
    pages: Arc<Mutex<HashMap<String, String>>>,
}

impl PartnerSite {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let pages: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        let served = Arc::clone(&pages);
        std::thread::spawn(move || {
            // One thread per connection: the browser opens speculative
            // connections it may never write on, which must not hold up
            // the next request.
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let served = Arc::clone(&served);
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    // The rest of the head.
                    loop {
                        let mut header = String::new();
                        match reader.read_line(&mut header) {
                            Ok(0) | Err(_) => break,
                            Ok(_) if header == "\r\n" => break,
                            Ok(_) => {}
                        }
                    }
                    let page = served.lock().unwrap().get(&path).cloned();
                    let (status, body) =
                        page.map_or(("404 Not Found", String::new()), |p| ("200 OK", p));
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        Self { port, pages }
    }

    /// The site's origin as `host` (`127.0.0.1` or `localhost`).
    fn origin(&self, host: &str) -> String {
        format!("http://{host}:{}", self.port)
    }

    /// Serves at `path` a page of the partner's product that frames
    /// `src`, filling the window.
    fn frame(&self, path: &str, src: &str) {
        let html = format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>Benefits · HR platform</title>\
             <style>body{{margin:0}}iframe{{display:block;border:0;width:100%;height:100vh}}</style>\
             </head><body><main><iframe id=\"offer\" title=\"Your benefits offer\" src=\"{src}\">\
             </iframe></main></body></html>"
        );
        self.pages.lock().unwrap().insert(path.to_owned(), html);
    }
}

/// An embed session of the group's newest quote; returns its URL.
fn embed_url(server: &Served, key: &str, gid: &str) -> String {
    let (status, session) = call(
        server,
        key,
        "POST",
        &format!("/v1/groups/{gid}/embed-sessions"),
        Some(&json!({})),
    );
    assert_eq!(status, 201, "{session}");
    let url = session["url"].as_str().unwrap().to_owned();
    assert!(
        url.starts_with(&format!("http://{}/embed/", server.addr)),
        "{url}"
    );
    url
}

/// Opens the partner's page at `url` and enters its iframe.
async fn open_framed(browser: &Browser, url: &str) {
    browser.open(url).await;
    browser
        .find(Locator::Css("iframe#offer"))
        .await
        .unwrap_or_else(|e| panic!("no iframe on {url}: {e}"))
        .enter_frame()
        .await
        .unwrap_or_else(|e| panic!("cannot enter the iframe of {url}: {e}"));
}

/// Waits up to 10 s for the frame's visible text to contain `needle`
/// (the steps answer after a request to the server).
async fn until_shown(browser: &Browser, needle: &str) -> String {
    let started = Instant::now();
    loop {
        let text = browser.page_text().await;
        if text.contains(needle) {
            return text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{needle:?} not shown after 10 s; the frame shows:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The message a step's form shows (its `role=alert` paragraph).
async fn message_of(browser: &Browser, form: &str) -> String {
    text(
        &browser
            .one(
                &format!("the message of #{form}"),
                &format!("//form[@id = {}]//p[@role = 'alert']", literal(form)),
            )
            .await,
    )
    .await
}

/// Screenshots of the framed page at a phone and a desktop size, taken
/// from the top-level page (the frame is re-entered afterwards).
async fn screenshots(browser: &Browser, name: &str) {
    browser.enter_parent_frame().await.unwrap();
    for (width, height) in [(390, 844), (1280, 800)] {
        let path = browser.screenshot(name, width, height).await;
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size > 5 * 1024, "{} only {size} bytes", path.display());
    }
    browser
        .find(Locator::Css("iframe#offer"))
        .await
        .unwrap()
        .enter_frame()
        .await
        .unwrap();
}

#[tokio::test]
async fn the_framed_offer_is_verified_and_accepted_and_live_framing_is_limited() {
    let Some(browser) = Browser::start().await else {
        eprintln!("SKIPPED: chromium or chromedriver not installed");
        return;
    };
    let dir = scratch("browser_embed_frame");
    let server = start(&dir);
    let key = server.demo_key();
    let partner = server
        .stdout
        .iter()
        .find_map(|l| l.strip_prefix("Demo partner: "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    let site = PartnerSite::start();

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

    // Test mode, no embed origins: the partner's page on another origin
    // frames the offer.
    let (gid, quote) = quoted_group(&server, &key, "Acme Manufacturing", "acme-mfg.com");
    let plan = quote["plan"]["name"].as_str().unwrap().to_owned();
    site.frame("/offer", &embed_url(&server, &key, &gid));
    open_framed(&browser, &format!("{}/offer", site.origin("127.0.0.1"))).await;
    assert_eq!(browser.heading().await, plan);
    until_shown(&browser, "Preliminary pricing.").await;
    screenshots(&browser, "embed-frame-offer").await;
    assert_accessible(&browser, "the framed offer").await;

    // Get started → an address at another domain is refused.
    browser.click("Get started").await;
    browser.fill("Your work email", "dana@gmail.com").await;
    browser.click("Send a code").await;
    let refused = "Use your work email address at the company's domain.";
    until_shown(&browser, refused).await;
    assert_eq!(message_of(&browser, "email-form").await, refused);
    assert!(!browser.page_text().await.contains("Verify"));

    // The company's address: a code is "sent" (test mode: 424242).
    browser.fill("Your work email", "dana@acme-mfg.com").await;
    browser.click("Send a code").await;
    until_shown(&browser, "The 6-digit code we sent to d").await;
    assert_eq!(message_of(&browser, "email-form").await, "");
    assert_accessible(&browser, "the framed offer's code step").await;
    let code = browser
        .one(
            "the code field",
            "//input[@id = //label[starts-with(normalize-space(), 'The 6-digit code')]/@for]",
        )
        .await;

    // A wrong code, then the right one.
    code.send_keys("000000").await.unwrap();
    browser.click("Verify").await;
    until_shown(&browser, "That code is not correct. 4 tries left.").await;
    code.clear().await.unwrap();
    code.send_keys("424242").await.unwrap();
    browser.click("Verify").await;
    let shown = until_shown(&browser, "Plan documents").await;
    assert!(!shown.contains("Send a code"), "{shown}");
    let documents = browser
        .find_all(Locator::XPath("//ul[@id = 'docs']/li/a"))
        .await
        .unwrap();
    assert!(!documents.is_empty(), "no plan document listed");
    for link in &documents {
        let href = link.attr("href").await.unwrap().unwrap_or_default();
        assert!(href.contains("/documents/"), "{href}");
    }
    screenshots(&browser, "embed-frame-accept").await;
    assert_accessible(&browser, "the framed offer's acceptance step").await;

    // Accept.
    browser.fill("Your full name", "Dana Lee").await;
    browser.click("Accept the offer").await;
    let done = until_shown(&browser, "You accepted this offer").await;
    assert!(done.contains("Thank you, Dana Lee."), "{done}");
    screenshots(&browser, "embed-frame-done").await;

    // The partner reads the acceptance on the quote and receives
    // quote.accepted, signed.
    let qid = quote["id"].as_str().unwrap();
    let (status, read) = call(&server, &key, "GET", &format!("/v1/quotes/{qid}"), None);
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["acceptance"]["name"], "Dana Lee", "{read}");
    assert_eq!(read["acceptance"]["email"], "dana@acme-mfg.com", "{read}");
    let started = Instant::now();
    let accepted = loop {
        let found = receiver
            .arrivals()
            .into_iter()
            .find(|a| a.json()["type"] == "quote.accepted");
        if let Some(found) = found {
            break found;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no quote.accepted after 30 s: {:?}",
            receiver.arrivals()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let data = &accepted.json()["data"];
    assert_eq!(
        (
            &data["quote_id"],
            &data["group_id"],
            &data["name"],
            &data["email"]
        ),
        (
            &json!(qid),
            &json!(gid),
            &json!("Dana Lee"),
            &json!("dana@acme-mfg.com")
        ),
        "{data}"
    );
    assert_eq!(data["accepted_at"], read["acceptance"]["accepted_at"]);
    if let Some(verifier) = Verifier::find() {
        verifier.check(&secret, &accepted);
    }

    // Live mode: only the partner's embed origin may frame the offer.
    operator(&dir, &["partner", "enable-live", &partner, "--force"]);
    let live: Value = serde_json::from_str(&operator(
        &dir,
        &[
            "--json",
            "key",
            "create",
            "--partner",
            &partner,
            "--mode",
            "live",
        ],
    ))
    .unwrap();
    let live_key = live["key"].as_str().unwrap();
    let allowed = site.origin("127.0.0.1");
    operator(&dir, &["partner", "embed-origins", &partner, &allowed]);
    let (live_gid, live_quote) = quoted_group(&server, live_key, "Birch Robotics", "birch.example");
    let live_plan = live_quote["plan"]["name"].as_str().unwrap();
    site.frame("/live", &embed_url(&server, live_key, &live_gid));

    open_framed(&browser, &format!("{allowed}/live")).await;
    assert_eq!(browser.heading().await, live_plan);

    let elsewhere = site.origin("localhost");
    open_framed(&browser, &format!("{elsewhere}/live")).await;
    let blocked = browser.page_text().await;
    assert!(
        !blocked.contains(live_plan) && !blocked.contains("Monthly total"),
        "{elsewhere} framed the live offer: {blocked}"
    );
    // What shows instead is the browser's own error page: nothing of
    // ours, not even the page's structure.
    let ours = browser
        .find_all(Locator::Css("dl.facts, #steps, figure svg"))
        .await
        .unwrap();
    assert!(ours.is_empty(), "the blocked frame shows the offer's parts");
    browser.enter_parent_frame().await.unwrap();
    let path = browser.screenshot("embed-frame-blocked", 390, 844).await;
    assert!(path.exists());
}
