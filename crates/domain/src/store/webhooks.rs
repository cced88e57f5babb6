//! The port of webhook endpoints, one per partner and mode.

use async_trait::async_trait;

use crate::scope::Scope;
use crate::store::StoreResult;
use crate::webhook::WebhookEndpoint;

/// Webhook endpoints, one per partner and mode.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Stores the scope's endpoint, replacing the one registered before
    /// (its URL and secret).
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn put_endpoint(&self, endpoint: &WebhookEndpoint) -> StoreResult<()>;

    /// The scope's endpoint, if one is registered.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn endpoint(&self, scope: &Scope) -> StoreResult<Option<WebhookEndpoint>>;
}
