//! The webhook dispatcher of `serve`: a loop on a thread of its own that
//! claims due deliveries from the outbox and makes their attempts. The
//! claims live in the database (a lease per delivery, `SKIP LOCKED` on
//! PostgreSQL), so a restart resumes pending deliveries and several
//! processes never make one attempt twice.
//!
//! An idle lane does not poll: it sleeps until the earliest pending
//! delivery falls due, or until the outbox's watch says a commit appended
//! events or scheduled a delivery (in this process; on PostgreSQL in any,
//! through `LISTEN`), at most the watch's recheck.

use std::time::Duration;

use domain::services::webhooks::Webhooks;

/// The shortest idle sleep: a delivery found due but claimed by another
/// lane or process meanwhile is not looked at again in a tight loop.
pub const MIN_IDLE: Duration = Duration::from_millis(10);

/// How long the dispatcher waits after a store failure.
pub const ERROR_BACKOFF: Duration = Duration::from_secs(2);

/// Dispatcher lanes: each claims and delivers its own batches, so an
/// endpoint that takes its full 10 s holds up only the other deliveries
/// of its lane's batch.
pub const LANES: usize = 4;

/// Delivers until the future is dropped, on [`LANES`] concurrent lanes.
pub async fn run(webhooks: Webhooks) {
    let lanes: Vec<_> = (0..LANES)
        .map(|_| tokio::spawn(lane(webhooks.clone())))
        .collect();
    for lane in lanes {
        let _ = lane.await;
    }
}

/// One lane: step, or sleep when nothing is due.
async fn lane(webhooks: Webhooks) {
    let mut watch = webhooks.watch();
    loop {
        // A change from here on cuts the idle sleep short.
        watch.changes.borrow_and_update();
        match webhooks.step().await {
            Ok(0) => idle(&webhooks, &mut watch).await,
            Ok(n) => tracing::debug!(attempts = n, "webhook attempts made"),
            Err(e) => {
                tracing::warn!(error = %e, "the webhook dispatcher cannot reach the store");
                tokio::time::sleep(ERROR_BACKOFF).await;
            }
        }
    }
}

/// Sleeps until the earliest pending delivery falls due or the watch
/// moves, at most its recheck.
async fn idle(webhooks: &Webhooks, watch: &mut domain::store::OutboxWatch) {
    let wait = match webhooks.idle_wait(watch.recheck).await {
        Ok(wait) => wait.max(MIN_IDLE),
        Err(e) => {
            tracing::warn!(error = %e, "the webhook dispatcher cannot reach the store");
            ERROR_BACKOFF
        }
    };
    tokio::select! {
        () = tokio::time::sleep(wait) => {}
        changed = watch.changes.changed() => {
            // The store is gone (shutting down): no more wake-ups.
            if changed.is_err() {
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// Steps the dispatcher until nothing is due (tests and one-shot commands);
/// returns how many attempts were made.
///
/// # Errors
/// The first store failure.
pub async fn drain(webhooks: &Webhooks) -> Result<usize, domain::services::ServiceError> {
    let mut made = 0;
    loop {
        match webhooks.step().await? {
            0 => return Ok(made),
            n => made += n,
        }
    }
}
