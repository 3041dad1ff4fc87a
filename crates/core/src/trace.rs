//! Where schedulers and drivers report what happened and why.
//!
//! A scheduler receives a `&mut dyn Trace` with every call and pushes its kernel-style
//! messages and structured decisions into it. Every method defaults to a no-op and
//! [`Trace::enabled`] lets a scheduler skip formatting entirely, so a run without tracing
//! pays one predictable branch per message site.

use crate::request::{CgroupId, Request, RequestId, Time};

/// Lifecycle events of a request, named by blktrace's action letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RqEvent {
    /// `Q`: a bio was queued by the submitter.
    Queue,
    /// `G`: a request was allocated for it.
    GetRq,
    /// `S`: no request could be allocated; the submitter sleeps until one is freed.
    SleepRq,
    /// `M`: the bio was back-merged into a queued request.
    BackMerge,
    /// `F`: the bio was front-merged into a queued request.
    FrontMerge,
    /// `I`: the request was inserted into the scheduler.
    Insert,
    /// `D`: the request was issued to the device.
    Issue,
    /// `C`: the device completed it.
    Complete,
    /// `R`: the request was put back (requeued).
    Requeue,
    /// `P`: the submitter plugged its queue.
    Plug,
    /// `U`: the submitter unplugged.
    Unplug,
}

/// Who a scheduler message is about; decides the blkparse prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageSubject {
    /// Device-wide (`cfq ...`).
    Device,
    /// The text is complete as the scheduler framed it, with no cgroup attached (BFQ's
    /// `bfq_log()`: `bfq ...`).
    Text,
    /// About a group (cgroup).
    Group(CgroupId),
    /// About a queue: creator pid and cgroup, plus the two facts blkparse's prefix
    /// `cfq<pid><S|A><N| >` shows: `sync` (`S`, else `A`) and `noidle` (`N`: a sync queue on the
    /// SYNC_NOIDLE tree, i.e. `idle_window` clear; else a space).
    Queue {
        pid: u32,
        cgroup: CgroupId,
        sync: bool,
        noidle: bool,
    },
}

/// What a [`Decision`] is about: the mechanism that decided. Written as its snake-case name
/// ([`DecisionKind::as_str`]), which is what `--decisions` logs print and `jq` selects on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum DecisionKind {
    /// A group was chosen to serve (leftmost `vdisktime`). Kernel: cfq_choose_cfqg().
    SelectGroup,
    /// A workload (class and type) was chosen, with its slice. Kernel:
    /// choose_wl_class_and_type().
    Workload,
    /// A queue became the active one. Kernel: __cfq_set_active_queue().
    SelectQueue,
    /// The active queue keeps its slice, and why. Kernel: cfq_select_queue().
    KeepQueue,
    /// A deep seeky queue on a fast device lost `deep` and its idle window (8e1ac6655104).
    DeepCleared,
    /// The active queue's slice ended, and why. Kernel: __cfq_slice_expired().
    SliceExpired,
    /// A slice's length was set at its first completion. Kernel: cfq_set_prio_slice().
    SetSlice,
    /// The idle timer was armed, with its length. Kernel: cfq_arm_slice_timer().
    ArmIdle,
    /// Idling was refused, and why. Kernel: cfq_arm_slice_timer(), cfq_should_idle().
    NoIdle,
    /// Idling ended: a request arrived or the timer fired. Kernel: cfq_rq_enqueued(),
    /// cfq_idle_slice_timer().
    IdleEnd,
    /// The sole queue of a group keeps the group backlogged. Kernel: cfq_should_wait_busy().
    WaitBusy,
    /// A new request's queue preempted the active one. Kernel: cfq_should_preempt().
    Preempt,
    /// The active queue may not dispatch now. Kernel: cfq_may_dispatch().
    DispatchLimit,
    /// The FIFO head was past its deadline and goes next. Kernel: cfq_check_fifo().
    FifoExpired,
    /// A group was charged for a slice. Kernel: cfq_group_served().
    Charge,
    /// Two cooperating queues were merged. Kernel: cfq_merge_cfqqs().
    Merge,
    /// A queue's weight raising started, changed kind or ended (BFQ), and why. Kernel:
    /// bfq_update_bfqq_wr_on_rq_arrival(), bfq_bfqq_end_wr().
    WeightRaise,
    /// A request of another queue was dispatched while the queue in service was idled for
    /// (BFQ). Kernel: bfq_choose_bfqq_for_injection().
    Inject,
    /// Kyber resized a domain's token pool (`reason`: domain and depth). Kernel:
    /// kyber_resize_domain() (the `kyber_adjust` tracepoint).
    DomainDepth,
    /// Kyber read a latency percentile (`reason`: the `kyber_latency` tracepoint's text).
    /// Kernel: calculate_percentile().
    LatencyPercentile,
    /// A kyber domain with requests had no token (`reason`: the domain). Kernel:
    /// kyber_dispatch_cur_domain() (the `kyber_throttled` tracepoint).
    Throttled,
    /// Kyber's statistics timer was armed (`value_ns`: its expiry) or fired. Kernel:
    /// kyber_completed_request(), kyber_timer_fn().
    StatsTimer,
    /// The adaptive scheduler re-derived a parameter from what it measured (`reason`: the
    /// allowance and the share error it follows, or the device's parallelism).
    Adapt,
}

