//! Requests of one process that wait for PostgreSQL together: those made
//! while a statement (or transaction) is under way queue up and go as the
//! next one, from a task of their own, so that a busy process spends one
//! round trip and one commit on many requests instead of one each, and a
//! request dropped while it waits (a client gone) never leaves the others
//! waiting. A batcher may keep more than one batch under way (each on its
//! own connection), so that one batch's commit waiting for its flush does
//! not hold back the next. Used for the rate-limit hits (with the group
//! reads riding on them, `hits.rs`) and for the webhook writes requests
//! make (`writes.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use domain::store::StoreError;
use tokio::sync::oneshot;

/// The items waiting for the next batch, and how many senders are at work.
pub(crate) struct Batcher<T, A> {
    queue: Mutex<Vec<(T, oneshot::Sender<A>)>>,
    senders: AtomicUsize,
    /// The most items one batch carries.
    max: usize,
    /// The most batches under way at once.
    max_senders: usize,
}

impl<T, A> Batcher<T, A>
where
    T: Send + 'static,
    A: Send + 'static,
{
    /// A batcher of at most `max` items a batch, one batch at a time.
    pub(crate) fn new(max: usize) -> Self {
        Self::with_senders(max, 1)
    }

    /// A batcher of at most `max` items a batch and `senders` batches
    /// under way at once.
    pub(crate) fn with_senders(max: usize, senders: usize) -> Self {
        Self {
            queue: Mutex::new(Vec::new()),
            senders: AtomicUsize::new(0),
            max: max.max(1),
            max_senders: senders.max(1),
        }
    }

    /// Queues `item` for the next batch, starting a sender (`send`: the
    /// answers of a batch, in its order) when fewer than the most are at
    /// work, and waits for the item's answer; `None` when the batch gave
    /// none (the sender stopped, or answered fewer than it was given).
    pub(crate) async fn submit<F, Fut>(self: &Arc<Self>, item: T, send: F) -> Option<A>
    where
        F: Fn(Vec<T>) -> Fut + Send + 'static,
        Fut: Future<Output = Vec<A>> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        self.queue.lock().ok()?.push((item, answer));
        if self.start_sender() {
            tokio::spawn(Arc::clone(self).send_all(send));
        }
        answered.await.ok()
    }

    /// Counts one sender more unless the most are at work: whether it may
    /// start.
    fn start_sender(&self) -> bool {
        self.senders
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max_senders).then_some(n + 1)
            })
            .is_ok()
    }

    /// Sends the queued items, batch after batch, until none is left.
    async fn send_all<F, Fut>(self: Arc<Self>, send: F)
    where
        F: Fn(Vec<T>) -> Fut,
        Fut: Future<Output = Vec<A>>,
    {
        loop {
            let batch = self.take();
            if batch.is_empty() {
                self.senders.fetch_sub(1, Ordering::SeqCst);
                // An item queued after the take may have found every
                // sender at work and started none: send it, unless
                // another sender starts for it.
                if self.nothing_queued() || !self.start_sender() {
                    return;
                }
                continue;
            }
            let (items, answers): (Vec<T>, Vec<_>) = batch.into_iter().unzip();
            for (answer, to) in send(items).await.into_iter().zip(answers) {
                let _ = to.send(answer);
            }
        }
    }

    /// Up to `max` queued items, oldest first.
    fn take(&self) -> Vec<(T, oneshot::Sender<A>)> {
        let Ok(mut queue) = self.queue.lock() else {
            return Vec::new();
        };
        let n = queue.len().min(self.max);
        queue.drain(..n).collect()
    }

    /// Whether nothing is queued.
    fn nothing_queued(&self) -> bool {
        self.queue.lock().map_or(true, |q| q.is_empty())
    }
}

/// A batch's failure, told to each of its items as the store's error it
/// was: unavailable (the database cannot be reached) or internal.
#[derive(Debug, Clone)]
pub(crate) enum Failed {
    Unavailable(String),
    Internal(String),
}

impl Failed {
    pub(crate) fn of(e: &StoreError) -> Self {
        match e {
            StoreError::Unavailable(e) => Self::Unavailable(e.to_string()),
            other => Self::Internal(other.to_string()),
        }
    }

