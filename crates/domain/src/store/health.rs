//! The port that tells whether the store answers.

use async_trait::async_trait;

use crate::store::StoreResult;

/// Whether the store answers (for `/readyz` and failing closed).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait Health: Send + Sync {
    /// Runs a trivial query.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) when the database cannot be reached.
    async fn ping(&self) -> StoreResult<()>;
}
