//! `bfq`: Budget Fair Queueing as Linux 6.12 has it. Kernel: `block/bfq-iosched.c`,
//! `bfq-wf2q.c`, `bfq-cgroup.c`, `bfq-iosched.h`.
//!
//! Each process gets a sync queue and shares an async queue per (group, class, level). A queue
//! is served alone, one *budget* (sectors) at a time, and is chosen by B-WF2Q+ ([`wf2q`]) over
//! *entities*: queues and groups, each on its parent group's service trees, ordered by virtual
//! finish time among the eligible (start ≤ the tree's virtual time). Budgets follow what a
//! queue used ([`budget`]); the device's peak rate ([`peak_rate`]) sets the largest budget.
//! When the queue in service runs dry BFQ may *idle* for its next request ([`idle`]), or let
//! other queues *inject* requests meanwhile ([`inject`]). Under `low_latency`, interactive and
//! soft real-time queues are *weight-raised* ([`weight_raise`]), except those born in a large
//! *burst* ([`burst`]). Queues doing interleaved I/O are merged ([`queue_merge`]); a queue
//! whose I/O another unblocks knows its *waker* ([`waker`]). Groups carry `bfq.weight`
//! ([`cgroup`]). Why a queue stops being served is one of five reasons ([`expire`]); requests
//! come in and go out through [`dispatch`]. Every sysfs tunable is in [`tunables`].
//!
//! Time is `now` in ns, passed in. The kernel's jiffies (HZ=250, 4 ms) are derived from it as
//! the kernel derives them ([`crate::deadline::tunables::jiffies`]), and compared with the
//! wrap-safe `time_after()` rules. The idle timer (`idle_slice_timer`, an hrtimer) is returned
//! from `dispatch` as [`Dispatch::IdleUntil`]; a timer whose time has come is fired first by
//! whichever call arrives at or after it.
//!
//! What blk-mq does around BFQ, and how the core models it:
//! - tags: `bfq_limit_depth()` is [`Bfq::limit_depth`], which answers the shallow depth a
//!   request may allocate its tag with (`async_depths`, and 1 for a queue over its share of
//!   `nr_requests` in the group hierarchy); the driver owns the tag pool and calls
//!   [`Bfq::depth_updated`] with `nr_requests`.
//! - hardware queues: one (BFQ sets `QUEUE_FLAG_SQ_SCHED`); `bfq_has_work()` is
//!   [`Bfq::has_work`]. Multi-actuator drives (`ia_ranges`) are not modelled: one actuator.
//! - request lifetime: the kernel's `prepare_request` + `insert_requests` happen together in
//!   [`Elevator::insert`] (the driver allocates and inserts in one step); `finish_request` is
//!   [`Elevator::completed`]; requeues do not happen.
//! - merges: bio merges into a queued request are not offered (the trait's defaults); every
//!   request is inserted on its own.

/// Kernel: bfq_log_bfqq(): `bfq_log_q!(self, trace, now, q, format_args!(..))` notes the
/// message under queue `q`'s group. A macro, so that with no trace listening
/// ([`Bfq::tracing`]) the message's arguments are not even evaluated.
macro_rules! bfq_log_q {
    ($bfqd:expr, $trace:expr, $now:expr, $q:expr, $args:expr $(,)?) => {
        if $bfqd.tracing {
            $bfqd.log_q_text($trace, $now, $q, $args);
        }
    };
}

/// Kernel: bfq_log(): `bfq_log!(self, trace, now, format_args!(..))`, as [`bfq_log_q`].
macro_rules! bfq_log {
    ($bfqd:expr, $trace:expr, $now:expr, $args:expr $(,)?) => {
        if $bfqd.tracing {
            $crate::bfq::log_text($trace, $now, $args);
        }
    };
}

