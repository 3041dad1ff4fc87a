//! Budgets: how much service (sectors) a queue may receive per turn, and their feedback.
//!
//! A queue activated gets `max(max_budget, charge of its next request)`; when it expires its
//! `max_budget` follows the reason ([`Bfq::recalc_budget`]): a sync queue that used its whole
//! budget gets four times more, one that timed out twice more, one that ran out of requests
//! what it used, and one caught idle shrinks unless it still has requests in the device. A
//! turn also has a time limit, `timeout_sync` (scaled by the weight-raising factor), after
//! which a queue that is not waiting for a request expires. Async requests are charged three
//! times their size (unless the scenario is asymmetric), so writes do not starve reads.
//!
//! Kernel: bfq_bfqq_budget_left(), bfq_max_budget(), bfq_min_budget(),
//! bfq_bfqq_update_budg_for_activation(), bfq_serv_to_charge(), bfq_updated_next_req(),
//! __bfq_bfqq_recalc_budget(), bfq_set_budget_timeout(), bfq_bfqq_budget_timeout(),
//! bfq_may_expire_for_budg_timeout(), bfq_bfqq_is_slow(), bfq_calc_max_budget().

use super::{time_after_eq, Bfq, Expiration, QId, Slot, BFQ_MIN_TT};
use crate::deadline::tunables::jiffies_to_msecs;
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

/// Budgets assigned before the peak-rate estimate sets the largest budget. Kernel:
/// bfq_stats_min_budgets.
pub(crate) const BFQ_STATS_MIN_BUDGETS: i32 = 194;
/// 16384 sectors (8 MiB). Kernel: bfq_default_max_budget.
pub(crate) const BFQ_DEFAULT_MAX_BUDGET: i64 = 16 * 1024;
/// Kernel: bfq_async_charge_factor.
pub(crate) const BFQ_ASYNC_CHARGE_FACTOR: i64 = 3;
/// HZ/8 = 31 jiffies (124 ms). Kernel: bfq_timeout.
pub(crate) const BFQ_TIMEOUT: u64 = 250 / 8;
/// Kernel: BFQ_RATE_SHIFT.
pub(crate) const BFQ_RATE_SHIFT: u32 = 16;

impl Bfq {
    /// Kernel: bfq_bfqq_budget_left().
    pub(crate) fn budget_left(&self, q: QId) -> i64 {
        let e = self.qe(q);
        e.budget - e.service
    }

    /// Kernel: bfq_max_budget().
    pub(crate) fn max_budget(&self) -> i64 {
        if self.budgets_assigned < BFQ_STATS_MIN_BUDGETS {
            BFQ_DEFAULT_MAX_BUDGET
        } else {
            self.bfq_max_budget
        }
    }

    /// Kernel: bfq_min_budget().
    pub(crate) fn min_budget(&self) -> i64 {
        if self.budgets_assigned < BFQ_STATS_MIN_BUDGETS {
            BFQ_DEFAULT_MAX_BUDGET / 32
        } else {
            self.bfq_max_budget / 32
        }
    }

    /// Kernel: bfq_serv_to_charge(): sectors, times three for async requests of a
    /// non-raised queue in a symmetric scenario.
    #[inline]
    pub(crate) fn serv_to_charge(&self, slot: Slot, q: QId) -> i64 {
        let sectors = i64::from(self.h(slot).rq.nr_sectors);
        let bfqq = self.q(q);
        if bfqq.sync || bfqq.wr_coeff > 1 || self.asymmetric_scenario(Some(q)) {
            sectors
        } else {
            sectors * BFQ_ASYNC_CHARGE_FACTOR
        }
    }

    /// Kernel: bfq_updated_next_req(): a queue not in service whose next request changed
    /// gets a budget big enough for it, and is repositioned. Mostly called for the queue in
    /// service (its next request changes at each dispatch), which returns at once here.
    #[inline(always)]
    pub(crate) fn updated_next_req(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        if self.in_service_queue != Some(q) {
            self.updated_next_req_off_service(q, now, trace);
        }
    }

