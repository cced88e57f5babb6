//! The operator commands and the configuration layers, through the real
//! binary. Each scenario runs against a fresh SQLite file in a temporary
//! directory (also the working directory, where the sealing key lands),
//! and again against a fresh PostgreSQL database when
//! `PARTNER_API_TEST_POSTGRES_URL` is set.

use std::process::Command;
use std::sync::Arc;

use domain::enrollment::OnboardingMode;
use domain::event::EventType;
use domain::group::{CompanyState, Group, GroupFields, GroupStatus};
use domain::ids::{GroupId, PartnerId, QuoteId};
use domain::mode::Mode;
use domain::page::PageRequest;
use domain::quote::{Quote, QuoteStatus};
use domain::scope::Scope;
use domain::services::enrollments::{EnrollmentInput, Enrollments, Signatory};
use domain::services::quotes::{QuoteInput, Quotes};
use pricing_core::census::CensusMember;
use pricing_core::{CensusRules, RateCard};
use serde_json::{Value, json};
use server::compose::{Services, Shared};
use server::system::{OsEntropy, Ports, SystemClock};
use store_diesel::sealer::AesGcmSealer;
use store_diesel::{Database, Stores};

use crate::common::{BIN, fails, ok, stdout_ok, string};

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

    fn key_file(&self) -> std::path::PathBuf {
        self.dir.path().join("secrets").join("sealing.key")
    }

    /// The binary, in the sandbox's directory, with no inherited
    /// `PARTNER_API_*` variable except the sandbox's database and key file.
    fn cmd(&self) -> Command {
        let mut cmd = Command::new(BIN);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("PARTNER_API_") {
                cmd.env_remove(name);
            }
        }
        cmd.current_dir(self.dir.path())
            .env("PARTNER_API_DATABASE_URL", &self.url)
            .env("PARTNER_API_SECRETS__SEALING_KEY_FILE", self.key_file());
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

    fn partner(&self, kind: &str) -> String {
        let out = self.run(&[
            "partner",
            "create",
            "--name",
            "Acme Benefits",
            "--kind",
            kind,
        ]);
        out.trim_end().to_owned()
    }

    /// Creates a key and returns (key, key id) from the JSON answer.
    fn key(&self, partner: &str, mode: &str, extra: &[&str]) -> (String, String, Value) {
        let mut args = vec!["key", "create", "--partner", partner, "--mode", mode];
        args.extend_from_slice(extra);
        let v = self.json(&args);
        (
            string(&v, "/key").to_owned(),
            string(&v, "/id").to_owned(),
            v,
        )
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

/// Every step-(a) item's stable name, in order.
const STEP_A: [&str; 5] = ["group", "census", "quote", "enrollment", "webhook_ping"];

fn readiness_of_a_fresh_partner(s: &Sandbox) {
    let prt = s.partner("broker");
    let v = s.json(&["partner", "readiness", &prt]);
    assert_eq!(
        v,
        json!({
            "partner": s.json(&["partner", "show", &prt]),
            "test_mode": {
                "groups": 0,
                "groups_with_census": 0,
                "quotes": 0,
                "enrollments": 0,
                "webhook_pings_delivered": 0,
            },
            "agreements_recorded": false,
            "missing": STEP_A,
            "ready": false,
        })
    );
    let text = s.run(&["partner", "readiness", &prt]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    assert!(
        lines[0].contains(&prt) && lines[0].contains("test mode"),
        "{text}"
    );
    for (line, label) in
        lines[1..6]
            .iter()
            .zip(["group", "census", "quote", "enrollment", "webhook ping"])
    {
        assert!(line.starts_with(&format!("\u{2717} {label} ")), "{text}");
        assert!(line.contains(" 0 "), "{text}");
    }
    assert!(lines[6].starts_with("\u{2717} agreements "), "{text}");
    assert_eq!(
        lines[7],
        "ready for live: no (missing: group, census, quote, enrollment, webhook_ping)"
    );
}

fn enable_live_needs_the_test_flow_or_force(s: &Sandbox) {
    let prt = s.partner("hr_platform");
    let refusal = "cannot enable live mode: the partner has not yet, in test mode: created a group, sent a census, created a quote, created an enrollment, had a webhook endpoint answer a signed ping (pass --force to enable anyway)";
    assert_eq!(
        s.fails(&["partner", "enable-live", &prt]),
        format!("error: {refusal}")
    );
    assert_eq!(
        s.fails_json(&["partner", "enable-live", &prt]),
        json!({"error": "conflict", "message": refusal})
    );
    assert_eq!(s.json(&["partner", "show", &prt])["live_enabled"], false);

    let v = s.json(&["partner", "enable-live", &prt, "--force"]);
    assert_eq!(v["id"], prt.as_str());
    assert_eq!(v["live_enabled"], true);
    assert_eq!(v["forced"], true);
    assert_eq!(v["missing"], json!(STEP_A));
    assert_eq!(s.json(&["partner", "show", &prt])["live_enabled"], true);
    let r = s.json(&["partner", "readiness", &prt]);
    assert_eq!(r["agreements_recorded"], true);
    assert_eq!(r["ready"], false);
    let text = s.run(&["partner", "readiness", &prt]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("\u{2713} agreements ") && l.contains("recorded")),
        "{text}"
    );

    // Disabling needs no readiness; enabling again needs --force again.
    assert_eq!(
        s.run(&["partner", "disable-live", &prt]).trim_end(),
        format!("{prt}: live mode disabled")
    );
    s.fails(&["partner", "enable-live", &prt]);
    assert_eq!(s.json(&["partner", "show", &prt])["live_enabled"], false);
}

/// The domain's services over a sandbox's database, built by the server's
/// composition root, to create what the HTTP API would.
struct Library {
    /// Dropped before the runtime its connections were opened on.
    stores: Stores,
    services: Services,
    rt: tokio::runtime::Runtime,
}

impl Library {
    /// Opens the sandbox's database (which a command has migrated).
    fn open(s: &Sandbox) -> Self {
        let db = Database::parse(&s.url).unwrap();
        let stores = Stores::open(&db, 2).unwrap();
        let ports = Ports {
            clock: Arc::new(SystemClock),
            entropy: Arc::new(OsEntropy::new()),
            sealer: Arc::new(AesGcmSealer::from_hex(&"ab".repeat(32)).unwrap()),
        };
        let shared = Shared::of(RateCard::builtin_2026().unwrap()).unwrap();
        Self {
            services: Services::new(&stores, &ports, &shared),
            stores,
            rt: tokio::runtime::Runtime::new().unwrap(),
        }
    }

    fn quotes(&self) -> Quotes {
        self.services.quotes()
    }

    fn enrollments(&self) -> Enrollments {
        self.services.enrollments()
    }

    /// A group of `scope` with a census of `employees` members, its market
    /// comparison run, and one quote on it.
    fn quoted_group(&self, scope: &Scope, domain: &str, employees: usize) -> (Group, Quote) {
        self.rt.block_on(async {
            let group = self
                .services
                .groups()
                .create(
                    scope,
                    GroupFields {
                        company_name: Some("Acme Widgets".to_owned()),
                        domain: Some(domain.to_owned()),
                        ..GroupFields::default()
                    },
                )
                .await
                .unwrap();
            let census = self.services.census();
            let dob = time::macros::date!(1985 - 06 - 15);
            let rows = (0..employees)
                .map(|i| Ok(CensusMember::new(&format!("E{i}"), dob, "60601")))
                .collect();
            let written = census
                .replace(
                    scope,
                    &group.id,
                    rows,
                    CensusRules { require_dob: true },
                    false,
                )
                .await
                .unwrap();
            assert_eq!(usize::try_from(written.accepted).unwrap(), employees);
            let (worker, handler) = self.services.job_worker();
            assert_eq!(server::jobs::drain(&worker, &handler).await.unwrap(), 1);
            let quote = self
                .quotes()
                .create(scope, &group.id, QuoteInput::default())
                .await
                .unwrap();
            (group, quote)
        })
    }

    fn quote(&self, scope: &Scope, id: &QuoteId) -> Quote {
        self.rt.block_on(self.quotes().get(scope, id)).unwrap()
    }

    fn group(&self, scope: &Scope, id: &GroupId) -> Group {
        self.rt
            .block_on(self.stores.groups.group(scope, id))
            .unwrap()
    }

    fn enroll(&self, scope: &Scope, group: &GroupId, quote: &QuoteId) {
        let input = EnrollmentInput {
            quote_id: quote.clone(),
            signatory: Signatory {
                name: "Dana Admin".to_owned(),
                email: "dana@acme-widgets.example".to_owned(),
            },
            onboarding_mode: OnboardingMode::Hosted,
            start_date: None,
        };
        self.rt
            .block_on(self.enrollments().create(scope, group, input))
            .unwrap();
    }

    /// The data of the scope's events of type `kind`.
    fn events(&self, scope: &Scope, kind: EventType) -> Vec<Value> {
        let page = self
            .rt
            .block_on(self.stores.outbox.events(
                scope,
                &domain::event::EventFilter::since(0),
                &PageRequest::first(100),
            ))
            .unwrap();
        page.items
            .into_iter()
            .filter(|e| e.event.event_type() == kind)
            .map(|e| {
                domain::document::recase(e.event.data.data(), &domain::document::snake_to_camel)
            })
            .collect()
    }
}

/// Above the in-review threshold (200 employees): quotes are `in_review`.
const IN_REVIEW_EMPLOYEES: usize = 201;

fn quote_finalize_and_group_go_live(s: &Sandbox) {
    let prt = s.partner("broker"); // also migrates the database
    let partner = PartnerId::parse(&prt).unwrap();
    let test = Scope::new(partner.clone(), Mode::Test);
    let live = Scope::new(partner, Mode::Live);
    let lib = Library::open(s);
    let (group, quote) = lib.quoted_group(&test, "acme-widgets.example", IN_REVIEW_EMPLOYEES);
    assert_eq!(quote.status, QuoteStatus::InReview);
    let (g, q) = (group.id.as_str(), quote.id.as_str());

    // No enrollment yet: no provisioned company to take live.
    assert_eq!(
        s.fails(&["group", "go-live", g]),
        format!(
            "error: cannot take {g} live: the group has no provisioned company yet; create its enrollment first"
        )
    );

    // Underwriting finalizes the test quote.
    assert_eq!(
        s.run(&["quote", "finalize", q]).trim_end(),
        format!("{q}: ready (group {g}, test mode)")
    );
    assert_eq!(lib.quote(&test, &quote.id).status, QuoteStatus::Ready);
    assert_eq!(
        lib.events(&test, EventType::QuoteFinalized),
        [json!({"quoteId": q, "groupId": g, "status": "ready"})]
    );
    let again = format!(
        "cannot finalize {q}: the quote is ready; only an in_review quote can be finalized"
    );
    assert_eq!(
        s.fails(&["quote", "finalize", q]),
        format!("error: {again}")
    );
    assert_eq!(
        s.fails_json(&["quote", "finalize", q]),
        json!({"error": "conflict", "message": again})
    );

    // Any partner and mode: a live quote, with --json.
    let (live_group, live_quote) =
        lib.quoted_group(&live, "acme-widgets.example", IN_REVIEW_EMPLOYEES);
    assert_eq!(live_quote.status, QuoteStatus::InReview);
    assert_eq!(
        s.json(&["quote", "finalize", live_quote.id.as_str()]),
        json!({
            "id": live_quote.id.as_str(),
            "group_id": live_group.id.as_str(),
            "mode": "live",
            "status": "ready",
        })
    );
    assert_eq!(lib.quote(&live, &live_quote.id).status, QuoteStatus::Ready);

    // Enrolled on the ready quote, the group goes live.
    lib.enroll(&test, &group.id, &quote.id);
    assert_eq!(
        lib.group(&test, &group.id).company_state,
        Some(CompanyState::Sandbox)
    );
    assert_eq!(
        s.json(&["group", "go-live", g]),
        json!({"id": g, "mode": "test", "status": "active", "company_state": "prod"})
    );
    let stored = lib.group(&test, &group.id);
    assert_eq!(stored.status, GroupStatus::Active);
    assert_eq!(stored.company_state, Some(CompanyState::Prod));
    assert_eq!(
        lib.events(&test, EventType::GroupStateChanged),
        [json!({
            "groupId": g,
            "companyDomain": "acme-widgets.example",
            "previousState": "sandbox",
            "state": "prod",
            "forced": true,
        })]
    );
    assert_eq!(
        s.fails(&["group", "go-live", g]),
        format!("error: cannot take {g} live: the group is already live")
    );
    assert_eq!(s.fails_json(&["group", "go-live", g])["error"], "conflict");

    // The live group, enrolled too, goes live in text mode.
    lib.enroll(&live, &live_group.id, &live_quote.id);
    let lg = live_group.id.as_str();
    assert_eq!(
        s.run(&["group", "go-live", lg]).trim_end(),
        format!("{lg}: company state prod, group active (live mode)")
    );

    // Readiness counts the test flow only; the webhook ping is still missing.
    let r = s.json(&["partner", "readiness", &prt]);
    assert_eq!(
        r["test_mode"],
        json!({
            "groups": 1,
            "groups_with_census": 1,
            "quotes": 1,
            "enrollments": 1,
            "webhook_pings_delivered": 0,
        })
    );
    assert_eq!(r["missing"], json!(["webhook_ping"]));
    assert_eq!(r["ready"], false);
    let text = s.run(&["partner", "readiness", &prt]);
    for label in ["group", "census", "quote", "enrollment"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("\u{2713} {label} ")) && l.contains(" 1 ")),
            "{label}: {text}"
        );
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("\u{2717} webhook ping ")),
        "{text}"
    );
    assert!(
        text.ends_with("ready for live: no (missing: webhook_ping)\n"),
        "{text}"
    );
    assert_eq!(
        s.fails(&["partner", "enable-live", &prt]),
        "error: cannot enable live mode: the partner has not yet, in test mode: had a webhook endpoint answer a signed ping (pass --force to enable anyway)"
    );
    assert_eq!(
        s.run(&["partner", "enable-live", &prt, "--force"])
            .trim_end(),
        format!("{prt}: live mode enabled (forced: not yet seen in test mode: webhook_ping)")
    );
}

