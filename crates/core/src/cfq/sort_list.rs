//! A queue's pending requests by start sector: the kernel's per-queue `sort_list` rbtree
//! (elv_rb_add(), elv_rb_del(), elv_rb_find(), rb_next()/rb_prev() in cfq_find_next_rq()).
//!
//! Kept as one sorted vector of (key, slot) pairs: a queue holds a handful of requests (its
//! process's iodepth, at most its request list's `nr_requests`), and at that size a binary
//! search and a short `memmove` cost a fraction of a `BTreeMap`'s node walks and its node
//! allocations on every insert and dispatch (issue 34: the map's insert, remove and range
//! walks were 8 % of a CFQ run's instructions). Only the order matters to CFQ, and a sorted
//! vector has the same order, so every decision is the same.
//!
//! The live entries start at `head`: dispatch mostly takes a queue's lowest sector and a
//! stream adds above its highest, so a flusher's queue a hundred deep runs as a FIFO, and
//! dropping its head by moving `head` spares the memmove of the rest (that memmove was 2.7 %
//! of `reproduce`'s instructions). A `VecDeque` does the same but costs a small queue 6 %
//! more per request in its two-slice searches and ranges.
//!
//! A lone entry is kept in the list itself, the vector left empty: a process at iodepth 1
//! holds one request at a time, and with thousands of queues each queue's vector was a line
//! of its own, written at every insertion and read at every merge attempt (issue 34: ~1.5
//! data-cache misses a request at 4096 queues). The vector takes over from the second entry.

use std::ops::{Bound, RangeBounds};

/// A map from ordered keys to values in one sorted vector, with the part of `BTreeMap`'s
/// interface CFQ uses.
#[derive(Clone, Debug)]
pub struct SortList<K, V> {
    entries: Vec<(K, V)>,
    /// The only entry, while `entries` is empty and `lone` is set.
    one: (K, V),
    /// Entries before this index are dead (taken from the front, not yet compacted).
    head: u32,
    /// `one` holds the list's only entry. Only while `entries` is empty: the vector never
    /// keeps an all-dead front (its last live entry's removal clears it).
    lone: bool,
}

impl<K: Default, V: Default> Default for SortList<K, V> {
    fn default() -> Self {
        SortList {
            entries: Vec::new(),
            one: Default::default(),
            head: 0,
            lone: false,
        }
    }
}

type Pair<'a, K, V> = (&'a K, &'a V);

/// A removed entry's value and its neighbours (see [`SortList::remove_between`]).
pub type Between<K, V> = (V, Option<(K, V)>, Option<(K, V)>);

fn as_refs<K, V>((key, value): &(K, V)) -> Pair<'_, K, V> {
    (key, value)
}

/// Dead front entries worth a compaction: past this many and half the vector, the live
/// part moves down once (amortised: at most one move per entry taken from the front).
const COMPACT_AFTER: usize = 32;

