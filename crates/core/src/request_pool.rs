//! The block layer's request allocation: how many requests a queue lets exist before
//! submitters sleep. Kernel (legacy request path, 4.20): `struct request_list`,
//! `__get_request()`, `get_request()`, `freed_request()`, `ioc_batching()`.
//!
//! Every cgroup has its own list (`blkg->rl`; the root cgroup uses `q->root_rl`), with a
//! count per direction, sync and async. A request is taken when a bio that merges nowhere
//! needs one and given back when it completes, so queued and in-flight requests both count.
//! The rules kept:
//! - at `nr_requests - nr_requests/8 + 1` (113 of 128) the list is *congested*; it clears
//!   below `nr_requests - nr_requests/8 - nr_requests/16 - 1` (103);
//! - the allocation that reaches `nr_requests` marks the list *full* and makes its process a
//!   *batcher*; while full, only a batcher or a process the scheduler lets through
//!   (`elv_may_queue()` answering MUST) allocates; everyone else sleeps on the list's wait
//!   queue, first come first woken;
//! - never more than `3 * nr_requests / 2`, batcher or not;
//! - a freed request, once the count is below `nr_requests`, clears *full* and wakes one
//!   sleeper, which retries as a batcher;
//! - a batcher may take `BLK_BATCH_REQ` (32) requests, or any number within
//!   `BLK_BATCH_TIME` (20 ms) of becoming one.
//!
//! Choice: the kernel's per-task `io_context` carries the batching state; here it is keyed by
//! [`IoContextId`] (one per simulated process).

use std::collections::VecDeque;

use crate::id_map::IdMap;
use crate::id_slab::IdSlab;
use crate::request::{CgroupId, IoContextId, Time, NSEC_PER_MSEC};

/// 128: `BLKDEV_MAX_RQ`, the default `nr_requests`.
pub const DEFAULT_NR_REQUESTS: u32 = 128;
/// 32: requests a batcher may take (`BLK_BATCH_REQ`, `q->nr_batching`).
pub const BATCH_REQUESTS: u32 = 32;
/// 20 ms: how long a process stays a batcher (`BLK_BATCH_TIME`, HZ/50).
pub const BATCH_TIME_NS: Time = 20 * NSEC_PER_MSEC;

/// Where a list of `nr_requests` becomes congested (at most `nr_requests`).
/// Kernel: blk_queue_congestion_threshold().
pub fn congestion_on(nr_requests: u32) -> u32 {
    (nr_requests - nr_requests / 8 + 1).min(nr_requests)
}

/// Below this a congested list clears (at least 1). Kernel: blk_queue_congestion_threshold().
pub fn congestion_off(nr_requests: u32) -> u32 {
    (nr_requests - nr_requests / 8 - nr_requests / 16)
        .saturating_sub(1)
        .max(1)
}

/// What an allocation attempt got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alloc {
    Granted,
    /// No request now: the caller sleeps with [`RequestPool::sleep`] until woken.
    Sleep,
}

#[derive(Clone, Debug, Default)]
struct RequestList {
    count: [u32; 2],
    full: [bool; 2],
    congested: [bool; 2],
    /// Sleepers per direction, oldest first (tokens chosen by the caller).
    sleepers: [VecDeque<u64>; 2],
}

#[derive(Clone, Copy, Debug, Default)]
struct Batch {
    left: u32,
    since: Time,
}

impl Batch {
    /// Still batching at `now`: a fresh batch, or one with requests and time left.
    fn active(&self, now: Time) -> bool {
        self.left == BATCH_REQUESTS || (self.left > 0 && now < self.since + BATCH_TIME_NS)
    }
}

/// Batching state by io context. Ids below [`Batches::DENSE`] (the simulator's pids,
/// 1000 and up, one per clone) index a vector, others a map: with 4096 processes every
/// sleeper woken becomes a batcher, and each allocation then looked its process up in a
/// 4096-entry hash table, two cache misses (issue 34); a slot is one. A never-set slot
/// holds an empty batch, which is never active: the same answers as an absent entry.
#[derive(Clone, Debug, Default)]
struct Batches {
    dense: Vec<Batch>,
    sparse: IdMap<IoContextId, Batch>,
    /// Some batch was ever set (none: the common case, no look-up at all).
    any: bool,
}

