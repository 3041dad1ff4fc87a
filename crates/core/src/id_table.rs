//! A small open-addressing table from ids to `Copy` values, for state the kernel keeps in
//! the request itself (`rq->elv.priv[]`, kyber's domain token) and iosched must find again
//! from the id a completion carries, or reaches through a pointer (a request's io context,
//! `rq->elv.icq`; its group, `blkg`) where iosched has only the id.
//!
//! [`crate::id_map::IdMap`] (std's `HashMap`) costs some 80 instructions per insert or
//! remove; the scheduler's own tables hold at most the requests in flight, so linear
//! probing over a power-of-two array, kept at most half full, with the kernel's
//! `hash_64()` for the index and backward-shift deletion (no tombstones), does the same in a
//! fraction of that. Lookups never depend on the table's order, and it is never iterated
//! for a decision.

use crate::id_map::GOLDEN_RATIO_64;
use crate::request::{CgroupId, IoContextId, RequestId};

/// An id a table is keyed by: its bits feed `hash_64()`.
pub trait TableKey: Copy + Eq {
    fn bits(self) -> u64;
}

impl TableKey for RequestId {
    fn bits(self) -> u64 {
        self.0
    }
}

impl TableKey for IoContextId {
    fn bits(self) -> u64 {
        u64::from(self.0)
    }
}

impl TableKey for CgroupId {
    fn bits(self) -> u64 {
        u64::from(self.0)
    }
}

/// Slots in a new table (grown by doubling).
const INITIAL_SLOTS: usize = 16;

/// Id to value, by linear probing.
#[derive(Clone, Debug)]
pub struct IdTable<V: Copy, K: TableKey = RequestId> {
    slots: Vec<Option<(K, V)>>,
    len: usize,
    /// `64 - log2(slots.len())`: the shift that keeps hash_64()'s high bits.
    shift: u32,
}

impl<V: Copy, K: TableKey> Default for IdTable<V, K> {
    fn default() -> Self {
        IdTable::with_slots(INITIAL_SLOTS)
    }
}

impl<V: Copy, K: TableKey> IdTable<V, K> {
    fn with_slots(slots: usize) -> IdTable<V, K> {
        debug_assert!(slots.is_power_of_two());
        IdTable {
            slots: vec![None; slots],
            len: 0,
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// Kernel: hash_64(id, bits).
    #[inline]
    fn home(&self, id: K) -> usize {
        (id.bits().wrapping_mul(GOLDEN_RATIO_64) >> self.shift) as usize
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `id`, answering the value it replaced.
    pub fn insert(&mut self, id: K, value: V) -> Option<V> {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mut i = self.home(id);
        loop {
            match &mut self.slots[i] {
                Some((key, old)) if *key == id => return Some(std::mem::replace(old, value)),
                Some(_) => i = (i + 1) & self.mask(),
                empty @ None => {
                    *empty = Some((id, value));
                    self.len += 1;
                    return None;
                }
            }
        }
    }

    #[inline]
    fn find(&self, id: K) -> Option<usize> {
        let mut i = self.home(id);
        loop {
            match self.slots[i] {
                Some((key, _)) if key == id => return Some(i),
                Some(_) => i = (i + 1) & self.mask(),
                None => return None,
            }
        }
    }

    #[inline]
    pub fn get(&self, id: K) -> Option<&V> {
        self.find(id)
            .and_then(|i| self.slots[i].as_ref().map(|(_, v)| v))
    }

    /// Removes `id`; the entries after it in its probe run shift back so that every entry
    /// stays reachable from its home slot without tombstones.
    pub fn remove(&mut self, id: K) -> Option<V> {
        let mut hole = self.find(id)?;
        let (_, value) = self.slots[hole].take().expect("found slot is full");
        self.len -= 1;
        let mut i = hole;
        loop {
            i = (i + 1) & self.mask();
            let Some((key, _)) = self.slots[i] else {
                return Some(value);
            };
            // The entry at `i` may fill the hole unless its home lies cyclically in
            // (hole, i]: then the hole is before its home and it must stay.
            let home = self.home(key);
            let stays = if hole <= i {
                hole < home && home <= i
            } else {
                hole < home || home <= i
            };
            if !stays {
                self.slots[hole] = self.slots[i].take();
                hole = i;
            }
        }
    }

    fn grow(&mut self) {
        let old = std::mem::replace(self, IdTable::with_slots(self.slots.len() * 2));
        for (id, value) in old.slots.into_iter().flatten() {
            self.insert(id, value);
        }
    }

    /// Every id with its value, in no meaningful order (for re-indexing, never a decision).
    pub fn entries(&self) -> impl Iterator<Item = (K, &V)> {
        self.slots.iter().flatten().map(|(k, v)| (*k, v))
    }

    /// Every value, in no meaningful order (for invariant checks only).
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.slots.iter().flatten().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Random inserts and removes agree with a BTreeMap, through growth and wrap-around
    /// probe runs (ids with a stride crowd a few home slots).
    #[test]
    fn agrees_with_an_ordered_map() {
        for stride in [1u64, 7, 64, 4096] {
            let mut table = IdTable::default();
            let mut model = BTreeMap::new();
            let mut x = 12345u64;
            for step in 0..20_000u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let id = RequestId((x >> 33) % 300 * stride);
                if x & 1 == 0 {
                    assert_eq!(table.insert(id, step), model.insert(id, step));
                } else {
                    assert_eq!(table.remove(id), model.remove(&id));
                }
                assert_eq!(table.len(), model.len());
            }
            for (id, v) in &model {
                assert_eq!(table.get(*id), Some(v), "stride {stride}");
            }
            assert_eq!(table.values().count(), model.len());
        }
    }
}
