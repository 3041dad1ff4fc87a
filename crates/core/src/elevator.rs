//! The scheduler interface, modelled on the kernel's elevator operations.
//!
//! A driver (the simulator or the real engine) owns time and the device. It calls
//! [`Elevator::insert`] when a request arrives, [`Elevator::dispatch`] whenever the device has
//! a free slot, [`Elevator::completed`] when the device finishes a request, and
//! [`Elevator::timer`] when an idle deadline returned by `dispatch` passes. The scheduler never
//! reads a clock, sleeps, or performs I/O.

use crate::request::{CgroupId, IoContextId, Request, RequestId, Time};
use crate::trace::{RqEvent, Trace};
use crate::tunable::{TunableError, TunableValue};

/// What `dispatch` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Hand this request to the device now. It counts as *activated* from this moment
    /// (CFQ's `rq_in_driver`, `last_position` and hw_tag sampling key off it).
    Request(Request),
    /// Nothing before this time unless a request arrives: the scheduler is idling, waiting
    /// for the active process's next request. The driver calls [`Elevator::timer`] at that
    /// time if no other event has intervened, and dispatches again.
    IdleUntil(Time),
    /// Nothing to dispatch now; call again after the next insert or completion.
    Empty,
}

/// What the scheduler knows about the device it serves, fixed at registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `queue/rotational`: CFQ forces `slice_idle` to 0 when this is false.
    pub rotational: bool,
    /// Commands the device can hold (1 for no command queueing).
    pub queue_depth: u32,
}

/// A blkio cgroup as the scheduler needs it: its parent and its weights (cgroup v1 scale,
/// 10..=1000, default 500).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CgroupSpec {
    pub id: CgroupId,
    pub parent: CgroupId,
    pub weight: u32,
    pub leaf_weight: u32,
}

/// Service a scheduler gave one of its queues or groups over a run (filled by schedulers
/// that track it; see `iosched run --decisions`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceSummary {
    /// `queue <pid>` or the cgroup path's id, e.g. `group 3`.
    pub name: String,
    pub served_ns: u64,
    pub idled_ns: u64,
    /// Idle time that ended by the timer, with no request arriving.
    pub idle_wasted_ns: u64,
    pub slices: u64,
    pub preemptions: u64,
}

/// A block I/O scheduler. `Send`: the engine's threads share one behind a lock, as the
/// kernel's CPUs share one elevator.
pub trait Elevator: Send {
    /// The name users select it by (`noop`, `deadline`, `cfq`).
    fn name(&self) -> &'static str;

    /// Announces a cgroup at `now`, the time of its first request (the kernel creates a
    /// cgroup's blkg, and CFQ its group, at the cgroup's first bio: cfq_pd_alloc() ->
    /// cfq_init_cfqg_base()); parents are announced before their children. Announcing a
    /// known cgroup again updates its weights. Schedulers without group support ignore it.
    fn add_cgroup(&mut self, _cgroup: CgroupSpec, _now: Time) {}

    /// A process whose I/O context is `ioc` exited (CFQ stops idling for it, ends its slice if
    /// it is being served, and drops its queues: cfq_exit_icq()).
    fn exit_ioc(&mut self, _ioc: IoContextId, _now: Time, _trace: &mut dyn Trace) {}

    /// A request arrives. Its id is unique for the run.
    fn insert(&mut self, rq: Request, now: Time, trace: &mut dyn Trace);

    /// Tries to append `bio` (a new request from a submitter) to a request this scheduler
    /// holds and has not dispatched. On success the held request now also covers `bio`'s
    /// sectors and its id is returned: the driver completes `bio` with it and does not
    /// insert it. Kernel: the back-merge half of elv_merge()/blk_attempt_bio_merge();
    /// schedulers that never merge keep the default.
    fn try_back_merge(&mut self, _bio: &Request, _now: Time) -> Option<RequestId> {
        None
    }

    /// Tries to put `bio` in front of a held request that starts where `bio` ends; on
    /// success that request now starts at `bio`'s sector. Kernel: the front-merge half of
    /// elv_merge(). Schedulers that never merge keep the default.
    fn try_front_merge(&mut self, _bio: &Request, _now: Time) -> Option<RequestId> {
        None
    }

