//! Business refusals of the use-case services: one enum per service, one
//! variant per reason, each with its code and its message (messages are
//! part of the API's behaviour; callers branch on the variant, never on
//! the text).

use crate::enrollment::QuoteUse;
use crate::error::Code;
use crate::onboarding::StepId;
use crate::ports::Unseal;
use crate::quote::QuoteStatus;

/// Why the enrollments service refused (creating an enrollment, going
/// live).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EnrollmentRefusal {
    /// The group already has an enrollment (`conflict`).
    #[error("the group already has an enrollment")]
    AlreadyEnrolled,
    /// A price-on-plan quote prices a lead, not the group (`conflict`).
    #[error(
        "a price-on-plan quote prices a lead and cannot be enrolled; create a quote of the group (POST /groups/{{groupId}}/quotes) and enroll with it"
    )]
    PriceOnPlanQuote,
    /// The quote may not be used now: `quote_expired` when expired or
    /// stale, `conflict` when in review or not priced.
    #[error(transparent)]
    QuoteUnusable(QuoteUse),
    /// The group's company is already in `prod` (`conflict`).
    #[error("the group is already live")]
    AlreadyLive,
    /// The group has no provisioned company to take live (`conflict`).
    #[error("the group has no provisioned company yet; create its enrollment first")]
    NotProvisioned,
}

impl EnrollmentRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        match self {
            Self::QuoteUnusable(QuoteUse::Expired | QuoteUse::Stale) => Code::QuoteExpired,
            Self::QuoteUnusable(QuoteUse::InReview | QuoteUse::NotPriced)
            | Self::AlreadyEnrolled
            | Self::PriceOnPlanQuote
            | Self::AlreadyLive
            | Self::NotProvisioned => Code::Conflict,
        }
    }
}

/// Why the quotes service refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuoteRefusal {
    /// Only an `in_review` quote can be finalized (`conflict`).
    #[error(
        "the quote is {}; only an in_review quote can be finalized",
        .status.as_str()
    )]
    NotInReview {
        /// The quote's current status.
        status: QuoteStatus,
    },
}

impl QuoteRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        match self {
            Self::NotInReview { .. } => Code::Conflict,
        }
    }
}

/// Why the elections service refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ElectionRefusal {
    /// The key lacks the elections capability (`forbidden`).
    #[error("this key lacks the elections capability")]
    NoCapability,
    /// Elections come after the group's enrollment (`conflict`).
    #[error("the group has no enrollment yet; submit elections after it")]
    NotEnrolled,
}

impl ElectionRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        match self {
            Self::NoCapability => Code::Forbidden,
            Self::NotEnrolled => Code::Conflict,
        }
    }
}

/// Why the members service refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MemberRefusal {
    /// The roster starts with the group's enrollment (`not_found`).
    #[error("the group has no roster until its enrollment")]
    NoRoster,
}

impl MemberRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        match self {
            Self::NoRoster => Code::NotFound,
        }
    }
}

/// Why the onboarding service refused a step change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OnboardingRefusal {
    /// The step waits for another one (`conflict`).
    #[error("{} can start once {} is completed", .step.as_str(), .needs.as_str())]
    Blocked {
        /// The step asked for.
        step: StepId,
        /// The step it needs.
        needs: StepId,
    },
    /// The company is `prod`: the required steps are closed (`conflict`).
    #[error("the company is live")]
    CompanyLive,
    /// Signing needs saved plan choices (`conflict`).
    #[error("save the plan choices before signing the plan documents")]
    NothingToSign,
    /// The plan documents are signed for these choices (`conflict`).
    #[error("the plan documents are already signed; change the plan choices to sign again")]
    AlreadySigned,
    /// No account waits for its micro-deposits (`conflict`).
    #[error("no micro-deposits wait for confirmation; save the bank account first")]
    NoDepositsPending,
    /// No business verification waits for a review (`conflict`).
    #[error("no business verification of this company waits for a review")]
    NotInReview,
    /// A hosted enrollment's onboarding runs in the portal (`conflict`).
    #[error("onboarding runs in the employer portal")]
    HostedOnly,
    /// An embedded enrollment has no employer portal (`conflict`).
    #[error("an embedded enrollment has no employer portal; its onboarding runs through the API")]
    EmbeddedHasNoPortal,
}

