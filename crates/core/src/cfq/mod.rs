//! `cfq`: Completely Fair Queuing as Linux 4.20 last shipped it. Kernel: `block/cfq-iosched.c`.
//!
//! Each process gets a sync queue, each (group, class, level) an async queue; queues wait on
//! one of seven service trees of their cgroup's group (RT/BE × ASYNC/SYNC_NOIDLE/SYNC, plus
//! IDLE), groups on one device-wide tree ordered by `vdisktime`. The active queue holds a time
//! slice; when it runs dry CFQ may *idle* for the process's next request rather than seek away.
//! Groups are charged for the time (or, in iops mode, the requests) their queues used, scaled
//! by their hierarchical share `vfraction`.
//!
//! The mechanisms live one per file: [`queue`] (queues, process contexts, insertion),
//! [`group`] (weights, vdisktime, charging), [`service_tree`] (queue placement),
//! [`select`] (choice of group, workload and queue), [`dispatch`] (limits and request order),
//! [`fifo`], [`slice`](mod@slice) (lengths and expiry), [`idle`] (idling, hw_tag, completion),
//! [`preempt`], [`think_time`] (think time, seeks, idle window, `deep`), [`coop`]
//! (cooperating-queue merge and split), [`rules_2632`] (Linux 2.6.32's low_latency and
//! idling rules, a seed-003 switch) and [`tunables`].
//!
//! Time is `now` in ns, passed in; the idle timer is returned from `dispatch` as
//! [`Dispatch::IdleUntil`]. A timer the driver has not fired yet but whose time has come is
//! fired first by whichever call arrives at or after it, as the kernel's hrtimer would have.

pub mod coop;
pub mod dispatch;
pub mod fifo;
pub mod group;
pub mod idle;
pub mod in_flight;
pub mod merge;
pub mod preempt;
pub mod prio_tree;
pub mod queue;
pub mod rules_2632;
pub mod select;
pub mod service_tree;
pub mod slice;
pub mod sort_list;
pub mod think_time;
pub mod tunables;

#[cfg(test)]
mod lifecycle_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
pub(crate) mod tests;

use crate::rbtree;
use std::collections::BTreeMap;
use std::fmt;

use crate::elevator::{CgroupSpec, DeviceInfo, Dispatch, Elevator, ServiceSummary};
use crate::id_table::IdTable;
use crate::request::{CgroupId, IoContextId, Request, RequestId, Time, NSEC_PER_SEC};
use crate::trace::{Decision, DecisionKind, MessageSubject, RqEvent, Trace};
use crate::tunable::{TunableError, TunableSpec, TunableValue};

use group::CfqGroup;
use queue::{CfqQueue, Cic};
pub use tunables::Tunables;

/// Index of a queue in the queue slab.
pub(crate) type QId = usize;
/// Index of a group in the group slab; 0 is the root group.
pub(crate) type GId = usize;

/// Workload classes (`enum wl_class_t`), numbered as the kernel logs them.
pub(crate) const BE_WORKLOAD: usize = 0;
pub(crate) const RT_WORKLOAD: usize = 1;
pub(crate) const IDLE_WORKLOAD: usize = 2;
/// Workload types (`enum wl_type_t`).
pub(crate) const ASYNC_WORKLOAD: usize = 0;
pub(crate) const SYNC_NOIDLE_WORKLOAD: usize = 1;
pub(crate) const SYNC_WORKLOAD: usize = 2;

/// 200 ms: rb_key offset of idle-class queues. Kernel: CFQ_IDLE_DELAY.
pub(crate) const CFQ_IDLE_DELAY: Time = NSEC_PER_SEC / 5;
/// 12: fixed-point shift of `vfraction` and charges. Kernel: CFQ_SERVICE_SHIFT.
pub(crate) const CFQ_SERVICE_SHIFT: u32 = 12;
/// 8192 sectors (4 MiB): a request this close to the head is "close". Kernel: CFQQ_CLOSE_THR.
pub(crate) const CFQQ_CLOSE_THR: u64 = 8 * 1024;
/// 5: queue depth from which the device counts as queueing (NCQ). Kernel: CFQ_HW_QUEUE_MIN.
pub(crate) const CFQ_HW_QUEUE_MIN: u32 = 5;
/// 50 samples before hw_tag is decided.
pub(crate) const HW_TAG_SAMPLES: u32 = 50;
/// 4096 B: an arrival larger than a page ends idling at once (`PAGE_SIZE`).
pub(crate) const PAGE_SIZE: u64 = 4096;