pub mod budget;
pub mod burst;
pub mod cgroup;
pub mod dispatch;
pub mod expire;
mod fifo;
pub mod idle;
pub mod inject;
pub mod insert;
pub mod merge;
pub mod peak_rate;
mod qlist;
pub mod queue;
pub mod queue_merge;
pub mod tunables;
pub mod waker;
pub mod weight_raise;
pub mod wf2q;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use crate::deadline::tunables::{jiffies, msecs_to_jiffies};
use crate::elevator::{CgroupSpec, DeviceInfo, Dispatch, Elevator, ServiceSummary};
use crate::elv_hash::ElvHash;
use crate::id_slab::IdSlab;
use crate::id_table::IdTable;
use crate::rbtree::RbForest;
use crate::request::{CgroupId, IoContextId, Request, RequestId, Time};
use crate::trace::{Decision, DecisionKind, MessageSubject, Trace};
use crate::tunable::{TunableError, TunableSpec, TunableValue};

pub use expire::Expiration;
use qlist::QList;
pub use tunables::Tunables;
use wf2q::{Entity, SchedData};

/// Index of a queue in the queue slab (never reused within a run).
pub(crate) type QId = usize;
/// Index of a group; 0 is the root group.
pub(crate) type GId = usize;
/// Index of an entity (a queue's or a non-root group's).
pub(crate) type EId = usize;
/// Index of a held request.
pub(crate) type Slot = usize;

/// RT, BE, IDLE. Kernel: BFQ_IOPRIO_CLASSES.
pub(crate) const BFQ_IOPRIO_CLASSES: usize = 3;
/// Kernel: IOPRIO_NR_LEVELS.
pub(crate) const IOPRIO_NR_LEVELS: u32 = 8;
/// Kernel: BFQ_WEIGHT_CONVERSION_COEFF.
pub(crate) const BFQ_WEIGHT_CONVERSION_COEFF: u32 = 10;
/// Kernel: BFQ_MIN_WEIGHT, BFQ_MAX_WEIGHT.
pub(crate) const BFQ_MIN_WEIGHT: u32 = 1;
pub(crate) const BFQ_MAX_WEIGHT: u32 = 1000;
/// Kernel: IOPRIO_CLASS_RT/BE/IDLE as BFQ numbers `ioprio_class`.
pub(crate) const CLASS_RT: u32 = 1;
pub(crate) const CLASS_BE: u32 = 2;
pub(crate) const CLASS_IDLE: u32 = 3;
/// 2 ms in ns. Kernel: BFQ_MIN_TT.
pub(crate) const BFQ_MIN_TT: u64 = 2_000_000;
/// Kernel: MAX_JIFFY_OFFSET.
pub(crate) const MAX_JIFFY_OFFSET: u64 = ((i64::MAX >> 1) - 1) as u64;

/// Kernel: time_after(a, b), wrap-safe.
pub(crate) fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}

/// Kernel: time_after_eq(a, b).
pub(crate) fn time_after_eq(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) >= 0
}

/// Kernel: bfq_ioprio_to_weight().
pub(crate) fn ioprio_to_weight(ioprio: u32) -> u32 {
    (IOPRIO_NR_LEVELS - ioprio) * BFQ_WEIGHT_CONVERSION_COEFF
}

/// Kernel: struct bfq_ttime.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ttime {
    pub last_end_request: u64,
    pub ttime_total: u64,
    pub ttime_samples: u64,
    pub ttime_mean: u64,
}

