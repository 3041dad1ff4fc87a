//! The schedulers the harness drives, behind the elevator operations its block layer calls
//! (the same ones `oracle/driver/driver.c` calls on the kernel's).

use std::fmt::Write as _;

use iosched_core::deadline::Deadline;
use iosched_core::kyber::Kyber;
use iosched_core::{
    CgroupId, Decision, DecisionKind, Elevator, IoContextId, NoTrace, Request, RequestId, Time,
    Trace, TunableError,
};

/// A bio merge: the bio joined `into` (at its front when `front`), and then maybe a request
/// `absorbed` by `absorber`.
pub(super) struct BioMerged {
    pub into: RequestId,
    pub front: bool,
    pub then: Option<(RequestId, RequestId)>,
}

/// Kernel: the `elevator_mq_ops` the oracle's block layer calls.
pub(super) trait OracleSched {
    /// bio_merge().
    fn bio_merge(&mut self, bio: &Request) -> Option<BioMerged>;
    /// limit_depth(): the shallow depth, if any.
    fn limit_depth(&self, bio: &Request) -> Option<u32>;
    /// insert_requests(): the request merges it caused, (absorbed, into).
    fn insert(&mut self, rq: Request, head: bool, now: Time) -> Vec<(RequestId, RequestId)>;
    /// has_work().
    fn has_work(&self) -> bool;
    /// dispatch_request(), its decision lines into `out`.
    fn dispatch(&mut self, now: Time, out: &mut String) -> Option<Request>;
    /// completed_request() and finish_request().
    fn complete(&mut self, rq: &Request, now: Time, out: &mut String);
    /// A pending timer's expiry.
    fn timer_expires(&self) -> Option<Time> {
        None
    }
    /// The timer's function, at its expiry.
    fn run_timer(&mut self, _now: Time, _out: &mut String) {}
    /// The sysfs side: store and show.
    fn elevator(&mut self) -> &mut dyn Elevator;
    /// A tunable's value as the scheduler's show function prints it.
    fn show(&self, value: u64) -> String;

    // The hooks below let a scheduler print its own messages (BFQ's `bfq_log` lines) and
    // see processes and cgroups; by default they fall back on the ones above.

    /// bio_merge(), its messages into `out`.
    fn bio_merge_traced(
        &mut self,
        bio: &Request,
        _now: Time,
        _out: &mut String,
    ) -> Option<BioMerged> {
        self.bio_merge(bio)
    }
    /// Whether the scheduler prints the `M` and `A` lines itself, where the merges happen
    /// among its messages (BFQ); else the harness prints them.
    fn prints_merges(&self) -> bool {
        false
    }
    /// limit_depth(), its messages into `out`.
    fn limit_depth_traced(&mut self, bio: &Request, _now: Time, _out: &mut String) -> Option<u32> {
        self.limit_depth(bio)
    }
    /// insert_requests(), its messages into `out`.
    fn insert_traced(
        &mut self,
        rq: Request,
        head: bool,
        now: Time,
        _out: &mut String,
    ) -> Vec<(RequestId, RequestId)> {
        self.insert(rq, head, now)
    }
    /// The hrtimer arms since the last call: (expiry, generation). The driver pushes an
    /// event for each, which runs the queue when it comes up even if stale, as the C
    /// driver's do.
    fn take_timer_arms(&mut self) -> Vec<(Time, u64)> {
        Vec::new()
    }
    /// An hrtimer event armed with `generation` came up: the timer's function runs if that
    /// arm is still the pending one (hrtimer_start(), then no cancel or re-arm).
    fn hrtimer_event(&mut self, _generation: u64, _now: Time, _out: &mut String) {}
    /// A process's exit: its io context `ioc` exits (exit_icq()).
    fn exit(&mut self, _ioc: IoContextId, _now: Time, _out: &mut String) {}
    /// A tunable's store function at `now`, its messages into `out`.
    fn store(
        &mut self,
        name: &str,
        value: &str,
        _now: Time,
        _out: &mut String,
    ) -> Result<(), TunableError> {
        self.elevator().set_tunable(name, value)
    }
    /// A write of `value` to cgroup `id`'s weight file: the weight it then shows and whether
    /// the write was taken; `None` when the scheduler has no such file.
    fn cgroup_weight(&mut self, _id: CgroupId, _value: &str, _now: Time) -> Option<(u32, bool)> {
        None
    }
}

