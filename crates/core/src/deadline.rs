//! `deadline`: mq-deadline's policy. Kernel: `block/mq-deadline.c` (`dd_dispatch_request()`).
//!
//! Reads and writes each have a sector-sorted list and a FIFO with a deadline
//! (`read_expire`, `write_expire`). Requests go out in sector-ascending *batches* of up to
//! `fifo_batch`; a new batch starts from the FIFO head when that head has expired, else from
//! where the last batch of that direction stopped. Reads are preferred, but a waiting write
//! batch may be passed over at most `writes_starved` times.

use std::collections::BTreeMap;

use crate::elevator::{Dispatch, Elevator};
use crate::request::{Request, RequestId, Time, NSEC_PER_MSEC};
use crate::trace::Trace;
use crate::tunable::{parse_tunable, TunableError, TunableSpec, TunableValue};

const READ: usize = 0;
const WRITE: usize = 1;

static TUNABLES: [TunableSpec; 5] = [
    TunableSpec {
        name: "read_expire",
        unit: "ms",
        default: 500,
        min: 0,
        max: u32::MAX as u64,
        meaning: "deadline of a read, from insertion",
        extension: false,
    },
    TunableSpec {
        name: "write_expire",
        unit: "ms",
        default: 5000,
        min: 0,
        max: u32::MAX as u64,
        meaning: "deadline of a write, from insertion",
        extension: false,
    },
    TunableSpec {
        name: "writes_starved",
        unit: "batches",
        default: 2,
        min: 0,
        max: u32::MAX as u64,
        meaning: "read batches that may pass a waiting write batch",
        extension: false,
    },
    TunableSpec {
        name: "front_merges",
        unit: "bool",
        default: 1,
        min: 0,
        max: 1,
        meaning: "try merging a bio in front of a queued request",
        extension: false,
    },
    TunableSpec {
        name: "fifo_batch",
        unit: "requests",
        default: 16,
        min: 0,
        max: u32::MAX as u64,
        meaning: "requests dispatched in one sector-sorted batch",
        extension: false,
    },
];

/// Sort key: sector first, request id to keep equal sectors in arrival order.
type SortKey = (u64, RequestId);

#[derive(Clone, Copy, Debug)]
struct Queued {
    rq: Request,
    /// Insertion sequence: the FIFO key.
    seq: u64,
    fifo_time: Time,
}

/// mq-deadline.
#[derive(Debug)]
pub struct Deadline {
    queued: BTreeMap<RequestId, Queued>,
    sort_list: [BTreeMap<SortKey, ()>; 2],
    fifo_list: [BTreeMap<u64, RequestId>; 2],
    next_rq: [Option<SortKey>; 2],
    next_seq: u64,
    batching: u64,
    starved: u64,
    read_expire_ns: Time,
    write_expire_ns: Time,
    writes_starved: u64,
    front_merges: bool,
    fifo_batch: u64,
}

impl Default for Deadline {
    fn default() -> Self {
        Deadline::new()
    }
}

impl Deadline {
    pub fn new() -> Deadline {
        Deadline {
            queued: BTreeMap::new(),
            sort_list: [BTreeMap::new(), BTreeMap::new()],
            fifo_list: [BTreeMap::new(), BTreeMap::new()],
            next_rq: [None, None],
            next_seq: 0,
            batching: 0,
            starved: 0,
            read_expire_ns: 500 * NSEC_PER_MSEC,
            write_expire_ns: 5000 * NSEC_PER_MSEC,
            writes_starved: 2,
            front_merges: true,
            fifo_batch: 16,
        }
    }

    /// The tunables table, for `iosched schedulers`.
    pub fn tunable_specs() -> &'static [TunableSpec] {
        &TUNABLES
    }

    fn fifo_head(&self, dir: usize) -> Option<&Queued> {
        let (_, id) = self.fifo_list[dir].first_key_value()?;
        self.queued.get(id)
    }

    /// Kernel: deadline_check_fifo(): has the oldest request of `dir` passed its deadline?
    fn fifo_expired(&self, dir: usize, now: Time) -> bool {
        self.fifo_head(dir)
            .is_some_and(|head| now >= head.fifo_time)
    }

    /// Kernel: deadline_move_request(): take `key` out, remember its successor for the batch.
    fn move_request(&mut self, dir: usize, key: SortKey) -> Request {
        let successor = self.sort_list[dir]
            .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
            .next()
            .map(|(k, _)| *k);
        self.next_rq = [None, None];
        self.next_rq[dir] = successor;
        self.sort_list[dir].remove(&key);
        let entry = self
            .queued
            .remove(&key.1)
            .expect("sorted request must be queued");
        self.fifo_list[dir].remove(&entry.seq);
        entry.rq
    }
}

fn direction(rq: &Request) -> usize {
    rq.op.data_dir()
}

