//! A scheduler on a machine that has been up for a while, with groups created when the
//! kernel creates them.
//!
//! Drivers count their time from the start of a run, but the kernel's scheduler was created
//! at boot and reads a clock that has been running since: several of CFQ's rules behave
//! differently near boot, where its u64 arithmetic wraps (`now - 1 s` service-tree keys,
//! `now - 1` "already expired" workloads, `last_delayed_sync` set 1 s before boot).
//! [`Uptime`] wraps a scheduler and hands it `origin + now`: the run starts `origin` ns after
//! the scheduler was created at boot. [`DEFAULT_UPTIME_NS`] (1000 s, as the kernel-side
//! conformance harness uses) is a machine up for a while; an origin of 0 starts the run at
//! boot, which stays correct (the scheduler then does what the kernel does at boot).
//! Times the scheduler reports back (idle deadlines, trace lines) are translated to the
//! driver's clock, so outputs do not change with the origin.
//!
//! It also creates a cgroup's group when the kernel does: at the cgroup's first bio
//! (blkg_lookup_create() -> cfq_pd_alloc() -> cfq_init_cfqg_base(), which starts the
//! group's think-time clock then), not when the driver learns of the cgroup. Drivers
//! declare every cgroup up front with [`Elevator::add_cgroup`]; the root group exists since
//! boot and takes its weights at once, the others (and their ancestors, parents first) are
//! created at the first request that names them.

use crate::elevator::{CgroupSpec, Dispatch, Elevator, ServiceSummary};
use crate::request::{CgroupId, IoContextId, Request, RequestId, Time, NSEC_PER_SEC};
use crate::trace::{Decision, MessageSubject, RqEvent, Trace};
use crate::tunable::{TunableError, TunableValue};

/// 1000 s: where a run starts by default, measured from the scheduler's creation at boot.
pub const DEFAULT_UPTIME_NS: Time = 1000 * NSEC_PER_SEC;

/// A scheduler seen through a clock that started `origin` ns before the driver's. `E` is
/// the scheduler's own type where its constructor knows it (noop, CFQ: the driver's one
/// virtual call reaches the scheduler's code directly, issue 34), else `dyn Elevator`.
pub struct Uptime<E: Elevator + ?Sized = dyn Elevator> {
    inner: Box<E>,
    origin: Time,
    /// Declared cgroups whose group does not exist yet, parents before children.
    declared: Vec<CgroupSpec>,
}

impl<E: Elevator + ?Sized> Uptime<E> {
    /// Wraps `inner`, which must be fresh (created "at boot").
    pub fn new(inner: Box<E>, origin: Time) -> Uptime<E> {
        Uptime {
            inner,
            origin,
            declared: Vec::new(),
        }
    }

    /// The scheduler's time at driver time `now`.
    pub fn abs(&self, now: Time) -> Time {
        self.origin + now
    }

    /// Creates `cgroup`'s group (ancestors first) if this is its first request.
    #[inline]
    fn reach(&mut self, cgroup: CgroupId, now: Time) {
        // Once every declared group exists (soon in any run), there is nothing to look for.
        if !self.declared.is_empty() {
            self.reach_declared(cgroup, now);
        }
    }

    fn reach_declared(&mut self, cgroup: CgroupId, now: Time) {
        let Some(i) = self.declared.iter().position(|s| s.id == cgroup) else {
            return;
        };
        let spec = self.declared.remove(i);
        self.reach(spec.parent, now);
        let at = self.abs(now);
        self.inner.add_cgroup(spec, at);
    }
}

/// The driver's trace, fed the scheduler's lines with times moved back to the driver's clock.
struct Shifted<'a> {
    inner: &'a mut dyn Trace,
    origin: Time,
}

impl Trace for Shifted<'_> {
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    fn request(&mut self, now: Time, event: RqEvent, rq: &Request) {
        self.inner.request(now - self.origin, event, rq);
    }

    fn message(&mut self, now: Time, subject: MessageSubject, text: &str) {
        self.inner.message(now - self.origin, subject, text);
    }

    fn decision(&mut self, now: Time, decision: &Decision<'_>) {
        self.inner.decision(now - self.origin, decision);
    }
}