impl Batches {
    /// Ids kept in the vector: 64 Ki slots of 16 bytes at most.
    const DENSE: u32 = 1 << 16;

    fn get(&self, ioc: IoContextId) -> Option<&Batch> {
        if ioc.0 < Self::DENSE {
            self.dense.get(ioc.0 as usize)
        } else {
            self.sparse.get(&ioc)
        }
    }

    fn get_mut(&mut self, ioc: IoContextId) -> Option<&mut Batch> {
        if ioc.0 < Self::DENSE {
            self.dense.get_mut(ioc.0 as usize)
        } else {
            self.sparse.get_mut(&ioc)
        }
    }

    fn insert(&mut self, ioc: IoContextId, batch: Batch) {
        self.any = true;
        if ioc.0 < Self::DENSE {
            let index = ioc.0 as usize;
            if index >= self.dense.len() {
                self.dense.resize(index + 1, Batch::default());
            }
            self.dense[index] = batch;
        } else {
            self.sparse.insert(ioc, batch);
        }
    }
}

/// Request lists of one queue.
#[derive(Clone, Debug)]
pub struct RequestPool {
    nr_requests: u32,
    /// By cgroup; a slab remembers the list found last, so that a run whose requests come
    /// from one cgroup finds it without a search (issue 34: the ordered map's descent and
    /// entry were ~35 instructions of every allocation).
    lists: IdSlab<CgroupId, RequestList>,
    /// Processes asleep on any list: [`RequestPool::sleepers`] without a walk.
    asleep: usize,
    /// [`congestion_on`] and [`congestion_off`] of `nr_requests`, worked out once.
    on: u32,
    off: u32,
    /// Batching state by io context (the kernel keeps it in the task's `io_context`).
    batches: Batches,
}

impl RequestPool {
    pub fn new(nr_requests: u32) -> RequestPool {
        assert!(
            nr_requests >= 4,
            "nr_requests below the kernel's minimum (BLKDEV_MIN_RQ)"
        );
        RequestPool {
            nr_requests,
            lists: IdSlab::default(),
            asleep: 0,
            on: congestion_on(nr_requests),
            off: congestion_off(nr_requests),
            batches: Batches::default(),
        }
    }

    pub fn nr_requests(&self) -> u32 {
        self.nr_requests
    }

    /// Kernel: ioc_batching(). Takes the batches alone, so that a caller may hold a list.
    fn batching(batches: &Batches, ioc: IoContextId, now: Time) -> bool {
        batches.get(ioc).is_some_and(|batch| batch.active(now))
    }

    /// Kernel: ioc_set_batching().
    fn set_batching(batches: &mut Batches, ioc: IoContextId, now: Time) {
        if Self::batching(batches, ioc, now) {
            return;
        }
        batches.insert(
            ioc,
            Batch {
                left: BATCH_REQUESTS,
                since: now,
            },
        );
    }

    /// Tries to allocate a request of direction `sync` in `cgroup` for process `ioc`.
    /// `may_queue` is the scheduler's answer (`Elevator::may_queue`): true lets the process
    /// past a full list. Kernel: __get_request().
    #[inline]
    pub fn get(
        &mut self,
        cgroup: CgroupId,
        sync: bool,
        ioc: IoContextId,
        may_queue: bool,
        now: Time,
    ) -> Alloc {
        let dir = usize::from(sync);
        let (on, nr) = (self.on, self.nr_requests);
        // One look-up of the list (issue 34: this ran four per request).
        let list = self.lists.get_or_insert_with(cgroup, RequestList::default);
        let count = list.count[dir];
        if count + 1 >= on {
            if count + 1 >= nr {
                if !list.full[dir] {
                    Self::set_batching(&mut self.batches, ioc, now);
                    list.full[dir] = true;
                } else if !may_queue && !Self::batching(&self.batches, ioc, now) {
                    return Alloc::Sleep;
                }
            }
            list.congested[dir] = true;
        }
        if count >= 3 * nr / 2 {
            return Alloc::Sleep;
        }
        list.count[dir] += 1;
        // No batcher yet (the common case): no look-up.
        if !self.batches.any {
            return Alloc::Granted;
        }
        if let Some(batch) = self.batches.get_mut(ioc).filter(|b| b.active(now)) {
            batch.left -= 1;
        }
        Alloc::Granted
    }

