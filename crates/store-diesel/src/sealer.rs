//! AES-256-GCM sealing of secrets at rest (`ring`), implementing the
//! domain's `Sealer` port. A sealed value is `nonce (12 bytes) ‖ ciphertext
//! ‖ tag`; the record's context is the additional authenticated data, so a
//! sealed value cannot be moved to another record.

use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

use domain::ports::{Sealer, Unseal};

/// Length of a sealing key in bytes.
pub const KEY_LEN: usize = 32;

/// Why a sealing key cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("the secrets key must be 32 bytes (64 hex characters)")]
pub struct BadKey;

/// Domain separation of the MAC keys derived from the sealing key.
const MAC_LABEL: &[u8] = b"partner-api/mac/v1:";

/// AES-256-GCM sealer; it also signs tokens under HMAC-SHA256 keys derived
/// from the same key (`HMAC(sealing key, label ‖ purpose)`), so no second
/// secret needs configuring.
pub struct AesGcmSealer {
    key: LessSafeKey,
    mac_root: hmac::Key,
    rng: SystemRandom,
}

impl std::fmt::Debug for AesGcmSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AesGcmSealer(***)")
    }
}

impl AesGcmSealer {
    /// A sealer with a 32-byte key.
    ///
    /// # Errors
    /// [`BadKey`] for a key of another length.
    pub fn new(key: &[u8]) -> Result<Self, BadKey> {
        let unbound = UnboundKey::new(&AES_256_GCM, key).map_err(|_| BadKey)?;
        Ok(Self {
            key: LessSafeKey::new(unbound),
            mac_root: hmac::Key::new(hmac::HMAC_SHA256, key),
            rng: SystemRandom::new(),
        })
    }

    /// The MAC key for `purpose`.
    fn mac_key(&self, purpose: &[u8]) -> hmac::Key {
        let mut ctx = hmac::Context::with_key(&self.mac_root);
        ctx.update(MAC_LABEL);
        ctx.update(purpose);
        hmac::Key::new(hmac::HMAC_SHA256, ctx.sign().as_ref())
    }

    /// A sealer from 64 hex characters.
    ///
    /// # Errors
    /// [`BadKey`] when the text is not 64 hex characters.
    pub fn from_hex(text: &str) -> Result<Self, BadKey> {
        let bytes = <[u8; KEY_LEN] as hex::FromHex>::from_hex(text.trim()).map_err(|_| BadKey)?;
        Self::new(&bytes)
    }

    /// A fresh random key as 64 hex characters.
    ///
    /// # Errors
    /// [`BadKey`] if the system random source fails.
    pub fn generate_hex() -> Result<String, BadKey> {
        let mut key = [0u8; KEY_LEN];
        SystemRandom::new().fill(&mut key).map_err(|_| BadKey)?;
        Ok(hex::encode(key))
    }
}

impl Sealer for AesGcmSealer {
    fn seal(&self, plaintext: &[u8], context: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        if self.rng.fill(&mut nonce).is_err() {
            // Without randomness there is no safe nonce; seal nothing
            // rather than reuse one (the value then cannot be re-shown).
            return Vec::new();
        }
        let mut buf = plaintext.to_vec();
        if self
            .key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context),
                &mut buf,
            )
            .is_err()
        {
            return Vec::new();
        }
        let mut out = nonce.to_vec();
        out.extend_from_slice(&buf);
        out
    }

    fn open(&self, sealed: &[u8], context: &[u8]) -> Result<Vec<u8>, Unseal> {
        let (nonce, body) = sealed.split_at_checked(NONCE_LEN).ok_or(Unseal)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Unseal)?;
        let mut buf = body.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(context), &mut buf)
            .map_err(|_| Unseal)?;
        Ok(plain.to_vec())
    }

    fn sign(&self, purpose: &[u8], message: &[u8]) -> Vec<u8> {
        hmac::sign(&self.mac_key(purpose), message)
            .as_ref()
            .to_vec()
    }

    fn verify(&self, purpose: &[u8], message: &[u8], tag: &[u8]) -> bool {
        hmac::verify(&self.mac_key(purpose), message, tag).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_with_their_key_and_context() {
        let s = AesGcmSealer::from_hex(&"11".repeat(32)).unwrap();
        let sealed = s.seal(b"psk_test_0123", b"api-key:key_1");
        assert_ne!(&sealed[12..], b"psk_test_0123");
        assert_eq!(s.open(&sealed, b"api-key:key_1").unwrap(), b"psk_test_0123");
        assert_eq!(s.open(&sealed, b"api-key:key_2"), Err(Unseal));
        let other = AesGcmSealer::from_hex(&"22".repeat(32)).unwrap();
        assert_eq!(other.open(&sealed, b"api-key:key_1"), Err(Unseal));
        let mut tampered = sealed.clone();
        if let Some(b) = tampered.last_mut() {
            *b ^= 1;
        }
        assert_eq!(s.open(&tampered, b"api-key:key_1"), Err(Unseal));
        assert_eq!(s.open(b"short", b"x"), Err(Unseal));
        assert!(AesGcmSealer::from_hex("abc").is_err());
        // Either case, surrounding whitespace ignored; nothing else.
        assert!(AesGcmSealer::from_hex(&format!(" {}\n", "AB".repeat(32))).is_ok());
        for bad in [
            "ab".repeat(31),
            "ab".repeat(33),
            format!("{}g0", "ab".repeat(31)),
        ] {
            assert!(AesGcmSealer::from_hex(&bad).is_err(), "{bad}");
        }
        assert!(AesGcmSealer::from_hex(&format!("{}\u{e9}", "ab".repeat(31))).is_err());
        let generated = AesGcmSealer::generate_hex().unwrap();
        assert_eq!(generated.len(), 64);
        assert!(
            generated
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }

    #[test]
    fn tags_verify_only_for_their_key_purpose_and_message() {
        let s = AesGcmSealer::from_hex(&"11".repeat(32)).unwrap();
        let tag = s.sign(b"embed", b"payload");
        assert_eq!(tag.len(), 32);
        assert_eq!(tag, s.sign(b"embed", b"payload"));
        assert!(s.verify(b"embed", b"payload", &tag));
        assert!(!s.verify(b"other", b"payload", &tag));
        assert!(!s.verify(b"embed", b"payloaD", &tag));
        assert!(!s.verify(b"embed", b"payload", &tag[..31]));
        let other = AesGcmSealer::from_hex(&"22".repeat(32)).unwrap();
        assert!(!other.verify(b"embed", b"payload", &tag));
    }
}
