//! Typed settings, loaded in the layers of contract section 0: built-in
//! defaults < TOML file (`--config FILE`) < environment variables
//! `PARTNER_API_*` < command-line flags, then validated once, before
//! anything starts.
//!
//! - **File:** every key must be one of [`DEFAULTS`] (or
//!   `secrets.sealing_key`); an unknown key is an error naming it.
//! - **Environment:** `PARTNER_API_` + the key path (in any case), nested
//!   keys joined by `__` (`PARTNER_API_DATABASE_URL`,
//!   `PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE`). Values are read as
//!   TOML scalars where the key wants a number or a boolean, else taken
//!   verbatim; a list (`proxy.trusted`) is a TOML array or comma-separated.
//!   Variables with the prefix that name no key are **ignored**, so other
//!   tools may share the prefix (the test suites set
//!   `PARTNER_API_TEST_POSTGRES_URL`); a misspelt variable is therefore
//!   silently without effect.
//! - **Flags:** `--listen` and `--database-url` ([`Overrides`]).
//!
//! Every failure is one lowercase line naming the key and the layer it
//! came from, e.g. `rate_limits.requests_per_minute must be at least 1,
//! got 0 (from environment variable PARTNER_API_RATE_LIMITS__REQUESTS_PER_MINUTE)`.
//! Relative paths (`pricing.rate_card`, `secrets.sealing_key_file`, an
//! SQLite file) are relative to the working directory.
//!
//! Values that may hold credentials (`database_url`, `email.url`) are
//! never repeated in an error and are described without them
//! ([`describe`], [`mail::MailUrl`]'s `Display`).

mod layers;
#[cfg(test)]
mod tests;

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use mail::{FromAddress, MailUrl};
use secrecy::SecretString;
use store_diesel::Database;

use crate::config::layers::{Layers, Value};

/// The built-in defaults, in the configuration file's own syntax (every
/// key a file may set, except the optional `secrets.sealing_key`).
pub const DEFAULTS: &str = r#"
listen = "127.0.0.1:8080"
database_url = "sqlite://data/partner-api.sqlite"
body_timeout_secs = 60

[rate_limits]
requests_per_minute = 120
census_writes_per_minute = 20
quote_creates_per_hour = 60
failed_auth_per_minute = 30

[pricing]
rate_card = "rate-cards/2026.toml"
wait_budget_ms = 10000

[webhooks]
allow_insecure_endpoints = false
retry_time_scale = 1.0

[proxy]
trusted = []

[secrets]
sealing_key_file = "data/sealing.key"

[email]
url = "record:"
from = "no-reply@service.example"
"#;

/// The prefix of the environment variables read.
pub const ENV_PREFIX: &str = "PARTNER_API_";

/// Every setting, validated.
#[derive(Clone)]
pub struct Settings {
    /// `listen`: the HTTP listen address.
    pub listen: SocketAddr,
    /// `database_url`, parsed: an SQLite file or a PostgreSQL URL. Its
    /// `Debug` form hides PostgreSQL credentials.
    pub database: Database,
    /// `body_timeout_secs`: how long a client has to send a whole request
    /// body, from the end of its head (at least 1).
    pub body_timeout_secs: u64,
    /// `[rate_limits]`.
    pub rate_limits: RateLimits,
    /// `[pricing]`.
    pub pricing: PricingSettings,
    /// `[webhooks]`.
    pub webhooks: WebhookSettings,
    /// `[proxy]`.
    pub proxy: ProxySettings,
    /// `[secrets]`.
    pub secrets: SecretSettings,
    /// `[email]`.
    pub email: EmailSettings,
}

/// `[rate_limits]` (contract section 5); each at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Per key, all requests.
    pub requests_per_minute: u32,
    /// Per key, census and member writes and elections.
    pub census_writes_per_minute: u32,
    /// Per key, `POST /quotes` and price-on-plan.
    pub quote_creates_per_hour: u32,
    /// Per source IP, failed authentications.
    pub failed_auth_per_minute: u32,
}