/// Kernel: struct bfq_queue. Times named `*_jif` or documented as jiffies are jiffies; the
/// rest are ns.
#[derive(Clone, Debug)]
pub(crate) struct BfqQueue {
    pub id: QId,
    pub entity: EId,
    pub ref_: i32,
    pub stable_ref: i32,
    /// Creator pid; -1 once shared by a merge (`bfqSHARED-`).
    pub pid: i32,
    pub bic: Option<IoContextId>,
    pub ioprio: u32,
    pub ioprio_class: u32,
    pub new_ioprio: u32,
    pub new_ioprio_class: u32,
    pub last_serv_time_ns: u64,
    pub inject_limit: u32,
    pub decrease_time_jif: u64,
    pub new_bfqq: Option<QId>,
    /// Kernel: pos_root: the group whose rq_pos_tree holds the queue.
    pub pos_root: Option<GId>,
    /// Kernel: sort_list; its order is [`Bfq::sort_tree`], this is its size.
    pub sort_list: SortList,
    pub next_rq: Option<Slot>,
    pub queued: [i32; 2],
    pub meta_pending: i32,
    pub fifo: fifo::Fifo,
    /// The weight this queue is counted under in `queue_weights_tree`.
    pub weight_counter: Option<u32>,
    pub max_budget: i64,
    pub budget_timeout: u64,
    pub dispatched: i32,
    // Flags (enum bfqq_state_flags).
    pub just_created: bool,
    pub busy: bool,
    pub wait_request: bool,
    pub non_blocking_wait_rq: bool,
    pub fifo_expire: bool,
    pub has_short_ttime: bool,
    pub sync: bool,
    pub io_bound: bool,
    pub in_large_burst: bool,
    pub softrt_update: bool,
    pub coop: bool,
    pub split_coop: bool,
    pub ttime: Ttime,
    pub io_start_time: u64,
    pub tot_idle_time: u64,
    pub seek_history: u32,
    pub in_burst_list: bool,
    pub last_request_pos: u64,
    pub wr_cur_max_time: u64,
    pub soft_rt_next_start: u64,
    pub last_wr_start_finish: u64,
    pub wr_coeff: u32,
    pub last_idle_bklogged: u64,
    pub service_from_backlogged: u64,
    pub service_from_wr: u64,
    pub wr_start_at_switch_to_srt: u64,
    pub split_time: u64,
    pub first_io_time: u64,
    pub creation_time: u64,
    pub waker_bfqq: Option<QId>,
    pub tentative_waker_bfqq: Option<QId>,
    pub num_waker_detections: u32,
    pub waker_detection_started: u64,
    /// The waker whose `woken_list` holds this queue (`woken_list_node` hashed).
    pub woken_list_node: Option<QId>,
    /// Kernel: woken_list, head first.
    pub woken_list: VecDeque<QId>,
    /// Time served in total and slices, for `--decisions` summaries.
    pub served_ns: u64,
    pub slices: u64,
}

/// How many requests a queue's sort list holds: the list itself, in the kernel's shape, is
/// the queue's tree in [`Bfq::sort_tree`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SortList {
    len: usize,
}

impl SortList {
    pub(crate) fn add(&mut self) {
        self.len += 1;
    }

    pub(crate) fn remove(&mut self) {
        self.len = self
            .len
            .checked_sub(1)
            .expect("removal from an empty sort list");
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Saved per-process state of a queue across merges and splits. Kernel: struct
/// bfq_iocq_bfqq_data.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BfqqData {
    pub saved_has_short_ttime: bool,
    pub saved_io_bound: bool,
    pub saved_io_start_time: u64,
    pub saved_tot_idle_time: u64,
    pub saved_in_large_burst: bool,
    pub was_in_burst_list: bool,
    pub saved_weight: u32,
    pub saved_wr_coeff: u32,
    pub saved_last_wr_start_finish: u64,
    pub saved_service_from_wr: u64,
    pub saved_wr_start_at_switch_to_srt: u64,
    pub saved_wr_cur_max_time: u64,
    pub saved_ttime: Ttime,
    pub saved_last_serv_time_ns: u64,
    pub saved_inject_limit: u32,
    pub saved_decrease_time_jif: u64,
    pub stable_merge_bfqq: Option<QId>,
    pub stably_merged: bool,
}

/// A process's BFQ context. Kernel: struct bfq_io_cq.
#[derive(Clone, Debug)]
pub(crate) struct Bic {
    /// `[async, sync]`.
    pub bfqq: [Option<QId>; 2],
    /// The io priority BFQ last saw (class << 13 | level, as `bic->ioprio`).
    pub ioprio: u32,
    /// The cgroup its queues were made for (`blkcg_serial_nr`).
    pub cgroup: Option<CgroupId>,
    pub data: BfqqData,
    /// Requests allocated and not yet finished.
    pub requests: u32,
    /// The process has exited (`ioc->active_ref == 0`).
    pub exited: bool,
}

/// A request BFQ holds, queued or in the device.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub rq: Request,
    pub bfqq: QId,
    pub bic: IoContextId,
    /// ns: when the request's FIFO deadline passes.
    pub fifo_time: u64,
    /// On its queue's sort list (queued, not yet dispatched or merged away).
    pub sorted: bool,
    pub started: bool,
    /// Kernel: REQ_NOMERGE, set when a merge would have made it too large.
    pub nomerge: bool,
    /// Its place on its queue's FIFO.
    pub fifo: fifo::FifoLink,
}