/// Idle accounting of one queue or group, for [`Elevator::summary`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    pub served_ns: u64,
    pub idled_ns: u64,
    pub idle_wasted_ns: u64,
    pub slices: u64,
    pub preemptions: u64,
}

impl Stats {
    pub(crate) fn add(&mut self, other: &Stats) {
        self.served_ns += other.served_ns;
        self.idled_ns += other.idled_ns;
        self.idle_wasted_ns += other.idle_wasted_ns;
        self.slices += other.slices;
        self.preemptions += other.preemptions;
    }
}

/// The armed idle timer: when it fires and whom it idles for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IdleTimer {
    pub until: Time,
    pub armed_at: Time,
    pub queue: QId,
}

/// CFQ for one device. Kernel: struct cfq_data.
pub struct Cfq {
    pub(crate) tun: Tunables,
    /// Ticks per second of the kernel build; only `CFQ_MIN_TT`, the iops-mode group delay and
    /// one-jiffy floors depend on it.
    pub(crate) hz: u64,
    pub(crate) rotational: bool,
    pub(crate) queues: Vec<CfqQueue>,
    pub(crate) free_queues: Vec<QId>,
    pub(crate) groups: Vec<CfqGroup>,
    pub(crate) group_of: IdTable<GId, CgroupId>,
    /// Active groups by vdisktime (equal keys after existing ones), as one red-black tree
    /// over group ids. Kernel: grp_service_tree.
    pub(crate) grp_tree: rbtree::RbForest,
    /// Every group's seven service trees, tree `group * 7 + index`, over queue ids.
    pub(crate) st_forest: rbtree::RbForest,
    pub(crate) min_vdisktime: u64,
    /// Process contexts (slab) and their index by io context id.
    pub(crate) cics: Vec<Cic>,
    /// A merge of cooperating queues was planned at least once (some `new_cfqq` was set):
    /// until then, freeing a queue need not look through every queue and context.
    pub(crate) merges_planned: bool,
    pub(crate) cic_of: queue::CicIndex,
    /// The context last found by id: a request's allocation, merge attempt and insertion
    /// each look its process up (contexts are never removed, so the pair stays true).
    pub(crate) cic_hint: Option<(IoContextId, usize)>,
    /// Pending requests (slab) and free slots.
    pub(crate) pending: Vec<queue::Pending>,
    pub(crate) free_pending: Vec<queue::Slot>,
    /// Busy queues by their `next_rq` start sector, one kernel-shaped red-black tree per
    /// original ioprio level (nodes are queue ids).
    pub(crate) prio_trees: prio_tree::PrioTrees,
    /// Dispatched, not completed, by request id (the kernel reaches them through the
    /// request itself: O(1) however deep the device is).
    pub(crate) in_flight: in_flight::InFlightTable,
    pub(crate) serving_wl_class: usize,
    pub(crate) serving_wl_type: usize,
    /// u64 as in the kernel: `now - 1` means "already expired", except at `now == 0` (only
    /// reachable when a run starts at boot), where it wraps to "never", as the kernel's does.
    pub(crate) workload_expires: u64,
    pub(crate) serving_group: Option<GId>,
    pub(crate) busy_queues: u32,
    pub(crate) busy_sync_queues: u32,
    pub(crate) rq_in_driver: u32,
    pub(crate) rq_in_flight: [u32; 2],
    pub(crate) rq_queued: u32,
    /// -1 unknown, 0 no command queueing, 1 queueing.
    pub(crate) hw_tag: i32,
    pub(crate) hw_tag_est_depth: u32,
    pub(crate) hw_tag_samples: u32,
    pub(crate) idle_timer: Option<IdleTimer>,
    pub(crate) active_queue: Option<QId>,
    pub(crate) active_cic: Option<usize>,
    pub(crate) last_position: u64,
    pub(crate) last_delayed_sync: Time,
    /// Accounting of freed queues, by (creator pid, sync).
    pub(crate) retired_stats: BTreeMap<(u32, bool), Stats>,
    /// Tie-breaking sequence for every ordered tree: equal keys go after existing ones.
    pub(crate) seq: u64,
    /// One jiffy in ns (`NSEC_PER_SEC / hz`), divided once.
    pub(crate) jiffy_ns: Time,
    /// Whether the trace of the call being handled listens, read once as the call comes in
    /// ([`Cfq::listen`]): messages and decisions are built only when it is set. Asked at
    /// every log site it was two virtual calls each (the driver's trace behind `Uptime`'s),
    /// ~10 a request (issue 34).
    pub(crate) tracing: bool,
}

