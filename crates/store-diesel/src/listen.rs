//! The PostgreSQL outbox listener: one connection of its own that
//! `LISTEN`s on [`OUTBOX_CHANNEL`](crate::pg::OUTBOX_CHANNEL) and moves the
//! watch on at each notification, so an idle dispatcher sleeps until some
//! process commits events rather than polling. When the connection breaks
//! it reconnects, and wakes the dispatchers once it is back (what was
//! sent meanwhile was not heard).

use std::sync::Arc;
use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt;
use tokio::sync::{oneshot, watch};

/// How long the listener waits before connecting again.
const RECONNECT: Duration = Duration::from_secs(1);

/// Listens on `url` until `stop` resolves (its sender dropped with the
/// store), moving `changes` on at each notification.
pub(crate) async fn run(
    url: Arc<str>,
    changes: watch::Sender<u64>,
    mut stop: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut stop => return,
            ended = listen(&url, &changes) => match ended {
                Ok(()) => tracing::warn!("the outbox listener's connection closed; reconnecting"),
                Err(e) => tracing::warn!(error = %e, "the outbox listener lost the database; reconnecting"),
            },
        }
        tokio::select! {
            _ = &mut stop => return,
            () = tokio::time::sleep(RECONNECT) => {}
        }
    }
}

/// One connection's life: `LISTEN`, a wake-up for whatever was missed
/// before it, then one per notification until the connection ends.
async fn listen(
    url: &str,
    changes: &watch::Sender<u64>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut conn = AsyncPgConnection::establish(url).await?;
    diesel::sql_query(format!("LISTEN {}", crate::pg::OUTBOX_CHANNEL))
        .execute(&mut conn)
        .await?;
    bump(changes);
    let mut notifications = std::pin::pin!(conn.notifications_stream());
    while let Some(notification) = notifications.next().await {
        notification?;
        bump(changes);
    }
    Ok(())
}

/// Moves the watch on.
fn bump(changes: &watch::Sender<u64>) {
    changes.send_modify(|n| *n = n.wrapping_add(1));
}
