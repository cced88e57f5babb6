//! The background job worker of `serve`: it runs the market comparisons
//! census writes enqueue, the price-on-plan pricings queued or left
//! behind by a stopped process, the sandbox verifier's delayed answers and
//! queued email, on a thread of its own so a long simulation
//! never holds up HTTP workers. Jobs live in the database, so a job a stopped
//! process had claimed is taken over by any process once that process is
//! found dead (at once after an SQLite restart, within 10 s on PostgreSQL:
//! `domain::store::process`) or its lease runs out; several processes on one
//! PostgreSQL never run one claim twice.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use domain::job::{Job, JobKind};
use domain::services::jobs::{JobHandler, JobOutput, Step, Worker};
use domain::services::mailbox::EmailHandler;
use domain::services::onboarding::VerificationHandler;
use domain::services::price_on_plan::PriceOnPlanHandler;
use domain::services::quotes::ComparisonHandler;
use tokio::sync::Notify;

/// How long an idle worker waits for a wake-up before polling again (jobs
/// enqueued by another process, leases that ran out).
pub const IDLE_POLL: Duration = Duration::from_millis(500);

/// How long the worker waits after a store failure before trying again.
pub const ERROR_BACKOFF: Duration = Duration::from_secs(2);

/// The kinds this worker runs.
pub const KINDS: [JobKind; 4] = [
    JobKind::MarketComparison,
    JobKind::PriceOnPlan,
    JobKind::BusinessVerification,
    JobKind::Email,
];

/// The handler of each job kind.
#[derive(Clone)]
pub struct JobHandlers {
    /// The census's market comparison.
    pub comparison: ComparisonHandler,
    /// Price-on-plan pricing.
    pub price_on_plan: PriceOnPlanHandler,
    /// The sandbox verifier's delayed answers.
    pub verification: VerificationHandler,
    /// Queued email.
    pub email: EmailHandler,
}

#[async_trait]
impl JobHandler for JobHandlers {
    async fn run(&self, job: &Job) -> Result<JobOutput, String> {
        match job.job.kind() {
            JobKind::MarketComparison => self.comparison.run(job).await,
            JobKind::PriceOnPlan => self.price_on_plan.run(job).await,
            JobKind::BusinessVerification => self.verification.run(job).await,
            JobKind::Email => self.email.run(job).await,
        }
    }
}

/// Runs jobs until the future is dropped: a due job is run at once; when
/// none is due the worker sleeps until `waker` fires or [`IDLE_POLL`]
/// passes.
pub async fn run(worker: Worker, handler: JobHandlers, waker: Arc<Notify>) {
    loop {
        match worker.step(&KINDS, &handler).await {
            Ok(Step::Idle) => {
                let _ = tokio::time::timeout(IDLE_POLL, waker.notified()).await;
            }
            Ok(Step::Completed(id)) => {
                tracing::info!(job = id.as_str(), "job done");
            }
            Ok(Step::Retrying(id)) => {
                tracing::warn!(job = id.as_str(), "job failed; it will be retried");
            }
            Ok(Step::Failed(id)) => {
                tracing::error!(job = id.as_str(), "job failed for the last time");
            }
            Err(e) => {
                tracing::warn!(error = %e, "the job worker cannot reach the store");
                tokio::time::sleep(ERROR_BACKOFF).await;
            }
        }
    }
}

/// Steps the worker until no job is due (tests and one-shot commands).
///
/// # Errors
/// The first store failure.
pub async fn drain(
    worker: &Worker,
    handler: &JobHandlers,
) -> Result<u32, domain::services::ServiceError> {
    let mut ran = 0;
    while worker.step(&KINDS, handler).await? != Step::Idle {
        ran += 1;
    }
    Ok(ran)
}