impl fmt::Debug for Cfq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cfq")
            .field("busy_queues", &self.busy_queues)
            .field("rq_queued", &self.rq_queued)
            .field("active_queue", &self.active_queue)
            .finish_non_exhaustive()
    }
}

impl Cfq {
    /// CFQ for a device; non-rotational devices get `slice_idle = 0`, as at registration.
    /// Kernel: cfq_init_queue(), cfq_registered_queue().
    pub fn new(device: DeviceInfo) -> Cfq {
        Cfq::with_hz(device, 1000)
    }

    /// As [`Cfq::new`], for a kernel built with `hz` ticks per second.
    pub fn with_hz(device: DeviceInfo, hz: u64) -> Cfq {
        assert!(hz > 0, "HZ must be positive");
        let mut tun = Tunables::default();
        if !device.rotational {
            tun.slice_idle_ns = 0;
        }
        let mut cfq = Cfq {
            tun,
            hz,
            rotational: device.rotational,
            queues: Vec::new(),
            free_queues: Vec::new(),
            groups: Vec::new(),
            group_of: IdTable::default(),
            grp_tree: rbtree::RbForest::new(1),
            st_forest: rbtree::RbForest::new(7),
            min_vdisktime: 0,
            cics: Vec::new(),
            merges_planned: false,
            cic_of: queue::CicIndex::default(),
            cic_hint: None,
            pending: Vec::new(),
            free_pending: Vec::new(),
            prio_trees: prio_tree::PrioTrees::new(8),
            in_flight: in_flight::InFlightTable::default(),
            serving_wl_class: BE_WORKLOAD,
            serving_wl_type: ASYNC_WORKLOAD,
            workload_expires: 0,
            serving_group: None,
            busy_queues: 0,
            busy_sync_queues: 0,
            rq_in_driver: 0,
            rq_in_flight: [0, 0],
            rq_queued: 0,
            hw_tag: -1,
            hw_tag_est_depth: 0,
            hw_tag_samples: 0,
            idle_timer: None,
            active_queue: None,
            active_cic: None,
            last_position: 0,
            // Kernel: now - 1 s at init (cfq_init_queue()), the scheduler being created at boot,
            // so this wraps; every use subtracts with wrapping_sub as the kernel's u64 does.
            last_delayed_sync: 0u64.wrapping_sub(NSEC_PER_SEC),
            retired_stats: BTreeMap::new(),
            seq: 0,
            jiffy_ns: NSEC_PER_SEC / hz,
            tracing: false,
        };
        // Root group: cgroup v1 default weight 500, leaf weight doubled for the root.
        cfq.groups
            .push(CfqGroup::new(CgroupId::ROOT, None, 500, 1000, 0));
        cfq.group_of.insert(CgroupId::ROOT, 0);
        cfq
    }

