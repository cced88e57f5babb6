//! Embed sessions: a signed, expiring (30 minutes) URL to the offer page.

use crate::ids::{EmbedSessionId, GroupId, QuoteId};
use crate::scope::Scope;

/// Lifetime of an embed session, in seconds.
pub const EMBED_LIFETIME_SECS: i64 = 30 * 60;

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
    /// Expiry, Unix seconds (creation + 30 minutes).
    pub expires_at: i64,
}

impl EmbedSession {
    /// A session created at `now`.
    #[must_use]
    pub fn new(
        id: EmbedSessionId,
        scope: Scope,
        group_id: GroupId,
        quote_id: QuoteId,
        now: i64,
    ) -> Self {
        Self {
            id,
            scope,
            group_id,
            quote_id,
            created_at: now,
            expires_at: now.saturating_add(EMBED_LIFETIME_SECS),
        }
    }

    /// Whether the page still serves (afterwards it answers 410).
    #[must_use]
    pub fn is_live(&self, now: i64) -> bool {
        now < self.expires_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PartnerId;
    use crate::mode::Mode;

    #[test]
    fn sessions_last_thirty_minutes() {
        let s = EmbedSession::new(
            EmbedSessionId::from_bytes([1; 6]),
            Scope::new(PartnerId::from_bytes([2; 6]), Mode::Test),
            GroupId::from_bytes([3; 6]),
            QuoteId::from_bytes([4; 6]),
            1_000,
        );
        assert!(s.is_live(1_000 + 1_799));
        assert!(!s.is_live(1_000 + 1_800));
    }
}
