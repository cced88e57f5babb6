//! Verifying a delivery's headers against its body.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};

use crate::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, Secret, signed_content_tag};

/// How far a delivery's `webhook-timestamp` may be from the current time,
/// in either direction, by default: 5 minutes.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(DEFAULT_TOLERANCE_SECS.unsigned_abs());

/// [`DEFAULT_TOLERANCE`] in seconds.
const DEFAULT_TOLERANCE_SECS: i64 = 5 * 60;

/// Decodes signature candidates: standard alphabet, padding optional.
const SIGNATURE_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The length of an HMAC-SHA256 tag, in bytes.
const TAG_LEN: usize = 32;

/// Verifies deliveries signed with one [`Secret`].
///
/// A delivery verifies when its `webhook-timestamp` is within the tolerance
/// ([`DEFAULT_TOLERANCE`], 5 minutes, unless changed with
/// [`Verifier::with_tolerance`]) of `now`, older or newer, and any `v1,`
/// candidate of its `webhook-signature` is the signature of
/// `{webhook-id}.{webhook-timestamp}.{body}`. Candidates of other versions
/// (`v1a,…`) are ignored. Signatures are compared in constant time.
///
/// Verify the raw body bytes as received, before parsing them as JSON, and
/// deduplicate deliveries on `webhook-id`: a retried event carries the
/// same id.
///
/// ```
/// use std::time::{SystemTime, UNIX_EPOCH};
/// use webhooks::{Secret, Verifier, VerifyError};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let verifier = Verifier::new(Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?);
/// let now = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs())?;
///
/// // A delivery signed long ago is refused, whatever its signature.
/// let outcome = verifier.verify(
///     "msg_p5jXN8AQM9LWM0D4loKWxJek",
///     "1614265330",
///     "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
///     br#"{"test": 2432232314}"#,
///     now,
/// );
/// assert!(matches!(outcome, Err(VerifyError::TimestampTooOld { .. })));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Verifier {
    /// The endpoint's secret.
    secret: Secret,
    /// The tolerance in whole seconds.
    tolerance_secs: i64,
}

/// Why a delivery does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// A header is missing or empty; holds its name (`webhook-id`,
    /// `webhook-timestamp` or `webhook-signature`).
    #[error("the {0} header is missing or empty")]
    MissingHeader(&'static str),
    /// `webhook-timestamp` is not a Unix time in whole seconds (digits only).
    #[error("the webhook-timestamp header is not a Unix time in seconds")]
    InvalidTimestamp,
    /// `webhook-timestamp` is older than `now` by more than the tolerance.
    #[error(
        "the webhook-timestamp is {age_secs} s old, more than the {tolerance_secs} s tolerance"
    )]
    TimestampTooOld {
        /// How many seconds before `now` the delivery was signed.
        age_secs: i64,
        /// The tolerance, in seconds.
        tolerance_secs: i64,
    },
    /// `webhook-timestamp` is later than `now` by more than the tolerance.
    #[error(
        "the webhook-timestamp is {ahead_secs} s in the future, more than the {tolerance_secs} s tolerance"
    )]
    TimestampTooNew {
        /// How many seconds after `now` the delivery claims to be signed.
        ahead_secs: i64,
        /// The tolerance, in seconds.
        tolerance_secs: i64,
    },
    /// `webhook-signature` holds no `<version>,<signature>` candidate.
    #[error(
        "the webhook-signature header holds no signature (space-separated `v1,<base64>` values)"
    )]
    InvalidSignatureHeader,
    /// No `v1` candidate is the signature of this id, timestamp and body
    /// with this secret.
    #[error("no v1 signature in the webhook-signature header matches")]
    NoMatchingSignature,
}

impl Verifier {
    /// A verifier for deliveries signed with `secret`, with the default
    /// 5-minute tolerance.
    #[must_use]
    pub const fn new(secret: Secret) -> Self {
        Self {
            secret,
            tolerance_secs: DEFAULT_TOLERANCE_SECS,
        }
    }

    /// Changes the tolerance: how far, in either direction, a delivery's
    /// timestamp may be from `now`. A timestamp exactly at the tolerance is
    /// accepted. Fractions of a second are ignored.
    ///
    /// ```
    /// use std::time::Duration;
    /// use webhooks::{Secret, Verifier};
    ///
    /// let verifier = Verifier::new(Secret::from_random_bytes([1; 32]))
    ///     .with_tolerance(Duration::from_secs(60));
    /// # let _ = verifier;
    /// ```
    #[must_use]
    pub fn with_tolerance(self, tolerance: Duration) -> Self {
        Self {
            tolerance_secs: i64::try_from(tolerance.as_secs()).unwrap_or(i64::MAX),
            ..self
        }
    }