    /// The tunables table, for `iosched schedulers`.
    pub fn tunable_specs() -> &'static [TunableSpec] {
        &tunables::TUNABLES
    }

    /// Current settings.
    pub fn settings(&self) -> &Tunables {
        &self.tun
    }

    /// One jiffy in ns.
    pub(crate) fn jiffy(&self) -> Time {
        self.jiffy_ns
    }

    /// Every call from outside that may trace starts here: whether `trace` listens is read
    /// once, and the log helpers below read the answer.
    #[inline]
    pub(crate) fn listen(&mut self, trace: &dyn Trace) {
        self.tracing = trace.enabled();
    }

    pub(crate) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Kernel: iops_mode(): charge by requests when not idling on an NCQ device.
    pub(crate) fn iops_mode(&self) -> bool {
        self.tun.slice_idle_ns == 0 && self.hw_tag != 0
    }

    pub(crate) fn queue_subject(&self, q: QId) -> MessageSubject {
        let cfqq = &self.queues[q];
        MessageSubject::Queue {
            pid: cfqq.pid,
            cgroup: self.groups[cfqq.group].cgroup,
            sync: cfqq.sync,
            noidle: cfqq.wl_type() == SYNC_NOIDLE_WORKLOAD,
        }
    }

    /// Kernel: cfq_log_cfqq().
    // Always inlined, as the three below: the caller's format arguments are then built only
    // when a sink listens (issue 34: out of line, the untraced calls cost 3 % of a CFQ run).
    // `trace` is the call's own sink, whose `enabled()` was read into `tracing` (`listen`).
    #[inline(always)]
    pub(crate) fn log_q(&self, trace: &mut dyn Trace, now: Time, q: QId, args: fmt::Arguments) {
        if self.tracing {
            self.message_q(trace, now, q, args);
        }
    }

    /// The listening half of [`Cfq::log_q`]: the subject is built here, out of line too.
    #[cold]
    #[inline(never)]
    fn message_q(&self, trace: &mut dyn Trace, now: Time, q: QId, args: fmt::Arguments) {
        let text = fmt::format(args);
        trace.message(now, self.queue_subject(q), &text);
    }

    /// Kernel: cfq_log_cfqg().
    #[inline(always)]
    pub(crate) fn log_g(&self, trace: &mut dyn Trace, now: Time, g: GId, args: fmt::Arguments) {
        if self.tracing {
            let text = fmt::format(args);
            trace.message(now, MessageSubject::Group(self.groups[g].cgroup), &text);
        }
    }

    /// Kernel: cfq_log().
    #[inline(always)]
    pub(crate) fn log(&self, trace: &mut dyn Trace, now: Time, args: fmt::Arguments) {
        if self.tracing {
            let text = fmt::format(args);
            trace.message(now, MessageSubject::Device, &text);
        }
    }

    /// A structured decision about queue `q` (if any).
    #[inline(always)]
    pub(crate) fn decide(
        &self,
        trace: &mut dyn Trace,
        now: Time,
        kind: DecisionKind,
        q: Option<QId>,
        reason: &str,
        value_ns: Option<u64>,
    ) {
        if self.tracing {
            let queue = q.map(|q| self.queues[q].pid);
            let group = q.map(|q| self.groups[self.queues[q].group].cgroup);
            trace.decision(
                now,
                &Decision {
                    kind,
                    queue,
                    group,
                    reason,
                    value_ns,
                },
            );
        }
    }

    /// Fires an idle timer whose time has come before handling a later event.
    #[inline]
    fn catch_up_timer(&mut self, now: Time, trace: &mut dyn Trace) {
        if self.idle_timer_due(now) {
            self.listen(trace);
            self.idle_timer_fired(now, trace);
        }
    }

    /// `dispatch` with nothing to hand out: the idle deadline, if idling.
    #[inline]
    fn nothing_to_dispatch(&self, now: Time) -> Dispatch {
        match self.idle_timer {
            Some(timer) => {
                assert!(timer.until > now, "idle deadline must lie in the future");
                Dispatch::IdleUntil(timer.until)
            }
            None => Dispatch::Empty,
        }
    }

    /// What dispatch_requests() answers first, with no side effect and no message: nothing
    /// busy, or nothing queued while a queue is active (select_queue()'s first rule). Under
    /// a process's QD4 two asks in three a request end here.
    #[inline(always)]
    fn nothing_dispatchable(&self) -> bool {
        self.busy_queues == 0 || (self.rq_queued == 0 && self.active_queue.is_some())
    }

    /// Whether an idle timer's time has come (`catch_up_timer` would fire it).
    #[inline(always)]
    fn idle_timer_due(&self, now: Time) -> bool {
        self.idle_timer.is_some_and(|t| t.until <= now)
    }

    /// `dispatch` past the quick answer, or with an idle timer due: the timer fired first,
    /// and the quick answer asked again after it (firing may have expired the slice).
    #[inline(never)]
    fn dispatch_caught_up(&mut self, now: Time, trace: &mut dyn Trace) -> Dispatch {
        if self.idle_timer_due(now) {
            self.catch_up_timer(now, trace);
            if self.nothing_dispatchable() {
                return self.nothing_to_dispatch(now);
            }
        }
        self.dispatch_listening(now, trace)
    }

    /// `dispatch` past its quick answer.
    #[inline(always)]
    fn dispatch_listening(&mut self, now: Time, trace: &mut dyn Trace) -> Dispatch {
        self.listen(trace);
        match self.dispatch_requests(now, trace) {
            Some((slot, q)) => {
                // Nothing stores a request between the removal and here: the slot holds it.
                let rq = self.take_dispatched(slot);
                self.activate_request(q, &rq, now, trace);
                Dispatch::Request(rq)
            }
            None => self.nothing_to_dispatch(now),
        }
    }
}

