//! `deadline`: mq-deadline as Linux 6.12 has it. Kernel: `block/mq-deadline.c`.
//!
//! Requests are kept per priority level (RT, BE, IDLE: `dd_per_prio`) and direction, each on a
//! sector-sorted tree and a FIFO with a deadline (`read_expire`, `write_expire`). Requests
//! inserted at the head (requeues) go on one `dispatch` list served before everything.
//! Levels are served in order, and a lower level waits while a higher one has requests
//! queued *or in the device* (`dd_queued()` counts until completion); a request waiting longer
//! than `prio_aging_expire` is served first whatever its level. Within a level, requests go
//! out in sector-ascending batches of up to `fifo_batch` from the last dispatched position
//! (`latest_pos`); a new batch starts from the FIFO head when that head has expired. Reads
//! are preferred, but a waiting write batch may be passed over at most `writes_starved`
//! times. The batch state (`last_dir`, `batching`, `starved`) is shared by the levels.
//!
//! Times are the kernel's: jiffies at HZ=250 from the driver's `now` ([`tunables::jiffies`]),
//! compared with the wrap-safe `time_after()` rules, so expiries fall on the same 4 ms tick.
//!
//! What blk-mq does around the scheduler and how iosched models it:
//! - tags: `limit_depth()` ([`Deadline::limit_depth`]) answers the shallow depth an async
//!   request or a write may allocate with (`async_depth`); the driver owns the tag pool
//!   (`nr_requests`, announced with [`Deadline::depth_updated`]).
//! - merging: the block layer's merge path (one-hit cache `q->last_merge`, the back-merge
//!   hash, then the scheduler's front-merge lookup; then a request-to-request merge with the
//!   neighbour) lives in [`merge`], because iosched's elevator hands the whole merge to the
//!   scheduler. Through the [`Elevator`] trait only bio merges happen (the simulator's
//!   driver cannot yet retire a request absorbed by another); [`Deadline::bio_merge`] and
//!   [`Deadline::insert_request`] do everything the kernel does.
//! - hardware queues: one; `has_work()` is [`Deadline::has_work`]. A dispatch that finds
//!   nothing while work is queued (a level held back by in-flight requests of a higher one,
//!   or by aging) answers `Empty`; blk-mq re-runs the queue 3 ms later, which is the driver's.

mod fifo;
pub mod merge;
#[cfg(test)]
mod tests;
pub mod tunables;

use std::collections::VecDeque;

use crate::elevator::{Dispatch, Elevator};
use crate::elv_hash::ElvHash;
use crate::rbtree::{RbForest, Search};
use crate::request::{IoPrioClass, Request, RequestId, Time, MAX_MERGE_SECTORS};
use crate::trace::Trace;
use crate::tunable::{TunableError, TunableSpec, TunableValue};
use fifo::Lists;
use tunables::{jiffies, jiffies_to_msecs, msecs_to_jiffies, TUNABLES};

pub use merge::{BioMerge, RequestMerge};

const READ: usize = 0;
const WRITE: usize = 1;
/// `DD_RT_PRIO`, `DD_BE_PRIO`, `DD_IDLE_PRIO`.
const PRIO_COUNT: usize = 3;

/// Index of a queued request in [`Deadline::slots`].
pub(crate) type Slot = u32;
/// No request (an answer of [`Deadline::next`]).
const NO_SLOT: Slot = u32::MAX;
/// [`Deadline::next`] not looked up since `latest_pos` moved (no slot reaches it).
const UNKNOWN: Slot = u32::MAX - 1;

fn some_slot(s: Slot) -> Option<Slot> {
    (s != NO_SLOT).then_some(s)
}

/// Kernel: ioprio_class_to_prio[]: no class is best effort.
fn class_to_prio(class: IoPrioClass) -> usize {
    match class {
        IoPrioClass::RealTime => 0,
        IoPrioClass::None | IoPrioClass::BestEffort => 1,
        IoPrioClass::Idle => 2,
    }
}

fn direction(rq: &Request) -> usize {
    rq.op.data_dir()
}

/// A request the scheduler holds.
#[derive(Clone, Copy, Debug)]
struct Held {
    rq: Request,
    /// Jiffies: the deadline on a FIFO, the insertion time on the dispatch list.
    fifo_time: u64,
    prio: usize,
    in_tree: bool,
    /// `REQ_NOMERGE`: a merge found it full (req_set_nomerge()).
    nomerge: bool,
}

/// Kernel: struct io_stats_per_prio (the counters that decide `dd_queued()`).
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    inserted: u32,
    merged: u32,
    dispatched: u32,
    completed: u32,
}

