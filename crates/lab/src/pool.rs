//! The local work queue: independent runs spread over a few threads, results kept in the
//! order of the work.
//!
//! Each worker takes the next unclaimed item (one shared counter) until none is left, so a
//! long run does not hold up a queue of short ones behind it. Every result lands in the slot
//! of its item: what a caller prints is the same for one worker or many, and whichever
//! finishes first. Workers are scoped threads, joined before any result is read.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many workers to start for `items` pieces of work: `workers`, or one per available CPU
/// when it is 0, never more than there is work and never none.
pub fn worker_count(workers: usize, items: usize) -> usize {
    let wanted = match workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    wanted.clamp(1, items.max(1))
}

/// `work(item)` for every item on [`worker_count`] threads; `done()` after each one finishes
/// (a progress bar). The results come back in the order of `items`.
pub fn map_in_order<T, R, W, D>(items: &[T], workers: usize, work: W, done: D) -> Vec<R>
where
    T: Sync,
    R: Send,
    W: Fn(&T) -> R + Sync,
    D: Fn() + Sync,
{
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..worker_count(workers, items.len()) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else {
                    break;
                };
                let result = work(item);
                slots.lock().expect("no worker panics holding the lock")[index] = Some(result);
                done();
            });
        }
    });
    slots
        .into_inner()
        .expect("workers finished")
        .into_iter()
        .map(|slot| slot.expect("every item was worked on"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come back in the order of the work, not of completion: early items sleep
    /// longest, so with several workers they finish last.
    #[test]
    fn results_keep_the_order_of_the_work() {
        let items: Vec<u64> = (0..8).collect();
        let finished = Mutex::new(Vec::new());
        let results = map_in_order(
            &items,
            4,
            |&n| {
                std::thread::sleep(std::time::Duration::from_millis((8 - n) * 5));
                finished.lock().unwrap().push(n);
                n * 10
            },
            || {},
        );
        assert_eq!(results, (0..8).map(|n| n * 10).collect::<Vec<_>>());
        assert_eq!(finished.lock().unwrap().len(), 8);
    }

    /// `done` runs once per item, whatever the number of workers.
    #[test]
    fn done_counts_every_item() {
        for workers in [0, 1, 3, 100] {
            let count = AtomicUsize::new(0);
            let items = [(); 17];
            let results = map_in_order(
                &items,
                workers,
                |_| 1,
                || {
                    count.fetch_add(1, Ordering::Relaxed);
                },
            );
            assert_eq!(results.len(), 17);
            assert_eq!(count.load(Ordering::Relaxed), 17, "{workers} workers");
        }
    }

    #[test]
    fn worker_count_is_bounded_by_the_work() {
        assert_eq!(worker_count(8, 3), 3);
        assert_eq!(worker_count(2, 3), 2);
        assert_eq!(worker_count(5, 0), 1);
        assert!(worker_count(0, 1000) >= 1);
    }
}
