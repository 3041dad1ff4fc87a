//! `deadline`: mq-deadline's policy. Kernel: `block/mq-deadline.c` (`dd_dispatch_request()`).
//!
//! Reads and writes each have a sector-sorted list and a FIFO with a deadline
//! (`read_expire`, `write_expire`). Requests go out in sector-ascending *batches* of up to
//! `fifo_batch`; a new batch starts from the FIFO head when that head has expired, else from
//! where the last batch of that direction stopped. Reads are preferred, but a waiting write
//! batch may be passed over at most `writes_starved` times.

use std::collections::{BTreeMap, VecDeque};

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

/// Index of a queued request in [`Deadline::slots`].
type Slot = u32;

#[derive(Clone, Copy, Debug)]
struct Queued {
    rq: Request,
    /// Insertion sequence: tells a live FIFO entry from a stale one.
    seq: u64,
    fifo_time: Time,
}

/// mq-deadline.
///
/// Choice: requests live in a slab (`slots`); the sort lists map a sort key to its slot,
/// and each FIFO is a deque of `(seq, slot)` whose entries for requests already
/// dispatched by sector order are skipped when they reach the front. The kernel unlinks
/// such a request from its FIFO list in O(1); lazy deletion gets the same amortised cost
/// without a second ordered map, which made deadline dearer per request than CFQ.
#[derive(Debug)]
pub struct Deadline {
    slots: Vec<Option<Queued>>,
    free_slots: Vec<Slot>,
    queued: usize,
    sort_list: [BTreeMap<SortKey, Slot>; 2],
    fifo_list: [VecDeque<(u64, Slot)>; 2],
    /// Live requests per FIFO (the deques also hold stale entries).
    fifo_live: [usize; 2],
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
            slots: Vec::new(),
            free_slots: Vec::new(),
            queued: 0,
            sort_list: [BTreeMap::new(), BTreeMap::new()],
            fifo_list: [VecDeque::new(), VecDeque::new()],
            fifo_live: [0, 0],
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

