//! Idling, completion and hw_tag detection.
//!
//! When the active queue runs dry after a sync completion, CFQ may wait `slice_idle` for the
//! same process's next request instead of seeking away: only if the queue has an idle window
//! (or is the last on its SYNC_NOIDLE tree), its think time fits in the remaining slice, and
//! the device is not a queueing SSD. Failing that it may still idle `group_idle` so a group
//! with one dependent-I/O queue keeps its place. The kernel's hrtimer becomes
//! [`crate::Dispatch::IdleUntil`]. Completion also starts the slice clock, extends a slice to
//! keep a lone group busy (`wait_busy`), and samples the device's queue depth (`hw_tag`).
//! Kernel: cfq_should_idle(), cfq_io_thinktime_big(), cfq_arm_slice_timer(),
//! cfq_should_wait_busy(), cfq_idle_slice_timer(), cfq_completed_request(),
//! cfq_update_hw_tag().

use super::queue::InFlight;
use super::slice::ExpireCause;
use super::think_time::{req_noidle, Ttime};
use super::{Cfq, GId, IdleTimer, QId, CFQ_HW_QUEUE_MIN, HW_TAG_SAMPLES, IDLE_WORKLOAD};
use crate::request::{Request, Time};
use crate::trace::{DecisionKind, Trace};

impl Cfq {
    /// Kernel: cfq_io_thinktime_big() for a per-process or per-tree record.
    fn thinktime_big(&self, ttime: &Ttime, group_idle: bool) -> bool {
        if !ttime.valid() {
            return false;
        }
        let slice = if group_idle {
            self.tun.group_idle_ns
        } else {
            self.tun.slice_idle_ns
        };
        ttime.mean() > slice
    }

    /// Kernel: cfq_io_thinktime_big(&cfqg->ttime, true).
    pub(crate) fn thinktime_big_group(&self, g: GId) -> bool {
        self.thinktime_big(&self.groups[g].ttime, true)
    }

    /// The service tree a queue is on (or would be on).
    fn tree_of(&self, q: QId) -> usize {
        let cfqq = &self.queues[q];
        cfqq.service_tree.map(usize::from).unwrap_or_else(|| {
            super::service_tree::tree_index(cfqq.wl_class(), self.tree_wl_type(q))
        })
    }

    /// Kernel: cfq_should_idle(). Its first rule inline: `slice_idle = 0` (every
    /// non-rotational device's default) answers at once, twice a request.
    #[inline]
    pub(crate) fn should_idle(&self, q: QId, now: Time, trace: &mut dyn Trace) -> bool {
        if self.tun.slice_idle_ns == 0 {
            return false;
        }
        self.should_idle_rules(q, now, trace)
    }

    /// cfq_should_idle() past its first rule.
    fn should_idle_rules(&self, q: QId, now: Time, trace: &mut dyn Trace) -> bool {
        let cfqq = &self.queues[q];
        if cfqq.wl_class() == IDLE_WORKLOAD {
            return false;
        }
        // hw_tag -1 (unknown) counts as queueing, as the kernel's plain truth test does.
        let nonrot_ncq = !self.rotational && self.hw_tag != 0;
        if cfqq.idle_window && !nonrot_ncq {
            return true;
        }
        if self.tun.rules_2632 {
            // 2.6.32's cfq_arm_slice_timer() and cfq_select_queue() idle only on a queue with
            // an idle window: there is no last-on-its-tree rule (2.6.33).
            return false;
        }
        let st = &self.groups[cfqq.group].trees[self.tree_of(q)];
        if st.count == 1 && cfqq.sync && !self.thinktime_big(&st.ttime, false) {
            return true;
        }
        let count = st.count;
        self.log_q(trace, now, q, format_args!("Not idling. st->count:{count}"));
        false
    }

    /// Kernel: cfq_arm_slice_timer(). Returns whether the timer was armed.
    pub(crate) fn arm_slice_timer(&mut self, now: Time, trace: &mut dyn Trace) -> bool {
        let q = self
            .active_queue
            .expect("arming idle without an active queue");
        // 2.6.32 had no group_idle (2.6.37): under rules_2632 it never stands in.
        let group_idle_ns = if self.tun.rules_2632 {
            0
        } else {
            self.tun.group_idle_ns
        };
        if !self.rotational && self.hw_tag != 0 && group_idle_ns == 0 {
            return self.no_idle(
                trace,
                now,
                q,
                "non-rotational NCQ device, group_idle 0",
                None,
            );
        }
        assert!(
            self.queues[q].is_empty(),
            "arming idle for a non-empty queue"
        );
        let mut group_idle = 0;
        if !self.should_idle(q, now, trace) {
            if group_idle_ns > 0 {
                group_idle = group_idle_ns;
            } else {
                return self.no_idle(
                    trace,
                    now,
                    q,
                    "should_idle false (seeky or think time), group_idle 0",
                    None,
                );
            }
        }
        if self.queues[q].dispatched > 0 {
            return self.no_idle(trace, now, q, "requests still in flight", None);
        }
        self.arm_when_drained(q, group_idle, now, trace)
    }

