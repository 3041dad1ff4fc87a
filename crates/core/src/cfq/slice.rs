//! Time slices: their length, their start, their end, and what happens at expiry.
//!
//! A queue's slice does not start when it is activated but at its first completion, so seek
//! time before the first request finishes is free (though charged to the group). Its length
//! is the priority's base (`prio_slice`), shrunk under `low_latency` so all busy queues of the
//! class fit in the group's share of `target_latency`. At expiry the group is charged, the
//! unused remainder (`slice_resid`) is credited to the queue's next tree position, and an
//! empty queue leaves the round robin.
//! Kernel: cfq_slice_used(), cfq_slice_used_soon(), cfq_scaled_cfqq_slice(),
//! cfq_group_get_avg_queues(), cfq_set_prio_slice(), cfq_cfqq_slice_usage(),
//! __cfq_slice_expired(), cfq_prio_to_maxrq().

use super::{Cfq, GId, QId};
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

/// Averaging divisor of `busy_queues_avg`. Kernel: cfq_hist_divisor.
const CFQ_HIST_DIVISOR: u32 = 4;

/// Why a slice ended, for decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExpireCause {
    SliceUsed,
    WaitBusyArrival,
    Empty,
    Cooperator,
    IdleTimer,
    Preempted,
    AsyncDepth,
    IdleClass,
    Forced,
    ProcessExited,
    Released,
}

impl ExpireCause {
    fn reason(self) -> &'static str {
        match self {
            ExpireCause::SliceUsed => "slice used",
            ExpireCause::WaitBusyArrival => "wait_busy: group backlogged again",
            ExpireCause::Empty => "queue empty, no reason to idle",
            ExpireCause::Cooperator => "close cooperator takes over",
            ExpireCause::IdleTimer => "idle timer fired",
            ExpireCause::Preempted => "preempted",
            ExpireCause::AsyncDepth => "async queue dispatched its maxrq",
            ExpireCause::IdleClass => "idle class: one request per round",
            ExpireCause::Forced => "forced dispatch",
            ExpireCause::ProcessExited => "process exited",
            ExpireCause::Released => "queue released: its last reference went",
        }
    }
}

impl Cfq {
    /// Kernel: cfq_slice_used().
    pub(crate) fn slice_used(&self, q: QId, now: Time) -> bool {
        let cfqq = &self.queues[q];
        !cfqq.slice_new && now >= cfqq.slice_end
    }

    /// Kernel: cfq_slice_used_soon(): will the in-flight requests outlast the slice?
    pub(crate) fn slice_used_soon(&self, q: QId, now: Time) -> bool {
        let cfqq = &self.queues[q];
        cfqq.slice_new || now + self.tun.slice_idle_ns * u64::from(cfqq.dispatched) > cfqq.slice_end
    }

    /// Kernel: cfq_prio_to_maxrq(): async dispatch limit per slice.
    pub(crate) fn prio_to_maxrq(&self, q: QId) -> u64 {
        let base_rq = 2 * self.tun.slice_async_rq;
        base_rq * (8 - u64::from(self.queues[q].ioprio.min(7)))
    }

    /// Kernel: cfq_group_get_avg_queues(): smoothed busy-queue count of class `rt` (1 RT,
    /// 0 BE) in group `g` (side effect: updates the average).
    fn group_get_avg_queues(&mut self, g: GId, rt: usize) -> u32 {
        let cfqg = &mut self.groups[g];
        let busy = cfqg.busy_queues_wl(rt);
        let avg = cfqg.busy_queues_avg[rt];
        let (min_q, max_q) = (avg.min(busy), avg.max(busy));
        let mult = CFQ_HIST_DIVISOR - 1;
        let round = CFQ_HIST_DIVISOR / 2;
        let new = (mult * max_q + min_q + round) / CFQ_HIST_DIVISOR;
        cfqg.busy_queues_avg[rt] = new;
        new
    }

    /// Kernel: cfq_scaled_cfqq_slice().
    #[inline(always)]
    // The queue read once for its group, class and priority (issue 34: at 4096 queues every
    // preemption expires a queue whose slice had not started, and asks this).
    pub(crate) fn scaled_slice(&mut self, q: QId) -> Time {
        let cfqq = &self.queues[q];
        let (g, rt) = (cfqq.group, usize::from(cfqq.class_rt()));
        let mut slice = self.prio_slice(cfqq.sync, cfqq.ioprio);
        // 2.6.32's cfq_set_prio_slice() gave the priority's slice whatever low_latency said.
        if self.tun.low_latency && !self.tun.rules_2632 {
            let iq = u64::from(self.group_get_avg_queues(g, rt));
            let sync_slice = self.tun.slice_ns[1];
            let expect_latency = sync_slice * iq;
            let group_slice = self.group_slice(g);
            if expect_latency > group_slice {
                let base_low_slice = 2 * self.tun.slice_idle_ns;
                let low_slice = (base_low_slice * slice / sync_slice).min(slice);
                slice = (slice * group_slice / expect_latency).max(low_slice);
            }
        }
        slice
    }

