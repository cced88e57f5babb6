//! Rate-limit policies and fixed-window arithmetic (specification, Limits;
//! contract section 5).
//!
//! Each policy counts hits in fixed windows aligned to the epoch. A check is
//! one atomic increment of the `(bucket, window)` counter that refuses to go
//! past the limit; the storage adapter makes that one upsert on PostgreSQL
//! (so the limit holds across processes) and an in-process map on SQLite.

/// A limit: `limit` hits per `window_secs`, named for the `RateLimit` fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Policy name in `RateLimit-Policy` (`requests`, `census_writes`, …).
    pub name: &'static str,
    /// Hits allowed per window.
    pub limit: u32,
    /// Window length in seconds.
    pub window_secs: i64,
}

impl Policy {
    /// All requests, per key (default 120 per minute).
    #[must_use]
    pub fn requests(limit: u32) -> Self {
        Self {
            name: "requests",
            limit,
            window_secs: 60,
        }
    }

    /// Census writes, member writes and elections, per key (default 20 per minute).
    #[must_use]
    pub fn census_writes(limit: u32) -> Self {
        Self {
            name: "census_writes",
            limit,
            window_secs: 60,
        }
    }

    /// Quote creates and price-on-plan, per key (default 60 per hour).
    #[must_use]
    pub fn quote_creates(limit: u32) -> Self {
        Self {
            name: "quote_creates",
            limit,
            window_secs: 3600,
        }
    }

    /// Failed authentication, per source IP (default 30 per minute).
    #[must_use]
    pub fn failed_auth(limit: u32) -> Self {
        Self {
            name: "failed_auth",
            limit,
            window_secs: 60,
        }
    }

    /// Start of the window holding `now` (Unix seconds).
    #[must_use]
    pub fn window_start(&self, now: i64) -> i64 {
        let w = self.window_secs.max(1);
        now.div_euclid(w).saturating_mul(w)
    }

    /// Seconds until the window holding `now` ends (at least 1).
    #[must_use]
    pub fn reset_after(&self, now: i64) -> i64 {
        (self
            .window_start(now)
            .saturating_add(self.window_secs.max(1))
            - now)
            .max(1)
    }

    /// The decision for a window whose counter reached `count` (the value
    /// after this hit was counted, or `None` when the counter was already at
    /// the limit and refused to move).
    #[must_use]
    pub fn decide(&self, count: Option<u32>, now: i64) -> Decision {
        let reset = self.reset_after(now);
        match count {
            Some(c) if c <= self.limit => Decision {
                allowed: true,
                remaining: self.limit - c,
                reset_secs: reset,
            },
            _ => Decision {
                allowed: false,
                remaining: 0,
                reset_secs: reset,
            },
        }
    }

    /// The counter bucket for `subject` (a key id or a source IP).
    #[must_use]
    pub fn bucket(&self, subject: &str) -> String {
        [self.name, ":", subject].concat()
    }
}

/// One limit's answer for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// Hits left in the window.
    pub remaining: u32,
    /// Seconds until the window frees; the `Retry-After` of a 429.
    pub reset_secs: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_fixed_and_aligned() {
        let p = Policy::requests(120);
        assert_eq!(p.window_start(1_795_000_030), 1_795_000_020);
        assert_eq!(p.reset_after(1_795_000_030), 50);
        assert_eq!(p.reset_after(1_795_000_079), 1);
        let h = Policy::quote_creates(60);
        assert_eq!(h.window_start(7_199), 3_600);
        assert_eq!(
            h.bucket("key_0123456789ab"),
            "quote_creates:key_0123456789ab"
        );
    }

    #[test]
    fn decisions_count_down_and_refuse_past_the_limit() {
        let p = Policy::census_writes(20);
        let d = p.decide(Some(1), 60);
        assert!(d.allowed && d.remaining == 19 && d.reset_secs == 60);
        let d = p.decide(Some(20), 119);
        assert!(d.allowed && d.remaining == 0 && d.reset_secs == 1);
        let d = p.decide(None, 90);
        assert!(!d.allowed && d.remaining == 0 && d.reset_secs == 30);
        assert!(!p.decide(Some(21), 90).allowed);
    }
}
