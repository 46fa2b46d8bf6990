//! Items of a sequence mapped on several threads and handed back in their order, with a
//! bounded number ahead of the consumer: the input's chunks are parsed this way.
//!
//! A thread of its own draws the items (reading and cutting the input); each item's work goes
//! to a shared pool, and a one-place channel per item carries its result back. The consumer
//! takes those channels in order, so results come back in order whichever thread finishes
//! first, and the producer stops drawing when `ahead` items wait for the consumer.

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::OnceLock;

/// Most threads the pool gets: parsing runs at about 2.5M reads/s per core, so 32 are far
/// more than any GPU host needs, and each thread lets two more chunks wait in memory.
const MAX_THREADS: usize = 32;

/// The pool that maps items: one thread per core, up to [`MAX_THREADS`]. Its jobs never wait
/// on anything, so every reader in the process can share it.
fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(MAX_THREADS);
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("bcuda-parse-{i}"))
            .build()
            .expect("a thread pool for parsing")
    })
}

/// Threads mapping items (the size of the shared pool).
pub fn threads() -> usize {
    pool().current_num_threads()
}

/// The results of [`map_in_order`], in the order of the items.
pub struct InOrder<T> {
    pending: Receiver<Receiver<Result<T, String>>>,
}

impl<T> Iterator for InOrder<T> {
    /// An item's result, or the message of the panic that stopped its work.
    type Item = Result<T, String>;
    fn next(&mut self) -> Option<Result<T, String>> {
        let result = self.pending.recv().ok()?;
        Some(result.recv().unwrap_or_else(|_| Err("its work ended without a result".into())))
    }
}

/// `map` applied to each of `items` on the shared pool, at most `ahead` items beyond what the
/// consumer has taken. Dropping the [`InOrder`] stops the producer at its next item.
pub fn map_in_order<X, T, I, F>(items: I, map: F, ahead: usize) -> InOrder<T>
where
    I: IntoIterator<Item = X> + Send + 'static,
    X: Send + 'static,
    T: Send + 'static,
    F: Fn(X) -> T + Send + Sync + 'static,
{
    let (pending_tx, pending) = sync_channel::<Receiver<Result<T, String>>>(ahead.max(1));
    let map = std::sync::Arc::new(map);
    std::thread::Builder::new()
        .name("bcuda-read".into())
        .spawn(move || {
            for item in items {
                let (tx, rx) = sync_channel(1);
                if pending_tx.send(rx).is_err() {
                    break; // the consumer is gone
                }
                let map = map.clone();
                pool().spawn_fifo(move || {
                    let result =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| map(item))).map_err(|panic| {
                            panic
                                .downcast_ref::<&str>()
                                .map(|s| s.to_string())
                                .or_else(|| panic.downcast_ref::<String>().cloned())
                                .unwrap_or_default()
                        });
                    // The consumer may be gone: the result is then dropped.
                    let _ = tx.send(result);
                });
            }
        })
        .expect("a thread for reading input");
    InOrder { pending }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn results_come_in_order_whatever_the_work_takes() {
        let got: Vec<u64> = map_in_order(
            0..200u64,
            |i| {
                std::thread::sleep(Duration::from_micros((i * 7919) % 500));
                i * i
            },
            8,
        )
        .map(Result::unwrap)
        .collect();
        assert_eq!(got, (0..200u64).map(|i| i * i).collect::<Vec<_>>());
    }

    #[test]
    fn the_producer_stays_at_most_ahead_items_ahead() {
        let drawn = Arc::new(AtomicUsize::new(0));
        let counter = drawn.clone();
        let items = (0..1000).inspect(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        let mut results = map_in_order(items, |i| i, 5);
        assert_eq!(results.next(), Some(Ok(0)));
        std::thread::sleep(Duration::from_millis(100));
        // Taken 1, `ahead` waiting, one drawn and blocked on sending: at most ahead + 2.
        let n = drawn.load(Ordering::SeqCst);
        assert!(n <= 5 + 2, "{n} items drawn");
        drop(results);
        std::thread::sleep(Duration::from_millis(50));
        assert!(drawn.load(Ordering::SeqCst) <= 5 + 3, "the producer stopped");
    }

    #[test]
    fn a_panic_in_the_work_is_an_error_in_its_place() {
        let got: Vec<Result<u32, String>> =
            map_in_order(0..4u32, |i| if i == 2 { panic!("on purpose") } else { i }, 2).collect();
        assert_eq!(got, [Ok(0), Ok(1), Err("on purpose".to_string()), Ok(3)]);
    }
}
