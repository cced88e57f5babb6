//! Members one at a time (`POST` / `PATCH /groups/{id}/members`): new
//! hires, updates and terminations, with COBRA after the enrollment; and
//! the roster (`GET /groups/{id}/members`, 404 until enrollment). Every
//! change lands on the group's census and starts its market comparison
//! again, like a census write.

use std::sync::Arc;

use pricing_core::census::{CensusMember, CensusRules, MemberStatus, validate_member};
use time::Date;

use crate::census::{MemberWrite, StoredMember};
use crate::document::JobPayload;
use crate::document::job::CensusCounts;
use crate::error::FieldError;
use crate::ids::{GroupId, MemberId};
use crate::job::NewJob;
use crate::member::{MemberFilter, MemberState, check_termination};
use crate::page::{GroupQuery, Page, PageRequest};
use crate::ports::{Clock, Entropy, JobWaker, Minter, now_secs};
use crate::scope::Scope;
use crate::services::{MemberRefusal, ServiceError};
use crate::store::{CensusStore, GroupStore};

/// The members service.
#[derive(Clone)]
pub struct Members {
    groups: Arc<dyn GroupStore>,
    census: Arc<dyn CensusStore>,
    clock: Arc<dyn Clock>,
    entropy: Arc<dyn Entropy>,
    waker: Arc<dyn JobWaker>,
}

/// A partial update as the adapter parsed it: from the stored member, the
/// member with the sent fields laid over it and the `termination_date` sent,
/// or the errors of the sent fields.
pub type MemberPatch<'a> = Box<
    dyn FnOnce(&CensusMember) -> Result<(CensusMember, Option<Date>), Vec<FieldError>> + Send + 'a,
>;

/// The errors of one member, with paths relative to the member (`zip`,
/// `dependents[0].dob`).
fn member_errors(m: &CensusMember, rules: CensusRules) -> Vec<FieldError> {
    validate_member("m", 0, m, rules)
        .into_iter()
        .map(|e| FieldError::new(e.field.trim_start_matches("m[0].").to_owned(), e.message))
        .collect()
}

fn invalid(errors: Vec<FieldError>) -> Result<(), ServiceError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Invalid(errors))
    }
}

impl Members {
    /// The service over its ports; `waker` hears of every market
    /// comparison a change queues.
    #[must_use]
    pub fn new(
        groups: Arc<dyn GroupStore>,
        census: Arc<dyn CensusStore>,
        clock: Arc<dyn Clock>,
        entropy: Arc<dyn Entropy>,
        waker: Arc<dyn JobWaker>,
    ) -> Self {
        Self {
            groups,
            census,
            clock,
            entropy,
            waker,
        }
    }

    fn job(&self, scope: &Scope, group: &GroupId, minter: &Minter<'_>) -> NewJob {
        NewJob {
            id: minter.job_id(),
            scope: scope.clone(),
            group_id: Some(group.clone()),
            payload: JobPayload::MarketComparison(CensusCounts {
                received: 1,
                accepted: 1,
                error_count: 0,
            }),
            run_after_ms: self.clock.now_ms(),
        }
    }

    /// Adds a new hire to the group's census. A terminated new hire needs
    /// its `termination_date`.
    ///
    /// # Errors
    /// [`ServiceError::Invalid`] naming each bad field;
    /// [`ServiceError::NotFound`] outside the scope;
    /// [`ServiceError::Conflict`] when another member has the external id
    /// or email.
    pub async fn add(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        member: CensusMember,
        termination_date: Option<Date>,
        rules: CensusRules,
    ) -> Result<StoredMember, ServiceError> {
        let mut errors = member_errors(&member, rules);
        let terminated = member.status == Some(MemberStatus::Terminated);
        errors.extend(check_termination(terminated, termination_date).err());
        invalid(errors)?;
        let group = self.groups.group(scope, group_id).await?;
        let mut state = MemberState::default();
        if let Some(date) = termination_date {
            state.terminate(date, group.company_state.is_some());
        }
        let minter = Minter::new(self.entropy.as_ref());
        let write = MemberWrite {
            group_id: group_id.clone(),
            id: minter.member_id(),
            member,
            state,
            job: self.job(scope, group_id, &minter),
            now: now_secs(self.clock.as_ref()),
        };
        let stored = self.census.add_member(scope, &write).await?;
        self.waker.job_queued();
        Ok(stored)
    }

    /// Reads one member of the group.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope or for another group's
    /// member.
    pub async fn get(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        id: &MemberId,
    ) -> Result<StoredMember, ServiceError> {
        Ok(self.census.member(scope, group_id, id).await?)
    }

    /// Updates a member: `patch` lays the sent fields over the stored
    /// member. A member becoming `terminated` needs a `termination_date`
    /// (sent now or already stored); after the group's enrollment it
    /// becomes COBRA-eligible until that date + 60 days. A member made
    /// `active` again loses its termination.
    ///
    /// # Errors
    /// As [`Members::add`] (with the patch's own field errors), and
    /// [`ServiceError::NotFound`] for an unknown member.
    pub async fn update(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        id: &MemberId,
        patch: MemberPatch<'_>,
        rules: CensusRules,
    ) -> Result<StoredMember, ServiceError> {
        let group = self.groups.group(scope, group_id).await?;
        let current = self.census.member(scope, group_id, id).await?;
        let (member, termination_date) = patch(&current.member).map_err(ServiceError::Invalid)?;
        let mut errors = member_errors(&member, rules);
        let terminated = member.status == Some(MemberStatus::Terminated);
        let date = termination_date.or(if terminated {
            current.state.termination_date
        } else {
            None
        });
        errors.extend(check_termination(terminated, date).err());
        invalid(errors)?;
        let mut state = current.state.clone();
        match date {
            // A new or changed termination (re)starts the COBRA window.
            Some(d) if current.state.termination_date != Some(d) => {
                state.terminate(d, group.company_state.is_some());
            }
            Some(_) => {}
            None => state.reinstate(),
        }
        let minter = Minter::new(self.entropy.as_ref());
        let write = MemberWrite {
            group_id: group_id.clone(),
            id: id.clone(),
            member,
            state,
            job: self.job(scope, group_id, &minter),
            now: now_secs(self.clock.as_ref()),
        };
        let stored = self.census.update_member(scope, &write).await?;
        self.waker.job_queued();
        Ok(stored)
    }

    /// The enrollment roster: a page of the group's members, newest first.
    ///
    /// # Errors
    /// [`ServiceError::NotFound`] outside the scope;
    /// [`MemberRefusal::NoRoster`] until the group's enrollment.
    pub async fn roster(
        &self,
        scope: &Scope,
        group_id: &GroupId,
        filter: &MemberFilter,
        page: &PageRequest,
    ) -> Result<Page<StoredMember>, ServiceError> {
        let group = self.groups.group(scope, group_id).await?;
        if group.company_state.is_none() {
            return Err(MemberRefusal::NoRoster.into());
        }
        Ok(self
            .census
            .census_page(
                scope,
                GroupQuery {
                    group: group_id,
                    filter: *filter,
                    page,
                },
            )
            .await?)
    }
}
