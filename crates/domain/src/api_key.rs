//! API keys: `psk_test_<32 hex>` and `psk_live_<32 hex>`.
//!
//! Keys are stored as SHA-256 digests and looked up by digest; the plaintext
//! exists only in the response that mints it (and, for test keys, optionally
//! encrypted for re-display). Digests are compared in constant time.

use std::fmt;

use sha2::{Digest, Sha256};

use crate::ids::{KeyId, PartnerId};
use crate::mode::Mode;

/// Number of hex characters of a key's secret part.
pub const KEY_HEX_LEN: usize = 32;

/// Why a bearer token is not an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed API key: expected psk_test_ or psk_live_ and 32 lowercase hex characters")]
pub struct MalformedKey;

/// A plaintext API key. Its `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    mode: Mode,
    text: String,
}

impl ApiKey {
    /// Mints a key of `mode` from 16 random bytes.
    #[must_use]
    pub fn from_bytes(mode: Mode, secret: [u8; 16]) -> Self {
        let text = format!("psk_{}_{}", mode.as_str(), hex::encode(secret));
        Self { mode, text }
    }

    /// Parses a bearer token.
    ///
    /// # Errors
    /// [`MalformedKey`] when the token does not have a key's shape.
    pub fn parse(token: &str) -> Result<Self, MalformedKey> {
        let (mode, rest) = if let Some(rest) = token.strip_prefix("psk_test_") {
            (Mode::Test, rest)
        } else if let Some(rest) = token.strip_prefix("psk_live_") {
            (Mode::Live, rest)
        } else {
            return Err(MalformedKey);
        };
        let hex = rest.len() == KEY_HEX_LEN
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Err(MalformedKey);
        }
        Ok(Self {
            mode,
            text: token.to_owned(),
        })
    }

    /// The mode the key grants.
    #[must_use]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The plaintext, to show once.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.text
    }

    /// The SHA-256 digest the key is stored and looked up by.
    #[must_use]
    pub fn digest(&self) -> KeyDigest {
        let mut out = [0u8; 32];
        for (o, b) in out.iter_mut().zip(Sha256::digest(self.text.as_bytes())) {
            *o = b;
        }
        KeyDigest(out)
    }

    /// A display prefix for listings: mode and the first 4 hex characters,
    /// e.g. `psk_test_1a2b…`; never enough to use the key.
    #[must_use]
    pub fn display_prefix(&self) -> String {
        let head = self.text.get(..13).unwrap_or_default();
        format!("{head}…")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({})", self.display_prefix())
    }
}

/// The SHA-256 digest of an API key.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyDigest([u8; 32]);

impl KeyDigest {
    /// From stored bytes.
    #[must_use]
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The digest bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Constant-time comparison: the time taken does not depend on where
    /// the digests differ.
    #[must_use]
    pub fn ct_eq(&self, other: &Self) -> bool {
        self.0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

impl fmt::Debug for KeyDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyDigest(…)")
    }
}

/// A stored API key: its digest, never its plaintext, except that a test
/// key's plaintext may be kept sealed (encrypted) for re-display.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyRecord {
    /// `key_` id.
    pub id: KeyId,
    /// Owning partner.
    pub partner_id: PartnerId,
    /// Mode the key grants.
    pub mode: Mode,
    /// SHA-256 digest of the key.
    pub digest: KeyDigest,
    /// Display prefix (`psk_test_1a2b…`).
    pub prefix: String,
    /// The sealed plaintext (test keys only; `None` for live keys).
    pub sealed: Option<Vec<u8>>,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Revocation time, Unix seconds.
    pub revoked_at: Option<i64>,
}

impl KeyRecord {
    /// Whether the key still authenticates.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.revoked_at.is_none()
    }
}

impl fmt::Debug for KeyRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRecord")
            .field("id", &self.id)
            .field("partner_id", &self.partner_id)
            .field("mode", &self.mode)
            .field("prefix", &self.prefix)
            .field("sealed", &self.sealed.as_ref().map(|_| "***"))
            .field("created_at", &self.created_at)
            .field("revoked_at", &self.revoked_at)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_documented_shape() {
        let k = ApiKey::from_bytes(Mode::Test, [0xab; 16]);
        assert_eq!(k.expose(), format!("psk_test_{}", "ab".repeat(16)));
        assert_eq!(ApiKey::parse(k.expose()).unwrap(), k);
        let live = ApiKey::from_bytes(Mode::Live, [0x01; 16]);
        assert_eq!(ApiKey::parse(live.expose()).unwrap().mode(), Mode::Live);
        for bad in [
            "",
            "psk_test_",
            "psk_prod_abababababababababababababababab",
            "psk_test_ABABABABABABABABABABABABABABABAB",
            "psk_test_abababababababababababababababa",
            "psk_test_ababababababababababababababababab",
            "Bearer psk_test_abababababababababababababababab",
        ] {
            assert_eq!(ApiKey::parse(bad), Err(MalformedKey), "{bad}");
        }
    }

    #[test]
    fn debug_and_listings_never_show_the_secret() {
        let k = ApiKey::from_bytes(Mode::Test, [0x5a; 16]);
        let debug = format!("{k:?}");
        assert_eq!(debug, "ApiKey(psk_test_5a5a…)");
        assert!(!debug.contains(&"5a".repeat(16)));
        assert_eq!(format!("{:?}", k.digest()), "KeyDigest(…)");
    }

    #[test]
    fn digests_are_sha256_and_compare_in_constant_time() {
        let k = ApiKey::parse("psk_test_00000000000000000000000000000000").unwrap();
        let d = k.digest();
        assert_eq!(
            d.as_bytes(),
            &<[u8; 32]>::from(Sha256::digest(k.expose().as_bytes()))
        );
        assert!(d.ct_eq(&k.digest()));
        let other = ApiKey::from_bytes(Mode::Test, [1; 16]).digest();
        assert!(!d.ct_eq(&other));
    }
}