    /// Puts `token` to sleep on the list it failed to allocate from. Kernel: the
    /// prepare_to_wait_exclusive() of get_request().
    pub fn sleep(&mut self, cgroup: CgroupId, sync: bool, token: u64) {
        self.lists
            .get_or_insert_with(cgroup, RequestList::default)
            .sleepers[usize::from(sync)]
        .push_back(token);
        self.asleep += 1;
    }

    /// A sleeper woke and retries: it becomes a batcher. Kernel: get_request() after
    /// io_schedule().
    pub fn woke(&mut self, ioc: IoContextId, now: Time) {
        Self::set_batching(&mut self.batches, ioc, now);
    }

    /// A request completed and is given back; returns the sleeper to wake, if any.
    /// Kernel: freed_request() / __freed_request().
    pub fn put(&mut self, cgroup: CgroupId, sync: bool) -> Option<u64> {
        let dir = usize::from(sync);
        let (off, nr) = (self.off, self.nr_requests);
        let list = self
            .lists
            .get_mut(cgroup)
            .expect("a request given back to a list that never lent one");
        assert!(list.count[dir] > 0, "request count went negative");
        list.count[dir] -= 1;
        if list.count[dir] < off {
            list.congested[dir] = false;
        }
        if list.count[dir] < nr {
            list.full[dir] = false;
            if self.asleep == 0 {
                // No list has a sleeper (the usual case): none to pop.
                return None;
            }
            let woken = list.sleepers[dir].pop_front();
            self.asleep -= usize::from(woken.is_some());
            return woken;
        }
        None
    }

    /// Requests of `cgroup` in use, per direction `[async, sync]`.
    pub fn count(&self, cgroup: CgroupId) -> [u32; 2] {
        self.lists.get(cgroup).map_or([0, 0], |list| list.count)
    }

    /// Whether `cgroup`'s list of this direction is congested.
    pub fn congested(&self, cgroup: CgroupId, sync: bool) -> bool {
        self.lists
            .get(cgroup)
            .is_some_and(|list| list.congested[usize::from(sync)])
    }

