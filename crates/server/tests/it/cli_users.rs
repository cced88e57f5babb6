//! The operator's partner portal commands through the real binary:
//! `partner user add|list|remove` (the set-password link alone on the
//! first line, under the configured `public_base_url`) and `partner
//! agreements`. Each scenario runs against a fresh SQLite file in a
//! temporary directory, and again against a fresh PostgreSQL database
//! when `PARTNER_API_TEST_POSTGRES_URL` is set.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::{BIN, fails, ok, stdout_ok, string};

/// The `public_base_url` the scenarios configure.
const BASE: &str = "https://partners.example.com";

/// One isolated database and working directory.
struct Sandbox {
    /// PostgreSQL's database, dropped first (declared before the runtime).
    pg: Option<testkit::db::TestDb>,
    _rt: Option<tokio::runtime::Runtime>,
    dir: tempfile::TempDir,
    url: String,
}

impl Sandbox {
    fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!(
            "sqlite://{}",
            dir.path().join("partner-api.sqlite").display()
        );
        Self {
            pg: None,
            _rt: None,
            dir,
            url,
        }
    }

    fn postgres() -> Option<Self> {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let Some(db) = rt.block_on(testkit::db::postgres()) else {
            println!("SKIPPED: {} is not set", testkit::db::PG_ENV);
            return None;
        };
        Some(Self {
            url: db.url.clone(),
            pg: Some(db),
            _rt: Some(rt),
            dir: tempfile::tempdir().unwrap(),
        })
    }

    /// The binary, in the sandbox's directory, with no inherited
    /// `PARTNER_API_*` variable except the sandbox's database, key file
    /// and `public_base_url`.
    fn cmd(&self) -> Command {
        let mut cmd = Command::new(BIN);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("PARTNER_API_") {
                cmd.env_remove(name);
            }
        }
        cmd.current_dir(self.dir.path())
            .env("PARTNER_API_DATABASE_URL", &self.url)
            .env(
                "PARTNER_API_SECRETS__SEALING_KEY_FILE",
                self.dir.path().join("secrets").join("sealing.key"),
            )
            .env("PARTNER_API_PUBLIC_BASE_URL", BASE);
        cmd
    }

    fn run(&self, args: &[&str]) -> String {
        stdout_ok(self.cmd().args(args))
    }

    fn json(&self, args: &[&str]) -> Value {
        ok(self.cmd().arg("--json").args(args))
    }

    fn fails(&self, args: &[&str]) -> String {
        fails(self.cmd().args(args))
    }

    /// Runs with `--json`, requires exit 1, nothing on stdout and one JSON
    /// line on stderr; returns it.
    fn fails_json(&self, args: &[&str]) -> Value {
        let out = self.cmd().arg("--json").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        serde_json::from_str(err.trim()).unwrap()
    }

    fn partner(&self) -> String {
        let out = self.run(&[
            "partner",
            "create",
            "--name",
            "Acme Benefits",
            "--kind",
            "broker",
        ]);
        out.trim_end().to_owned()
    }
}

