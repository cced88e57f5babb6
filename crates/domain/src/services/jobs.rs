//! The job worker loop's single step: claim a due job, run its handler,
//! then complete it (appending the events it announces in the same
//! transaction) or put it back with a backoff.

use std::sync::Arc;

use async_trait::async_trait;

use crate::event::NewEvent;
use crate::ids::JobId;
use crate::job::{Job, JobKind, MAX_JOB_ATTEMPTS};
use crate::ports::Clock;
use crate::services::ServiceError;
use crate::store::JobStore;

/// What a finished job leaves behind.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobOutput {
    /// Events announcing the work, appended when the job completes.
    pub events: Vec<NewEvent>,
    /// The job's result (JSON), stored on the job row.
    pub result: Option<String>,
}

impl From<Vec<NewEvent>> for JobOutput {
    fn from(events: Vec<NewEvent>) -> Self {
        Self {
            events,
            result: None,
        }
    }
}

/// Runs one kind of job.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait JobHandler: Send + Sync {
    /// Does the job's work and returns the events that announce it and
    /// its result.
    ///
    /// # Errors
    /// A message; the job is retried with a backoff, then marked failed.
    async fn run(&self, job: &Job) -> Result<JobOutput, String>;
}

/// How long a claim lasts before another worker may take the job over.
pub const JOB_LEASE_MS: i64 = 60_000;

/// What one step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// No job was due.
    Idle,
    /// The job finished (or was superseded meanwhile).
    Completed(JobId),
    /// The job failed and will be retried.
    Retrying(JobId),
    /// The job failed for the last time.
    Failed(JobId),
}

/// The worker.
#[derive(Clone)]
pub struct Worker {
    store: Arc<dyn JobStore>,
    clock: Arc<dyn Clock>,
}

impl Worker {
    /// The worker over its ports.
    #[must_use]
    pub fn new(store: Arc<dyn JobStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    /// Claims and runs one due job of `kinds` with `handler`.
    ///
    /// # Errors
    /// Store failures.
    pub async fn step(
        &self,
        kinds: &[JobKind],
        handler: &dyn JobHandler,
    ) -> Result<Step, ServiceError> {
        let now = self.clock.now_ms();
        let Some(job) = self.store.claim_job(kinds, now, JOB_LEASE_MS).await? else {
            return Ok(Step::Idle);
        };
        let claim = job.claim();
        match handler.run(&job).await {
            Ok(output) => {
                self.store
                    .complete_job(&claim, &output.events, output.result.as_deref())
                    .await?;
                Ok(Step::Completed(claim.id))
            }
            Err(message) if job.attempts < MAX_JOB_ATTEMPTS => {
                // 1 s, 2 s, 4 s, 8 s between attempts.
                let backoff = 1_000_i64 << job.attempts.saturating_sub(1).min(10);
                let retry_at = self.clock.now_ms().saturating_add(backoff);
                self.store
                    .fail_job(&claim, Some(retry_at), &message)
                    .await?;
                Ok(Step::Retrying(claim.id))
            }
            Err(message) => {
                self.store.fail_job(&claim, None, &message).await?;
                Ok(Step::Failed(claim.id))
            }
        }
    }
}
#[cfg(test)]
mod tests;
