//! axe-core's accessibility check of the page a browser shows.

use std::path::PathBuf;

use fantoccini::Client;
use serde::Deserialize;

use crate::common::webdriver::{target_dir, under_ci};

/// One rule that axe-core found broken on the page.
#[derive(Debug, Clone, Deserialize)]
pub struct Violation {
    /// The rule, e.g. `color-contrast`.
    pub id: String,
    /// `minor`, `moderate`, `serious` or `critical`.
    pub impact: Option<String>,
    /// What the rule asks for, in a sentence.
    pub help: String,
    /// Where the rule is explained.
    #[serde(rename = "helpUrl")]
    pub help_url: String,
    /// A CSS selector of each element that breaks it.
    pub targets: Vec<String>,
}

impl Violation {
    /// Whether it is `serious` or `critical`.
    pub fn is_serious(&self) -> bool {
        matches!(self.impact.as_deref(), Some("serious" | "critical"))
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {} [{}] {}",
            self.id,
            self.impact.as_deref().unwrap_or("no impact"),
            self.help,
            self.targets.join(", "),
            self.help_url
        )
    }
}

/// Where `.ci/run` installs axe-core.
pub fn axe_core_path() -> PathBuf {
    target_dir().join("browser/node/node_modules/axe-core/axe.min.js")
}

/// Runs axe-core's rules on the page `client` shows; returns the broken
/// ones. `None` when axe-core is not installed and `CI` is unset (a note
/// says so); under `CI` that panics.
pub async fn axe(client: &Client) -> Option<Vec<Violation>> {
    let path = axe_core_path();
    let source = match std::fs::read_to_string(&path) {
        Ok(source) => source,
        Err(e) => {
            assert!(
                !under_ci(),
                "cannot read axe-core at {} ({e}) and CI is set: .ci/run installs it",
                path.display()
            );
            eprintln!(
                "NOTE: axe-core not installed at {} ({e}): accessibility check skipped \
                 (`npm install --prefix <target>/browser/node axe-core@<version of .ci/run>`)",
                path.display()
            );
            return None;
        }
    };
    client
        .execute(&format!("{source}\n;return typeof axe;"), vec![])
        .await
        .unwrap_or_else(|e| panic!("cannot load axe-core into the page: {e}"));
    let result = client
        .execute_async(
            r"const done = arguments[arguments.length - 1];
              axe.run(document, { resultTypes: ['violations'] }).then(
                r => done({ violations: r.violations.map(v => ({
                  id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
                  targets: v.nodes.map(n => n.target.map(
                    t => Array.isArray(t) ? t.join(' >>> ') : String(t)).join(' > ')),
                })) }),
                e => done({ error: String(e) }));",
            vec![],
        )
        .await
        .unwrap_or_else(|e| panic!("cannot run axe-core: {e}"));
    if let Some(error) = result.get("error") {
        panic!("axe-core failed: {error}");
    }
    let violations = result.get("violations").cloned().unwrap_or_default();
    Some(
        serde_json::from_value(violations)
            .unwrap_or_else(|e| panic!("unexpected axe-core result ({e}): {result}")),
    )
}

/// Fails listing every `serious` or `critical` axe-core violation of the
/// page `client` shows (`page` names it); the lesser ones are printed.
pub async fn assert_accessible(client: &Client, page: &str) {
    let Some(violations) = axe(client).await else {
        return;
    };
    let (serious, minor): (Vec<_>, Vec<_>) = violations.iter().partition(|v| v.is_serious());
    for v in &minor {
        eprintln!("axe-core on {page}: {v}");
    }
    assert!(
        serious.is_empty(),
        "axe-core: {} serious or critical violation(s) on {page}:\n{}",
        serious.len(),
        serious
            .iter()
            .map(|v| format!("- {v}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
