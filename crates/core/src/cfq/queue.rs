//! Queues and process contexts, and the insertion path.
//!
//! A sync queue belongs to one process context (`io_context`; threads sharing one share the
//! queue); async queues are shared by all processes of a group with the same class and level.
//! A queue keeps its pending requests twice: by start sector (`sort_list`, for elevator order)
//! and by arrival (`fifo`, for deadlines). Insertion updates the heuristics and may end idling
//! or preempt the active queue.
//! Kernel: cfq_get_queue(), cfq_init_cfqq(), cfq_init_prio_data(), check_ioprio_changed(),
//! check_blkcg_changed(), cfq_set_request(), cfq_insert_request(), cfq_add_rq_rb(),
//! cfq_rq_enqueued(), cfq_put_queue().

use super::slice::ExpireCause;
use super::sort_list::SortList;
use super::think_time::Ttime;
use super::{
    Cfq, GId, QId, Stats, ASYNC_WORKLOAD, BE_WORKLOAD, IDLE_WORKLOAD, PAGE_SIZE, RT_WORKLOAD,
    SYNC_NOIDLE_WORKLOAD, SYNC_WORKLOAD,
};
use crate::id_table::IdTable;
use crate::request::{CgroupId, IoContextId, IoPrio, IoPrioClass, Request, Time};
use crate::trace::{DecisionKind, Trace};

/// Sort key of a pending request: start sector, then arrival sequence (equal sectors go
/// after existing ones, as `elv_rb_add` does).
pub(crate) type SortKey = (u64, u64);

/// Index of a pending request in the request slab.
pub(crate) type Slot = u32;

/// A queue's handle on one of its requests: sort key and slab slot.
pub(crate) type RqRef = (SortKey, Slot);

/// A request waiting inside CFQ, in the request slab.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    pub rq: Request,
    pub fifo_time: Time,
    /// Allocation time (`rq->start_time_ns`): the insert time here.
    pub start_time: Time,
    /// Insertion sequence (the FIFO and sort tie-break); `u64::MAX` once the slot is free.
    pub seq: u64,
    /// The submitting process's context (`RQ_CIC(rq)`).
    pub cic: usize,
    /// Neighbours in the queue's FIFO (`fifo::NO_SLOT` for none; see `fifo`).
    pub fifo_prev: Slot,
    pub fifo_next: Slot,
}

impl Pending {
    pub(crate) fn key(&self) -> SortKey {
        (self.rq.sector, self.seq)
    }
}

/// A request dispatched and not completed.
///
/// 32 bytes, and its `Option` too (the non-zero count is the niche): two entries to a line
/// of the in-flight table, none across two (issue 34: the 48-byte entry cost 0.76 misses a
/// request at 4096 queues).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InFlight {
    pub start_time: Time,
    /// When the device got it, and how many requests the device then held, including it
    /// (seed 000 fix: the per-request device cost of the queue).
    pub dispatched_at: Time,
    pub queue: u32,
    pub cic: u32,
    pub in_driver_at_dispatch: std::num::NonZeroU32,
}

const _: () = assert!(std::mem::size_of::<Option<InFlight>>() == 32);

/// Scheduling class of a queue after mapping NONE (`RT`, `BE` or `Idle` only).
pub(crate) fn effective_class(class: IoPrioClass) -> IoPrioClass {
    match class {
        IoPrioClass::None => IoPrioClass::BestEffort,
        other => other,
    }
}

