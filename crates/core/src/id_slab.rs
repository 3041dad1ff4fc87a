//! Values kept in a dense slab and found by id: the kernel reaches a process's scheduler
//! context through a pointer (`rq->elv.icq`, `bic`), iosched through the io context id a
//! request carries.
//!
//! An [`IdTable`] maps the id to the value's index; the values stay where they were put
//! (a removed one's index is reused by the next insert), so a lookup is one hash and a probe
//! or two, and neither a lookup nor an insert moves a large value. Ordered maps cost a
//! descent of comparisons per lookup, several per request in BFQ. Nothing is iterated: the
//! order of the slab decides nothing.

use std::ops::Index;

use crate::id_table::{IdTable, TableKey};

/// `V`s by id `K`.
#[derive(Clone, Debug)]
pub struct IdSlab<K: TableKey, V> {
    index: IdTable<usize, K>,
    values: Vec<Option<V>>,
    free: Vec<usize>,
}

impl<K: TableKey, V> Default for IdSlab<K, V> {
    fn default() -> Self {
        IdSlab {
            index: IdTable::default(),
            values: Vec::new(),
            free: Vec::new(),
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

    pub fn contains_key(&self, id: K) -> bool {
        self.index.get(id).is_some()
    }

    pub fn get(&self, id: K) -> Option<&V> {
        let i = *self.index.get(id)?;
        self.values[i].as_ref()
    }

    pub fn get_mut(&mut self, id: K) -> Option<&mut V> {
        let i = *self.index.get(id)?;
        self.values[i].as_mut()
    }

    /// The value of `id`, made by `make` when there is none.
    pub fn get_or_insert_with(&mut self, id: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.index.get(id) {
            Some(&i) => i,
            None => {
                let value = Some(make());
                let i = match self.free.pop() {
                    Some(i) => {
                        self.values[i] = value;
                        i
                    }
                    None => {
                        self.values.push(value);
                        self.values.len() - 1
                    }
                };
                self.index.insert(id, i);
                i
            }
        };
        self.values[i].as_mut().expect("indexed slot holds a value")
    }

    pub fn remove(&mut self, id: K) -> Option<V> {
        let i = self.index.remove(id)?;
        self.free.push(i);
        self.values[i].take()
    }
}

impl<K: TableKey, V> Index<&K> for IdSlab<K, V> {
    type Output = V;

    fn index(&self, id: &K) -> &V {
        self.get(*id).expect("id present in the slab")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::IoContextId;
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
        }
        for (id, v) in &model {
            assert_eq!(slab[id], *v);
        }
        assert!(slab.values.len() <= 200, "freed slots are reused");
    }
}