/// `[pricing]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricingSettings {
    /// Path of the rate card in use.
    pub rate_card: PathBuf,
    /// How long price-on-plan waits before answering 202; 0 answers 202 at
    /// once and leaves the pricing to the job worker.
    pub wait_budget_ms: u64,
}

/// `[webhooks]`.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookSettings {
    /// Whether `http://` and private or loopback hosts are allowed.
    pub allow_insecure_endpoints: bool,
    /// Multiplies the 1 s / 5 s / 25 s retry delays (finite, above 0).
    pub retry_time_scale: f64,
}

/// `[proxy]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProxySettings {
    /// Peers whose `X-Forwarded-For` is believed.
    pub trusted: Vec<IpAddr>,
}

/// `[secrets]`.
#[derive(Debug, Clone)]
pub struct SecretSettings {
    /// The file holding the AES-256 key (64 hex characters) that seals test
    /// keys' plaintexts at rest; created with mode 0600 on first use.
    pub sealing_key_file: PathBuf,
    /// The key itself (64 hex characters, checked at load), which takes
    /// precedence over the file; best set through the environment.
    /// Redacted in `Debug`.
    pub sealing_key: Option<SecretString>,
}

/// `[email]`: where outbound email goes. Its `Debug` form hides the
/// URL's user and password.
#[derive(Debug, Clone)]
pub struct EmailSettings {
    /// `email.url`: `record:` (the default; keep messages, send nothing),
    /// `smtps://[user:password@]host[:port]` or
    /// `smtp://…[?tls=required|opportunistic]`.
    pub url: MailUrl,
    /// `email.from`: the sender of every message.
    pub from: FromAddress,
}

/// Values given as command-line flags, the top layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--listen ADDR`.
    pub listen: Option<String>,
    /// `--database-url URL`.
    pub database_url: Option<String>,
}

/// The layer a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in defaults.
    Default,
    /// The `--config` file.
    File(PathBuf),
    /// An environment variable (its name).
    Env(String),
    /// A command-line flag (its name, `--listen`).
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("the defaults"),
            Self::File(path) => write!(f, "config file {}", path.display()),
            Self::Env(name) => write!(f, "environment variable {name}"),
            Self::Flag(name) => write!(f, "flag {name}"),
        }
    }
}

/// Why the settings cannot be loaded. Each renders as one line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The `--config` file cannot be read.
    #[error("cannot read config file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        cause: std::io::Error,
    },
    /// The file is not TOML.
    #[error("config file {} is not valid toml: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message and position.
        message: String,
    },
    /// The file sets a key that does not exist.
    #[error("unknown key `{key}` in config file {}", path.display())]
    UnknownKey {
        /// The dotted key.
        key: String,
        /// The file.
        path: PathBuf,
    },
    /// A value is refused.
    #[error("{key} {problem} (from {origin})")]
    Invalid {
        /// The dotted key.
        key: String,
        /// What is wrong, e.g. `must be at least 1, got 0`.
        problem: String,
        /// Where the value came from.
        origin: Source,
    },
}

