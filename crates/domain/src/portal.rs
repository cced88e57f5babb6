//! The hosted employer portal's rules (onboarding §3): set-password links
//! (32 random bytes, stored as a SHA-256 digest, valid 7 days, single use,
//! only the newest one works), the password policy, the account lockout
//! (5 failures in 15 minutes lock for 15 minutes) and the session clocks
//! (30 minutes idle, 12 hours absolute).
//!
//! A link's token is also kept sealed (AEAD, [`crate::ports::Sealer`]) so
//! that the enrollment can show the newest unused link again; the digest
//! alone finds it.

use sha2::{Digest as _, Sha256};

use crate::error::FieldError;
use crate::ids::{EnrollmentId, GroupId};
use crate::scope::Scope;

/// How long a set-password link works, in seconds (7 days).
pub const LINK_TTL_SECS: i64 = 7 * 24 * 3600;
/// A session ends after this many seconds without a request.
pub const SESSION_IDLE_SECS: i64 = 30 * 60;
/// A session ends this many seconds after it began, whatever happens.
pub const SESSION_MAX_SECS: i64 = 12 * 3600;
/// Failed sign-ins that lock an account…
pub const LOCK_FAILURES: usize = 5;
/// …within this many seconds…
pub const LOCK_WINDOW_SECS: i64 = 15 * 60;
/// …lock it for this many seconds.
pub const LOCK_SECS: i64 = 15 * 60;
/// Password length bounds, in characters.
pub const PASSWORD_CHARS: std::ops::RangeInclusive<usize> = 12..=128;
/// A seen session's `seen_at` is written again only after this many
/// seconds (one write per minute of activity, not one per request).
pub const TOUCH_EVERY_SECS: i64 = 60;

/// The common passwords refused whatever their length (lowercase, one per
/// line); shipped with the service.
const COMMON_PASSWORDS: &str = include_str!("portal/common-passwords.txt");

/// The lowercase hex SHA-256 of a token or session id: what is stored.
#[must_use]
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// An email address as accounts are found by it (trimmed, lowercase).
#[must_use]
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

/// Why a password is refused (field `password`); empty when it is
/// acceptable. `email` is the account's address.
#[must_use]
pub fn password_errors(password: &str, email: &str) -> Vec<FieldError> {
    let chars = password.chars().count();
    let message = if !PASSWORD_CHARS.contains(&chars) {
        Some("must be 12 to 128 characters")
    } else if normalize_email(password) == normalize_email(email) {
        Some("must not be your email address")
    } else if is_common(password) {
        Some("is too common; choose a less guessable password")
    } else {
        None
    };
    message
        .map(|m| FieldError::new("password", m))
        .into_iter()
        .collect()
}

fn is_common(password: &str) -> bool {
    let lower = password.to_lowercase();
    let mut chars = lower.chars();
    let first = chars.next();
    // One character repeated ("aaaaaaaaaaaa") is as guessable as any list entry.
    first.is_some_and(|f| chars.all(|c| c == f))
        || COMMON_PASSWORDS
            .lines()
            .map(str::trim)
            .any(|line| !line.is_empty() && line == lower)
}

/// An account's recent failed sign-ins and its lock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lockout {
    /// Unix seconds of the failures in the current window, oldest first.
    pub failures: Vec<i64>,
    /// Locked until then (Unix seconds).
    pub locked_until: Option<i64>,
}

impl Lockout {
    /// Whether the account is locked at `now`.
    #[must_use]
    pub fn locked(&self, now: i64) -> bool {
        self.locked_until.is_some_and(|until| now < until)
    }

    /// Counts a failed sign-in; `true` when it locks the account.
    pub fn fail(&mut self, now: i64) -> bool {
        if self.locked(now) {
            return false;
        }
        self.locked_until = None;
        self.failures
            .retain(|&t| now.saturating_sub(t) < LOCK_WINDOW_SECS);
        self.failures.push(now);
        if self.failures.len() >= LOCK_FAILURES {
            self.failures.clear();
            self.locked_until = Some(now.saturating_add(LOCK_SECS));
            true
        } else {
            false
        }
    }