impl Elevator for Cfq {
    fn name(&self) -> &'static str {
        "cfq"
    }

    fn add_cgroup(&mut self, cgroup: CgroupSpec, now: Time) {
        self.add_group(cgroup, now);
    }

    fn exit_ioc(&mut self, ioc: IoContextId, now: Time, trace: &mut dyn Trace) {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        self.exit_process(ioc, now, trace);
    }

    fn insert(&mut self, rq: Request, now: Time, trace: &mut dyn Trace) {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        self.insert_request(rq, now, trace);
    }

    fn try_back_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        self.back_merge(bio)
    }

    fn may_queue(&mut self, bio: &Request) -> bool {
        Cfq::may_queue(self, bio)
    }

    fn try_front_merge(&mut self, bio: &Request, _now: Time) -> Option<RequestId> {
        self.front_merge(bio)
    }

    /// Back then front, as the default does, with the bio's queue found once.
    fn try_merge(&mut self, bio: &Request, _now: Time) -> Option<(RequestId, RqEvent)> {
        self.merge(bio)
    }

    fn dispatch(&mut self, now: Time, trace: &mut dyn Trace) -> Dispatch {
        // The quick answer first, when no idle timer is due (catching one up is the only
        // thing before it): what follows reads neither the trace nor anything the timer
        // would change, so `Uptime`'s call needs no trace set up and saves no registers for
        // the two asks in three that end here (issue 34).
        if !self.idle_timer_due(now) && self.nothing_dispatchable() {
            return self.nothing_to_dispatch(now);
        }
        self.dispatch_caught_up(now, trace)
    }

    fn dispatch_settled_until(&self, traced: bool) -> Option<Time> {
        self.settled_until(traced)
    }

    fn completed(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        self.completed_request(rq, now, trace);
    }

    fn timer(&mut self, now: Time, trace: &mut dyn Trace) {
        self.catch_up_timer(now, trace);
    }

    fn drain(&mut self, now: Time, trace: &mut dyn Trace) -> Vec<Request> {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        let out = self.forced_dispatch(now, trace);
        for rq in &out {
            let q = self
                .in_flight
                .get(rq.id)
                .expect("a drained request was dispatched")
                .queue as usize;
            self.activate_request(q, rq, now, trace);
        }
        out
    }

    fn queued(&self) -> usize {
        self.rq_queued as usize
    }

    fn tunables(&self) -> Vec<TunableValue> {
        self.tun.values()
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        self.tun.set(name, value)
    }

    fn summary(&self) -> Vec<ServiceSummary> {
        // Queues by (creator pid, sync): sync queues print as `queue <pid>`, async ones as
        // `queue <pid> async` (the pid of the process that created the shared queue).
        let mut by_queue = self.retired_stats.clone();
        for cfqq in self.queues.iter().filter(|q| q.live) {
            by_queue
                .entry((cfqq.pid, cfqq.sync))
                .or_default()
                .add(&cfqq.stats);
        }
        let mut out = Vec::new();
        for ((pid, sync), stats) in &by_queue {
            let name = if *sync {
                format!("queue {pid}")
            } else {
                format!("queue {pid} async")
            };
            out.push(summary_of(name, stats));
        }
        for cfqg in &self.groups {
            out.push(summary_of(format!("group {}", cfqg.cgroup.0), &cfqg.stats));
        }
        out
    }

    fn check_invariants(&self) {
        self.check_all();
    }
}

