//! The embed-session offer page in a real browser: the binary runs `serve
//! --demo`, a group is created, censused and quoted over HTTP, and headless
//! Chromium (Debian's `chromium`) renders the session's URL to the DOM and
//! to a screenshot (copied to `target/embed-screenshot.png`).
//!
//! Without `/usr/bin/chromium` the test prints `SKIPPED` and passes, unless
//! `CI` is set: then it fails (`.ci/run` installs Chromium).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::scratch;
use crate::common::serve_process::{ServeDemo, Served};

const CHROMIUM: &str = "/usr/bin/chromium";

/// Starts `serve --demo` on a free port over a fresh SQLite file in `dir`.
fn start(dir: &Path) -> Served {
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    ServeDemo::new(dir, &url).start()
}

/// One HTTP/1.1 request over a plain socket; returns (status, body).
fn http(server: &Served, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let mut s = std::net::TcpStream::connect(&server.addr).unwrap();
    let body = body.to_string();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.addr,
        server.demo_key(),
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or_default())
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

/// The census of the demo group.
fn census() -> Value {
    json!({"members": [
        {"external_id": "E1", "first_name": "Ana", "last_name": "Diaz", "dob": "1988-04-12",
         "zip": "60601", "dependents": [{"relationship": "child", "name": "Leo", "dob": "2016-09-30"}]},
        {"external_id": "E2", "first_name": "Ben", "last_name": "Okafor", "dob": "1979-11-02", "zip": "60614"},
        {"external_id": "E3", "first_name": "Cy", "last_name": "Moss", "dob": "1992-01-20", "zip": "60601"},
    ]})
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
    let server = start(&dir);

    let (status, group) = http(
        &server,
        "POST",
        "/v1/groups",
        &json!({"company_name": "Acme Manufacturing", "domain": "acme-mfg.com",
                "address": {"line1": "1 Main St", "city": "Chicago", "state": "IL", "zip": "60601"}}),
    );
    assert_eq!(status, 201, "{group}");
    let gid = group["id"].as_str().unwrap();
    let (status, body) = http(
        &server,
        "PUT",
        &format!("/v1/groups/{gid}/census"),
        &census(),
    );
    assert_eq!(status, 200, "{body}");
    // The market comparison runs in the server's worker: retry while 409.
    let started = Instant::now();
    let quote = loop {
        let (status, body) = http(
            &server,
            "POST",
            &format!("/v1/groups/{gid}/quotes"),
            &json!({}),
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
            "rates still pending"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let (status, session) = http(
        &server,
        "POST",
        &format!("/v1/groups/{gid}/embed-sessions"),
        &json!({}),
    );
    assert_eq!(status, 201, "{session}");
    let url = session["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("http://{}/embed/", server.addr)),
        "{url}"
    );
    let plan = quote["plan"]["name"].as_str().unwrap();

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
