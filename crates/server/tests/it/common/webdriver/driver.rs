//! Chromedriver in its own process group: started on a free port, asked over plain HTTP.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::webdriver::{CHROMEDRIVER, CHROMIUM, START_TIMEOUT};

/// A free TCP port on 127.0.0.1 (free when asked: chromedriver binds it
/// right after).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|e| panic!("cannot bind a port on 127.0.0.1: {e}"));
    listener
        .local_addr()
        .unwrap_or_else(|e| panic!("no local address: {e}"))
        .port()
}

/// One plain HTTP/1.1 request to chromedriver; returns the response's
/// body, or `None` when it does not answer in time. (Chromedriver keeps
/// the connection open, `Connection: close` or not: the body is read to
/// its `Content-Length`.)
pub(super) fn driver_request(port: u16, method: &str, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n"
    )
    .ok()?;
    let mut response = Vec::new();
    let mut chunk = [0; 4096];
    loop {
        if let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(response.get(..end)?).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse().ok())?;
            let body = response.get(end + 4..)?;
            if body.len() >= length {
                return Some(String::from_utf8_lossy(body.get(..length)?).into_owned());
            }
        }
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        response.extend_from_slice(chunk.get(..n)?);
    }
}

/// The capabilities of a headless Chromium on a fresh profile in
/// `profile`.
pub(super) fn capabilities(profile: &Path) -> serde_json::Map<String, Value> {
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": [
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                format!("--user-data-dir={}", profile.display()),
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--hide-scrollbars",
                "--window-size=1280,800",
            ],
        },
    });
    let Value::Object(caps) = caps else {
        unreachable!("a JSON object literal")
    };
    caps
}

/// A chromedriver on a port of 127.0.0.1, in its own process group, which
/// the Chromium processes it starts join: dropping it kills them all.
pub(super) struct Driver {
    child: Child,
    pub(super) port: u16,
    log: PathBuf,
}

impl Driver {
    /// Starts chromedriver on a free port, logging to `log`, and waits
    /// until it is ready for sessions.
    pub(super) async fn start(log: PathBuf) -> Self {
        let port = free_port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {CHROMEDRIVER}: {e}"));
        let mut driver = Self { child, port, log };
        let started = Instant::now();
        loop {
            let status = driver_request(port, "GET", "/status")
                .and_then(|body| serde_json::from_str::<Value>(&body).ok());
            if status.is_some_and(|s| s.pointer("/value/ready") == Some(&Value::Bool(true))) {
                return driver;
            }
            if let Ok(Some(exit)) = driver.child.try_wait() {
                panic!(
                    "chromedriver exited ({exit}); its log:\n{}",
                    driver.log_text()
                );
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "chromedriver is not ready on 127.0.0.1:{port} after {START_TIMEOUT:?}; its log:\n{}",
                driver.log_text()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// What chromedriver logged so far.
    pub(super) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