/// Kernel: struct bfq_group.
#[derive(Clone, Debug)]
pub(crate) struct BfqGroup {
    pub cgroup: CgroupId,
    /// The group's entity; `None` for the root group (`my_entity == NULL`).
    pub entity: Option<EId>,
    pub sched_data: SchedData,
    /// `[RT, BE][level]`.
    pub async_bfqq: [[Option<QId>; 8]; 2],
    pub async_idle_bfqq: Option<QId>,
    pub active_entities: i32,
    pub num_queues_with_pending_reqs: i32,
    /// Kernel: rq_pos_tree: queues by their next request's sector, shape for shape.
    pub rq_pos_tree: RbForest,
}

/// Budget Fair Queueing. Kernel: struct bfq_data.
#[derive(Debug)]
pub struct Bfq {
    pub(crate) queues: Vec<Option<BfqQueue>>,
    pub(crate) entities: Vec<Entity>,
    pub(crate) groups: Vec<BfqGroup>,
    /// Groups by cgroup id (the kernel's `blkg` lookup).
    pub(crate) group_of: IdTable<GId, CgroupId>,
    /// Process contexts by io context id (the kernel's `rq->elv.icq`).
    pub(crate) bics: IdSlab<IoContextId, Bic>,
    pub(crate) held: Vec<Option<Held>>,
    pub(crate) free_held: Vec<Slot>,
    pub(crate) slot_of: IdTable<Slot>,
    /// Kernel: bfqd->dispatch (requests inserted at the head; unused by this driver).
    pub(crate) dispatch_list: VecDeque<Slot>,
    /// Kernel: queue_weights_tree: weight → number of queues counted under it.
    pub(crate) queue_weights_tree: BTreeMap<u32, u32>,
    pub(crate) num_groups_with_pending_reqs: u32,
    pub(crate) busy_queues: [u32; BFQ_IOPRIO_CLASSES],
    pub(crate) wr_busy_queues: i32,
    pub(crate) queued: i32,
    pub(crate) tot_rq_in_driver: i32,
    pub(crate) nonrot_with_queueing: bool,
    pub(crate) max_rq_in_driver: i32,
    pub(crate) hw_tag_samples: i32,
    pub(crate) hw_tag: i32,
    pub(crate) budgets_assigned: i32,
    /// The idle slice timer's expiry (ns), when armed.
    pub(crate) idle_timer: Option<Time>,
    pub(crate) in_service_queue: Option<QId>,
    pub(crate) last_position: u64,
    pub(crate) in_serv_last_pos: u64,
    pub(crate) last_completion: u64,
    pub(crate) last_completed_rq_bfqq: Option<QId>,
    pub(crate) last_bfqq_created: Option<QId>,
    pub(crate) last_empty_occupied_ns: u64,
    pub(crate) wait_dispatch: bool,
    pub(crate) waited_rq: Option<RequestId>,
    pub(crate) rqs_injected: bool,
    pub(crate) first_dispatch: u64,
    pub(crate) last_dispatch: u64,
    pub(crate) last_budget_start: u64,
    pub(crate) last_idling_start: u64,
    pub(crate) last_idling_start_jiffies: u64,
    pub(crate) peak_rate_samples: i32,
    pub(crate) sequential_samples: u32,
    pub(crate) tot_sectors_dispatched: u64,
    pub(crate) last_rq_max_size: u32,
    pub(crate) delta_from_first: u64,
    pub(crate) peak_rate: u32,
    pub(crate) bfq_max_budget: i64,
    /// Kernel: active_list[0] and idle_list, head first.
    pub(crate) active_list: QList,
    pub(crate) idle_list: QList,
    pub(crate) tun: Tunables,
    pub(crate) last_ins_in_burst: u64,
    pub(crate) burst_size: i32,
    /// The parent entity of the burst's queues (`None`: the root group).
    pub(crate) burst_parent_entity: Option<EId>,
    pub(crate) large_burst: bool,
    /// Kernel: burst_list, head first.
    pub(crate) burst_list: VecDeque<QId>,
    pub(crate) rate_dur_prod: u64,
    pub(crate) async_depths: [[u32; 2]; 2],
    pub(crate) nr_requests: u32,
    /// `!blk_queue_nonrot()`.
    pub(crate) rotational: bool,
    /// Insertion counter that orders equal keys as the kernel's rbtrees do.
    pub(crate) seq: u64,
    /// Idle-timer events, when recorded ([`Bfq::record_timer_events`]).
    pub(crate) timer_events: Option<Vec<(Time, TimerEvent)>>,
    /// Processes' nice values ([`Bfq::set_nice`]).
    pub(crate) nice: BTreeMap<u32, i32>,
    /// The queues' sort lists as the kernel's rbtrees, shape for shape (tree = queue, node =
    /// request slot): elv_rb_find() and the neighbours of a request follow the tree's
    /// shape and the requests' live positions (a front merge moves a request's start
    /// without always moving its node).
    pub(crate) sort_tree: RbForest,
    /// Kernel: q->last_merge, the one-hit merge cache.
    pub(crate) last_merge: Option<Slot>,
    /// Kernel: the elevator's hash of queued requests by end sector.
    pub(crate) hash: ElvHash,
    /// The driver delivers the idle timer at its expiry itself (the kernel oracle's
    /// harness), so other calls at that instant do not fire it.
    pub timer_delivered: bool,
    /// Kernel: bfqd->bio_bfqq and bio_bic while a bio looks for a merge.
    pub(crate) bio_bfqq: Option<QId>,
    pub(crate) bio_bic: Option<IoContextId>,
    /// Kernel: queue_max_sectors(): the largest a merge may make a request.
    pub max_sectors: u32,
    /// `trace.enabled()` of the call in progress, read once as each call comes in
    /// ([`Bfq::listen`]): messages and decisions are built only when it is set.
    pub(crate) tracing: bool,
}

