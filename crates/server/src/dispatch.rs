//! The webhook dispatcher of `serve`: a loop on a thread of its own that
//! claims due deliveries from the outbox and makes their attempts. The
//! claims live in the database (a lease per delivery, `SKIP LOCKED` on
//! PostgreSQL), so a restart resumes pending deliveries and several
//! processes never make one attempt twice.

use std::time::Duration;

use domain::services::webhooks::Webhooks;

/// How long an idle dispatcher waits before looking again. Retries are due
/// 1 s, 5 s and 25 s after a failure, so this bounds how late one starts.
pub const IDLE_POLL: Duration = Duration::from_millis(100);

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
    loop {
        match webhooks.step().await {
            Ok(0) => tokio::time::sleep(IDLE_POLL).await,
            Ok(n) => tracing::debug!(attempts = n, "webhook attempts made"),
            Err(e) => {
                tracing::warn!(error = %e, "the webhook dispatcher cannot reach the store");
                tokio::time::sleep(ERROR_BACKOFF).await;
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