    /// The lockout after a failed sign-in at `now`, and whether that
    /// failure locks the account; `None` while it is locked (a failure
    /// then changes nothing and is not stored).
    #[must_use]
    pub fn after_failure(&self, now: i64) -> Option<(Self, bool)> {
        if self.locked(now) {
            return None;
        }
        let mut next = self.clone();
        let locks = next.fail(now);
        Some((next, locks))
    }

    /// The stored form: failure times, comma-separated.
    #[must_use]
    pub fn failures_stored(&self) -> String {
        self.failures
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Reads the stored form (unreadable entries are dropped).
    #[must_use]
    pub fn from_stored(failures: &str, locked_until: Option<i64>) -> Self {
        Self {
            failures: failures
                .split(',')
                .filter_map(|t| t.trim().parse().ok())
                .collect(),
            locked_until,
        }
    }
}

/// The portal account of a hosted enrollment: its signatory, the portal
/// admin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortalAccount {
    /// The enrollment (one account each).
    pub enrollment_id: EnrollmentId,
    /// Its group.
    pub group_id: GroupId,
    /// The partner and mode the enrollment belongs to.
    pub scope: Scope,
    /// The admin's address, normalized.
    pub email: String,
    /// The Argon2id PHC string, once a password is set.
    pub password_hash: Option<String>,
    /// Failed sign-ins and lock.
    pub lockout: Lockout,
}

/// A new set-password link, stored with its account (created on the
/// first link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLink {
    /// [`digest`] of the token.
    pub token_hash: String,
    /// The token sealed to the enrollment, base64.
    pub token_sealed: String,
    /// The enrollment.
    pub enrollment_id: EnrollmentId,
    /// Its group.
    pub group_id: GroupId,
    /// The account's address (used when the account is created).
    pub email: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub expires_at: i64,
}

/// A stored link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLink {
    /// [`digest`] of the token.
    pub token_hash: String,
    /// The sealed token, base64.
    pub token_sealed: String,
    /// The account.
    pub account: PortalAccount,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub expires_at: i64,
    /// When it was used (Unix seconds).
    pub used_at: Option<i64>,
    /// Whether it is the account's newest link (older ones stop working).
    pub newest: bool,
}

/// What a set-password link is worth now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// It can set a password.
    Usable,
    /// It was used (or replaced by a newer link).
    Used,
    /// More than 7 days old.
    Expired,
    /// No such link.
    Unknown,
}

impl LinkState {
    /// The state at `now` of a link that expires at `expires_at`, was used
    /// at `used_at` and is or is not its account's newest: the one rule of
    /// both portals' links.
    #[must_use]
    pub const fn at(now: i64, expires_at: i64, used_at: Option<i64>, newest: bool) -> Self {
        if used_at.is_some() || !newest {
            Self::Used
        } else if now >= expires_at {
            Self::Expired
        } else {
            Self::Usable
        }
    }
}

/// A set-password link being used, as both portals' stores apply it: the
/// link, the new password and the visitor's session the signed-in one
/// replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkUse {
    /// [`digest`] of the link's token.
    pub token_hash: String,
    /// The new password's PHC string.
    pub password_hash: String,
    /// [`digest`] of the visitor's session id, ended with the others.
    pub replaces: Option<String>,
}

impl StoredLink {
    /// The link's state at `now`.
    #[must_use]
    pub const fn state(&self, now: i64) -> LinkState {
        LinkState::at(now, self.expires_at, self.used_at, self.newest)
    }
}

/// A new session row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// [`digest`] of the session id in the cookie.
    pub id_hash: String,
    /// The signed-in account; `None` for a visitor not signed in.
    pub enrollment_id: Option<EnrollmentId>,
    /// The CSRF token of its forms.
    pub csrf: String,
    /// Unix seconds.
    pub created_at: i64,
}

/// A stored session, with its account when signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// [`digest`] of the session id.
    pub id_hash: String,
    /// The signed-in account.
    pub account: Option<PortalAccount>,
    /// The CSRF token of its forms.
    pub csrf: String,
    /// Unix seconds.
    pub created_at: i64,
    /// The last request, Unix seconds.
    pub seen_at: i64,
}

/// Whether a session started at `created_at` and last seen at `seen_at`
/// still works at `now` (30 minutes idle, 12 hours in all): the one rule
/// of both portals' sessions.
#[must_use]
pub const fn session_live(created_at: i64, seen_at: i64, now: i64) -> bool {
    now.saturating_sub(seen_at) < SESSION_IDLE_SECS
        && now.saturating_sub(created_at) < SESSION_MAX_SECS
}

