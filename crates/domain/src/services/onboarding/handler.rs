//! The background half of business verification: the sandbox verifier's
//! delayed answer (EIN `22-2222222`), run by the job worker when it is due.

use async_trait::async_trait;

use super::Onboarding;
use crate::document::JobPayload;
use crate::job::Job;
use crate::onboarding::VerifierAnswer;
use crate::services::jobs::{JobHandler, JobOutput};
use crate::services::{OnboardingRefusal, ServiceError};

/// Runs `business_verification` jobs.
#[derive(Clone)]
pub struct VerificationHandler {
    service: Onboarding,
}

impl VerificationHandler {
    /// The handler over the service.
    #[must_use]
    pub fn new(service: Onboarding) -> Self {
        Self { service }
    }
}

#[async_trait]
impl JobHandler for VerificationHandler {
    async fn run(&self, job: &Job) -> Result<JobOutput, String> {
        let JobPayload::BusinessVerification(due) = &job.job.payload else {
            return Err("a business verification job needs its verification".to_owned());
        };
        let settled = self
            .service
            .settle(
                &job.job.scope,
                &due.enrollment_id,
                Some(due),
                VerifierAnswer::Verified,
            )
            .await;
        match settled {
            // Applied, or the request was replaced meanwhile (the events
            // were stored with the checklist).
            Ok(_)
            | Err(
                ServiceError::NotFound
                | ServiceError::Onboarding(
                    OnboardingRefusal::CompanyLive | OnboardingRefusal::Blocked { .. },
                ),
            ) => Ok(JobOutput::default()),
            Err(e) => Err(e.to_string()),
        }
    }
}