fn summary_of(name: String, stats: &Stats) -> ServiceSummary {
    ServiceSummary {
        name,
        served_ns: stats.served_ns,
        idled_ns: stats.idled_ns,
        idle_wasted_ns: stats.idle_wasted_ns,
        slices: stats.slices,
        preemptions: stats.preemptions,
    }
}

impl Cfq {
    /// Group `g`'s service tree `st`: a valid red-black tree, in key order, of the queues
    /// that say they sit on it, its count and cached leftmost right.
    fn check_service_tree(&self, g: GId, st: usize) {
        let t = service_tree::forest_tree(g, st);
        self.st_forest.check(t);
        let order = self.st_forest.in_order(t);
        let tree = &self.groups[g].trees[st];
        assert_eq!(
            tree.count as usize,
            order.len(),
            "group {g} tree {st} count"
        );
        assert_eq!(
            tree.leftmost,
            order.first().copied(),
            "group {g} tree {st} leftmost"
        );
        assert_eq!(
            tree.rightmost,
            order.last().copied(),
            "group {g} tree {st} rightmost"
        );
        for pair in order.windows(2) {
            let (a, b) = (&self.queues[pair[0]], &self.queues[pair[1]]);
            assert!(a.rb_key <= b.rb_key, "group {g} tree {st} out of order");
        }
        for &q in &order {
            assert_eq!(self.queues[q].group, g, "queue {q} on foreign tree");
            assert_eq!(
                self.queues[q].service_tree.map(usize::from),
                Some(st),
                "queue {q} tree index"
            );
        }
    }

    /// O(n) consistency walk over queues, trees and groups.
    fn check_all(&self) {
        let mut queued = 0u32;
        let mut busy = 0u32;
        let mut busy_sync = 0u32;
        let mut dispatched = 0u32;
        for (q, cfqq) in self.queues.iter().enumerate() {
            if !cfqq.live {
                assert!(cfqq.sort_list.is_empty(), "freed queue {q} holds requests");
                continue;
            }
            self.check_queue(q);
            queued += cfqq.queued[0] + cfqq.queued[1];
            dispatched += cfqq.dispatched;
            busy += u32::from(cfqq.on_rr);
            busy_sync += u32::from(cfqq.on_rr && cfqq.sync);
        }
        assert_eq!(queued, self.rq_queued, "rq_queued");
        assert_eq!(busy, self.busy_queues, "busy_queues");
        assert_eq!(busy_sync, self.busy_sync_queues, "busy_sync_queues");
        assert_eq!(
            dispatched as usize,
            self.in_flight.len(),
            "dispatched vs in flight"
        );
        assert_eq!(
            self.rq_in_driver as usize,
            self.in_flight.len(),
            "rq_in_driver"
        );
        self.check_groups();
        for cic in &self.cics {
            if let Some(q) = cic.sync_q {
                assert!(self.queues[q].live, "context points at freed queue {q}");
                assert!(self.queues[q].sync, "context's sync queue {q} is async");
            }
        }
        for level in 0..8 {
            self.prio_trees.check(level);
            for q in self.prio_trees.in_order(level) {
                assert_eq!(
                    self.queues[q].p_key.map(usize::from),
                    Some(level),
                    "prio tree entry {q}"
                );
            }
        }
        if let Some(timer) = self.idle_timer {
            let a = self
                .active_queue
                .expect("idle timer without an active queue");
            assert_eq!(
                timer.queue, a,
                "idle timer for a queue other than the active one"
            );
        }
    }