/// mq-deadline. Requests live in a slab; the sort trees are the kernel's red-black trees
/// shape for shape (elv_rb_find() on equal sectors returns what the kernel's tree returns).
#[derive(Debug)]
pub struct Deadline {
    slots: Vec<Option<Held>>,
    /// Each slot's request's start sector, the key of the sort trees: a dense copy that
    /// the tree descents read (as the kernel reads `blk_rq_pos()` beside the node) instead
    /// of each request's slab entry. Kept equal to `slots[s].rq.sector` (a front merge
    /// moves both).
    sectors: Vec<u64>,
    free_slots: Vec<Slot>,
    queued: usize,
    /// Tree `prio * 2 + dir`.
    sort: RbForest,
    /// Each tree's answer to deadline_next_request() (the first request at or after
    /// `latest_pos`) once looked up: kept exact as requests join and leave the tree (see
    /// [`Deadline::tree_add`], [`Deadline::tree_del_if_sorted`]), so a batch's next request
    /// and a sequential stream's insertion point take no descent. [`NO_SLOT`] for none,
    /// [`UNKNOWN`] when not known.
    next: [Slot; PRIO_COUNT * 2],
    /// The successor of each tree's known next request, once looked up ([`UNKNOWN`] when
    /// not known, [`NO_SLOT`] when there is none): a dispatch of the next request moves
    /// to it without a walk, and an insert after the next request is checked against it.
    after: [Slot; PRIO_COUNT * 2],
    /// List `prio * 2 + dir`.
    fifo: Lists,
    dispatch: VecDeque<Slot>,
    latest_pos: [[u64; 2]; PRIO_COUNT],
    stats: [Stats; PRIO_COUNT],
    last_dir: usize,
    batching: u32,
    starved: u32,
    /// The block layer's merge state, kept here (see [`merge`]).
    last_merge: Option<Slot>,
    /// The block layer's merge hash of queued requests (`elevator_queue->hash`).
    hash: ElvHash,
    /// Largest request a merge may build, in sectors (`max_sectors_kb` * 2).
    pub max_sectors: u32,
    fifo_expire: [i32; 2],
    fifo_batch: i32,
    writes_starved: i32,
    front_merges: i32,
    async_depth: u32,
    prio_aging_expire: i32,
}

impl Default for Deadline {
    fn default() -> Self {
        Deadline::new()
    }
}

impl Deadline {
    /// Kernel: dd_init_sched() then dd_init_hctx() on a queue of 256 requests.
    pub fn new() -> Deadline {
        Deadline {
            slots: Vec::new(),
            sectors: Vec::new(),
            free_slots: Vec::new(),
            queued: 0,
            sort: RbForest::new(PRIO_COUNT * 2),
            next: [UNKNOWN; PRIO_COUNT * 2],
            after: [UNKNOWN; PRIO_COUNT * 2],
            fifo: Lists::new(PRIO_COUNT * 2),
            dispatch: VecDeque::new(),
            latest_pos: [[0; 2]; PRIO_COUNT],
            stats: [Stats::default(); PRIO_COUNT],
            last_dir: WRITE,
            batching: 0,
            starved: 0,
            last_merge: None,
            hash: ElvHash::default(),
            max_sectors: MAX_MERGE_SECTORS,
            fifo_expire: [msecs_to_jiffies(500) as i32, msecs_to_jiffies(5000) as i32],
            fifo_batch: 16,
            writes_starved: 2,
            front_merges: 1,
            async_depth: 256,
            prio_aging_expire: msecs_to_jiffies(10_000) as i32,
        }
    }

