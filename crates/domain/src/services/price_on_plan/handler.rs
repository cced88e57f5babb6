//! The background half of price-on-plan: the worker prices a queued job
//! (a wait budget of zero) or one whose claimant stopped before it stored
//! the answer, and writes the answer into the quote.

use std::sync::Arc;

use async_trait::async_trait;
use pricing_core::census::date_opt;
use pricing_core::{CensusRules, PriceOnPlanRequest, PricingContext};

use super::{PriceOnPlan, PricingPayload};
use crate::document::JobPayload;
use crate::job::Job;
use crate::quote::QuoteStatus;
use crate::services::jobs::{JobHandler, JobOutput};
use crate::store::StoreError;

/// Runs `price_on_plan` jobs.
#[derive(Clone)]
pub struct PriceOnPlanHandler {
    service: PriceOnPlan,
}

impl PriceOnPlanHandler {
    /// The handler over the service.
    #[must_use]
    pub fn new(service: PriceOnPlan) -> Self {
        Self { service }
    }
}

#[async_trait]
impl JobHandler for PriceOnPlanHandler {
    async fn run(&self, job: &Job) -> Result<JobOutput, String> {
        let payload: PricingPayload = match &job.job.payload {
            JobPayload::PriceOnPlan(p) => (**p).clone(),
            JobPayload::MarketComparison(_)
            | JobPayload::BusinessVerification(_)
            | JobPayload::Email(_) => {
                return Err("a price-on-plan job needs a pricing payload".to_owned());
            }
        };
        let scope = &job.job.scope;
        let quote = match self
            .service
            .ports
            .quotes
            .quote(scope, &payload.quote_id)
            .await
        {
            Ok(q) => q,
            // The quote is gone: nothing to price.
            Err(StoreError::NotFound) => return Ok(JobOutput::default()),
            Err(e) => return Err(e.to_string()),
        };
        if quote.status != QuoteStatus::Pricing {
            // Its first claimant stored the answer before it stopped.
            return Ok(JobOutput::default());
        }
        let start = date_opt::parse(&payload.plan_year_start)
            .map_err(|e| format!("plan_year_start: {e}"))?;
        let card = Arc::clone(&self.service.card);
        let partner = scope.partner.to_string();
        let PricingPayload {
            require_dob,
            company_zip,
            census,
            plan,
            market_plans,
            assumptions,
            ..
        } = payload;
        let priced = tokio::task::spawn_blocking(move || {
            let request = PriceOnPlanRequest {
                census,
                plan,
                market_plans,
                company_zip,
            };
            pricing_core::price_on_plan(
                &request,
                PricingContext {
                    card: &card,
                    plan_year_start: start,
                    partner: Some(&partner),
                    rules: CensusRules { require_dob },
                },
            )
        })
        .await
        .map_err(|e| format!("the pricing stopped: {e}"))?;
        self.service
            .finish_quote(&quote, priced, assumptions)
            .await
            .map_err(|e| e.to_string())?;
        Ok(JobOutput::default())
    }
}
