//! CFQ's requests in flight, by request id, with their records stored in the index itself.
//!
//! The kernel reaches a dispatched request's queue and context through the request; here the
//! driver hands the request back at completion and CFQ finds its record by id. Ids come in
//! sequence and the requests in flight at once are a short run of recent ids, so an id's
//! place is its low bits, as in [`SeqTable`], but the record sits in that place rather than
//! in a slab beside it: a dispatch writes one slot and a completion reads it back, with no
//! free list or slab index between (issue 34: the slab's way cost ~80 instructions a
//! request, dispatch and completion together). An id whose place another live id holds (a
//! request the device keeps while many newer ones pass) goes to a hashed [`IdTable`] beside
//! it, asked only when the place does not answer.
//!
//! [`SeqTable`]: crate::seq_table::SeqTable

use super::queue::InFlight;
use crate::id_table::IdTable;
use crate::request::RequestId;

/// Places of a new table (doubled while more than half the records are live).
const INITIAL_SLOTS: usize = 64;

/// What an empty place holds besides its key 0 (never read).
const VACANT: InFlight = InFlight {
    start_time: 0,
    dispatched_at: 0,
    queue: 0,
    cic: 0,
    in_driver_at_dispatch: std::num::NonZeroU32::MIN,
};

/// In-flight records by request id.
#[derive(Clone, Debug)]
pub(crate) struct InFlightTable {
    /// Per place `id & mask`: that id plus one (0: none) and its record.
    slots: Vec<(u64, InFlight)>,
    /// Ids whose place another live id holds.
    overflow: IdTable<InFlight>,
    len: usize,
}

impl Default for InFlightTable {
    fn default() -> Self {
        InFlightTable {
            slots: vec![(0, VACANT); INITIAL_SLOTS],
            overflow: IdTable::default(),
            len: 0,
        }
    }
}

impl InFlightTable {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn home(&self, id: RequestId) -> usize {
        id.0 as usize & (self.slots.len() - 1)
    }

    /// Records `id`, which must not be in flight (panics if it is).
    #[inline]
    pub(crate) fn insert_new(&mut self, id: RequestId, record: InFlight) {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        self.len += 1;
        self.place(id, record);
    }

    #[inline(always)]
    fn place(&mut self, id: RequestId, record: InFlight) {
        let home = self.home(id);
        let slot = &mut self.slots[home];
        if slot.0 == 0 {
            *slot = (id.0 + 1, record);
        } else {
            assert!(
                slot.0 != id.0 + 1 && self.overflow.insert(id, record).is_none(),
                "a request was dispatched twice"
            );
        }
    }

    /// The record of `id`, if in flight.
    pub(crate) fn get(&self, id: RequestId) -> Option<&InFlight> {
        let (key, record) = &self.slots[self.home(id)];
        if *key == id.0 + 1 {
            return Some(record);
        }
        self.overflow.get(id)
    }

    /// Takes `id`'s record out, if in flight.
    #[inline]
    pub(crate) fn remove(&mut self, id: RequestId) -> Option<InFlight> {
        let home = self.home(id);
        let slot = &mut self.slots[home];
        let record = if slot.0 == id.0 + 1 {
            slot.0 = 0;
            slot.1
        } else {
            if self.overflow.is_empty() {
                return None;
            }
            self.overflow.remove(id)?
        };
        self.len -= 1;
        Some(record)
    }

    /// Doubles the places and records every live id again, oldest first (they keep their
    /// places; newer ids that collide overflow).
    #[cold]
    fn grow(&mut self) {
        let mut live: Vec<(RequestId, InFlight)> = self
            .slots
            .iter()
            .filter(|(key, _)| *key != 0)
            .map(|&(key, record)| (RequestId(key - 1), record))
            .collect();
        let overflow = std::mem::take(&mut self.overflow);
        live.extend(overflow.entries().map(|(id, &record)| (id, record)));
        self.slots = vec![(0, VACANT); 2 * self.slots.len()];
        live.sort_unstable_by_key(|&(id, _)| id);
        for (id, record) in live {
            self.place(id, record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq_table::{churn, Churn};
    use std::collections::BTreeMap;

    fn record(n: u64) -> InFlight {
        InFlight {
            start_time: n,
            dispatched_at: n * 3,
            queue: n as u32,
            cic: (n >> 3) as u32,
            in_driver_at_dispatch: std::num::NonZeroU32::MIN.saturating_add(n as u32),
        }
    }

    /// [`churn`]'s ids agree with an ordered map through every growth and overflow.
    #[test]
    fn agrees_with_an_ordered_map() {
        let mut table = InFlightTable::default();
        let mut model = BTreeMap::new();
        let mut overflowed = 0;
        let next = churn(11, |step| match step {
            Churn::Insert(id, n) => {
                table.insert_new(id, record(n));
                model.insert(id, record(n));
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
        for (id, want) in &model {
            assert_eq!(table.get(*id), Some(want));
        }
        assert!(table.remove(next).is_none());
    }

    #[test]
    #[should_panic(expected = "dispatched twice")]
    fn an_id_in_flight_twice_panics() {
        let mut table = InFlightTable::default();
        table.insert_new(RequestId(5), record(1));
        table.insert_new(RequestId(5), record(2));
    }
}
