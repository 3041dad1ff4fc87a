//! Values kept in a dense slab and found by id: the kernel reaches a process's scheduler
//! context through a pointer (`rq->elv.icq`, `bic`), iosched through the io context id a
//! request carries.
//!
//! An [`IdTable`] maps the id to the value's index; the values stay where they were put
//! (a removed one's index is reused by the next insert), so a lookup is one hash and a probe
//! or two, and neither a lookup nor an insert moves a large value. Ordered maps cost a
//! descent of comparisons per lookup, several per request in BFQ. Nothing is iterated: the
//! order of the slab decides nothing.
//!
//! BFQ looks the same process up several times while it handles one request, so the last
//! id found is remembered (`hint`) and answered without probing the table.

use std::cell::Cell;
use std::ops::Index;

use crate::id_table::{IdTable, TableKey};

/// `V`s by id `K`.
#[derive(Clone, Debug)]
pub struct IdSlab<K: TableKey, V> {
    index: IdTable<usize, K>,
    values: Vec<Option<V>>,
    free: Vec<usize>,
    /// The last id looked up or inserted, and its index; cleared when that id is removed.
    hint: Cell<Option<(K, usize)>>,
}

impl<K: TableKey, V> Default for IdSlab<K, V> {
    fn default() -> Self {
        IdSlab {
            index: IdTable::default(),
            values: Vec::new(),
            free: Vec::new(),
            hint: Cell::new(None),
        }
    }
}

impl<K: TableKey, V> IdSlab<K, V> {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The index of `id`'s value: the hint's, or the table's (which becomes the hint).
    #[inline(always)]
    fn find(&self, id: K) -> Option<usize> {
        if let Some((hint, i)) = self.hint.get() {
            if hint == id {
                return Some(i);
            }
        }
        let i = *self.index.get(id)?;
        self.hint.set(Some((id, i)));
        Some(i)
    }

    pub fn contains_key(&self, id: K) -> bool {
        self.find(id).is_some()
    }

    #[inline(always)]
    pub fn get(&self, id: K) -> Option<&V> {
        let i = self.find(id)?;
        self.values[i].as_ref()
    }

    #[inline(always)]
    pub fn get_mut(&mut self, id: K) -> Option<&mut V> {
        let i = self.find(id)?;
        self.values[i].as_mut()
    }

    /// The value of `id`, made by `make` when there is none.
    #[inline(always)]
    pub fn get_or_insert_with(&mut self, id: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(id) {
            Some(i) => i,
            None => self.insert_made(id, make),
        };
        self.values[i].as_mut().expect("indexed slot holds a value")
    }

    /// The rest of [`IdSlab::get_or_insert_with`]: `id` is new. Its value goes in the slot
    /// freed last (the one most likely still in cache) or a new one. Answers its index.
    #[inline(never)]
    fn insert_made(&mut self, id: K, make: impl FnOnce() -> V) -> usize {
        let value = make();
        let i = match self.free.pop() {
            Some(i) => {
                self.values[i] = Some(value);
                i
            }
            None => {
                self.values.push(Some(value));
                self.values.len() - 1
            }
        };
        self.index.insert(id, i);
        self.hint.set(Some((id, i)));
        i
    }

    /// Puts `value` under `id`, answering the value it replaces. A new id takes the slot
    /// freed last, the one most likely still in cache.
    pub fn insert(&mut self, id: K, value: V) -> Option<V> {
        if let Some(i) = self.find(id) {
            return self.values[i].replace(value);
        }
        self.get_or_insert_with(id, || value);
        None
    }

    pub fn remove(&mut self, id: K) -> Option<V> {
        let i = self.index.remove(id)?;
        if self.hint.get().is_some_and(|(hint, _)| hint == id) {
            self.hint.set(None);
        }
        self.free.push(i);
        self.values[i].take()
    }
}

impl<K: TableKey, V> Index<&K> for IdSlab<K, V> {
    type Output = V;

    #[inline(always)]
    fn index(&self, id: &K) -> &V {
        self.get(*id).expect("id present in the slab")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{IoContextId, RequestId};
    use std::collections::BTreeMap;

    /// Random inserts and removes agree with an ordered map, and freed slots are reused.
    #[test]
    fn agrees_with_an_ordered_map() {
        let mut slab: IdSlab<IoContextId, u64> = IdSlab::default();
        let mut model = BTreeMap::new();
        let mut x = 99u64;
        for step in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = IoContextId(((x >> 33) % 200) as u32 * 3);
            if x & 1 == 0 {
                *slab.get_or_insert_with(id, || step) += 1;
                *model.entry(id).or_insert(step) += 1;
            } else {
                assert_eq!(slab.remove(id), model.remove(&id));
            }
            assert_eq!(slab.len(), model.len());
            // A new id by the other way of inserting, then gone again.
            let fresh = IoContextId(1_000 + (step % 3) as u32);
            assert_eq!(slab.insert(fresh, step), None);
            assert_eq!(slab.get(fresh), Some(&step));
            assert_eq!(slab.remove(fresh), Some(step));
            // A look-up of another id after the change: the hint must follow removals.
            let other = IoContextId(((x >> 20) % 200) as u32 * 3);
            assert_eq!(slab.get(other), model.get(&other));
            assert_eq!(slab.get(id), model.get(&id));
        }
        for (id, v) in &model {
            assert_eq!(slab[id], *v);
        }
        assert!(slab.values.len() <= 200, "freed slots are reused");
    }

    /// A removed id is forgotten by the hint too: made again, it gets a value; its slot
    /// reused by another id does not answer for it.
    #[test]
    fn removal_clears_the_hint() {
        let mut slab: IdSlab<IoContextId, u32> = IdSlab::default();
        let (a, b) = (IoContextId(7), IoContextId(8));
        slab.get_or_insert_with(a, || 1);
        assert_eq!(slab.remove(a), Some(1));
        assert_eq!(*slab.get_or_insert_with(a, || 2), 2);
        assert_eq!(slab.remove(a), Some(2));
        assert!(slab.get(a).is_none());
        slab.get_or_insert_with(b, || 3);
        assert!(slab.get(a).is_none());
        assert_eq!(slab[&b], 3);
    }

    /// `insert` answers the value it replaces, and a new id takes the slot freed last (the
    /// driver's requests in flight rely on it to write into a slot still in cache).
    #[test]
    fn insert_replaces_and_reuses_the_last_freed_slot() {
        let mut slab: IdSlab<RequestId, u64> = IdSlab::default();
        for id in 0..4 {
            assert_eq!(slab.insert(RequestId(id), id * 10), None);
        }
        assert_eq!(slab.insert(RequestId(2), 7), Some(20));
        assert_eq!(slab[&RequestId(2)], 7);
        assert_eq!(slab.remove(RequestId(1)), Some(10));
        assert_eq!(slab.insert(RequestId(9), 90), None);
        assert_eq!(slab.values.len(), 4, "the freed slot was reused");
        assert_eq!(slab.values[1], Some(90));
        assert_eq!(slab.len(), 4);
    }
}