impl<E: Elevator + ?Sized> Uptime<E> {
    fn shifted<'a>(&self, trace: &'a mut dyn Trace) -> Shifted<'a> {
        Shifted {
            inner: trace,
            origin: self.origin,
        }
    }
}

impl<E: Elevator + ?Sized> Elevator for Uptime<E> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn add_cgroup(&mut self, cgroup: CgroupSpec, now: Time) {
        if cgroup.id == CgroupId::ROOT {
            let at = self.abs(now);
            self.inner.add_cgroup(cgroup, at);
        } else if let Some(known) = self.declared.iter_mut().find(|s| s.id == cgroup.id) {
            *known = cgroup;
        } else {
            self.declared.push(cgroup);
        }
    }

    fn exit_ioc(&mut self, ioc: IoContextId, now: Time, trace: &mut dyn Trace) {
        let at = self.abs(now);
        let mut t = self.shifted(trace);
        self.inner.exit_ioc(ioc, at, &mut t);
    }

    fn insert(&mut self, rq: Request, now: Time, trace: &mut dyn Trace) {
        self.reach(rq.cgroup, now);
        let at = self.abs(now);
        let mut t = self.shifted(trace);
        self.inner.insert(rq, at, &mut t);
    }

    fn try_back_merge(&mut self, bio: &Request, now: Time) -> Option<RequestId> {
        self.reach(bio.cgroup, now);
        let at = self.abs(now);
        self.inner.try_back_merge(bio, at)
    }

    fn try_front_merge(&mut self, bio: &Request, now: Time) -> Option<RequestId> {
        self.reach(bio.cgroup, now);
        let at = self.abs(now);
        self.inner.try_front_merge(bio, at)
    }

    fn try_merge(&mut self, bio: &Request, now: Time) -> Option<(RequestId, RqEvent)> {
        self.reach(bio.cgroup, now);
        let at = self.abs(now);
        self.inner.try_merge(bio, at)
    }

    fn may_queue(&mut self, bio: &Request) -> bool {
        self.inner.may_queue(bio)
    }

    fn dispatch(&mut self, now: Time, trace: &mut dyn Trace) -> Dispatch {
        let at = self.abs(now);
        let mut t = self.shifted(trace);
        // Adjusted in place: the answer (a request, mostly) is not copied into a new one.
        let mut answer = self.inner.dispatch(at, &mut t);
        if let Dispatch::IdleUntil(until) = &mut answer {
            *until -= self.origin;
        }
        answer
    }

    fn completion_keeps_dispatch_settled(&self) -> bool {
        self.inner.completion_keeps_dispatch_settled()
    }

    fn nothing_queued_answers_empty(&self) -> bool {
        self.inner.nothing_queued_answers_empty()
    }

    /// In the driver's clock; a bound before the origin (already past) settles nothing.
    fn dispatch_settled_until(&self, traced: bool) -> Option<Time> {
        self.inner
            .dispatch_settled_until(traced)?
            .checked_sub(self.origin)
    }

    fn completed(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) {
        let at = self.abs(now);
        let mut t = self.shifted(trace);
        self.inner.completed(rq, at, &mut t);
    }

    fn timer(&mut self, now: Time, trace: &mut dyn Trace) {
        let at = self.abs(now);
        let mut t = self.shifted(trace);
        self.inner.timer(at, &mut t);
    }

    fn drain(&mut self, now: Time, trace: &mut dyn Trace) -> Vec<Request> {
        let at = self.abs(now);
        let mut t = self.shifted(trace);
        self.inner.drain(at, &mut t)
    }

    fn queued(&self) -> usize {
        self.inner.queued()
    }

    fn tunables(&self) -> Vec<TunableValue> {
        self.inner.tunables()
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        self.inner.set_tunable(name, value)
    }

    fn summary(&self) -> Vec<ServiceSummary> {
        self.inner.summary()
    }

    fn check_invariants(&self) {
        self.inner.check_invariants();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elevator::DeviceInfo;
    use crate::request::NSEC_PER_MSEC;
    use crate::{new_elevator, testing, NoTrace};

    fn cfq(origin: Time) -> Uptime {
        let device = DeviceInfo {
            rotational: true,
            queue_depth: 1,
        };
        Uptime::new(new_elevator("cfq", device).unwrap(), origin)
    }

    /// The kernel at boot and after: while A idles, C's close request preempts it and C's
    /// queue is put 1 s ahead of the tree's first key (cfq_preempt_queue() ->
    /// cfq_service_tree_add(add_front)). Up for a while C is served next; at boot that key
    /// wraps below zero, sorts last in the kernel's unsigned tree, and B goes first.
    #[test]
    fn boot_and_uptime_order_a_preempting_queue_as_the_kernel() {
        let ms = NSEC_PER_MSEC;
        let next_after_preemption = |origin| {
            let mut e = cfq(origin);
            let read = |id, pid, sector| testing::request(id, crate::Op::Read, sector, 8, pid);
            let a = read(1, 1, 1000);
            e.insert(a, 0, &mut NoTrace);
            assert!(matches!(e.dispatch(0, &mut NoTrace), Dispatch::Request(_)));
            e.completed(&a, 2 * ms, &mut NoTrace);
            e.insert(read(2, 2, 900_000), 3 * ms, &mut NoTrace);
            e.insert(read(3, 3, 1108), 3 * ms, &mut NoTrace);
            match e.dispatch(3 * ms, &mut NoTrace) {
                Dispatch::Request(rq) => rq.id.0,
                other => panic!("expected a request, got {other:?}"),
            }
        };
        assert_eq!(next_after_preemption(DEFAULT_UPTIME_NS), 3);
        assert_eq!(next_after_preemption(0), 2);
    }

    /// Declared cgroups become groups at their first request, ancestors first, at that
    /// request's time (the kernel's blkg creation at the first bio); the root at once.
    #[test]
    fn groups_are_created_at_the_first_request() {
        let spec = |id, parent| CgroupSpec {
            id: CgroupId(id),
            parent: CgroupId(parent),
            weight: 500,
            leaf_weight: 500,
        };
        type Log = std::sync::Arc<std::sync::Mutex<Vec<(u32, Time)>>>;
        /// Records the cgroups announced to it, with their (scheduler) times.
        struct Groups(Log);
        impl Elevator for Groups {
            fn name(&self) -> &'static str {
                "groups"
            }
            fn add_cgroup(&mut self, cgroup: CgroupSpec, now: Time) {
                self.0.lock().unwrap().push((cgroup.id.0, now));
            }
            fn insert(&mut self, _rq: Request, _now: Time, _trace: &mut dyn Trace) {}
            fn dispatch(&mut self, _now: Time, _trace: &mut dyn Trace) -> Dispatch {
                Dispatch::Empty
            }
            fn completed(&mut self, _rq: &Request, _now: Time, _trace: &mut dyn Trace) {}
            fn queued(&self) -> usize {
                0
            }
            fn tunables(&self) -> Vec<TunableValue> {
                Vec::new()
            }
            fn set_tunable(&mut self, _name: &str, _value: &str) -> Result<(), TunableError> {
                Ok(())
            }
        }
        let probe = Log::default();
        let mut e = Uptime::new(Box::new(Groups(probe.clone())), 1000);
        for (id, parent) in [(0, 0), (1, 0), (2, 1), (3, 0)] {
            e.add_cgroup(spec(id, parent), 0);
        }
        assert_eq!(*probe.lock().unwrap(), vec![(0, 1000)]);
        let mut rq = testing::read(1, 0, 8);
        rq.cgroup = CgroupId(2);
        e.insert(rq, 50, &mut NoTrace);
        e.insert(rq, 60, &mut NoTrace);
        assert_eq!(
            *probe.lock().unwrap(),
            vec![(0, 1000), (1, 1050), (2, 1050)]
        );
    }

    /// Idle deadlines come back on the driver's clock.
    #[test]
    fn idle_deadline_is_on_the_driver_clock() {
        let mut e = cfq(DEFAULT_UPTIME_NS);
        let rq = testing::read(1, 1000, 8);
        e.insert(rq, 0, &mut NoTrace);
        assert!(matches!(e.dispatch(0, &mut NoTrace), Dispatch::Request(_)));
        e.completed(&rq, NSEC_PER_MSEC, &mut NoTrace);
        assert_eq!(
            e.dispatch(NSEC_PER_MSEC, &mut NoTrace),
            Dispatch::IdleUntil(9 * NSEC_PER_MSEC)
        );
    }
}
