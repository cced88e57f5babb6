//! Unit tests of the layering and validation, on an injected environment
//! (the process's own is never read or changed).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use secrecy::ExposeSecret as _;

use crate::config::{ConfigError, Overrides, Settings, Source, describe};
use store_diesel::Database;

/// Loads with an optional file text (written to a temporary
/// `partner-api.toml`), environment pairs and flags.
fn load(
    file: Option<&str>,
    env: &[(&str, &str)],
    flags: &Overrides,
) -> (Result<Settings, ConfigError>, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("partner-api.toml");
    if let Some(text) = file {
        std::fs::write(&path, text).unwrap();
    }
    let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
    let result = Settings::load(file.map(|_| path.as_path()), env, flags);
    (result, path)
}

fn ok(file: Option<&str>, env: &[(&str, &str)], flags: &Overrides) -> Settings {
    load(file, env, flags).0.unwrap()
}

/// The one-line message of a refused load, with the file's path written
/// as `FILE`.
fn message(file: Option<&str>, env: &[(&str, &str)], flags: &Overrides) -> String {
    let (result, path) = load(file, env, flags);
    let e = result.unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    e.replace(&path.display().to_string(), "FILE")
}

fn flags(listen: Option<&str>, url: Option<&str>) -> Overrides {
    Overrides {
        listen: listen.map(str::to_owned),
        database_url: url.map(str::to_owned),
    }
}

fn sqlite_path(s: &Settings) -> String {
    match &s.database {
        store_diesel::Database::Sqlite { path } => path.clone(),
        store_diesel::Database::Postgres { url } => url.clone(),
    }
}

#[test]
fn defaults_are_the_contract_s() {
    let s = ok(None, &[], &Overrides::default());
    assert_eq!(s.listen, SocketAddr::from(([127, 0, 0, 1], 8080)));
    assert_eq!(sqlite_path(&s), "data/partner-api.sqlite");
    assert_eq!(s.http.limits.requests_per_minute, 120);
    assert_eq!(s.http.limits.census_writes_per_minute, 20);
    assert_eq!(s.http.limits.quote_creates_per_hour, 60);
    assert_eq!(s.http.limits.failed_auth_per_minute, 30);
    assert_eq!(s.pricing.rate_card, Path::new("rate-cards/2026.toml"));
    assert_eq!(s.pricing.wait_budget, Duration::from_millis(10_000));
    assert!(!s.webhooks.allow_insecure_endpoints);
    assert!((s.webhooks.retry_time_scale - 1.0).abs() < f64::EPSILON);
    assert!(s.http.trusted_proxies.is_empty());
    assert_eq!(s.secrets.sealing_key_file, Path::new("data/sealing.key"));
    assert!(s.secrets.sealing_key.is_none());
}

#[test]
fn each_layer_overrides_the_one_below() {
    let file = r#"
        listen = "127.0.0.1:1001"
        database_url = "sqlite://file.sqlite"
        [rate_limits]
        requests_per_minute = 11
        quote_creates_per_hour = 12
    "#;
    let s = ok(Some(file), &[], &Overrides::default());
    assert_eq!(s.listen.port(), 1001);
    assert_eq!(sqlite_path(&s), "file.sqlite");
    assert_eq!(s.http.limits.requests_per_minute, 11);
    assert_eq!(s.http.limits.census_writes_per_minute, 20, "default kept");

    let env = [
        ("PARTNER_API_LISTEN", "127.0.0.1:2002"),
        ("PARTNER_API_DATABASE_URL", "sqlite://env.sqlite"),
        ("PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE", "21"),
    ];
    let s = ok(Some(file), &env, &Overrides::default());
    assert_eq!(s.listen.port(), 2002);
    assert_eq!(sqlite_path(&s), "env.sqlite");
    assert_eq!(s.http.limits.requests_per_minute, 21);
    assert_eq!(s.http.limits.quote_creates_per_hour, 12, "file kept");

    let s = ok(
        Some(file),
        &env,
        &flags(Some("127.0.0.1:3003"), Some("postgres://u:pw@db:5432/x")),
    );
    assert_eq!(s.listen.port(), 3003);
    assert_eq!(s.database.backend(), "postgres");
    assert_eq!(s.http.limits.requests_per_minute, 21, "env kept");
}

