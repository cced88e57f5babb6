//! `cargo xtask tidy`: repository hygiene checks.
//!
//! - every `.rs` file starts with a `//!` doc comment;
//! - no trailing whitespace in `.rs`, `.toml` and `.md` files (generated rate
//!   cards excepted);
//! - dependencies point inward: the pure libraries (`pricing-core`, and
//!   `webhooks`, the signing library the domain and partners use) have no
//!   database, web, async runtime or HTTP client crate in their normal
//!   dependency trees, and the adapters (`store-diesel`, `http-api`, `mail`)
//!   do not depend on each other;
//! - every crate under `crates/` has its heading (`### \`crates/NAME\``) in
//!   `docs/architecture.md`, and every such heading names a crate there;
//! - no source file outside tests is longer than 600 lines;
//! - no HTTP handler (`crates/http-api/src/routes/`) names a storage type,
//!   and none calls more than one service method: handlers parse, call one
//!   use case and render; the services alone reach the store.
//!
//! The same checks run as the `tidy` test, so `cargo test --workspace`
//! enforces them.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// The pure core crate.
const CORE: &str = "pricing-core";

/// Pure libraries besides the core, held to the same rule.
const PURE: [&str; 1] = ["webhooks"];

/// Crates that must not appear in the core's normal dependency tree.
const BANNED_IN_CORE: [&str; 8] = [
    "diesel",
    "diesel-async",
    "actix-web",
    "tokio",
    "reqwest",
    "hyper",
    "ureq",
    "awc",
];

/// Adapter crates, which must not depend on each other.
const ADAPTERS: [&str; 3] = ["store-diesel", "http-api", "mail"];

/// Directories never checked.
const SKIPPED_DIRS: [&str; 3] = ["target", ".git", "node_modules"];

/// Files whose trailing whitespace is not checked (generated output).
const WHITESPACE_EXEMPT_DIR: &str = "rate-cards";

/// Runs every check and fails with the list of offenders.
pub(crate) fn check(root: &Path) -> anyhow::Result<()> {
    let files = workspace_files(root)?;
    let mut problems = Vec::new();
    problems.extend(missing_doc_headers(root, &files)?);
    problems.extend(trailing_whitespace(root, &files)?);
    problems.extend(long_files(root, &files)?);
    problems.extend(undocumented_crates(root)?);
    problems.extend(handlers_naming_the_store(root, &files)?);
    problems.extend(handlers_calling_several_services(root, &files)?);
    match dependency_direction(root) {
        Ok(found) => problems.extend(found),
        Err(err) => problems.push(format!("cannot check the dependency direction: {err:#}")),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        bail!(
            "tidy found {} problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        )
    }
}

/// The workspace's files, relative to the root: tracked and untracked but not
/// ignored when the root is a git work tree, otherwise every file outside
/// `target/` and `.git/`.
fn workspace_files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let output = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output();
    let mut files: Vec<PathBuf> = match output {
        Ok(output) if output.status.success() => String::from_utf8(output.stdout)
            .context("git ls-files printed a path that is not UTF-8")?
            .split('\0')
            .filter(|path| !path.is_empty())
            .map(PathBuf::from)
            // Deleted but still tracked files are not there to check.
            .filter(|path| root.join(path).is_file())
            .collect(),
        _ => {
            let mut files = Vec::new();
            walk(root, Path::new(""), &mut files)?;
            files
        }
    };
    files.retain(|path| {
        !path
            .components()
            .any(|c| SKIPPED_DIRS.iter().any(|skip| c.as_os_str() == *skip))
    });
    files.sort();
    files.dedup();
    Ok(files)
}

/// Collects the files under `root/relative`, skipping [`SKIPPED_DIRS`].
fn walk(root: &Path, relative: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let dir = root.join(relative);
    let entries = fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name();
        let path = relative.join(&name);
        let kind = entry
            .file_type()
            .with_context(|| format!("cannot stat {}", path.display()))?;
        if kind.is_dir() {
            if !name.to_str().is_some_and(|n| SKIPPED_DIRS.contains(&n)) {
                walk(root, &path, files)?;
            }
        } else if kind.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| extensions.contains(&ext))
}

/// `.rs` files that do not start with `//!`.
fn missing_doc_headers(root: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    for path in files.iter().filter(|path| has_extension(path, &["rs"])) {
        let text = fs::read_to_string(root.join(path))
            .with_context(|| format!("cannot read {}", path.display()))?;
        if !text.starts_with("//!") {
            problems.push(format!(
                "{}: does not start with a `//!` doc comment",
                path.display()
            ));
        }
    }
    Ok(problems)
}

/// Most lines of a source file outside tests.
const MAX_LINES: usize = 600;

/// Whether `path` is test code: a `tests` directory, a `tests.rs` module,
/// benches and examples.
fn is_test_code(path: &Path) -> bool {
    path.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("tests" | "benches" | "examples")
        )
    }) || path.file_name().and_then(|n| n.to_str()) == Some("tests.rs")
}