impl OnboardingRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        Code::Conflict
    }
}

/// Why the employer portal refused (onboarding §3). Sign-in failures
/// never say which part was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PortalRefusal {
    /// The set-password link was used or replaced by a newer one
    /// (`conflict`).
    #[error("this link was already used")]
    LinkUsed,
    /// The set-password link is more than 7 days old (`conflict`).
    #[error("this link expired")]
    LinkExpired,
    /// No such set-password link (`not_found`).
    #[error("this link is not valid")]
    LinkUnknown,
    /// Unknown address, wrong password or a locked account — one answer
    /// for all three (`unauthorized`).
    #[error("the email address or password is not correct")]
    SignInFailed,
    /// The source address made too many failed sign-ins (`rate_limited`).
    #[error("too many failed sign-ins; try again in {retry_after_secs} s")]
    TooManyAttempts {
        /// Seconds until the window ends.
        retry_after_secs: u32,
    },
    /// The enrollment names no signatory to give the portal to
    /// (`conflict`).
    #[error("the enrollment names no signatory")]
    NoSignatory,
    /// A wrong, reused or expired two-factor or recovery code
    /// (`unauthorized`).
    #[error("the code is not correct")]
    CodeRefused,
    /// A partner portal viewer tried to act (`forbidden`).
    #[error("only an admin can do this")]
    AdminOnly,
    /// An admin without an enrolled authenticator tried a sensitive act
    /// (`forbidden`).
    #[error("set up two-factor authentication first")]
    TwoFactorRequired,
}

impl PortalRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        match self {
            Self::LinkUsed | Self::LinkExpired | Self::NoSignatory => Code::Conflict,
            Self::LinkUnknown => Code::NotFound,
            Self::SignInFailed | Self::CodeRefused => Code::Unauthorized,
            Self::TooManyAttempts { .. } => Code::RateLimited,
            Self::AdminOnly | Self::TwoFactorRequired => Code::Forbidden,
        }
    }
}

/// Why the embed service refused an offer page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EmbedRefusal {
    /// A price-on-plan quote has no offer page (`conflict`).
    #[error(
        "a price-on-plan quote has no offer page; name a quote of the group (POST /groups/{{groupId}}/quotes)"
    )]
    PriceOnPlanQuote,
    /// Only a `ready` quote can be shown (`conflict`).
    #[error("the quote is {}; only a ready quote can be shown", .status.as_str())]
    NotReady {
        /// The quote's current status.
        status: QuoteStatus,
    },
    /// The quote passed its `expires_at` (`quote_expired`).
    #[error("the quote passed its expires_at; create a new quote")]
    Expired,
    /// The census changed since the quote (`quote_expired`).
    #[error("{}", QuoteUse::Stale)]
    Stale,
    /// The group has no quote to show (`conflict`).
    #[error("the group has no ready, unexpired quote; create a quote first")]
    NoReadyQuote,
    /// The embed session expired (`session_expired`).
    #[error("this offer link expired; ask for a new one")]
    SessionExpired,
    /// An address outside the group's domain (`email_not_allowed`).
    #[error("use your work email address at the company's domain")]
    EmailNotAllowed,
    /// A wrong or expired code, or none pending (`verification_failed`).
    #[error("{}", if *.attempts_remaining == 0 { "the code is not valid; ask for a new code" } else { "the code is not correct" })]
    VerificationFailed {
        /// Attempts left before a new email is needed.
        attempts_remaining: u32,
    },
    /// Five codes were sent within the hour (`rate_limited`).
    #[error("too many codes were sent; try again in {retry_after_secs} s")]
    TooManyCodes {
        /// Seconds until another may be sent.
        retry_after_secs: u32,
    },
    /// The documents and the acceptance wait for a verified address
    /// (`conflict`).
    #[error("verify your email address first")]
    NotVerified,
    /// The quote's offer was accepted already (`conflict`).
    #[error("this offer was already accepted")]
    AlreadyAccepted,
}

