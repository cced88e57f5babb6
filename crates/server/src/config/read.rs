//! Reading the typed [`Settings`] out of the merged layers: each key takes
//! the value of the highest layer that set it (figment's merge), else its
//! default, and a refused value names the key and the layer that set it
//! (figment's metadata of the value).

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use figment::Figment;
use mail::{FromAddress, MailUrl};
use secrecy::SecretString;
use store_diesel::Database;
use toml::Value;

use crate::config::layers::Layer;
use crate::config::{
    ConfigError, EmbedSettings, HttpConfig, Limits, OnboardingSettings, Settings, Source,
    WebhookSettings,
};

/// The layers above the defaults, merged in order.
pub(crate) struct Merged {
    figment: Figment,
    sources: Vec<Source>,
}

impl Merged {
    /// Merges `layers`, each over the ones before it.
    pub(crate) fn new(layers: Vec<Layer>) -> Self {
        let sources = layers.iter().map(|l| l.source().clone()).collect();
        let figment = layers.into_iter().fold(Figment::new(), Figment::merge);
        Self { figment, sources }
    }

    /// The settings: each key from the layers, else from `defaults`.
    pub(crate) fn settings(&self, defaults: Settings) -> Result<Settings, ConfigError> {
        let d = defaults;
        let listen = self.or("listen", d.listen, |v| {
            self.parsed("listen", v, "must be a socket address like 127.0.0.1:8080")
        })?;
        let database = self.or("database_url", d.database, |v| self.database(v))?;
        // Unset, the base URL follows a listen address moved off the
        // default's, so that every link the service hands out reaches it.
        let default_base = if listen == d.listen {
            d.public_base_url
        } else {
            local_base_url(listen)
        };
        let public_base_url = self.or("public_base_url", default_base, |v| {
            self.public_url("public_base_url", v)
        })?;
        let body_timeout = self.or("body_timeout_secs", d.http.body_timeout, |v| {
            self.at_least("body_timeout_secs", v, 1)
                .map(Duration::from_secs)
        })?;
        let limit = |key: &str, default: u32| self.or(key, default, |v| self.at_least(key, v, 1));
        let dl = d.http.limits;
        let limits = Limits {
            requests_per_minute: limit("rate_limits.requests_per_minute", dl.requests_per_minute)?,
            census_writes_per_minute: limit(
                "rate_limits.census_writes_per_minute",
                dl.census_writes_per_minute,
            )?,
            quote_creates_per_hour: limit(
                "rate_limits.quote_creates_per_hour",
                dl.quote_creates_per_hour,
            )?,
            failed_auth_per_minute: limit(
                "rate_limits.failed_auth_per_minute",
                dl.failed_auth_per_minute,
            )?,
        };
        let http = HttpConfig {
            limits,
            trusted_proxies: self.or("proxy.trusted", d.http.trusted_proxies, |v| {
                self.ip_list("proxy.trusted", v)
            })?,
            body_timeout,
        };
        let mut pricing = d.pricing;
        pricing.rate_card = self.or("pricing.rate_card", pricing.rate_card, |v| {
            self.path("pricing.rate_card", v)
        })?;
        pricing.wait_budget = self.or("pricing.wait_budget_ms", pricing.wait_budget, |v| {
            self.at_least("pricing.wait_budget_ms", v, 0)
                .map(Duration::from_millis)
        })?;
        let dw = d.webhooks;
        let webhooks = WebhookSettings {
            allow_insecure_endpoints: self.or(
                "webhooks.allow_insecure_endpoints",
                dw.allow_insecure_endpoints,
                |v| self.bool("webhooks.allow_insecure_endpoints", v),
            )?,
            retry_time_scale: self.or("webhooks.retry_time_scale", dw.retry_time_scale, |v| {
                self.positive_float("webhooks.retry_time_scale", v)
            })?,
            attempt_timeout_ms: self.or(
                "webhooks.attempt_timeout_ms",
                dw.attempt_timeout_ms,
                |v| self.at_least("webhooks.attempt_timeout_ms", v, 1),
            )?,
            disable_after_hours: self.or(
                "webhooks.disable_after_hours",
                dw.disable_after_hours,
                |v| self.positive_float("webhooks.disable_after_hours", v),
            )?,
        };
        let mut secrets = d.secrets;
        secrets.sealing_key_file =
            self.or("secrets.sealing_key_file", secrets.sealing_key_file, |v| {
                self.path("secrets.sealing_key_file", v)
            })?;
        secrets.sealing_key = self.or("secrets.sealing_key", secrets.sealing_key, |v| {
            self.sealing_key("secrets.sealing_key", v).map(Some)
        })?;
        let mut email = d.email;
        email.url = self.or("email.url", email.url, |v| self.mail_url("email.url", v))?;
        email.from = match self.value("email.from") {
            Some(v) => self.mail_from("email.from", &v)?,
            None => self.default_sender(&email.url, &public_base_url, email.from)?,
        };
        let onboarding = OnboardingSettings {
            verification_time_scale: self.or(
                "onboarding.verification_time_scale",
                d.onboarding.verification_time_scale,
                |v| self.positive_float("onboarding.verification_time_scale", v),
            )?,
        };
        let embed = EmbedSettings {
            session_minutes: self.or("embed.session_minutes", d.embed.session_minutes, |v| {
                self.positive_float("embed.session_minutes", v)
            })?,
        };
        let member_login_url = self.or("members.login_url", d.member_login_url, |v| {
            self.public_url("members.login_url", v).map(Some)
        })?;
        Ok(Settings {
            member_login_url,
            embed,
            listen,
            database,
            public_base_url,
            http,
            pricing,
            webhooks,
            secrets,
            email,
            onboarding,
        })
    }