impl<K: Ord + Copy, V: Copy> SortList<K, V> {
    #[inline]
    fn live(&self) -> &[(K, V)] {
        if self.lone {
            std::slice::from_ref(&self.one)
        } else {
            &self.entries[self.head as usize..]
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        if self.lone {
            1
        } else {
            self.entries.len() - self.head as usize
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        !self.lone && self.entries.is_empty()
    }

    fn find(&self, key: &K) -> Result<usize, usize> {
        self.live().binary_search_by(|(k, _)| k.cmp(key))
    }

    /// Inserts `value` at `key`, answering the value it replaces.
    // Inline for the first entry (an empty queue's request, every request under a small
    // iodepth), the rest out of line.
    #[inline]
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if !self.lone && self.entries.is_empty() {
            self.one = (key, value);
            self.lone = true;
            return None;
        }
        self.insert_more(key, value)
    }

    /// [`SortList::insert`] into a list holding entries.
    #[inline(never)]
    fn insert_more(&mut self, key: K, value: V) -> Option<V> {
        if self.entries.is_empty() {
            if self.one.0 == key {
                return Some(std::mem::replace(&mut self.one.1, value));
            }
            // A second entry: both move to the vector, in order.
            self.lone = false;
            let (first, second) = if self.one.0 < key {
                (self.one, (key, value))
            } else {
                ((key, value), self.one)
            };
            self.entries.extend([first, second]);
            return None;
        }
        let head = self.head as usize;
        match self.find(&key) {
            Ok(at) => Some(std::mem::replace(&mut self.entries[head + at].1, value)),
            Err(0) if head > 0 => {
                self.head -= 1;
                self.entries[head - 1] = (key, value);
                None
            }
            Err(at) => {
                self.entries.insert(head + at, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let at = self.find(key).ok()?;
        Some(self.remove_at(at))
    }

    /// Removes the live entry at `at`.
    fn remove_at(&mut self, at: usize) -> V {
        if self.lone {
            self.lone = false;
            return self.one.1;
        }
        let head = self.head as usize;
        let value = self.entries[head + at].1;
        if at > 0 && 2 * at < self.len() {
            // Nearer the front: the entries before it move up one, and `head` with them
            // (a dispatch that walks up a deep queue removes mid-way, where moving the
            // shorter side halves the copying).
            self.entries.copy_within(head..head + at, head + 1);
            self.head += 1;
            self.compact();
        } else if at > 0 {
            self.entries.remove(head + at);
        } else if head + 1 == self.entries.len() {
            self.entries.clear();
            self.head = 0;
        } else {
            self.head += 1;
            self.compact();
        }
        value
    }

    /// Drops the dead front once it is long enough and half the vector.
    fn compact(&mut self) {
        let head = self.head as usize;
        if head >= COMPACT_AFTER && 2 * head >= self.entries.len() {
            self.entries.drain(..head);
            self.head = 0;
        }
    }

    /// Removes `key`, answering its value and its neighbours in order: the entry before it
    /// and the one after it, wrapping to the first entry unless that is `key` itself
    /// (`cfq_find_next_rq()`'s two candidates, found by the removal's own search).
    // Inline for a lone entry (a queue's only request: every dispatch under a small
    // iodepth), which has no neighbours; the search of a vector out of line.
    #[inline]
    pub fn remove_between(&mut self, key: &K) -> Option<Between<K, V>> {
        if self.lone {
            if self.one.0 != *key {
                return None;
            }
            self.lone = false;
            return Some((self.one.1, None, None));
        }
        self.remove_between_in_vector(key)
    }

    /// [`SortList::remove_between`] of an entry of the vector.
    #[inline(never)]
    fn remove_between_in_vector(&mut self, key: &K) -> Option<Between<K, V>> {
        let at = self.find(key).ok()?;
        let live = self.live();
        let before = at.checked_sub(1).map(|i| live[i]);
        let after = match live.get(at + 1) {
            Some(&entry) => Some(entry),
            None if at > 0 => Some(live[0]),
            None => None,
        };
        Some((self.remove_at(at), before, after))
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        let at = self.find(key).ok()?;
        Some(&self.live()[at].1)
    }

    pub fn contains_key(&self, key: &K) -> bool {
        self.find(key).is_ok()
    }

    pub fn first_key_value(&self) -> Option<Pair<'_, K, V>> {
        self.live().first().map(as_refs)
    }

    /// Position of the first entry not below `bound` taken as a range's start.
    fn start_of(&self, bound: Bound<&K>) -> usize {
        match bound {
            Bound::Included(key) => self.live().partition_point(|(k, _)| k < key),
            Bound::Excluded(key) => self.live().partition_point(|(k, _)| k <= key),
            Bound::Unbounded => 0,
        }
    }

    /// Position past the last entry within `bound` taken as a range's end.
    fn end_of(&self, bound: Bound<&K>) -> usize {
        match bound {
            Bound::Included(key) => self.live().partition_point(|(k, _)| k <= key),
            Bound::Excluded(key) => self.live().partition_point(|(k, _)| k < key),
            Bound::Unbounded => self.len(),
        }
    }

    /// The entries with keys in `range`, in key order (either end first).
    pub fn range<R: RangeBounds<K>>(
        &self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = Pair<'_, K, V>> + '_ {
        let start = self.start_of(range.start_bound());
        let end = self.end_of(range.end_bound()).max(start);
        self.live()[start..end].iter().map(as_refs)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Pair<'_, K, V>> + '_ {
        self.live().iter().map(as_refs)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.live().iter().map(|(_, value)| value)
    }
}

impl<'a, K, V> IntoIterator for &'a SortList<K, V> {
    type Item = Pair<'a, K, V>;
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> Pair<'a, K, V>>;

    fn into_iter(self) -> Self::IntoIter {
        let live = if self.lone {
            std::slice::from_ref(&self.one)
        } else {
            &self.entries[self.head as usize..]
        };
        live.iter().map(as_refs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// The same operations on a `SortList` and on the `BTreeMap` it replaced answer the same,
    /// ranges included (the lookups CFQ's dispatch and merges make).
    fn same_as_btree(ops: &[(u8, u8, u8)]) {
        let mut list = SortList::default();
        let mut model = BTreeMap::new();
        for &(op, a, b) in ops {
            let (ka, kb) = ((u64::from(a) % 16, 0u64), (u64::from(b) % 16, 1u64));
            match op % 4 {
                0 => assert_eq!(list.insert(ka, b), model.insert(ka, b)),
                1 => assert_eq!(list.remove(&ka), model.remove(&ka)),
                2 => {
                    let entry = |(k, v): (&(u64, u64), &u8)| (*k, *v);
                    let before = model.range(..ka).next_back().map(entry);
                    let after = model
                        .range((Bound::Excluded(ka), Bound::Unbounded))
                        .next()
                        .or_else(|| model.first_key_value().filter(|&(k, _)| *k != ka))
                        .map(entry);
                    let want = model.remove(&ka).map(|v| (v, before, after));
                    assert_eq!(list.remove_between(&ka), want);
                }
                _ => {
                    let lo = ka.min(kb);
                    let hi = ka.max(kb);
                    let got: Vec<_> = list.range(lo..hi).collect();
                    let want: Vec<_> = model.range(lo..hi).collect();
                    assert_eq!(got, want);
                    let got = list.range(..lo).next_back();
                    assert_eq!(got, model.range(..lo).next_back());
                    let after = (Bound::Excluded(lo), Bound::Unbounded);
                    let got: Vec<_> = list.range(after).collect();
                    assert_eq!(got, model.range(after).collect::<Vec<_>>());
                    let got: Vec<_> = list.range(lo..=hi).rev().collect();
                    assert_eq!(got, model.range(lo..=hi).rev().collect::<Vec<_>>());
                }
            }
            assert_eq!(list.len(), model.len());
            assert_eq!(list.get(&ka), model.get(&ka));
            assert_eq!(list.contains_key(&kb), model.contains_key(&kb));
            assert_eq!(list.first_key_value(), model.first_key_value());
            assert!(list.iter().eq(model.iter()));
            assert!(list.values().eq(model.values()));
        }
    }

    /// A deep queue run as dispatch and a stream run it (add above the highest, take the
    /// lowest, now and then a request below or in the middle) answers as the map does, and
    /// its dead front is compacted: the vector never holds more than twice the live entries
    /// plus the compaction threshold.
    #[test]
    fn a_deep_fifo_answers_as_a_btree_map_and_stays_compact() {
        let mut list = SortList::default();
        let mut model = BTreeMap::new();
        let mut next = 1_000u64;
        for step in 0..20_000u64 {
            let depth = 40 + (step / 500 % 4) * 30;
            while (model.len() as u64) < depth {
                next += 8;
                assert_eq!(list.insert((next, 0), next), model.insert((next, 0), next));
            }
            let key = match step % 7 {
                0 => *model.keys().nth(model.len() / 2).unwrap(),
                1 => {
                    let below = (model.keys().next().unwrap().0 - 3, 0);
                    assert_eq!(list.insert(below, 1), model.insert(below, 1));
                    below
                }
                _ => *model.keys().next().unwrap(),
            };
            assert_eq!(list.remove(&key), model.remove(&key));
            assert!(list.iter().eq(model.iter()));
            assert_eq!(list.first_key_value(), model.first_key_value());
            assert!(list.entries.len() <= 2 * list.len() + COMPACT_AFTER);
        }
    }

    proptest! {
        #[test]
        fn sort_list_answers_as_a_btree_map(ops in prop::collection::vec(any::<(u8, u8, u8)>(), 0..200)) {
            same_as_btree(&ops);
        }
    }
}
