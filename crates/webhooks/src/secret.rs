//! Signing secrets: `whsec_` followed by base64.

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};

/// The prefix of every secret.
const PREFIX: &str = "whsec_";

/// Standard alphabet, padding optional, lenient about unused trailing bits:
/// what the Standard Webhooks libraries accept.
const SECRET_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// A webhook signing secret: `whsec_` followed by base64.
///
/// The HMAC key is the base64 decoding (standard alphabet, padding
/// optional) of the text after `whsec_`, as in every Standard Webhooks
/// library. The secrets the Partner Benefits API issues are `whsec_` and 64
/// lowercase hex characters (32 random bytes, hex-encoded); those 64
/// characters are also valid base64, so their key is the 48 bytes they
/// decode to, **not** the 32 bytes the hex encodes.
///
/// `Debug` never shows the secret; [`Secret::as_str`] gives its text.
///
/// ```
/// use webhooks::Secret;
///
/// # fn main() -> Result<(), webhooks::SecretError> {
/// let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?;
/// assert_eq!(format!("{secret:?}"), "Secret(whsec_…)");
///
/// let ours = Secret::from_random_bytes([0xab; 32]);
/// assert_eq!(ours.as_str(), format!("whsec_{}", "ab".repeat(32)));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Secret {
    /// `whsec_…`, as parsed (without surrounding whitespace).
    text: String,
    /// The HMAC-SHA256 key.
    key: ring::hmac::Key,
}

/// Why a secret does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// The text does not start with `whsec_`.
    #[error("a webhook secret starts with `whsec_`")]
    MissingPrefix,
    /// The text after `whsec_` is not base64 (standard alphabet).
    #[error("the part of a webhook secret after `whsec_` is not valid base64")]
    NotBase64,
    /// Nothing follows `whsec_`.
    #[error("a webhook secret has a key after `whsec_`; this one is empty")]
    Empty,
}

impl Secret {
    /// Parses `whsec_<base64>`. Surrounding whitespace (a trailing newline
    /// from a file, say) is ignored.
    ///
    /// # Errors
    /// [`SecretError`] when the prefix is missing, the rest is not base64
    /// or decodes to nothing.
    ///
    /// ```
    /// use webhooks::{Secret, SecretError};
    ///
    /// assert!(Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_ok());
    /// assert_eq!(
    ///     Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").err(),
    ///     Some(SecretError::MissingPrefix)
    /// );
    /// assert_eq!(Secret::parse("whsec_not*base64").err(), Some(SecretError::NotBase64));
    /// ```
    pub fn parse(text: &str) -> Result<Self, SecretError> {
        let text = text.trim();
        let encoded = text
            .strip_prefix(PREFIX)
            .ok_or(SecretError::MissingPrefix)?;
        let key = SECRET_BASE64
            .decode(encoded)
            .map_err(|_| SecretError::NotBase64)?;
        if key.is_empty() {
            return Err(SecretError::Empty);
        }
        Ok(Self {
            text: text.to_owned(),
            key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key),
        })
    }

    /// The secret the Partner Benefits API issues for `bytes`: `whsec_` and
    /// their 64 lowercase hex characters. The caller supplies the entropy,
    /// e.g. from `ring::rand::SystemRandom`.
    ///
    /// ```
    /// use webhooks::Secret;
    ///
    /// let secret = Secret::from_random_bytes([0x01; 32]);
    /// assert_eq!(secret.as_str().len(), "whsec_".len() + 64);
    /// ```
    #[must_use]
    pub fn from_random_bytes(bytes: [u8; 32]) -> Self {
        let text = format!("{PREFIX}{}", hex::encode(bytes));
        match Self::parse(&text) {
            Ok(secret) => secret,
            // 64 hex characters are 64 base64 characters: 48 bytes.
            Err(e) => unreachable!("a hex secret is valid base64: {e}"),
        }
    }

    /// The secret's text, `whsec_…`: what is shown to a partner once and
    /// what Standard Webhooks libraries take.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The HMAC-SHA256 key.
    pub(crate) const fn key(&self) -> &ring::hmac::Key {
        &self.key
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(whsec_…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_padded_unpadded_and_trimmed_secrets() {
        // 32 characters: no padding needed.
        assert!(Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_ok());
        // "whsec_" + base64 of 5 bytes, with and without padding.
        let padded = Secret::parse("whsec_aGVsbG8=").unwrap();
        let unpadded = Secret::parse("whsec_aGVsbG8").unwrap();
        assert_eq!(
            crate::sign(&padded, "a", 1, b"b"),
            crate::sign(&unpadded, "a", 1, b"b")
        );
        let trimmed = Secret::parse("  whsec_aGVsbG8=\n").unwrap();
        assert_eq!(trimmed.as_str(), "whsec_aGVsbG8=");
    }

    #[test]
    fn refuses_bad_secrets() {
        for (text, want) in [
            ("", SecretError::MissingPrefix),
            (
                "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                SecretError::MissingPrefix,
            ),
            (
                "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                SecretError::MissingPrefix,
            ),
            ("whsec_", SecretError::Empty),
            ("whsec_abc*", SecretError::NotBase64),
            ("whsec_a", SecretError::NotBase64),
            ("whsec_ab-_", SecretError::NotBase64),
            ("whsec_ab cd", SecretError::NotBase64),
        ] {
            assert_eq!(Secret::parse(text).err(), Some(want), "{text:?}");
        }
    }

    #[test]
    fn our_secret_shape_round_trips() {
        let secret = Secret::from_random_bytes([0x5a; 32]);
        let text = secret.as_str();
        assert_eq!(text, format!("whsec_{}", "5a".repeat(32)));
        let again = Secret::parse(text).unwrap();
        assert_eq!(again.as_str(), text);
        assert_eq!(
            crate::sign(&again, "evt_1", 1, b"{}"),
            crate::sign(&secret, "evt_1", 1, b"{}")
        );
    }

    #[test]
    fn debug_hides_the_secret() {
        let secret = Secret::from_random_bytes([0xcd; 32]);
        let shown = format!("{secret:?} {:?}", crate::Verifier::new(secret.clone()));
        assert!(!shown.contains("cdcd"), "{shown}");
    }
}
