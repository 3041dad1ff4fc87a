//! Where schedulers and drivers report what happened and why.
//!
//! A scheduler receives a `&mut dyn Trace` with every call and pushes its kernel-style
//! messages and structured decisions into it. Every method defaults to a no-op and
//! [`Trace::enabled`] lets a scheduler skip formatting entirely, so a run without tracing
//! pays one predictable branch per message site.

use crate::request::{CgroupId, Request, Time};

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

/// A structured scheduler decision, written as one JSON line by `--decisions`.
///
/// `kind` names the mechanism (`select_queue`, `arm_idle`, `preempt`, ...), `queue` and `group`
/// say whom it concerns, `reason` says why in the kernel's terms, and `value_ns` carries the
/// one number that matters (idle length, slice length, charge...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision<'a> {
    pub kind: &'static str,
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

    /// A free-form scheduler message: blktrace's `m N` note.
    fn message(&mut self, _now: Time, _subject: MessageSubject, _text: &str) {}

    /// A structured decision.
    fn decision(&mut self, _now: Time, _decision: &Decision<'_>) {}
}

/// The sink that discards everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Trace for NoTrace {}