    /// `key`'s value read by `read` when a layer set it, else `default`.
    fn or<T>(
        &self,
        key: &str,
        default: T,
        read: impl FnOnce(&Value) -> Result<T, ConfigError>,
    ) -> Result<T, ConfigError> {
        match self.value(key) {
            Some(value) => read(&value),
            None => Ok(default),
        }
    }

    /// The value of `key`, if a layer set it.
    fn value(&self, key: &str) -> Option<Value> {
        self.figment.find_value(key).ok()?.deserialize().ok()
    }

    /// The layer `key`'s value came from.
    fn source(&self, key: &str) -> Source {
        let Some(metadata) = self.figment.find_metadata(key) else {
            return Source::Default;
        };
        self.sources
            .iter()
            .find(|s| s.to_string() == metadata.name)
            .cloned()
            .unwrap_or(Source::Default)
    }

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

    fn string(&self, key: &str, value: &Value) -> Result<String, ConfigError> {
        match value {
            Value::String(s) => Ok(s.clone()),
            other => Err(self.wrong_type(key, "a string", other)),
        }
    }

    fn parsed<T: std::str::FromStr>(
        &self,
        key: &str,
        value: &Value,
        want: &str,
    ) -> Result<T, ConfigError> {
        let text = self.string(key, value)?;
        text.parse()
            .map_err(|_| self.invalid(key, format!("{want}, got {text:?}")))
    }

    fn database(&self, value: &Value) -> Result<Database, ConfigError> {
        let url = self.string("database_url", value)?;
        Database::parse(&url).map_err(|e| {
            let text = e.to_string();
            let problem = text.strip_prefix("database_url ").unwrap_or(&text);
            self.invalid("database_url", problem.to_owned())
        })
    }

    /// An absolute `http://` or `https://` URL with a host and no query or
    /// fragment, kept without its trailing slash.
    fn public_url(&self, key: &str, value: &Value) -> Result<String, ConfigError> {
        let text = self.string(key, value)?;
        let rest = text
            .strip_prefix("https://")
            .or_else(|| text.strip_prefix("http://"));
        let host = rest.map(|r| r.split('/').next().unwrap_or_default());
        let ok = host.is_some_and(|h| !h.is_empty())
            && !text.contains(['?', '#'])
            && !text.chars().any(char::is_whitespace);
        if ok {
            Ok(text.trim_end_matches('/').to_owned())
        } else {
            Err(self.invalid(
                key,
                format!("must be an absolute http:// or https:// URL such as https://benefits.example.com, got {text:?}"),
            ))
        }
    }

