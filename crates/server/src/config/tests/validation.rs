//! Validation naming the key and its source, and the URL and number settings.

use crate::config::Overrides;
use crate::config::tests::{Case, flags, message, ok};

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
