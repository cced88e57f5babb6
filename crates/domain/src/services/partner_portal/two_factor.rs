//! TOTP enrolment and the second step of signing in.
//!
//! Enrolment shows a fresh secret (as an `otpauth://` URI, its QR code and
//! base32 text) and carries it, sealed to the user, in the confirmation
//! form; a correct code stores it sealed at rest with ten recovery codes
//! (digests only), which are shown once. Signing in then takes a code of
//! a step not used before, or an unused recovery code.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{Actor, PartnerPortal, PartnerSignedIn};
use crate::ids::UserId;
use crate::mode::Mode;
use crate::partner_user::{
    AuditAction, PartnerUser, RECOVERY_CODES, Totp, TotpEnrolment, recovery_code_digest,
};
use crate::portal::digest;
use crate::ports::Minter;
use crate::services::{PortalRefusal, ServiceError};

/// The issuer an authenticator app shows.
const ISSUER: &str = "Partner Benefits API";

/// An enrolment in progress: what the page shows and the sealed secret
/// its form sends back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enrolment {
    /// The `otpauth://totp/…` URI (also drawn as a QR code).
    pub uri: String,
    /// The secret in base32, for typing into an app.
    pub secret: String,
    /// The secret sealed to the user (base64): the form's hidden field.
    pub sealed: String,
}

fn enrol_context(user: &UserId) -> Vec<u8> {
    format!("totp-enrol:{user}").into_bytes()
}

fn stored_context(user: &UserId) -> Vec<u8> {
    format!("totp:{user}").into_bytes()
}

