//! Port traits the domain needs from the outside world. Adapters implement
//! them; unit tests use their `mockall` mocks (`MockClock`,
//! `MockEntropy`), which other crates get with the `mock` feature.
//!
//! Storage, the event outbox and notification ports arrive with the
//! persistence work.

use crate::api_key::ApiKey;
use crate::ids::{EnrollmentId, EventId, GroupId, KeyId, MemberId, PartnerId, QuoteId, RequestId};
use crate::mode::Mode;

/// The current time, as whole seconds since the Unix epoch (UTC). Injected
/// so that expiry, windows and timestamps are testable.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait Clock: Send + Sync {
    /// Now, in Unix seconds.
    fn now_unix(&self) -> i64;
}

/// Cryptographically secure randomness, for ids and secrets.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait Entropy: Send + Sync {
    /// Fills `buf` with random bytes.
    fn fill(&self, buf: &mut [u8]);
}

/// Makes ids and keys from an [`Entropy`] source.
pub struct Minter<'a> {
    entropy: &'a dyn Entropy,
}

impl<'a> Minter<'a> {
    /// A minter over `entropy`.
    #[must_use]
    pub fn new(entropy: &'a dyn Entropy) -> Self {
        Self { entropy }
    }

    fn bytes<const N: usize>(&self) -> [u8; N] {
        let mut b = [0u8; N];
        self.entropy.fill(&mut b);
        b
    }

    /// A new group id.
    #[must_use]
    pub fn group_id(&self) -> GroupId {
        GroupId::from_bytes(self.bytes())
    }

    /// A new member id.
    #[must_use]
    pub fn member_id(&self) -> MemberId {
        MemberId::from_bytes(self.bytes())
    }

    /// A new quote id.
    #[must_use]
    pub fn quote_id(&self) -> QuoteId {
        QuoteId::from_bytes(self.bytes())
    }

    /// A new enrollment id.
    #[must_use]
    pub fn enrollment_id(&self) -> EnrollmentId {
        EnrollmentId::from_bytes(self.bytes())
    }

    /// A new event id.
    #[must_use]
    pub fn event_id(&self) -> EventId {
        EventId::from_bytes(self.bytes())
    }

    /// A new partner id.
    #[must_use]
    pub fn partner_id(&self) -> PartnerId {
        PartnerId::from_bytes(self.bytes())
    }

    /// A new key record id.
    #[must_use]
    pub fn key_id(&self) -> KeyId {
        KeyId::from_bytes(self.bytes())
    }

    /// A new request id.
    #[must_use]
    pub fn request_id(&self) -> RequestId {
        RequestId::from_bytes(self.bytes())
    }

    /// A new API key of `mode` (128 random bits).
    #[must_use]
    pub fn api_key(&self, mode: Mode) -> ApiKey {
        ApiKey::from_bytes(mode, self.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counting_entropy() -> MockEntropy {
        let mut e = MockEntropy::new();
        let mut next = 0u8;
        e.expect_fill().returning(move |buf| {
            for b in buf.iter_mut() {
                *b = next;
                next = next.wrapping_add(1);
            }
        });
        e
    }

    #[test]
    fn ids_and_keys_come_from_the_entropy_port() {
        let e = counting_entropy();
        let m = Minter::new(&e);
        assert_eq!(m.group_id().as_str(), "grp_000102030405");
        assert_eq!(m.quote_id().as_str(), "qt_060708090a0b");
        let key = m.api_key(Mode::Live);
        assert_eq!(key.expose(), "psk_live_0c0d0e0f101112131415161718191a1b");
        assert_eq!(key.mode(), Mode::Live);
    }

    #[test]
    fn each_id_takes_exactly_six_bytes_and_a_key_sixteen() {
        let mut e = MockEntropy::new();
        e.expect_fill()
            .withf(|buf| buf.len() == 6)
            .times(2)
            .return_const(());
        e.expect_fill()
            .withf(|buf| buf.len() == 16)
            .times(1)
            .return_const(());
        let m = Minter::new(&e);
        let _ = m.partner_id();
        let _ = m.event_id();
        let _ = m.api_key(Mode::Test);
    }

    #[test]
    fn the_clock_is_a_port() {
        let mut c = MockClock::new();
        c.expect_now_unix().return_const(1_795_000_000_i64);
        let clock: &dyn Clock = &c;
        assert_eq!(clock.now_unix(), 1_795_000_000);
    }
}
