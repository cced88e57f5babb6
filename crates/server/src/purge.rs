//! The purge of `serve`: on a thread of its own, at start and then every
//! five minutes ([`PURGE_INTERVAL`]), it deletes the idempotency keys and
//! group creation keys older than the 24-hour replay window (never a key
//! whose request a live process still runs) and the employer-portal
//! sessions that ended, so those tables stop growing.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use domain::services::housekeeping::{Housekeeping, PURGE_INTERVAL};
use store_diesel::Stores;
use tokio::time::MissedTickBehavior;

use crate::system::Ports;

/// The purge as `serve` starts it over a process's stores: [`run`] every
/// [`PURGE_INTERVAL`].
pub fn task(ports: &Ports) -> impl FnOnce(&Stores) -> Purge + Send + 'static {
    let clock = Arc::clone(&ports.clock);
    move |stores| {
        Box::pin(run(
            Housekeeping::new(Arc::clone(&stores.idempotency), clock)
                .with_sessions(Arc::clone(&stores.portal))
                .with_embeds(Arc::clone(&stores.embed))
                .with_attempts(Arc::clone(&stores.webhooks))
                .with_partner_users(Arc::clone(&stores.partner_users)),
            PURGE_INTERVAL,
        ))
    }
}

/// The purge's future, as [`task`] builds it.
pub type Purge = std::pin::Pin<Box<dyn Future<Output = ()>>>;

/// Purges at once, then every `every`, until the future is dropped. A
/// failure is logged and the next round tried.
pub async fn run(housekeeping: Housekeeping, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match housekeeping.purge_idempotency().await {
            Ok(0) => {}
            Ok(rows) => tracing::debug!(rows, "idempotency keys purged"),
            Err(e) => tracing::warn!(error = %e, "the idempotency purge cannot reach the store"),
        }
        match housekeeping.purge_embeds().await {
            Ok(0) => {}
            Ok(rows) => tracing::debug!(rows, "expired embed sessions purged"),
            Err(e) => tracing::warn!(error = %e, "the embed-session purge cannot reach the store"),
        }
        match housekeeping.purge_attempts().await {
            Ok(0) => {}
            Ok(rows) => tracing::debug!(rows, "old webhook delivery attempts purged"),
            Err(e) => tracing::warn!(error = %e, "the delivery-log purge cannot reach the store"),
        }
        match housekeeping.purge_sessions().await {
            Ok(0) => {}
            Ok(rows) => tracing::debug!(rows, "ended portal sessions purged"),
            Err(e) => tracing::warn!(error = %e, "the session purge cannot reach the store"),
        }
        match housekeeping.purge_partner_portal().await {
            Ok(0) => {}
            Ok(rows) => tracing::debug!(
                rows,
                "ended partner sessions and year-old audit entries purged"
            ),
            Err(e) => tracing::warn!(error = %e, "the partner portal purge cannot reach the store"),
        }
    }
}