/// Ten codes like `k7pq-2mxd-9ztr-4wha` (80 random bits each).
fn recovery_codes(minter: &Minter<'_>) -> Vec<String> {
    const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
    (0..RECOVERY_CODES)
        .map(|_| {
            let bytes: [u8; 16] = minter.random();
            let chars: Vec<char> = bytes
                .iter()
                .map(|b| {
                    ALPHABET
                        .get(usize::from(b % 32))
                        .map_or('a', |c| char::from(*c))
                })
                .collect();
            chars
                .chunks(4)
                .map(|c| c.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join("-")
        })
        .collect()
}

impl PartnerPortal {
    /// A new secret to enrol (replacing any earlier authenticator once
    /// confirmed).
    ///
    /// # Errors
    /// None in practice; the signature matches the other actions.
    pub fn start_enrolment(&self, actor: &Actor) -> Result<Enrolment, ServiceError> {
        let minter = Minter::new(self.ports.entropy.as_ref());
        let secret: [u8; 20] = minter.random();
        let totp = Totp::new(secret.to_vec());
        let sealed = self
            .ports
            .sealer
            .seal(&secret, &enrol_context(&actor.user.id));
        Ok(Enrolment {
            uri: totp.uri(ISSUER, &actor.user.email),
            secret: totp.base32(),
            sealed: STANDARD.encode(sealed),
        })
    }

    /// Confirms an enrolment with a code of the new authenticator; the
    /// ten recovery codes, shown once.
    ///
    /// # Errors
    /// [`PortalRefusal::CodeRefused`] for a wrong code or a tampered
    /// form.
    pub async fn confirm_enrolment(
        &self,
        actor: &Actor,
        sealed: &str,
        code: &str,
    ) -> Result<Vec<String>, ServiceError> {
        let secret = STANDARD
            .decode(sealed.trim())
            .ok()
            .and_then(|s| {
                self.ports
                    .sealer
                    .open(&s, &enrol_context(&actor.user.id))
                    .ok()
            })
            .ok_or(PortalRefusal::CodeRefused)?;
        let totp = Totp::new(secret.clone());
        let step = totp
            .accept(code, self.now(), None)
            .ok_or(PortalRefusal::CodeRefused)?;
        let minter = Minter::new(self.ports.entropy.as_ref());
        let codes = recovery_codes(&minter);
        let enrolment = TotpEnrolment {
            sealed: STANDARD.encode(
                self.ports
                    .sealer
                    .seal(&secret, &stored_context(&actor.user.id)),
            ),
            step,
            recovery_digests: codes.iter().map(|c| recovery_code_digest(c)).collect(),
        };
        let audit = actor.entry(
            self.now_ms(),
            AuditAction::TwoFactorEnrolled,
            actor.user.email.clone(),
        );
        self.ports
            .store
            .enrol_totp(&actor.user.id, &enrolment, audit)
            .await?;
        Ok(codes)
    }

    fn authenticator(&self, user: &PartnerUser) -> Option<Totp> {
        let sealed = STANDARD.decode(user.totp_sealed.as_deref()?).ok()?;
        let secret = self
            .ports
            .sealer
            .open(&sealed, &stored_context(&user.id))
            .ok()?;
        Some(Totp::new(secret))
    }

    /// The second step of signing in: a TOTP code (of a step not used
    /// before) or an unused recovery code. The pending session is
    /// replaced by a new, fully signed-in one.
    ///
    /// # Errors
    /// [`PortalRefusal::CodeRefused`] (counted against the failed-auth
    /// limit, and written to the audit log) or
    /// [`PortalRefusal::TooManyAttempts`]; [`PortalRefusal::SignInFailed`]
    /// without a pending session.
    pub async fn second_factor(
        &self,
        cookie: Option<&str>,
        code: &str,
        ip: Option<&str>,
    ) -> Result<PartnerSignedIn, ServiceError> {
        let session = self
            .session(cookie)
            .await?
            .filter(|s| s.second_factor_pending)
            .ok_or(PortalRefusal::SignInFailed)?;
        let user = session.user.ok_or(PortalRefusal::SignInFailed)?;
        let actor = Actor {
            user,
            ip: ip.map(str::to_owned),
            mode: Mode::Test,
        };
        let now = self.now();
        if actor.user.lockout.locked(now) {
            return Err(PortalRefusal::CodeRefused.into());
        }
        let by_totp = match self.authenticator(&actor.user) {
            Some(totp) => match totp.accept(code, now, actor.user.totp_last_step) {
                Some(step) => self.ports.store.accept_step(&actor.user.id, step).await?,
                None => false,
            },
            None => false,
        };
        let by_recovery = !by_totp
            && code.chars().filter(char::is_ascii_alphanumeric).count() > 6
            && self
                .ports
                .store
                .use_recovery_code(&actor.user.id, &recovery_code_digest(code), now)
                .await?;
        if !by_totp && !by_recovery {
            // A wrong code counts against the account as a wrong password
            // does, and against the address.
            let locked = self
                .count_failure(&actor.user, ip, "two-factor code", now)
                .await?;
            if locked && let Some(c) = cookie {
                self.ports.store.end_session(&digest(c)).await?;
            }
            return Err(
                match self.ports.credentials.count_failed_auth(ip, now).await? {
                    PortalRefusal::SignInFailed => PortalRefusal::CodeRefused,
                    other => other,
                }
                .into(),
            );
        }
        let new_cookie = self.secret();
        let fresh = self.new_session(&new_cookie, &actor.user, false);
        let (action, target) = if by_totp {
            (AuditAction::SignIn, "password and authenticator code")
        } else {
            (AuditAction::RecoveryCodeUsed, "password and recovery code")
        };
        let audit = actor.entry(self.now_ms(), action, target);
        self.ports
            .store
            .start_session(&fresh, cookie.map(digest), Some(audit))
            .await?;
        Ok(PartnerSignedIn {
            cookie: new_cookie,
            second_factor_pending: false,
        })
    }

    /// How many unused recovery codes the actor has.
    ///
    /// # Errors
    /// Store failures.
    pub async fn recovery_codes_left(&self, actor: &Actor) -> Result<u64, ServiceError> {
        Ok(self.ports.store.recovery_codes_left(&actor.user.id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64: distinct, repeatable bytes.
    struct Counting(std::sync::atomic::AtomicU64);

    impl crate::ports::Entropy for Counting {
        fn fill(&self, buf: &mut [u8]) {
            for b in buf {
                let mut z = self
                    .0
                    .fetch_add(0x9e37_79b9_7f4a_7c15, std::sync::atomic::Ordering::Relaxed);
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                *b = (z ^ (z >> 31)).to_le_bytes()[0];
            }
        }
    }

    #[test]
    fn ten_distinct_recovery_codes_of_four_groups() {
        let e = Counting(std::sync::atomic::AtomicU64::new(1));
        let codes = recovery_codes(&Minter::new(&e));
        assert_eq!(codes.len(), 10);
        for c in &codes {
            assert_eq!(c.len(), 19, "{c}");
            assert_eq!(c.split('-').count(), 4);
        }
        let mut unique = codes.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 10);
    }
}