    /// A back merge, else a front merge, as the driver tries them: the request `bio` joined
    /// and `RqEvent::BackMerge` or `RqEvent::FrontMerge`. One call for a wrapper to forward
    /// instead of two (issue 34); schedulers keep the default.
    fn try_merge(&mut self, bio: &Request, now: Time) -> Option<(RequestId, RqEvent)> {
        if let Some(target) = self.try_back_merge(bio, now) {
            return Some((target, RqEvent::BackMerge));
        }
        self.try_front_merge(bio, now)
            .map(|target| (target, RqEvent::FrontMerge))
    }

    /// A request for `bio` is about to be allocated while its request list is full: may it
    /// be anyway? `true` is the kernel's ELV_MQUEUE_MUST (the scheduler is waiting for
    /// exactly this process); schedulers without an opinion keep the default.
    /// Kernel: elv_may_queue().
    fn may_queue(&mut self, _bio: &Request) -> bool {
        false
    }

    /// The device has room for one more request.
    fn dispatch(&mut self, now: Time, trace: &mut dyn Trace) -> Dispatch;

    /// Asked right after `dispatch` answered `Empty` or `IdleUntil`: until what time
    /// (inclusive) would `dispatch`, asked again with no other call in between, give the same
    /// answer and change nothing? `traced`: the driver's trace listens, so nothing also means
    /// no trace line. `None` (the default, always correct): ask after every event. Lets a
    /// driver skip asking after events that never reached the scheduler (a page-cache hit, a
    /// process waking), as the kernel runs the queue only on an insert, a completion or a
    /// timer.
    fn dispatch_settled_until(&self, _traced: bool) -> Option<Time> {
        None
    }

    /// Whether a completion leaves a standing "nothing now" answer of `dispatch` standing
    /// (see [`Elevator::dispatch_settled_until`]): true for a scheduler whose `completed`
    /// changes nothing `dispatch` reads (noop), so a driver need not ask again after each
    /// completion. Fixed for the scheduler's life (a driver asks once). `false` (the
    /// default, always correct): a completion is asked after.
    fn completion_keeps_dispatch_settled(&self) -> bool {
        false
    }

    /// Whether `dispatch`, asked while nothing is queued ([`Elevator::queued`] is 0), always
    /// answers `Empty` and changes nothing (no state, no trace line), and keeps answering so
    /// until a call other than `dispatch` reaches the scheduler: true for noop, so a driver
    /// may read the count instead of asking (issue 34: the ask after each dispatched request
    /// that drains the FIFO), and treat the answer as settled for good
    /// ([`Elevator::dispatch_settled_until`]). Fixed for the scheduler's life (a driver asks
    /// once). `false` (the default, always correct): ask. CFQ may idle or log with nothing
    /// queued.
    fn nothing_queued_answers_empty(&self) -> bool {
        false
    }

    /// The device finished `rq`, which this scheduler dispatched earlier.
    fn completed(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace);

    /// An idle deadline returned by `dispatch` has passed. Stale calls (the idle period was
    /// already ended by an arrival) must be harmless.
    fn timer(&mut self, _now: Time, _trace: &mut dyn Trace) {}

    /// Forced dispatch: hand over every queued request now, ignoring idling and limits
    /// (the kernel's `dispatch(force = 1)`, used when the queue is drained or the scheduler
    /// switched). The default keeps dispatching until the scheduler answers with anything
    /// other than a request.
    fn drain(&mut self, now: Time, trace: &mut dyn Trace) -> Vec<Request> {
        let mut out = Vec::new();
        while let Dispatch::Request(rq) = self.dispatch(now, trace) {
            out.push(rq);
        }
        out
    }

    /// Requests inserted and not yet dispatched.
    fn queued(&self) -> usize;

    /// The tunables with their current values, in table order.
    fn tunables(&self) -> Vec<TunableValue>;

    /// Sets a tunable by its sysfs name, with the kernel's parsing and clamping.
    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError>;

    /// Per-queue and per-group service accounting, when the scheduler keeps it.
    fn summary(&self) -> Vec<ServiceSummary> {
        Vec::new()
    }

    /// O(n) consistency checks, run by tests and by the simulator under `--check`.
    fn check_invariants(&self) {}
}