#[test]
fn environment_keys_nest_with_double_underscores_and_parse_as_toml() {
    let key = "0a".repeat(32);
    let env = [
        ("PARTNER_API_RATE_LIMITS__CENSUS_WRITES_PER_MINUTE", "5"),
        ("PARTNER_API_RATE_LIMITS__FAILED_AUTH_PER_MINUTE", "6"),
        ("PARTNER_API_pricing__wait_budget_ms", "250"),
        ("PARTNER_API_PRICING__RATE_CARD", "2027"),
        ("PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS", "true"),
        ("PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE", "0.001"),
        ("PARTNER_API_PROXY__TRUSTED", "10.0.0.1, ::1"),
        ("PARTNER_API_SECRETS__SEALING_KEY_FILE", "\"/run/key\""),
        ("PARTNER_API_SECRETS__SEALING_KEY", &key),
    ];
    let s = ok(None, &env, &Overrides::default());
    assert_eq!(s.http.limits.census_writes_per_minute, 5);
    assert_eq!(s.http.limits.failed_auth_per_minute, 6);
    assert_eq!(s.pricing.wait_budget, Duration::from_millis(250));
    assert_eq!(
        s.pricing.rate_card,
        Path::new("2027"),
        "text keys stay text"
    );
    assert!(s.webhooks.allow_insecure_endpoints);
    assert!((s.webhooks.retry_time_scale - 0.001).abs() < f64::EPSILON);
    assert_eq!(
        s.http.trusted_proxies,
        vec![
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            "::1".parse::<IpAddr>().unwrap()
        ]
    );
    assert_eq!(s.secrets.sealing_key_file, Path::new("/run/key"));
    assert_eq!(
        s.secrets
            .sealing_key
            .as_ref()
            .map(|k| k.expose_secret().to_owned()),
        Some(key)
    );

    let s = ok(
        None,
        &[("PARTNER_API_PROXY__TRUSTED", r#"["192.168.1.1"]"#)],
        &Overrides::default(),
    );
    assert_eq!(s.http.trusted_proxies.len(), 1);
    let s = ok(
        None,
        &[("PARTNER_API_PROXY__TRUSTED", "")],
        &Overrides::default(),
    );
    assert!(s.http.trusted_proxies.is_empty());
}

#[test]
fn unknown_and_unprefixed_variables_are_ignored() {
    let env = [
        (
            "PARTNER_API_TEST_POSTGRES_URL",
            "postgres://postgres@127.0.0.1/test",
        ),
        ("PARTNER_API_RATE_LIMITS", "1"),
        ("PARTNER_API_NOPE__DEEPER", "x"),
        ("PARTNER_API_", "x"),
        ("DATABASE_URL", "mysql://ignored"),
        ("LISTEN", "nonsense"),
    ];
    let s = ok(None, &env, &Overrides::default());
    assert_eq!(sqlite_path(&s), "data/partner-api.sqlite");
    assert_eq!(s.http.limits.requests_per_minute, 120);
}

#[test]
fn the_file_may_not_name_unknown_keys() {
    let m = |file| message(Some(file), &[], &Overrides::default());
    assert_eq!(
        m("listn = \"x\""),
        "unknown key `listn` in config file FILE"
    );
    assert_eq!(
        m("[rate_limits]\nrequests_per_second = 1"),
        "unknown key `rate_limits.requests_per_second` in config file FILE"
    );
    assert_eq!(
        m("[server]\nport = 1"),
        "unknown key `server` in config file FILE"
    );
    assert_eq!(
        m("rate_limits = 5"),
        "rate_limits must be a table, got 5 (from config file FILE)"
    );
}

#[test]
fn file_syntax_and_read_errors_are_one_line() {
    let secret = "deadbeef".repeat(8);
    let text = format!("listen = \"127.0.0.1:1\"\n[secrets]\nsealing_key = {secret}\n");
    let m = message(Some(&text), &[], &Overrides::default());
    assert!(m.starts_with("config file FILE is not valid toml: "), "{m}");
    assert!(m.ends_with("at line 3"), "{m}");
    assert!(!m.contains(&secret), "{m}");

    let missing = Path::new("/nonexistent/partner-api.toml");
    let e = Settings::load(Some(missing), Vec::new(), &Overrides::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot read config file /nonexistent/partner-api.toml"
    );
    assert!(matches!(e, ConfigError::Read { .. }));
}

/// A refused load: file text, environment, flags and the exact message.
type Case<'a> = (Option<&'a str>, Vec<(&'a str, &'a str)>, Overrides, &'a str);

/// One table of refused values: (file, env, flags) → the exact message.
#[test]
fn each_validation_names_the_key_and_the_source() {
    let none = Overrides::default();
    let env = |k: &'static str, v: &'static str| vec![(k, v)];
    let cases: Vec<Case<'_>> = vec![
        (
            None,
            vec![],
            flags(Some("localhost"), None),
            r#"listen must be a socket address like 127.0.0.1:8080, got "localhost" (from flag --listen)"#,
        ),
        (
            Some("listen = 8080"),
            vec![],
            none.clone(),
            "listen must be a string, got 8080 (from config file FILE)",
        ),
        (
            None,
            vec![],
            flags(None, Some("mysql://x")),
            r#"database_url must be sqlite://PATH (a file) or postgres://…, got a mysql: URL (from flag --database-url)"#,
        ),
        (
            None,
            env("PARTNER_API_DATABASE_URL", "sqlite://:memory:"),
            none.clone(),
            r#"database_url must be sqlite://PATH (a file) or postgres://…, got a sqlite: URL (from environment variable PARTNER_API_DATABASE_URL)"#,
        ),
        (
            None,
            env("PARTNER_API_PUBLIC_BASE_URL", "benefits.example.com"),
            none.clone(),
            r#"public_base_url must be an absolute http:// or https:// URL such as https://benefits.example.com, got "benefits.example.com" (from environment variable PARTNER_API_PUBLIC_BASE_URL)"#,
        ),
        (
            Some("public_base_url = \"https://x.example/?a=1\""),
            vec![],
            none.clone(),
            r#"public_base_url must be an absolute http:// or https:// URL such as https://benefits.example.com, got "https://x.example/?a=1" (from config file FILE)"#,
        ),
        (
            Some("[onboarding]\nverification_time_scale = 0"),
            vec![],
            none.clone(),
            "onboarding.verification_time_scale must be a finite number above 0, got 0 (from config file FILE)",
        ),
        (
            Some("[rate_limits]\nrequests_per_minute = 0"),
            vec![],
            none.clone(),
            "rate_limits.requests_per_minute must be at least 1, got 0 (from config file FILE)",
        ),
        (
            None,
            env("PARTNER_API_RATE_LIMITS__CENSUS_WRITES_PER_MINUTE", "-3"),
            none.clone(),
            "rate_limits.census_writes_per_minute must be at least 1, got -3 (from environment variable PARTNER_API_RATE_LIMITS__CENSUS_WRITES_PER_MINUTE)",
        ),
        (
            None,
            env("PARTNER_API_RATE_LIMITS__QUOTE_CREATES_PER_HOUR", "lots"),
            none.clone(),
            r#"rate_limits.quote_creates_per_hour must be an integer, got "lots" (from environment variable PARTNER_API_RATE_LIMITS__QUOTE_CREATES_PER_HOUR)"#,
        ),
        (
            Some("[rate_limits]\nfailed_auth_per_minute = 5000000000"),
            vec![],
            none.clone(),
            "rate_limits.failed_auth_per_minute is too large, got 5000000000 (from config file FILE)",
        ),
        (
            Some("[pricing]\nwait_budget_ms = -1"),
            vec![],
            none.clone(),
            "pricing.wait_budget_ms must be at least 0, got -1 (from config file FILE)",
        ),
        (
            Some("[pricing]\nrate_card = \"\""),
            vec![],
            none.clone(),
            "pricing.rate_card must not be empty (from config file FILE)",
        ),
        (
            None,
            env("PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE", "0"),
            none.clone(),
            "webhooks.retry_time_scale must be a finite number above 0, got 0 (from environment variable PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE)",
        ),
        (
            Some("[webhooks]\nretry_time_scale = -0.5"),
            vec![],
            none.clone(),
            "webhooks.retry_time_scale must be a finite number above 0, got -0.5 (from config file FILE)",
        ),
        (
            Some("[webhooks]\nretry_time_scale = inf"),
            vec![],
            none.clone(),
            "webhooks.retry_time_scale must be a finite number above 0, got inf (from config file FILE)",
        ),
        (
            None,
            env("PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE", "nan"),
            none.clone(),
            "webhooks.retry_time_scale must be a finite number above 0, got NaN (from environment variable PARTNER_API_WEBHOOKS__RETRY_TIME_SCALE)",
        ),
        (
            None,
            env("PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS", "yes"),
            none.clone(),
            r#"webhooks.allow_insecure_endpoints must be true or false, got "yes" (from environment variable PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS)"#,
        ),
        (
            None,
            env("PARTNER_API_PROXY__TRUSTED", "10.0.0.1,10.0.0.0/8"),
            none.clone(),
            r#"proxy.trusted must list ip addresses, got "10.0.0.0/8" (from environment variable PARTNER_API_PROXY__TRUSTED)"#,
        ),
        (
            Some("[proxy]\ntrusted = \"10.0.0.1\""),
            vec![],
            none.clone(),
            r#"proxy.trusted must be a list of ip addresses, got "10.0.0.1" (from config file FILE)"#,
        ),
        (
            None,
            env("PARTNER_API_SECRETS__SEALING_KEY", "c0ffee-not-hex"),
            none.clone(),
            "secrets.sealing_key must be 64 hex characters (from environment variable PARTNER_API_SECRETS__SEALING_KEY)",
        ),
    ];
    for (file, env, flags, want) in cases {
        assert_eq!(message(file, &env, &flags), want);
    }
}

#[test]
fn the_public_base_url_is_kept_without_its_trailing_slash() {
    let s = ok(None, &[], &Overrides::default());
    assert_eq!(s.public_base_url, "http://127.0.0.1:8080");
    let s = ok(
        Some("public_base_url = \"https://benefits.example.com/partner-api/\""),
        &[],
        &Overrides::default(),
    );
    assert_eq!(
        s.public_base_url,
        "https://benefits.example.com/partner-api"
    );
    let s = ok(
        None,
        &[
            ("PARTNER_API_PUBLIC_BASE_URL", "http://127.0.0.1:9000"),
            ("PARTNER_API_ONBOARDING__VERIFICATION_TIME_SCALE", "0.01"),
        ],
        &Overrides::default(),
    );
    assert_eq!(s.public_base_url, "http://127.0.0.1:9000");
    assert!((s.onboarding.verification_time_scale - 0.01).abs() < f64::EPSILON);
}

#[test]
fn an_unset_public_base_url_follows_the_listen_address() {
    let flags = |listen: &str| Overrides {
        listen: Some(listen.to_owned()),
        database_url: None,
    };
    let s = ok(None, &[], &flags("127.0.0.1:18080"));
    assert_eq!(s.public_base_url, "http://127.0.0.1:18080");
    let s = ok(
        Some("listen = \"0.0.0.0:9090\""),
        &[],
        &Overrides::default(),
    );
    assert_eq!(s.public_base_url, "http://127.0.0.1:9090");
    let s = ok(
        None,
        &[("PARTNER_API_LISTEN", "[::]:9091")],
        &Overrides::default(),
    );
    assert_eq!(s.public_base_url, "http://[::1]:9091");
    // A configured base URL is kept wherever the service listens.
    let s = ok(
        Some("public_base_url = \"https://benefits.example.com\""),
        &[],
        &flags("127.0.0.1:18080"),
    );
    assert_eq!(s.public_base_url, "https://benefits.example.com");
}

#[test]
fn the_member_login_url_has_no_default_and_is_an_absolute_url() {
    assert_eq!(ok(None, &[], &Overrides::default()).member_login_url, None);
    let s = ok(
        Some("[members]\nlogin_url = \"https://members.benefits.example/\"\n"),
        &[],
        &Overrides::default(),
    );
    assert_eq!(
        s.member_login_url.as_deref(),
        Some("https://members.benefits.example")
    );
    assert_eq!(
        message(
            None,
            &[("PARTNER_API_MEMBERS__LOGIN_URL", "members.benefits.example")],
            &Overrides::default()
        ),
        r#"members.login_url must be an absolute http:// or https:// URL such as https://benefits.example.com, got "members.benefits.example" (from environment variable PARTNER_API_MEMBERS__LOGIN_URL)"#
    );
}

#[test]
fn integers_are_accepted_where_a_number_is_wanted() {
    let s = ok(
        Some("[webhooks]\nretry_time_scale = 2"),
        &[],
        &Overrides::default(),
    );
    assert!((s.webhooks.retry_time_scale - 2.0).abs() < f64::EPSILON);
}

#[test]
fn debug_redacts_the_sealing_key_and_database_credentials() {
    let key = "5e".repeat(32);
    let s = ok(
        None,
        &[("PARTNER_API_SECRETS__SEALING_KEY", &key)],
        &flags(
            None,
            Some("postgres://app:hunter2@db.internal:5432/partners"),
        ),
    );
    let debug = format!("{s:?}");
    assert!(!debug.contains(&key), "{debug}");
    assert!(!debug.contains("hunter2"), "{debug}");
    assert!(
        debug.contains("postgres db.internal:5432/partners"),
        "{debug}"
    );
}

#[test]
fn sources_read_well() {
    assert_eq!(Source::Default.to_string(), "the defaults");
    assert_eq!(
        Source::Env("PARTNER_API_LISTEN".to_owned()).to_string(),
        "environment variable PARTNER_API_LISTEN"
    );
    assert_eq!(Source::Flag("--listen").to_string(), "flag --listen");
}

#[test]
fn describe_hides_credentials() {
    for (url, shown) in [
        ("postgres://u:S3cret@h:5432/db", "postgres h:5432/db"),
        ("postgres://h:1/db?password=S3cret", "postgres h:1/db"),
        (
            "postgresql://u@h/db?sslmode=require&password=x",
            "postgres h/db",
        ),
    ] {
        let db = Database::parse(url).unwrap();
        assert_eq!(describe(&db), shown);
    }
}

#[test]
fn email_defaults_to_recording_from_the_service_address() {
    let s = ok(None, &[], &Overrides::default());
    assert!(matches!(s.email.url, mail::MailUrl::Record));
    assert_eq!(s.email.from.to_string(), "no-reply@service.example");
}

#[test]
fn email_keys_layer_like_the_others() {
    let file = "[email]\nurl = \"smtps://mail.file.example\"\nfrom = \"file@service.example\"\n";
    let s = ok(Some(file), &[], &Overrides::default());
    assert_eq!(s.email.url.to_string(), "smtps mail.file.example:465");
    assert_eq!(s.email.from.to_string(), "file@service.example");

    let env = [
        (
            "PARTNER_API_EMAIL__URL",
            "smtp://relay.internal:2525?tls=required",
        ),
        ("PARTNER_API_EMAIL__FROM", "Service <hello@service.example>"),
    ];
    let s = ok(Some(file), &env, &Overrides::default());
    assert_eq!(
        s.email.url.to_string(),
        "smtp relay.internal:2525 (starttls)"
    );
    assert_eq!(
        s.email.from.mailbox().email.to_string(),
        "hello@service.example"
    );

    for record in ["record:", "", " record: "] {
        let s = ok(
            Some(file),
            &[("PARTNER_API_EMAIL__URL", record)],
            &Overrides::default(),
        );
        assert!(matches!(s.email.url, mail::MailUrl::Record), "{record:?}");
    }
}

#[test]
fn a_bad_email_setting_is_one_line_naming_the_key_never_the_password() {
    let none = Overrides::default();
    let env = |k: &'static str, v: &'static str| vec![(k, v)];
    let cases: Vec<Case<'_>> = vec![
        (
            None,
            env(
                "PARTNER_API_EMAIL__URL",
                "smtp://u:hunter2@mail.example.com",
            ),
            none.clone(),
            "email.url must not send credentials unencrypted: use smtps://… or smtp://…?tls=required (from environment variable PARTNER_API_EMAIL__URL)",
        ),
        (
            Some("[email]\nurl = \"https://u:hunter2@mail.example.com\""),
            vec![],
            none.clone(),
            "email.url must be record:, smtp://… or smtps://…, got a https: URL (from config file FILE)",
        ),
        (
            None,
            env(
                "PARTNER_API_EMAIL__URL",
                "smtps://u:hun#ter2@mail.example.com",
            ),
            none.clone(),
            "email.url is not a valid url (percent-encode special characters in the user and password) (from environment variable PARTNER_API_EMAIL__URL)",
        ),
        (
            None,
            env(
                "PARTNER_API_EMAIL__URL",
                "smtp://mail.example.com?tsl=required",
            ),
            none.clone(),
            r#"email.url has an unknown parameter "tsl"; only tls is known (from environment variable PARTNER_API_EMAIL__URL)"#,
        ),
        (
            Some("[email]\nurl = 25"),
            vec![],
            none.clone(),
            "email.url must be a string (from config file FILE)",
        ),
        (
            None,
            env("PARTNER_API_EMAIL__FROM", "no-reply"),
            none.clone(),
            r#"email.from must be an email address like no-reply@service.example or Name <no-reply@service.example>, got "no-reply" (from environment variable PARTNER_API_EMAIL__FROM)"#,
        ),
        (
            Some("[email]\nsmtp_url = \"smtp://x\""),
            vec![],
            none.clone(),
            "unknown key `email.smtp_url` in config file FILE",
        ),
    ];
    for (file, env, flags, want) in cases {
        let got = message(file, &env, &flags);
        assert!(
            !got.contains("hunter2") && !got.contains("hun#ter2"),
            "{got}"
        );
        assert_eq!(got, want);
    }
}

