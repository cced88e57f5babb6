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
mod tests {
    use super::*;
    use crate::sign;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TIMESTAMP: i64 = 1_614_265_330;
    const TIMESTAMP_HEADER: &str = "1614265330";
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn verifier() -> Verifier {
        Verifier::new(Secret::parse(SECRET).unwrap())
    }

    #[test]
    fn verifies_the_standard_webhooks_test_vector() {
        assert_eq!(
            verifier().verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP),
            Ok(())
        );
    }

    #[test]
    fn accepts_when_any_v1_candidate_matches() {
        let other = Secret::from_random_bytes([1; 32]);
        let wrong = sign(&other, ID, TIMESTAMP, BODY);
        let headers = [
            format!("{wrong} v1,bm90IGEgc2lnbmF0dXJl {SIGNATURE}"),
            format!("v1a,{} {SIGNATURE}", &SIGNATURE[3..]),
            format!("v2,abc  {wrong}  {SIGNATURE} "),
            // Unpadded base64 is accepted too.
            format!("{wrong} {}", SIGNATURE.trim_end_matches('=')),
        ];
        for header in &headers {
            assert_eq!(
                verifier().verify(ID, TIMESTAMP_HEADER, header, BODY, TIMESTAMP),
                Ok(()),
                "{header}"
            );
        }
    }

    #[test]
    fn ignores_candidates_of_other_versions() {
        let header = format!("v1a,{} v2,{}", &SIGNATURE[3..], &SIGNATURE[3..]);
        assert_eq!(
            verifier().verify(ID, TIMESTAMP_HEADER, &header, BODY, TIMESTAMP),
            Err(VerifyError::NoMatchingSignature)
        );
    }

    #[test]
    fn refuses_tampering() {
        let v = verifier();
        let cases = [
            (
                ID,
                TIMESTAMP_HEADER,
                &br#"{"test": 2432232315}"#[..],
                TIMESTAMP,
            ),
            (
                ID,
                TIMESTAMP_HEADER,
                &br#"{"test": 2432232314} "#[..],
                TIMESTAMP,
            ),
            (ID, TIMESTAMP_HEADER, &b""[..], TIMESTAMP),
            (
                "msg_p5jXN8AQM9LWM0D4loKWxJeK",
                TIMESTAMP_HEADER,
                BODY,
                TIMESTAMP,
            ),
            (ID, "1614265331", BODY, TIMESTAMP),
        ];
        for (id, timestamp, body, now) in cases {
            assert_eq!(
                v.verify(id, timestamp, SIGNATURE, body, now),
                Err(VerifyError::NoMatchingSignature),
                "{id} {timestamp} {body:?}"
            );
        }
        // A flipped character in the signature itself.
        let flipped = SIGNATURE.replacen('g', "h", 1);
        assert_eq!(
            v.verify(ID, TIMESTAMP_HEADER, &flipped, BODY, TIMESTAMP),
            Err(VerifyError::NoMatchingSignature)
        );
    }

    #[test]
    fn refuses_another_secret() {
        let v = Verifier::new(Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSx").unwrap());
        assert_eq!(
            v.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP),
            Err(VerifyError::NoMatchingSignature)
        );
        let ours = Verifier::new(Secret::from_random_bytes([0; 32]));
        assert_eq!(
            ours.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP),
            Err(VerifyError::NoMatchingSignature)
        );
    }

    #[test]
    fn enforces_the_tolerance_both_ways() {
        let v = verifier();
        let check = |now| v.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, now);
        assert_eq!(check(TIMESTAMP + 300), Ok(()));
        assert_eq!(check(TIMESTAMP - 300), Ok(()));
        assert_eq!(
            check(TIMESTAMP + 301),
            Err(VerifyError::TimestampTooOld {
                age_secs: 301,
                tolerance_secs: 300
            })
        );
        assert_eq!(
            check(TIMESTAMP - 301),
            Err(VerifyError::TimestampTooNew {
                ahead_secs: 301,
                tolerance_secs: 300
            })
        );
        assert_eq!(
            check(i64::MAX),
            Err(VerifyError::TimestampTooOld {
                age_secs: i64::MAX - TIMESTAMP,
                tolerance_secs: 300
            })
        );
        assert!(matches!(
            check(i64::MIN),
            Err(VerifyError::TimestampTooNew { .. })
        ));
    }

    #[test]
    fn the_tolerance_is_configurable() {
        let v = verifier().with_tolerance(Duration::from_millis(10_999));
        let check = |now| v.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, now);
        assert_eq!(check(TIMESTAMP + 10), Ok(()));
        assert_eq!(check(TIMESTAMP - 10), Ok(()));
        assert!(matches!(
            check(TIMESTAMP + 11),
            Err(VerifyError::TimestampTooOld {
                age_secs: 11,
                tolerance_secs: 10
            })
        ));
        let strict = verifier().with_tolerance(Duration::ZERO);
        assert_eq!(
            strict.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP),
            Ok(())
        );
        assert!(
            strict
                .verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP + 1)
                .is_err()
        );
        let lax = verifier().with_tolerance(Duration::MAX);
        assert_eq!(
            lax.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, i64::MAX),
            Ok(())
        );
    }

    #[test]
    fn refuses_malformed_headers() {
        let v = verifier();
        for (id, timestamp, signature, want) in [
            (
                "",
                TIMESTAMP_HEADER,
                SIGNATURE,
                VerifyError::MissingHeader("webhook-id"),
            ),
            (
                ID,
                "",
                SIGNATURE,
                VerifyError::MissingHeader("webhook-timestamp"),
            ),
            (
                ID,
                " ",
                SIGNATURE,
                VerifyError::MissingHeader("webhook-timestamp"),
            ),
            (
                ID,
                TIMESTAMP_HEADER,
                "",
                VerifyError::MissingHeader("webhook-signature"),
            ),
            (
                ID,
                TIMESTAMP_HEADER,
                "  ",
                VerifyError::MissingHeader("webhook-signature"),
            ),
            (ID, "-1614265330", SIGNATURE, VerifyError::InvalidTimestamp),
            (ID, "+1614265330", SIGNATURE, VerifyError::InvalidTimestamp),
            (ID, "1614265330.0", SIGNATURE, VerifyError::InvalidTimestamp),
            (
                ID,
                "2021-02-25T15:02:10Z",
                SIGNATURE,
                VerifyError::InvalidTimestamp,
            ),
            (
                ID,
                "99999999999999999999",
                SIGNATURE,
                VerifyError::InvalidTimestamp,
            ),
            (
                ID,
                TIMESTAMP_HEADER,
                "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
                VerifyError::InvalidSignatureHeader,
            ),
            (
                ID,
                TIMESTAMP_HEADER,
                "v1, ,v1",
                VerifyError::InvalidSignatureHeader,
            ),
            (
                ID,
                TIMESTAMP_HEADER,
                "v1,***",
                VerifyError::NoMatchingSignature,
            ),
            (
                ID,
                TIMESTAMP_HEADER,
                "v1,AAAA",
                VerifyError::NoMatchingSignature,
            ),
        ] {
            assert_eq!(
                v.verify(id, timestamp, signature, BODY, TIMESTAMP),
                Err(want),
                "{id:?} {timestamp:?} {signature:?}"
            );
        }
    }

    #[test]
    fn reads_headers_through_a_lookup() {
        let v = verifier();
        let all = |name: &str| match name {
            "webhook-id" => Some(ID),
            "webhook-timestamp" => Some(TIMESTAMP_HEADER),
            "webhook-signature" => Some(SIGNATURE),
            _ => None,
        };
        assert_eq!(v.verify_headers(all, BODY, TIMESTAMP), Ok(()));
        for missing in [HEADER_ID, HEADER_TIMESTAMP, HEADER_SIGNATURE] {
            let lookup = |name: &str| if name == missing { None } else { all(name) };
            assert_eq!(
                v.verify_headers(lookup, BODY, TIMESTAMP),
                Err(VerifyError::MissingHeader(missing))
            );
        }
    }

    #[test]
    fn errors_read_clearly() {
        assert_eq!(
            VerifyError::TimestampTooOld {
                age_secs: 301,
                tolerance_secs: 300
            }
            .to_string(),
            "the webhook-timestamp is 301 s old, more than the 300 s tolerance"
        );
        assert_eq!(
            VerifyError::MissingHeader(HEADER_SIGNATURE).to_string(),
            "the webhook-signature header is missing or empty"
        );
        let boxed: Box<dyn std::error::Error> = Box::new(VerifyError::NoMatchingSignature);
        assert!(boxed.to_string().contains("no v1 signature"));
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;
        use crate::sign;

        proptest! {
            #[test]
            fn what_is_signed_verifies_and_any_change_does_not(
                key in any::<[u8; 32]>(),
                id in "[A-Za-z0-9_]{1,40}",
                timestamp in 0_i64..4_000_000_000,
                body in proptest::collection::vec(any::<u8>(), 0..256),
                skew in -300_i64..=300,
                flip in any::<(usize, u8)>(),
            ) {
                let secret = Secret::from_random_bytes(key);
                let signature = sign(&secret, &id, timestamp, &body);
                let verifier = Verifier::new(secret);
                let header = timestamp.to_string();
                let now = timestamp + skew;
                prop_assert_eq!(verifier.verify(&id, &header, &signature, &body, now), Ok(()));

                let mut changed = body.clone();
                let bit = flip.1.max(1);
                match changed.get_mut(flip.0 % body.len().max(1)) {
                    Some(b) => *b ^= bit,
                    None => changed.push(bit),
                }
                prop_assert_eq!(
                    verifier.verify(&id, &header, &signature, &changed, now),
                    Err(VerifyError::NoMatchingSignature)
                );
            }
        }
    }
}