/// A process context. Kernel: struct cfq_io_cq.
///
/// Laid out so that what a sync request reads and writes of its process (the sync queue,
/// think time, cgroup, priority, `exited`, and the 2.6.32 seek record's last position, written
/// at every insertion) is the first cache line; the async queue and 2.6.32's seek mean come
/// after. With thousands of processes each context is a miss of its own at every request
/// (issue 34: the 96-byte context, unaligned, cost 1.6 misses a request, now 1).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct Cic {
    pub sync_q: Option<QId>,
    pub ttime: Ttime,
    pub cgroup: CgroupId,
    pub ioprio: IoPrio,
    /// `active_ref == 0`: the process exited; never idle for it.
    pub exited: bool,
    /// 2.6.32's per-process seek mean (`rules_2632` only; its last position, first, is
    /// written at every insertion).
    pub seek: super::rules_2632::SeekMean,
    /// The async queue this context last queued on (`cic->cfqq[0]`): looked up once, kept
    /// across priority changes (see `queue_for`), dropped when the cgroup changes.
    pub async_q: Option<QId>,
}

// What a sync request touches of its process fits the context's first line.
const _: () = assert!(std::mem::offset_of!(Cic, seek) + 8 <= 64);

/// Io context ids below this are indexed directly (the simulator's are its pids).
const DENSE_IOC_IDS: u32 = 1 << 16;

/// Process contexts by io context id: a vector indexed by the id below [`DENSE_IOC_IDS`], a
/// hash table above. The first look-up of a request (its merge attempt) found its context
/// through the hash table, a line of its own at every request with thousands of processes
/// (issue 34); sixteen neighbouring ids share a line of the vector, and processes started
/// together run in id order.
#[derive(Clone, Debug, Default)]
pub(crate) struct CicIndex {
    /// The context of id `i` plus one at `i` (0: none).
    dense: Vec<u32>,
    sparse: IdTable<usize, IoContextId>,
}

impl CicIndex {
    #[inline]
    pub(crate) fn get(&self, ioc: IoContextId) -> Option<usize> {
        if ioc.0 < DENSE_IOC_IDS {
            return match self.dense.get(ioc.0 as usize) {
                Some(&c) if c != 0 => Some(c as usize - 1),
                _ => None,
            };
        }
        self.sparse.get(ioc).copied()
    }

    pub(crate) fn insert(&mut self, ioc: IoContextId, c: usize) {
        if ioc.0 < DENSE_IOC_IDS {
            let i = ioc.0 as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, 0);
            }
            self.dense[i] = u32::try_from(c + 1).expect("fewer than 2^32 contexts");
        } else {
            self.sparse.insert(ioc, c);
        }
    }
}

/// Kernel: struct cfq_queue.
///
/// Five cache lines, in the order a request meets them (issue 34: with thousands of queues
/// every line of a process's queue is a miss at each of its requests; the queue took 352
/// bytes at any offset, six or seven lines): (0) what tree walks read of other queues
/// (`rb_key`, `next_rq`) with the class, tree links and the flags read at every request;
/// (1) the pending requests; (2) the slice; (3) think-time and seek state and references;
/// (4) accounting. Tree and prio-tree indices and the creator's context are small integers.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct CfqQueue {
    /// Service-tree key, in the kernel's wrapping u64 (see `service_tree`).
    pub rb_key: u64,
    pub next_rq: Option<RqRef>,
    pub group: GId,
    /// Index of the tree (in its group) the queue sits on.
    pub service_tree: Option<u8>,
    /// Prio-tree membership: the tree (original level) the queue is linked in
    /// (`cfqq->p_root`).
    pub p_key: Option<u8>,
    pub sync: bool,
    pub on_rr: bool,
    pub idle_window: bool,
    pub live: bool,
    pub ioprio_class: Option<IoPrioClass>,
    pub ioprio: u8,
    pub org_ioprio_class: Option<IoPrioClass>,
    pub org_ioprio: u8,
    pub prio_changed: bool,
    pub coop: bool,
    pub split_coop: bool,
    pub wait_request: bool,

    /// Pending requests by (sector, seq) → slab slot.
    pub sort_list: SortList<SortKey, Slot>,
    /// Arrival order: the ends of a list linked through the request slab (see `fifo`).
    pub fifo: super::fifo::FifoEnds,

    pub slice_start: Time,
    pub slice_end: Time,
    pub dispatch_start: Time,
    pub allocated_slice: Time,
    pub slice_resid: i64,
    pub slice_dispatch: u64,
    /// Pending requests by request sync-ness (0 async, 1 sync).
    pub queued: [u32; 2],
    pub dispatched: u32,
    pub prio_pending: u32,

    /// Decaying average of the device cost of this queue's requests: time from dispatch to
    /// completion divided by the requests the device held at dispatch, so that sharing the
    /// device with other queues does not make it look slower. Kept with think time's
    /// arithmetic; only the seed 000 fix reads it.
    pub service_time: super::think_time::Ttime,
    pub last_request_pos: u64,
    pub new_cfqq: Option<QId>,
    pub seek_history: u32,
    /// Process references (contexts pointing here, plus ones pre-taken by a planned merge).
    pub proc_refs: u32,
    /// The process context of a sync queue's creator, plus one (0: none); see
    /// [`CfqQueue::creator_cic`]. Four bytes, so that the seeky count shares this line.
    pub cic_plus_one: u32,
    /// How many of `seek_history`'s bits are set, kept as arrivals shift them in and out:
    /// CFQQ_SEEKY() without a population count (software, on the baseline x86-64 target)
    /// at every completion (issue 34). Beside the history, in the line the completion
    /// writes anyway (at 4096 queues a count in the last line cost 0.7 misses a request).
    pub seeky_arrivals: u8,

    pub nr_sectors: u64,
    pub stats: Stats,
    pub pid: u32,
    pub must_dispatch: bool,
    pub must_alloc_slice: bool,
    pub fifo_expire: bool,
    pub slice_new: bool,
    pub deep: bool,
    pub wait_busy: bool,
}