#[test]
fn debug_redacts_the_email_credentials() {
    let s = ok(
        None,
        &[(
            "PARTNER_API_EMAIL__URL",
            "smtps://apikey%2Bprod:hunter2@smtp.mail.example:2465",
        )],
        &Overrides::default(),
    );
    let debug = format!("{s:?}");
    assert!(!debug.contains("hunter2"), "{debug}");
    assert!(!debug.contains("apikey"), "{debug}");
    assert!(
        debug.contains("smtps smtp.mail.example:2465 (authenticated)"),
        "{debug}"
    );
    assert_eq!(
        s.email.url.to_string(),
        "smtps smtp.mail.example:2465 (authenticated)"
    );
}

#[test]
fn the_defaults_are_each_adapter_s_default() {
    let s = ok(None, &[], &Overrides::default());
    let d = Settings::default();
    assert_eq!(s.listen, d.listen);
    assert_eq!(s.database, d.database);
    assert_eq!(s.http, crate::config::HttpConfig::default());
    assert_eq!(s.http.body_timeout, Duration::from_secs(60));
    assert_eq!(s.pricing, crate::config::PricingSettings::default());
    assert_eq!(s.webhooks, crate::config::WebhookSettings::default());
    assert_eq!(s.secrets.sealing_key_file, d.secrets.sealing_key_file);
    assert_eq!(s.email.from, mail::FromAddress::default());
}

