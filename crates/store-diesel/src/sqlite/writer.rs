//! SQLite's writes in group commits, and where a connection runs its
//! statements.
//!
//! SQLite admits one writer, and with `synchronous = FULL` every commit
//! waits for an `fsync` (about a millisecond on the project's machines):
//! one commit per write caps a process at about a thousand writes a second
//! and queues concurrent writers behind each other's syncs. The [`Writer`]
//! owns the one write connection on a thread of its own and lends it to
//! one writer at a time; each writer's transaction is a savepoint inside
//! the batch's `BEGIN IMMEDIATE` transaction, and the writers that queued
//! while the batch ran join it, so one `COMMIT` (one sync) settles them
//! all. A writer is answered only once its batch has committed: what it
//! reports as written is durable, exactly as with a commit of its own.
//! A writer whose transaction fails rolls back to its savepoint and takes
//! nothing of the batch with it; a writer dropped in the middle (a
//! cancelled request) is rolled back the same way when its turn comes
//! back; a batch whose `COMMIT` fails answers every writer in it with the
//! error, and nothing of it is kept.
//!
//! [`Runner`] decides where statements run. They run inline, on the
//! caller's thread: an indexed read or a one-row write is a few
//! microseconds, less than handing it to a blocking thread and back (and
//! a batch's writers run one after another, so those hand-offs would add
//! up on the write path). Inside [`OFFLOAD`] — writes and reads of up to
//! tens of thousands of rows (`bulk_write_tx!`, `offload!`) — they run on
//! tokio's blocking threads, so a census of ten thousand members does not
//! hold up the other requests of an HTTP worker. The `COMMIT`, and its
//! `fsync`, always runs on the write thread.

use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use diesel::connection::{AnsiTransactionManager, TransactionManager as _};
use diesel::{ConnectionResult, QueryResult};
use diesel_async::sync_connection_wrapper::SpawnBlocking;
use diesel_async::{AsyncConnection as _, SimpleAsyncConnection as _};
use domain::store::{StoreError, StoreResult};
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot, watch};

use super::{Conn, PRAGMAS};

tokio::task_local! {
    /// Set around the futures whose statements run on a blocking thread
    /// (see [`Runner`]).
    pub(crate) static OFFLOAD: ();
}

/// The most writers one commit carries, so that a steady stream of writers
/// still commits regularly.
const MAX_BATCH: usize = 64;

/// Runs a connection's statements inline, or on a blocking thread inside
/// [`OFFLOAD`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Runner;

impl SpawnBlocking for Runner {
    fn spawn_blocking<'a, R>(
        &mut self,
        task: impl FnOnce() -> R + Send + 'static,
    ) -> BoxFuture<'a, Result<R, Box<dyn Error + Send + Sync + 'static>>>
    where
        R: Send + 'static,
    {
        if OFFLOAD.try_with(|()| ()).is_ok() {
            // A dropped caller leaves the task to finish on its own: the
            // connection's lock is held until it does.
            let handle = tokio::task::spawn_blocking(task);
            Box::pin(async move { handle.await.map_err(Into::into) })
        } else {
            Box::pin(std::future::ready(Ok(task())))
        }
    }

    fn get_runtime() -> Self {
        Self
    }
}

/// What a batch's `COMMIT` answered, shared by its writers.
type Outcome = Option<Result<(), Arc<str>>>;

/// A writer's request for its turn.
type Ask = oneshot::Sender<Result<Turn, Arc<str>>>;

/// A batch's commit that failed, as each of its writers reports it.
#[derive(Debug, thiserror::Error)]
#[error("the write was not committed: {0}")]
struct NotCommitted(Arc<str>);

/// The handle on a store's write thread. Dropping it ends the thread and
/// waits for it, so the write connection is closed when the store is.
#[derive(Debug)]
pub(crate) struct Writer {
    asks: Option<mpsc::UnboundedSender<Ask>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Batches committed so far.
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests"))]
    pub(crate) commits: Arc<AtomicU64>,
}