impl EmbedRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        match self {
            Self::Expired | Self::Stale => Code::QuoteExpired,
            Self::PriceOnPlanQuote
            | Self::NotReady { .. }
            | Self::NoReadyQuote
            | Self::NotVerified
            | Self::AlreadyAccepted => Code::Conflict,
            Self::SessionExpired => Code::SessionExpired,
            Self::EmailNotAllowed => Code::EmailNotAllowed,
            Self::VerificationFailed { .. } => Code::VerificationFailed,
            Self::TooManyCodes { .. } => Code::RateLimited,
        }
    }
}

/// Why the price-on-plan service refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PriceOnPlanRefusal {
    /// An enrolled group of the mode holds `company.domain` (`conflict`).
    #[error("an enrolled group already exists for company.domain; send another domain or none")]
    DomainTaken,
}

impl PriceOnPlanRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        match self {
            Self::DomainTaken => Code::Conflict,
        }
    }
}

/// Why the partners service refused to show a key again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PartnerRefusal {
    /// A live key is shown once, when created (`conflict`).
    #[error("live keys cannot be shown again")]
    LiveKeyNotShown,
    /// The key is revoked (`conflict`).
    #[error("the key is revoked")]
    Revoked,
    /// The key's plaintext was not sealed for re-display (`conflict`).
    #[error("the key was not kept for re-display")]
    NotKept,
    /// The sealed plaintext does not open with the configured key
    /// (`conflict`).
    #[error(transparent)]
    Unsealable(Unseal),
    /// A live key before live mode is enabled (`live_mode_disabled`).
    #[error("live mode is not enabled for this partner yet")]
    LiveModeDisabled,
    /// The partner has no active sandbox key (`not_found`).
    #[error("there is no active sandbox key")]
    NoSandboxKey,
}

