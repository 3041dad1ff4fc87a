//! Expiry: the queue in service stops being served, for one of five reasons.
//!
//! At expiry a slow queue (seeky, or one that used less than half the largest budget in more
//! than 20 ms) is charged for the time it held the device instead of its service
//! ([`Bfq::bfqq_charge_time`]), so a queue cannot hog the device with slow I/O; its budget is
//! recomputed ([`Bfq::recalc_budget`]); an empty queue leaves the busy set (onto the idle tree
//! while its finish time is ahead) unless it was preempted while idling was needed for its
//! guarantees; a queue with requests is requeued with a new finish time.
//!
//! Kernel: enum bfqq_expiration, bfq_bfqq_expire(), __bfq_bfqq_expire().

use super::{Bfq, QId};
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

/// Why the queue in service expired. Kernel: enum bfqq_expiration (numbered as it logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiration {
    /// The idle timer fired with no request. BFQQE_TOO_IDLE.
    TooIdle = 0,
    /// The budget took too long to be used. BFQQE_BUDGET_TIMEOUT.
    BudgetTimeout = 1,
    /// The next request does not fit in the budget left. BFQQE_BUDGET_EXHAUSTED.
    BudgetExhausted = 2,
    /// The queue has no more requests and idling is not worth it. BFQQE_NO_MORE_REQUESTS.
    NoMoreRequests = 3,
    /// Another queue preempted it. BFQQE_PREEMPTED.
    Preempted = 4,
}

impl Expiration {
    /// The decision log's name for the reason.
    pub fn as_str(self) -> &'static str {
        match self {
            Expiration::TooIdle => "too_idle",
            Expiration::BudgetTimeout => "budget_timeout",
            Expiration::BudgetExhausted => "budget_exhausted",
            Expiration::NoMoreRequests => "no_more_requests",
            Expiration::Preempted => "preempted",
        }
    }
}

impl Bfq {
    /// Kernel: bfq_bfqq_expire().
    pub(crate) fn bfqq_expire(
        &mut self,
        q: QId,
        compensate: bool,
        reason: Expiration,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let (slow, delta) = self.bfqq_is_slow(q, compensate, now, trace);
        let timed_out_early =
            reason == Expiration::BudgetTimeout && self.budget_left(q) >= self.qe(q).budget / 3;
        if self.q(q).wr_coeff == 1 && (slow || timed_out_early) {
            self.bfqq_charge_time(q, delta, now, trace);
        }
        let j = Bfq::jif(now);
        if self.tun.low_latency && self.q(q).wr_coeff == 1 {
            self.qm(q).last_wr_start_finish = j;
        }
        if self.tun.low_latency && self.tun.wr_max_softrt_rate > 0 && self.q(q).sort_list.is_empty()
        {
            if self.q(q).dispatched == 0 {
                let next = self.softrt_next_start(q, now);
                self.qm(q).soft_rt_next_start = next;
            } else {
                self.qm(q).softrt_update = true;
            }
        }
        let bfqq = self.q(q);
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!(
                "expire ({}, slow {}, num_disp {}, short_ttime {})",
                reason as i32,
                i32::from(slow),
                bfqq.dispatched,
                i32::from(bfqq.has_short_ttime)
            ),
        );
        self.decide(
            trace,
            now,
            DecisionKind::SliceExpired,
            Some(q),
            reason.as_str(),
            Some(self.qe(q).service as u64),
        );
        self.qm(q).served_ns += now.saturating_sub(self.last_budget_start);
        self.rqs_injected = false;
        self.wait_dispatch = false;
        self.waited_rq = None;
        self.recalc_budget(q, reason, now, trace);
        if self.bfqq_expire_inner(q, reason, now, trace) {
            return;
        }
        let e = self.q(q).entity;
        if !self.q(q).busy
            && reason != Expiration::BudgetTimeout
            && reason != Expiration::BudgetExhausted
        {
            self.qm(q).non_blocking_wait_rq = true;
        } else {
            self.em(e).service = 0;
        }
        let mut at = self.e(e).parent;
        while let Some(p) = at {
            self.em(p).service = 0;
            at = self.e(p).parent;
        }
    }

    /// Kernel: __bfq_bfqq_expire(): out of the busy set or requeued, then no queue in
    /// service. True if the queue was freed.
    pub(crate) fn bfqq_expire_inner(
        &mut self,
        q: QId,
        reason: Expiration,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        if self.q(q).coop && self.bfqq_seeky(q) {
            self.qm(q).split_coop = true;
        }
        let keep_for_guarantees =
            reason == Expiration::Preempted && self.idling_needed_for_service_guarantees(q);
        if self.q(q).sort_list.is_empty() && !keep_for_guarantees {
            if self.q(q).dispatched == 0 {
                self.qm(q).budget_timeout = Bfq::jif(now);
            }
            self.del_bfqq_busy(q, true, now, trace);
        } else {
            self.requeue_bfqq(q, true, now, trace);
            if !self.nonrot_with_queueing && !self.q(q).sort_list.is_empty() {
                self.pos_tree_add_move(q, now, trace);
            }
        }
        self.reset_in_service(now, trace)
    }
}