// The lines as laid out above: the first ends with the flags, the pending requests fill the
// second, and the whole is five lines.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(offset_of!(CfqQueue, wait_request) == 63);
    assert!(offset_of!(CfqQueue, slice_start) == 128);
    assert!(offset_of!(CfqQueue, service_time) == 192);
    assert!(offset_of!(CfqQueue, seeky_arrivals) < 256);
    assert!(size_of::<CfqQueue>() == 320);
};

impl CfqQueue {
    pub(crate) fn class(&self) -> IoPrioClass {
        self.ioprio_class.unwrap_or(IoPrioClass::BestEffort)
    }

    pub(crate) fn class_idle(&self) -> bool {
        self.class() == IoPrioClass::Idle
    }

    pub(crate) fn class_rt(&self) -> bool {
        self.class() == IoPrioClass::RealTime
    }

    /// Kernel: cfqq_class().
    pub(crate) fn wl_class(&self) -> usize {
        match self.class() {
            IoPrioClass::Idle => IDLE_WORKLOAD,
            IoPrioClass::RealTime => RT_WORKLOAD,
            _ => BE_WORKLOAD,
        }
    }

    /// Kernel: cfqq_type().
    pub(crate) fn wl_type(&self) -> usize {
        if !self.sync {
            ASYNC_WORKLOAD
        } else if !self.idle_window {
            SYNC_NOIDLE_WORKLOAD
        } else {
            SYNC_WORKLOAD
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.sort_list.is_empty()
    }

    /// The process context of a sync queue's creator.
    pub(crate) fn creator_cic(&self) -> Option<usize> {
        self.cic_plus_one.checked_sub(1).map(|c| c as usize)
    }

    /// Kernel: CFQQ_SEEKY(): more than 4 of the last 32 arrivals were seeky.
    #[inline]
    pub(crate) fn seeky(&self) -> bool {
        self.seeky_arrivals > 32 / 8
    }
}

impl Cfq {
    /// Kernel: cfq_init_cfqq() + cfq_init_prio_data() + cfq_link_cfqq_cfqg().
    fn alloc_queue(&mut self, pid: u32, sync: bool, g: GId, prio: IoPrio) -> QId {
        let mut cfqq = CfqQueue {
            live: true,
            pid,
            sync,
            group: g,
            prio_changed: true,
            ..CfqQueue::default()
        };
        if sync {
            // Kernel order: the idle window is set before the class is known, and the
            // IDLE class clears it again in init_prio_data.
            cfqq.idle_window = true;
        }
        init_prio_data(&mut cfqq, prio);
        match self.free_queues.pop() {
            Some(q) => {
                assert!(!self.queues[q].live, "free list holds a live queue");
                self.queues[q] = cfqq;
                q
            }
            None => {
                self.queues.push(cfqq);
                self.queues.len() - 1
            }
        }
    }

