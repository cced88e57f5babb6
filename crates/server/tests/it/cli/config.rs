//! Migrating on any command, and the configuration layers: file, then env, then flag.

use std::process::Command;

use serde_json::Value;

use crate::cli::{Sandbox, is_id};
use crate::common::{fails, ok, stdout_ok};

#[test]
fn a_fresh_database_is_migrated_by_any_command() {
    let s = Sandbox::sqlite();
    let prt = s.partner("broker");
    assert!(is_id(&prt, "prt_"));
    let v = s.json(&["migrate"]);
    assert_eq!(v["applied"], serde_json::json!([]));
}

#[test]
fn config_layers_file_then_env_then_flag() {
    let s = Sandbox::sqlite();
    let dir = s.dir.path();
    std::fs::write(
        dir.join("partner-api.toml"),
        "database_url = \"sqlite://from-file.sqlite\"\n[secrets]\nsealing_key_file = \"file.key\"\n",
    )
    .unwrap();
    let migrate = |cmd: &mut Command| -> Value {
        ok(cmd.args(["migrate", "--json", "--config", "partner-api.toml"]))
    };
    // The sandbox's own database variable is removed to see the file.
    let mut cmd = s.cmd();
    cmd.env_remove("PARTNER_API_DATABASE_URL");
    assert_eq!(migrate(&mut cmd)["database"], "sqlite from-file.sqlite");
    assert!(dir.join("from-file.sqlite").exists());

    let mut cmd = s.cmd();
    cmd.env("PARTNER_API_DATABASE_URL", "sqlite://from-env.sqlite");
    assert_eq!(migrate(&mut cmd)["database"], "sqlite from-env.sqlite");

    let mut cmd = s.cmd();
    cmd.env("PARTNER_API_DATABASE_URL", "sqlite://from-env.sqlite")
        .args(["--database-url", "sqlite://from-flag.sqlite"]);
    let v = migrate(&mut cmd);
    assert_eq!(v["database"], "sqlite from-flag.sqlite");
    assert_eq!(
        v["applied"].as_array().map(Vec::len),
        Some(testkit::db::sqlite_migrations())
    );

    // Without the sandbox's variable, the file's key file is used.
    let mut cmd = s.cmd();
    cmd.env_remove("PARTNER_API_SECRETS__SEALING_KEY_FILE")
        .args([
            "--config",
            "partner-api.toml",
            "partner",
            "create",
            "--name",
            "A",
            "--kind",
            "broker",
        ]);
    stdout_ok(&mut cmd);
    assert!(dir.join("file.key").exists());
    assert!(!dir.join("data").exists());
}

#[test]
fn a_bad_config_value_is_one_line_naming_the_key() {
    let s = Sandbox::sqlite();
    std::fs::write(
        s.dir.path().join("bad.toml"),
        "[rate_limits]\nrequests_per_minute = 0\n",
    )
    .unwrap();
    let line = s.fails(&["--config", "bad.toml", "migrate"]);
    assert_eq!(
        line,
        "error: rate_limits.requests_per_minute must be at least 1, got 0 (from config file bad.toml)"
    );
    std::fs::write(
        s.dir.path().join("typo.toml"),
        "[pricing]\nwait_budget = 5\n",
    )
    .unwrap();
    assert_eq!(
        s.fails(&["--config", "typo.toml", "partner", "list"]),
        "error: unknown key `pricing.wait_budget` in config file typo.toml"
    );
    let line = fails(
        s.cmd()
            .env("PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE", "-1")
            .args(["key", "list", "--partner", "prt_000000000000"]),
    );
    assert_eq!(
        line,
        "error: webhooks.retry_time_scale must be a finite number above 0, got -1 (from environment variable PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE)"
    );
    let line = s.fails(&["serve", "--listen", "localhost:80"]);
    assert_eq!(
        line,
        "error: listen must be a socket address like 127.0.0.1:8080, got \"localhost:80\" (from flag --listen)"
    );
    let v = s.fails_json(&["--config", "missing.toml", "migrate"]);
    assert_eq!(v["error"], "invalid_config");
    assert_eq!(
        v["message"],
        "cannot read config file missing.toml: No such file or directory (os error 2)"
    );
    // A variable with the prefix that names no key is ignored.
    let v = ok(s
        .cmd()
        .env("PARTNER_API_TEST_POSTGRES_URL", "postgres://nowhere/x")
        .env("PARTNER_API_NO_SUCH_KEY", "1")
        .args(["--json", "migrate"]));
    assert_eq!(v["backend"], "sqlite");
}
