//! Port traits the domain needs from the outside world besides storage
//! (which is in [`crate::store`]): the clock, entropy for ids and secrets,
//! sealing of secrets at rest, waking the job worker, and the business
//! and bank verifiers of onboarding. Adapters implement them; unit tests
//! use their `mockall` mocks (`MockClock`, `MockEntropy`, `MockSealer`,
//! …), which other crates get with the `mock` feature.

use crate::api_key::ApiKey;
use crate::ids::{
    EmbedSessionId, EnrollmentId, EventId, GroupId, JobId, KeyId, MemberId, PartnerId, ProcessId,
    QuoteId, RequestId, UserId,
};
use crate::mode::Mode;

/// The current time since the Unix epoch (UTC). Injected so that expiry,
/// windows and timestamps are testable.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait Clock: Send + Sync {
    /// Now, in Unix milliseconds.
    fn now_ms(&self) -> i64;
}

/// Now in whole Unix seconds, the resolution of every stored timestamp.
#[must_use]
pub fn now_secs(clock: &dyn Clock) -> i64 {
    clock.now_ms().div_euclid(1000)
}

/// Unix seconds as RFC 3339 UTC with second precision
/// (`2026-11-21T13:14:00Z`), as every timestamp the service shows.
#[must_use]
pub fn rfc3339(unix_secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix_secs)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// Unix milliseconds as RFC 3339 UTC with millisecond precision
/// (`2026-11-21T13:14:01.204Z`), for times finer than a second.
#[must_use]
pub fn rfc3339_ms(unix_ms: i64) -> String {
    let secs = rfc3339(unix_ms.div_euclid(1000));
    let frac = unix_ms.rem_euclid(1000);
    secs.strip_suffix('Z')
        .map_or_else(|| secs.clone(), |s| format!("{s}.{frac:03}Z"))
}

/// Why a sealed secret cannot be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("sealed secret cannot be opened with the configured key")]
pub struct Unseal;

/// Authenticated encryption of secrets kept at rest (a test key's
/// plaintext, webhook signing secrets). `context` binds a sealed value to
/// the record it belongs to, so one cannot be moved to another.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait Sealer: Send + Sync {
    /// Encrypts `plaintext`.
    fn seal(&self, plaintext: &[u8], context: &[u8]) -> Vec<u8>;

    /// Decrypts a value made by [`Sealer::seal`] with the same `context`.
    ///
    /// # Errors
    /// [`Unseal`] when the value was tampered with, sealed under another
    /// key or for another context.
    fn open(&self, sealed: &[u8], context: &[u8]) -> Result<Vec<u8>, Unseal>;

    /// An HMAC-SHA256 tag of `message` under a key derived from the
    /// sealing key for `purpose` (signed, self-contained tokens such as
    /// embed-session URLs). A tag made for one purpose never verifies for
    /// another.
    fn sign(&self, purpose: &[u8], message: &[u8]) -> Vec<u8>;

    /// Whether `tag` is [`Sealer::sign`]'s tag of `message` for `purpose`,
    /// compared in constant time.
    fn verify(&self, purpose: &[u8], message: &[u8], tag: &[u8]) -> bool;
}

/// Cryptographically secure randomness, for ids and secrets.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait Entropy: Send + Sync {
    /// Fills `buf` with random bytes.
    fn fill(&self, buf: &mut [u8]);
}

