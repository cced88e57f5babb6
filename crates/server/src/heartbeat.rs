//! The heartbeat of `serve`: the process registers its owner id before it
//! serves, refreshes its heartbeat every 2 s on a thread of its own (so a
//! long simulation never delays it), sweeps the registrations of dead
//! processes now and then, and deregisters when it stops cleanly, which
//! frees its in-flight idempotency keys and job claims at once (see
//! `domain::store::process`).

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use domain::ports::Clock;
use domain::store::process::{HEARTBEAT_INTERVAL_MS, ProcessStore};
use tokio::sync::Notify;

/// Beats between two sweeps of dead processes' registrations (a minute).
const SWEEP_EVERY: u32 = 30;

/// Stops a running heartbeat.
pub struct Stopper {
    stop: Arc<Notify>,
    done: mpsc::Receiver<()>,
}

/// What the heartbeat task needs: the stop signal and the channel on which
/// it says it has deregistered.
pub struct Signals {
    stop: Arc<Notify>,
    done: mpsc::Sender<()>,
}

/// A stopper and the signals of the task it stops.
#[must_use]
pub fn signals() -> (Stopper, Signals) {
    let stop = Arc::new(Notify::new());
    let (tx, rx) = mpsc::channel();
    (
        Stopper {
            stop: Arc::clone(&stop),
            done: rx,
        },
        Signals { stop, done: tx },
    )
}

impl Stopper {
    /// Asks the heartbeat to deregister the process and waits for it, at
    /// most `patience` (an unreachable database must not hold up the exit;
    /// the registration then goes stale like a crashed process's).
    pub fn stop(self, patience: Duration) {
        self.stop.notify_one();
        // A failure is logged by the task itself; only a timeout is news.
        if matches!(
            self.done.recv_timeout(patience),
            Err(mpsc::RecvTimeoutError::Timeout)
        ) {
            tracing::warn!("the process did not deregister in time; it will be found dead");
        }
    }
}

/// Beats every [`HEARTBEAT_INTERVAL_MS`] until stopped, then deregisters.
/// A failed beat is logged and the next one tried: the process counts as
/// dead only when it stays silent past the owner timeout.
pub async fn run(processes: Arc<dyn ProcessStore>, clock: Arc<dyn Clock>, signals: Signals) {
    let interval = Duration::from_millis(HEARTBEAT_INTERVAL_MS.unsigned_abs());
    let mut beats: u32 = 0;
    loop {
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            () = signals.stop.notified() => break,
        }
        let now_ms = clock.now_ms();
        if let Err(e) = processes.heartbeat(now_ms).await {
            tracing::warn!(error = %e, "the heartbeat cannot reach the store");
            continue;
        }
        beats = beats.wrapping_add(1);
        if beats.is_multiple_of(SWEEP_EVERY) {
            match processes.sweep_processes(now_ms).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(processes = n, "swept dead processes"),
                Err(e) => tracing::warn!(error = %e, "cannot sweep dead processes"),
            }
        }
    }
    match processes.deregister_process().await {
        Ok(()) => {
            let _ = signals.done.send(());
        }
        Err(e) => tracing::warn!(error = %e, "cannot deregister the process"),
    }
}
