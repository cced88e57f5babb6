//! Typed settings, loaded in the layers of contract section 0: built-in
//! defaults < TOML file (`--config FILE`) < environment variables
//! `PARTNER_API_*` < command-line flags, then validated once, before
//! anything starts.
//!
//! - **Defaults:** one typed struct per adapter, each with its defaults
//!   written once as its `Default`: [`HttpConfig`] (http-api: rate limits,
//!   trusted proxies, body timeout), [`WebhookSettings`] (the webhook
//!   service), [`EmailSettings`] (the mail adapter), [`SecretSettings`]
//!   (the sealer's key), [`PricingSettings`], and [`Settings::default`]
//!   for the listen address and the database.
//! - **Layering:** `figment` merges the layers above the defaults and
//!   records which layer set each value; each layer is a provider of
//!   `config/layers.rs` (figment's own TOML and environment providers neither
//!   reject unknown keys nor name the variable a value came from).
//! - **File:** every key must be a known one; an unknown key is an error
//!   naming it and the file.
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
mod read;
#[cfg(test)]
mod tests;

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use domain::services::webhooks::WebhookSettings;
pub use http_api::{HttpConfig, Limits};
use mail::{FromAddress, MailUrl};
use secrecy::SecretString;
use store_diesel::Database;

use crate::config::layers::Layer;
use crate::config::read::Merged;

/// The prefix of the environment variables read.
pub const ENV_PREFIX: &str = "PARTNER_API_";

/// Every setting, validated: one typed struct per adapter.
#[derive(Clone)]
pub struct Settings {
    /// `listen`: the HTTP listen address.
    pub listen: SocketAddr,
    /// `database_url`, parsed: an SQLite file or a PostgreSQL URL. Its
    /// `Debug` form hides PostgreSQL credentials.
    pub database: Database,
    /// `public_base_url`: where partners and employers reach the service;
    /// every absolute link it hands out (the employer portal's) starts
    /// with it. No trailing slash.
    pub public_base_url: String,
    /// The HTTP adapter: `body_timeout_secs` (at least 1), `[rate_limits]`
    /// (contract section 5; each at least 1) and `proxy.trusted`.
    pub http: HttpConfig,
    /// `[pricing]`.
    pub pricing: PricingSettings,
    /// `[webhooks]`: whether `http://` and private or loopback hosts are
    /// allowed, and the factor on the 1 s / 5 s / 25 s retry delays
    /// (finite, above 0).
    pub webhooks: WebhookSettings,
    /// `[secrets]`.
    pub secrets: SecretSettings,
    /// `[email]`.
    pub email: EmailSettings,
    /// `[onboarding]`.
    pub onboarding: OnboardingSettings,
    /// `[embed]`.
    pub embed: EmbedSettings,
    /// `members.login_url`: where enrolled members sign in to their
    /// benefits account, the link of their login email (live mode). No
    /// default: without it the email carries no link, never one that
    /// leads nowhere.
    pub member_login_url: Option<String>,
}

impl Default for Settings {
    /// The built-in defaults (`listen = "127.0.0.1:8080"`, `database_url =
    /// "sqlite://data/partner-api.sqlite"`, and each adapter's own).
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            database: Database::Sqlite {
                path: "data/partner-api.sqlite".to_owned(),
            },
            public_base_url: domain::services::enrollments::DEFAULT_PUBLIC_BASE_URL.to_owned(),
            http: HttpConfig::default(),
            pricing: PricingSettings::default(),
            webhooks: WebhookSettings::default(),
            secrets: SecretSettings::default(),
            email: EmailSettings::default(),
            onboarding: OnboardingSettings::default(),
            embed: EmbedSettings::default(),
            member_login_url: None,
        }
    }
}

/// `[pricing]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricingSettings {
    /// `pricing.rate_card`: path of the rate card in use.
    pub rate_card: PathBuf,
    /// `pricing.wait_budget_ms`: how long price-on-plan waits before
    /// answering 202; 0 answers 202 at once and leaves the pricing to the
    /// job worker.
    pub wait_budget: Duration,
}

/// The default `pricing.rate_card`.
pub const DEFAULT_RATE_CARD: &str = "rate-cards/2026.toml";

impl Default for PricingSettings {
    fn default() -> Self {
        Self {
            rate_card: PathBuf::from(DEFAULT_RATE_CARD),
            wait_budget: domain::services::price_on_plan::DEFAULT_WAIT_BUDGET,
        }
    }
}

/// `[onboarding]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnboardingSettings {
    /// `onboarding.verification_time_scale`: the factor on the sandbox
    /// verifier's 60 s delay (EIN `22-2222222`); finite, above 0.
    pub verification_time_scale: f64,
}

impl Default for OnboardingSettings {
    fn default() -> Self {
        Self {
            verification_time_scale: 1.0,
        }
    }
}

/// `[embed]`: the offer iframe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmbedSettings {
    /// `embed.session_minutes`: how long an embed session lives; finite,
    /// above 0, fractions allowed.
    pub session_minutes: f64,
}

impl Default for EmbedSettings {
    fn default() -> Self {
        Self {
            session_minutes: domain::embed::DEFAULT_SESSION_MINUTES,
        }
    }
}

/// `[secrets]`: the sealer's key.
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

impl Default for SecretSettings {
    fn default() -> Self {
        Self {
            sealing_key_file: PathBuf::from("data/sealing.key"),
            sealing_key: None,
        }
    }
}

/// `[email]`: where outbound email goes. Its `Debug` form hides the
/// URL's user and password. The defaults are the mail adapter's.
#[derive(Debug, Clone, Default)]
pub struct EmailSettings {
    /// `email.url`: `record:` (the default; keep messages, send nothing),
    /// `smtps://[user:password@]host[:port]` or
    /// `smtp://…[?tls=required|opportunistic]`.
    pub url: MailUrl,
    /// `email.from`: the sender of every message. Unset, `no-reply@` the
    /// host of `public_base_url` when that is a domain name; else
    /// `no-reply@localhost` while mail is only recorded (an SMTP
    /// `email.url` then refuses to start without it).
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
        let mut layers = Vec::new();
        if let Some(path) = file {
            layers.push(Layer::file(path)?);
        }
        layers.extend(Layer::env(env));
        if let Some(listen) = &flags.listen {
            layers.push(Layer::flag("listen", "--listen", listen));
        }
        if let Some(url) = &flags.database_url {
            layers.push(Layer::flag("database_url", "--database-url", url));
        }
        Merged::new(layers).settings(Self::default())
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
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("listen", &self.listen)
            .field("database", &describe(&self.database))
            .field("http", &self.http)
            .field("pricing", &self.pricing)
            .field("webhooks", &self.webhooks)
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