    /// One live queue: its requests, sort list and FIFO agree, and it is on the trees its
    /// state says.
    fn check_queue(&self, q: QId) {
        let cfqq = &self.queues[q];
        let fifo = self.fifo_slots(q);
        assert_eq!(
            cfqq.sort_list.len(),
            fifo.len(),
            "queue {q}: sort_list vs fifo"
        );
        let mut prev = fifo::NO_SLOT;
        for &slot in &fifo {
            let p = &self.pending[slot as usize];
            assert_ne!(p.seq, u64::MAX, "queue {q}: freed slot {slot} in the fifo");
            assert_eq!(p.fifo_prev, prev, "queue {q}: fifo links");
            assert!(
                cfqq.sort_list.contains_key(&p.key()),
                "queue {q}: fifo slot {slot} not queued"
            );
            prev = slot;
        }
        assert_eq!(cfqq.fifo.tail, prev, "queue {q}: fifo tail");
        for (key, &slot) in &cfqq.sort_list {
            assert_eq!(
                self.pending[slot as usize].key(),
                *key,
                "queue {q}: slot key"
            );
        }
        assert_eq!(
            (cfqq.queued[0] + cfqq.queued[1]) as usize,
            cfqq.sort_list.len(),
            "queue {q}: queued counts"
        );
        assert_eq!(
            cfqq.next_rq.is_some(),
            !cfqq.sort_list.is_empty(),
            "queue {q}: next_rq"
        );
        if let Some((key, _)) = cfqq.next_rq {
            assert!(
                cfqq.sort_list.contains_key(&key),
                "queue {q}: next_rq not queued"
            );
        }
        assert_eq!(
            u32::from(cfqq.seeky_arrivals),
            cfqq.seek_history.count_ones(),
            "queue {q}: seeky arrivals"
        );
        if cfqq.on_rr {
            assert!(
                cfqq.service_tree.is_some(),
                "busy queue {q} is on no service tree"
            );
        } else {
            assert!(cfqq.service_tree.is_none(), "idle queue {q} on a tree");
            assert!(cfqq.p_key.is_none(), "idle queue {q} on a prio tree");
        }
        if !cfqq.sort_list.is_empty() {
            assert!(
                cfqq.on_rr || Some(q) == self.active_queue,
                "queue {q} not busy"
            );
        }
        if let Some(level) = cfqq.p_key.map(usize::from) {
            assert!(
                self.prio_trees.in_order(level).contains(&q),
                "queue {q} not in prio tree {level}"
            );
        }
    }

    /// Every group's service trees, and the group tree holding exactly the busy groups.
    fn check_groups(&self) {
        self.grp_tree.check(0);
        let on_group_tree = self.grp_tree.in_order(0);
        for (g, cfqg) in self.groups.iter().enumerate() {
            let mut nr = 0;
            for (st, tree) in cfqg.trees.iter().enumerate() {
                self.check_service_tree(g, st);
                nr += tree.count;
            }
            assert_eq!(nr, cfqg.nr_cfqq, "group {g} nr_cfqq");
            assert_eq!(cfqg.on_tree, cfqg.nr_cfqq > 0, "group {g} on tree iff busy");
            assert_eq!(
                cfqg.on_tree,
                on_group_tree.contains(&g),
                "group {g} on the group tree"
            );
            if cfqg.on_tree {
                assert!(cfqg.vfraction >= 1, "group {g} on the tree without a share");
            }
        }
    }
}