impl Writer {
    /// Starts the write thread of the database file at `path`; its
    /// connection opens at the first write.
    pub(crate) fn start(path: &str) -> StoreResult<Self> {
        let (asks, queue) = mpsc::unbounded_channel();
        let path = path.to_owned();
        let commits = Arc::new(AtomicU64::new(0));
        let counted = commits.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| StoreError::Internal(Box::new(e)))?;
        let thread = std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || runtime.block_on(serve(queue, path, &counted)))
            .map_err(|e| StoreError::Internal(Box::new(e)))?;
        Ok(Self {
            asks: Some(asks),
            thread: Some(thread),
            commits,
        })
    }

    /// Waits for the write connection, inside the open batch.
    pub(crate) async fn turn(&self) -> StoreResult<Turn> {
        let (ask, answer) = oneshot::channel();
        let stopped = || StoreError::Unavailable("the SQLite writer stopped".into());
        self.asks
            .as_ref()
            .ok_or_else(stopped)?
            .send(ask)
            .map_err(|_| stopped())?;
        answer
            .await
            .map_err(|_| stopped())?
            .map_err(|e| StoreError::Unavailable(Box::new(NotCommitted(e))))
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // The thread ends at the closed queue, after any batch under way.
        drop(self.asks.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where a writer left the connection it hands back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Left {
    /// Outside its savepoint: done, or never entered.
    Clean,
    /// Inside its savepoint (dropped in the middle): roll it back.
    Inside,
    /// Its savepoint could not be released or rolled back: the batch's
    /// transaction is in doubt, so it commits now (or fails) and takes no
    /// one else.
    Doubtful,
}

/// A writer's use of the write connection, inside the open batch. Dropping
/// it hands the connection back.
pub(crate) struct Turn {
    conn: Option<Conn>,
    back: Option<oneshot::Sender<(Conn, Left)>>,
    outcome: watch::Receiver<Outcome>,
    left: Left,
}

impl Turn {
    /// The connection.
    pub(crate) fn conn(&mut self) -> &mut Conn {
        self.conn
            .as_mut()
            .unwrap_or_else(|| unreachable!("a turn's connection is taken only when it is dropped"))
    }

    /// Opens this writer's savepoint.
    ///
    /// # Errors
    /// The database's.
    pub(crate) async fn enter(&mut self) -> QueryResult<()> {
        self.left = Left::Inside;
        self.conn()
            .spawn_blocking(AnsiTransactionManager::begin_transaction)
            .await
    }

    /// Releases the savepoint (`keep`) or rolls it back.
    ///
    /// # Errors
    /// The database's; the batch then commits without further writers.
    pub(crate) async fn leave(&mut self, keep: bool) -> QueryResult<()> {
        let end = if keep {
            AnsiTransactionManager::commit_transaction
        } else {
            AnsiTransactionManager::rollback_transaction
        };
        let r = self.conn().spawn_blocking(end).await;
        self.left = if r.is_ok() {
            Left::Clean
        } else {
            Left::Doubtful
        };
        r
    }

    /// Hands the connection back and waits for the batch's commit.
    ///
    /// # Errors
    /// [`StoreError::Internal`] when the batch did not commit.
    pub(crate) async fn committed(self) -> StoreResult<()> {
        let mut outcome = self.outcome.clone();
        drop(self);
        let settled = outcome
            .wait_for(Option::is_some)
            .await
            .map_err(|_| StoreError::Unavailable("the SQLite writer stopped".into()))?;
        match settled.as_ref() {
            Some(Err(e)) => Err(StoreError::Internal(Box::new(NotCommitted(e.clone())))),
            _ => Ok(()),
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let (Some(conn), Some(back)) = (self.conn.take(), self.back.take()) {
            let _ = back.send((conn, self.left));
        }
    }
}

/// The write thread: a batch begins at the first writer waiting, lends the
/// connection to each writer queued by then (up to [`MAX_BATCH`]), and
/// commits once none is left.
async fn serve(mut queue: mpsc::UnboundedReceiver<Ask>, path: String, commits: &AtomicU64) {
    let mut kept: Option<Conn> = None;
    while let Some(first) = queue.recv().await {
        let opened = match kept.take() {
            Some(conn) => Ok(conn),
            None => open(&path).await.map_err(|e| message(&e)),
        };
        let mut conn = match opened {
            Ok(mut conn) => match conn
                .spawn_blocking(|c| {
                    AnsiTransactionManager::begin_transaction_sql(c, "BEGIN IMMEDIATE")
                })
                .await
            {
                Ok(()) => conn,
                Err(e) => {
                    // Dropped: a connection that cannot begin is not kept.
                    let _ = first.send(Err(message(&e)));
                    continue;
                }
            },
            Err(e) => {
                let _ = first.send(Err(e));
                continue;
            }
        };
        let (settle, outcome) = watch::channel(None);
        let mut next = Some(first);
        let mut lent = 0;
        let mut doubtful = false;
        while let Some(ask) = next.take() {
            let (back, returned) = oneshot::channel();
            let turn = Turn {
                conn: Some(conn),
                back: Some(back),
                outcome: outcome.clone(),
                left: Left::Clean,
            };
            // A writer that is gone hands the turn straight back (its drop).
            drop(ask.send(Ok(turn)));
            let Ok((back, left)) = returned.await else {
                unreachable!("a turn hands its connection back when dropped")
            };
            conn = back;
            match left {
                Left::Clean => {}
                Left::Inside => doubtful |= heal(&mut conn).await.is_err(),
                Left::Doubtful => doubtful = true,
            }
            lent += 1;
            if !doubtful && lent < MAX_BATCH {
                next = queue.try_recv().ok();
            }
        }
        let committed = conn
            .spawn_blocking(AnsiTransactionManager::commit_transaction)
            .await;
        match committed {
            Ok(()) => {
                kept = Some(conn);
                commits.fetch_add(1, Ordering::Relaxed);
                settle.send_replace(Some(Ok(())));
            }
            Err(e) => {
                // Closing the connection rolls back whatever is left of it.
                drop(conn);
                settle.send_replace(Some(Err(message(&e))));
            }
        }
    }
}

/// Rolls back the savepoint a dropped writer left open (waiting, through
/// the connection's lock, for its last statement to end).
async fn heal(conn: &mut Conn) -> QueryResult<()> {
    conn.spawn_blocking(|c| {
        while AnsiTransactionManager::transaction_manager_status_mut(c)
            .transaction_depth()?
            .is_some_and(|d| d.get() > 1)
        {
            AnsiTransactionManager::rollback_transaction(c)?;
        }
        Ok(())
    })
    .await
}

/// The write connection, set up as the pool's are.
async fn open(path: &str) -> ConnectionResult<Conn> {
    let mut conn = Conn::establish(path).await?;
    conn.batch_execute(PRAGMAS)
        .await
        .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
    Ok(conn)
}

fn message(e: &dyn std::fmt::Display) -> Arc<str> {
    e.to_string().into()
}

#[cfg(test)]
mod tests;