    fn path(&self, key: &str, value: &Value) -> Result<PathBuf, ConfigError> {
        let text = self.string(key, value)?;
        if text.trim().is_empty() {
            return Err(self.invalid(key, "must not be empty".to_owned()));
        }
        Ok(PathBuf::from(text))
    }

    fn at_least<T: TryFrom<i64>>(
        &self,
        key: &str,
        value: &Value,
        min: i64,
    ) -> Result<T, ConfigError> {
        match value {
            Value::Integer(n) if *n < min => {
                Err(self.invalid(key, format!("must be at least {min}, got {n}")))
            }
            Value::Integer(n) => {
                T::try_from(*n).map_err(|_| self.invalid(key, format!("is too large, got {n}")))
            }
            other => Err(self.wrong_type(key, "an integer", other)),
        }
    }

    fn bool(&self, key: &str, value: &Value) -> Result<bool, ConfigError> {
        match value {
            Value::Boolean(b) => Ok(*b),
            other => Err(self.wrong_type(key, "true or false", other)),
        }
    }

    fn positive_float(&self, key: &str, value: &Value) -> Result<f64, ConfigError> {
        let x = match value {
            Value::Float(x) => *x,
            Value::Integer(n) => i32::try_from(*n).map_or(f64::NAN, f64::from),
            other => return Err(self.wrong_type(key, "a number", other)),
        };
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(self.invalid(key, format!("must be a finite number above 0, got {x}")))
        }
    }

    fn ip_list(&self, key: &str, value: &Value) -> Result<Vec<IpAddr>, ConfigError> {
        let Value::Array(items) = value else {
            return Err(self.wrong_type(key, "a list of ip addresses", value));
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

    fn sealing_key(&self, key: &str, value: &Value) -> Result<SecretString, ConfigError> {
        // The value is never echoed: it is a secret even when malformed.
        match value {
            Value::String(s)
                if s.trim().len() == 64 && s.trim().bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                Ok(SecretString::from(s.trim().to_owned()))
            }
            _ => Err(self.invalid(key, "must be 64 hex characters".to_owned())),
        }
    }

    fn mail_url(&self, key: &str, value: &Value) -> Result<MailUrl, ConfigError> {
        // The URL may hold a password: the message names what is wrong,
        // never the value.
        match value {
            Value::String(s) => MailUrl::parse(s).map_err(|e| self.invalid(key, e.to_string())),
            _ => Err(self.invalid(key, "must be a string".to_owned())),
        }
    }

    /// The sender when `email.from` is not set: `no-reply@` the public
    /// base URL's host when that is a domain name; else `fallback`, only
    /// while mail is recorded — an SMTP `email.url` then needs an
    /// explicit sender, never one at a made-up domain.
    fn default_sender(
        &self,
        url: &MailUrl,
        public_base_url: &str,
        fallback: FromAddress,
    ) -> Result<FromAddress, ConfigError> {
        let parsed = url::Url::parse(public_base_url).ok();
        let domain = parsed.as_ref().and_then(|u| match u.host() {
            Some(url::Host::Domain(d)) => FromAddress::no_reply_at(d),
            _ => None,
        });
        match (domain, url) {
            (Some(from), _) => Ok(from),
            (None, MailUrl::Record) => Ok(fallback),
            (None, MailUrl::Smtp(_)) => Err(self.invalid(
                "email.url",
                format!(
                    "sends mail, so email.from must be set: public_base_url {public_base_url} names no domain to send from"
                ),
            )),
        }
    }

    fn mail_from(&self, key: &str, value: &Value) -> Result<FromAddress, ConfigError> {
        let text = self.string(key, value)?;
        FromAddress::parse(&text).map_err(|e| self.invalid(key, format!("{e}, got {text:?}")))
    }
}

/// `http://` and `listen`, with an unspecified address (`0.0.0.0`, `::`)
/// read as this machine's loopback.
fn local_base_url(listen: std::net::SocketAddr) -> String {
    let mut at = listen;
    if at.ip().is_unspecified() {
        at.set_ip(if at.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    format!("http://{at}")
}
