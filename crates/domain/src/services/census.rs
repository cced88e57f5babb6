//! Census replace (`PUT /groups/{id}/census`): per-row validation, the
//! in-write duplicate rule, all-invalid → 400, dry runs, and one atomic
//! store write that also enqueues the market comparison.

use pricing_core::census::{CensusMember, CensusRules, validate_member};

use crate::census::{
    CensusWrite, MAX_CENSUS_MEMBERS, StoredMember, duplicate_errors, rating_digest,
};
use crate::document::JobPayload;
use crate::document::job::CensusCounts;
use crate::error::FieldError;
use crate::group::Group;
use crate::ids::GroupId;
use crate::job::NewJob;
use crate::page::{GroupQuery, Page, PageRequest};
use crate::ports::{Minter, now_secs};
use crate::scope::Scope;
use crate::services::{RecordPorts, ServiceError, with_fresh_id};

/// Array path of census rows in field errors.
pub const ROWS: &str = "members";

/// One row as the adapter parsed it: a member, or the errors that kept it
/// from parsing (unknown fields, wrong types).
pub type RowInput = Result<CensusMember, Vec<FieldError>>;

/// The answer to a census write (contract section 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CensusResult {
    /// Group.
    pub group_id: GroupId,
    /// Rows sent.
    pub received: u32,
    /// Rows accepted.
    pub accepted: u32,
    /// Members in the census after the write.
    pub member_count: u32,
    /// One entry per failing field of a rejected row.
    pub errors: Vec<FieldError>,
    /// Whether this was a dry run (nothing changed).
    pub dry_run: bool,
}

/// The census service.
#[derive(Clone)]
pub struct Census {
    ports: RecordPorts,
}

/// A page of a group's census, with the group it belongs to.
#[derive(Debug, Clone)]
pub struct CensusPage {
    /// The group (its member count and last change).
    pub group: Group,
    /// The page of members.
    pub members: Page<StoredMember>,
}

impl Census {
    /// The service over its ports (the census, the groups, the clock, ids
    /// and the waker, which hears of every market comparison a write
    /// queues).
    #[must_use]
    pub fn new(ports: RecordPorts) -> Self {
        Self { ports }
    }

    /// A page of the group's census, newest member first.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the caller's scope.
    pub async fn page(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        page: &PageRequest,
    ) -> Result<CensusPage, ServiceError> {
        let group = self.ports.groups.group(scope, group_id).await?;
        let members = self
            .ports
            .census
            .census_page(scope, GroupQuery::all(group_id, page))
            .await?;
        Ok(CensusPage { group, members })
    }

    /// Replaces the group's census. `rules` carries the broker
    /// date-of-birth rule. Valid rows are applied and invalid rows come back
    /// in `errors`; when rows were sent and none is valid, nothing changes
    /// and the answer is [`ServiceError::Invalid`] with every row's errors.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] (over 10,000 rows, or no valid row);
    /// [`ServiceError::NotFound`] outside the caller's scope.
    pub async fn replace(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        rows: Vec<RowInput>,
        rules: CensusRules,
        dry_run: bool,
    ) -> Result<CensusResult, ServiceError> {
        if rows.len() > MAX_CENSUS_MEMBERS {
            return Err(ServiceError::Invalid(vec![FieldError::new(
                ROWS,
                format!("at most {MAX_CENSUS_MEMBERS} members per write"),
            )]));
        }
        // The group must exist in scope before anything else is said.
        let _group = self.ports.groups.group(scope, group_id).await?;
        let received = rows.len();
        let mut errors = Vec::new();
        let mut valid: Vec<(usize, CensusMember)> = Vec::with_capacity(received);
        for (index, row) in rows.into_iter().enumerate() {
            match row {
                Ok(member) => {
                    let errs = validate_member(ROWS, index, &member, rules);
                    if errs.is_empty() {
                        valid.push((index, member));
                    } else {
                        errors.extend(errs);
                    }
                }
                Err(errs) => errors.extend(errs),
            }
        }
        let dups = {
            let refs: Vec<(usize, &CensusMember)> = valid.iter().map(|(i, m)| (*i, m)).collect();
            duplicate_errors(ROWS, &refs)
        };
        if !dups.is_empty() {
            let bad: Vec<usize> = dups.iter().filter_map(|e| e.index).collect();
            valid.retain(|(i, _)| !bad.contains(i));
            errors.extend(dups);
        }
        errors.sort_by_key(|e| e.index);
        if received > 0 && valid.is_empty() {
            return Err(ServiceError::Invalid(errors));
        }
        let accepted = u32::try_from(valid.len()).unwrap_or(u32::MAX);
        let received = u32::try_from(received).unwrap_or(u32::MAX);
        if dry_run {
            return Ok(CensusResult {
                group_id: group_id.clone(),
                received,
                accepted,
                member_count: accepted,
                errors,
                dry_run,
            });
        }
        let now_ms = self.ports.clock.now_ms();
        let now = now_secs(self.ports.clock.as_ref());
        let minter = Minter::new(self.ports.entropy.as_ref());
        let members: Vec<CensusMember> = valid.into_iter().map(|(_, m)| m).collect();
        let mut write = CensusWrite {
            group_id: group_id.clone(),
            fresh_ids: members.iter().map(|_| minter.member_id()).collect(),
            rating_digest: rating_digest(&members),
            rows: members,
            job: Some(NewJob {
                id: minter.job_id(),
                scope: scope.clone(),
                group_id: Some(group_id.clone()),
                payload: JobPayload::MarketComparison(CensusCounts {
                    received: u64::from(received),
                    accepted: u64::from(accepted),
                    error_count: u64::try_from(errors.len()).unwrap_or(u64::MAX),
                }),
                run_after_ms: now_ms,
            }),
            now,
        };
        // A fresh id that collides with any stored one (48 random bits over
        // every member of every group) fails the whole transaction; mint
        // new ones and write again.
        let mut first = true;
        let outcome = with_fresh_id::<_, ServiceError>(async || {
            if !std::mem::take(&mut first) {
                write.fresh_ids = write.rows.iter().map(|_| minter.member_id()).collect();
                if let Some(job) = write.job.as_mut() {
                    job.id = minter.job_id();
                }
            }
            self.ports.census.replace_census(scope, &write).await
        })
        .await?;
        // The write queued the market comparison: start it now rather than
        // at the worker's next poll.
        self.ports.waker.job_queued();
        Ok(CensusResult {
            group_id: group_id.clone(),
            received,
            accepted,
            member_count: outcome.member_count,
            errors,
            dry_run,
        })
    }
}
#[cfg(test)]
mod tests;
