//! The layers above the defaults, each a `figment` [`Provider`]: the
//! `--config` file, one per `PARTNER_API_*` variable that names a key, one
//! per flag. Each carries the [`Source`] that errors name (a file's path,
//! a variable's exact name, a flag), and holds only known keys, as TOML
//! values (carried through figment's values by serde, TOML dates
//! included). The file is read and checked when its layer is made, so an
//! unknown key or bad syntax is reported with today's exact messages.

use std::path::Path;

use figment::value::{Dict, Map};
use figment::{Metadata, Profile, Provider};
use toml::Value;

use crate::config::{ConfigError, ENV_PREFIX, Source};

/// How an environment variable's text becomes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Taken verbatim (or unquoted, when written as a TOML string).
    Text,
    /// A TOML scalar (integer, float, boolean); other text stays a string
    /// and fails validation with the key's name.
    Scalar,
    /// A TOML array, or comma-separated strings.
    List,
}

/// Every key a layer may set.
const KEYS: &[(&str, Kind)] = &[
    ("listen", Kind::Text),
    ("database_url", Kind::Text),
    ("public_base_url", Kind::Text),
    ("body_timeout_secs", Kind::Scalar),
    ("rate_limits.requests_per_minute", Kind::Scalar),
    ("rate_limits.census_writes_per_minute", Kind::Scalar),
    ("rate_limits.quote_creates_per_hour", Kind::Scalar),
    ("rate_limits.failed_auth_per_minute", Kind::Scalar),
    ("pricing.rate_card", Kind::Text),
    ("pricing.wait_budget_ms", Kind::Scalar),
    ("webhooks.allow_insecure_endpoints", Kind::Scalar),
    ("webhooks.retry_time_scale", Kind::Scalar),
    ("webhooks.attempt_timeout_ms", Kind::Scalar),
    ("webhooks.disable_after_hours", Kind::Scalar),
    ("proxy.trusted", Kind::List),
    ("secrets.sealing_key_file", Kind::Text),
    ("secrets.sealing_key", Kind::Text),
    ("email.url", Kind::Text),
    ("email.from", Kind::Text),
    ("onboarding.verification_time_scale", Kind::Scalar),
    ("embed.session_minutes", Kind::Scalar),
    ("members.login_url", Kind::Text),
];

/// The tables that group keys.
const TABLES: &[&str] = &[
    "rate_limits",
    "pricing",
    "webhooks",
    "proxy",
    "secrets",
    "email",
    "onboarding",
    "embed",
    "members",
];

fn known(key: &str) -> Option<(&'static str, Kind)> {
    KEYS.iter().find(|(k, _)| *k == key).copied()
}

/// One layer: where it came from and the known keys it sets.
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    source: Source,
    values: Vec<(&'static str, Value)>,
}

impl Layer {
    /// The `--config` file, read and checked: TOML, known keys only, and a
    /// table where a key groups others.
    pub(crate) fn file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Read {
            path: path.to_owned(),
            cause,
        })?;
        let mut layer = Self {
            source: Source::File(path.to_owned()),
            values: Vec::new(),
        };
        layer.table(parse(&text, path)?, "", path)?;
        Ok(layer)
    }

    fn table(&mut self, table: toml::Table, prefix: &str, path: &Path) -> Result<(), ConfigError> {
        for (name, value) in table {
            let key = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}.{name}")
            };
            if let Some((known, _)) = known(&key) {
                self.values.push((known, value));
            } else if TABLES.contains(&key.as_str()) {
                match value {
                    Value::Table(inner) => self.table(inner, &key, path)?,
                    other => {
                        return Err(ConfigError::Invalid {
                            key,
                            problem: format!("must be a table, got {other}"),
                            origin: self.source.clone(),
                        });
                    }
                }
            } else {
                return Err(ConfigError::UnknownKey {
                    key,
                    path: path.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// One layer per `PARTNER_API_*` variable among `env` that names a
    /// key, in the order they apply; the others are ignored.
    pub(crate) fn env(env: impl IntoIterator<Item = (String, String)>) -> Vec<Self> {
        // Sorted, so that two spellings of one key resolve the same way on
        // every run.
        let mut vars: Vec<(String, String)> = env
            .into_iter()
            .filter(|(name, _)| name.starts_with(ENV_PREFIX))
            .collect();
        vars.sort();
        vars.into_iter()
            .filter_map(|(name, text)| {
                let rest = name.get(ENV_PREFIX.len()..)?;
                let (key, kind) = known(&rest.to_ascii_lowercase().replace("__", "."))?;
                Some(Self {
                    source: Source::Env(name),
                    values: vec![(key, env_value(&text, kind))],
                })
            })
            .collect()
    }

    /// `key` set by the command-line flag `flag`.
    pub(crate) fn flag(key: &'static str, flag: &'static str, text: &str) -> Self {
        Self {
            source: Source::Flag(flag),
            values: vec![(key, Value::String(text.to_owned()))],
        }
    }

    /// Where the layer came from.
    pub(crate) const fn source(&self) -> &Source {
        &self.source
    }
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        let named = Metadata::named(self.source.to_string());
        match &self.source {
            Source::File(path) => named.source(figment::Source::File(path.clone())),
            _ => named,
        }
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        let mut root = toml::Table::new();
        for (key, value) in &self.values {
            let (table, name) = match key.split_once('.') {
                Some((table, name)) => {
                    let entry = root
                        .entry(table)
                        .or_insert_with(|| Value::Table(toml::Table::new()));
                    match entry {
                        Value::Table(inner) => (inner, name),
                        _ => continue,
                    }
                }
                None => (&mut root, *key),
            };
            table.insert(name.to_owned(), value.clone());
        }
        let dict: Dict = figment::value::Value::serialize(root)?
            .into_dict()
            .unwrap_or_default();
        Ok(Profile::Default.collect(dict))
    }
}

/// Parses a TOML document, reporting a syntax error on one line with its
/// line number (never the offending text, which may hold a secret).
fn parse(text: &str, path: &Path) -> Result<toml::Table, ConfigError> {
    toml::from_str(text).map_err(|e: toml::de::Error| {
        let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        let line = e
            .span()
            .and_then(|span| text.get(..span.start))
            .map(|before| before.matches('\n').count() + 1);
        ConfigError::Syntax {
            path: path.to_owned(),
            message: match line {
                Some(n) => format!("{} at line {n}", message.to_lowercase()),
                None => message.to_lowercase(),
            },
        }
    })
}

/// An environment variable's text as a value of `kind`.
fn env_value(text: &str, kind: Kind) -> Value {
    let parsed = scalar(text);
    match kind {
        Kind::Text => match parsed {
            Some(Value::String(s)) => Value::String(s),
            _ => Value::String(text.to_owned()),
        },
        Kind::Scalar => parsed.unwrap_or_else(|| Value::String(text.to_owned())),
        Kind::List => match parsed {
            Some(array @ Value::Array(_)) => array,
            _ => Value::Array(
                text.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| Value::String(s.to_owned()))
                    .collect(),
            ),
        },
    }
}

/// `text` read as one TOML value, if it is one.
fn scalar(text: &str) -> Option<Value> {
    let mut table: toml::Table = toml::from_str(&format!("v = {text}")).ok()?;
    if table.len() != 1 {
        return None;
    }
    table.remove("v")
}