    /// Stores a pending request in the slab.
    fn alloc_pending(&mut self, pending: Pending) -> Slot {
        match self.free_pending.pop() {
            Some(slot) => {
                self.pending[slot as usize] = pending;
                slot
            }
            None => {
                self.pending.push(pending);
                (self.pending.len() - 1) as Slot
            }
        }
    }

    /// Releases a slab slot (its FIFO entry goes stale).
    #[inline]
    pub(crate) fn free_pending_slot(&mut self, slot: Slot) -> Pending {
        let pending = self.pending[slot as usize];
        self.pending[slot as usize].seq = u64::MAX;
        self.free_pending.push(slot);
        pending
    }

    /// The request a queue would serve next.
    pub(crate) fn next_pending(&self, q: QId) -> Option<&Pending> {
        self.queues[q]
            .next_rq
            .map(|(_, slot)| &self.pending[slot as usize])
    }

    /// The context of process `ioc`.
    #[cfg(test)]
    pub(crate) fn cic(&self, ioc: IoContextId) -> &Cic {
        &self.cics[self.cic_of.get(ioc).expect("a known io context")]
    }

    /// The group of a request's cgroup; unknown cgroups fall back to the root group (group
    /// 0 is the root's from the start, never replaced: no look-up for it).
    pub(crate) fn group_for(&self, cgroup: CgroupId) -> GId {
        if cgroup == CgroupId::ROOT {
            return 0;
        }
        self.group_of.get(cgroup).copied().unwrap_or(0)
    }

    /// The context of process `ioc`, if it has one.
    #[inline]
    pub(crate) fn cic_index(&mut self, ioc: IoContextId) -> Option<usize> {
        if let Some((id, c)) = self.cic_hint {
            if id == ioc {
                return Some(c);
            }
        }
        let c = self.cic_of.get(ioc)?;
        self.cic_hint = Some((ioc, c));
        Some(c)
    }

