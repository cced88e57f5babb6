//! `Debug`, sources and `describe` keeping the sealing key and credentials hidden.

use store_diesel::Database;

use crate::config::tests::{flags, ok};
use crate::config::{Source, describe};

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