/// Source files outside tests longer than [`MAX_LINES`].
fn long_files(root: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    for path in files
        .iter()
        .filter(|p| has_extension(p, &["rs"]) && !is_test_code(p))
    {
        let text = fs::read_to_string(root.join(path))
            .with_context(|| format!("cannot read {}", path.display()))?;
        let lines = text.lines().count();
        if lines > MAX_LINES {
            problems.push(format!(
                "{}: {lines} lines; split it (at most {MAX_LINES} outside tests)",
                path.display()
            ));
        }
    }
    Ok(problems)
}

/// The architecture document.
const ARCHITECTURE: &str = "docs/architecture.md";

/// Crates under `crates/` without their heading in the architecture
/// document, and headings that name no crate.
fn undocumented_crates(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut crates = BTreeSet::new();
    for entry in fs::read_dir(root.join("crates")).context("cannot list crates/")? {
        let entry = entry.context("cannot list crates/")?;
        if entry.path().join("Cargo.toml").is_file() {
            crates.insert(entry.file_name().to_string_lossy().into_owned());
        }
    }
    let text = fs::read_to_string(root.join(ARCHITECTURE))
        .with_context(|| format!("cannot read {ARCHITECTURE}"))?;
    let documented = documented_crates(&text);
    let mut problems: Vec<String> = crates
        .difference(&documented)
        .map(|c| format!("{ARCHITECTURE}: crates/{c} has no `### `crates/{c}`` section"))
        .collect();
    problems.extend(
        documented.difference(&crates).map(|c| {
            format!("{ARCHITECTURE}: a section describes crates/{c}, which does not exist")
        }),
    );
    Ok(problems)
}

/// The crate names of the document's `### \`crates/NAME\`` headings.
fn documented_crates(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("### `crates/"))
        .filter_map(|rest| rest.strip_suffix('`'))
        .map(str::to_owned)
        .collect()
}

/// The HTTP handlers' source files with their text.
fn handler_sources(root: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let routes = Path::new("crates/http-api/src/routes");
    files
        .iter()
        .filter(|p| p.starts_with(routes) && has_extension(p, &["rs"]))
        .map(|path| {
            let text = fs::read_to_string(root.join(path))
                .with_context(|| format!("cannot read {}", path.display()))?;
            Ok((path.clone(), text))
        })
        .collect()
}

/// Handlers that name a storage type (`domain::store`, `store_diesel`).
fn handlers_naming_the_store(root: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    for (path, text) in handler_sources(root, files)? {
        for needle in ["domain::store", "store_diesel"] {
            if text.contains(needle) {
                problems.push(format!(
                    "{}: a handler names `{needle}`; call a service instead",
                    path.display()
                ));
            }
        }
    }
    Ok(problems)
}

/// Fields of the application state that are not services: settings and
/// the facts a handler renders with.
const NOT_SERVICES: [&str; 3] = ["config", "clock", "plans"];

/// Handlers that call more than one service method.
fn handlers_calling_several_services(
    root: &Path,
    files: &[PathBuf],
) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    for (path, text) in handler_sources(root, files)? {
        for (handler, calls) in service_calls(&text) {
            if calls.len() > 1 {
                problems.push(format!(
                    "{}: handler `{handler}` calls {}; give the use case one service method",
                    path.display(),
                    calls.join(", ")
                ));
            }
        }
    }
    Ok(problems)
}