impl Settings {
    /// Loads the layers — defaults, then `file`, then the `PARTNER_API_*`
    /// variables among `env`, then `flags` — and validates the result.
    /// Takes the environment as pairs so tests need not touch the
    /// process's own.
    ///
    /// # Errors
    /// [`ConfigError`] for an unreadable or invalid file, an unknown file
    /// key, or any value that fails validation.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        flags: &Overrides,
    ) -> Result<Self, ConfigError> {
        let mut layers = Layers::defaults()?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Read {
                path: path.to_owned(),
                cause,
            })?;
            layers.file(&text, path)?;
        }
        layers.env(env);
        if let Some(listen) = &flags.listen {
            layers.flag("listen", "--listen", listen);
        }
        if let Some(url) = &flags.database_url {
            layers.flag("database_url", "--database-url", url);
        }
        Self::from_layers(&layers)
    }

    /// [`Settings::load`] with the process's environment (a variable whose
    /// value is not UTF-8 is read lossily, and so refused by validation).
    ///
    /// # Errors
    /// As [`Settings::load`].
    pub fn from_process(file: Option<&Path>, flags: &Overrides) -> Result<Self, ConfigError> {
        let env = std::env::vars_os().filter_map(|(k, v)| {
            let k = k.into_string().ok()?;
            k.starts_with(ENV_PREFIX)
                .then(|| (k, v.to_string_lossy().into_owned()))
        });
        Self::load(file, env, flags)
    }

    fn from_layers(l: &Layers) -> Result<Self, ConfigError> {
        let listen = l.parsed("listen", "must be a socket address like 127.0.0.1:8080")?;
        let (url, origin) = l.string("database_url")?;
        let database = Database::parse(&url).map_err(|e| {
            let text = e.to_string();
            ConfigError::Invalid {
                key: "database_url".to_owned(),
                problem: text
                    .strip_prefix("database_url ")
                    .unwrap_or(&text)
                    .to_owned(),
                origin,
            }
        })?;
        let body_timeout_secs = l.limit("body_timeout_secs")?;
        let rate_limits = RateLimits {
            requests_per_minute: l.limit("rate_limits.requests_per_minute")?,
            census_writes_per_minute: l.limit("rate_limits.census_writes_per_minute")?,
            quote_creates_per_hour: l.limit("rate_limits.quote_creates_per_hour")?,
            failed_auth_per_minute: l.limit("rate_limits.failed_auth_per_minute")?,
        };
        let pricing = PricingSettings {
            rate_card: l.path("pricing.rate_card")?,
            wait_budget_ms: l.at_least("pricing.wait_budget_ms", 0)?,
        };
        let webhooks = WebhookSettings {
            allow_insecure_endpoints: l.bool("webhooks.allow_insecure_endpoints")?,
            retry_time_scale: l.positive_float("webhooks.retry_time_scale")?,
        };
        let proxy = ProxySettings {
            trusted: l.ip_list("proxy.trusted")?,
        };
        let secrets = SecretSettings {
            sealing_key_file: l.path("secrets.sealing_key_file")?,
            sealing_key: l.sealing_key("secrets.sealing_key")?,
        };
        let email = EmailSettings {
            url: l.mail_url("email.url")?,
            from: l.mail_from("email.from")?,
        };
        Ok(Self {
            listen,
            database,
            body_timeout_secs,
            rate_limits,
            pricing,
            webhooks,
            proxy,
            secrets,
            email,
        })
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("listen", &self.listen)
            .field("database", &describe(&self.database))
            .field("body_timeout_secs", &self.body_timeout_secs)
            .field("rate_limits", &self.rate_limits)
            .field("pricing", &self.pricing)
            .field("webhooks", &self.webhooks)
            .field("proxy", &self.proxy)
            .field("secrets", &self.secrets)
            .field("email", &self.email)
            .finish()
    }
}

/// Where the database is, without credentials (`sqlite data/x.sqlite`,
/// `postgres host:5432/db`).
#[must_use]
pub fn describe(db: &Database) -> String {
    match db {
        Database::Sqlite { path } => format!("sqlite {path}"),
        Database::Postgres { url } => {
            // Neither the user info (`user:password@`) nor the query
            // (`?password=…`, `?sslkey=…`) is shown.
            let rest = url
                .trim_start_matches("postgres://")
                .trim_start_matches("postgresql://");
            let rest = rest.split('?').next().unwrap_or_default();
            let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
            format!("postgres {host}")
        }
    }
}

impl Layers {
    fn invalid(&self, key: &str, problem: String) -> ConfigError {
        ConfigError::Invalid {
            key: key.to_owned(),
            problem,
            origin: self.source(key),
        }
    }

    fn wrong_type(&self, key: &str, want: &str, got: &Value) -> ConfigError {
        self.invalid(key, format!("must be {want}, got {got}"))
    }

    fn string(&self, key: &str) -> Result<(String, Source), ConfigError> {
        match self.value(key) {
            Some(Value::String(s)) => Ok((s.clone(), self.source(key))),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
            None => Err(self.invalid(key, "is missing".to_owned())),
        }
    }