impl PartnerRefusal {
    /// The envelope's code.
    #[must_use]
    pub const fn code(self) -> Code {
        match self {
            Self::LiveKeyNotShown | Self::Revoked | Self::NotKept | Self::Unsealable(_) => {
                Code::Conflict
            }
            Self::LiveModeDisabled => Code::LiveModeDisabled,
            Self::NoSandboxKey => Code::NotFound,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::enrollment::QuoteUse;
    use crate::error::{Code, FieldError};
    use crate::onboarding::StepId;
    use crate::ports::Unseal;
    use crate::quote::QuoteStatus;
    use crate::services::{
        ElectionRefusal, EmbedRefusal, EnrollmentRefusal, MemberRefusal, OnboardingRefusal,
        PartnerRefusal, PriceOnPlanRefusal, QuoteRefusal, ServiceError,
    };
    use crate::store::Conflict;

    fn check(e: impl Into<ServiceError>, code: Code, message: &str) {
        let e = e.into();
        assert_eq!((e.code(), e.message().as_str()), (code, message), "{e:?}");
        assert!(e.details().is_none() && e.retry_after().is_none(), "{e:?}");
    }

    #[test]
    fn refusals_keep_their_code_and_message() {
        use Code::{Conflict as C, Forbidden, QuoteExpired};
        check(
            EnrollmentRefusal::AlreadyEnrolled,
            C,
            "the group already has an enrollment",
        );
        check(
            EnrollmentRefusal::PriceOnPlanQuote,
            C,
            "a price-on-plan quote prices a lead and cannot be enrolled; create a quote of the group (POST /groups/{groupId}/quotes) and enroll with it",
        );
        check(
            EnrollmentRefusal::QuoteUnusable(QuoteUse::InReview),
            C,
            "the quote is in review; it must be finalized first",
        );
        check(
            EnrollmentRefusal::QuoteUnusable(QuoteUse::NotPriced),
            C,
            "the quote has no price to enroll on",
        );
        check(
            EnrollmentRefusal::QuoteUnusable(QuoteUse::Expired),
            QuoteExpired,
            "the quote has expired; create a new quote and retry",
        );
        check(
            EnrollmentRefusal::QuoteUnusable(QuoteUse::Stale),
            QuoteExpired,
            "the census changed since this quote; re-quote",
        );
        check(
            EnrollmentRefusal::AlreadyLive,
            C,
            "the group is already live",
        );
        check(
            EnrollmentRefusal::NotProvisioned,
            C,
            "the group has no provisioned company yet; create its enrollment first",
        );
        check(
            QuoteRefusal::NotInReview {
                status: QuoteStatus::Ready,
            },
            C,
            "the quote is ready; only an in_review quote can be finalized",
        );
        check(
            ElectionRefusal::NoCapability,
            Forbidden,
            "this key lacks the elections capability",
        );
        check(
            ElectionRefusal::NotEnrolled,
            C,
            "the group has no enrollment yet; submit elections after it",
        );
        check(
            OnboardingRefusal::Blocked {
                step: StepId::PlanSetup,
                needs: StepId::Banking,
            },
            C,
            "plan_setup can start once banking is completed",
        );
        check(OnboardingRefusal::CompanyLive, C, "the company is live");
        check(
            MemberRefusal::NoRoster,
            Code::NotFound,
            "the group has no roster until its enrollment",
        );
        check(
            EmbedRefusal::PriceOnPlanQuote,
            C,
            "a price-on-plan quote has no offer page; name a quote of the group (POST /groups/{groupId}/quotes)",
        );
        check(
            EmbedRefusal::NotReady {
                status: QuoteStatus::InReview,
            },
            C,
            "the quote is in_review; only a ready quote can be shown",
        );
        check(
            EmbedRefusal::Expired,
            QuoteExpired,
            "the quote passed its expires_at; create a new quote",
        );
        check(
            EmbedRefusal::Stale,
            QuoteExpired,
            "the census changed since this quote; re-quote",
        );
        check(
            EmbedRefusal::NoReadyQuote,
            C,
            "the group has no ready, unexpired quote; create a quote first",
        );
        check(
            PriceOnPlanRefusal::DomainTaken,
            C,
            "an enrolled group already exists for company.domain; send another domain or none",
        );
        check(
            PartnerRefusal::LiveKeyNotShown,
            C,
            "live keys cannot be shown again",
        );
        check(PartnerRefusal::Revoked, C, "the key is revoked");
        check(
            PartnerRefusal::NotKept,
            C,
            "the key was not kept for re-display",
        );
        check(
            PartnerRefusal::Unsealable(Unseal),
            C,
            "sealed secret cannot be opened with the configured key",
        );
    }

    #[test]
    fn the_shared_core_keeps_its_code_and_message() {
        check(
            ServiceError::Conflict(Conflict::DomainTaken),
            Code::Conflict,
            "an enrolled group already exists for this domain",
        );
        check(
            ServiceError::from(crate::DomainError::Transition {
                from: "enrolled",
                to: "enrolled",
            }),
            Code::Conflict,
            "cannot move from enrolled to enrolled",
        );
        check(
            ServiceError::CensusRequired,
            Code::CensusRequired,
            "no quotable member: each counted employee needs a zip and a dob or age",
        );
        check(
            ServiceError::MarketUnavailable,
            Code::MarketUnavailable,
            "no rate-card market covers the census's ZIP codes",
        );
        check(
            ServiceError::AmountOutOfRange,
            Code::AmountOutOfRange,
            "an amount of this pricing is out of range; check the money fields of the request",
        );
        check(
            ServiceError::NotFound,
            Code::NotFound,
            "no such resource in this mode",
        );
        check(
            ServiceError::Unavailable("down".into()),
            Code::NotConfigured,
            "the backing store is unavailable; retry with the same Idempotency-Key",
        );
        check(
            ServiceError::Internal("boom".into()),
            Code::ServerError,
            "the service failed; the request was not applied",
        );
        let pending = ServiceError::RatesPending {
            retry_after_secs: 3,
        };
        assert_eq!(pending.code(), Code::RatesPending);
        assert_eq!(pending.retry_after(), Some(3));
        assert_eq!(
            pending.message(),
            "the market comparison of the census is still running; retry in 3 s"
        );
        let one = ServiceError::Invalid(vec![FieldError::new("domain", "bad")]);
        assert_eq!(one.code(), Code::InvalidRequest);
        assert_eq!(one.message(), "domain: bad");
        assert_eq!(one.details().map(<[FieldError]>::len), Some(1));
        let two = ServiceError::Invalid(vec![
            FieldError::new("domain", "bad"),
            FieldError::new("name", "bad"),
        ]);
        assert_eq!(two.message(), "2 fields are invalid; see details");
    }
}