/// What happened to the idle slice timer (an hrtimer in the kernel), for comparison with
/// the kernel oracle's `H` lines.
pub use crate::trace::TimerEvent;

/// The text of bfq_log(), out of line (see [`Bfq::log_q`]).
#[cold]
#[inline(never)]
pub(crate) fn log_text(trace: &mut dyn Trace, now: Time, args: fmt::Arguments) {
    let text = format!("bfq {args}");
    trace.message(now, MessageSubject::Text, &text);
}

/// Kernel: ref_rate[] (sectors/usec << BFQ_RATE_SHIFT), [rotational, non-rotational].
pub(crate) const REF_RATE: [u64; 2] = [14000, 33000];
/// Kernel: ref_wr_duration[] set in bfq_init(): 7 s and 2.5 s in jiffies.
pub(crate) fn ref_wr_duration(nonrot: bool) -> u64 {
    msecs_to_jiffies(if nonrot { 2500 } else { 7000 })
}

impl Bfq {
    /// Kernel: bfq_init_queue() and bfq_init_hctx() for a device.
    pub fn new(device: DeviceInfo, now: Time) -> Bfq {
        let nonrot = !device.rotational;
        let mut bfqd = Bfq {
            queues: Vec::new(),
            entities: Vec::new(),
            groups: Vec::new(),
            group_of: IdTable::default(),
            bics: IdSlab::default(),
            held: Vec::new(),
            free_held: Vec::new(),
            slot_of: IdTable::default(),
            dispatch_list: VecDeque::new(),
            queue_weights_tree: BTreeMap::new(),
            num_groups_with_pending_reqs: 0,
            busy_queues: [0; 3],
            wr_busy_queues: 0,
            queued: 0,
            tot_rq_in_driver: 0,
            nonrot_with_queueing: nonrot,
            max_rq_in_driver: 0,
            hw_tag_samples: 0,
            hw_tag: -1,
            budgets_assigned: 0,
            idle_timer: None,
            in_service_queue: None,
            last_position: 0,
            in_serv_last_pos: 0,
            last_completion: 0,
            last_completed_rq_bfqq: None,
            last_bfqq_created: None,
            last_empty_occupied_ns: 0,
            wait_dispatch: false,
            waited_rq: None,
            rqs_injected: false,
            first_dispatch: 0,
            last_dispatch: 0,
            last_budget_start: 0,
            last_idling_start: 0,
            last_idling_start_jiffies: 0,
            peak_rate_samples: 0,
            sequential_samples: 0,
            tot_sectors_dispatched: 0,
            last_rq_max_size: 0,
            delta_from_first: 0,
            peak_rate: (REF_RATE[nonrot as usize] * 2 / 3) as u32,
            bfq_max_budget: budget::BFQ_DEFAULT_MAX_BUDGET,
            active_list: QList::default(),
            idle_list: QList::default(),
            tun: Tunables::default(),
            last_ins_in_burst: 0,
            burst_size: 0,
            burst_parent_entity: None,
            large_burst: false,
            burst_list: VecDeque::new(),
            rate_dur_prod: REF_RATE[nonrot as usize] * ref_wr_duration(nonrot),
            async_depths: [[0; 2]; 2],
            nr_requests: 0,
            rotational: device.rotational,
            seq: 0,
            timer_events: None,
            nice: BTreeMap::new(),
            sort_tree: RbForest::new(0),
            last_merge: None,
            hash: ElvHash::default(),
            timer_delivered: false,
            bio_bfqq: None,
            bio_bic: None,
            max_sectors: 2560,
            tracing: false,
        };
        bfqd.groups.push(BfqGroup::new(CgroupId::ROOT, None, now));
        bfqd.group_of.insert(CgroupId::ROOT, 0);
        // blk_mq_init_sched(): nr_requests is twice the device's depth, at most 256.
        bfqd.depth_updated(2 * device.queue_depth.clamp(1, 128));
        bfqd
    }