    /// Processes asleep waiting for a request, all lists.
    pub fn sleepers(&self) -> usize {
        self.asleep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: CgroupId = CgroupId::ROOT;

    fn ioc(n: u32) -> IoContextId {
        IoContextId(n)
    }

    /// A process that fills the list becomes a batcher and may run on past nr_requests, up to
    /// its batch; another process then sleeps, and is woken, first come first served, as
    /// requests come back below the limit.
    #[test]
    fn full_list_lets_the_batcher_on_and_puts_others_to_sleep() {
        let mut pool = RequestPool::new(128);
        for _ in 0..127 {
            assert_eq!(pool.get(ROOT, true, ioc(1), false, 0), Alloc::Granted);
        }
        assert!(pool.congested(ROOT, true));
        // The 128th marks the list full and makes ioc 1 a batcher (32 more, within 20 ms).
        assert_eq!(pool.get(ROOT, true, ioc(1), false, 0), Alloc::Granted);
        assert_eq!(pool.get(ROOT, true, ioc(2), false, 0), Alloc::Sleep);
        pool.sleep(ROOT, true, 2);
        assert_eq!(pool.get(ROOT, true, ioc(3), false, 0), Alloc::Sleep);
        pool.sleep(ROOT, true, 3);
        for _ in 0..31 {
            assert_eq!(pool.get(ROOT, true, ioc(1), false, 0), Alloc::Granted);
        }
        assert_eq!(pool.count(ROOT), [0, 159]);
        // Its batch spent, the batcher sleeps too.
        assert_eq!(pool.get(ROOT, true, ioc(1), false, 0), Alloc::Sleep);
        // Completions above the limit wake no one.
        for _ in 0..31 {
            assert_eq!(pool.put(ROOT, true), None);
        }
        assert_eq!(pool.put(ROOT, true), Some(2), "oldest sleeper first");
        assert_eq!(pool.put(ROOT, true), Some(3));
        assert_eq!(pool.put(ROOT, true), None);
        assert_eq!(pool.sleepers(), 0);
    }

    /// The hard cap of 3/2 nr_requests holds even for a batcher the scheduler waves through.
    #[test]
    fn never_more_than_half_again_nr_requests() {
        let mut pool = RequestPool::new(16);
        let mut granted = 0;
        while pool.get(ROOT, true, ioc(1), true, 0) == Alloc::Granted {
            granted += 1;
            assert!(granted <= 24);
        }
        assert_eq!(granted, 24);
    }

    /// Batching lapses after 20 ms once some of the batch is spent.
    #[test]
    fn batching_lapses_after_its_time() {
        let mut pool = RequestPool::new(16);
        for _ in 0..16 {
            assert_eq!(pool.get(ROOT, true, ioc(1), false, 0), Alloc::Granted);
        }
        assert_eq!(pool.get(ROOT, true, ioc(1), false, 0), Alloc::Granted);
        assert_eq!(
            pool.get(ROOT, true, ioc(1), false, BATCH_TIME_NS),
            Alloc::Sleep,
            "batch time over"
        );
        // A woken sleeper is a batcher again.
        pool.woke(ioc(1), BATCH_TIME_NS);
        assert_eq!(
            pool.get(ROOT, true, ioc(1), false, BATCH_TIME_NS),
            Alloc::Granted
        );
    }

    /// Cgroups and directions have lists of their own: a full sync list of one group stops
    /// neither its async requests nor another group's sync ones.
    #[test]
    fn each_cgroup_and_direction_has_its_own_list() {
        let mut pool = RequestPool::new(8);
        let child = CgroupId(1);
        for _ in 0..8 {
            pool.get(ROOT, true, ioc(1), false, 0);
        }
        assert_eq!(pool.get(ROOT, true, ioc(2), false, 0), Alloc::Sleep);
        assert_eq!(pool.get(ROOT, false, ioc(2), false, 0), Alloc::Granted);
        assert_eq!(pool.get(child, true, ioc(2), false, 0), Alloc::Granted);
        assert_eq!(pool.count(ROOT), [1, 8]);
        assert_eq!(pool.count(child), [0, 1]);
    }

    /// Small lists clamp the marks as the kernel does: congested at the limit, clear below 1.
    #[test]
    fn small_lists_clamp_their_congestion_marks() {
        assert_eq!((congestion_on(4), congestion_off(4)), (4, 3));
        assert_eq!((congestion_on(8), congestion_off(8)), (8, 6));
        assert_eq!((congestion_on(128), congestion_off(128)), (113, 103));
    }

    /// Congestion sets at 113 of 128 and clears below 103, as the flusher sees it.
    #[test]
    fn congestion_thresholds() {
        let mut pool = RequestPool::new(128);
        for _ in 0..112 {
            pool.get(ROOT, false, ioc(1), false, 0);
        }
        assert!(!pool.congested(ROOT, false), "112 in use");
        pool.get(ROOT, false, ioc(1), false, 0);
        assert!(pool.congested(ROOT, false), "113 in use");
        for _ in 0..10 {
            pool.put(ROOT, false);
        }
        assert!(pool.congested(ROOT, false), "103 in use");
        pool.put(ROOT, false);
        assert!(!pool.congested(ROOT, false), "102 in use");
    }
}
