//! The local market comparison: the job a census write enqueues. It
//! normalises the stored census for the default plan-year start, simulates
//! both versions on the card's market base plan, stores the simulation as
//! the job's result and announces `census.processed`.

use std::sync::Arc;

use async_trait::async_trait;
use pricing_core::census::CensusMember;
use pricing_core::quote::market_comparison;
use pricing_core::{PricingError, RatedCensus, Simulation};
use serde::{Deserialize, Serialize};
use time::Date;

use super::{Quotes, RecordPorts, context, date_of, fallback_zip, next_month_start};
use crate::census::rating_digest;
use crate::document::event::CensusProcessed;
use crate::document::{EventData, JobPayload};
use crate::event::NewEvent;
use crate::job::Job;
use crate::ports::Minter;
use crate::services::jobs::{JobHandler, JobOutput};
use crate::store::StoreError;

/// A stored market comparison: the simulation and what it was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    /// Rating digest of the census simulated.
    pub rating_digest: String,
    /// Plan-year start the ages were taken on.
    pub plan_year_start: Date,
    /// Rate-card version.
    pub card_version: String,
    /// The group's address ZIP that rated members without a priced area.
    #[serde(default)]
    pub fallback_zip: Option<String>,
    /// The simulation.
    pub simulation: Simulation,
}

impl Comparison {
    /// Parses a stored result; an unreadable one is ignored (the quote then
    /// simulates on its own).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    /// Whether this comparison prices the census of `digest` starting on
    /// `start` with card `card_version` and the group's `fallback_zip`.
    #[must_use]
    pub fn matches(
        &self,
        digest: &str,
        start: Date,
        card_version: &str,
        fallback_zip: Option<&str>,
    ) -> bool {
        self.rating_digest == digest
            && self.plan_year_start == start
            && self.card_version == card_version
            && self.fallback_zip.as_deref() == fallback_zip
    }
}

/// Runs market-comparison jobs, over the quotes service's ports and rate
/// card (the comparison is what a quote on market rates waits for).
#[derive(Clone)]
pub struct ComparisonHandler {
    quotes: Quotes,
}

impl ComparisonHandler {
    /// The handler of `quotes`.
    #[must_use]
    pub fn new(quotes: Quotes) -> Self {
        Self { quotes }
    }
}

fn store_message(e: &StoreError) -> String {
    format!("store: {e}")
}

#[async_trait]
impl JobHandler for ComparisonHandler {
    async fn run(&self, job: &Job) -> Result<JobOutput, String> {
        let scope = &job.job.scope;
        let RecordPorts {
            groups,
            census,
            clock,
            entropy,
            ..
        } = &self.quotes.ports;
        let Some(group_id) = job.job.group_id.as_ref() else {
            return Err("a market comparison needs a group".to_owned());
        };
        let counts = match &job.job.payload {
            JobPayload::MarketComparison(c) => *c,
            JobPayload::PriceOnPlan(_)
            | JobPayload::BusinessVerification(_)
            | JobPayload::Email(_) => {
                return Err("a market comparison needs the census counts".to_owned());
            }
        };
        let group = match groups.group(scope, group_id).await {
            Ok(g) => g,
            // The group is gone: nothing to compare, nothing to announce.
            Err(StoreError::NotFound) => return Ok(JobOutput::default()),
            Err(e) => return Err(store_message(&e)),
        };
        let members: Vec<CensusMember> = census
            .census(scope, group_id)
            .await
            .map_err(|e| store_message(&e))?
            .into_iter()
            .map(|m| m.member)
            .collect();
        let member_count = members.len();
        let now = clock.now_ms().div_euclid(1000);
        let start = next_month_start(date_of(now));
        let digest = rating_digest(&members);
        let card = Arc::clone(&self.quotes.card);
        let (task_scope, task_group) = (scope.clone(), group.clone());
        let simulated = tokio::task::spawn_blocking(move || {
            let ctx = context(&card, &task_scope, &task_group, start);
            RatedCensus::build(&members, ctx).map(|rated| market_comparison(&rated))
        })
        .await
        .map_err(|e| format!("the simulation stopped: {e}"))?;
        let result = match simulated {
            Ok(simulation) => Some(
                serde_json::to_string(&Comparison {
                    rating_digest: digest,
                    plan_year_start: start,
                    card_version: self.quotes.card.version().to_owned(),
                    fallback_zip: fallback_zip(&group).map(str::to_owned),
                    simulation,
                })
                .map_err(|e| e.to_string())?,
            ),
            // A census that cannot be priced is still processed: quotes
            // answer 422 with the reason when they normalise it.
            Err(
                PricingError::CensusRequired
                | PricingError::MarketUnavailable
                | PricingError::InvalidCensus(_),
            ) => None,
            Err(e) => return Err(e.to_string()),
        };
        let minter = Minter::new(entropy.as_ref());
        let event = NewEvent {
            id: minter.event_id(),
            scope: scope.clone(),
            created_at: now,
            data: EventData::CensusProcessed(CensusProcessed {
                group_id: group_id.clone(),
                received: counts.received,
                accepted: counts.accepted,
                member_count: u64::try_from(member_count).unwrap_or(u64::MAX),
                error_count: counts.error_count,
            }),
        };
        Ok(JobOutput {
            events: vec![event],
            result,
        })
    }
}

#[cfg(test)]
mod tests;
