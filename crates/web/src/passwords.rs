//! Argon2id password hashing (RustCrypto `argon2`) with the OWASP
//! parameters — 19 MiB of memory, 2 iterations, 1 lane — run on a blocking
//! thread so a sign-in never holds up an async worker.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use async_trait::async_trait;
use domain::ports::PasswordHasher;

/// OWASP's Argon2id recommendation (m = 19456 KiB, t = 2, p = 1).
fn argon2() -> Argon2<'static> {
    let params = Params::new(19_456, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The hash a sign-in checks when no account has the address, so an
/// unknown address costs as much time as a wrong password.
const DUMMY: &str = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$Wb3Nm0pNMiSu2P8OjcV3/5cfsfTaa7G2cI1Cu9d8O9g";

/// The Argon2id adapter of [`PasswordHasher`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Argon2id;

#[async_trait]
impl PasswordHasher for Argon2id {
    async fn hash(&self, password: &str) -> Result<String, String> {
        let password = password.to_owned();
        tokio::task::spawn_blocking(move || {
            let salt = SaltString::generate(&mut OsRng);
            argon2()
                .hash_password(password.as_bytes(), &salt)
                .map(|h| h.to_string())
                .map_err(|e| format!("argon2: {e}"))
        })
        .await
        .map_err(|e| format!("the hashing thread failed: {e}"))?
    }

    async fn verify(&self, password: &str, hash: &str) -> bool {
        let password = password.to_owned();
        let hash = if hash.is_empty() { DUMMY } else { hash }.to_owned();
        tokio::task::spawn_blocking(move || {
            PasswordHash::new(&hash).is_ok_and(|parsed| {
                argon2()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
        })
        .await
        .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_are_argon2id_with_owasp_parameters() {
        let h = Argon2id.hash("correct horse battery").await.unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        assert!(Argon2id.verify("correct horse battery", &h).await);
        assert!(!Argon2id.verify("correct horse batterY", &h).await);
        assert!(!Argon2id.verify("anything", "").await);
        assert!(!Argon2id.verify("anything", "not a hash").await);
    }
}