    /// Finds or creates the queue a request goes to, applying the context's pending
    /// cgroup/priority changes and cooperator hand-offs first.
    /// Kernel: cfq_set_request(), cfq_get_queue(), check_ioprio_changed(),
    /// check_blkcg_changed().
    // The common case inline (a sync request of a known context whose cgroup and priority
    // are unchanged, its sync queue neither to split nor merged): `queue_for_slow` would
    // only clear `exited` and answer that queue. The rest stays out of the insertion's hot
    // code (issue 34: its L1 instruction cache misses).
    #[inline]
    fn queue_for(
        &mut self,
        rq: &Request,
        sync: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> (QId, usize) {
        if sync {
            if let Some(c) = self.cic_index(rq.ioc) {
                let cic = &self.cics[c];
                if let Some(q) = cic.sync_q {
                    let cfqq = &self.queues[q];
                    if cic.cgroup == rq.cgroup
                        && cic.ioprio == rq.ioprio
                        && !(cfqq.coop && cfqq.split_coop)
                        && cfqq.new_cfqq.is_none()
                    {
                        self.cics[c].exited = false;
                        return (q, c);
                    }
                }
            }
        }
        self.queue_for_slow(rq, now, trace)
    }

    /// [`Cfq::queue_for`] in full.
    #[cold]
    #[inline(never)]
    fn queue_for_slow(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) -> (QId, usize) {
        let g = self.group_for(rq.cgroup);
        let sync = rq.is_sync();
        let c = match self.cic_index(rq.ioc) {
            Some(c) => c,
            None => {
                self.cics.push(Cic {
                    sync_q: None,
                    async_q: None,
                    cgroup: rq.cgroup,
                    ioprio: rq.ioprio,
                    ttime: Ttime::starting(now),
                    seek: super::rules_2632::SeekMean::default(),
                    exited: false,
                });
                self.cic_of.insert(rq.ioc, self.cics.len() - 1);
                self.cics.len() - 1
            }
        };
        let cic = &mut self.cics[c];
        cic.exited = false;
        if cic.cgroup != rq.cgroup {
            // check_blkcg_changed(): the process moved; its sync queue is dropped and a new
            // one will be created in the new group.
            cic.cgroup = rq.cgroup;
            cic.async_q = None;
            if let Some(old) = cic.sync_q.take() {
                self.log_q(trace, now, old, format_args!("changed cgroup"));
                self.put_process_ref(old, now, trace);
            }
        }
        let cic = &mut self.cics[c];
        if cic.ioprio != rq.ioprio {
            // check_ioprio_changed(): the sync queue re-reads its priority at this insertion.
            // The async queue is looked up again, but before the context's priority is
            // updated, so with the *old* priority: the context keeps its async queue.
            cic.ioprio = rq.ioprio;
            if let Some(q) = cic.sync_q {
                self.queues[q].prio_changed = true;
            }
        }
        if !sync {
            if let Some(q) = self.cics[c].async_q {
                return (q, c);
            }
            let q = self.async_queue(g, rq, trace, now);
            self.cics[c].async_q = Some(q);
            return (q, c);
        }
        loop {
            let Some(q) = self.cics[c].sync_q else {
                let q = self.alloc_queue(rq.pid, true, g, rq.ioprio);
                self.queues[q].cic_plus_one =
                    u32::try_from(c + 1).expect("fewer than 2^32 contexts");
                self.queues[q].proc_refs = 1;
                self.cics[c].sync_q = Some(q);
                self.log_q(trace, now, q, format_args!("alloced"));
                return (q, c);
            };
            if self.queues[q].coop && self.queues[q].split_coop {
                self.log_q(trace, now, q, format_args!("breaking apart cfqq"));
                match self.split_queue(c, q, rq.pid, now, trace) {
                    Some(q) => return (self.follow_merge(c, q, now, trace), c),
                    None => continue,
                }
            }
            return (self.follow_merge(c, q, now, trace), c);
        }
    }

    /// The group's shared async queue for the request's (class, level).
    /// Kernel: cfq_async_queue_prio().
    fn async_queue(&mut self, g: GId, rq: &Request, trace: &mut dyn Trace, now: Time) -> QId {
        let class = effective_class(rq.ioprio.class);
        let level = usize::from(rq.ioprio.level.min(7));
        let slot = match class {
            IoPrioClass::RealTime => self.groups[g].async_queues[0][level],
            IoPrioClass::Idle => self.groups[g].async_idle,
            _ => self.groups[g].async_queues[1][level],
        };
        if let Some(q) = slot {
            return q;
        }
        let q = self.alloc_queue(rq.pid, false, g, rq.ioprio);
        // The group's reference keeps it alive for the group's lifetime.
        self.queues[q].proc_refs = 1;
        match class {
            IoPrioClass::RealTime => self.groups[g].async_queues[0][level] = Some(q),
            IoPrioClass::Idle => self.groups[g].async_idle = Some(q),
            _ => self.groups[g].async_queues[1][level] = Some(q),
        }
        self.log_q(trace, now, q, format_args!("alloced"));
        q
    }

    /// Drops one process reference; the queue is freed once nothing uses it.
    /// Kernel: cfq_put_queue().
    pub(crate) fn put_process_ref(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let cfqq = &mut self.queues[q];
        assert!(cfqq.proc_refs > 0, "queue process references underflow");
        cfqq.proc_refs -= 1;
        self.maybe_free(q, now, trace);
    }

    /// Frees a queue nothing refers to any more (no process reference, no request queued or
    /// in flight), logging "put_queue" as the kernel's last cfq_put_queue() does. If that
    /// queue is the one being served, its slice ends first (untimed) and dispatch is
    /// rescheduled, as cfq_put_queue() does for the active queue: a queue whose process
    /// exited is let go at its last request's completion, not at the next queue selection.
    #[inline]
    pub(crate) fn maybe_free(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let cfqq = &self.queues[q];
        if !cfqq.live || cfqq.proc_refs > 0 || !cfqq.is_empty() || cfqq.dispatched > 0 {
            return;
        }
        self.free_unreferenced(q, now, trace);
    }

    /// maybe_free() of a queue with no reference, request or dispatch left.
    fn free_unreferenced(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        // A context still pointing here keeps the queue (a merge's pre-taken reference can
        // be released twice along odd merge/split chains; never free what is reachable).
        if self.reached_by_a_context(q) {
            return;
        }
        if self.active_queue != Some(q) && self.queues[q].on_rr {
            return;
        }
        self.log_q(trace, now, q, format_args!("put_queue"));
        if self.active_queue == Some(q) {
            // Held across the expiry, whose own maybe_free() must not free the queue twice.
            self.queues[q].proc_refs += 1;
            self.slice_expired(false, ExpireCause::Released, now, trace);
            self.schedule_dispatch(now, trace);
            self.queues[q].proc_refs -= 1;
        }
        assert!(!self.queues[q].on_rr, "freeing a busy queue");
        let cfqq = &self.queues[q];
        // The freed queue's accounting outlives it, summed per (pid, sync) for summary().
        let key = (cfqq.pid, cfqq.sync);
        let stats = cfqq.stats;
        self.retired_stats.entry(key).or_default().add(&stats);
        self.queues[q] = CfqQueue::default();
        self.free_queues.push(q);
        // Queues planning to merge into a freed one forget the plan (none can before the
        // first plan: a walk over every queue at each exit made 4096 exits cost 4096^2).
        if self.merges_planned {
            for other in &mut self.queues {
                if other.new_cfqq == Some(q) {
                    other.new_cfqq = None;
                }
            }
        }
    }

    /// Whether a process context's sync queue is `q`. Until a merge was first planned, a
    /// context takes a sync queue only by allocating it (and the queue records which
    /// context did), so that one context is the only one to look at; after, a context can
    /// follow a merge to any queue and all are looked at. The kernel needs neither: a
    /// context holds a reference counted in the queue.
    fn reached_by_a_context(&self, q: QId) -> bool {
        if self.merges_planned {
            return self.cics.iter().any(|cic| cic.sync_q == Some(q));
        }
        self.queues[q]
            .creator_cic()
            .is_some_and(|c| self.cics[c].sync_q == Some(q))
    }

    /// A process exited: never idle for it again, end the slice of whichever of its queues
    /// is being served, and let go of its queues, async first as the kernel does. The sync
    /// queue outlives the process while its requests do (each holds a reference in the
    /// kernel); the shared async queue stays pinned by its group.
    /// Kernel: cfq_exit_icq() -> cfq_exit_cfqq() -> cfq_put_cooperator(), cfq_put_queue().
    pub(crate) fn exit_process(&mut self, ioc: IoContextId, now: Time, trace: &mut dyn Trace) {
        let Some(c) = self.cic_of.get(ioc) else {
            return;
        };
        self.cics[c].exited = true;
        if let Some(q) = self.cics[c].async_q.take() {
            self.exit_queue(q, now, trace);
        }
        if let Some(q) = self.cics[c].sync_q.take() {
            self.exit_queue(q, now, trace);
            self.put_cooperator(q, now, trace);
            self.put_process_ref(q, now, trace);
        }
    }

    /// Kernel: cfq_exit_cfqq()'s first step: a queue being served (dispatching, or idled on)
    /// loses its slice at once, untimed (no `slice_resid`), and dispatch is rescheduled.
    fn exit_queue(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        if self.active_queue == Some(q) {
            self.slice_expired(false, ExpireCause::ProcessExited, now, trace);
            self.schedule_dispatch(now, trace);
        }
    }

    /// Kernel: cfq_put_cooperator(): a planned cooperator merge that will now never happen
    /// returns the references it took along the `new_cfqq` chain.
    fn put_cooperator(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let mut next = self.queues[q].new_cfqq;
        let mut steps = 0;
        while let Some(n) = next {
            if n == q || steps > self.queues.len() {
                break; // the kernel WARNs on a loop and stops
            }
            next = self.queues[n].new_cfqq;
            if self.queues[n].proc_refs > 0 {
                self.put_process_ref(n, now, trace);
            }
            steps += 1;
        }
    }

    /// Kernel: cfq_insert_request() + cfq_add_rq_rb() + cfq_rq_enqueued().
    pub(crate) fn insert_request(&mut self, rq: Request, now: Time, trace: &mut dyn Trace) {
        // Read once for the whole insertion (issue 34: asked again by each helper).
        let sync = rq.is_sync();
        let (q, c) = self.queue_for(&rq, sync, now, trace);
        // The REQ_PRIO boost is not applied here: the kernel applies it only from
        // cfq_may_queue(), to a queue the context already has (see `may_queue`).
        self.log_q(trace, now, q, format_args!("insert_request"));
        init_prio_data(&mut self.queues[q], rq.ioprio);
        let seq = self.next_seq();
        let key = (rq.sector, seq);
        let slot = self.alloc_pending(Pending {
            rq,
            fifo_time: now + self.tun.fifo_expire_ns[usize::from(sync)],
            start_time: now,
            seq,
            cic: c,
            fifo_prev: super::fifo::NO_SLOT,
            fifo_next: super::fifo::NO_SLOT,
        });
        {
            let cfqq = &mut self.queues[q];
            super::fifo::push_tail(&mut self.pending, &mut cfqq.fifo, slot);
            cfqq.sort_list.insert(key, slot);
            cfqq.queued[usize::from(sync)] += 1;
        }
        if !self.queues[q].on_rr {
            self.add_to_rr(q, now, trace);
        }
        // choose_req(next_rq, the new request): the new one alone, or the better of two
        // distinct requests (the new one's sequence number is fresh); `next_rq` changed
        // exactly when the new request was chosen, a slot no other live request holds.
        let new = (key, slot);
        let changed = match self.queues[q].next_rq {
            None => true,
            Some(prev) => self.choose_between(prev, new, self.last_position).1 == slot,
        };
        if changed {
            self.queues[q].next_rq = Some(new);
            self.prio_tree_add(q);
        }

        // cfq_rq_enqueued()
        self.rq_queued += 1;
        if rq.flags.prio {
            self.queues[q].prio_pending += 1;
        }
        self.update_on_arrival(q, c, &rq, now, trace);

        if self.active_queue == Some(q) {
            if self.queues[q].wait_request {
                if rq.bytes() > PAGE_SIZE || self.busy_queues > 1 {
                    self.end_idle(now, false, trace);
                    self.queues[q].wait_request = false;
                    self.decide(
                        trace,
                        now,
                        DecisionKind::IdleEnd,
                        Some(q),
                        "request arrived",
                        None,
                    );
                } else {
                    // Small request, sole busy queue: let the timer's expiry kick dispatch
                    // (the block layer's queue run dispatches it meanwhile).
                    self.queues[q].must_dispatch = true;
                    self.decide(
                        trace,
                        now,
                        DecisionKind::IdleEnd,
                        Some(q),
                        "small request: must_dispatch",
                        None,
                    );
                }
            }
        } else if let Some(rule) = self.should_preempt(q, &rq, now, trace) {
            self.preempt_queue(q, rule, now, trace);
        }
    }
}

/// Kernel: cfq_init_prio_data(): class NONE takes the level the driver derived from nice
/// (carried in `IoPrio::level`) as BE; IDLE gets level 7 and loses its idle window.
pub(crate) fn init_prio_data(cfqq: &mut CfqQueue, prio: IoPrio) {
    if !cfqq.prio_changed {
        return;
    }
    match prio.class {
        IoPrioClass::None | IoPrioClass::BestEffort => {
            cfqq.ioprio = prio.level.min(7);
            cfqq.ioprio_class = Some(IoPrioClass::BestEffort);
        }
        IoPrioClass::RealTime => {
            cfqq.ioprio = prio.level.min(7);
            cfqq.ioprio_class = Some(IoPrioClass::RealTime);
        }
        IoPrioClass::Idle => {
            cfqq.ioprio = 7;
            cfqq.ioprio_class = Some(IoPrioClass::Idle);
            cfqq.idle_window = false;
        }
    }
    cfqq.org_ioprio = cfqq.ioprio;
    cfqq.org_ioprio_class = cfqq.ioprio_class;
    cfqq.prio_changed = false;
}

/// Kernel: cfqq_boost_on_prio() (run from cfq_may_queue() at request allocation): a REQ_PRIO
/// request lifts an idle-class queue to BE and a level below NORM to NORM; a request without
/// it restores the original class and level.
pub(crate) fn boost_on_prio(cfqq: &mut CfqQueue, prio: bool) {
    if !prio {
        cfqq.ioprio_class = cfqq.org_ioprio_class;
        cfqq.ioprio = cfqq.org_ioprio;
    } else {
        if cfqq.class_idle() {
            cfqq.ioprio_class = Some(IoPrioClass::BestEffort);
        }
        if cfqq.ioprio > IoPrio::NORM {
            cfqq.ioprio = IoPrio::NORM;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{hdd, insert, read, Rec, UP};
    use super::*;

    /// An insertion's `next_rq` is cfq_choose_req() of the queue's old `next_rq` and the new
    /// request, with the head anywhere (behind, ahead, within back_seek_max) (checked: it
    /// fails when the new request is always taken).
    #[test]
    fn insertion_chooses_next_rq_as_the_kernel() {
        let mut cfq = hdd();
        let mut rec = Rec::default();
        let mut x = 5u64;
        for id in 1..400u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let sector = (x >> 40) % 4096;
            cfq.last_position = (x >> 20) % 4096;
            let q = cfq.cic_of.get(IoContextId(7)).map(|c| cfq.cics[c].sync_q);
            let prev = q.flatten().and_then(|q| cfq.queues[q].next_rq);
            let head = cfq.last_position;
            insert(&mut cfq, read(id, 7, sector), UP + id, &mut rec);
            let q = cfq.cic(IoContextId(7)).sync_q.expect("a sync queue");
            let slot = cfq.queues[q].fifo.tail;
            let new = (cfq.pending[slot as usize].key(), slot);
            assert_eq!(
                cfq.queues[q].next_rq,
                cfq.choose_req(prev, Some(new), head),
                "request {id}"
            );
        }
    }

    /// Ids on both sides of the dense range find their contexts, and unknown ids none.
    #[test]
    fn cic_index_finds_dense_and_sparse_ids() {
        let mut index = CicIndex::default();
        let ids = [0, 7, DENSE_IOC_IDS - 1, DENSE_IOC_IDS, u32::MAX];
        for (c, &id) in ids.iter().enumerate() {
            assert_eq!(index.get(IoContextId(id)), None);
            index.insert(IoContextId(id), c);
        }
        for (c, &id) in ids.iter().enumerate() {
            assert_eq!(index.get(IoContextId(id)), Some(c));
        }
        assert_eq!(index.get(IoContextId(3)), None);
        assert_eq!(index.get(IoContextId(DENSE_IOC_IDS + 1)), None);
    }
}
