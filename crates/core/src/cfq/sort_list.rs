//! A queue's pending requests by start sector: the kernel's per-queue `sort_list` rbtree
//! (elv_rb_add(), elv_rb_del(), elv_rb_find(), rb_next()/rb_prev() in cfq_find_next_rq()).
//!
//! Kept as one sorted vector of (key, slot) pairs: a queue holds a handful of requests (its
//! process's iodepth, at most its request list's `nr_requests`), and at that size a binary
//! search and a short `memmove` cost a fraction of a `BTreeMap`'s node walks and its node
//! allocations on every insert and dispatch (issue 34: the map's insert, remove and range
//! walks were 8 % of a CFQ run's instructions). Only the order matters to CFQ, and a sorted
//! vector has the same order, so every decision is the same.

use std::ops::{Bound, RangeBounds};

/// A map from ordered keys to values in one sorted vector, with the part of `BTreeMap`'s
/// interface CFQ uses.
#[derive(Clone, Debug)]
pub struct SortList<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SortList<K, V> {
    fn default() -> Self {
        SortList {
            entries: Vec::new(),
        }
    }
}

type Pair<'a, K, V> = (&'a K, &'a V);

fn as_refs<K, V>((key, value): &(K, V)) -> Pair<'_, K, V> {
    (key, value)
}

impl<K: Ord, V> SortList<K, V> {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn find(&self, key: &K) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.cmp(key))
    }

    /// Inserts `value` at `key`, answering the value it replaces.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(at) => Some(std::mem::replace(&mut self.entries[at].1, value)),
            Err(at) => {
                self.entries.insert(at, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let at = self.find(key).ok()?;
        Some(self.entries.remove(at).1)
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        let at = self.find(key).ok()?;
        Some(&self.entries[at].1)
    }

    pub fn contains_key(&self, key: &K) -> bool {
        self.find(key).is_ok()
    }

    pub fn first_key_value(&self) -> Option<Pair<'_, K, V>> {
        self.entries.first().map(as_refs)
    }

    /// Position of the first entry not below `bound` taken as a range's start.
    fn start_of(&self, bound: Bound<&K>) -> usize {
        match bound {
            Bound::Included(key) => self.entries.partition_point(|(k, _)| k < key),
            Bound::Excluded(key) => self.entries.partition_point(|(k, _)| k <= key),
            Bound::Unbounded => 0,
        }
    }

    /// Position past the last entry within `bound` taken as a range's end.
    fn end_of(&self, bound: Bound<&K>) -> usize {
        match bound {
            Bound::Included(key) => self.entries.partition_point(|(k, _)| k <= key),
            Bound::Excluded(key) => self.entries.partition_point(|(k, _)| k < key),
            Bound::Unbounded => self.entries.len(),
        }
    }

    /// The entries with keys in `range`, in key order (either end first).
    pub fn range<R: RangeBounds<K>>(
        &self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = Pair<'_, K, V>> + '_ {
        let start = self.start_of(range.start_bound());
        let end = self.end_of(range.end_bound()).max(start);
        self.entries[start..end].iter().map(as_refs)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Pair<'_, K, V>> + '_ {
        self.entries.iter().map(as_refs)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.entries.iter().map(|(_, value)| value)
    }
}

impl<'a, K, V> IntoIterator for &'a SortList<K, V> {
    type Item = Pair<'a, K, V>;
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> Pair<'a, K, V>>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(as_refs)
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
            match op % 3 {
                0 => assert_eq!(list.insert(ka, b), model.insert(ka, b)),
                1 => assert_eq!(list.remove(&ka), model.remove(&ka)),
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

    proptest! {
        #[test]
        fn sort_list_answers_as_a_btree_map(ops in prop::collection::vec(any::<(u8, u8, u8)>(), 0..200)) {
            same_as_btree(&ops);
        }
    }
}
