//! The partner portal's users (partner-portal §1): their roles, their
//! set-password links, TOTP two-factor with recovery codes, their
//! sessions (with the mode the pages show) and the audit log.
//!
//! Passwords, links, lockout and session clocks follow the employer
//! portal's rules in [`crate::portal`] — one implementation for both
//! portals; this module adds what only partner users have.

mod totp;

use serde::{Deserialize, Serialize};

use crate::ids::{PartnerId, UserId};
use crate::mode::Mode;
use crate::portal::{LinkState, Lockout, session_live};

pub use totp::{RECOVERY_CODES, Totp, recovery_code_digest};

/// How long an audit entry is kept, in seconds (1 year).
pub const AUDIT_KEPT_SECS: i64 = 365 * 24 * 3600;

/// What a partner user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads everything, acts (with two-factor for the sensitive acts).
    Admin,
    /// Reads everything except secrets; never acts.
    Viewer,
}

impl Role {
    /// The stored and printed name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Viewer => "viewer",
        }
    }

    /// Parses a stored or typed name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "admin" => Some(Self::Admin),
            "viewer" => Some(Self::Viewer),
            _ => None,
        }
    }
}

/// A partner portal user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartnerUser {
    /// `usr_` id.
    pub id: UserId,
    /// The partner it belongs to.
    pub partner: PartnerId,
    /// Its address, normalized (unique among the partner's users).
    pub email: String,
    /// Its role.
    pub role: Role,
    /// The Argon2id PHC string, once a password is set.
    pub password_hash: Option<String>,
    /// Failed sign-ins and lock.
    pub lockout: Lockout,
    /// The TOTP secret, sealed (base64), once enrolled.
    pub totp_sealed: Option<String>,
    /// The last time step a code was accepted at (a code works once).
    pub totp_last_step: Option<i64>,
    /// Unix seconds.
    pub created_at: i64,
}

impl PartnerUser {
    /// Whether a TOTP authenticator is enrolled.
    #[must_use]
    pub const fn two_factor(&self) -> bool {
        self.totp_sealed.is_some()
    }

    /// Whether the user may act (not only read).
    #[must_use]
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
}

/// A new user with its first set-password link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUser {
    /// `usr_` id.
    pub id: UserId,
    /// The partner.
    pub partner: PartnerId,
    /// Normalized address.
    pub email: String,
    /// Role.
    pub role: Role,
    /// Unix seconds.
    pub created_at: i64,
}

/// A set-password link of a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserLink {
    /// [`crate::portal::digest`] of the token.
    pub token_hash: String,
    /// The user.
    pub user: UserId,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub expires_at: i64,
}

/// A stored set-password link with its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredUserLink {
    /// The user.
    pub user: PartnerUser,
    /// Unix seconds.
    pub expires_at: i64,
    /// When it was used.
    pub used_at: Option<i64>,
    /// Whether it is the user's newest link.
    pub newest: bool,
}

impl StoredUserLink {
    /// The link's state at `now` (the employer portal's rule).
    #[must_use]
    pub const fn state(&self, now: i64) -> LinkState {
        LinkState::at(now, self.expires_at, self.used_at, self.newest)
    }
}

/// An authenticator being enrolled, as the store keeps it: its secret,
/// the step of the code that confirmed it and the recovery codes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TotpEnrolment {
    /// The TOTP secret, sealed to the user, base64.
    pub sealed: String,
    /// The step of the confirming code (accepted, so not accepted again).
    pub step: i64,
    /// The digests of the recovery codes ([`recovery_code_digest`]).
    pub recovery_digests: Vec<String>,
}

/// A new partner portal session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUserSession {
    /// Digest of the session id in the cookie.
    pub id_hash: String,
    /// The signed-in user (`None`: a visitor).
    pub user: Option<UserId>,
    /// The user still owes a TOTP or recovery code.
    pub second_factor_pending: bool,
    /// CSRF token of its forms.
    pub csrf: String,
    /// The mode the pages show.
    pub mode: Mode,
    /// Unix seconds.
    pub created_at: i64,
}

/// A stored partner portal session with its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSession {
    /// Digest of the session id.
    pub id_hash: String,
    /// The user, when signed in (perhaps still owing the second factor).
    pub user: Option<PartnerUser>,
    /// The user still owes a TOTP or recovery code.
    pub second_factor_pending: bool,
    /// CSRF token.
    pub csrf: String,
    /// The mode the pages show.
    pub mode: Mode,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub seen_at: i64,
}

impl UserSession {
    /// Whether it still works at `now` (the employer portal's clocks).
    #[must_use]
    pub const fn live(&self, now: i64) -> bool {
        session_live(self.created_at, self.seen_at, now)
    }
}

