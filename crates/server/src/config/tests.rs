//! Unit tests of the layering and validation, on an injected environment
//! (the process's own is never read or changed).

mod display;
mod email;
mod layers;
mod validation;

use std::path::PathBuf;

use crate::config::{ConfigError, Overrides, Settings};

/// Loads with an optional file text (written to a temporary
/// `partner-api.toml`), environment pairs and flags.
pub(super) fn load(
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

pub(super) fn ok(file: Option<&str>, env: &[(&str, &str)], flags: &Overrides) -> Settings {
    load(file, env, flags).0.unwrap()
}

/// The one-line message of a refused load, with the file's path written
/// as `FILE`.
pub(super) fn message(file: Option<&str>, env: &[(&str, &str)], flags: &Overrides) -> String {
    let (result, path) = load(file, env, flags);
    let e = result.unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    e.replace(&path.display().to_string(), "FILE")
}

pub(super) fn flags(listen: Option<&str>, url: Option<&str>) -> Overrides {
    Overrides {
        listen: listen.map(str::to_owned),
        database_url: url.map(str::to_owned),
    }
}

pub(super) fn sqlite_path(s: &Settings) -> String {
    match &s.database {
        store_diesel::Database::Sqlite { path } => path.clone(),
        store_diesel::Database::Postgres { url } => url.clone(),
    }
}

/// A refused load: file text, environment, flags and the exact message.
pub(super) type Case<'a> = (Option<&'a str>, Vec<(&'a str, &'a str)>, Overrides, &'a str);