/// `group import-claims`: a CSV into the group's ledger, all rows or none.
fn group_import_claims(s: &Sandbox) {
    let prt = s.partner("broker");
    let partner = PartnerId::parse(&prt).unwrap();
    let test = Scope::new(partner, Mode::Test);
    let lib = Library::open(s);
    let (group, _) = lib.quoted_group(&test, "claims.example", 3);
    let g = group.id.as_str();
    let file = s.dir.path().join("claims.csv");
    std::fs::write(
        &file,
        "month,category,amount_cents,member_count\n2026-10,pharmacy,120000,14\n2026-10,inpatient,900000,3\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    assert_eq!(
        s.json(&["group", "import-claims", g, "--file", path]),
        json!({"group_id": g, "imported": 2})
    );
    let ledger = lib
        .rt
        .block_on(lib.stores.claims.claims(&test, &group.id))
        .unwrap();
    assert_eq!(ledger.len(), 2);
    // A bad row imports nothing; a bad header, an unknown group: one line.
    std::fs::write(
        &file,
        "month,category,amount_cents,member_count\n2026-11,pharmacy,1,20\n2026-13,dental,-1,2\n",
    )
    .unwrap();
    let err = s.fails(&["group", "import-claims", g, "--file", path]);
    assert!(err.contains("month") && err.contains("category"), "{err}");
    assert_eq!(
        lib.rt
            .block_on(lib.stores.claims.claims(&test, &group.id))
            .unwrap()
            .len(),
        2
    );
    std::fs::write(&file, "when,what\n").unwrap();
    let err = s.fails(&["group", "import-claims", g, "--file", path]);
    assert!(err.contains("header"), "{err}");
    let err = s.fails(&["group", "import-claims", "grp_000000000000", "--file", path]);
    assert!(
        err.contains("header") || err.contains("no such group"),
        "{err}"
    );
}

