//! The port of quotes, price-on-plan leads and enrollments.

use async_trait::async_trait;

use crate::census::CensusWrite;
use crate::enrollment::Enrollment;
use crate::event::NewEvent;
use crate::group::Group;
use crate::ids::{EnrollmentId, GroupId, QuoteId};
use crate::job::NewJob;
use crate::page::{GroupQuery, Page};
use crate::quote::{Quote, QuoteFilter, QuoteStatus};
use crate::scope::Scope;
use crate::store::StoreResult;

/// A price-on-plan lead: a new group with its census, the quote that
/// prices it and the job that finishes the pricing.
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    /// The new group.
    pub group: Group,
    /// Its census (`job` is ignored: a lead starts no market comparison).
    pub census: CensusWrite,
    /// The quote, status `pricing`.
    pub quote: Quote,
    /// The pricing job.
    pub job: NewJob,
    /// When set, the caller prices the job itself and holds its claim
    /// until then (Unix milliseconds); otherwise the job is queued.
    pub claimed_until_ms: Option<i64>,
}

/// Quotes and enrollments.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait QuoteStore: Send + Sync {
    /// Stores a quote and moves its group to at least `quoted`, appending
    /// `events` in the same transaction.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn insert_quote(&self, quote: &Quote, events: &[NewEvent]) -> StoreResult<()>;

    /// Reads a quote of the scope.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such quote.
    async fn quote(&self, scope: &Scope, id: &QuoteId) -> StoreResult<Quote>;

    /// Reads a quote by id alone, whatever its partner and mode (operator
    /// commands).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) for an unknown id.
    async fn find_quote(&self, id: &QuoteId) -> StoreResult<Quote>;

    /// Changes a quote's status and document, appending `events` in the
    /// same transaction (`quote.finalized`), when the stored status may move
    /// to `status` (see `QuoteStatus::predecessors`).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such
    /// quote, and [`Conflict::QuoteStatusMoved`](crate::store::Conflict::QuoteStatusMoved) when its stored status
    /// cannot move to `status`.
    async fn update_quote(
        &self,
        scope: &Scope,
        id: &QuoteId,
        status: QuoteStatus,
        body: &crate::document::QuoteDocument,
        events: &[NewEvent],
    ) -> StoreResult<()>;

    /// Stores a price-on-plan lead in one transaction: the new group, its
    /// census (status `census_received`, count and rating digest set, no
    /// market comparison), the quote (group → `quoted`) and the pricing
    /// job — queued, or already claimed by the caller (running, attempt 1,
    /// leased until `claimed_until_ms`) when that is set.
    ///
    /// # Errors
    /// MUST return [`Conflict::IdTaken`](crate::store::Conflict::IdTaken) when the group, a member, the
    /// quote or the job id exists, and [`Conflict::DomainTaken`](crate::store::Conflict::DomainTaken) when an
    /// enrolled or active group of the mode holds the group's domain.
    async fn insert_lead(&self, lead: &Lead) -> StoreResult<()>;

    /// The scope's newest price-on-plan quote for `request_digest` that
    /// has not expired at `now` (Unix seconds), if any.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn lead_quote(
        &self,
        scope: &Scope,
        request_digest: &str,
        now: i64,
    ) -> StoreResult<Option<Quote>>;

    /// A page of the group's quotes that the list's filter keeps, newest
    /// first.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn quotes<'a>(
        &self,
        scope: &Scope,
        list: GroupQuery<'a, QuoteFilter>,
    ) -> StoreResult<Page<Quote>>;

    /// Stores the group's enrollment, moves the group to `enrolled` with
    /// company state `sandbox`, and appends `events`, in one transaction —
    /// with, for a hosted enrollment, its employer-portal account, its first
    /// set-password link `portal` and `jobs` (the invitation email).
    ///
    /// # Errors
    /// MUST return [`Conflict::AlreadyEnrolled`](crate::store::Conflict::AlreadyEnrolled) when the group has one,
    /// [`Conflict::QuoteStale`](crate::store::Conflict::QuoteStale) when the quote's rating digest is no longer
    /// the group's (checked under the group's lock),
    /// [`Conflict::DomainTaken`](crate::store::Conflict::DomainTaken) when another group of the mode holds the
    /// domain, and [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn insert_enrollment(
        &self,
        enrollment: &Enrollment,
        events: &[NewEvent],
        portal: Option<crate::portal::NewLink>,
        jobs: &[crate::job::NewJob],
    ) -> StoreResult<()>;

    /// Reads an enrollment of the scope.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such enrollment.
    async fn enrollment(&self, scope: &Scope, id: &EnrollmentId) -> StoreResult<Enrollment>;

    /// The group's enrollment, if any.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn group_enrollment(
        &self,
        scope: &Scope,
        group: &GroupId,
    ) -> StoreResult<Option<Enrollment>>;
}