    /// arm_slice_timer() once nothing of `q` is in flight: the process's context decides.
    // Out of line: with queue depth the completion path rarely gets here (issue 34: once in
    // 100,000 completions of the randread workload), and its arguments took cache lines of
    // the completion's hot code.
    #[inline(never)]
    fn arm_when_drained(
        &mut self,
        q: QId,
        group_idle: Time,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        let Some(cic) = self.active_cic.map(|c| &self.cics[c]) else {
            return self.no_idle(trace, now, q, "no active process context", None);
        };
        if cic.exited {
            return self.no_idle(trace, now, q, "process exited", None);
        }
        let mean = cic.ttime.mean();
        if cic.ttime.valid() && self.queues[q].slice_end.wrapping_sub(now) < mean {
            self.log_q(trace, now, q, format_args!("Not idling. think_time:{mean}"));
            return self.no_idle(
                trace,
                now,
                q,
                "think time exceeds remaining slice",
                Some(mean),
            );
        }
        if group_idle > 0 {
            let g = self.queues[q].group;
            let st = &self.groups[g].trees[self.tree_of(q)];
            let tree_slow = self.tun.group_idle_ttime && self.thinktime_big(&st.ttime, true);
            if self.groups[g].nr_cfqq > 1 || tree_slow {
                let why = if tree_slow {
                    "group idle: tree think time exceeds group_idle (e795421e40b3)"
                } else {
                    "group idle: other busy queues in the group"
                };
                return self.no_idle(trace, now, q, why, None);
            }
        }
        self.queues[q].wait_request = true;
        let sl = if group_idle > 0 {
            group_idle
        } else {
            self.queue_idle_ns()
        };
        self.idle_timer = Some(IdleTimer {
            until: self.idle_timer_expiry(now, sl),
            armed_at: now,
            queue: q,
        });
        let gi = u8::from(group_idle > 0);
        self.log_q(
            trace,
            now,
            q,
            format_args!("arm_idle: {sl} group_idle: {gi}"),
        );
        self.decide(
            trace,
            now,
            DecisionKind::ArmIdle,
            Some(q),
            if gi == 1 { "group idle" } else { "queue idle" },
            Some(sl),
        );
        true
    }

    /// Records a decision not to idle for `q`, and why; returns false (no timer armed).
    fn no_idle(
        &self,
        trace: &mut dyn Trace,
        now: Time,
        q: QId,
        why: &'static str,
        value: Option<u64>,
    ) -> bool {
        self.decide(trace, now, DecisionKind::NoIdle, Some(q), why, value);
        false
    }

    /// When an idle timer armed at `now` for `sl` fires: `now + sl` for the hrtimer (4.8+);
    /// with `timer_hz` set, at the tick `sl` jiffies (rounded up, as `msecs_to_jiffies()`
    /// does) after the one current at `now`, as `mod_timer(jiffies + sl)` fired before 4.8.
    /// Seed 002's 4.4 trace shows it: `arm_idle: 2` (8 ms at HZ=250) waits 7.5 ms.
    pub(crate) fn idle_timer_expiry(&self, now: Time, sl: Time) -> Time {
        if self.tun.timer_hz == 0 {
            return now + sl;
        }
        let jiffy = crate::request::NSEC_PER_SEC / self.tun.timer_hz;
        (now / jiffy + sl.div_ceil(jiffy)) * jiffy
    }

    /// Cancels (or, with `by_timer`, retires) the idle timer and accounts the idle time.
    pub(crate) fn end_idle(&mut self, now: Time, by_timer: bool, trace: &mut dyn Trace) {
        let Some(timer) = self.idle_timer.take() else {
            return;
        };
        let _ = trace;
        let idled = now.min(timer.until).saturating_sub(timer.armed_at);
        let g = self.queues[timer.queue].group;
        for stats in [
            &mut self.queues[timer.queue].stats,
            &mut self.groups[g].stats,
        ] {
            stats.idled_ns += idled;
            if by_timer {
                stats.idle_wasted_ns += idled;
            }
        }
    }

    /// Kernel: cfq_should_wait_busy(). Its rules read and change nothing, so the group's
    /// think time (a division) is asked last, only when the rules after it would answer
    /// true: the kernel's answer is false when it is big, else theirs (issue 34: at every
    /// completion of a sole queue, whose slice mostly has time left).
    fn should_wait_busy(&self, q: QId, now: Time) -> bool {
        let cfqq = &self.queues[q];
        if !cfqq.is_empty() {
            return false;
        }
        if self.groups[cfqq.group].nr_cfqq > 1 {
            return false;
        }
        self.slice_nearly_used(q, now) && !self.thinktime_big_group(cfqq.group)
    }