    /// The tunables table, for `iosched schedulers`.
    pub fn tunable_specs() -> &'static [TunableSpec] {
        &TUNABLES
    }

    /// Kernel: dd_depth_updated(): the queue's `nr_requests` changed (or was set at
    /// dd_init_hctx()); `async_depth` follows it.
    pub fn depth_updated(&mut self, nr_requests: u32) {
        self.async_depth = nr_requests;
    }

    /// Kernel: dd_limit_depth(): the shallow depth a request of this kind allocates its tag
    /// with; `None` for sync reads, which are never throttled.
    pub fn limit_depth(&self, rq: &Request) -> Option<u32> {
        let sync_read = rq.is_sync() && direction(rq) == READ;
        (!sync_read).then_some(self.async_depth)
    }

    /// Kernel: dd_has_work().
    pub fn has_work(&self) -> bool {
        !self.dispatch.is_empty() || (0..PRIO_COUNT * 2).any(|l| !self.fifo.is_empty(l))
    }

    fn held(&self, slot: Slot) -> &Held {
        self.slots[slot as usize]
            .as_ref()
            .expect("slot holds a request")
    }

    fn held_mut(&mut self, slot: Slot) -> &mut Held {
        self.slots[slot as usize]
            .as_mut()
            .expect("slot holds a request")
    }

    #[inline]
    fn store(&mut self, held: Held) -> Slot {
        self.queued += 1;
        let sector = held.rq.sector;
        match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(held);
                self.sectors[slot as usize] = sector;
                slot
            }
            None => {
                self.slots.push(Some(held));
                self.sectors.push(sector);
                Slot::try_from(self.slots.len() - 1)
                    .ok()
                    .filter(|&s| s < UNKNOWN)
                    .expect("fewer than 2^32 - 2 queued requests")
            }
        }
    }

    #[inline]
    fn release(&mut self, slot: Slot) -> Held {
        let held = self.slots[slot as usize]
            .take()
            .expect("released slot holds a request");
        self.free_slots.push(slot);
        self.queued -= 1;
        held
    }

    /// The sort trees' key of a node (a slot).
    fn sector_of(sectors: &[u64]) -> impl Fn(usize) -> u64 + '_ {
        move |n| sectors[n]
    }

    /// A front merge moved `slot`'s start to `sector`.
    fn set_sector(&mut self, slot: Slot, sector: u64) {
        // The request leaves its tree and rejoins it (dd_request_merged()) or is absorbed;
        // until then it is out of place, so nothing known about its tree holds.
        let h = self.held(slot);
        self.forget_next(h.prio * 2 + direction(&h.rq));
        self.held_mut(slot).rq.sector = sector;
        self.sectors[slot as usize] = sector;
    }

    /// Kernel: deadline_add_rq_rb() / elv_rb_add().
    fn tree_add(&mut self, slot: Slot) {
        let h = self.held_mut(slot);
        h.in_tree = true;
        let (prio, dir, sector) = (h.prio, direction(&h.rq), h.rq.sector);
        self.tree_link(slot, prio, dir, sector);
    }

    /// [`Deadline::tree_add`] once the request is marked as on its tree, with its level,
    /// direction and sector.
    fn tree_link(&mut self, slot: Slot, prio: usize, dir: usize, sector: u64) {
        let tree = prio * 2 + dir;
        let shortcut = self.insert_after_next(tree, sector);
        let at = match shortcut {
            Some(at) => at,
            None => self
                .sort
                .search_for_insert(tree, sector, Self::sector_of(&self.sectors)),
        };
        if cfg!(test) {
            let descent = self
                .sort
                .search_for_insert(tree, sector, Self::sector_of(&self.sectors));
            assert_eq!(at, descent, "the shortcut links where elv_rb_add() would");
        }
        self.sort.insert(tree, slot as usize, at);
        if shortcut.is_some() {
            self.after[tree] = slot;
            return;
        }
        // A request between `latest_pos` and the known next one comes first now, followed
        // by it; one with the next one's sector goes after it (elv_rb_add() sends equal keys
        // right), and one past the next one's successor changes neither.
        let next = self.next[tree];
        if next != UNKNOWN
            && sector >= self.latest_pos[prio][dir]
            && (next == NO_SLOT || sector < self.sectors[next as usize])
        {
            self.next[tree] = slot;
            self.after[tree] = next;
        }
    }

    /// Nothing known of `tree`'s next request (its position moved, or a key is changing).
    fn forget_next(&mut self, tree: usize) {
        self.next[tree] = UNKNOWN;
        self.after[tree] = UNKNOWN;
    }

    /// The successor of `tree`'s known next request `n`, looked up once.
    fn after_next(&mut self, tree: usize, n: Slot) -> Slot {
        if self.after[tree] == UNKNOWN {
            self.after[tree] = self.sort.next(n as usize).map_or(NO_SLOT, |s| s as Slot);
        }
        self.after[tree]
    }

    /// Where elv_rb_add() links a request at `sector` when it falls right after the known
    /// next request `n` (a stream's next request while its batch runs): the empty slot
    /// between `n` and its successor, `n`'s right or the successor's left; none otherwise.
    fn insert_after_next(&mut self, tree: usize, sector: u64) -> Option<Search> {
        let n = self.next[tree];
        if n >= UNKNOWN || sector < self.sectors[n as usize] {
            return None;
        }
        let succ = self.after_next(tree, n);
        if succ != NO_SLOT && sector >= self.sectors[succ as usize] {
            return None;
        }
        let parent = match self.sort.right(n as usize) {
            None => n,
            Some(_) => succ,
        };
        Some(Search {
            found: None,
            parent: Some(parent as usize),
            right: parent == n,
        })
    }

    /// Kernel: deadline_del_rq_rb() / elv_rb_del().
    fn tree_del(&mut self, slot: Slot) {
        assert!(
            self.tree_del_if_sorted(slot),
            "request is not on its sort tree"
        );
    }

    /// [`Deadline::tree_del`] if the request is on its tree; whether it was.
    fn tree_del_if_sorted(&mut self, slot: Slot) -> bool {
        let h = self.held_mut(slot);
        if !h.in_tree {
            return false;
        }
        h.in_tree = false;
        let tree = h.prio * 2 + direction(&h.rq);
        self.tree_unlink(tree, slot);
        true
    }

    /// Kernel: elv_rb_del() of a request marked as off its tree.
    fn tree_unlink(&mut self, tree: usize, slot: Slot) {
        // The next request leaving: its successor is the first at or after `latest_pos`
        // (it was, and it is at or after it); and at or after the leaving request's sector,
        // should it be dispatched (no request before it is at or after `latest_pos`).
        if self.next[tree] == slot {
            self.next[tree] = self.after_next(tree, slot);
            self.after[tree] = UNKNOWN;
        } else if self.after[tree] == slot {
            self.after[tree] = UNKNOWN;
        }
        self.sort.erase(tree, slot as usize);
    }

    /// Kernel: deadline_remove_request(): off the FIFO, the tree, the hash and the
    /// one-hit merge cache.
    fn remove_request(&mut self, slot: Slot) {
        let h = self.held_mut(slot);
        let tree = h.in_tree.then(|| h.prio * 2 + direction(&h.rq));
        h.in_tree = false;
        self.unlink(slot, tree);
    }

    /// [`Deadline::remove_request`] once the request's record is read (or already taken
    /// out of its slot): `tree` is its sort tree if it is on it.
    fn unlink(&mut self, slot: Slot, tree: Option<usize>) {
        self.fifo.remove(slot);
        if let Some(tree) = tree {
            self.tree_unlink(tree, slot);
        }
        self.hash_del(slot);
        if self.last_merge == Some(slot) {
            self.last_merge = None;
        }
    }

    /// Kernel: dd_queued(): inserted and not yet completed (so in-flight requests count).
    fn dd_queued(&self, prio: usize) -> u32 {
        let s = &self.stats[prio];
        s.inserted.wrapping_sub(s.completed)
    }

    /// Kernel: dd_insert_request(): the request joins the dispatch list (`at_head`) or its
    /// level's tree, hash and FIFO, unless it merges into a queued request first
    /// (blk_mq_sched_try_insert_merge()); the merges done are returned, the absorbed
    /// requests are gone (their tags are the driver's to free).
    pub fn insert_request(&mut self, rq: Request, at_head: bool, now: Time) -> Vec<RequestMerge> {
        self.insert_with(rq, at_head, now, true)
    }

    #[inline]
    fn insert_with(
        &mut self,
        rq: Request,
        at_head: bool,
        now: Time,
        merge: bool,
    ) -> Vec<RequestMerge> {
        let prio = class_to_prio(rq.ioprio.class);
        self.stats[prio].inserted = self.stats[prio].inserted.wrapping_add(1);
        let now_j = jiffies(now);
        let dir = direction(&rq);
        let fifo_time = if at_head {
            now_j
        } else {
            now_j.wrapping_add(i64::from(self.fifo_expire[dir]) as u64)
        };
        // A new request is mergeable by its kind alone (nothing has marked it yet); it is
        // on its tree from here when no merge can absorb it first.
        let (sector, end, mergeable) = (rq.sector, rq.end_sector(), merge::op_mergeable(&rq));
        let slot = self.store(Held {
            rq,
            fifo_time,
            prio,
            in_tree: !at_head && !merge,
            nomerge: false,
        });
        if merge {
            let merges = self.insert_merge(slot);
            if !merges.is_empty() {
                return merges;
            }
            self.held_mut(slot).in_tree = !at_head;
        }
        if at_head {
            self.dispatch.push_front(slot);
            return Vec::new();
        }
        self.tree_link(slot, prio, dir, sector);
        if mergeable {
            self.hash.add(slot as usize, end);
            self.last_merge.get_or_insert(slot);
        }
        self.fifo.push_back(prio * 2 + dir, slot);
        Vec::new()
    }

    /// Kernel: dd_finish_request(): a request handed out earlier is done.
    pub fn finish_request(&mut self, rq: &Request) {
        let prio = class_to_prio(rq.ioprio.class);
        self.stats[prio].completed = self.stats[prio].completed.wrapping_add(1);
    }
}