/// For each `pub async fn` of `source`, the `state.<service>.<method>(`
/// calls in its body, whitespace ignored.
fn service_calls(source: &str) -> Vec<(String, Vec<String>)> {
    let compact: String = source.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    for chunk in compact.split("pubasyncfn").skip(1) {
        let name: String = chunk.chars().take_while(|c| is_ident(*c)).collect();
        let mut calls = Vec::new();
        let mut rest = chunk;
        while let Some(at) = rest.find("state.") {
            rest = rest.get(at + "state.".len()..).unwrap_or_default();
            let field: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            let after = rest.get(field.len()..).unwrap_or_default();
            let Some(method_start) = after.strip_prefix('.') else {
                continue;
            };
            let method: String = method_start.chars().take_while(|c| is_ident(*c)).collect();
            let called = method_start
                .get(method.len()..)
                .is_some_and(|r| r.starts_with('('));
            if called && !NOT_SERVICES.contains(&field.as_str()) {
                calls.push(format!("{field}.{method}"));
            }
        }
        out.push((name, calls));
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Lines ending in spaces or tabs in `.rs`, `.toml` and `.md` files.
fn trailing_whitespace(root: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    let checked = files.iter().filter(|path| {
        has_extension(path, &["rs", "toml", "md"]) && !path.starts_with(WHITESPACE_EXEMPT_DIR)
    });
    for path in checked {
        let text = fs::read_to_string(root.join(path))
            .with_context(|| format!("cannot read {}", path.display()))?;
        for (index, line) in text.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.ends_with([' ', '\t']) {
                problems.push(format!(
                    "{}:{}: trailing whitespace",
                    path.display(),
                    index + 1
                ));
            }
        }
    }
    Ok(problems)
}

/// Dependency-direction violations, from `cargo tree`.
fn dependency_direction(root: &Path) -> anyhow::Result<Vec<String>> {
    let members = workspace_members(root)?;
    let mut problems = Vec::new();
    if !members.contains(CORE) {
        bail!("the workspace has no `{CORE}` package");
    }
    for krate in std::iter::once(CORE).chain(PURE.iter().copied().filter(|p| members.contains(*p)))
    {
        for found in dependencies(root, krate)?.intersection(&banned_in_core()) {
            problems.push(format!(
                "{krate} depends on `{found}` (normal dependency tree)"
            ));
        }
    }
    for adapter in ADAPTERS.iter().filter(|a| members.contains(**a)) {
        let tree = dependencies(root, adapter)?;
        for other in ADAPTERS.iter().filter(|other| *other != adapter) {
            if tree.contains(*other) {
                problems.push(format!(
                    "adapter {adapter} depends on adapter {other}; adapters never depend on each other"
                ));
            }
        }
    }
    Ok(problems)
}

fn banned_in_core() -> BTreeSet<String> {
    BANNED_IN_CORE
        .iter()
        .map(|name| (*name).to_owned())
        .collect()
}

/// The cargo executable that runs us, or `cargo` from `PATH`.
pub(crate) fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))
}

/// Names of the workspace's packages.
fn workspace_members(root: &Path) -> anyhow::Result<BTreeSet<String>> {
    let output = Command::new(cargo())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("cannot parse cargo metadata")?;
    let packages = metadata
        .get("packages")
        .and_then(serde_json::Value::as_array)
        .context("cargo metadata has no packages")?;
    packages
        .iter()
        .map(|package| {
            package
                .get("name")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
                .context("cargo metadata package without a name")
        })
        .collect()
}

/// Names of the crates in `package`'s normal dependency tree (all targets),
/// excluding the package itself.
fn dependencies(root: &Path, package: &str) -> anyhow::Result<BTreeSet<String>> {
    let output = Command::new(cargo())
        .args([
            "tree", "-p", package, "-e", "normal", "--prefix", "none", "--target", "all",
        ])
        .current_dir(root)
        .output()
        .context("cannot run cargo tree")?;
    if !output.status.success() {
        bail!(
            "cargo tree -p {package} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let stdout = String::from_utf8(output.stdout).context("cargo tree printed non-UTF-8")?;
    Ok(parse_tree(&stdout, package))
}

/// Crate names from `cargo tree --prefix none` output, minus `package`.
fn parse_tree(output: &str, package: &str) -> BTreeSet<String> {
    output
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != package)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy() {
        let root = crate::workspace_root().unwrap();
        if let Err(err) = check(&root) {
            panic!("{err:#}");
        }
    }

    #[test]
    fn test_code_is_told_apart() {
        for test in [
            "crates/server/tests/it/cli.rs",
            "crates/domain/src/services/quotes/tests.rs",
            "crates/store-diesel/benches/store.rs",
            "crates/store-diesel/examples/census-crash-writer.rs",
        ] {
            assert!(is_test_code(Path::new(test)), "{test}");
        }
        assert!(!is_test_code(Path::new(
            "crates/domain/src/services/quotes.rs"
        )));
        assert!(!is_test_code(Path::new(
            "crates/domain/src/tests_helper.rs"
        )));
    }

    #[test]
    fn finds_the_service_calls_of_each_handler() {
        let source = "pub async fn one(state: X) { state\n  .groups\n  .get(&id).await?; state.config.limits.x(); }\n\
                      pub async fn two(state: X) { state.quotes.check(); state.quotes.create(); state.clock.now_ms(); }";
        assert_eq!(
            service_calls(source),
            [
                ("one".to_owned(), vec!["groups.get".to_owned()]),
                (
                    "two".to_owned(),
                    vec!["quotes.check".to_owned(), "quotes.create".to_owned()]
                ),
            ]
        );
    }

    #[test]
    fn reads_the_crate_headings_of_the_architecture_document() {
        let text =
            "## Code map\n### `crates/domain`\ntext `crates/x`\n### `crates/mail`\n### `xtask/`\n";
        assert_eq!(
            documented_crates(text).into_iter().collect::<Vec<_>>(),
            ["domain", "mail"]
        );
    }

    #[test]
    fn parses_cargo_tree_output() {
        let output = "pricing-core v0.1.0 (/x/crates/pricing-core)\nserde v1.0.228\nserde_derive v1.0.228 (proc-macro)\nserde v1.0.228 (*)\n";
        let names = parse_tree(output, "pricing-core");
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["serde", "serde_derive"]
        );
    }
}