    /// Verifies one delivery from its header values and raw body; `now_unix`
    /// is the current time in Unix seconds.
    ///
    /// # Errors
    /// [`VerifyError`]: a missing header, a malformed timestamp or
    /// signature header, a timestamp outside the tolerance, or no matching
    /// signature.
    ///
    /// ```
    /// use webhooks::{Secret, Verifier, sign};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let secret = Secret::from_random_bytes([9; 32]);
    /// let body = br#"{"id":"evt_1","type":"ping"}"#;
    /// let signature = sign(&secret, "evt_1", 1_700_000_000, body);
    ///
    /// let verifier = Verifier::new(secret);
    /// verifier.verify("evt_1", "1700000000", &signature, body, 1_700_000_042)?;
    /// assert!(verifier
    ///     .verify("evt_1", "1700000000", &signature, b"{}", 1_700_000_042)
    ///     .is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn verify(
        &self,
        id: &str,
        timestamp_header: &str,
        signature_header: &str,
        body: &[u8],
        now_unix: i64,
    ) -> Result<(), VerifyError> {
        let timestamp_header = timestamp_header.trim();
        if id.is_empty() {
            return Err(VerifyError::MissingHeader(HEADER_ID));
        }
        if timestamp_header.is_empty() {
            return Err(VerifyError::MissingHeader(HEADER_TIMESTAMP));
        }
        if signature_header.trim().is_empty() {
            return Err(VerifyError::MissingHeader(HEADER_SIGNATURE));
        }
        let timestamp = parse_timestamp(timestamp_header)?;
        let candidates: Vec<(&str, &str)> = signature_header
            .split(' ')
            .filter_map(|candidate| candidate.trim().split_once(','))
            .filter(|(version, signature)| !version.is_empty() && !signature.is_empty())
            .collect();
        if candidates.is_empty() {
            return Err(VerifyError::InvalidSignatureHeader);
        }

        let age_secs = now_unix.saturating_sub(timestamp);
        if age_secs > self.tolerance_secs {
            return Err(VerifyError::TimestampTooOld {
                age_secs,
                tolerance_secs: self.tolerance_secs,
            });
        }
        let ahead_secs = timestamp.saturating_sub(now_unix);
        if ahead_secs > self.tolerance_secs {
            return Err(VerifyError::TimestampTooNew {
                ahead_secs,
                tolerance_secs: self.tolerance_secs,
            });
        }

        // The expected tag is computed once, however many candidates there
        // are (the body is hashed once). Each candidate is then compared
        // with it in constant time by `ring::hmac::verify`, which checks
        // HMAC(key, candidate) against HMAC(key, expected): these match
        // only when the candidate is the expected tag.
        let key = self.secret.key();
        let expected = signed_content_tag(&self.secret, id, timestamp, body);
        let expected_mac = ring::hmac::sign(key, expected.as_ref());
        let matched = candidates
            .into_iter()
            .filter(|(version, _)| *version == "v1")
            .filter_map(|(_, signature)| SIGNATURE_BASE64.decode(signature).ok())
            .filter(|tag| tag.len() == TAG_LEN)
            .any(|tag| ring::hmac::verify(key, &tag, expected_mac.as_ref()).is_ok());
        if matched {
            Ok(())
        } else {
            Err(VerifyError::NoMatchingSignature)
        }
    }

    /// Verifies one delivery, reading its headers through `header`, which
    /// is given the lowercase names `webhook-id`, `webhook-timestamp` and
    /// `webhook-signature` and should look them up case-insensitively (as
    /// HTTP header maps do).
    ///
    /// # Errors
    /// As [`Verifier::verify`]; an absent header is
    /// [`VerifyError::MissingHeader`].
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use webhooks::{Secret, Verifier, sign};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let secret = Secret::from_random_bytes([3; 32]);
    /// let body = b"{}";
    /// let signature = sign(&secret, "evt_2", 1_700_000_000, body);
    /// let headers = HashMap::from([
    ///     ("webhook-id", "evt_2"),
    ///     ("webhook-timestamp", "1700000000"),
    ///     ("webhook-signature", signature.as_str()),
    /// ]);
    ///
    /// Verifier::new(secret).verify_headers(
    ///     |name| headers.get(name).copied(),
    ///     body,
    ///     1_700_000_000,
    /// )?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn verify_headers<'h>(
        &self,
        header: impl Fn(&str) -> Option<&'h str>,
        body: &[u8],
        now_unix: i64,
    ) -> Result<(), VerifyError> {
        self.verify(
            header(HEADER_ID).unwrap_or_default(),
            header(HEADER_TIMESTAMP).unwrap_or_default(),
            header(HEADER_SIGNATURE).unwrap_or_default(),
            body,
            now_unix,
        )
    }
}

/// Unix seconds from ASCII digits.
fn parse_timestamp(text: &str) -> Result<i64, VerifyError> {
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(VerifyError::InvalidTimestamp);
    }
    text.parse().map_err(|_| VerifyError::InvalidTimestamp)
}

#[cfg(test)]
mod tests;