impl StoredSession {
    /// Whether the session still works at `now` (30 minutes idle, 12 hours
    /// in all).
    #[must_use]
    pub const fn live(&self, now: i64) -> bool {
        session_live(self.created_at, self.seen_at, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_follow_the_policy() {
        let email = "cfo@acme-mfg.com";
        assert!(password_errors("correct horse battery", email).is_empty());
        assert_eq!(
            password_errors("short", email)[0].message,
            "must be 12 to 128 characters"
        );
        assert_eq!(password_errors(&"x".repeat(129), email).len(), 1);
        assert_eq!(
            password_errors("CFO@acme-mfg.com", "cfo@acme-mfg.com")[0].message,
            "must not be your email address"
        );
        assert!(!password_errors("password1234", email).is_empty());
        assert!(!password_errors("PASSWORD1234", email).is_empty());
        assert!(!password_errors("zzzzzzzzzzzzzz", email).is_empty());
        assert_eq!(password_errors("short", email)[0].field, "password");
    }

    #[test]
    fn five_failures_in_fifteen_minutes_lock_for_fifteen_minutes() {
        let mut l = Lockout::default();
        for t in 0..4 {
            assert!(!l.fail(1000 + t * 60));
        }
        assert!(!l.locked(1300));
        assert!(l.fail(1000 + 4 * 60));
        assert!(l.locked(1240 + LOCK_SECS - 1));
        assert!(!l.locked(1240 + LOCK_SECS));
        // Failures spread over more than the window never lock.
        let mut l = Lockout::default();
        for t in 0..10 {
            assert!(!l.fail(t * 301));
        }
        let stored = Lockout::from_stored(&l.failures_stored(), l.locked_until);
        assert_eq!(stored, l);
    }

    #[test]
    fn a_failure_while_locked_changes_nothing() {
        let mut locked = Lockout::default();
        for t in 0..5 {
            locked.fail(1000 + t);
        }
        assert_eq!(locked.after_failure(1010), None);
        let (next, locks) = Lockout::default().after_failure(1000).unwrap();
        assert_eq!((next.failures, locks), (vec![1000], false));
        let (next, locks) = Lockout {
            failures: vec![1000, 1001, 1002, 1003],
            locked_until: None,
        }
        .after_failure(1004)
        .unwrap();
        assert_eq!((next.locked_until, locks), (Some(1004 + LOCK_SECS), true));
    }

    #[test]
    fn a_link_is_usable_once_within_seven_days_and_only_the_newest() {
        let account = PortalAccount {
            enrollment_id: EnrollmentId::parse("enr_0123456789ab").unwrap(),
            group_id: GroupId::parse("grp_0123456789ab").unwrap(),
            scope: Scope::new(
                crate::ids::PartnerId::parse("prt_0123456789ab").unwrap(),
                crate::mode::Mode::Test,
            ),
            email: "a@b.co".into(),
            password_hash: None,
            lockout: Lockout::default(),
        };
        let mut link = StoredLink {
            token_hash: digest("t"),
            token_sealed: String::new(),
            account,
            created_at: 0,
            expires_at: LINK_TTL_SECS,
            used_at: None,
            newest: true,
        };
        assert_eq!(link.state(LINK_TTL_SECS - 1), LinkState::Usable);
        assert_eq!(link.state(LINK_TTL_SECS), LinkState::Expired);
        link.newest = false;
        assert_eq!(link.state(0), LinkState::Used);
        link.newest = true;
        link.used_at = Some(5);
        assert_eq!(link.state(6), LinkState::Used);
    }

    #[test]
    fn sessions_end_idle_after_30_minutes_and_after_12_hours() {
        let s = StoredSession {
            id_hash: digest("s"),
            account: None,
            csrf: "c".into(),
            created_at: 0,
            seen_at: 0,
        };
        assert!(s.live(SESSION_IDLE_SECS - 1));
        assert!(!s.live(SESSION_IDLE_SECS));
        let s = StoredSession {
            seen_at: SESSION_MAX_SECS - 10,
            ..s
        };
        assert!(!s.live(SESSION_MAX_SECS));
    }
}
