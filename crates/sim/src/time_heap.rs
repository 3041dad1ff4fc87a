//! A binary min-heap of items by (time, sequence), for the event queue and the device
//! models' completions.
//!
//! `std`'s `BinaryHeap` of `Reverse((time, seq, item))` compiles the whole tuple's
//! comparison (the item's too) and its generic sift code: in issue 34's workload that was
//! about 210 instructions per pop of the event queue and ~130 per flash completion. Here
//! entries compare on (time, sequence) alone; those pairs are unique (the sequence is a
//! counter), so the order is exactly the one the tuple heap gives.

use iosched_core::Time;

/// One entry: its time, its tie-breaking sequence number, and what it carries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timed<T> {
    pub(crate) time: Time,
    pub(crate) seq: u64,
    pub(crate) item: T,
}

impl<T> Timed<T> {
    fn before(&self, other: &Timed<T>) -> bool {
        (self.time, self.seq) < (other.time, other.seq)
    }
}

/// Entries by (time, sequence), earliest first.
#[derive(Clone, Debug)]
pub(crate) struct TimeHeap<T> {
    entries: Vec<Timed<T>>,
}

impl<T> Default for TimeHeap<T> {
    fn default() -> Self {
        TimeHeap {
            entries: Vec::new(),
        }
    }
}

impl<T: Copy> TimeHeap<T> {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        TimeHeap {
            entries: Vec::with_capacity(capacity),
        }
    }

    pub(crate) fn peek(&self) -> Option<&Timed<T>> {
        self.entries.first()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn push(&mut self, entry: Timed<T>) {
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

    pub(crate) fn pop(&mut self) -> Option<Timed<T>> {
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

    /// Pops in the order a `BinaryHeap` of `Reverse((time, seq, item))` gives, over random
    /// pushes and pops with many equal times (the sequence breaks ties, the item never does).
    #[test]
    fn pops_as_the_tuple_heap() {
        use proptest::prelude::*;
        let steps = proptest::collection::vec((0u8..3, 0u64..4, 0u32..1000), 1..500);
        proptest!(|(steps in steps)| {
            let mut heap = TimeHeap::default();
            let mut reference = BinaryHeap::new();
            for (seq, (kind, time, item)) in steps.into_iter().enumerate() {
                let seq = seq as u64;
                if kind == 0 {
                    let expected = reference.pop().map(|Reverse(entry)| entry);
                    let got = heap.pop().map(|e: Timed<u32>| (e.time, e.seq, e.item));
                    prop_assert_eq!(got, expected);
                } else {
                    heap.push(Timed { time, seq, item });
                    reference.push(Reverse((time, seq, item)));
                }
                prop_assert_eq!(heap.len(), reference.len());
                prop_assert_eq!(
                    heap.peek().map(|e| (e.time, e.seq)),
                    reference.peek().map(|Reverse((t, s, _))| (*t, *s))
                );
            }
        });
    }
}