    /// cfq_should_wait_busy() past its group rules: the slice is used, or what is left of
    /// it is shorter than the process's think time or a jiffy.
    fn slice_nearly_used(&self, q: QId, now: Time) -> bool {
        if self.slice_used(q, now) {
            return true;
        }
        let left = self.queues[q].slice_end.wrapping_sub(now);
        if let Some(cic) = self.active_cic.map(|c| &self.cics[c]) {
            if cic.ttime.valid() && left < cic.ttime.mean() {
                return true;
            }
        }
        left <= self.jiffy()
    }

    /// Kernel: cfq_idle_slice_timer().
    pub(crate) fn idle_timer_fired(&mut self, now: Time, trace: &mut dyn Trace) {
        if self.idle_timer.is_none() {
            return;
        }
        self.end_idle(now, true, trace);
        self.log(trace, now, format_args!("idle timer fired"));
        let Some(q) = self.active_queue else {
            self.schedule_dispatch(now, trace);
            return;
        };
        self.decide(
            trace,
            now,
            DecisionKind::IdleEnd,
            Some(q),
            "idle timer fired",
            None,
        );
        if self.queues[q].must_dispatch {
            // A request arrived while idling: let it through.
            self.schedule_dispatch(now, trace);
            return;
        }
        if !self.slice_used(q, now) {
            if self.busy_queues == 0 {
                return;
            }
            if !self.queues[q].is_empty() {
                self.schedule_dispatch(now, trace);
                return;
            }
            // Idling did not succeed: only now is the queue-depth flag reset.
            self.queues[q].deep = false;
        }
        self.slice_expired(false, ExpireCause::IdleTimer, now, trace);
        self.schedule_dispatch(now, trace);
    }

    /// Kernel: cfq_schedule_dispatch(): only the trace line here; the driver dispatches after
    /// every event anyway.
    pub(crate) fn schedule_dispatch(&self, now: Time, trace: &mut dyn Trace) {
        if self.busy_queues > 0 {
            self.log(trace, now, format_args!("schedule dispatch"));
        }
    }

    /// Kernel: cfq_update_hw_tag().
    #[inline]
    fn update_hw_tag(&mut self) {
        if self.rq_in_driver > self.hw_tag_est_depth {
            self.hw_tag_est_depth = self.rq_in_driver;
        }
        if self.hw_tag != 1 {
            self.sample_hw_tag();
        }
    }

    /// update_hw_tag()'s sampling, done until the device is found to queue (`hw_tag` 1,
    /// which then stays): out of the completion's hot code.
    #[cold]
    #[inline(never)]
    fn sample_hw_tag(&mut self) {
        if self.rq_queued <= CFQ_HW_QUEUE_MIN && self.rq_in_driver <= CFQ_HW_QUEUE_MIN {
            return;
        }
        if let Some(a) = self.active_queue {
            let cfqq = &self.queues[a];
            if cfqq.idle_window
                && cfqq.dispatched + cfqq.queued[0] + cfqq.queued[1] < CFQ_HW_QUEUE_MIN
                && self.rq_in_driver < CFQ_HW_QUEUE_MIN
            {
                return;
            }
        }
        let sample = self.hw_tag_samples;
        self.hw_tag_samples += 1;
        if sample < HW_TAG_SAMPLES {
            return;
        }
        self.hw_tag = i32::from(self.hw_tag_est_depth >= CFQ_HW_QUEUE_MIN);
    }

