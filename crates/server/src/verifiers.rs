//! The onboarding verifiers (onboarding §1, Verifiers). Business
//! verification: in test mode the sandbox rules — EIN `11-1111111` is
//! refused, `22-2222222` is answered after 60 s × the configured time
//! scale, every other valid EIN verifies at once; in live mode the
//! operator's manual review (`partner-api company verify|reject`).
//! Micro-deposits: 32 and 45 cents in test mode, two random amounts of 1 to
//! 99 cents in live mode, recorded for the operator's payments provider.

use std::sync::Arc;

use domain::mode::Mode;
use domain::onboarding::VerifierAnswer;
use domain::ports::{BusinessVerifier, Entropy, MicroDeposits, VerificationRequest};

/// The sandbox EIN that is refused.
pub const REFUSED_EIN: &str = "111111111";

/// The sandbox EIN answered after a delay.
pub const DELAYED_EIN: &str = "222222222";

/// The sandbox delay before the delayed EIN verifies, in seconds.
pub const SANDBOX_DELAY_SECS: f64 = 60.0;

/// The test-mode micro-deposits, in cents.
pub const TEST_DEPOSITS: [u32; 2] = [32, 45];

/// Sandbox rules in test mode, the operator's review in live mode.
#[derive(Debug, Clone, Copy)]
pub struct Verifier {
    delay_secs: i64,
}

impl Verifier {
    /// The verifier whose sandbox delay is 60 s × `time_scale` (at least
    /// 1 s).
    #[must_use]
    pub fn new(time_scale: f64) -> Self {
        let delay = (SANDBOX_DELAY_SECS * time_scale).ceil();
        // The scale is finite and positive (checked at load); the delay
        // fits in a day.
        let delay_secs = (1..=86_400)
            .find(|s| f64::from(*s) >= delay)
            .unwrap_or(86_400);
        Self {
            delay_secs: i64::from(delay_secs),
        }
    }
}

impl BusinessVerifier for Verifier {
    fn verify(&self, request: &VerificationRequest) -> VerifierAnswer {
        match request.mode {
            Mode::Live => VerifierAnswer::Pending { due_at: None },
            Mode::Test => match request.ein.as_str() {
                REFUSED_EIN => {
                    VerifierAnswer::Refused("The EIN does not match the legal name".to_owned())
                }
                DELAYED_EIN => VerifierAnswer::Pending {
                    due_at: Some(request.now.saturating_add(self.delay_secs)),
                },
                _ => VerifierAnswer::Verified,
            },
        }
    }
}

/// Fixed amounts in test mode, random ones in live mode.
#[derive(Clone)]
pub struct Deposits {
    entropy: Arc<dyn Entropy>,
}

impl Deposits {
    /// Over `entropy`.
    #[must_use]
    pub fn new(entropy: Arc<dyn Entropy>) -> Self {
        Self { entropy }
    }
}

impl MicroDeposits for Deposits {
    fn amounts(&self, mode: Mode) -> [u32; 2] {
        match mode {
            Mode::Test => TEST_DEPOSITS,
            Mode::Live => {
                let mut bytes = [0u8; 2];
                self.entropy.fill(&mut bytes);
                bytes.map(|b| 1 + u32::from(b) % 99)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::OsEntropy;

    fn ask(mode: Mode, ein: &str) -> VerifierAnswer {
        Verifier::new(0.01).verify(&VerificationRequest {
            mode,
            ein: ein.to_owned(),
            legal_name: "Acme LLC".to_owned(),
            now: 1_000,
        })
    }

    #[test]
    fn the_sandbox_answers_by_ein_and_live_mode_waits_for_review() {
        assert_eq!(ask(Mode::Test, "123456789"), VerifierAnswer::Verified);
        assert!(matches!(
            ask(Mode::Test, REFUSED_EIN),
            VerifierAnswer::Refused(_)
        ));
        assert_eq!(
            ask(Mode::Test, DELAYED_EIN),
            VerifierAnswer::Pending {
                due_at: Some(1_001)
            }
        );
        assert_eq!(
            ask(Mode::Live, "123456789"),
            VerifierAnswer::Pending { due_at: None }
        );
        assert_eq!(Verifier::new(1.0).delay_secs, 60);
    }

    #[test]
    fn deposits_are_fixed_in_test_mode_and_1_to_99_cents_in_live_mode() {
        let d = Deposits::new(Arc::new(OsEntropy::new()));
        assert_eq!(d.amounts(Mode::Test), [32, 45]);
        for _ in 0..200 {
            let [a, b] = d.amounts(Mode::Live);
            assert!((1..=99).contains(&a) && (1..=99).contains(&b));
        }
    }
}