impl Deadline {
    /// O(n) consistency: every held request is on exactly the structures its state says.
    fn check(&self) {
        let live = self.slots.iter().flatten().count();
        assert_eq!(live, self.queued, "slab disagrees with queued count");
        let mut on_lists = self.dispatch.len();
        for list in 0..PRIO_COUNT * 2 {
            let in_tree = self.sort.in_order(list);
            let on_fifo: Vec<Slot> = self.fifo.iter(list).collect();
            assert_eq!(
                in_tree.len(),
                on_fifo.len(),
                "tree {list} and FIFO {list} differ"
            );
            self.sort.check(list);
            if self.next[list] != UNKNOWN {
                let pos = self.latest_pos[list / 2][list % 2];
                let descent = self
                    .sort
                    .lower_bound(list, pos, Self::sector_of(&self.sectors));
                let next = some_slot(self.next[list]).map(|n| n as usize);
                assert_eq!(next, descent, "next request {list} is stale");
                if let Some(n) = next.filter(|_| self.after[list] != UNKNOWN) {
                    let after = some_slot(self.after[list]).map(|s| s as usize);
                    assert_eq!(
                        after,
                        self.sort.next(n),
                        "next request's successor is stale"
                    );
                }
            }
            let sectors: Vec<u64> = in_tree
                .iter()
                .map(|&n| self.held(n as Slot).rq.sector)
                .collect();
            for &n in &in_tree {
                assert_eq!(self.sectors[n], self.held(n as Slot).rq.sector, "stale key");
            }
            assert!(
                sectors.windows(2).all(|w| w[0] <= w[1]),
                "tree {list} out of order"
            );
            for &slot in &on_fifo {
                let h = self.held(slot);
                assert_eq!(
                    h.prio * 2 + direction(&h.rq),
                    list,
                    "request on the wrong list"
                );
                assert!(h.in_tree, "FIFO request not on its tree");
            }
            on_lists += on_fifo.len();
        }
        assert_eq!(on_lists, self.queued, "a held request is on no list");
        // The hash's own chains agree, and each hashed request still ends where it was
        // added (a merge re-hashes it).
        for (slot, end) in self.hash.check() {
            let slot = Slot::try_from(slot).expect("slots fit in u32");
            assert_eq!(self.held(slot).rq.end_sector(), end, "hash key is stale");
        }
    }
}