    fn store(&mut self, entry: Queued) -> Slot {
        self.queued += 1;
        match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(entry);
                slot
            }
            None => {
                self.slots.push(Some(entry));
                Slot::try_from(self.slots.len() - 1).expect("fewer than 2^32 queued requests")
            }
        }
    }

    fn is_live(&self, (seq, slot): (u64, Slot)) -> bool {
        self.slots[slot as usize].is_some_and(|entry| entry.seq == seq)
    }

    /// The oldest live request of `dir`, dropping stale FIFO entries on the way.
    fn fifo_head(&mut self, dir: usize) -> Option<Queued> {
        while let Some(&front) = self.fifo_list[dir].front() {
            if self.is_live(front) {
                return self.slots[front.1 as usize];
            }
            self.fifo_list[dir].pop_front();
        }
        None
    }

    /// Kernel: deadline_check_fifo(): has the oldest request of `dir` passed its deadline?
    fn fifo_expired(&mut self, dir: usize, now: Time) -> bool {
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
        let slot = self.sort_list[dir]
            .remove(&key)
            .expect("batch position must be queued");
        let entry = self.slots[slot as usize]
            .take()
            .expect("sorted request must be queued");
        self.free_slots.push(slot);
        self.queued -= 1;
        self.fifo_live[dir] -= 1;
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
        let slot = self.store(Queued {
            rq,
            seq,
            fifo_time: now + expire,
        });
        let previous = self.sort_list[dir].insert((rq.sector, rq.id), slot);
        assert!(previous.is_none(), "request {:?} inserted twice", rq.id);
        self.fifo_list[dir].push_back((seq, slot));
        self.fifo_live[dir] += 1;
    }

    /// Kernel: dd_bio_merge() → elv_merge(), back side: the request ending where the bio
    /// starts, found through the sort list. (`front_merges` governs the front side, which
    /// iosched does not attempt.)
    fn try_back_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        let dir = direction(bio);
        let (_, &slot) = self.sort_list[dir]
            .range(..(bio.sector, RequestId(0)))
            .next_back()?;
        let entry = self.slots[slot as usize].as_mut()?;
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
        let (&key, &slot) = self.sort_list[dir]
            .range((bio.end_sector(), RequestId(0))..)
            .next()?;
        let entry = self.slots[slot as usize].as_mut()?;
        if entry.rq.sector != bio.end_sector() || !bio.can_back_merge(&entry.rq) {
            return None;
        }
        entry.rq.sector = bio.sector;
        entry.rq.nr_sectors += bio.nr_sectors;
        let moved = (bio.sector, key.1);
        self.sort_list[dir].remove(&key);
        self.sort_list[dir].insert(moved, slot);
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

        let reads = self.fifo_live[READ] > 0;
        let writes = self.fifo_live[WRITE] > 0;
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

        let batch_position = self.next_rq[dir];
        let key = match batch_position {
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
        self.queued
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
        let live_slots = self.slots.iter().flatten().count();
        assert_eq!(sorted, self.queued, "sort lists disagree with queued count");
        assert_eq!(live_slots, self.queued, "slab disagrees with queued count");
        for dir in [READ, WRITE] {
            let live = self.fifo_list[dir]
                .iter()
                .filter(|&&entry| self.is_live(entry))
                .count();
            assert_eq!(live, self.fifo_live[dir], "FIFO {dir} live count is wrong");
            let sorted_slots = self.sort_list[dir].values();
            for &slot in sorted_slots {
                let entry = self.slots[slot as usize].expect("sorted slot is live");
                assert_eq!(
                    direction(&entry.rq),
                    dir,
                    "request sorted in the wrong direction"
                );
            }
        }
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

    /// A deliberately naive mq-deadline over plain vectors (O(n) per step), written from
    /// `__dd_dispatch_request()`'s rules, to check the slab/lazy-FIFO structure against.
    #[derive(Default)]
    struct NaiveDeadline {
        /// (insertion sequence, request, fifo deadline) per direction, in insertion order.
        fifo: [Vec<(u64, Request, Time)>; 2],
        next: [Option<(u64, RequestId)>; 2],
        seq: u64,
        batching: u64,
        starved: u64,
    }

    impl NaiveDeadline {
        const BATCH: u64 = 4;
        const STARVED: u64 = 2;
        const EXPIRE: [Time; 2] = [3 * NSEC_PER_MSEC, 9 * NSEC_PER_MSEC];

        fn insert(&mut self, rq: Request, now: Time) {
            let dir = direction(&rq);
            self.fifo[dir].push((self.seq, rq, now + Self::EXPIRE[dir]));
            self.seq += 1;
        }

        fn take(&mut self, dir: usize, key: (u64, RequestId)) -> Request {
            let at = self.fifo[dir]
                .iter()
                .position(|(_, rq, _)| (rq.sector, rq.id) == key)
                .expect("key is queued");
            let (_, rq, _) = self.fifo[dir].remove(at);
            let successor = self.fifo[dir]
                .iter()
                .map(|(_, rq, _)| (rq.sector, rq.id))
                .filter(|k| *k > key)
                .min();
            self.next = [None, None];
            self.next[dir] = successor;
            rq
        }

        fn dispatch(&mut self, now: Time) -> Option<Request> {
            let batch = self.next[WRITE]
                .map(|k| (WRITE, k))
                .or(self.next[READ].map(|k| (READ, k)));
            if let Some((dir, key)) = batch {
                if self.batching < Self::BATCH {
                    self.batching += 1;
                    return Some(self.take(dir, key));
                }
            }
            let (reads, writes) = (!self.fifo[READ].is_empty(), !self.fifo[WRITE].is_empty());
            let dir = if reads && writes && self.starved >= Self::STARVED {
                self.starved = 0;
                WRITE
            } else if reads {
                self.starved += u64::from(writes);
                READ
            } else if writes {
                self.starved = 0;
                WRITE
            } else {
                return None;
            };
            let (_, head, deadline) = self.fifo[dir][0];
            let key = match self.next[dir] {
                Some(next) if now < deadline => next,
                _ => (head.sector, head.id),
            };
            self.batching = 1;
            Some(self.take(dir, key))
        }
    }

    proptest::proptest! {
        /// The slab and lazily cleaned FIFOs dispatch exactly what the naive model does, in
        /// the same order, through inserts of both directions, merges and expiries.
        #[test]
        fn dispatch_order_matches_a_naive_model(
            steps in proptest::collection::vec((0u8..4, 0u64..64, 0u64..4 * NSEC_PER_MSEC), 1..300)
        ) {
            let mut dd = Deadline::new();
            for (name, value) in [("fifo_batch", "4"), ("writes_starved", "2"), ("read_expire", "3"), ("write_expire", "9")] {
                dd.set_tunable(name, value).unwrap();
            }
            let mut model = NaiveDeadline::default();
            let (mut now, mut id) = (0, 0);
            for (kind, sector, advance) in steps {
                now += advance;
                id += 1;
                match kind {
                    0 | 1 => {
                        let rq = if kind == 0 { read(id, sector * 8, 8) } else { async_write(id, sector * 8, 8) };
                        dd.insert(rq, now, &mut NoTrace);
                        model.insert(rq, now);
                    }
                    _ => {
                        let ours = match dd.dispatch(now, &mut NoTrace) {
                            Dispatch::Request(rq) => Some(rq.id),
                            Dispatch::Empty => None,
                            other => panic!("deadline never idles: {other:?}"),
                        };
                        proptest::prop_assert_eq!(ours, model.dispatch(now).map(|rq| rq.id));
                    }
                }
                dd.check_invariants();
                proptest::prop_assert_eq!(dd.queued(), model.fifo[0].len() + model.fifo[1].len());
            }
        }
    }
}