/// One key set in every layer: default < file < environment < flag.
#[test]
fn the_highest_layer_setting_a_key_wins() {
    let file = Some("listen = \"127.0.0.1:1001\"\nbody_timeout_secs = 7\n");
    let env = [
        ("PARTNER_API_LISTEN", "127.0.0.1:2002"),
        ("PARTNER_API_BODY_TIMEOUT_SECS", "8"),
    ];
    let flag = flags(Some("127.0.0.1:3003"), None);
    let none = Overrides::default();

    let s = ok(None, &[], &none);
    assert_eq!(s.listen.port(), 8080);
    assert_eq!(s.http.body_timeout, Duration::from_secs(60));
    let s = ok(file, &[], &none);
    assert_eq!(s.listen.port(), 1001);
    assert_eq!(s.http.body_timeout, Duration::from_secs(7));
    let s = ok(file, &env, &none);
    assert_eq!(s.listen.port(), 2002);
    assert_eq!(s.http.body_timeout, Duration::from_secs(8));
    let s = ok(file, &env, &flag);
    assert_eq!(s.listen.port(), 3003);
    assert_eq!(
        s.http.body_timeout,
        Duration::from_secs(8),
        "no flag sets it"
    );
    let s = ok(None, &[], &flag);
    assert_eq!(s.listen.port(), 3003, "a flag over the defaults alone");
    let s = ok(None, &env, &none);
    assert_eq!(s.listen.port(), 2002, "a variable over the defaults alone");
}

