//! The event queue: a min-heap ordered by (time, sequence). The sequence number is the
//! deterministic tie-break: events at the same instant run in the order they were scheduled.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use iosched_core::Time;

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A job's start delay or stonewall wait ended: start this job's clones.
    StartJob(usize),
    /// A simulated process wakes from think time or a rate-limit sleep.
    Wake(usize),
    /// A woken process got its CPU time (`crate::cpu`): it runs now.
    Run(usize),
    /// The device asked to be advanced (`generation` filters out superseded requests).
    Device { generation: u64 },
    /// The scheduler's idle deadline.
    IdleTimer { generation: u64 },
    /// Buffered I/O, writeback threads and the journal (see `crate::fs`).
    Fs(crate::fs::FsEvent),
}

/// Min-heap of events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Time, u64, Event)>>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    pub fn push(&mut self, time: Time, event: Event) {
        self.heap.push(Reverse((time, self.next_seq, event)));
        self.next_seq += 1;
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let Reverse((time, _, event)) = self.heap.pop()?;
        self.processed += 1;
        Some((time, event))
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_push_order() {
        let mut queue = EventQueue::new();
        queue.push(5, Event::Wake(2));
        queue.push(5, Event::Wake(1));
        queue.push(3, Event::Wake(9));
        assert_eq!(queue.pop(), Some((3, Event::Wake(9))));
        assert_eq!(queue.pop(), Some((5, Event::Wake(2))));
        assert_eq!(queue.pop(), Some((5, Event::Wake(1))));
    }
}
