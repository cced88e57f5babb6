//! `serve`: says honestly that the HTTP API is not in this release.

use crate::common::{cli, stdout_ok};

#[test]
fn serve_demo_says_the_api_is_not_in_this_release() {
    let out = stdout_ok(cli().args(["serve", "--demo"]));
    assert!(
        out.contains("the HTTP API (/v1) is not in this release"),
        "{out}"
    );
    assert!(out.contains("rate card 2026.1"), "{out}");
    assert!(out.contains("--demo will create a demo partner"), "{out}");
    assert!(out.contains("partner-api price --census"), "{out}");
    let plain = stdout_ok(cli().arg("serve"));
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
