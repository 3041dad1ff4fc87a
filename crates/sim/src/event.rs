//! The event queue, ordered by (time, sequence). The sequence number is the deterministic
//! tie-break: events at the same instant run in the order they were scheduled.
//!
//! Most events are scheduled for the instant being run (a completion wakes its process
//! "now"): those wait in a FIFO lane, in sequence order, and only later instants go through
//! the heap. Popping takes the smaller of the lane's front and the heap's top, so the order
//! is exactly the one a single heap gives, at a queue push instead of a heap sift per
//! same-instant event (issue 34).
//!
//! The device's armed event (at most one is live: re-arming supersedes it) waits in a slot
//! of its own beside the heap, since each request arms one: the pop compares it like any
//! other (time, sequence), and a superseded one still queued moves to the heap, where it
//! pops as before (issue 34).
//!
//! The heap is [`TimeHeap`], a binary min-heap compared on (time, sequence) alone: `std`'s
//! `BinaryHeap` of `Reverse((time, seq, event))` compiled the whole tuple's comparison and
//! cost about 210 instructions per pop in issue 34's workload. (time, seq) pairs are
//! unique, so the order is the same.

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
    /// A CPU may have freed for a thread waiting in CFS's run queue (`crate::cpu::cfs`).
    CpuCheck,
    /// The device asked to be advanced (`generation` filters out superseded requests).
    Device { generation: u64 },
    /// The scheduler's idle deadline.
    IdleTimer { generation: u64 },
    /// Buffered I/O, writeback threads and the journal (see `crate::fs`).
    Fs(crate::fs::FsEvent),
}

/// Events by (time, sequence): a heap, and a lane for the instant last popped.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: TimeHeap,
    /// Events at `lane_time`, in sequence order (each was pushed after the one before),
    /// from `lane_head` on. A vector emptied whenever it is drained: cheaper than a
    /// `VecDeque`'s wrapping, and the lane drains at every instant (issue 34).
    lane: Vec<(u64, Event)>,
    lane_head: usize,
    /// The instant of the lane: the time of the event last popped while the lane was empty.
    lane_time: Time,
    /// The event last given to [`EventQueue::push_armed`], while queued.
    armed: Option<Entry>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        if time == self.lane_time {
            self.lane.push((seq, event));
        } else {
            self.heap.push(Entry { time, seq, event });
        }
    }

    /// Queues `event` as the armed one: the event armed before it, if still queued, moves
    /// to the heap (it keeps its time and sequence, so the order is a single heap's).
    #[inline]
    pub fn push_armed(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some(old) = self.armed.replace(Entry { time, seq, event }) {
            self.heap.push(old);
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if let Some(armed) = self.armed {
            let lane_first = match self.lane.get(self.lane_head) {
                Some(&(seq, _)) => (self.lane_time, seq) < (armed.time, armed.seq),
                None => false,
            };
            let heap_first = self.heap.peek().is_some_and(|top| top.before(&armed));
            if !lane_first && !heap_first {
                self.armed = None;
                // As a pop from the heap: an empty lane moves to this instant.
                if self.lane.is_empty() {
                    self.lane_time = armed.time;
                }
                self.processed += 1;
                return Some((armed.time, armed.event));
            }
        }
        // The lane's front is its smallest (time, seq); an earlier-scheduled event of the
        // same instant, or one before it, may still be in the heap.
        let from_lane = match (self.lane.get(self.lane_head), self.heap.peek()) {
            (Some(&(seq, _)), Some(top)) => (self.lane_time, seq) < (top.time, top.seq),
            (Some(_), None) => true,
            (None, _) => false,
        };
        let (time, event) = if from_lane {
            let (_, event) = self.lane[self.lane_head];
            self.lane_head += 1;
            if self.lane_head == self.lane.len() {
                self.lane.clear();
                self.lane_head = 0;
            }
            (self.lane_time, event)
        } else {
            let Entry { time, event, .. } = self.heap.pop()?;
            // The lane moves to a new instant only once empty: every event in it keeps
            // the time it was scheduled for.
            if self.lane.is_empty() {
                self.lane_time = time;
            }
            (time, event)
        };
        self.processed += 1;
        Some((time, event))
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.lane.is_empty() && self.armed.is_none()
    }
}

/// One event in the heap.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl Entry {
    fn before(&self, other: &Entry) -> bool {
        (self.time, self.seq) < (other.time, other.seq)
    }
}

/// A binary min-heap of entries by (time, sequence).
#[derive(Debug, Default)]
struct TimeHeap {
    entries: Vec<Entry>,
}

impl TimeHeap {
    fn peek(&self) -> Option<&Entry> {
        self.entries.first()
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn push(&mut self, entry: Entry) {
        // Sift up: parents after the new entry move down into the hole.
        let mut hole = self.entries.len();
        self.entries.push(entry);
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if !entry.before(&self.entries[parent]) {
                break;
            }
            self.entries[hole] = self.entries[parent];
            hole = parent;
        }
        self.entries[hole] = entry;
    }

    fn pop(&mut self) -> Option<Entry> {
        let last = self.entries.pop()?;
        let Some(&top) = self.entries.first() else {
            return Some(last);
        };
        // Sift the last entry down from the root: the earlier child moves up.
        let len = self.entries.len();
        let mut hole = 0;
        loop {
            let left = 2 * hole + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && self.entries[right].before(&self.entries[left]) {
                right
            } else {
                left
            };
            if !self.entries[child].before(&last) {
                break;
            }
            self.entries[hole] = self.entries[child];
            hole = child;
        }
        self.entries[hole] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

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

    /// The lane changes no order: random pushes (many at the instant just popped, some
    /// later, a few earlier) and pops give the sequence one (time, sequence) heap gives.
    #[test]
    fn lane_pops_as_a_single_heap() {
        use proptest::prelude::*;
        let steps = proptest::collection::vec((0u8..5, 0u64..3, 0usize..50), 1..400);
        proptest!(|(steps in steps)| {
            let mut queue = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let (mut seq, mut now) = (0u64, 0u64);
            for (kind, offset, process) in steps {
                if kind == 0 {
                    let expected = reference.pop().map(|Reverse((t, _, e))| (t, e));
                    let got = queue.pop();
                    prop_assert_eq!(got, expected);
                    if let Some((time, _)) = got {
                        now = time;
                    }
                } else {
                    // Mostly the current instant; sometimes later, or (kind 3) earlier;
                    // kind 4 arms an event at the instant or later (superseding the last).
                    let time = match kind {
                        1 => now,
                        2 | 4 => now + offset,
                        _ => now.saturating_sub(offset),
                    };
                    if kind == 4 {
                        queue.push_armed(time, Event::Wake(process));
                    } else {
                        queue.push(time, Event::Wake(process));
                    }
                    reference.push(Reverse((time, seq, Event::Wake(process))));
                    seq += 1;
                }
                prop_assert_eq!(queue.is_empty(), reference.is_empty());
            }
            while let Some(Reverse((time, _, event))) = reference.pop() {
                prop_assert_eq!(queue.pop(), Some((time, event)));
            }
            prop_assert_eq!(queue.pop(), None);
        });
    }
}