/// The operator reviews a live business verification and reads the
/// micro-deposits of a live bank account.
fn company_verify_reject_and_deposits(s: &Sandbox) {
    use domain::onboarding::fields::AddressInput;
    use domain::page::PageRequest;
    use domain::services::onboarding::{BankInput, PlanInput, ProfileInput, SignInput};

    let prt = s.partner("broker");
    let live = Scope::new(PartnerId::parse(&prt).unwrap(), Mode::Live);
    let lib = Library::open(s);
    let (group, quote) = lib.quoted_group(&live, "acme-widgets.example", 3);
    let g = group.id.as_str();
    assert_eq!(
        s.fails(&["company", "verify", g]),
        format!("error: no enrollment for group {g}")
    );
    lib.enroll(&live, &group.id, &quote.id);
    let onboarding = lib.services.onboarding();
    let id = lib
        .rt
        .block_on(lib.stores.quotes.group_enrollment(&live, &group.id))
        .unwrap()
        .unwrap()
        .id;
    // Nothing waits for review yet.
    assert_eq!(s.fails_json(&["company", "verify", g])["error"], "conflict");
    let profile = ProfileInput {
        legal_name: Some("Acme Widgets Inc".to_owned()),
        ein: Some("12-3456789".to_owned()),
        entity_type: Some("c_corporation".to_owned()),
        address: Some(AddressInput {
            line1: Some("1 Main St".to_owned()),
            line2: None,
            city: Some("Chicago".to_owned()),
            state: Some("IL".to_owned()),
            zip: Some("60601".to_owned()),
        }),
        phone: Some("312-555-0142".to_owned()),
        signatory_title: Some("CEO".to_owned()),
    };
    lib.rt.block_on(async {
        onboarding.save_profile(&live, &id, profile).await.unwrap();
        let step = onboarding.request_verification(&live, &id).await.unwrap();
        assert_eq!(
            step.status.as_str(),
            "pending",
            "live mode waits for review"
        );
    });
    let reason = "The EIN belongs to another company";
    assert_eq!(
        s.json(&["company", "reject", g, "--reason", reason]),
        json!({"group_id": g, "step": "business_verification", "status": "action_required", "reason": reason})
    );
    assert_eq!(
        s.fails_json(&["company", "reject", g, "--reason", " "])["error"],
        "invalid_request"
    );
    lib.rt.block_on(async {
        onboarding.request_verification(&live, &id).await.unwrap();
    });
    assert_eq!(
        s.run(&["company", "verify", g]).trim_end(),
        format!("{g}: business verification completed")
    );

    // Deposits: none before a bank account; two amounts of 1 to 99 cents after.
    assert_eq!(
        s.fails_json(&["company", "deposits", g])["error"],
        "not_found"
    );
    lib.rt.block_on(async {
        let bank = BankInput {
            routing_number: Some("011000015".to_owned()),
            account_number: Some("000123456789".to_owned()),
            account_type: Some("checking".to_owned()),
            holder_name: Some("Acme Widgets Inc".to_owned()),
        };
        onboarding.save_bank(&live, &id, bank).await.unwrap();
    });
    let shown = s.json(&["company", "deposits", g]);
    let amounts: Vec<u64> = shown["amounts_cents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_u64().unwrap())
        .collect();
    assert_eq!(amounts.len(), 2, "{shown}");
    assert!(amounts.iter().all(|a| (1..=99).contains(a)), "{shown}");
    // The operator's amounts confirm the account.
    let step = lib.rt.block_on(async {
        let cents: Vec<i64> = amounts.iter().map(|a| i64::try_from(*a).unwrap()).collect();
        onboarding
            .confirm_deposits(&live, &id, &cents)
            .await
            .unwrap()
    });
    assert_eq!(step.status.as_str(), "completed");
    let text = s.run(&["company", "deposits", g]);
    assert_eq!(
        text.trim_end(),
        format!(
            "{g}: micro-deposits of {} and {} cents",
            amounts[0], amounts[1]
        )
    );

    // The plan signed, the live checklist is complete and waits in review;
    // the operator's go-live (underwriting done) takes the company to prod.
    let enrollment_status = || {
        let e = lib
            .rt
            .block_on(lib.services.enrollments().get(&live, &id))
            .unwrap();
        let view = lib.rt.block_on(onboarding.view(&live, &id)).unwrap();
        (view.status.as_str(), e.company_state.map(|c| c.as_str()))
    };
    lib.rt.block_on(async {
        onboarding
            .save_plan(&live, &id, PlanInput::default())
            .await
            .unwrap();
        let sign = SignInput {
            signer_name: Some("dana admin".to_owned()),
            accepted: Some(true),
            ip: None,
            user_agent: None,
        };
        onboarding.sign_plan(&live, &id, sign).await.unwrap();
    });
    assert_eq!(enrollment_status(), ("in_review", Some("sandbox")));
    assert_eq!(s.json(&["group", "go-live", g])["company_state"], "prod");
    assert_eq!(enrollment_status(), ("active", Some("prod")));
    let events = lib
        .rt
        .block_on(lib.stores.outbox.events(
            &live,
            &domain::event::EventFilter::since(0),
            &PageRequest::first(200),
        ))
        .unwrap();
    let went_live: Vec<_> = events
        .items
        .iter()
        .filter(|e| e.event.event_type() == domain::event::EventType::GroupStateChanged)
        .collect();
    assert_eq!(went_live.len(), 1);
    // Not forced: every required step was completed.
    assert_ne!(went_live[0].event.data.data()["forced"], true);
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
    partner_create_human_and_json,
    test_key_show_returns_the_same_key,
    key_list_never_prints_the_key,
    live_keys_rotate,
    key_show_on_a_live_key_fails,
    unknown_partners_and_keys_fail_in_one_line,
    usage_errors_are_one_line,
    readiness_of_a_fresh_partner,
    enable_live_needs_the_test_flow_or_force,
    quote_finalize_and_group_go_live,
    group_import_claims,
    company_verify_reject_and_deposits,
);

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