    /// Kernel: cfq_completed_request().
    pub(crate) fn completed_request(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) {
        let Some(InFlight {
            queue,
            start_time,
            cic,
            dispatched_at,
            in_driver_at_dispatch,
        }) = self.in_flight.remove(rq.id)
        else {
            // Not in flight here (a second completion): ignored rather than corrupting the
            // counters; the driver's own once-only check reports it.
            return;
        };
        let (q, c) = (queue as usize, cic as usize);
        let sync = rq.is_sync();
        self.log_q(
            trace,
            now,
            q,
            format_args!("complete rqnoidle {}", u8::from(req_noidle(rq))),
        );
        // Before the counts below drop: the sampling reads them as the kernel's does.
        self.update_hw_tag();
        assert!(self.rq_in_driver > 0, "rq_in_driver underflow");
        self.rq_in_driver -= 1;
        let st = if sync { self.tree_of(q) } else { 0 };
        // The queue, its group and the context looked up once each (issue 34).
        let cfqq = &mut self.queues[q];
        cfqq.service_time
            .sample(now.saturating_sub(dispatched_at) / u64::from(in_driver_at_dispatch.get()));
        cfqq.dispatched -= 1;
        self.rq_in_flight[usize::from(cfqq.sync)] -= 1;
        let cfqg = &mut self.groups[cfqq.group];
        cfqg.dispatched -= 1;
        if sync {
            self.cics[c].ttime.last_end_request = now;
            cfqg.trees[st].ttime.last_end_request = now;
            if start_time + self.tun.fifo_expire_ns[1] <= now || self.tun.rampup_any_sync {
                self.last_delayed_sync = now;
            }
        }
        cfqg.ttime.last_end_request = now;

        if self.active_queue == Some(q) {
            let empty = self.queues[q].is_empty();
            if self.queues[q].slice_new {
                self.set_prio_slice(q, now, trace);
                self.queues[q].slice_new = false;
            }
            if self.should_wait_busy(q, now) {
                let extend = if self.tun.slice_idle_ns == 0 {
                    self.tun.group_idle_ns
                } else {
                    self.tun.slice_idle_ns
                };
                self.queues[q].slice_end = now + extend;
                self.queues[q].wait_busy = true;
                self.log_q(trace, now, q, format_args!("will busy wait"));
                self.decide(
                    trace,
                    now,
                    DecisionKind::WaitBusy,
                    Some(q),
                    "sole queue of group: keep group backlogged",
                    Some(extend),
                );
            }
            if self.slice_used(q, now) || self.queues[q].class_idle() {
                let cause = if self.queues[q].class_idle() {
                    ExpireCause::IdleClass
                } else {
                    ExpireCause::SliceUsed
                };
                self.slice_expired(true, cause, now, trace);
            } else if sync && empty && self.close_cooperator(q).is_none() {
                self.arm_slice_timer(now, trace);
            }
        }
        if self.rq_in_driver == 0 {
            self.schedule_dispatch(now, trace);
        }
        self.maybe_free(q, now, trace);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{dispatch_id, insert, read, ssd, Rec, UP};
    use super::*;
    use crate::request::{IoContextId, NSEC_PER_MSEC};

    /// cfq_should_wait_busy() in the kernel's order, the group's think time third.
    fn kernel_order(cfq: &Cfq, q: QId, now: Time) -> bool {
        let cfqq = &cfq.queues[q];
        if !cfqq.is_empty() || cfq.groups[cfqq.group].nr_cfqq > 1 {
            return false;
        }
        if cfq.thinktime_big_group(cfqq.group) {
            return false;
        }
        if cfq.slice_used(q, now) {
            return true;
        }
        let left = cfqq.slice_end.wrapping_sub(now);
        if let Some(cic) = cfq.active_cic.map(|c| &cfq.cics[c]) {
            if cic.ttime.valid() && left < cic.ttime.mean() {
                return true;
            }
        }
        left <= cfq.jiffy()
    }

    /// `should_wait_busy`, asking the group's think time last, answers as the kernel's order
    /// over slices used or not, think times big or small, valid or not, and group sizes
    /// (checked: it fails when the group's think time is not asked at all).
    #[test]
    fn should_wait_busy_answers_in_the_kernels_order() {
        let mut cfq = ssd();
        let mut rec = Rec::default();
        insert(&mut cfq, read(1, 100, 0), UP, &mut rec);
        dispatch_id(&mut cfq, UP, &mut rec);
        let q = cfq.cic(IoContextId(100)).sync_q.expect("a sync queue");
        assert_eq!(cfq.active_queue, Some(q));
        let ms = NSEC_PER_MSEC;
        let ttime = |samples: u64, mean: u64| Ttime {
            last_end_request: UP,
            ttime_total: mean * samples,
            ttime_samples: samples,
        };
        let mut seen = [0usize; 2];
        for nr in [1, 2] {
            for group in [
                ttime(0, 0),
                ttime(249, ms),
                ttime(249, 20 * ms),
                ttime(60, 20 * ms),
            ] {
                for cic in [ttime(0, 0), ttime(249, 3 * ms), ttime(84, 30 * ms)] {
                    for (slice_new, slice_end) in [
                        (true, 0),
                        (false, UP),
                        (false, UP + ms / 2),
                        (false, UP + 10 * ms),
                    ] {
                        for active_cic in [None, cfq.active_cic.or(Some(0))] {
                            cfq.groups[0].nr_cfqq = nr;
                            cfq.groups[0].ttime = group;
                            cfq.cics[0].ttime = cic;
                            cfq.queues[q].slice_new = slice_new;
                            cfq.queues[q].slice_end = slice_end;
                            cfq.active_cic = active_cic;
                            let now = UP + ms;
                            let want = kernel_order(&cfq, q, now);
                            assert_eq!(cfq.should_wait_busy(q, now), want);
                            seen[usize::from(want)] += 1;
                        }
                    }
                }
            }
        }
        assert!(seen[0] > 0 && seen[1] > 0, "both answers met: {seen:?}");
    }
}