fn is_id(text: &str, prefix: &str) -> bool {
    text.strip_prefix(prefix).is_some_and(|hex| {
        hex.len() == 12
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn is_rfc3339_utc(text: &str) -> bool {
    text.len() == 20 && text.ends_with('Z') && text.get(10..11) == Some("T")
}

/// Whether `url` is `{base}/partner/set-password?token=` and 64 lowercase
/// hex characters.
fn is_set_password_url(url: &str, base: &str) -> bool {
    url.strip_prefix(base)
        .and_then(|rest| rest.strip_prefix("/partner/set-password?token="))
        .is_some_and(|token| {
            token.len() == 64
                && token
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

fn user_add_prints_the_link_alone_on_line_one(s: &Sandbox) {
    let prt = s.partner();
    let out = s.run(&[
        "partner",
        "user",
        "add",
        "--partner",
        &prt,
        "--email",
        " Dev@Broker.Example ",
        "--role",
        "admin",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(is_set_password_url(lines[0], BASE), "{out}");
    let (id, rest) = lines[1].split_once(' ').unwrap();
    assert!(is_id(id, "usr_"), "{out}");
    assert!(
        rest.starts_with("dev@broker.example (admin); single-use link, expires "),
        "{out}"
    );

    let v = s.json(&[
        "partner",
        "user",
        "add",
        "--partner",
        &prt,
        "--email",
        "Viewer@Broker.Example",
        "--role",
        "viewer",
    ]);
    assert!(is_id(string(&v, "/id"), "usr_"), "{v}");
    assert_ne!(string(&v, "/id"), id);
    assert_eq!(v["partner_id"], prt.as_str());
    assert_eq!(v["email"], "viewer@broker.example");
    assert_eq!(v["role"], "viewer");
    assert_eq!(v["password_set"], false);
    assert_eq!(v["two_factor"], false);
    assert!(
        is_set_password_url(string(&v, "/set_password_url"), BASE),
        "{v}"
    );
    assert!(is_rfc3339_utc(string(&v, "/expires_at")), "{v}");
    assert!(is_rfc3339_utc(string(&v, "/created_at")), "{v}");
    assert!(string(&v, "/expires_at") > string(&v, "/created_at"), "{v}");
    assert_ne!(v["set_password_url"], lines[0], "a fresh token per user");

    // The same address again, however spelled.
    let again = [
        "partner",
        "user",
        "add",
        "--partner",
        &prt,
        "--email",
        "DEV@broker.example",
        "--role",
        "viewer",
    ];
    assert_eq!(
        s.fails(&again),
        "error: the partner already has a user with this email"
    );
    assert_eq!(
        s.fails_json(&again),
        json!({"error": "conflict", "message": "the partner already has a user with this email"})
    );
    assert_eq!(
        s.fails(&[
            "partner",
            "user",
            "add",
            "--partner",
            &prt,
            "--email",
            "dev",
            "--role",
            "admin",
        ]),
        "error: --email must be an email address"
    );
    let listed = s.json(&["partner", "user", "list", "--partner", &prt]);
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");
}

fn user_add_reads_public_base_url_from_the_config_file(s: &Sandbox) {
    let prt = s.partner();
    std::fs::write(
        s.dir.path().join("partner-api.toml"),
        "public_base_url = \"https://portal.example.org/\"\n",
    )
    .unwrap();
    let mut cmd = s.cmd();
    cmd.env_remove("PARTNER_API_PUBLIC_BASE_URL").args([
        "--config",
        "partner-api.toml",
        "partner",
        "user",
        "add",
        "--partner",
        &prt,
        "--email",
        "dev@broker.example",
        "--role",
        "admin",
    ]);
    let out = stdout_ok(&mut cmd);
    let first = out.lines().next().unwrap();
    assert!(
        is_set_password_url(first, "https://portal.example.org"),
        "{out}"
    );
}

fn user_list_and_remove(s: &Sandbox) {
    let prt = s.partner();
    let other = s.partner();
    assert_eq!(
        s.json(&["partner", "user", "list", "--partner", &prt]),
        json!([])
    );
    assert_eq!(s.run(&["partner", "user", "list", "--partner", &prt]), "");
    let mut ids = Vec::new();
    for (email, role) in [
        ("dev@broker.example", "admin"),
        ("viewer@broker.example", "viewer"),
    ] {
        let v = s.json(&[
            "partner",
            "user",
            "add",
            "--partner",
            &prt,
            "--email",
            email,
            "--role",
            role,
        ]);
        ids.push(string(&v, "/id").to_owned());
    }
    s.json(&[
        "partner",
        "user",
        "add",
        "--partner",
        &other,
        "--email",
        "dev@broker.example",
        "--role",
        "admin",
    ]);

    let list = s.json(&["partner", "user", "list", "--partner", &prt]);
    let users = list.as_array().unwrap();
    assert_eq!(users.len(), 2, "{list}");
    let mut listed: Vec<(&str, &str, &str)> = users
        .iter()
        .map(|u| {
            assert_eq!(u["partner_id"], prt.as_str());
            assert_eq!(u["password_set"], false);
            assert_eq!(u["two_factor"], false);
            assert!(u.get("set_password_url").is_none(), "{u}");
            (string(u, "/id"), string(u, "/email"), string(u, "/role"))
        })
        .collect();
    listed.sort_unstable();
    let mut expected = vec![
        (ids[0].as_str(), "dev@broker.example", "admin"),
        (ids[1].as_str(), "viewer@broker.example", "viewer"),
    ];
    expected.sort_unstable();
    assert_eq!(listed, expected);
    let human = s.run(&["partner", "user", "list", "--partner", &prt]);
    assert_eq!(human.lines().count(), 2, "{human}");
    for line in human.lines() {
        assert!(
            line.contains("password not set") && line.contains("two-factor off"),
            "{human}"
        );
    }
    let dev_line = human.lines().find(|l| l.starts_with(&ids[0])).unwrap();
    assert!(
        dev_line.contains("admin") && dev_line.contains("dev@broker.example"),
        "{human}"
    );

    // Remove by address (as typed), then by id.
    assert_eq!(
        s.run(&[
            "partner",
            "user",
            "remove",
            "--partner",
            &prt,
            " Dev@Broker.Example"
        ]),
        format!("removed {} dev@broker.example\n", ids[0])
    );
    let v = s.json(&["partner", "user", "remove", "--partner", &prt, &ids[1]]);
    assert_eq!(v["id"], ids[1].as_str());
    assert_eq!(v["email"], "viewer@broker.example");
    assert_eq!(
        s.json(&["partner", "user", "list", "--partner", &prt]),
        json!([])
    );
    // The other partner's user with the same address stays.
    let theirs = s.json(&["partner", "user", "list", "--partner", &other]);
    assert_eq!(theirs.as_array().map(Vec::len), Some(1), "{theirs}");

    // Unknown users: one line, exit 1.
    let gone = ["partner", "user", "remove", "--partner", &prt, &ids[0]];
    assert_eq!(
        s.fails(&gone),
        format!("error: no such user {} of partner {prt}", ids[0])
    );
    assert_eq!(
        s.fails(&[
            "partner",
            "user",
            "remove",
            "--partner",
            &prt,
            "nobody@broker.example"
        ]),
        format!("error: no such user nobody@broker.example of partner {prt}")
    );
    let v = s.fails_json(&gone);
    assert_eq!(v["error"], "not_found");
    // Another partner's user is not found through this partner.
    let their_id = string(&theirs, "/0/id").to_owned();
    assert_eq!(
        s.fails(&["partner", "user", "remove", "--partner", &prt, &their_id]),
        format!("error: no such user {their_id} of partner {prt}")
    );
}

fn agreements_show_on_the_partner(s: &Sandbox) {
    let prt = s.partner();
    assert_eq!(s.json(&["partner", "show", &prt])["commercial_done"], false);
    assert_eq!(
        s.run(&["partner", "agreements", &prt, "--commercial", "done"]),
        format!("commercial and operational agreements of {prt} (Acme Benefits): completed\n")
    );
    let shown = s.json(&["partner", "show", &prt]);
    assert_eq!(shown["commercial_done"], true, "{shown}");
    assert_eq!(shown["live_enabled"], false, "{shown}");
    let v = s.json(&["partner", "agreements", &prt, "--commercial", "pending"]);
    assert_eq!(v["id"], prt.as_str());
    assert_eq!(v["commercial_done"], false);
    assert_eq!(s.json(&["partner", "show", &prt])["commercial_done"], false);
}

fn unknown_partners_fail_in_one_line(s: &Sandbox) {
    let prt = "prt_000000000000";
    let none = format!("error: no such partner {prt}");
    assert_eq!(
        s.fails(&["partner", "agreements", prt, "--commercial", "done"]),
        none
    );
    assert_eq!(
        s.fails(&[
            "partner",
            "user",
            "add",
            "--partner",
            prt,
            "--email",
            "dev@broker.example",
            "--role",
            "admin",
        ]),
        none
    );
    assert_eq!(
        s.fails(&["partner", "user", "list", "--partner", prt]),
        none
    );
    assert_eq!(
        s.fails(&[
            "partner",
            "user",
            "remove",
            "--partner",
            prt,
            "dev@broker.example"
        ]),
        format!("error: no such user dev@broker.example of partner {prt}")
    );
    assert_eq!(
        s.fails_json(&["partner", "user", "list", "--partner", prt]),
        json!({"error": "not_found", "message": format!("no such partner {prt}")})
    );
    assert_eq!(
        s.fails(&["partner", "user", "list", "--partner", "acme"]),
        "error: not a valid partner id: expected `prt_` and 12 lowercase hex characters, got \"acme\""
    );
    // A usage error (no role) is one line with exit 2.
    let out = s
        .cmd()
        .args([
            "partner",
            "user",
            "add",
            "--partner",
            prt,
            "--email",
            "a@b.example",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("--role"),
        "{err}"
    );
}

/// Generates one `#[test]` per scenario and backend.
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $scenario() {
                super::$scenario(&super::Sandbox::sqlite());
            })*
        }
        mod postgres {
            $(#[test]
            fn $scenario() {
                if let Some(s) = super::Sandbox::postgres() {
                    assert!(s.pg.is_some());
                    super::$scenario(&s);
                }
            })*
        }
    };
}

on_both_backends!(
    user_add_prints_the_link_alone_on_line_one,
    user_add_reads_public_base_url_from_the_config_file,
    user_list_and_remove,
    agreements_show_on_the_partner,
    unknown_partners_fail_in_one_line,
);