/// Kernel: time_after(a, b), wrap-safe on jiffies.
fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}

mod dispatch;

impl Elevator for Deadline {
    fn name(&self) -> &'static str {
        "mq-deadline"
    }

    fn insert(&mut self, rq: Request, now: Time, _trace: &mut dyn Trace) {
        // Choice: through the trait no insert merge, as for bios (see the module doc).
        self.insert_with(rq, false, now, false);
    }

    fn try_back_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        self.bio_merge_only(bio, false)
    }

    fn try_front_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        self.bio_merge_only(bio, true)
    }

    fn dispatch(&mut self, now: Time, _trace: &mut dyn Trace) -> Dispatch {
        match self.dispatch_request(now) {
            Some(rq) => Dispatch::Request(rq),
            None => Dispatch::Empty,
        }
    }

    fn completed(&mut self, rq: &Request, _now: Time, _trace: &mut dyn Trace) {
        self.finish_request(rq);
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn tunables(&self) -> Vec<TunableValue> {
        let ms = |j: i32| u64::from(jiffies_to_msecs(i64::from(j) as u64));
        let values = [
            ms(self.fifo_expire[READ]),
            ms(self.fifo_expire[WRITE]),
            i64::from(self.writes_starved) as u64,
            self.front_merges as u64,
            u64::from(self.async_depth),
            self.fifo_batch as u64,
            ms(self.prio_aging_expire),
        ];
        TUNABLES
            .iter()
            .zip(values)
            .map(|(spec, value)| TunableValue { spec, value })
            .collect()
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let (spec, v) = tunables::parse(name, value)?;
        let to_jiffies = |v: i32| msecs_to_jiffies(v as u32) as i32;
        match spec.name {
            "read_expire" => self.fifo_expire[READ] = to_jiffies(v),
            "write_expire" => self.fifo_expire[WRITE] = to_jiffies(v),
            "writes_starved" => self.writes_starved = v,
            "front_merges" => self.front_merges = v,
            "async_depth" => self.async_depth = v as u32,
            "fifo_batch" => self.fifo_batch = v,
            "prio_aging_expire" => self.prio_aging_expire = to_jiffies(v),
            other => unreachable!("tunable {other} is in the table but not handled"),
        }
        Ok(())
    }

    fn check_invariants(&self) {
        self.check();
    }
}
