//! Embed sessions (onboarding §5): an opaque random token in the URL of
//! the offer page (only its SHA-256 is stored; it reveals no id), and the
//! session's state on the server — the employer's email, the pending
//! code, the code sends of the last hour, the verification and the
//! acceptance — since the framed page uses no cookies.

use serde::{Deserialize, Serialize};

use crate::ids::{EmbedSessionId, GroupId, QuoteId};
use crate::scope::Scope;

/// Default lifetime of an embed session, in minutes (`embed.session_minutes`).
pub const DEFAULT_SESSION_MINUTES: f64 = 30.0;
/// How long a code is valid, in seconds.
pub const CODE_LIFETIME_SECS: i64 = 10 * 60;
/// Wrong codes after which the verification is void.
pub const MAX_CODE_ATTEMPTS: u32 = 5;
/// Code sends per session per hour.
pub const MAX_CODE_SENDS_PER_HOUR: usize = 5;
/// The code of every test-mode session (no email is sent).
pub const TEST_CODE: &str = "424242";

/// An embed session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedSession {
    /// `emb_` id.
    pub id: EmbedSessionId,
    /// Partner and mode.
    pub scope: Scope,
    /// Group.
    pub group_id: GroupId,
    /// Quote shown.
    pub quote_id: QuoteId,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Expiry, Unix seconds.
    pub expires_at: i64,
}

impl EmbedSession {
    /// Whether the page still serves (afterwards it answers 410).
    #[must_use]
    pub fn is_live(&self, now: i64) -> bool {
        now < self.expires_at
    }
}

/// A code sent to the employer, kept as a keyed digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCode {
    /// The address it went to.
    pub email: String,
    /// The code's keyed digest (hex).
    pub digest: String,
    /// When it stops working, Unix seconds.
    pub expires_at: i64,
    /// Wrong codes entered so far.
    pub wrong: u32,
}

/// Who accepted the offer (`quote.acceptance`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acceptance {
    /// The name typed.
    pub name: String,
    /// The verified address.
    pub email: String,
    /// When, Unix seconds.
    pub accepted_at: i64,
}

/// The stored state of a session (a typed document, snake_case).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedState {
    /// The code waiting for verification.
    #[serde(default)]
    pub code: Option<PendingCode>,
    /// When codes were sent within the last hour, Unix seconds.
    #[serde(default)]
    pub sends: Vec<i64>,
    /// The verified address.
    #[serde(default)]
    pub verified_email: Option<String>,
    /// The acceptance made in this session.
    #[serde(default)]
    pub accepted: Option<Acceptance>,
}

/// A stored session: the session, its token's digest, its state and the
/// version a change must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEmbed {
    /// The session.
    pub session: EmbedSession,
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    /// The state.
    pub state: EmbedState,
    /// Bumped by every change.
    pub version: i64,
}

impl EmbedState {
    /// Records a code sent at `now` to `email`, replacing any pending
    /// one; `Err(retry_after_secs)` when five were sent within the hour.
    ///
    /// # Errors
    /// The seconds until the oldest of the hour's sends leaves the window.
    pub fn send_code(&mut self, email: &str, digest: String, now: i64) -> Result<(), i64> {
        self.sends.retain(|at| now.saturating_sub(*at) < 3600);
        if self.sends.len() >= MAX_CODE_SENDS_PER_HOUR {
            let oldest = self.sends.iter().min().copied().unwrap_or(now);
            return Err(oldest.saturating_add(3600).saturating_sub(now).max(1));
        }
        self.sends.push(now);
        self.code = Some(PendingCode {
            email: email.to_owned(),
            digest,
            expires_at: now.saturating_add(CODE_LIFETIME_SECS),
            wrong: 0,
        });
        Ok(())
    }

    /// Checks a code by its digest at `now`: verifies the address, or
    /// counts a wrong code (void after five; an expired code is void too).
    pub fn check_code(&mut self, digest: &str, now: i64) -> CodeCheck {
        let Some(code) = self.code.as_mut() else {
            return CodeCheck::Void;
        };
        if code.expires_at <= now {
            self.code = None;
            return CodeCheck::Expired;
        }
        if same(code.digest.as_bytes(), digest.as_bytes()) {
            self.verified_email = Some(code.email.clone());
            self.code = None;
            return CodeCheck::Verified;
        }
        code.wrong = code.wrong.saturating_add(1);
        let remaining = MAX_CODE_ATTEMPTS.saturating_sub(code.wrong);
        if remaining == 0 {
            self.code = None;
        }
        CodeCheck::Wrong { remaining }
    }
}

/// Equal bytes, compared in time independent of where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What a code check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeCheck {
    /// The address is verified.
    Verified,
    /// A wrong code; `remaining` attempts left (0: void, email again).
    Wrong {
        /// Attempts left.
        remaining: u32,
    },
    /// The code is past its 10 minutes: email again.
    Expired,
    /// No code waits (none sent, or void after five wrong ones).
    Void,
}

