//! The port of rate-limit counters.

use async_trait::async_trait;

use crate::rate_limit::Policy;
use crate::store::StoreResult;

/// Rate-limit counters.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Counts one hit of `bucket` in the window of `policy` holding `now`,
    /// unless the counter already reached the limit. Returns the count
    /// after the hit, or `None` when refused. Atomic across every process
    /// sharing the store.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn hit(&self, policy: &Policy, bucket: &str, now: i64) -> StoreResult<Option<u32>>;
}
