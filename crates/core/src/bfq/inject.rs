//! Injection: while the queue in service is idled for, other queues' requests may be sent to
//! the device, as long as they do not delay the idled-for queue's own service.
//!
//! Each sync queue keeps an `inject_limit`: how many requests may be in the device while it
//! waits. The limit adapts by measurement: BFQ notes how long the queue's next request takes
//! from arrival to completion with nothing injected (`last_serv_time_ns`) and, when requests
//! were injected, compares that time (plus half) with the new one, raising the limit if
//! service did not suffer and lowering it if it did. A queue starts at 0 (or 1 if it has no
//! short think time); the limit is reset every second. When the queue in service is waited
//! for and its limit is 0 but its service time is unknown, one request may still be
//! injected once the idle slice has lasted `slice_idle`, to take the measurement.
//!
//! Kernel: bfq_choose_bfqq_for_injection(), bfq_update_inject_limit(),
//! bfq_reset_inject_limit(), and the injection half of bfq_add_request().

use super::{time_after_eq, Bfq, QId};
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

impl Bfq {
    /// Kernel: bfq_reset_inject_limit().
    pub(crate) fn reset_inject_limit(&mut self, q: QId, now: Time) {
        self.waited_rq = None;
        let j = Bfq::jif(now);
        let bfqq = self.qm(q);
        bfqq.last_serv_time_ns = 0;
        bfqq.inject_limit = if bfqq.has_short_ttime { 0 } else { 1 };
        bfqq.decrease_time_jif = j;
    }

    /// Kernel: bfq_choose_bfqq_for_injection(): the first active queue (most recently
    /// activated first) with a request that fits its budget.
    pub(crate) fn choose_bfqq_for_injection(
        &mut self,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<QId> {
        let in_serv = self
            .in_service_queue
            .expect("injection needs a queue in service");
        let s = self.q(in_serv);
        let mut limit = s.inject_limit as i32;
        let in_serv_always_inject = s.wr_coeff == 1 || !s.has_short_ttime;
        if limit == 0
            && s.last_serv_time_ns == 0
            && s.wait_request
            // The kernel adds slice_idle's ns to a jiffies stamp here; kept as it is.
            && time_after_eq(
                Bfq::jif(now),
                self.last_idling_start_jiffies.wrapping_add(u64::from(self.tun.slice_idle)),
            )
        {
            limit = 1;
        }
        if self.tot_rq_in_driver >= limit {
            return None;
        }
        let candidates: Vec<QId> = self.active_list.iter().collect();
        for q in candidates {
            let b = self.q(q);
            let Some(next) = b.next_rq else { continue };
            if !(in_serv_always_inject || b.wr_coeff > 1)
                || self.serv_to_charge(next, q) > self.budget_left(q)
            {
                continue;
            }
            if self.nonrot()
                && self.h(next).rq.nr_sectors >= super::idle::BFQQ_SECT_THR_NONROT
                && self.tot_rq_in_driver >= 1
            {
                continue;
            }
            self.rqs_injected = true;
            self.decide(
                trace,
                now,
                DecisionKind::Inject,
                Some(q),
                "idling_for_other",
                Some(limit as u64),
            );
            return Some(q);
        }
        None
    }

    /// Kernel: bfq_update_inject_limit(): at the completion of the request the queue was
    /// waited for (`waited_rq`), adapt its limit to the service time observed.
    pub(crate) fn update_inject_limit(&mut self, q: QId, now: Time) {
        let tot_time_ns = now.wrapping_sub(self.last_empty_occupied_ns);
        let old_limit = self.q(q).inject_limit;
        let j = Bfq::jif(now);
        let (injected, in_driver, max_in_driver) = (
            self.rqs_injected,
            self.tot_rq_in_driver,
            self.max_rq_in_driver,
        );
        let bfqq = self.qm(q);
        if bfqq.last_serv_time_ns > 0 && injected {
            let threshold = (bfqq.last_serv_time_ns * 3) >> 1;
            if tot_time_ns >= threshold && old_limit > 0 {
                bfqq.inject_limit -= 1;
                bfqq.decrease_time_jif = j;
            } else if tot_time_ns < threshold && old_limit as i32 <= max_in_driver {
                bfqq.inject_limit += 1;
            }
        }
        if (bfqq.last_serv_time_ns == 0 && in_driver == 1) || tot_time_ns < bfqq.last_serv_time_ns {
            if bfqq.last_serv_time_ns == 0 {
                bfqq.inject_limit = old_limit.max(1);
            }
            bfqq.last_serv_time_ns = tot_time_ns;
        } else if !injected && in_driver == 1 {
            bfqq.last_serv_time_ns = tot_time_ns;
        }
        self.waited_rq = None;
        self.rqs_injected = false;
    }

    /// The injection half of bfq_add_request(): a sync arrival with no other request of its
    /// process in flight may reset the limit, and, for the queue in service with the device
    /// empty (or busy only with injected requests), starts a service-time measurement.
    pub(crate) fn inject_on_arrival(&mut self, q: QId, now: Time) {
        let j = Bfq::jif(now);
        if time_after_eq(
            j,
            self.q(q)
                .decrease_time_jif
                .wrapping_add(super::msecs_to_jiffies(1000)),
        ) {
            self.reset_inject_limit(q, now);
        }
        let b = self.q(q);
        if self.in_service_queue == Some(q)
            && (self.tot_rq_in_driver == 0
                || (b.last_serv_time_ns > 0 && self.rqs_injected && self.tot_rq_in_driver > 0))
            && time_after_eq(
                j,
                b.decrease_time_jif
                    .wrapping_add(super::msecs_to_jiffies(10)),
            )
        {
            self.last_empty_occupied_ns = now;
            self.wait_dispatch = true;
            if self.tot_rq_in_driver == 0 {
                self.rqs_injected = false;
            }
        }
    }
}
