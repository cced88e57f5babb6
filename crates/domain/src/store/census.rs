//! The port of census members and their roster state.

use async_trait::async_trait;

use crate::census::{CensusOutcome, CensusWrite, ElectionsWrite, MemberWrite, StoredMember};
use crate::ids::{GroupId, MemberId};
use crate::member::MemberFilter;
use crate::page::{GroupQuery, Page};
use crate::scope::Scope;
use crate::store::StoreResult;

/// Census members.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait CensusStore: Send + Sync {
    /// Replaces a group's census in one transaction: matches rows to
    /// existing members (by `external_id`, else email), keeps their ids,
    /// removes absent members, updates the group's member count, rating
    /// digest and status (`census_received` when ≥ 1 member), supersedes
    /// the group's open market-comparison job and enqueues `write.job`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn replace_census(
        &self,
        scope: &Scope,
        write: &CensusWrite,
    ) -> StoreResult<CensusOutcome>;

    /// A page of the group's census members that the list's filter
    /// keeps, newest first over `(created_at, id)`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn census_page<'a>(
        &self,
        scope: &Scope,
        list: GroupQuery<'a, MemberFilter>,
    ) -> StoreResult<Page<StoredMember>>;

    /// Adds one member (a new hire) with its state, then, in the same
    /// transaction, recomputes the group's count and rating digest,
    /// supersedes the open market comparison and enqueues `write.job`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such
    /// group, and [`Conflict::MemberTaken`](crate::store::Conflict::MemberTaken) when another member of the
    /// group has the external id or email.
    async fn add_member(&self, scope: &Scope, write: &MemberWrite) -> StoreResult<StoredMember>;

    /// Replaces one member's fields and state, as [`CensusStore::add_member`]
    /// does for a new one (position and first appearance kept).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope's group has no
    /// such member, and [`Conflict::MemberTaken`](crate::store::Conflict::MemberTaken) as `add_member`.
    async fn update_member(&self, scope: &Scope, write: &MemberWrite) -> StoreResult<StoredMember>;

    /// Reads one member of a group of the scope.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope's group has no
    /// such member.
    async fn member(
        &self,
        scope: &Scope,
        group: &GroupId,
        id: &MemberId,
    ) -> StoreResult<StoredMember>;

    /// Records elections: each member's new roster state, the events
    /// (`deductions.changed`) and the jobs, in one transaction under the
    /// group's lock.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such
    /// group or a member is not the group's.
    async fn record_elections(&self, scope: &Scope, write: &ElectionsWrite) -> StoreResult<()>;

    /// The whole census of a group, in the order of its last write.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn census(&self, scope: &Scope, group: &GroupId) -> StoreResult<Vec<StoredMember>>;
}
