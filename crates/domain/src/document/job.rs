//! A job's payload, one variant per job kind. The kind is stored beside
//! the payload.

use serde::{Deserialize, Serialize};

use super::{DocumentError, Legacy, from_stored, to_stored};
use crate::ids::EnrollmentId;
use crate::job::JobKind;
use crate::services::price_on_plan::PricingPayload;

/// The census write's counts, announced by `census.processed` once the
/// market comparison has run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CensusCounts {
    /// Rows received.
    pub received: u64,
    /// Rows accepted.
    pub accepted: u64,
    /// Rows refused.
    pub error_count: u64,
}

/// A business verification whose sandbox answer is due: the request it
/// answers (an answer for a request since replaced is dropped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerificationDue {
    /// The enrollment.
    pub enrollment_id: EnrollmentId,
    /// The EIN verified, 9 digits.
    pub ein: String,
    /// When the verification was asked for, Unix seconds.
    pub requested_at: i64,
}

/// An email waiting to be sent: the message (recipient, subject, text
/// and HTML) sealed to the job ([`crate::services::mailbox`]), so that no
/// address or link lies in the jobs table in clear.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmailDue {
    /// [`crate::email::EmailKind::as_str`], for logs.
    pub kind: String,
    /// The sealed message, base64.
    pub sealed: String,
}

/// A job's payload, by kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum JobPayload {
    /// `market_comparison`: the counts of the census write that queued it.
    MarketComparison(CensusCounts),
    /// `price_on_plan`: everything needed to price the request again after
    /// a restart.
    PriceOnPlan(Box<PricingPayload>),
    /// `business_verification`: the verification to answer.
    BusinessVerification(VerificationDue),
    /// `email`: a message to send (retried while the server is away).
    Email(EmailDue),
}

impl JobPayload {
    /// The job kind the payload belongs to.
    #[must_use]
    pub const fn kind(&self) -> JobKind {
        match self {
            Self::MarketComparison(_) => JobKind::MarketComparison,
            Self::PriceOnPlan(_) => JobKind::PriceOnPlan,
            Self::BusinessVerification(_) => JobKind::BusinessVerification,
            Self::Email(_) => JobKind::Email,
        }
    }

    /// The stored form.
    ///
    /// # Errors
    /// When the payload does not serialize.
    pub fn to_stored(&self) -> Result<String, serde_json::Error> {
        match self {
            Self::MarketComparison(c) => to_stored(c),
            Self::PriceOnPlan(p) => to_stored(p),
            Self::BusinessVerification(v) => to_stored(v),
            Self::Email(e) => to_stored(e),
        }
    }

    /// Reads the stored payload of a job of `kind` (current, or as the
    /// previous version wrote it: camelCase counts, snake_case pricing).
    ///
    /// # Errors
    /// [`DocumentError`] when it does not read.
    pub fn from_stored(kind: JobKind, text: &str) -> Result<Self, DocumentError> {
        Ok(match kind {
            JobKind::MarketComparison => Self::MarketComparison(from_stored(text, Legacy::Camel)?),
            JobKind::PriceOnPlan => Self::PriceOnPlan(Box::new(from_stored(text, Legacy::Snake)?)),
            JobKind::Email => Self::Email(from_stored(text, Legacy::Snake)?),
            JobKind::BusinessVerification => {
                Self::BusinessVerification(from_stored(text, Legacy::Snake)?)
            }
        })
    }
}