    pub(crate) fn store_error(&self) -> StoreError {
        match self {
            Self::Unavailable(m) => StoreError::Unavailable(m.clone().into()),
            Self::Internal(m) => StoreError::Internal(m.clone().into()),
        }
    }
}

impl From<Failed> for StoreError {
    fn from(failed: Failed) -> Self {
        failed.store_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Gate = Arc<tokio::sync::Semaphore>;
    type Sizes = Arc<Mutex<Vec<usize>>>;
    type Answers = std::pin::Pin<Box<dyn Future<Output = Vec<usize>> + Send>>;

    /// A sender answering each item with `answer` of it, which notes each
    /// batch's size and then waits for a permit of the gate.
    fn gated(
        answer: fn(usize) -> usize,
    ) -> (
        Gate,
        Sizes,
        impl Fn(Vec<usize>) -> Answers + Clone + Send + 'static,
    ) {
        let gate: Gate = Arc::new(tokio::sync::Semaphore::new(0));
        let sizes: Sizes = Arc::new(Mutex::new(Vec::new()));
        let send = {
            let (gate, sizes) = (Arc::clone(&gate), Arc::clone(&sizes));
            move |items: Vec<usize>| -> Answers {
                let (gate, sizes) = (Arc::clone(&gate), Arc::clone(&sizes));
                Box::pin(async move {
                    sizes.lock().unwrap().push(items.len());
                    gate.acquire().await.unwrap().forget();
                    items.into_iter().map(answer).collect()
                })
            }
        };
        (gate, sizes, send)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn items_queued_during_a_batch_go_together_in_the_next_ones() {
        let batcher = Arc::new(Batcher::<usize, usize>::new(8));
        // The first batch waits at the gate until every item is queued.
        let (gate, sizes, send) = gated(|i| i * 10);
        let items: Vec<_> = (0..100_usize)
            .map(|i| {
                let (batcher, send) = (Arc::clone(&batcher), send.clone());
                tokio::spawn(async move { (i, batcher.submit(i, send).await) })
            })
            .collect();
        let first = loop {
            let first = sizes.lock().unwrap().first().copied();
            let queued = batcher.queue.lock().unwrap().len();
            if let Some(first) = first.filter(|f| f + queued == 100) {
                break first;
            }
            tokio::task::yield_now().await;
        };
        gate.add_permits(100);
        for done in futures_util::future::join_all(items).await {
            let (i, answer) = done.unwrap();
            assert_eq!(answer, Some(i * 10), "each item its own answer");
        }
        let rest = 100 - first;
        let mut expected = vec![first];
        expected.extend(std::iter::repeat_n(8, rest / 8));
        if rest % 8 > 0 {
            expected.push(rest % 8);
        }
        assert_eq!(*sizes.lock().unwrap(), expected);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batcher_of_two_senders_keeps_two_batches_under_way() {
        let batcher = Arc::new(Batcher::<usize, usize>::with_senders(8, 2));
        let (gate, sizes, send) = gated(|i| i + 1);
        let submit = |i: usize| {
            let (batcher, send) = (Arc::clone(&batcher), send.clone());
            tokio::spawn(async move { (i, batcher.submit(i, send).await) })
        };
        let wait_for = async |batches: usize, queued: usize| loop {
            let started = sizes.lock().unwrap().len();
            if started == batches && batcher.queue.lock().unwrap().len() == queued {
                return;
            }
            tokio::task::yield_now().await;
        };
        let mut items = vec![submit(0)];
        wait_for(1, 0).await;
        // The first batch waits at the gate: a second sender takes the next.
        items.push(submit(1));
        wait_for(2, 0).await;
        // Both wait: the rest queue for whichever is free first.
        items.extend((2..10).map(submit));
        wait_for(2, 8).await;
        gate.add_permits(3);
        for done in futures_util::future::join_all(items).await {
            let (i, answer) = done.unwrap();
            assert_eq!(answer, Some(i + 1), "each item its own answer");
        }
        assert_eq!(*sizes.lock().unwrap(), vec![1, 1, 8]);
        assert_eq!(batcher.senders.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn an_item_the_batch_did_not_answer_gets_none() {
        let batcher = Arc::new(Batcher::<u32, u32>::new(4));
        let answer = batcher
            .submit(1, |_items: Vec<u32>| async { Vec::new() })
            .await;
        assert_eq!(answer, None);
    }
}