    /// Kernel: cfq_set_prio_slice(): the slice starts now (first completion).
    pub(crate) fn set_prio_slice(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let slice = self.scaled_slice(q);
        let cfqq = &mut self.queues[q];
        cfqq.slice_start = now;
        cfqq.slice_end = now + slice;
        cfqq.allocated_slice = slice;
        self.log_q(trace, now, q, format_args!("set_slice={slice}"));
        self.decide(
            trace,
            now,
            DecisionKind::SetSlice,
            Some(q),
            "first completion of the slice",
            Some(slice),
        );
    }

    /// Kernel: cfq_cfqq_slice_usage().
    ///
    /// Choice: as in the kernel, `slice_start == 0` means "not started"; a slice started at
    /// exactly t = 0 (impossible on a real clock) is treated the same way.
    pub(crate) fn slice_usage(&self, q: QId, now: Time) -> Time {
        let cfqq = &self.queues[q];
        if cfqq.slice_start == 0 || cfqq.slice_start == now {
            now.wrapping_sub(cfqq.dispatch_start).max(self.jiffy())
        } else {
            now.wrapping_sub(cfqq.slice_start).min(cfqq.allocated_slice)
        }
    }

    /// slice_expired()'s message and decision, for a listening sink: their arguments are
    /// built here, out of the switch's code (issue 34).
    #[cold]
    #[inline(never)]
    fn slice_expiring(
        &self,
        q: QId,
        timed_out: bool,
        cause: ExpireCause,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        self.log_q(
            trace,
            now,
            q,
            format_args!("slice expired t={}", u8::from(timed_out)),
        );
        self.decide(
            trace,
            now,
            DecisionKind::SliceExpired,
            Some(q),
            cause.reason(),
            None,
        );
    }

    /// Kernel: cfq_slice_expired() / __cfq_slice_expired() on the active queue.
    pub(crate) fn slice_expired(
        &mut self,
        timed_out: bool,
        cause: ExpireCause,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let Some(q) = self.active_queue else {
            return;
        };
        if self.tracing {
            self.slice_expiring(q, timed_out, cause, now, trace);
        }
        if self.queues[q].wait_request {
            self.end_idle(now, false, trace);
        }
        let cfqq = &mut self.queues[q];
        cfqq.wait_request = false;
        cfqq.wait_busy = false;
        if cfqq.coop && cfqq.seeky() {
            cfqq.split_coop = true;
        }
        let g = cfqq.group;
        if timed_out {
            let resid = if cfqq.slice_new {
                self.scaled_slice(q) as i64
            } else {
                cfqq.slice_end.wrapping_sub(now) as i64
            };
            self.queues[q].slice_resid = resid;
            if self.tracing {
                self.log_q(trace, now, q, format_args!("resid={resid}"));
            }
        }
        self.group_served(g, q, now, trace);
        // The kernel's del_from_rr() of an empty busy queue, then resort_rr_list(), which
        // re-keys only a queue still busy: one of the two, chosen once (issue 34).
        let cfqq = &self.queues[q];
        if cfqq.on_rr {
            if cfqq.is_empty() {
                self.del_from_rr(q, now, trace);
            } else {
                self.resort_rr_list(q, now);
            }
        }
        self.active_queue = None;
        self.active_cic = None;
        self.maybe_free(q, now, trace);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elevator::DeviceInfo;
    use crate::request::NSEC_PER_MSEC;

    /// The priority table of §2.2: sync 180..40 ms, async 72..16 ms.
    #[test]
    fn prio_slice_table_per_level() {
        let cfq = Cfq::new(DeviceInfo {
            rotational: true,
            queue_depth: 1,
        });
        let sync: Vec<u64> = (0..8)
            .map(|p| cfq.prio_slice(true, p) / NSEC_PER_MSEC)
            .collect();
        let asyn: Vec<u64> = (0..8)
            .map(|p| cfq.prio_slice(false, p) / NSEC_PER_MSEC)
            .collect();
        assert_eq!(sync, [180, 160, 140, 120, 100, 80, 60, 40]);
        assert_eq!(asyn, [72, 64, 56, 48, 40, 32, 24, 16]);
    }
}