/// What an audit entry records (partner-portal §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    /// Signed in (password and, when enrolled, the second factor).
    SignIn,
    /// A failed sign-in (wrong password or code).
    SignInFailed,
    /// Signed in with a recovery code (one fewer left).
    RecoveryCodeUsed,
    /// Set a password from a link.
    PasswordSet,
    /// Enrolled a TOTP authenticator.
    TwoFactorEnrolled,
    /// A live key was minted.
    KeyMinted,
    /// The sandbox key was shown again.
    KeyShown,
    /// A key was revoked.
    KeyRevoked,
    /// The webhook secret was rotated.
    SecretRotated,
    /// The webhook endpoint was registered, changed or re-enabled.
    EndpointChanged,
    /// The webhook endpoint was removed.
    EndpointRemoved,
    /// A test ping was sent.
    PingSent,
    /// An event was resent.
    EventResent,
    /// A window of events was replayed.
    Replay,
    /// A user was added.
    UserAdded,
    /// A user was removed.
    UserRemoved,
    /// The embed origins were changed.
    EmbedOriginsChanged,
}

impl AuditAction {
    /// Every action, in declaration order.
    pub const ALL: [Self; 17] = [
        Self::SignIn,
        Self::SignInFailed,
        Self::RecoveryCodeUsed,
        Self::PasswordSet,
        Self::TwoFactorEnrolled,
        Self::KeyMinted,
        Self::KeyShown,
        Self::KeyRevoked,
        Self::SecretRotated,
        Self::EndpointChanged,
        Self::EndpointRemoved,
        Self::PingSent,
        Self::EventResent,
        Self::Replay,
        Self::UserAdded,
        Self::UserRemoved,
        Self::EmbedOriginsChanged,
    ];

    /// The stored name (snake_case).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SignIn => "sign_in",
            Self::SignInFailed => "sign_in_failed",
            Self::RecoveryCodeUsed => "recovery_code_used",
            Self::PasswordSet => "password_set",
            Self::TwoFactorEnrolled => "two_factor_enrolled",
            Self::KeyMinted => "key_minted",
            Self::KeyShown => "key_shown",
            Self::KeyRevoked => "key_revoked",
            Self::SecretRotated => "secret_rotated",
            Self::EndpointChanged => "endpoint_changed",
            Self::EndpointRemoved => "endpoint_removed",
            Self::PingSent => "ping_sent",
            Self::EventResent => "event_resent",
            Self::Replay => "replay",
            Self::UserAdded => "user_added",
            Self::UserRemoved => "user_removed",
            Self::EmbedOriginsChanged => "embed_origins_changed",
        }
    }

    /// Parses a stored name.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == text)
    }
}

/// One audit entry: `{ at, user, ip, action, target }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// The partner whose log it is.
    pub partner: PartnerId,
    /// Unix milliseconds.
    pub at_ms: i64,
    /// The acting user's address (a failed sign-in: the address typed).
    pub user: String,
    /// The request's source address.
    pub ip: Option<String>,
    /// What happened.
    pub action: AuditAction,
    /// What it happened to (a key id, a URL, an event id, a mode…).
    pub target: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_and_actions_round_trip_their_names() {
        for role in [Role::Admin, Role::Viewer] {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("owner"), None);
        for action in AuditAction::ALL {
            assert_eq!(AuditAction::parse(action.as_str()), Some(action));
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(json, format!("\"{}\"", action.as_str()));
        }
    }

    #[test]
    fn links_and_sessions_follow_the_employer_portals_rules() {
        let user = PartnerUser {
            id: UserId::parse("usr_0123456789ab").unwrap(),
            partner: PartnerId::parse("prt_0123456789ab").unwrap(),
            email: "dev@broker.example".into(),
            role: Role::Viewer,
            password_hash: None,
            lockout: Lockout::default(),
            totp_sealed: None,
            totp_last_step: None,
            created_at: 0,
        };
        assert!(!user.is_admin() && !user.two_factor());
        let link = StoredUserLink {
            user: user.clone(),
            expires_at: 100,
            used_at: None,
            newest: true,
        };
        assert_eq!(link.state(99), LinkState::Usable);
        assert_eq!(link.state(100), LinkState::Expired);
        let session = UserSession {
            id_hash: String::new(),
            user: Some(user),
            second_factor_pending: false,
            csrf: String::new(),
            mode: Mode::Test,
            created_at: 0,
            seen_at: 0,
        };
        assert!(session.live(crate::portal::SESSION_IDLE_SECS - 1));
        assert!(!session.live(crate::portal::SESSION_IDLE_SECS));
    }
}
