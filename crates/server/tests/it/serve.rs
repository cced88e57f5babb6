//! `serve` migrates the database and says honestly that the HTTP API is not
//! in this release; `migrate` creates or upgrades the database.

use crate::common::{cli, scratch, stdout_ok};

fn sqlite_url(test: &str) -> String {
    format!(
        "sqlite://{}",
        scratch(test).join("partner-api.sqlite").display()
    )
}

#[test]
fn serve_demo_says_the_api_is_not_in_this_release() {
    let url = sqlite_url("serve_demo");
    let out = stdout_ok(cli().args(["serve", "--demo", "--database-url", &url]));
    assert!(out.contains("Database ready: sqlite "), "{out}");
    assert!(out.contains("(1 migration(s) applied)"), "{out}");
    assert!(
        out.contains("the HTTP API (/v1) is not in this release"),
        "{out}"
    );
    assert!(out.contains("rate card 2026.1"), "{out}");
    assert!(out.contains("--demo will create a demo partner"), "{out}");
    assert!(out.contains("partner-api price --census"), "{out}");
    let plain = stdout_ok(cli().args(["serve", "--database-url", &url]));
    assert!(plain.contains("(0 migration(s) applied)"), "{plain}");
    assert!(plain.contains("not in this release"), "{plain}");
    assert!(!plain.contains("--demo"), "{plain}");
}

#[test]
fn version_and_help() {
    let version = stdout_ok(cli().arg("--version"));
    assert!(version.starts_with("partner-api "), "{version}");
    let help = stdout_ok(cli().args(["price", "--help"]));
    for flag in [
        "--census",
        "--plan",
        "--market-plans",
        "--version",
        "--plan-year-start",
        "--allow-age",
    ] {
        assert!(help.contains(flag), "{flag} missing from help: {help}");
    }
}

#[test]
fn migrate_creates_the_database_once_and_reports_json() {
    let url = sqlite_url("migrate_json");
    let first = stdout_ok(cli().args(["migrate", "--json", "--database-url", &url]));
    let v: serde_json::Value = serde_json::from_str(first.trim()).unwrap();
    assert_eq!(v["backend"], "sqlite");
    assert_eq!(v["applied"].as_array().map(Vec::len), Some(1));
    let again = stdout_ok(cli().env("PARTNER_API_DATABASE_URL", &url).arg("migrate"));
    assert!(again.contains("up to date"), "{again}");
}

#[test]
fn migrate_refuses_a_bad_url_in_one_line() {
    let out = cli()
        .args(["migrate", "--database-url", "mysql://x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: database_url must be sqlite://PATH or postgres://"),
        "{err}"
    );
}
