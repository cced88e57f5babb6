//! The port of webhook endpoints, one per partner and mode.

use async_trait::async_trait;

use crate::job::NewJob;
use crate::page::{Page, PageRequest};
use crate::scope::Scope;
use crate::store::StoreResult;
use crate::webhook::attempt::{AttemptFilter, AttemptIds, DeliveryAttempt};
use crate::webhook::{EndpointState, PreviousSecret, WebhookEndpoint};

/// An endpoint's new health, as [`WebhookStore::set_health`] writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthChange {
    /// `enabled` or `disabled`.
    pub state: EndpointState,
    /// Since when every attempt has failed, Unix milliseconds; `None`
    /// after a success.
    pub failing_since_ms: Option<i64>,
    /// Jobs stored with the change (the emails of a disabling).
    pub jobs: Vec<NewJob>,
}

/// A secret rotation, as [`WebhookStore::rotate_secret`] writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRotation {
    /// The new secret, sealed.
    pub sealed_secret: Vec<u8>,
    /// The rotated-out secret still signing beside it (`None`: none).
    pub previous: Option<PreviousSecret>,
}

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

    /// Deletes the scope's endpoint and cancels its pending deliveries in
    /// one transaction: each pending event becomes `no_endpoint` (replay
    /// can send it later) and gets a `cancelled` row in the delivery log
    /// at `at_ms`, with ids from `ids`. Returns whether there was an
    /// endpoint.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn delete_endpoint(
        &self,
        scope: &Scope,
        at_ms: i64,
        ids: AttemptIds,
    ) -> StoreResult<bool>;

    /// Sets the scope's endpoint health to `change`. Returns whether an
    /// endpoint registered at `created_at` (the fencing token: a newer
    /// registration is left alone) was changed; the change's jobs are
    /// stored in the same transaction, only when it was.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn set_health(
        &self,
        scope: &Scope,
        created_at: i64,
        change: &HealthChange,
    ) -> StoreResult<bool>;

    /// Replaces the secret of the endpoint registered at `created_at`
    /// (the fencing token) as `rotation` says. Returns whether it was
    /// changed.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn rotate_secret(
        &self,
        scope: &Scope,
        created_at: i64,
        rotation: SecretRotation,
    ) -> StoreResult<bool>;

    /// The scope's delivery log, newest first.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn attempts(
        &self,
        scope: &Scope,
        filter: &AttemptFilter,
        page: &PageRequest,
    ) -> StoreResult<Page<DeliveryAttempt>>;

    /// Deletes delivery-log rows made before `before_ms`; returns how many.
    ///
    /// # Errors
    /// Only [`StoreError::Unavailable`](crate::store::StoreError::Unavailable) or [`StoreError::Internal`](crate::store::StoreError::Internal).
    async fn purge_attempts(&self, before_ms: i64) -> StoreResult<u64>;
}
