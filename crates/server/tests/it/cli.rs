//! The operator commands and the configuration layers, through the real
//! binary. Each scenario runs against a fresh SQLite file in a temporary
//! directory (also the working directory, where the sealing key lands),
//! and again against a fresh PostgreSQL database when
//! `PARTNER_API_TEST_POSTGRES_URL` is set.

use std::process::Command;
use std::sync::Arc;

use domain::enrollment::OnboardingMode;
use domain::event::EventType;
use domain::group::{Group, GroupFields};
use domain::ids::{GroupId, QuoteId};
use domain::page::PageRequest;
use domain::quote::Quote;
use domain::scope::Scope;
use domain::services::enrollments::{EnrollmentInput, Enrollments, Signatory};
use domain::services::quotes::{QuoteInput, Quotes};
use pricing_core::census::CensusMember;
use pricing_core::{CensusRules, RateCard};
use serde_json::Value;
use server::compose::{Services, Shared};
use server::system::{OsEntropy, Ports, SystemClock};
use store_diesel::sealer::AesGcmSealer;
use store_diesel::{Database, Stores};

use crate::common::{BIN, fails, ok, stdout_ok, string};

/// One isolated database and working directory.
pub(super) struct Sandbox {
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

pub(super) fn is_id(text: &str, prefix: &str) -> bool {
    text.strip_prefix(prefix).is_some_and(|hex| {
        hex.len() == 12
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

pub(super) fn is_rfc3339_utc(text: &str) -> bool {
    text.len() == 20 && text.ends_with('Z') && text.get(10..11) == Some("T")
}

/// The domain's services over a sandbox's database, built by the server's
/// composition root, to create what the HTTP API would.
pub(super) struct Library {
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

mod config;
mod go_live;
mod groups;
mod partners;
