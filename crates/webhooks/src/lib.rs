//! [Standard Webhooks](https://www.standardwebhooks.com/) signing and
//! verification, as used by the Partner Benefits API's webhook deliveries.
//!
//! A small synchronous library (no async runtime, no I/O) that partners can
//! use to verify deliveries and that the service uses to sign them.
//!
//! Every delivery carries three headers:
//!
//! | Header | Value |
//! |---|---|
//! | `webhook-id` | the event id (`evt_…`), the same on every retry |
//! | `webhook-timestamp` | when the delivery was signed, Unix seconds |
//! | `webhook-signature` | one or more space-separated `v1,<base64>` candidates |
//!
//! The signature is `base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}"))`
//! over the raw body bytes, where the key is the base64 *decoding* of the
//! secret's text after `whsec_` (see [`Secret`]).
//!
//! - [`Secret`] parses a `whsec_…` secret, or makes one from random bytes.
//! - [`sign`] produces a `v1,<base64>` signature.
//! - [`Verifier`] checks the headers of a delivery against its body: the
//!   timestamp within a tolerance (5 minutes by default) of the current
//!   time, and any `v1` candidate matching, compared in constant time.
//!
//! ```
//! use webhooks::{Secret, Verifier, sign};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
//! let body = br#"{"test": 2432232314}"#;
//! let signature = sign(&secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, body);
//! assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
//!
//! Verifier::new(secret).verify(
//!     "msg_p5jXN8AQM9LWM0D4loKWxJek",
//!     "1614265330",
//!     &signature,
//!     body,
//!     1_614_265_330, // now, Unix seconds
//! )?;
//! # Ok(())
//! # }
//! ```

mod secret;
mod verify;

pub use secret::{Secret, SecretError};
pub use verify::{DEFAULT_TOLERANCE, Verifier, VerifyError};

use base64::Engine as _;

/// The `webhook-id` header: the event id, also the deduplication key.
pub const HEADER_ID: &str = "webhook-id";
/// The `webhook-timestamp` header: when the delivery was signed, Unix seconds.
pub const HEADER_TIMESTAMP: &str = "webhook-timestamp";
/// The `webhook-signature` header: space-separated `v1,<base64>` candidates.
pub const HEADER_SIGNATURE: &str = "webhook-signature";

/// Signs a delivery: `v1,` followed by the base64 (standard alphabet, with
/// padding) of HMAC-SHA256 over `{id}.{timestamp}.{body}` with the secret's
/// key. This is the value of the `webhook-signature` header; during a secret
/// rotation several such values can be joined with a space.
///
/// ```
/// use webhooks::{Secret, sign};
///
/// let secret = Secret::from_random_bytes([7; 32]);
/// let signature = sign(&secret, "evt_0123", 1_700_000_000, b"{}");
/// assert!(signature.starts_with("v1,"));
/// assert_eq!(signature.len(), 3 + 44); // "v1," + base64 of 32 bytes
/// ```
#[must_use]
pub fn sign(secret: &Secret, id: &str, timestamp: i64, body: &[u8]) -> String {
    let tag = signed_content_tag(secret, id, timestamp, body);
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    )
}

/// HMAC-SHA256 of `{id}.{timestamp}.{body}`, without copying the body.
fn signed_content_tag(secret: &Secret, id: &str, timestamp: i64, body: &[u8]) -> ring::hmac::Tag {
    let mut context = ring::hmac::Context::with_key(secret.key());
    context.update(id.as_bytes());
    context.update(b".");
    context.update(timestamp.to_string().as_bytes());
    context.update(b".");
    context.update(body);
    context.sign()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Standard Webhooks test vector.
    const VECTOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const VECTOR_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const VECTOR_TIMESTAMP: i64 = 1_614_265_330;
    const VECTOR_BODY: &[u8] = br#"{"test": 2432232314}"#;
    const VECTOR_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    #[test]
    fn signs_the_standard_webhooks_test_vector() {
        let secret = Secret::parse(VECTOR_SECRET).unwrap();
        assert_eq!(
            sign(&secret, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY),
            VECTOR_SIGNATURE
        );
    }

    /// The second vector of `docs/webhooks.md`, in our secret shape (also
    /// checked against the Python `standardwebhooks` package's `sign`).
    #[test]
    fn signs_the_documented_vector_for_our_secret_shape() {
        let bytes: [u8; 32] = std::array::from_fn(|i| u8::try_from(i).unwrap());
        let secret = Secret::from_random_bytes(bytes);
        assert_eq!(
            secret.as_str(),
            "whsec_000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        );
        let body = br#"{"createdAt":"2023-11-14T22:13:20Z","data":{},"id":"evt_0123456789abcdef0123456789abcdef","mode":"test","type":"ping"}"#;
        let id = "evt_0123456789abcdef0123456789abcdef";
        assert_eq!(
            sign(&secret, id, 1_700_000_000, body),
            "v1,KFQDl+8sQ2mpa66eCqfJoY0T0QIBWSMX5fXDhpfiNV0="
        );
        Verifier::new(secret)
            .verify(
                id,
                "1700000000",
                "v1,KFQDl+8sQ2mpa66eCqfJoY0T0QIBWSMX5fXDhpfiNV0=",
                body,
                1_700_000_000,
            )
            .unwrap();
        // What hex-decoding the secret (the mistake the docs warn about)
        // would give instead.
        let wrong_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &bytes);
        let mut content = format!("{id}.1700000000.").into_bytes();
        content.extend_from_slice(body);
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .encode(ring::hmac::sign(&wrong_key, &content).as_ref()),
            "3WLuaQDLy1hOxjtJwtfiU8kgbQOl/bd5K12GeRFz1nU="
        );
    }

    #[test]
    fn our_secrets_sign_with_the_base64_decoding_of_their_hex_text() {
        let bytes: [u8; 32] = std::array::from_fn(|i| u8::try_from(i * 7 + 1).unwrap());
        let secret = Secret::from_random_bytes(bytes);
        let hex = secret.as_str().strip_prefix("whsec_").unwrap();
        assert_eq!(hex.len(), 64);

        // Independently: the key is the base64 decoding of the 64 hex
        // characters (48 bytes), not the 32 bytes they encode.
        let key_bytes = base64::engine::general_purpose::STANDARD
            .decode(hex)
            .unwrap();
        assert_eq!(key_bytes.len(), 48);
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key_bytes);
        let tag = ring::hmac::sign(&key, b"evt_1.1700000000.{\"a\":1}");
        let want = format!(
            "v1,{}",
            base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
        );
        assert_eq!(sign(&secret, "evt_1", 1_700_000_000, br#"{"a":1}"#), want);

        let raw_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &bytes);
        let raw_tag = ring::hmac::sign(&raw_key, b"evt_1.1700000000.{\"a\":1}");
        assert_ne!(raw_tag.as_ref(), tag.as_ref());
    }
}
