//! The email settings: defaults, layering, one-line refusals and redaction.

use crate::config::Overrides;
use crate::config::tests::{Case, message, ok};

#[test]
fn email_defaults_to_recording_from_no_reply_at_localhost() {
    let s = ok(None, &[], &Overrides::default());
    assert!(matches!(s.email.url, mail::MailUrl::Record));
    assert_eq!(s.email.from.to_string(), "no-reply@localhost");
}

#[test]
fn the_default_sender_is_at_the_public_base_urls_domain() {
    let none = Overrides::default();
    for (base, url) in [
        ("https://benefits.example.com", "record:"),
        (
            "https://Benefits.example.com:8443/api",
            "smtps://mail.example.com",
        ),
    ] {
        let env = [
            ("PARTNER_API_PUBLIC_BASE_URL", base),
            ("PARTNER_API_EMAIL__URL", url),
        ];
        let s = ok(None, &env, &none);
        assert_eq!(
            s.email.from.to_string(),
            "no-reply@benefits.example.com",
            "{base}"
        );
    }
    // An explicit sender wins over the derived one.
    let env = [
        (
            "PARTNER_API_PUBLIC_BASE_URL",
            "https://benefits.example.com",
        ),
        (
            "PARTNER_API_EMAIL__FROM",
            "Benefits <hello@mail.example.com>",
        ),
    ];
    assert_eq!(
        ok(None, &env, &none).email.from.mailbox().email.to_string(),
        "hello@mail.example.com"
    );
    // A base URL on an IP address with an SMTP relay and no sender set.
    let env = [
        ("PARTNER_API_PUBLIC_BASE_URL", "http://10.0.0.7:8080"),
        ("PARTNER_API_EMAIL__URL", "smtp://relay.internal:2525"),
        ("PARTNER_API_EMAIL__FROM", "hello@mail.example.com"),
    ];
    assert_eq!(
        ok(None, &env, &none).email.from.to_string(),
        "hello@mail.example.com"
    );
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
            None,
            env("PARTNER_API_EMAIL__URL", "smtp://relay.internal:2525"),
            none.clone(),
            "email.url sends mail, so email.from must be set: public_base_url http://127.0.0.1:8080 names no domain to send from (from environment variable PARTNER_API_EMAIL__URL)",
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
        &[
            (
                "PARTNER_API_EMAIL__URL",
                "smtps://apikey%2Bprod:hunter2@smtp.mail.example:2465",
            ),
            ("PARTNER_API_EMAIL__FROM", "no-reply@benefits.example.com"),
        ],
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
