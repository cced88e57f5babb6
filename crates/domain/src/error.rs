//! Domain errors, in the specification's vocabulary.

/// One failing field, in the specification's `details` shape (shared with
/// the pricing engine). `field` is a snake_case path; adapters re-case it
/// for camelCase callers.
pub use pricing_core::error::FieldError;

/// Why a domain rule refused an operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// Input broke validation rules.
    #[error("invalid request: {} field(s) failed", .0.len())]
    Invalid(Vec<FieldError>),
    /// A state transition that the state machine does not allow.
    #[error("cannot move from {from} to {to}")]
    Transition {
        /// Current state.
        from: &'static str,
        /// Requested state.
        to: &'static str,
    },
}

/// The stable machine-readable codes of the error envelope's `error` field
/// (specification, Errors): the one place their strings are written. The
/// HTTP adapter gives each its status; the operator CLI prints the same
/// strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// Validation failed (also the framework's 405, 408 and 413).
    InvalidRequest,
    /// A missing, malformed or revoked API key.
    Unauthorized,
    /// A live key before live mode is enabled.
    LiveModeDisabled,
    /// The key may not access the resource or lacks the capability.
    Forbidden,
    /// No such resource in this mode.
    NotFound,
    /// The wanted thing already exists, or the state does not allow it.
    Conflict,
    /// The census-triggered market comparison is still running.
    RatesPending,
    /// The quote passed its `expiresAt` or was priced on an earlier census.
    QuoteExpired,
    /// A quote asked for with no quotable census.
    CensusRequired,
    /// No rate-card market covers the census.
    MarketUnavailable,
    /// The offer iframe: an address outside the group's domain.
    EmailNotAllowed,
    /// The offer iframe: a wrong or expired code.
    VerificationFailed,
    /// The offer iframe: the embed session expired (an added code, used
    /// only there).
    SessionExpired,
    /// An amount the pricing derives does not fit.
    AmountOutOfRange,
    /// A rate limit was exceeded.
    RateLimited,
    /// A failure on the service side; nothing was applied.
    ServerError,
    /// The backing store is unavailable (fail closed).
    NotConfigured,
}

impl Code {
    /// Every code, in the specification's order.
    pub const ALL: [Self; 17] = [
        Self::InvalidRequest,
        Self::Unauthorized,
        Self::LiveModeDisabled,
        Self::Forbidden,
        Self::NotFound,
        Self::Conflict,
        Self::RatesPending,
        Self::QuoteExpired,
        Self::CensusRequired,
        Self::MarketUnavailable,
        Self::EmailNotAllowed,
        Self::VerificationFailed,
        Self::SessionExpired,
        Self::AmountOutOfRange,
        Self::RateLimited,
        Self::ServerError,
        Self::NotConfigured,
    ];

    /// The wire string.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::Unauthorized => "unauthorized",
            Self::LiveModeDisabled => "live_mode_disabled",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::RatesPending => "rates_pending",
            Self::QuoteExpired => "quote_expired",
            Self::CensusRequired => "census_required",
            Self::MarketUnavailable => "market_unavailable",
            Self::EmailNotAllowed => "email_not_allowed",
            Self::VerificationFailed => "verification_failed",
            Self::SessionExpired => "session_expired",
            Self::AmountOutOfRange => "amount_out_of_range",
            Self::RateLimited => "rate_limited",
            Self::ServerError => "server_error",
            Self::NotConfigured => "not_configured",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::Code;

    #[test]
    fn every_code_has_its_own_snake_case_string() {
        let strings: HashSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(strings.len(), Code::ALL.len());
        for s in strings {
            assert!(s.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{s}");
        }
        assert_eq!(Code::RatesPending.to_string(), "rates_pending");
    }

    #[test]
    fn all_lists_every_code() {
        // A new variant breaks this match until it is listed here and in ALL.
        let position = |c: Code| match c {
            Code::InvalidRequest => 0,
            Code::Unauthorized => 1,
            Code::LiveModeDisabled => 2,
            Code::Forbidden => 3,
            Code::NotFound => 4,
            Code::Conflict => 5,
            Code::RatesPending => 6,
            Code::QuoteExpired => 7,
            Code::CensusRequired => 8,
            Code::MarketUnavailable => 9,
            Code::EmailNotAllowed => 10,
            Code::VerificationFailed => 11,
            Code::SessionExpired => 12,
            Code::AmountOutOfRange => 13,
            Code::RateLimited => 14,
            Code::ServerError => 15,
            Code::NotConfigured => 16,
        };
        for (i, c) in Code::ALL.into_iter().enumerate() {
            assert_eq!(position(c), i, "{c}");
        }
    }
}
