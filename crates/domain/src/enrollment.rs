//! Enrollments: one per group, made from a ready, unexpired, current quote.

use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::ids::{EnrollmentId, GroupId, QuoteId};
use crate::quote::QuoteStatus;
use crate::scope::Scope;

/// How the employer onboards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnboardingMode {
    /// In the service's employer portal (the signatory is provisioned).
    #[default]
    Hosted,
    /// Inside the partner's product.
    Embedded,
}

/// Why a quote cannot back an enrollment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuoteUse {
    /// `in_review`: 409 `conflict`.
    #[error("the quote is in review; it must be finalized first")]
    InReview,
    /// Past `expiresAt`: 410 `quote_expired`.
    #[error("the quote has expired; create a new quote and retry")]
    Expired,
    /// The census changed its rating inputs since: 410 `quote_expired`.
    #[error("the census changed since this quote; re-quote")]
    Stale,
    /// `unavailable` or still `pricing`: 409 `conflict`.
    #[error("the quote has no price to enroll on")]
    NotPriced,
}

/// Checks that a quote may be used now: `ready`, not past `expires_at`, and
/// priced on the group's current census (`quote_digest` equals the group's).
///
/// # Errors
/// The [`QuoteUse`] that refuses it.
pub fn check_quote_use(
    status: QuoteStatus,
    expires_at: i64,
    quote_digest: Option<&str>,
    group_digest: Option<&str>,
    now: i64,
) -> Result<(), QuoteUse> {
    if now >= expires_at {
        return Err(QuoteUse::Expired);
    }
    if quote_digest != group_digest {
        return Err(QuoteUse::Stale);
    }
    match status {
        QuoteStatus::Ready => Ok(()),
        QuoteStatus::InReview => Err(QuoteUse::InReview),
        QuoteStatus::Unavailable | QuoteStatus::Pricing => Err(QuoteUse::NotPriced),
    }
}

/// A stored enrollment: its row and its typed document.
#[derive(Debug, Clone, PartialEq)]
pub struct Enrollment {
    /// `enr_` id.
    pub id: EnrollmentId,
    /// Partner and mode.
    pub scope: Scope,
    /// Group (one enrollment per group).
    pub group_id: GroupId,
    /// Quote it was made from.
    pub quote_id: QuoteId,
    /// Onboarding mode.
    pub onboarding_mode: OnboardingMode,
    /// The enrollment's figures.
    pub body: crate::document::EnrollmentDocument,
    /// The onboarding checklist.
    pub onboarding: crate::onboarding::Checklist,
    /// Counts the checklist's stored changes; a change made on an older
    /// revision is refused and made again.
    pub onboarding_revision: i64,
    /// Creation time, Unix seconds.
    pub created_at: i64,
}

/// Rejects a second enrollment for a group.
///
/// # Errors
/// [`DomainError::Transition`] when the group already has one.
pub fn check_single(existing: Option<&EnrollmentId>) -> Result<(), DomainError> {
    match existing {
        Some(_) => Err(DomainError::Transition {
            from: "enrolled",
            to: "enrolled",
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quote_backs_an_enrollment_only_when_ready_current_and_unexpired() {
        let ok = check_quote_use(QuoteStatus::Ready, 100, Some("d"), Some("d"), 99);
        assert_eq!(ok, Ok(()));
        let cases = [
            (
                QuoteStatus::Ready,
                100,
                Some("d"),
                Some("d"),
                100,
                QuoteUse::Expired,
            ),
            (
                QuoteStatus::Ready,
                100,
                Some("d"),
                Some("e"),
                50,
                QuoteUse::Stale,
            ),
            (
                QuoteStatus::InReview,
                100,
                Some("d"),
                Some("d"),
                50,
                QuoteUse::InReview,
            ),
            (
                QuoteStatus::Unavailable,
                100,
                Some("d"),
                Some("d"),
                50,
                QuoteUse::NotPriced,
            ),
        ];
        for (status, exp, q, g, now, want) in cases {
            assert_eq!(check_quote_use(status, exp, q, g, now), Err(want));
        }
        assert!(check_single(Some(&EnrollmentId::from_bytes([1; 6]))).is_err());
        assert!(check_single(None).is_ok());
        assert_eq!(OnboardingMode::default(), OnboardingMode::Hosted);
    }
}
