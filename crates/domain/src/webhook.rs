//! Webhook endpoints: one per partner and mode, `https://` only, with a
//! `whsec_` + 64 lowercase hex secret issued on registration; their health
//! (failing since, disabled) and the delivery log ([`attempt`]).

pub mod attempt;

use crate::error::FieldError;
use crate::scope::Scope;

/// A registered endpoint. The secret is kept sealed at rest.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookEndpoint {
    /// Partner and mode.
    pub scope: Scope,
    /// Delivery URL.
    pub url: String,
    /// The sealed signing secret.
    pub sealed_secret: Vec<u8>,
    /// Registration time, Unix seconds.
    pub created_at: i64,
    /// `enabled`, or `disabled` after failing every attempt for
    /// `webhooks.disable_after_hours`.
    pub state: EndpointState,
    /// Since when every attempt has failed, Unix milliseconds; `None`
    /// after a success.
    pub failing_since_ms: Option<i64>,
    /// The secret a rotation replaced, still signing until it expires.
    pub previous_secret: Option<PreviousSecret>,
}

/// A rotated-out secret in its grace period.
#[derive(Clone, PartialEq, Eq)]
pub struct PreviousSecret {
    /// Sealed as the current one.
    pub sealed: Vec<u8>,
    /// End of the grace period, Unix seconds.
    pub expires_at: i64,
}

impl std::fmt::Debug for PreviousSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreviousSecret")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl WebhookEndpoint {
    /// The previous secret while it still signs at `now` (Unix seconds).
    #[must_use]
    pub fn previous_at(&self, now: i64) -> Option<&PreviousSecret> {
        self.previous_secret.as_ref().filter(|p| p.expires_at > now)
    }
}

/// The longest grace period of a rotation, hours.
pub const MAX_GRACE_HOURS: u32 = 72;

/// The grace period of a rotation when none is asked for, hours.
pub const DEFAULT_GRACE_HOURS: u32 = 24;

/// Whether an endpoint receives deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = EndpointStateOut))]
pub enum EndpointState {
    /// Deliveries are sent.
    Enabled,
    /// Nothing is sent until `PUT /webhook` changes or re-enables it.
    Disabled,
}

impl EndpointState {
    /// Wire and storage value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
        }
    }

    /// Parses a storage value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Enabled, Self::Disabled]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

impl std::fmt::Debug for WebhookEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookEndpoint")
            .field("scope", &self.scope)
            .field("url", &self.url)
            .field("created_at", &self.created_at)
            .field("state", &self.state)
            .field("failing_since_ms", &self.failing_since_ms)
            .field("previous_secret", &self.previous_secret)
            .finish_non_exhaustive()
    }
}

/// A signing secret from 32 random bytes: `whsec_` + 64 lowercase hex.
#[must_use]
pub fn secret_from_bytes(bytes: [u8; 32]) -> String {
    format!("whsec_{}", hex::encode(bytes))
}

/// Checks the shape of an endpoint URL: `https://` with a host, unless
/// insecure endpoints are allowed (then `http://` too). Whether the host
/// resolves to a private address is the adapter's check.
///
/// # Errors
/// A [`FieldError`] on `url`.
pub fn check_url(url: &str, allow_insecure: bool) -> Result<(), FieldError> {
    let rest = url.strip_prefix("https://").or_else(|| {
        allow_insecure
            .then(|| url.strip_prefix("http://"))
            .flatten()
    });
    let Some(rest) = rest else {
        return Err(FieldError::new("url", "must be an https:// URL"));
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty()
        || host.contains('@')
        || url.len() > 2048
        || url.chars().any(char::is_whitespace)
    {
        return Err(FieldError::new(
            "url",
            "must be an https:// URL with a host",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_urls() {
        let s = secret_from_bytes([0xab; 32]);
        assert!(s.starts_with("whsec_") && s.len() == 6 + 64);
        assert!(check_url("https://hooks.example.com/x", false).is_ok());
        assert!(check_url("http://hooks.example.com/x", false).is_err());
        assert!(check_url("http://127.0.0.1:9/x", true).is_ok());
        for bad in [
            "https://",
            "https:///x",
            "ftp://x.com",
            "https://u@x.com/",
            "https://x .com",
        ] {
            assert!(check_url(bad, true).is_err(), "{bad}");
        }
    }
}
