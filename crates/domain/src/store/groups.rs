//! The port of employer groups.

use async_trait::async_trait;

use crate::event::NewEvent;
use crate::group::{CompanyState, Group, GroupFilter, GroupStatus};
use crate::ids::GroupId;
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::scope::Scope;
use crate::store::StoreResult;

/// One forward move of a group, as [`GroupStore::advance_group`] applies
/// it in a single transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupAdvance {
    /// The status to move to (a status behind the stored one is kept).
    pub status: GroupStatus,
    /// The next company state, if the move changes it.
    pub company_state: Option<CompanyState>,
    /// Events announcing the move, appended to the outbox.
    pub events: Vec<NewEvent>,
    /// Unix seconds.
    pub now: i64,
}

/// Employer groups.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait GroupStore: Send + Sync {
    /// Stores a new group.
    ///
    /// # Errors
    /// MUST return [`Conflict::DomainTaken`](crate::store::Conflict::DomainTaken) when a group of the same mode
    /// (any partner) with the same domain is enrolled or active, and
    /// [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when the id exists.
    async fn insert_group(&self, group: &Group) -> StoreResult<()>;

    /// Stores a new group created under an `Idempotency-Key`, recording
    /// the key in the same transaction; when the key already created a
    /// group at or after `since` (Unix seconds: the replay window), stores
    /// nothing and returns that group instead. A retry whose first
    /// execution committed but died before its answer was stored thus
    /// answers with the group it made rather than making a second one.
    ///
    /// # Errors
    /// As [`GroupStore::insert_group`].
    async fn insert_group_once(
        &self,
        group: &Group,
        key: &str,
        since: i64,
    ) -> StoreResult<Option<Group>>;

    /// Reads a group of the scope.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn group(&self, scope: &Scope, id: &GroupId) -> StoreResult<Group>;

    /// Saves the writable fields of a group (name, domain, external id,
    /// address, contact, current coverage, `updated_at`).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such
    /// group, and [`Conflict::DomainTaken`](crate::store::Conflict::DomainTaken) when an enrolled or active
    /// group holds the new domain.
    async fn update_group(&self, scope: &Scope, group: &Group) -> StoreResult<()>;

    /// Moves status and company state forward as `change` says (status
    /// never moves back) and appends its events in the same transaction.
    /// The company state only moves none → `sandbox` → `prod`, checked
    /// under the group's lock.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such
    /// group, and [`Conflict::CompanyStateMoved`](crate::store::Conflict::CompanyStateMoved) when `change.company_state` is
    /// not the next state of the stored one.
    async fn advance_group(
        &self,
        scope: &Scope,
        id: &GroupId,
        change: &GroupAdvance,
    ) -> StoreResult<Group>;

    /// Whether an enrolled or active group of `mode` (any partner) holds
    /// `domain`.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn domain_held(&self, mode: Mode, domain: &str) -> StoreResult<bool>;

    /// Reads a group by id alone, whatever its partner and mode (operator
    /// commands).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown id.
    async fn find_group(&self, id: &GroupId) -> StoreResult<Group>;

    /// The scope's groups that `filter` keeps, newest first.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn groups(
        &self,
        scope: &Scope,
        filter: &GroupFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<Group>>;
}