impl DecisionKind {
    /// Every kind, in declaration order.
    pub const ALL: [DecisionKind; 23] = [
        DecisionKind::SelectGroup,
        DecisionKind::Workload,
        DecisionKind::SelectQueue,
        DecisionKind::KeepQueue,
        DecisionKind::DeepCleared,
        DecisionKind::SliceExpired,
        DecisionKind::SetSlice,
        DecisionKind::ArmIdle,
        DecisionKind::NoIdle,
        DecisionKind::IdleEnd,
        DecisionKind::WaitBusy,
        DecisionKind::Preempt,
        DecisionKind::DispatchLimit,
        DecisionKind::FifoExpired,
        DecisionKind::Charge,
        DecisionKind::Merge,
        DecisionKind::WeightRaise,
        DecisionKind::Inject,
        DecisionKind::DomainDepth,
        DecisionKind::LatencyPercentile,
        DecisionKind::Throttled,
        DecisionKind::StatsTimer,
        DecisionKind::Adapt,
    ];

    /// The name logs print: `select_group`, `arm_idle`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::SelectGroup => "select_group",
            DecisionKind::Workload => "workload",
            DecisionKind::SelectQueue => "select_queue",
            DecisionKind::KeepQueue => "keep_queue",
            DecisionKind::DeepCleared => "deep_cleared",
            DecisionKind::SliceExpired => "slice_expired",
            DecisionKind::SetSlice => "set_slice",
            DecisionKind::ArmIdle => "arm_idle",
            DecisionKind::NoIdle => "no_idle",
            DecisionKind::IdleEnd => "idle_end",
            DecisionKind::WaitBusy => "wait_busy",
            DecisionKind::Preempt => "preempt",
            DecisionKind::DispatchLimit => "dispatch_limit",
            DecisionKind::FifoExpired => "fifo_expired",
            DecisionKind::Charge => "charge",
            DecisionKind::Merge => "merge",
            DecisionKind::WeightRaise => "weight_raise",
            DecisionKind::Inject => "inject",
            DecisionKind::DomainDepth => "domain_depth",
            DecisionKind::LatencyPercentile => "latency_percentile",
            DecisionKind::Throttled => "throttled",
            DecisionKind::StatsTimer => "stats_timer",
            DecisionKind::Adapt => "adapt",
        }
    }
}

impl std::fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A structured scheduler decision, written as one JSON line by `--decisions`.
///
/// `kind` names the mechanism, `queue` and `group` say whom it concerns, `reason` says why in
/// the kernel's terms, and `value_ns` carries the one number that matters (idle length, slice
/// length, charge...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision<'a> {
    pub kind: DecisionKind,
    /// Queue creator pid, if the decision concerns a queue.
    pub queue: Option<u32>,
    pub group: Option<CgroupId>,
    pub reason: &'a str,
    pub value_ns: Option<u64>,
}

/// The sink for everything a scheduler or driver wants to say about a run.
pub trait Trace {
    /// Whether anything is listening; schedulers skip building messages when it is not.
    fn enabled(&self) -> bool {
        false
    }

    /// A request lifecycle event (emitted by drivers, and by schedulers for merges).
    fn request(&mut self, _now: Time, _event: RqEvent, _rq: &Request) {}

    /// Whether [`Trace::request`] does anything. A driver asks once at the start of a run
    /// and, on false, skips its own lifecycle calls (issue 34: eight a request); a sink
    /// that answers false must drop them for the whole run.
    fn takes_requests(&self) -> bool {
        true
    }

    /// A free-form scheduler message: blktrace's `m N` note.
    fn message(&mut self, _now: Time, _subject: MessageSubject, _text: &str) {}

    /// A structured decision.
    fn decision(&mut self, _now: Time, _decision: &Decision<'_>) {}

    /// A scheduler's idle timer (an hrtimer in the kernel: BFQ's `idle_slice_timer`) armed,
    /// cancelled or fired, at the point of the call, between the messages around it (the
    /// kernel oracle's `H` lines).
    fn timer_event(&mut self, _now: Time, _event: TimerEvent) {}

    /// A bio joined a queued request (at its front when `front`), at the point the block
    /// layer does it (the kernel oracle's `M` line).
    fn bio_merged(&mut self, _now: Time, _bio: RequestId, _into: RequestId, _front: bool) {}

    /// A queued request was absorbed by another (attempt_merge(); the oracle's `A` line).
    fn requests_merged(&mut self, _now: Time, _absorbed: RequestId, _into: RequestId) {}
}

/// What happened to a scheduler's idle timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerEvent {
    /// Armed (or re-armed) to expire at this time. Kernel: hrtimer_start() in
    /// bfq_arm_slice_timer().
    Arm(Time),
    /// A pending expiry was cancelled. Kernel: hrtimer_try_to_cancel().
    Cancel,
    /// The timer's function ran. Kernel: bfq_idle_slice_timer().
    Fire,
}

/// The sink that discards everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Trace for NoTrace {
    fn takes_requests(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::DecisionKind;

    /// The names are the log's vocabulary: distinct, snake case, stable across releases.
    #[test]
    fn decision_kind_names_are_distinct_snake_case() {
        let names: Vec<&str> = DecisionKind::ALL.iter().map(|k| k.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicate name in {names:?}");
        for name in names {
            assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{name} is not snake case"
            );
        }
        assert_eq!(DecisionKind::ArmIdle.to_string(), "arm_idle");
    }
}
