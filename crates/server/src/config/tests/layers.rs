//! Defaults, and each layer (file, env, flag) overriding the one below, key by key.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use secrecy::ExposeSecret as _;

use crate::config::tests::{flags, message, ok, sqlite_path};
use crate::config::{ConfigError, Overrides, Settings};

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