/// `j•••@acme.com`: the first character of the local part, then dots.
#[must_use]
pub fn mask_email(email: &str) -> String {
    match email.split_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}\u{2022}\u{2022}\u{2022}@{domain}")
        }
        None => "\u{2022}\u{2022}\u{2022}".to_owned(),
    }
}

/// Whether `email`'s domain is `domain` or one of its subdomains
/// (case-insensitive).
#[must_use]
pub fn email_in_domain(email: &str, domain: &str) -> bool {
    let Some((local, host)) = email.trim().rsplit_once('@') else {
        return false;
    };
    let (host, domain) = (host.to_ascii_lowercase(), domain.to_ascii_lowercase());
    !local.is_empty()
        && (host == domain
            || host
                .strip_suffix(&domain)
                .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')))
}

/// The `frame-ancestors` sources of a partner's offer pages: its embed
/// origins; with none set, any origin in test mode and none in live mode.
#[must_use]
pub fn frame_ancestors(origins: &[String], mode: crate::mode::Mode) -> String {
    if origins.is_empty() {
        return match mode {
            crate::mode::Mode::Test => "*".to_owned(),
            crate::mode::Mode::Live => "'none'".to_owned(),
        };
    }
    origins.join(" ")
}

/// An origin as a partner's embed origins keep it: `https://host[:port]`
/// (or `http://`), lowercase, without a path.
///
/// # Errors
/// What is wrong with `text`.
pub fn parse_origin(text: &str) -> Result<String, &'static str> {
    let t = text.trim().trim_end_matches('/').to_ascii_lowercase();
    let rest = t
        .strip_prefix("https://")
        .or_else(|| t.strip_prefix("http://"))
        .ok_or("must start with https:// or http://")?;
    if rest.is_empty() {
        return Err("must name a host");
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || p.is_empty() => (h, Some(p)),
        _ => (rest, None),
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|n| n > 0));
    if !host_ok || !port_ok {
        return Err("must be an origin: scheme, host and optional port, no path");
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode::Mode;

    #[test]
    fn five_sends_an_hour_then_the_wait() {
        let mut s = EmbedState::default();
        for i in 0..5 {
            s.send_code("a@b.co", "d".into(), 1_000 + i).unwrap();
        }
        assert_eq!(s.send_code("a@b.co", "d".into(), 1_100), Err(3_500));
        assert!(s.send_code("a@b.co", "d".into(), 4_600).is_ok());
    }

    #[test]
    fn five_wrong_codes_void_the_verification() {
        let mut s = EmbedState::default();
        s.send_code("ana@acme.com", "right".into(), 0).unwrap();
        for remaining in (1..5).rev() {
            assert_eq!(s.check_code("wrong", 1), CodeCheck::Wrong { remaining });
        }
        assert_eq!(s.check_code("wrong", 1), CodeCheck::Wrong { remaining: 0 });
        assert_eq!(s.check_code("right", 1), CodeCheck::Void);
        s.send_code("ana@acme.com", "right".into(), 2).unwrap();
        assert_eq!(
            s.check_code("right", 2 + CODE_LIFETIME_SECS),
            CodeCheck::Expired
        );
        s.send_code("ana@acme.com", "right".into(), 3).unwrap();
        assert_eq!(s.check_code("right", 4), CodeCheck::Verified);
        assert_eq!(s.verified_email.as_deref(), Some("ana@acme.com"));
    }

    #[test]
    fn addresses_of_the_domain_and_its_subdomains_only() {
        for ok in ["j@acme.com", "J@ACME.com", "j@hr.acme.com"] {
            assert!(email_in_domain(ok, "acme.com"), "{ok}");
        }
        for bad in [
            "j@notacme.com",
            "j@acme.com.evil.io",
            "@acme.com",
            "acme.com",
            "j@com",
        ] {
            assert!(!email_in_domain(bad, "acme.com"), "{bad}");
        }
        assert_eq!(
            mask_email("jane@acme.com"),
            "j\u{2022}\u{2022}\u{2022}@acme.com"
        );
    }

    #[test]
    fn origins_and_frame_ancestors() {
        assert_eq!(
            parse_origin("https://App.Example.com/"),
            Ok("https://app.example.com".into())
        );
        assert_eq!(
            parse_origin("http://127.0.0.1:8081"),
            Ok("http://127.0.0.1:8081".into())
        );
        for bad in [
            "app.example.com",
            "https://",
            "https://a.com/path",
            "ftp://a.com",
            "https://a.com:0",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
        assert_eq!(frame_ancestors(&[], Mode::Test), "*");
        assert_eq!(frame_ancestors(&[], Mode::Live), "'none'");
        let two = ["https://a.com".to_owned(), "https://b.com".to_owned()];
        assert_eq!(
            frame_ancestors(&two, Mode::Live),
            "https://a.com https://b.com"
        );
    }
}