/// Builds the scheduler named `sched` for a queue of `nr_requests` tags.
pub(super) fn new_sched(
    sched: &str,
    nr_requests: u32,
    max_sectors: u32,
) -> Result<Box<dyn OracleSched>, String> {
    match sched {
        "mq-deadline" | "deadline" => {
            let mut dd = Deadline::new();
            dd.max_sectors = max_sectors;
            dd.depth_updated(nr_requests);
            Ok(Box::new(dd))
        }
        "kyber" => {
            let mut k = Kyber::new();
            k.max_sectors = max_sectors;
            k.depth_updated(nr_requests);
            Ok(Box::new(k))
        }
        // BFQ needs the whole scenario: harness::bfq::new().
        other => Err(format!("no oracle harness for scheduler '{other}'")),
    }
}

impl OracleSched for Deadline {
    fn bio_merge(&mut self, bio: &Request) -> Option<BioMerged> {
        Deadline::bio_merge(self, bio).map(|m| BioMerged {
            into: m.into,
            front: m.front,
            then: m.then.map(|r| (r.absorbed, r.into)),
        })
    }
    fn limit_depth(&self, bio: &Request) -> Option<u32> {
        Deadline::limit_depth(self, bio)
    }
    fn insert(&mut self, rq: Request, head: bool, now: Time) -> Vec<(RequestId, RequestId)> {
        let merges = self.insert_request(rq, head, now);
        merges.into_iter().map(|m| (m.absorbed, m.into)).collect()
    }
    fn has_work(&self) -> bool {
        Deadline::has_work(self)
    }
    fn dispatch(&mut self, now: Time, _out: &mut String) -> Option<Request> {
        self.dispatch_request(now)
    }
    fn complete(&mut self, rq: &Request, now: Time, _out: &mut String) {
        self.completed(rq, now, &mut NoTrace);
    }
    fn elevator(&mut self) -> &mut dyn Elevator {
        self
    }
    fn show(&self, value: u64) -> String {
        // The store functions keep ints: "%d".
        (value as i64 as i32).to_string()
    }
}

/// Kyber's decisions as the oracle's lines (`K T latency|adjust|throttled ...`, `T T AT`
/// for the timer armed, `F T` for it firing): the shim prints the same from the kernel's
/// tracepoints and timer calls.
struct Lines<'a>(&'a mut String);

impl Trace for Lines<'_> {
    fn enabled(&self) -> bool {
        true
    }
    fn decision(&mut self, now: Time, d: &Decision<'_>) {
        let _ = match (d.kind, d.value_ns) {
            (DecisionKind::LatencyPercentile, _) => {
                writeln!(self.0, "K {now} latency {}", d.reason)
            }
            (DecisionKind::DomainDepth, _) => writeln!(self.0, "K {now} adjust {}", d.reason),
            (DecisionKind::Throttled, _) => writeln!(self.0, "K {now} throttled {}", d.reason),
            (DecisionKind::StatsTimer, Some(at)) => writeln!(self.0, "T {now} {at}"),
            (DecisionKind::StatsTimer, None) => writeln!(self.0, "F {now}"),
            _ => Ok(()),
        };
    }
}

impl OracleSched for Kyber {
    fn bio_merge(&mut self, bio: &Request) -> Option<BioMerged> {
        Kyber::bio_merge(self, bio).map(|m| BioMerged {
            into: m.into,
            front: m.front,
            then: None,
        })
    }
    fn limit_depth(&self, bio: &Request) -> Option<u32> {
        Kyber::limit_depth(self, bio)
    }
    fn insert(&mut self, rq: Request, head: bool, now: Time) -> Vec<(RequestId, RequestId)> {
        self.insert_request(rq, head, now);
        Vec::new()
    }
    fn has_work(&self) -> bool {
        Kyber::has_work(self)
    }
    fn dispatch(&mut self, now: Time, out: &mut String) -> Option<Request> {
        self.dispatch_at(now, &mut Lines(out))
    }
    fn complete(&mut self, rq: &Request, now: Time, out: &mut String) {
        self.complete_request(rq, now, &mut Lines(out));
    }
    fn timer_expires(&self) -> Option<Time> {
        Kyber::timer_expires(self)
    }
    fn run_timer(&mut self, now: Time, out: &mut String) {
        Kyber::run_timer(self, now, &mut Lines(out));
    }
    fn elevator(&mut self) -> &mut dyn Elevator {
        self
    }
    fn show(&self, value: u64) -> String {
        // "%llu".
        value.to_string()
    }
}