    /// bfq_updated_next_req() for a queue not in service.
    fn updated_next_req_off_service(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let Some(next_rq) = self.q(q).next_rq else {
            return;
        };
        let new_budget = self
            .q(q)
            .max_budget
            .max(self.serv_to_charge(next_rq, q))
            .max(self.qe(q).service);
        if self.qe(q).budget != new_budget {
            self.qem(q).budget = new_budget;
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("updated next rq: new budget {new_budget}"),
            );
            self.requeue_bfqq(q, false, now, trace);
        }
    }

    /// Kernel: bfq_bfqq_update_budg_for_activation(): true when the queue comes back in
    /// time, after a turn ended only because it had nothing queued, with budget left: it
    /// keeps that budget and may preempt.
    pub(crate) fn update_budg_for_activation(&mut self, q: QId, arrived_in_time: bool) -> bool {
        if self.q(q).non_blocking_wait_rq && arrived_in_time && self.budget_left(q) > 0 {
            let budget = self.budget_left(q).min(self.q(q).max_budget);
            let e = self.qem(q);
            e.budget = budget;
            e.service = 0;
            return true;
        }
        let next = self.q(q).next_rq.expect("activated queue has a request");
        let budget = self.q(q).max_budget.max(self.serv_to_charge(next, q));
        let e = self.qem(q);
        e.service = 0;
        e.budget = budget;
        self.qm(q).non_blocking_wait_rq = false;
        false
    }

    /// Kernel: __bfq_bfqq_recalc_budget(): the budget feedback at expiry.
    pub(crate) fn recalc_budget(
        &mut self,
        q: QId,
        reason: Expiration,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let min_budget = self.min_budget();
        let mut budget = if self.q(q).wr_coeff == 1 {
            self.q(q).max_budget
        } else {
            2 * min_budget
        };
        let (b, left) = (self.qe(q).budget, self.budget_left(q));
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("recalc_budg: last budg {b}, budg left {left}"),
        );
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("recalc_budg: last max_budg {budget}, min budg {min_budget}"),
        );
        let sync = self.q(q).sync;
        let seeky = self.in_service_queue.is_some_and(|s| self.bfqq_seeky(s));
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!(
                "recalc_budg: sync {}, seeky {}",
                i32::from(sync),
                i32::from(seeky)
            ),
        );
        if sync && self.q(q).wr_coeff == 1 {
            budget = match reason {
                Expiration::TooIdle if self.q(q).dispatched > 0 => {
                    (budget * 2).min(self.bfq_max_budget)
                }
                Expiration::TooIdle if budget > 5 * min_budget => budget - 4 * min_budget,
                Expiration::TooIdle => min_budget,
                Expiration::BudgetTimeout => (budget * 2).min(self.bfq_max_budget),
                Expiration::BudgetExhausted => (budget * 4).min(self.bfq_max_budget),
                Expiration::NoMoreRequests => self.qe(q).service.max(min_budget),
                Expiration::Preempted => return,
            };
        } else if !sync {
            budget = self.bfq_max_budget;
        }
        self.qm(q).max_budget = budget;
        if self.budgets_assigned >= BFQ_STATS_MIN_BUDGETS && self.tun.user_max_budget == 0 {
            let capped = self.q(q).max_budget.min(self.bfq_max_budget);
            self.qm(q).max_budget = capped;
        }
        let next_rq = self.q(q).next_rq;
        if let Some(next) = next_rq {
            let b = self.q(q).max_budget.max(self.serv_to_charge(next, q));
            self.qem(q).budget = b;
        }
        let head = next_rq.map_or(0, |s| self.h(s).rq.nr_sectors);
        let nb = self.qe(q).budget;
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("head sect: {head}, new budget {nb}"),
        );
        self.decide(
            trace,
            now,
            DecisionKind::SetSlice,
            Some(q),
            reason.as_str(),
            Some(self.q(q).max_budget as u64),
        );
    }

    /// Kernel: bfq_set_budget_timeout().
    pub(crate) fn set_budget_timeout(&mut self, q: QId, now: Time) {
        let bfqq = self.q(q);
        let timeout_coeff = if bfqq.wr_cur_max_time == self.tun.wr_rt_max_time {
            1
        } else {
            let e = self.qe(q);
            u64::from(e.weight / e.orig_weight)
        };
        self.last_budget_start = now;
        self.qm(q).budget_timeout = Bfq::jif(now).wrapping_add(self.tun.timeout * timeout_coeff);
    }

    /// Kernel: bfq_bfqq_budget_timeout().
    pub(crate) fn budget_timeout(&self, q: QId, now: Time) -> bool {
        time_after_eq(Bfq::jif(now), self.q(q).budget_timeout)
    }

    /// Kernel: bfq_may_expire_for_budg_timeout(): timed out, and not waiting for a request
    /// with less than a third of the budget left.
    #[inline(always)]
    pub(crate) fn may_expire_for_budg_timeout(
        &self,
        q: QId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        let bfqq = self.q(q);
        let left_third = || {
            let e = self.e(bfqq.entity);
            e.budget - e.service >= e.budget / 3
        };
        let timeout = self.budget_timeout(q, now);
        if self.tracing {
            self.log_may_budget_timeout(q, left_third(), timeout, now, trace);
        }
        // Called on every dispatch and completion: the budget is read only once timed out.
        timeout && (!bfqq.wait_request || left_third())
    }

    #[cold]
    #[inline(never)]
    fn log_may_budget_timeout(
        &self,
        q: QId,
        left_third: bool,
        timeout: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!(
                "may_budget_timeout: wait_request {} left {} timeout {}",
                i32::from(self.q(q).wait_request),
                i32::from(left_third),
                i32::from(timeout)
            ),
        );
    }

    /// Kernel: bfq_bfqq_is_slow(): whether the queue used its turn too slowly to be charged
    /// only for its service; also the turn's duration in ms.
    pub(crate) fn bfqq_is_slow(
        &self,
        q: QId,
        compensate: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> (bool, u64) {
        let mut slow = self.bfqq_seeky(q);
        if !self.q(q).sync {
            return (false, 0);
        }
        let end = if compensate {
            self.last_idling_start
        } else {
            now
        };
        let delta_usecs = (end.wrapping_sub(self.last_budget_start) as i64 / 1000) as u32;
        if delta_usecs < 1000 {
            let delta_ms = if self.nonrot() {
                BFQ_MIN_TT / 1_000_000
            } else {
                8
            };
            return (slow, delta_ms);
        }
        let delta_ms = u64::from(delta_usecs / 1000);
        if delta_usecs > 20_000 {
            slow = self.qe(q).service < self.bfq_max_budget / 2;
        }
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("bfq_bfqq_is_slow: slow {}", i32::from(slow)),
        );
        (slow, delta_ms)
    }

    /// Kernel: bfq_calc_max_budget(): what the peak rate serves in `timeout_sync`.
    pub(crate) fn calc_max_budget(&self) -> i64 {
        ((u64::from(self.peak_rate) * 1000 * u64::from(jiffies_to_msecs(self.tun.timeout)))
            >> BFQ_RATE_SHIFT) as i64
    }
}