    fn parsed<T: std::str::FromStr>(&self, key: &str, want: &str) -> Result<T, ConfigError> {
        let (text, _) = self.string(key)?;
        text.parse()
            .map_err(|_| self.invalid(key, format!("{want}, got {text:?}")))
    }

    fn path(&self, key: &str) -> Result<PathBuf, ConfigError> {
        let (text, _) = self.string(key)?;
        if text.trim().is_empty() {
            return Err(self.invalid(key, "must not be empty".to_owned()));
        }
        Ok(PathBuf::from(text))
    }

    fn limit<T: TryFrom<i64>>(&self, key: &str) -> Result<T, ConfigError> {
        self.at_least(key, 1)
    }

    fn at_least<T: TryFrom<i64>>(&self, key: &str, min: i64) -> Result<T, ConfigError> {
        match self.value(key) {
            Some(Value::Integer(n)) if *n < min => {
                Err(self.invalid(key, format!("must be at least {min}, got {n}")))
            }
            Some(Value::Integer(n)) => {
                T::try_from(*n).map_err(|_| self.invalid(key, format!("is too large, got {n}")))
            }
            Some(other) => Err(self.wrong_type(key, "an integer", other)),
            None => Err(self.invalid(key, "is missing".to_owned())),
        }
    }

    fn bool(&self, key: &str) -> Result<bool, ConfigError> {
        match self.value(key) {
            Some(Value::Boolean(b)) => Ok(*b),
            Some(other) => Err(self.wrong_type(key, "true or false", other)),
            None => Err(self.invalid(key, "is missing".to_owned())),
        }
    }

    fn positive_float(&self, key: &str) -> Result<f64, ConfigError> {
        let x = match self.value(key) {
            Some(Value::Float(x)) => *x,
            Some(Value::Integer(n)) => i32::try_from(*n).map_or(f64::NAN, f64::from),
            Some(other) => return Err(self.wrong_type(key, "a number", other)),
            None => return Err(self.invalid(key, "is missing".to_owned())),
        };
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(self.invalid(key, format!("must be a finite number above 0, got {x}")))
        }
    }

    fn ip_list(&self, key: &str) -> Result<Vec<IpAddr>, ConfigError> {
        let items = match self.value(key) {
            Some(Value::Array(items)) => items,
            Some(other) => return Err(self.wrong_type(key, "a list of ip addresses", other)),
            None => return Ok(Vec::new()),
        };
        items
            .iter()
            .map(|item| match item {
                Value::String(s) => s
                    .trim()
                    .parse()
                    .map_err(|_| self.invalid(key, format!("must list ip addresses, got {s:?}"))),
                other => Err(self.wrong_type(key, "a list of ip addresses", other)),
            })
            .collect()
    }

    fn sealing_key(&self, key: &str) -> Result<Option<SecretString>, ConfigError> {
        // The value is never echoed: it is a secret even when malformed.
        match self.value(key) {
            None => Ok(None),
            Some(Value::String(s))
                if s.trim().len() == 64 && s.trim().bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                Ok(Some(SecretString::from(s.trim().to_owned())))
            }
            Some(_) => Err(self.invalid(key, "must be 64 hex characters".to_owned())),
        }
    }

    fn mail_url(&self, key: &str) -> Result<MailUrl, ConfigError> {
        // The URL may hold a password: the message names what is wrong,
        // never the value.
        match self.value(key) {
            None => Ok(MailUrl::Record),
            Some(Value::String(s)) => {
                MailUrl::parse(s).map_err(|e| self.invalid(key, e.to_string()))
            }
            Some(_) => Err(self.invalid(key, "must be a string".to_owned())),
        }
    }

    fn mail_from(&self, key: &str) -> Result<FromAddress, ConfigError> {
        let (text, _) = self.string(key)?;
        FromAddress::parse(&text).map_err(|e| self.invalid(key, format!("{e}, got {text:?}")))
    }
}
