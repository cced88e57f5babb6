//! The port of onboarding checklists: a change stored with its events, its
//! jobs and, when it completes the checklist in test mode, the company's
//! go-live, all in one transaction.

use async_trait::async_trait;

use crate::enrollment::Enrollment;
use crate::event::NewEvent;
use crate::ids::{EnrollmentId, GroupId};
use crate::job::NewJob;
use crate::onboarding::Checklist;
use crate::scope::Scope;
use crate::store::StoreResult;

/// A checklist change.
#[derive(Debug, Clone, PartialEq)]
pub struct OnboardingWrite {
    /// The enrollment.
    pub enrollment_id: EnrollmentId,
    /// Its group.
    pub group_id: GroupId,
    /// The revision the change was made on.
    pub revision: i64,
    /// The checklist after the change.
    pub checklist: Checklist,
    /// `enrollment.updated` (and `group.state_changed`), in order.
    pub events: Vec<NewEvent>,
    /// Jobs the change queues (a sandbox verifier's delayed answer).
    pub jobs: Vec<NewJob>,
    /// Moves the group to `active` and its company `sandbox` → `prod`.
    pub go_live: bool,
    /// Unix seconds.
    pub now: i64,
}

/// Onboarding checklists.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait OnboardingStore: Send + Sync {
    /// Stores `write.checklist` as revision `write.revision + 1` with its
    /// events and jobs, taking the group live when `write.go_live`.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such
    /// enrollment, [`Conflict::OnboardingMoved`](crate::store::Conflict::OnboardingMoved) when the stored revision is
    /// not `write.revision` (nothing is written), and
    /// [`Conflict::CompanyStateMoved`](crate::store::Conflict::CompanyStateMoved) when `go_live` finds the
    /// company already `prod`.
    async fn save_onboarding(&self, scope: &Scope, write: &OnboardingWrite) -> StoreResult<()>;

    /// The enrollment of a group found by its id alone (the operator's
    /// commands).
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the group has no
    /// enrollment.
    async fn find_enrollment(&self, group: &GroupId) -> StoreResult<Enrollment>;
}
