//! The partner and key commands: creating, showing, listing, rotating, one-line errors.

use serde_json::{Value, json};

use crate::cli::{Sandbox, is_id, is_rfc3339_utc};
use crate::common::string;

fn partner_create_human_and_json(s: &Sandbox) {
    let out = s.run(&["partner", "create", "--name", "Acme", "--kind", "broker"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    let id = out.trim_end();
    assert!(is_id(id, "prt_"), "{out}");

    let v = s.json(&[
        "partner",
        "create",
        "--name",
        "Payroll Co",
        "--kind",
        "hr_platform",
    ]);
    assert!(is_id(string(&v, "/id"), "prt_"), "{v}");
    assert_eq!(v["name"], "Payroll Co");
    assert_eq!(v["kind"], "hr_platform");
    assert_eq!(v["benefits_admin"], "service");
    assert_eq!(v["live_enabled"], false);
    assert_eq!(v["capabilities"], serde_json::json!([]));

    let v = s.json(&[
        "partner",
        "create",
        "--name",
        "Self Admin",
        "--kind",
        "hr_platform",
        "--benefits-admin",
        "partner",
    ]);
    assert_eq!(v["benefits_admin"], "partner");

    let shown = s.json(&["partner", "show", id]);
    assert_eq!(shown["kind"], "broker");
    assert_eq!(shown["benefits_admin"], "partner");
    assert_eq!(shown["capabilities"], serde_json::json!(["elections"]));
    let human = s.run(&["partner", "show", id]);
    assert!(human.contains("Acme") && human.contains(id), "{human}");

    let list = s.json(&["partner", "list"]);
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    // Oldest first to the second, then by id: all three may share a second.
    assert!(ids.contains(&id), "{list}");
    let human = s.run(&["partner", "list"]);
    assert!(
        human.contains("Payroll Co") && human.contains(id),
        "{human}"
    );
}

fn test_key_show_returns_the_same_key(s: &Sandbox) {
    let prt = s.partner("broker");
    // The key alone on stdout (`KEY=$(partner-api key create …)`), its
    // record on stderr.
    let (out, aside) = crate::common::answer_and_aside(s.cmd().args([
        "key",
        "create",
        "--partner",
        &prt,
        "--mode",
        "test",
    ]));
    let key = out.strip_suffix('\n').unwrap();
    assert!(key.starts_with("psk_test_") && key.len() == 41, "{out}");
    assert!(aside.contains(&format!("test key for {prt}")), "{aside}");
    let list = s.json(&["key", "list", "--partner", &prt]);
    let id = list[0]["id"].as_str().unwrap();
    assert!(is_id(id, "key_"), "{list}");
    assert_eq!(s.run(&["key", "show", id]).trim_end(), key);
    let shown = s.json(&["key", "show", id]);
    assert_eq!(shown["key"], key);
    assert_eq!(shown["mode"], "test");

    let (key2, id2, v) = s.key(&prt, "test", &[]);
    assert_eq!(v["partner_id"], prt.as_str());
    assert_eq!(v["mode"], "test");
    assert_eq!(s.json(&["key", "show", &id2])["key"], key2.as_str());

    // The key file was created in the sandbox, private.
    let meta = std::fs::metadata(s.key_file()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
    assert!(meta.len() >= 64);

    // A revoked test key is not shown again.
    assert_eq!(
        s.run(&["key", "revoke", &id2]).trim_end(),
        format!("revoked {id2}")
    );
    let line = s.fails(&["key", "show", &id2]);
    assert_eq!(
        line,
        format!("error: cannot show {id2}: the key is revoked")
    );
}

fn key_list_never_prints_the_key(s: &Sandbox) {
    let prt = s.partner("broker");
    let (test_key, test_id, _) = s.key(&prt, "test", &[]);
    let (live_key, live_id, _) = s.key(&prt, "live", &[]);
    let human = s.run(&["key", "list", "--partner", &prt]);
    let json = s.json(&["key", "list", "--partner", &prt]);
    for text in [human.as_str(), &json.to_string()] {
        assert!(
            !text.contains(&test_key) && !text.contains(&live_key),
            "{text}"
        );
        assert!(text.contains(&test_id) && text.contains(&live_id), "{text}");
    }
    let keys = json.as_array().unwrap();
    assert_eq!(keys.len(), 2);
    for k in keys {
        assert!(k.get("key").is_none(), "{k}");
        assert!(is_rfc3339_utc(k["created_at"].as_str().unwrap()), "{k}");
        assert_eq!(k["revoked"], false);
        assert_eq!(k["revoked_at"], Value::Null);
        let prefix = k["prefix"].as_str().unwrap();
        assert!(
            prefix.starts_with("psk_test_") || prefix.starts_with("psk_live_"),
            "{k}"
        );
    }
    assert!(
        human.contains(" test ") && human.contains(" live "),
        "{human}"
    );
}

fn live_keys_rotate(s: &Sandbox) {
    let prt = s.partner("broker");
    // Without enable-live the key is still minted (the 403 is HTTP's).
    let (out, aside) = crate::common::answer_and_aside(s.cmd().args([
        "key",
        "create",
        "--partner",
        &prt,
        "--mode",
        "live",
    ]));
    let first = out.strip_suffix('\n').unwrap();
    assert!(first.starts_with("psk_live_") && first.len() == 41, "{out}");
    assert!(
        aside.contains("store it now: live keys cannot be shown again"),
        "{aside}"
    );
    let old_id = s.json(&["key", "list", "--partner", &prt])[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let line = s.fails(&["key", "create", "--partner", &prt, "--mode", "live"]);
    assert_eq!(
        line,
        format!(
            "error: {prt} already has an active live key; pass --rotate to revoke it and create a new one"
        )
    );
    // A test key is not affected by the live key rule.
    s.key(&prt, "test", &[]);

    let (new_key, new_id, v) = s.key(&prt, "live", &["--rotate"]);
    assert!(new_key.starts_with("psk_live_"), "{v}");
    assert_eq!(v["revoked_keys"], serde_json::json!([old_id]));
    let list = s.json(&["key", "list", "--partner", &prt]);
    let by_id = |id: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|k| k["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(by_id(&old_id)["revoked"], true);
    assert!(is_rfc3339_utc(
        by_id(&old_id)["revoked_at"].as_str().unwrap()
    ));
    assert_eq!(by_id(&new_id)["revoked"], false);

    // Test mode has seen nothing of the core flow: only --force enables.
    assert_eq!(
        s.run(&["partner", "enable-live", &prt, "--force"])
            .trim_end(),
        format!(
            "{prt}: live mode enabled (forced: not yet seen in test mode: group, census, quote, enrollment, webhook_ping)"
        )
    );
    assert_eq!(s.json(&["partner", "show", &prt])["live_enabled"], true);
    assert_eq!(
        s.json(&["partner", "disable-live", &prt])["live_enabled"],
        false
    );
}

fn key_show_on_a_live_key_fails(s: &Sandbox) {
    let prt = s.partner("hr_platform");
    let (_, id, _) = s.key(&prt, "live", &[]);
    let line = s.fails(&["key", "show", &id]);
    assert_eq!(
        line,
        format!("error: cannot show {id}: live keys cannot be shown again")
    );
    let v = s.fails_json(&["key", "show", &id]);
    assert_eq!(v["error"], "conflict");
    assert_eq!(
        v["message"],
        format!("cannot show {id}: live keys cannot be shown again")
    );
}

fn unknown_partners_and_keys_fail_in_one_line(s: &Sandbox) {
    let prt = "prt_000000000000";
    let none = format!("error: no such partner {prt}");
    assert_eq!(s.fails(&["partner", "show", prt]), none);
    assert_eq!(s.fails(&["partner", "enable-live", prt]), none);
    assert_eq!(s.fails(&["partner", "enable-live", prt, "--force"]), none);
    assert_eq!(s.fails(&["partner", "readiness", prt]), none);
    assert_eq!(
        s.fails(&["quote", "finalize", "qt_000000000000"]),
        "error: no such quote qt_000000000000"
    );
    assert_eq!(
        s.fails(&["group", "go-live", "grp_000000000000"]),
        "error: no such group grp_000000000000"
    );
    assert_eq!(
        s.fails(&["quote", "finalize", "grp_000000000000"]),
        "error: not a valid quote id: expected `qt_` and 12 lowercase hex characters, got \"grp_000000000000\""
    );
    assert_eq!(
        s.fails(&["group", "go-live", "acme"]),
        "error: not a valid group id: expected `grp_` and 12 lowercase hex characters, got \"acme\""
    );
    assert_eq!(
        s.fails_json(&["quote", "finalize", "qt_000000000000"]),
        json!({"error": "not_found", "message": "no such quote qt_000000000000"})
    );
    assert_eq!(
        s.fails_json(&["group", "go-live", "grp_000000000000"]),
        json!({"error": "not_found", "message": "no such group grp_000000000000"})
    );
    assert_eq!(
        s.fails_json(&["group", "go-live", "acme"])["error"],
        "invalid_request"
    );
    assert_eq!(
        s.fails(&["key", "create", "--partner", prt, "--mode", "test"]),
        none
    );
    assert_eq!(s.fails(&["key", "list", "--partner", prt]), none);
    assert_eq!(
        s.fails(&["key", "revoke", "key_000000000000"]),
        "error: no such key key_000000000000"
    );
    assert_eq!(
        s.fails(&["key", "show", "key_000000000000"]),
        "error: no such key key_000000000000"
    );
    assert_eq!(
        s.fails(&["partner", "show", "acme"]),
        "error: not a valid partner id: expected `prt_` and 12 lowercase hex characters, got \"acme\""
    );
    assert_eq!(
        s.fails(&["partner", "create", "--name", " ", "--kind", "broker"]),
        "error: --name must be 1 to 200 characters"
    );
    let v = s.fails_json(&["partner", "show", prt]);
    assert_eq!(
        v,
        serde_json::json!({"error": "not_found", "message": format!("no such partner {prt}")})
    );
    assert_eq!(
        s.json(&["key", "list", "--partner", &s.partner("broker")]),
        serde_json::json!([])
    );
}

fn usage_errors_are_one_line(s: &Sandbox) {
    for args in [
        &["key", "create", "--partner", "prt_000000000000"][..],
        &["partner", "create", "--name", "A", "--kind", "carrier"],
        &["partner", "frobnicate"],
        &["partner", "readiness"],
        &["quote", "finalize"],
        &["group", "go-live"],
        &["group", "go-live", "grp_000000000000", "--force"],
    ] {
        let out = s.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: "), "{err}");
    }
    let out = s
        .cmd()
        .args(["--json", "key", "create", "--partner", "prt_000000000000"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["error"], "usage");
    assert!(v["message"].as_str().unwrap().contains("--mode"), "{v}");
}

on_both_backends!(
    partner_create_human_and_json,
    test_key_show_returns_the_same_key,
    key_list_never_prints_the_key,
    live_keys_rotate,
    key_show_on_a_live_key_fails,
    unknown_partners_and_keys_fail_in_one_line,
    usage_errors_are_one_line,
);