    /// The tunables table, for `iosched schedulers`.
    pub fn tunable_specs() -> &'static [TunableSpec] {
        &tunables::TUNABLES
    }

    pub(crate) fn q(&self, q: QId) -> &BfqQueue {
        self.queues[q].as_ref().expect("live bfq_queue")
    }

    pub(crate) fn qm(&mut self, q: QId) -> &mut BfqQueue {
        self.queues[q].as_mut().expect("live bfq_queue")
    }

    pub(crate) fn e(&self, e: EId) -> &Entity {
        &self.entities[e]
    }

    pub(crate) fn em(&mut self, e: EId) -> &mut Entity {
        &mut self.entities[e]
    }

    /// The entity of queue `q`.
    pub(crate) fn qe(&self, q: QId) -> &Entity {
        &self.entities[self.q(q).entity]
    }

    pub(crate) fn qem(&mut self, q: QId) -> &mut Entity {
        let e = self.q(q).entity;
        &mut self.entities[e]
    }

    pub(crate) fn h(&self, slot: Slot) -> &Held {
        self.held[slot].as_ref().expect("held request")
    }

    pub(crate) fn hm(&mut self, slot: Slot) -> &mut Held {
        self.held[slot].as_mut().expect("held request")
    }

    pub(crate) fn nonrot(&self) -> bool {
        !self.rotational
    }

    pub(crate) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Kernel: bfqq_group().
    pub(crate) fn bfqq_group(&self, q: QId) -> GId {
        self.qe(q).sched_data
    }

    /// Kernel: bfq_class_idle().
    pub(crate) fn class_idle(&self, q: QId) -> bool {
        self.q(q).ioprio_class == CLASS_IDLE
    }

    /// Kernel: bfq_tot_busy_queues().
    pub(crate) fn tot_busy_queues(&self) -> u32 {
        self.busy_queues.iter().sum()
    }

    /// Kernel: bfqq_process_refs().
    pub(crate) fn process_refs(&self, q: QId) -> i32 {
        let bfqq = self.q(q);
        let e = self.e(bfqq.entity);
        bfqq.ref_
            - e.allocated
            - i32::from(e.on_st_or_in_serv)
            - i32::from(bfqq.weight_counter.is_some())
            - bfqq.stable_ref
    }

    /// The kernel's `%p` as the oracle names objects: a queue `q<N>` (N counts queue
    /// allocations from 1), a request `r<ID>`.
    pub(crate) fn ptr(&self, kind: u8, id: u64) -> String {
        match kind {
            0 => format!("q{}", id + 1),
            _ => format!("r{id}"),
        }
    }

    /// Starts (or stops) recording idle-timer events.
    pub fn record_timer_events(&mut self, on: bool) {
        self.timer_events = on.then(Vec::new);
    }

    /// The idle-timer events recorded since the last call.
    pub fn take_timer_events(&mut self) -> Vec<(Time, TimerEvent)> {
        self.timer_events
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Kernel: bfq_bfqq_name().
    pub(crate) fn bfqq_name(&self, q: QId) -> String {
        let bfqq = self.q(q);
        let kind = if bfqq.sync { 'S' } else { 'A' };
        if bfqq.pid != -1 {
            format!("bfq{}{kind}", bfqq.pid)
        } else {
            format!("bfqSHARED-{kind}")
        }
    }

    /// Every call from outside that may trace starts here: whether `trace` listens is read
    /// once per call, not at each of the few dozen messages a request passes (a call
    /// through `dyn Trace` each).
    pub(crate) fn listen(&mut self, trace: &dyn Trace) {
        self.tracing = trace.enabled();
    }

    /// The text of bfq_log_bfqq() ([`bfq_log_q`]): the queue's name, then the message.
    #[cold]
    #[inline(never)]
    pub(crate) fn log_q_text(
        &self,
        trace: &mut dyn Trace,
        now: Time,
        q: QId,
        args: fmt::Arguments,
    ) {
        let text = format!("{} {}", self.bfqq_name(q), args);
        let cgroup = self.groups[self.bfqq_group(q)].cgroup;
        trace.message(now, MessageSubject::Group(cgroup), &text);
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
            self.decide_text(trace, now, kind, q, reason, value_ns);
        }
    }

    #[cold]
    #[inline(never)]
    fn decide_text(
        &self,
        trace: &mut dyn Trace,
        now: Time,
        kind: DecisionKind,
        q: Option<QId>,
        reason: &str,
        value_ns: Option<u64>,
    ) {
        let queue = q.map(|q| self.q(q).pid.max(0) as u32);
        let group = q.map(|q| self.groups[self.bfqq_group(q)].cgroup);
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

    /// When the idle slice timer will fire, if it is armed.
    pub fn idle_timer_expires(&self) -> Option<Time> {
        self.idle_timer
    }

    /// Kernel: bfq_has_work().
    pub fn has_work(&self) -> bool {
        !self.dispatch_list.is_empty() || self.queued > 0
    }

    /// Fires an idle timer whose time has come before handling a later event. A driver that
    /// delivers the timer at its time ([`Bfq::timer_delivered`]) sees it fire only through
    /// [`Elevator::timer`]: an hrtimer armed for the current instant fires after the event
    /// that armed it, not inside it.
    fn catch_up_timer(&mut self, now: Time, trace: &mut dyn Trace) {
        if let Some(until) = self.idle_timer {
            if until < now || (until == now && !self.timer_delivered) {
                self.idle_timer = None;
                self.record_timer(until, TimerEvent::Fire, trace);
                self.idle_slice_timer(until, trace);
            }
        }
    }

    /// jiffies now.
    pub(crate) fn jif(now: Time) -> u64 {
        jiffies(now)
    }
}

