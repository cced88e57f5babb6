//! Background jobs: the census-triggered local market comparison,
//! price-on-plan pricing and the sandbox verifier's delayed answers. Jobs live in a table, are claimed with a lease
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so two processes never take the
//! same row) and are resumed after a restart when the lease runs out.

use serde::{Deserialize, Serialize};

use crate::ids::{GroupId, JobId};
use crate::scope::Scope;

/// Job kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// The local market comparison started by a census write.
    MarketComparison,
    /// Price-on-plan pricing that outlasted the wait budget.
    PriceOnPlan,
    /// A business verification whose sandbox answer is due later.
    BusinessVerification,
    /// An email to send.
    Email,
}

impl JobKind {
    /// Storage value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::MarketComparison => "market_comparison",
            Self::PriceOnPlan => "price_on_plan",
            Self::BusinessVerification => "business_verification",
            Self::Email => "email",
        }
    }

    /// Parses a storage value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::MarketComparison,
            Self::PriceOnPlan,
            Self::BusinessVerification,
            Self::Email,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

/// Job states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting to be claimed.
    Queued,
    /// Claimed by a worker whose lease has not run out.
    Running,
    /// Finished.
    Done,
    /// Gave up after its attempts.
    Failed,
    /// Replaced by a later job for the same group and kind.
    Superseded,
}

impl JobState {
    /// Storage value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Superseded => "superseded",
        }
    }

    /// Parses a storage value.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Queued,
            Self::Running,
            Self::Done,
            Self::Failed,
            Self::Superseded,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// Whether the job still has work to do (its group's rates are pending).
    #[must_use]
    pub fn is_open(self) -> bool {
        matches!(self, Self::Queued | Self::Running)
    }
}

/// Most attempts of one job before it is marked failed.
pub const MAX_JOB_ATTEMPTS: u32 = 5;

/// A job to enqueue.
#[derive(Debug, Clone, PartialEq)]
pub struct NewJob {
    /// `job_` id.
    pub id: JobId,
    /// Partner and mode.
    pub scope: Scope,
    /// Group the job works on.
    pub group_id: Option<GroupId>,
    /// Kind-specific input; it names the kind.
    pub payload: crate::document::JobPayload,
    /// Earliest start, Unix milliseconds.
    pub run_after_ms: i64,
}

impl NewJob {
    /// The job's kind.
    #[must_use]
    pub const fn kind(&self) -> JobKind {
        self.payload.kind()
    }
}

/// A claimed or stored job.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The job as enqueued.
    pub job: NewJob,
    /// State.
    pub state: JobState,
    /// Attempts so far (including the current claim).
    pub attempts: u32,
    /// Lease end of the current claim, Unix milliseconds.
    pub locked_until_ms: Option<i64>,
}

impl Job {
    /// The claim it was handed out under.
    #[must_use]
    pub fn claim(&self) -> JobClaim {
        JobClaim {
            id: self.job.id.clone(),
            attempt: self.attempts,
        }
    }
}

/// A claim of a job: the fencing token that completing or failing the job
/// presents, so that a claim superseded or taken over meanwhile changes
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobClaim {
    /// The job.
    pub id: JobId,
    /// The claimed job's `attempts`, counted by the claim.
    pub attempt: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_states_round_trip() {
        for k in [JobKind::MarketComparison, JobKind::PriceOnPlan] {
            assert_eq!(JobKind::parse(k.as_str()), Some(k));
        }
        for s in [
            JobState::Queued,
            JobState::Running,
            JobState::Done,
            JobState::Failed,
            JobState::Superseded,
        ] {
            assert_eq!(JobState::parse(s.as_str()), Some(s));
            assert_eq!(
                s.is_open(),
                matches!(s, JobState::Queued | JobState::Running)
            );
        }
        assert_eq!(JobKind::parse("nope"), None);
    }
}
