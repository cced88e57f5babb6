//! TOTP two-factor (RFC 6238: HMAC-SHA1, 6 digits, 30-second steps, one
//! step of clock drift either way) and recovery codes. The codes come
//! from `totp-rs`; the time is always passed in (the domain reads no
//! clock), and a code is accepted once: the step it matched must be later
//! than the last step accepted.

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use totp_rs::{Algorithm, TOTP};

use crate::portal::digest;

/// Digits of a code.
const DIGITS: usize = 6;
/// Seconds of a step.
const STEP_SECS: u64 = 30;
/// How many single-use recovery codes an enrolment gives.
pub const RECOVERY_CODES: usize = 10;

/// A TOTP authenticator's shared secret (20 random bytes, as RFC 4226
/// recommends for HMAC-SHA1).
#[derive(Clone)]
pub struct Totp {
    totp: TOTP,
}

impl std::fmt::Debug for Totp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Totp(…)")
    }
}

impl Totp {
    /// The authenticator of `secret` (raw bytes).
    #[must_use]
    pub fn new(secret: Vec<u8>) -> Self {
        Self {
            totp: TOTP::new_unchecked(Algorithm::SHA1, DIGITS, 1, STEP_SECS, secret),
        }
    }

    /// The authenticator of a base32 secret (as shown and as an
    /// authenticator app stores it), if it decodes.
    #[must_use]
    pub fn from_base32(secret: &str) -> Option<Self> {
        totp_rs::Secret::Encoded(secret.trim().to_uppercase())
            .to_bytes()
            .ok()
            .filter(|b| !b.is_empty())
            .map(Self::new)
    }

    /// The secret in base32 without padding (typed into an app by hand).
    #[must_use]
    pub fn base32(&self) -> String {
        self.totp.get_secret_base32()
    }

    /// The raw secret (what is sealed at rest).
    #[must_use]
    pub fn secret(&self) -> &[u8] {
        &self.totp.secret
    }

    /// The `otpauth://totp/…` URI an authenticator app scans.
    #[must_use]
    pub fn uri(&self, issuer: &str, account: &str) -> String {
        let label =
            utf8_percent_encode(&format!("{issuer}:{account}"), NON_ALPHANUMERIC).to_string();
        let issuer = utf8_percent_encode(issuer, NON_ALPHANUMERIC).to_string();
        format!(
            "otpauth://totp/{label}?secret={}&issuer={issuer}&algorithm=SHA1&digits={DIGITS}&period={STEP_SECS}",
            self.base32()
        )
    }

    /// The code at Unix second `now`.
    #[must_use]
    pub fn code_at(&self, now: u64) -> String {
        self.totp.generate(now)
    }

    /// The step a typed code matches at `now` (the current step or one
    /// either side), when it is later than `last_step` — the step of the
    /// code accepted last, so that a code works once.
    #[must_use]
    pub fn accept(&self, typed: &str, now: i64, last_step: Option<i64>) -> Option<i64> {
        let typed: String = typed.chars().filter(|c| !c.is_whitespace()).collect();
        if typed.len() != DIGITS || !typed.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let step_secs = i64::try_from(STEP_SECS).unwrap_or(30);
        let current = now.div_euclid(step_secs);
        (current.saturating_sub(1)..=current.saturating_add(1))
            .filter(|step| last_step.is_none_or(|last| *step > last))
            .find(|step| {
                u64::try_from(step.saturating_mul(step_secs))
                    .is_ok_and(|t| digest(&self.code_at(t)) == digest(&typed))
            })
    }
}

/// A recovery code as stored: the digest of its letters and digits,
/// lowercase, without the dashes and spaces a person may type.
#[must_use]
pub fn recovery_code_digest(code: &str) -> String {
    let normalized: String = code
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    digest(&normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238 appendix B's SHA-1 secret.
    const RFC_SECRET: &[u8] = b"12345678901234567890";

    #[test]
    fn codes_match_rfc_6238s_test_vectors() {
        let t = Totp::new(RFC_SECRET.to_vec());
        // The RFC's 8-digit values, last 6 digits.
        assert_eq!(t.code_at(59), "287082");
        assert_eq!(t.code_at(1_111_111_109), "081804");
        assert_eq!(t.code_at(1_234_567_890), "005924");
        assert_eq!(t.code_at(2_000_000_000), "279037");
        assert_eq!(t.base32(), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
        let again = Totp::from_base32("gezdgnbvgy3tqojqgezdgnbvgy3tqojq").unwrap();
        assert_eq!(again.code_at(59), "287082");
        assert!(Totp::from_base32("not base32!").is_none());
    }

    #[test]
    fn a_code_works_within_a_step_either_way_and_once() {
        let t = Totp::new(RFC_SECRET.to_vec());
        let now = 1_234_567_890;
        let code = t.code_at(1_234_567_890);
        let step = t.accept(&code, now, None).unwrap();
        assert_eq!(step, now / 30);
        assert_eq!(t.accept(&format!(" {code} "), now + 30, None), Some(step));
        assert_eq!(t.accept(&code, now + 90, None), None);
        // Used once: the same step is refused.
        assert_eq!(t.accept(&code, now, Some(step)), None);
        assert_eq!(t.accept("12345", now, None), None);
        assert_eq!(t.accept("abcdef", now, None), None);
    }

    #[test]
    fn the_uri_names_issuer_and_account() {
        let t = Totp::new(RFC_SECRET.to_vec());
        let uri = t.uri("Partner API", "dev@broker.example");
        assert!(
            uri.starts_with("otpauth://totp/Partner%20API%3Adev%40broker%2Eexample?secret=GEZD")
        );
        assert!(uri.ends_with("&issuer=Partner%20API&algorithm=SHA1&digits=6&period=30"));
    }

    #[test]
    fn recovery_codes_are_compared_without_dashes_or_case() {
        assert_eq!(
            recovery_code_digest("ABCD-efgh-1234"),
            recovery_code_digest("abcdefgh1234")
        );
        assert_ne!(
            recovery_code_digest("abcdefgh1234"),
            recovery_code_digest("abcdefgh1235")
        );
    }
}
