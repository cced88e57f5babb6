//! The layering itself, on `toml::Value`: each known key holds the value
//! of the highest layer that set it and the [`Source`] it came from. The
//! typed settings are read from here in `config.rs`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{ConfigError, DEFAULTS, ENV_PREFIX, Source};

pub(crate) use toml::Value;

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
    ("body_timeout_secs", Kind::Scalar),
    ("rate_limits.requests_per_minute", Kind::Scalar),
    ("rate_limits.census_writes_per_minute", Kind::Scalar),
    ("rate_limits.quote_creates_per_hour", Kind::Scalar),
    ("rate_limits.failed_auth_per_minute", Kind::Scalar),
    ("pricing.rate_card", Kind::Text),
    ("pricing.wait_budget_ms", Kind::Scalar),
    ("webhooks.allow_insecure_endpoints", Kind::Scalar),
    ("webhooks.retry_time_scale", Kind::Scalar),
    ("proxy.trusted", Kind::List),
    ("secrets.sealing_key_file", Kind::Text),
    ("secrets.sealing_key", Kind::Text),
    ("email.url", Kind::Text),
    ("email.from", Kind::Text),
];

/// The tables that group keys.
const TABLES: &[&str] = &[
    "rate_limits",
    "pricing",
    "webhooks",
    "proxy",
    "secrets",
    "email",
];

fn known(key: &str) -> Option<(&'static str, Kind)> {
    KEYS.iter().find(|(k, _)| *k == key).copied()
}

/// The merged layers.
#[derive(Debug, Default)]
pub(crate) struct Layers {
    values: BTreeMap<&'static str, (Value, Source)>,
}

impl Layers {
    /// The built-in defaults.
    pub(crate) fn defaults() -> Result<Self, ConfigError> {
        let mut layers = Self::default();
        let table = parse(DEFAULTS, Path::new("<defaults>"))?;
        layers.merge_table(table, "", &Source::Default, Path::new("<defaults>"))?;
        Ok(layers)
    }

    /// Lays a TOML file over the values so far.
    pub(crate) fn file(&mut self, text: &str, path: &Path) -> Result<(), ConfigError> {
        let table = parse(text, path)?;
        self.merge_table(table, "", &Source::File(path.to_owned()), path)
    }

    fn merge_table(
        &mut self,
        table: toml::Table,
        prefix: &str,
        source: &Source,
        path: &Path,
    ) -> Result<(), ConfigError> {
        for (name, value) in table {
            let key = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}.{name}")
            };
            if let Some((known, _)) = known(&key) {
                self.values.insert(known, (value, source.clone()));
            } else if TABLES.contains(&key.as_str()) {
                match value {
                    Value::Table(inner) => self.merge_table(inner, &key, source, path)?,
                    other => {
                        return Err(ConfigError::Invalid {
                            key,
                            problem: format!("must be a table, got {other}"),
                            origin: source.clone(),
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

    /// Lays the `PARTNER_API_*` variables among `env` over the values so
    /// far; variables naming no key are ignored.
    pub(crate) fn env(&mut self, env: impl IntoIterator<Item = (String, String)>) {
        // Sorted, so that two spellings of one key resolve the same way on
        // every run.
        let mut vars: Vec<(String, String)> = env
            .into_iter()
            .filter(|(name, _)| name.starts_with(ENV_PREFIX))
            .collect();
        vars.sort();
        for (name, text) in vars {
            let Some(rest) = name.get(ENV_PREFIX.len()..) else {
                continue;
            };
            let key = rest.to_ascii_lowercase().replace("__", ".");
            if let Some((key, kind)) = known(&key) {
                self.values
                    .insert(key, (env_value(&text, kind), Source::Env(name)));
            }
        }
    }

    /// Sets `key` from a command-line flag.
    pub(crate) fn flag(&mut self, key: &'static str, flag: &'static str, text: &str) {
        self.values
            .insert(key, (Value::String(text.to_owned()), Source::Flag(flag)));
    }

    /// The value of `key`, if any layer set it.
    pub(crate) fn value(&self, key: &str) -> Option<&Value> {
        self.values.get(key).map(|(v, _)| v)
    }

    /// The layer `key` came from.
    pub(crate) fn source(&self, key: &str) -> Source {
        self.values
            .get(key)
            .map_or(Source::Default, |(_, s)| s.clone())
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
