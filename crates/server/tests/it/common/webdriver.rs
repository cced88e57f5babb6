//! A real browser for the tests that walk a page as a person would:
//! Debian's headless `chromium` driven through `chromedriver` over
//! WebDriver (fantoccini), elements found by their labels, texts and roles
//! rather than by ids or classes, screenshots saved under the target
//! directory, and axe-core's accessibility check.
//!
//! Without `/usr/bin/chromium` and `/usr/bin/chromedriver`,
//! [`Browser::start`] returns `None` (the test prints `SKIPPED` and passes),
//! unless `CI` is set: then it fails. The same holds for axe-core, which
//! `.ci/run` installs under `<target>/browser/node`.
//!
//! ```ignore
//! let Some(browser) = Browser::start().await else {
//!     eprintln!("SKIPPED: chromium or chromedriver not installed");
//!     return;
//! };
//! browser.open(&url).await;
//! assert_eq!(browser.heading().await, "Diamond");
//! browser.screenshot("offer", 390, 844).await;
//! assert_accessible(&browser, "the offer page").await;
//! ```

mod accessibility;
mod driver;

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::Value;

pub use crate::common::webdriver::accessibility::{assert_accessible, axe};
use crate::common::webdriver::driver::{Driver, capabilities, driver_request};

/// Debian's `chromium`.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Debian's `chromium-driver`, the same version as [`CHROMIUM`].
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How long chromedriver may take to listen, and a WebDriver session to
/// start.
pub(super) const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether the tests run under CI, where a missing browser or axe-core is
/// a failure rather than a skip.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// The target directory: `CARGO_TARGET_DIR` when set (a relative one is
/// taken from the workspace root), else the workspace's `target/`.
pub fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace.join(dir),
        _ => workspace.join("target"),
    }
}

/// A headless Chromium under its own chromedriver, with one WebDriver
/// session. Derefs to the fantoccini [`Client`] for everything the helpers
/// below do not cover. Dropping it ends the session (Chromium exits) and
/// kills chromedriver's process group (with whatever Chromium left).
pub struct Browser {
    client: Client,
    session: Option<String>,
    driver: Driver,
    /// Chromium's profile, removed once chromedriver is gone.
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver on a free port of 127.0.0.1 and a headless
    /// Chromium session through it. `None` when Chromium or chromedriver
    /// is not installed and `CI` is unset (the caller prints `SKIPPED` and
    /// returns); under `CI` that panics, as does any failure to start.
    pub async fn start() -> Option<Self> {
        let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
            .into_iter()
            .filter(|path| !Path::new(path).exists())
            .collect();
        if !missing.is_empty() {
            assert!(
                !under_ci(),
                "{} missing and CI is set: install Debian's chromium and chromium-driver \
                 packages (.ci/run does)",
                missing.join(" and ")
            );
            return None;
        }
        let profile = tempfile::Builder::new()
            .prefix("chromium-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap_or_else(|e| panic!("cannot create a Chromium profile directory: {e}"));
        let driver = Driver::start(profile.path().join("chromedriver.log")).await;
        let mut builder = ClientBuilder::new(HttpConnector::new());
        builder.capabilities(capabilities(profile.path()));
        let url = format!("http://127.0.0.1:{}", driver.port);
        let client = match tokio::time::timeout(START_TIMEOUT, builder.connect(&url)).await {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => panic!(
                "cannot start Chromium through chromedriver: {e}; its log:\n{}",
                driver.log_text()
            ),
            Err(_) => panic!(
                "Chromium did not start within {START_TIMEOUT:?}; chromedriver's log:\n{}",
                driver.log_text()
            ),
        };
        let session = client
            .session_id()
            .await
            .unwrap_or_else(|e| panic!("no WebDriver session id: {e}"));
        Some(Self {
            client,
            session,
            driver,
            _profile: profile,
        })
    }

    /// Opens `url` and waits for it to load.
    pub async fn open(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("cannot open {url}: {e}"));
    }

    /// The one element that `xpath` finds; fails naming `what` when there
    /// is none or more than one.
    pub async fn one(&self, what: &str, xpath: &str) -> Element {
        let found = self
            .client
            .find_all(Locator::XPath(xpath))
            .await
            .unwrap_or_else(|e| panic!("cannot look for {what} ({xpath}): {e}"));
        let count = found.len();
        let mut found = found.into_iter();
        match (found.next(), found.next()) {
            (Some(element), None) => element,
            (None, _) => panic!(
                "no {what} on {}",
                self.client
                    .current_url()
                    .await
                    .map(String::from)
                    .unwrap_or_default()
            ),
            (Some(_), Some(_)) => panic!("{count} elements are {what}: expected one"),
        }
    }

    /// The text of the page's main heading (its `h1`, the one in `main`
    /// when there is one).
    pub async fn heading(&self) -> String {
        let h1 = self
            .one(
                "the main heading",
                "(//main//h1 | //h1[not(//main//h1)])[1]",
            )
            .await;
        text(&h1).await
    }

    /// The visible text of the whole page.
    pub async fn page_text(&self) -> String {
        text(&self.one("the page body", "//body").await).await
    }

    /// The form field (input, select or textarea) whose label reads
    /// `label`: a `<label for>`, a `<label>` around it, or its
    /// `aria-label`.
    pub async fn field(&self, label: &str) -> Element {
        let l = literal(label);
        let xpath = format!(
            "//*[self::input or self::select or self::textarea][\
             @id = //label[normalize-space() = {l}]/@for \
             or ancestor::label[normalize-space(text()) = {l}] \
             or @aria-label = {l}]"
        );
        self.one(&format!("field labelled {label:?}"), &xpath).await
    }

