//! Requests between two events (allocation and completion, dispatch and completion), found
//! by id.
//!
//! Drivers hand out request ids in sequence, and the requests in flight at once are mostly a
//! short run of recent ids. So an id's place in a power-of-two index is its low
//! bits (no hash, no probe): a look-up is one load and one compare. The few ids whose place is
//! taken by another live id (a request the scheduler held back while many newer ones passed)
//! go to a hashed [`IdTable`] beside it, asked only when the index does not answer. The
//! entries themselves stay in a slab (a new request takes the slot the last completion
//! freed, still in cache), so growing the index moves no entry (issue 34: the driver's
//! `IdSlab` and CFQ's hash map of requests in flight cost some 60–150 instructions a request).

use std::ops::Index;

use crate::id_table::IdTable;
use crate::request::RequestId;

/// No id: ids stored in the index are `id + 1`.
const EMPTY: u64 = 0;

/// Index slots of a new table (doubled while more than half are live).
const INITIAL_SLOTS: usize = 64;

/// `V`s by request id.
#[derive(Clone, Debug)]
pub struct SeqTable<V> {
    /// Per slot `id & mask`: that id plus one (0: none) and its entry's slab index.
    index: Vec<(u64, u32)>,
    /// Ids whose index slot another live id holds: their slab index.
    overflow: IdTable<u32>,
    values: Vec<Option<V>>,
    free: Vec<u32>,
    len: usize,
}

impl<V> Default for SeqTable<V> {
    fn default() -> Self {
        SeqTable {
            index: vec![(EMPTY, 0); INITIAL_SLOTS],
            overflow: IdTable::default(),
            values: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

impl<V> SeqTable<V> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn home(&self, id: RequestId) -> usize {
        id.0 as usize & (self.index.len() - 1)
    }

    /// The slab index of `id`'s entry.
    #[inline(always)]
    fn find(&self, id: RequestId) -> Option<usize> {
        let (key, slot) = self.index[self.home(id)];
        if key == id.0 + 1 {
            return Some(slot as usize);
        }
        if self.overflow.is_empty() {
            return None;
        }
        self.overflow.get(id).map(|&slot| slot as usize)
    }

    #[inline(always)]
    pub fn get(&self, id: RequestId) -> Option<&V> {
        let slot = self.find(id)?;
        self.values[slot].as_ref()
    }

    #[inline(always)]
    pub fn get_mut(&mut self, id: RequestId) -> Option<&mut V> {
        let slot = self.find(id)?;
        self.values[slot].as_mut()
    }

    /// Puts `value` under `id`, which must be new (panics if it is in the table).
    #[inline]
    pub fn insert_new(&mut self, id: RequestId, value: V) {
        if 2 * (self.len + 1) > self.index.len() {
            self.grow();
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.values[slot as usize] = Some(value);
                slot
            }
            None => {
                self.values.push(Some(value));
                u32::try_from(self.values.len() - 1).expect("fewer than 2^32 in flight")
            }
        };
        self.len += 1;
        self.place(id, slot);
    }

    /// Indexes `id` at `slot`: in its home slot if free, else in the overflow table. An id
    /// already indexed is either in its home slot or in the overflow table: found there, it
    /// panics (a request id is new by construction).
    #[inline(always)]
    fn place(&mut self, id: RequestId, slot: u32) {
        let home = self.home(id);
        let key = self.index[home].0;
        if key == EMPTY {
            self.index[home] = (id.0 + 1, slot);
        } else {
            assert!(
                key != id.0 + 1 && self.overflow.insert(id, slot).is_none(),
                "an id was inserted twice"
            );
        }
    }

    #[inline]
    pub fn remove(&mut self, id: RequestId) -> Option<V> {
        let home = self.home(id);
        let slot = if self.index[home].0 == id.0 + 1 {
            let slot = self.index[home].1;
            self.index[home].0 = EMPTY;
            slot
        } else {
            self.overflow.remove(id)?
        };
        self.len -= 1;
        self.free.push(slot);
        self.values[slot as usize].take()
    }

    /// Doubles the index and places every live id again (the slab does not move).
    #[cold]
    fn grow(&mut self) {
        let mut live: Vec<(RequestId, u32)> = self
            .index
            .iter()
            .filter(|&&(key, _)| key != EMPTY)
            .map(|&(key, slot)| (RequestId(key - 1), slot))
            .collect();
        let overflow = std::mem::take(&mut self.overflow);
        live.extend(overflow.entries().map(|(id, &slot)| (id, slot)));
        self.index = vec![(EMPTY, 0); 2 * self.index.len()];
        // Oldest first: they keep their home slots, newer ids that collide overflow.
        live.sort_unstable();
        for (id, slot) in live {
            self.place(id, slot);
        }
    }
}

impl<V> Index<&RequestId> for SeqTable<V> {
    type Output = V;

