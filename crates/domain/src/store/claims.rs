//! The port of the claims-aggregate ledger behind account spend.

use async_trait::async_trait;

use crate::account::ClaimsAggregate;
use crate::ids::GroupId;
use crate::scope::Scope;
use crate::store::StoreResult;

/// The claims-aggregate ledger behind account spend.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ClaimsStore: Send + Sync {
    /// Stores `rows` for the group, replacing rows of the same month and
    /// category, in one transaction; returns how many were written.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn import_claims(
        &self,
        scope: &Scope,
        group: &GroupId,
        rows: &[ClaimsAggregate],
    ) -> StoreResult<u32>;

    /// The group's ledger, oldest month first.
    ///
    /// # Errors
    /// MUST return [`StoreError::NotFound`](crate::store::StoreError::NotFound) when the scope has no such group.
    async fn claims(&self, scope: &Scope, group: &GroupId) -> StoreResult<Vec<ClaimsAggregate>>;
}