    /// Types `value` into the field labelled `label`, replacing its text.
    pub async fn fill(&self, label: &str, value: &str) {
        let field = self.field(label).await;
        field
            .clear()
            .await
            .unwrap_or_else(|e| panic!("cannot clear {label:?}: {e}"));
        field
            .send_keys(value)
            .await
            .unwrap_or_else(|e| panic!("cannot type into {label:?}: {e}"));
    }

    /// Chooses the option reading `option` in the select labelled
    /// `label`.
    pub async fn select(&self, label: &str, option: &str) {
        self.field(label)
            .await
            .select_by_label(option)
            .await
            .unwrap_or_else(|e| panic!("cannot choose {option:?} in {label:?}: {e}"));
    }

    /// The button or link whose text (or `aria-label`, or a submit
    /// input's value) reads `name`.
    pub async fn control(&self, name: &str) -> Element {
        let n = literal(name);
        let xpath = format!(
            "//*[self::button or self::a[@href] or @role = 'button' or @role = 'link'][\
             normalize-space() = {n} or @aria-label = {n}] \
             | //input[@type = 'submit' or @type = 'button' or @type = 'reset'][@value = {n}]"
        );
        self.one(&format!("button or link {name:?}"), &xpath).await
    }

    /// Clicks the button or link `name` (and waits for the page it
    /// opens, when it opens one).
    pub async fn click(&self, name: &str) {
        self.control(name)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("cannot click {name:?}: {e}"));
    }

    /// The value shown for the term `term` of a description list (the
    /// `dd` after the `dt` reading `term`).
    pub async fn definition(&self, term: &str) -> String {
        let xpath = format!(
            "//dt[normalize-space() = {}]/following-sibling::dd[1]",
            literal(term)
        );
        text(&self.one(&format!("value of {term:?}"), &xpath).await).await
    }

    /// Resizes the viewport to `width`×`height` CSS pixels (the window is
    /// grown by whatever Chromium keeps for itself) and saves a PNG of it
    /// as `<target>/screenshots/<name>-<width>x<height>.png`; returns its
    /// path.
    pub async fn screenshot(&self, name: &str, width: u32, height: u32) -> PathBuf {
        self.resize_viewport(width, height).await;
        let png = self
            .client
            .screenshot()
            .await
            .unwrap_or_else(|e| panic!("cannot take a screenshot of {name}: {e}"));
        let size =
            png_size(&png).unwrap_or_else(|| panic!("the screenshot of {name} is not a PNG"));
        assert_eq!(
            size,
            (width, height),
            "the screenshot of {name} is not {width}x{height}"
        );
        let dir = target_dir().join("screenshots");
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        let path = dir.join(format!("{name}-{width}x{height}.png"));
        std::fs::write(&path, &png)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        eprintln!("screenshot: {} ({} bytes)", path.display(), png.len());
        path
    }

    /// Sets the window so that its viewport is `width`×`height`.
    async fn resize_viewport(&self, width: u32, height: u32) {
        let (mut outer_w, mut outer_h) = (width, height);
        for _ in 0..3 {
            self.client
                .set_window_size(outer_w, outer_h)
                .await
                .unwrap_or_else(|e| panic!("cannot resize the window to {outer_w}x{outer_h}: {e}"));
            let (inner_w, inner_h) = self.viewport().await;
            if (inner_w, inner_h) == (width, height) {
                return;
            }
            outer_w = (outer_w + width).saturating_sub(inner_w);
            outer_h = (outer_h + height).saturating_sub(inner_h);
        }
        panic!(
            "cannot make the viewport {width}x{height}: it is {:?}",
            self.viewport().await
        );
    }

    /// The viewport's size in CSS pixels.
    async fn viewport(&self) -> (u32, u32) {
        let size = self
            .client
            .execute("return [window.innerWidth, window.innerHeight];", vec![])
            .await
            .unwrap_or_else(|e| panic!("cannot read the viewport size: {e}"));
        let side = |i: usize| {
            size.get(i)
                .and_then(Value::as_u64)
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or_else(|| panic!("not a viewport size: {size}"))
        };
        (side(0), side(1))
    }
}

impl Deref for Browser {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

impl Drop for Browser {
    /// Ends the session, so that Chromium exits; the driver's drop then
    /// kills chromedriver.
    fn drop(&mut self) {
        if let Some(session) = &self.session {
            let _ = driver_request(self.driver.port, "DELETE", &format!("/session/{session}"));
        }
    }
}

/// The visible text of `element`.
pub async fn text(element: &Element) -> String {
    element
        .text()
        .await
        .unwrap_or_else(|e| panic!("cannot read an element's text: {e}"))
}

/// `value` as an XPath 1.0 string literal (XPath has no escapes: a value
/// with both kinds of quote is a `concat`).
pub fn literal(value: &str) -> String {
    if !value.contains('\'') {
        format!("'{value}'")
    } else if !value.contains('"') {
        format!("\"{value}\"")
    } else {
        let parts: Vec<String> = value.split('\'').map(|p| format!("'{p}'")).collect();
        format!("concat({})", parts.join(", \"'\", "))
    }
}

/// The width and height of a PNG, from its IHDR chunk.
fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
        return None;
    }
    let be = |at: usize| -> Option<u32> {
        let bytes: [u8; 4] = png.get(at..at + 4)?.try_into().ok()?;
        Some(u32::from_be_bytes(bytes))
    };
    Some((be(16)?, be(20)?))
}