    #[inline(always)]
    fn index(&self, id: &RequestId) -> &V {
        self.get(*id).expect("id present in the table")
    }
}

/// A step of [`churn`], for a table of values by request id under test.
#[cfg(test)]
pub(crate) enum Churn {
    /// A new id (never inserted before), with a value.
    Insert(RequestId, u64),
    /// A live id leaves.
    Remove(RequestId),
    /// After each step: an id to look up (live, gone or never inserted).
    Probe(RequestId),
}

/// Sequential ids completing out of order, some held back for long runs of newer ones (in a
/// table placed by an id's low bits they overflow their place), the live set breathing
/// between a few and a few hundred: 50,000 steps from `seed`. Answers the first id never
/// inserted. Drives the tests of [`SeqTable`] and of CFQ's in-flight table alike.
#[cfg(test)]
pub(crate) fn churn(seed: u64, mut apply: impl FnMut(Churn)) -> RequestId {
    let mut live = std::collections::BTreeSet::new();
    let mut next = 0u64;
    let mut x = seed;
    for step in 0..50_000u64 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let target = 4 + (step / 5_000 % 4) * 90;
        if live.len() < target as usize || x >> 62 == 0 {
            let id = RequestId(next);
            next += 1;
            live.insert(id);
            apply(Churn::Insert(id, step));
        } else {
            // Mostly the oldest few; ids a multiple of 97 stay very long.
            let pick = live
                .iter()
                .copied()
                .filter(|id| id.0 % 97 != 0 || x >> 61 == 0)
                .nth(((x >> 33) % 3) as usize);
            if let Some(id) = pick {
                live.remove(&id);
                apply(Churn::Remove(id));
            }
        }
        apply(Churn::Probe(RequestId((x >> 20) % (next + 1))));
    }
    RequestId(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// [`churn`]'s ids agree with an ordered map through every growth and overflow.
    #[test]
    fn agrees_with_an_ordered_map() {
        let mut table = SeqTable::default();
        let mut model = BTreeMap::new();
        let mut overflowed = 0;
        let next = churn(7, |step| match step {
            Churn::Insert(id, value) => {
                table.insert_new(id, value);
                model.insert(id, value);
            }
            Churn::Remove(id) => assert_eq!(table.remove(id), model.remove(&id)),
            Churn::Probe(id) => {
                assert_eq!(table.len(), model.len());
                overflowed += usize::from(!table.overflow.is_empty());
                assert_eq!(table.get(id), model.get(&id));
            }
        });
        assert!(
            overflowed > 1_000,
            "the test hardly overflowed: {overflowed}"
        );
        for (id, value) in &model {
            assert_eq!(table[id], *value);
            assert_eq!(table.get_mut(*id).copied(), Some(*value));
        }
        assert!(table.remove(next).is_none());
    }

    #[test]
    #[should_panic(expected = "inserted twice")]
    fn an_id_in_flight_cannot_be_inserted_again() {
        let mut table = SeqTable::default();
        table.insert_new(RequestId(3), 1);
        table.insert_new(RequestId(3), 2);
    }
}