/// Only the winning value is validated, and a refusal names its layer.
#[test]
fn a_refused_value_names_the_layer_that_won() {
    let bad_file = Some("listen = \"nowhere\"\n[rate_limits]\nrequests_per_minute = 0\n");
    let s = ok(
        bad_file,
        &[("PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE", "9")],
        &flags(Some("127.0.0.1:3003"), None),
    );
    assert_eq!(s.listen.port(), 3003);
    assert_eq!(s.http.limits.requests_per_minute, 9);

    let good_file = Some("listen = \"127.0.0.1:1001\"");
    assert_eq!(
        message(
            good_file,
            &[("PARTNER_API_LISTEN", "nowhere")],
            &Overrides::default()
        ),
        r#"listen must be a socket address like 127.0.0.1:8080, got "nowhere" (from environment variable PARTNER_API_LISTEN)"#
    );
    assert_eq!(
        message(
            good_file,
            &[("PARTNER_API_LISTEN", "127.0.0.1:2002")],
            &flags(Some("nowhere"), None)
        ),
        r#"listen must be a socket address like 127.0.0.1:8080, got "nowhere" (from flag --listen)"#
    );
    assert_eq!(
        message(
            Some("[rate_limits]\nrequests_per_minute = 0"),
            &[("PARTNER_API_RATE_LIMITS__CENSUS_WRITES_PER_MINUTE", "3")],
            &Overrides::default()
        ),
        "rate_limits.requests_per_minute must be at least 1, got 0 (from config file FILE)"
    );
}