/// Puts the millisecond within the second of `now_ms` in the first 12 bits
/// (three hex characters, `000`–`3e7`) of six random bytes, keeping 36
/// random bits. Lists are ordered by `(created_at, id)` with `created_at`
/// in whole seconds, so such ids keep items created in the same second in
/// creation order (newest first) instead of a random one.
#[must_use]
pub fn time_ordered(bytes: [u8; 6], now_ms: i64) -> [u8; 6] {
    let ms = u16::try_from(now_ms.rem_euclid(1000)).unwrap_or(0);
    let [hi, lo] = (ms << 4).to_be_bytes();
    let [_, b1, c, d, e, f] = bytes;
    [hi, lo | (b1 & 0x0f), c, d, e, f]
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

    /// A new group id that sorts after the ids of groups created earlier in
    /// the same second: see [`time_ordered`].
    #[must_use]
    pub fn group_id_at(&self, now_ms: i64) -> GroupId {
        GroupId::from_bytes(time_ordered(self.bytes(), now_ms))
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

    /// A new quote id ordered within its second: see [`time_ordered`].
    #[must_use]
    pub fn quote_id_at(&self, now_ms: i64) -> QuoteId {
        QuoteId::from_bytes(time_ordered(self.bytes(), now_ms))
    }

    /// A new enrollment id ordered within its second: see [`time_ordered`].
    #[must_use]
    pub fn enrollment_id_at(&self, now_ms: i64) -> EnrollmentId {
        EnrollmentId::from_bytes(time_ordered(self.bytes(), now_ms))
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

    /// A new partner portal user id.
    #[must_use]
    pub fn user_id(&self) -> UserId {
        UserId::from_bytes(self.bytes())
    }

    /// `N` random bytes (TOTP secrets, recovery codes).
    #[must_use]
    pub fn random<const N: usize>(&self) -> [u8; N] {
        self.bytes()
    }

    /// A new job id.
    #[must_use]
    pub fn job_id(&self) -> JobId {
        JobId::from_bytes(self.bytes())
    }

    /// A new embed session id.
    #[must_use]
    pub fn embed_session_id(&self) -> EmbedSessionId {
        EmbedSessionId::from_bytes(self.bytes())
    }

    /// A new serving process id.
    #[must_use]
    pub fn process_id(&self) -> ProcessId {
        ProcessId::from_bytes(self.bytes())
    }

    /// A new delivery-log row id: `att_` + 24 lowercase hex.
    #[must_use]
    pub fn attempt_id(&self) -> String {
        format!("att_{}", hex::encode(self.bytes::<12>()))
    }

    /// A new idempotency attempt token
    /// ([`IdempotentRequest::attempt`](crate::idempotency::IdempotentRequest::attempt)): 24 lowercase hex.
    #[must_use]
    pub fn idempotency_attempt(&self) -> String {
        hex::encode(self.bytes::<12>())
    }

    /// 32 random bytes for a secret (webhook signing secrets).
    #[must_use]
    pub fn secret32(&self) -> [u8; 32] {
        self.bytes()
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

/// Tells this process's job worker that a job was queued, so that it runs
/// now rather than at the worker's next poll. Services call it after the
/// transaction that queued the job has committed; workers of other
/// processes find the job at their own poll.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait JobWaker: Send + Sync {
    /// A job was queued.
    fn job_queued(&self);
}

/// The worker of this process waits on a [`tokio::sync::Notify`].
impl JobWaker for tokio::sync::Notify {
    fn job_queued(&self) {
        self.notify_one();
    }
}

/// No job worker runs in this process (the operator CLI, unit tests): the
/// worker of a serving process finds the job at its poll.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWorker;

impl JobWaker for NoWorker {
    fn job_queued(&self) {}
}

/// Outbound email to members and employer-portal admins. Whether a message
/// may be sent at all is the caller's rule ([`crate::email::deliverable`]:
/// never in test mode); an adapter sends, or records, what it is given.
/// Adapters never log an address or a message's text.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait::async_trait]
pub trait Mailer: Send + Sync {
    /// Sends one message.
    ///
    /// # Errors
    /// MUST return [`crate::email::MailError::InvalidAddress`] when
    /// `message.to` is not an email address, and
    /// [`crate::email::MailError::Rejected`] when the server refuses the
    /// message for good; MUST return
    /// [`crate::email::MailError::Unavailable`] (and only then) when a
    /// retry may succeed. No error may carry the address or the text.
    async fn send(
        &self,
        message: &crate::email::OutboundEmail,
    ) -> Result<(), crate::email::MailError>;
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
    fn time_ordered_ids_sort_by_millisecond_within_a_second() {
        let ids: Vec<String> = [7, 8, 120, 999]
            .into_iter()
            .map(|ms| {
                GroupId::from_bytes(time_ordered([0xff; 6], 1_795_000_000_000 + ms))
                    .as_str()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            ids,
            [
                "grp_007fffffffff",
                "grp_008fffffffff",
                "grp_078fffffffff",
                "grp_3e7fffffffff"
            ]
        );
        assert_eq!(
            GroupId::from_bytes(time_ordered([0; 6], 1_795_000_000_999)).as_str(),
            "grp_3e7000000000"
        );
    }

    #[test]
    fn the_clock_is_a_port() {
        let mut c = MockClock::new();
        c.expect_now_ms().return_const(1_795_000_000_999_i64);
        let clock: &dyn Clock = &c;
        assert_eq!(now_secs(clock), 1_795_000_000);
    }
}

/// One HTTP attempt of a webhook delivery: the body and the signed headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The endpoint.
    pub url: String,
    /// Headers (`content-type`, `webhook-id`, `webhook-timestamp`,
    /// `webhook-signature`).
    pub headers: Vec<(String, String)>,
    /// The exact bytes signed.
    pub body: Vec<u8>,
}

/// Sends webhook deliveries over HTTP.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait::async_trait]
pub trait Deliverer: Send + Sync {
    /// POSTs one attempt: redirects are not followed, the endpoint has
    /// `webhooks.attempt_timeout_ms` to answer, and any 2xx is a success.
    /// The report says why it failed, how long it took and the first 1 KiB
    /// of the answer.
    async fn deliver(&self, delivery: Delivery) -> crate::webhook::attempt::AttemptReport;

    /// Whether `url` may receive deliveries: its host must not be, or
    /// resolve to, a non-public address — loopback, private, link-local,
    /// unique-local, reserved, or an IPv6 form that embeds a non-public
    /// IPv4 address (unless the adapter is configured to allow insecure
    /// endpoints).
    ///
    /// # Errors
    /// Why the host is refused.
    async fn check_host(&self, url: &str) -> Result<(), String>;
}

/// What a business verifier is asked to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationRequest {
    /// The key mode: test mode uses the sandbox rules.
    pub mode: Mode,
    /// The EIN, 9 digits.
    pub ein: String,
    /// The legal name.
    pub legal_name: String,
    /// Unix seconds.
    pub now: i64,
}

/// Verifies a business (onboarding §1, Verifiers): at once, by refusing
/// with a reason, or later (a sandbox delay, or the operator's manual
/// review in live mode).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait BusinessVerifier: Send + Sync {
    /// The verifier's answer.
    fn verify(&self, request: &VerificationRequest) -> crate::onboarding::VerifierAnswer;
}

/// Micro-deposits to a bank account being verified. No money moves in
/// this service: in live mode the amounts are recorded for the operator,
/// whose payments provider makes the deposits.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait MicroDeposits: Send + Sync {
    /// The two amounts, in cents, for a new account in `mode`.
    fn amounts(&self, mode: Mode) -> [u32; 2];
}

/// Hashes and checks portal passwords (Argon2id with OWASP parameters in
/// the adapter). Both calls are slow on purpose: an adapter runs them off
/// the async workers. A password is never logged or kept.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait::async_trait]
pub trait PasswordHasher: Send + Sync {
    /// The PHC string of `password` with a fresh salt.
    ///
    /// # Errors
    /// When hashing failed (a message without the password).
    async fn hash(&self, password: &str) -> Result<String, String>;

    /// Whether `password` matches the PHC string `hash`; `false` for a
    /// malformed hash.
    async fn verify(&self, password: &str, hash: &str) -> bool;
}