impl Elevator for Bfq {
    fn name(&self) -> &'static str {
        "bfq"
    }

    fn add_cgroup(&mut self, cgroup: CgroupSpec, now: Time) {
        self.add_group(cgroup, now);
    }

    fn exit_ioc(&mut self, ioc: IoContextId, now: Time, trace: &mut dyn Trace) {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        self.exit_icq(ioc, now, trace);
    }

    fn insert(&mut self, rq: Request, now: Time, trace: &mut dyn Trace) {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        self.insert_request(rq, now, trace);
    }

    fn dispatch(&mut self, now: Time, trace: &mut dyn Trace) -> Dispatch {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        match self.dispatch_request(now, trace) {
            Some(rq) => Dispatch::Request(rq),
            None => match self.idle_timer {
                Some(until) => {
                    assert!(
                        until > now || (until == now && self.timer_delivered),
                        "idle deadline must lie in the future"
                    );
                    Dispatch::IdleUntil(until)
                }
                None => Dispatch::Empty,
            },
        }
    }

    fn completed(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        self.finish_request(rq, now, trace);
    }

    fn timer(&mut self, now: Time, trace: &mut dyn Trace) {
        self.listen(trace);
        if let Some(until) = self.idle_timer.filter(|&u| u <= now) {
            self.idle_timer = None;
            self.record_timer(until, TimerEvent::Fire, trace);
            self.idle_slice_timer(until, trace);
        }
    }

    fn drain(&mut self, now: Time, trace: &mut dyn Trace) -> Vec<Request> {
        self.listen(trace);
        self.catch_up_timer(now, trace);
        let mut out = Vec::new();
        // A forced drain ignores idling: expire the queue in service whenever it would wait.
        let bound = self.queued as usize + self.tot_busy_queues() as usize + 2;
        for _ in 0..bound * 2 {
            match self.dispatch_request(now, trace) {
                Some(rq) => out.push(rq),
                None if self.queued > 0 => {
                    if let Some(q) = self.in_service_queue {
                        self.bfqq_expire(q, false, Expiration::BudgetTimeout, now, trace);
                    }
                }
                None => break,
            }
        }
        out
    }

    fn queued(&self) -> usize {
        self.queued.max(0) as usize + self.dispatch_list.len()
    }

    fn tunables(&self) -> Vec<TunableValue> {
        self.tun.values()
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        self.store_tunable(name, value)
    }

    fn summary(&self) -> Vec<ServiceSummary> {
        self.queues
            .iter()
            .flatten()
            .filter(|q| q.slices > 0)
            .map(|q| ServiceSummary {
                name: format!("queue {}", q.pid),
                served_ns: q.served_ns,
                slices: q.slices,
                ..ServiceSummary::default()
            })
            .collect()
    }

    fn check_invariants(&self) {
        self.check();
    }
}
