//! Webhook endpoints: one per partner and mode, `https://` only, with a
//! `whsec_` + 64 lowercase hex secret issued on every registration (which
//! is how secrets rotate).

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
}

impl std::fmt::Debug for WebhookEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookEndpoint")
            .field("scope", &self.scope)
            .field("url", &self.url)
            .field("created_at", &self.created_at)
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
