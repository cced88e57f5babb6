//! Quote status and its transitions (specification, States and
//! transitions): an `in_review` quote is finalized by underwriting; a
//! price-on-plan quote leaves `pricing` for `ready` or `unavailable`.

use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::ids::{GroupId, QuoteId};
use crate::scope::Scope;

/// Quote status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuoteStatus {
    /// Usable for an enrollment.
    Ready,
    /// Above the in-review threshold; underwriting finalizes it.
    InReview,
    /// Price-on-plan: nothing could be built on the plan.
    Unavailable,
    /// Price-on-plan: still pricing.
    Pricing,
}

impl From<pricing_core::quote::ReviewStatus> for QuoteStatus {
    /// The status of a market-rate quote the engine priced with `status`.
    fn from(status: pricing_core::quote::ReviewStatus) -> Self {
        match status {
            pricing_core::quote::ReviewStatus::Ready => Self::Ready,
            pricing_core::quote::ReviewStatus::InReview => Self::InReview,
        }
    }
}

impl From<pricing_core::price_on_plan::PlanStatus> for QuoteStatus {
    /// The status of a quote holding a price-on-plan answer of `status`.
    fn from(status: pricing_core::price_on_plan::PlanStatus) -> Self {
        use pricing_core::price_on_plan::PlanStatus;
        match status {
            PlanStatus::Ready => Self::Ready,
            PlanStatus::InReview => Self::InReview,
            PlanStatus::Unavailable => Self::Unavailable,
        }
    }
}

impl QuoteStatus {
    /// Wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::InReview => "in_review",
            Self::Unavailable => "unavailable",
            Self::Pricing => "pricing",
        }
    }

    /// Underwriting finalizes an `in_review` quote (then `quote.finalized`
    /// is sent).
    ///
    /// # Errors
    /// [`DomainError::Transition`] from any other status.
    pub fn finalize(self) -> Result<Self, DomainError> {
        match self {
            Self::InReview => Ok(Self::Ready),
            other => Err(DomainError::Transition {
                from: other.as_str(),
                to: Self::Ready.as_str(),
            }),
        }
    }

    /// Price-on-plan pricing finished with `outcome` (`ready`, `in_review`
    /// or `unavailable`).
    ///
    /// # Errors
    /// [`DomainError::Transition`] unless the quote is `pricing` and the
    /// outcome is a finished status.
    pub fn finish_pricing(self, outcome: Self) -> Result<Self, DomainError> {
        match (self, outcome) {
            (Self::Pricing, Self::Ready | Self::InReview | Self::Unavailable) => Ok(outcome),
            (from, to) => Err(DomainError::Transition {
                from: from.as_str(),
                to: to.as_str(),
            }),
        }
    }

    /// The statuses a quote may move to `self` from: `ready` from
    /// `in_review` (finalization) or `pricing`; `in_review` and
    /// `unavailable` from `pricing`; nothing moves back to `pricing`.
    #[must_use]
    pub const fn predecessors(self) -> &'static [Self] {
        match self {
            Self::Ready => &[Self::InReview, Self::Pricing],
            Self::InReview | Self::Unavailable => &[Self::Pricing],
            Self::Pricing => &[],
        }
    }

    /// Whether an enrollment may use the quote (it must also be unexpired
    /// and current); an `in_review` quote is a 409 `conflict`.
    #[must_use]
    pub fn enrollable(self) -> bool {
        self == Self::Ready
    }
}

impl QuoteStatus {
    /// Parses a wire value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Ready,
            Self::InReview,
            Self::Unavailable,
            Self::Pricing,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// What made a quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuoteKind {
    /// `POST /groups/{id}/quotes`: the market-rate Quote resource.
    Quote,
    /// `POST /price-on-plan`: the versions on a partner's plan (a lead).
    PriceOnPlan,
}

impl QuoteKind {
    /// Storage value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Quote => "quote",
            Self::PriceOnPlan => "price_on_plan",
        }
    }

    /// Parses a storage value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Quote, Self::PriceOnPlan]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

/// A stored quote: its row and its typed document.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    /// `qt_` id.
    pub id: QuoteId,
    /// What made it.
    pub kind: QuoteKind,
    /// Price-on-plan: the digest of the request it answers (partner, mode,
    /// canonical body, card version and plan-year start), by which the same
    /// body sent again finds it.
    pub request_digest: Option<String>,
    /// Partner and mode.
    pub scope: Scope,
    /// Group.
    pub group_id: GroupId,
    /// Status.
    pub status: QuoteStatus,
    /// Pricing digest of what it was priced on: the census's rating digest
    /// and the group's fallback ZIP (stale when the group's differs; see
    /// `services::quotes::group_pricing_digest`).
    pub rating_digest: Option<String>,
    /// Expiry, Unix seconds.
    pub expires_at: i64,
    /// The figures (market) or the pricing document (price-on-plan).
    pub body: crate::document::QuoteDocument,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Who accepted the offer in its iframe (set once).
    pub acceptance: Option<crate::embed::Acceptance>,
}

/// Which of a group's quotes a list returns (none set: all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuoteFilter {
    /// The quote's status.
    pub status: Option<QuoteStatus>,
    /// `quote` or `price_on_plan`.
    pub kind: Option<QuoteKind>,
}

#[cfg(test)]
mod tests {
    use super::QuoteStatus::*;

    #[test]
    fn transitions_table() {
        assert_eq!(InReview.finalize(), Ok(Ready));
        for s in [Ready, Unavailable, Pricing] {
            assert!(s.finalize().is_err(), "{s:?}");
        }
        assert_eq!(Pricing.finish_pricing(Ready), Ok(Ready));
        assert_eq!(Pricing.finish_pricing(Unavailable), Ok(Unavailable));
        assert!(Pricing.finish_pricing(Pricing).is_err());
        assert!(Ready.finish_pricing(Ready).is_err());
        assert!(Ready.enrollable() && !InReview.enrollable());
        // The predecessors are exactly the statuses with a transition.
        for to in [Ready, InReview, Unavailable, Pricing] {
            for from in [Ready, InReview, Unavailable, Pricing] {
                let moves = from.finalize() == Ok(to) || from.finish_pricing(to) == Ok(to);
                assert_eq!(
                    to.predecessors().contains(&from),
                    moves,
                    "{from:?} -> {to:?}"
                );
            }
        }
    }
}