impl Elevator for Deadline {
    fn name(&self) -> &'static str {
        "deadline"
    }

    fn insert(&mut self, rq: Request, now: Time, _trace: &mut dyn Trace) {
        let dir = direction(&rq);
        let expire = if dir == READ {
            self.read_expire_ns
        } else {
            self.write_expire_ns
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        let previous = self.queued.insert(
            rq.id,
            Queued {
                rq,
                seq,
                fifo_time: now + expire,
            },
        );
        assert!(previous.is_none(), "request {:?} inserted twice", rq.id);
        self.sort_list[dir].insert((rq.sector, rq.id), ());
        self.fifo_list[dir].insert(seq, rq.id);
    }

    /// Kernel: dd_bio_merge() → elv_merge(), back side: the request ending where the bio
    /// starts, found through the sort list. (`front_merges` governs the front side, which
    /// iosched does not attempt.)
    fn try_back_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        let dir = direction(bio);
        let (&key, _) = self.sort_list[dir]
            .range(..(bio.sector, RequestId(0)))
            .next_back()?;
        let entry = self.queued.get_mut(&key.1)?;
        if !entry.rq.can_back_merge(bio) {
            return None;
        }
        entry.rq.nr_sectors += bio.nr_sectors;
        Some(entry.rq.id)
    }

    /// Kernel: elv_merge() front side, when `front_merges` is on: the request starting where
    /// the bio ends moves back to the bio's sector, keeping its FIFO place.
    fn try_front_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        if !self.front_merges {
            return None;
        }
        let dir = direction(bio);
        let (&key, _) = self.sort_list[dir]
            .range((bio.end_sector(), RequestId(0))..)
            .next()?;
        let entry = self.queued.get_mut(&key.1)?;
        if entry.rq.sector != bio.end_sector() || !bio.can_back_merge(&entry.rq) {
            return None;
        }
        entry.rq.sector = bio.sector;
        entry.rq.nr_sectors += bio.nr_sectors;
        let moved = (bio.sector, key.1);
        self.sort_list[dir].remove(&key);
        self.sort_list[dir].insert(moved, ());
        for next in &mut self.next_rq {
            if *next == Some(key) {
                *next = Some(moved);
            }
        }
        Some(key.1)
    }

    /// Kernel: __dd_dispatch_request().
    fn dispatch(&mut self, now: Time, _trace: &mut dyn Trace) -> Dispatch {
        // Continue the current batch while it lasts; writes are checked first, as the
        // kernel does, though at most one direction has a next request.
        let batch_next = self.next_rq[WRITE]
            .map(|key| (WRITE, key))
            .or_else(|| self.next_rq[READ].map(|key| (READ, key)));
        if let Some((dir, key)) = batch_next {
            if self.batching < self.fifo_batch {
                self.batching += 1;
                return Dispatch::Request(self.move_request(dir, key));
            }
        }

        let reads = !self.fifo_list[READ].is_empty();
        let writes = !self.fifo_list[WRITE].is_empty();
        let dir = if reads {
            let starve_writes = writes && {
                let passed = self.starved;
                self.starved += 1;
                passed >= self.writes_starved
            };
            if starve_writes {
                self.starved = 0;
                WRITE
            } else {
                READ
            }
        } else if writes {
            self.starved = 0;
            WRITE
        } else {
            return Dispatch::Empty;
        };

        let key = match self.next_rq[dir] {
            Some(next) if !self.fifo_expired(dir, now) => next,
            _ => {
                let head = self
                    .fifo_head(dir)
                    .expect("direction chosen with a queued request");
                (head.rq.sector, head.rq.id)
            }
        };
        self.batching = 1;
        Dispatch::Request(self.move_request(dir, key))
    }

    fn completed(&mut self, _rq: &Request, _now: Time, _trace: &mut dyn Trace) {}

    fn queued(&self) -> usize {
        self.queued.len()
    }

    fn tunables(&self) -> Vec<TunableValue> {
        let values = [
            self.read_expire_ns / NSEC_PER_MSEC,
            self.write_expire_ns / NSEC_PER_MSEC,
            self.writes_starved,
            u64::from(self.front_merges),
            self.fifo_batch,
        ];
        TUNABLES
            .iter()
            .zip(values)
            .map(|(spec, value)| TunableValue { spec, value })
            .collect()
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let (spec, value) = parse_tunable("deadline", &TUNABLES, name, value)?;
        match spec.name {
            "read_expire" => self.read_expire_ns = value * NSEC_PER_MSEC,
            "write_expire" => self.write_expire_ns = value * NSEC_PER_MSEC,
            "writes_starved" => self.writes_starved = value,
            "front_merges" => self.front_merges = value != 0,
            "fifo_batch" => self.fifo_batch = value,
            other => unreachable!("tunable {other} is in the table but not handled"),
        }
        Ok(())
    }

    fn check_invariants(&self) {
        let sorted: usize = self.sort_list.iter().map(BTreeMap::len).sum();
        let fifo: usize = self.fifo_list.iter().map(BTreeMap::len).sum();
        assert_eq!(
            sorted,
            self.queued.len(),
            "sort lists disagree with queued set"
        );
        assert_eq!(fifo, self.queued.len(), "FIFOs disagree with queued set");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{async_write, read};
    use crate::trace::NoTrace;

    fn next(dd: &mut Deadline, now: Time) -> u64 {
        match dd.dispatch(now, &mut NoTrace) {
            Dispatch::Request(rq) => rq.id.0,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    /// A batch runs in ascending sector order from where the FIFO head sits.
    #[test]
    fn batch_is_sector_sorted_from_fifo_head() {
        let mut dd = Deadline::new();
        for (id, sector) in [(1, 500), (2, 100), (3, 900), (4, 700)] {
            dd.insert(read(id, sector, 8), 0, &mut NoTrace);
        }
        let order: Vec<u64> = (0..4).map(|_| next(&mut dd, 0)).collect();
        // First pick: no batch yet, so the FIFO head (sector 500); then successors upward;
        // the batch ends at the top and restarts from the sorted position of the FIFO head.
        assert_eq!(order, [1, 4, 3, 2]);
    }

    /// An expired read FIFO head wins over the batch position when a new batch starts.
    #[test]
    fn expired_read_restarts_batch_at_fifo_head() {
        let mut dd = Deadline::new();
        dd.set_tunable("fifo_batch", "1").unwrap();
        dd.insert(read(1, 10, 8), 0, &mut NoTrace);
        dd.insert(read(2, 5_000, 8), 0, &mut NoTrace);
        dd.insert(read(3, 20, 8), 1, &mut NoTrace);
        assert_eq!(next(&mut dd, 2), 1); // next_rq for reads is now sector 20 (id 3)
                                         // At 600 ms request 2 (inserted at 0) has expired; it beats the sorted successor.
        assert_eq!(next(&mut dd, 600 * NSEC_PER_MSEC), 2);
    }

    /// Writes are passed over at most `writes_starved` times while reads keep coming.
    #[test]
    fn writes_starved_bounds_read_preference() {
        let mut dd = Deadline::new();
        dd.set_tunable("fifo_batch", "1").unwrap();
        dd.insert(async_write(100, 50_000, 8), 0, &mut NoTrace);
        for id in 1..=5 {
            dd.insert(read(id, id * 1000, 8), 0, &mut NoTrace);
        }
        let order: Vec<u64> = (0..4).map(|_| next(&mut dd, 0)).collect();
        assert_eq!(order, [1, 2, 100, 3]);
    }

    #[test]
    fn contiguous_read_back_merges_and_keeps_its_fifo_place() {
        let mut dd = Deadline::new();
        dd.insert(read(1, 1000, 8), 0, &mut NoTrace);
        dd.insert(read(2, 10, 8), 0, &mut NoTrace);
        assert_eq!(dd.try_back_merge(&read(3, 1008, 8), 5), Some(RequestId(1)));
        assert_eq!(dd.try_back_merge(&async_write(4, 18, 8), 5), None);
        assert_eq!(next(&mut dd, 10), 1);
        dd.check_invariants();
    }

    /// A bio ending where a queued request starts joins it in front, unless front_merges=0.
    #[test]
    fn front_merge_moves_the_start_back_unless_switched_off() {
        let mut dd = Deadline::new();
        dd.insert(read(1, 1000, 8), 0, &mut NoTrace);
        assert_eq!(dd.try_front_merge(&read(2, 992, 8), 0), Some(RequestId(1)));
        dd.check_invariants();
        match dd.dispatch(0, &mut NoTrace) {
            Dispatch::Request(rq) => assert_eq!((rq.sector, rq.nr_sectors), (992, 16)),
            other => panic!("expected a request, got {other:?}"),
        }
        let mut off = Deadline::new();
        off.set_tunable("front_merges", "0").unwrap();
        off.insert(read(1, 1000, 8), 0, &mut NoTrace);
        assert_eq!(off.try_front_merge(&read(2, 992, 8), 0), None);
    }

    #[test]
    fn tunables_echo_in_ms_and_clamp() {
        let mut dd = Deadline::new();
        dd.set_tunable("read_expire", "250").unwrap();
        dd.set_tunable("front_merges", "7").unwrap();
        let values: Vec<(&str, u64)> = dd
            .tunables()
            .iter()
            .map(|t| (t.spec.name, t.value))
            .collect();
        assert!(values.contains(&("read_expire", 250)));
        assert!(values.contains(&("front_merges", 1)));
        assert!(dd.set_tunable("slice_idle", "0").is_err());
    }
}