#[test]
fn two_spellings_of_one_variable_resolve_the_same_way_every_time() {
    let env = [
        ("PARTNER_API_listen", "127.0.0.1:2"),
        ("PARTNER_API_LISTEN", "127.0.0.1:1"),
    ];
    let s = ok(None, &env, &Overrides::default());
    assert_eq!(s.listen.port(), 2, "sorted by name, the last applies");
    let reversed = [env[1], env[0]];
    let s = ok(None, &reversed, &Overrides::default());
    assert_eq!(s.listen.port(), 2);
}

#[test]
fn file_values_of_every_toml_type_come_through_the_merge_unchanged() {
    let m = |file| message(Some(file), &[], &Overrides::default());
    assert_eq!(
        m("listen = 1979-05-27"),
        "listen must be a string, got 1979-05-27 (from config file FILE)"
    );
    assert_eq!(
        m("listen = 1979-05-27T07:32:00Z"),
        "listen must be a string, got 1979-05-27T07:32:00Z (from config file FILE)"
    );
    assert_eq!(
        m("listen = [1, \"a\"]"),
        r#"listen must be a string, got [1, "a"] (from config file FILE)"#
    );
    assert_eq!(
        m("listen = { a = 1 }"),
        "listen must be a string, got { a = 1 } (from config file FILE)"
    );
    assert_eq!(
        m("body_timeout_secs = 1.5"),
        "body_timeout_secs must be an integer, got 1.5 (from config file FILE)"
    );
}
