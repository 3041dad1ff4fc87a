//! Dispatch and completion: which queue serves, which of its requests goes next, and what a
//! completion decides.
//!
//! The queue in service keeps the device while its next request fits its budget and its
//! budget has not timed out; otherwise it expires and B-WF2Q+ picks the next queue, which
//! gets `timeout_sync` to use its budget. A queue's requests go in `bfq_choose_req()` order
//! from the last dispatched position, except that the FIFO head goes first once per budget
//! if its deadline has passed. When the queue in service has nothing queued but BFQ idles for
//! it, another queue may be served meanwhile: the same process's async queue, its waker, a
//! queue it wakes, or an injected one. At completion BFQ arms the idle timer if the queue in
//! service is empty and worth waiting for, or expires it.
//!
//! Kernel: bfq_dispatch_request(), __bfq_dispatch_request(), bfq_select_queue(),
//! bfq_set_in_service_queue(), __bfq_set_in_service_queue(), bfq_dispatch_rq_from_bfqq(),
//! bfq_dispatch_remove(), bfq_remove_request(), bfq_find_next_rq(), bfq_check_fifo(),
//! bfq_completed_request(), bfq_finish_requeue_request().

use super::{time_after, Bfq, Expiration, QId, Slot};
use crate::request::{Request, Time};
use crate::trace::{DecisionKind, Trace};

impl Bfq {
    /// Kernel: bfq_check_fifo(): once per budget, the FIFO head if its deadline passed.
    fn check_fifo(&mut self, q: QId, last: Slot, now: Time, trace: &mut dyn Trace) -> Option<Slot> {
        if self.q(q).fifo_expire {
            return None;
        }
        self.qm(q).fifo_expire = true;
        let rq = self.q(q).fifo.front()?;
        if rq == last || now < self.h(rq).fifo_time {
            return None;
        }
        if self.tracing {
            let p = self.ptr(1, self.h(rq).rq.id.0);
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("check_fifo: returned {p}")
            );
        }
        Some(rq)
    }

    /// Kernel: bfq_find_next_rq(): the request to serve after `last`.
    fn find_next_rq(
        &mut self,
        q: QId,
        last: Slot,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<Slot> {
        if let Some(rq) = self.check_fifo(q, last, now, trace) {
            return Some(rq);
        }
        let prev = self.rb_prev(last);
        let next = self
            .rb_next(last)
            .or_else(|| self.rb_first(q).filter(|&s| s != last));
        self.choose_req(next, prev, self.h(last).rq.sector)
    }

    /// Kernel: bfq_remove_request(): the request leaves its queue (dispatched, or merged
    /// into another).
    pub(crate) fn remove_request(&mut self, slot: Slot, now: Time, trace: &mut dyn Trace) {
        let q = self.h(slot).bfqq;
        let rq = self.h(slot).rq;
        if self.q(q).next_rq == Some(slot) {
            let next = self.find_next_rq(q, slot, now, trace);
            self.qm(q).next_rq = next;
            self.updated_next_req(q, now, trace);
        }
        self.fifo_remove(q, slot);
        self.qm(q).queued[usize::from(rq.is_sync())] -= 1;
        self.queued -= 1;
        assert!(self.h(slot).sorted, "queued request is sorted");
        self.hm(slot).sorted = false;
        self.qm(q).sort_list.remove();
        self.rb_del(q, slot);
        self.hash_del(slot);
        if self.last_merge == Some(slot) {
            self.last_merge = None;
        }
        if self.q(q).sort_list.is_empty() {
            self.qm(q).next_rq = None;
            if self.q(q).busy && self.in_service_queue != Some(q) {
                self.del_bfqq_busy(q, false, now, trace);
                let e = self.qem(q);
                e.budget = 0;
                e.service = 0;
            }
            self.pos_tree_del(q);
        } else if !self.nonrot_with_queueing {
            self.pos_tree_add_move(q, now, trace);
        }
        if rq.flags.meta {
            self.qm(q).meta_pending -= 1;
        }
    }

    /// Kernel: __bfq_set_in_service_queue() after bfq_get_next_queue().
    fn set_in_service_queue(&mut self, now: Time, trace: &mut dyn Trace) -> Option<QId> {
        let q = self.get_next_queue(now, trace);
        if let Some(q) = q {
            let j = Bfq::jif(now);
            self.qm(q).fifo_expire = false;
            self.budgets_assigned = (self.budgets_assigned * 7 + 256) / 8;
            let b = self.q(q);
            if time_after(j, b.last_wr_start_finish)
                && b.wr_coeff > 1
                && b.wr_cur_max_time == self.tun.wr_rt_max_time
                && time_after(j, b.budget_timeout)
            {
                let b = self.qm(q);
                if time_after(b.budget_timeout, b.last_wr_start_finish) {
                    b.last_wr_start_finish = b
                        .last_wr_start_finish
                        .wrapping_add(j.wrapping_sub(b.budget_timeout));
                } else {
                    b.last_wr_start_finish = j;
                }
            }
            self.set_budget_timeout(q, now);
            let budget = self.qe(q).budget;
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("set_in_service_queue, cur-budget = {budget}"),
            );
            self.qm(q).slices += 1;
            self.decide(
                trace,
                now,
                DecisionKind::SelectQueue,
                Some(q),
                "budget_assigned",
                Some(budget as u64),
            );
        }
        self.in_service_queue = q;
        self.in_serv_last_pos = 0;
        q
    }

    /// Kernel: bfq_select_queue(): the queue to dispatch from now, if any.
    fn select_queue(&mut self, now: Time, trace: &mut dyn Trace) -> Option<QId> {
        let mut next = self.in_service_queue;
        let mut reason = Expiration::BudgetTimeout;
        if let Some(q) = next {
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("select_queue: already in-service queue"),
            );
            if self.may_expire_for_budg_timeout(q, now, trace) && !self.must_idle(q) {
                self.bfqq_expire(q, false, reason, now, trace);
                next = None;
            }
        }
        // At most one expiry per new queue: bounded by the busy queues.
        for _ in 0..=self.tot_busy_queues() + 1 {
            let q = match next {
                Some(q) => q,
                None => {
                    let Some(q) = self.set_in_service_queue(now, trace) else {
                        return self.keep_queue(None, now, trace);
                    };
                    bfq_log_q!(
                        self,
                        trace,
                        now,
                        q,
                        format_args!("select_queue: checking new queue"),
                    );
                    q
                }
            };
            match self.check_queue(q, now, trace) {
                Ok(chosen) => return self.keep_queue(chosen, now, trace),
                Err(r) => reason = r,
            }
            self.bfqq_expire(q, false, reason, now, trace);
            next = None;
        }
        unreachable!("bfq_select_queue() looped more than the busy queues")
    }

    /// The `keep_queue` label of bfq_select_queue().
    fn keep_queue(&self, q: Option<QId>, now: Time, trace: &mut dyn Trace) -> Option<QId> {
        match q {
            Some(q) => bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("select_queue: returned this queue"),
            ),
            None => bfq_log!(
                self,
                trace,
                now,
                format_args!("select_queue: no queue returned")
            ),
        }
        q
    }

    /// The `check_queue` label of bfq_select_queue(): `Ok(queue to serve, or none while
    /// idling)`, or `Err(reason)` to expire the queue.
    fn check_queue(
        &mut self,
        q: QId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Result<Option<QId>, Expiration> {
        if let Some(next_rq) = self.q(q).next_rq {
            if self.serv_to_charge(next_rq, q) > self.budget_left(q) {
                return Err(Expiration::BudgetExhausted);
            }
            if self.q(q).wait_request {
                self.qm(q).wait_request = false;
                self.cancel_idle_timer(now, trace);
            }
            return Ok(Some(q));
        }
        if self.q(q).wait_request || (self.q(q).dispatched != 0 && self.better_to_idle(q)) {
            return Ok(self.serve_while_idling(q, now, trace));
        }
        Err(Expiration::NoMoreRequests)
    }

    /// Whether `c` is busy with a next request that fits its budget.
    fn can_serve(&self, c: QId) -> bool {
        let b = self.q(c);
        b.busy
            && b.next_rq
                .is_some_and(|n| self.serv_to_charge(n, c) <= self.budget_left(c))
    }

    /// The idling branch of bfq_select_queue(): while waiting for `q`, serve its process's
    /// async queue, its waker, a queue it wakes, or an injected queue.
    fn serve_while_idling(&mut self, q: QId, now: Time, trace: &mut dyn Trace) -> Option<QId> {
        let async_q = self
            .q(q)
            .bic
            .and_then(|b| self.bics.get(b))
            .and_then(|b| b.bfqq[0])
            .filter(|&a| self.q(a).busy && self.q(a).next_rq.is_some());
        if let Some(a) = async_q {
            let next = self.q(a).next_rq.expect("checked");
            if Some(self.h(next).bic) == self.q(q).bic
                && self.serv_to_charge(next, a) <= self.budget_left(a)
            {
                self.decide(trace, now, DecisionKind::Inject, Some(a), "own_async", None);
                return Some(a);
            }
        }
        if let Some(w) = self.q(q).waker_bfqq.filter(|&w| self.can_serve(w)) {
            self.decide(trace, now, DecisionKind::Inject, Some(w), "waker", None);
            return Some(w);
        }
        if let Some(b) = self
            .q(q)
            .woken_list
            .front()
            .copied()
            .filter(|&b| self.can_serve(b))
        {
            self.decide(trace, now, DecisionKind::Inject, Some(b), "woken", None);
            return Some(b);
        }
        let b = self.q(q);
        if !self.idling_boosts_thr_without_issues(q)
            && (b.wr_coeff == 1 || self.wr_busy_queues > 1 || !b.has_short_ttime)
        {
            return self.choose_bfqq_for_injection(now, trace);
        }
        None
    }

    /// Kernel: bfq_dispatch_rq_from_bfqq().
    fn dispatch_rq_from_bfqq(&mut self, q: QId, now: Time, trace: &mut dyn Trace) -> Slot {
        let slot = self
            .q(q)
            .next_rq
            .expect("dispatching queue has a next request");
        let charge = self.serv_to_charge(slot, q);
        self.bfqq_served(q, charge, now, trace);
        if self.in_service_queue == Some(q) && self.wait_dispatch {
            self.wait_dispatch = false;
            self.waited_rq = Some(self.h(slot).rq.id);
        }
        // bfq_dispatch_remove().
        self.qm(q).dispatched += 1;
        self.update_peak_rate(slot, now, trace);
        self.remove_request(slot, now, trace);
        if self.in_service_queue != Some(q) {
            return slot;
        }
        self.update_wr_data(q, now, trace);
        if self.tot_busy_queues() > 1 && self.class_idle(q) {
            self.bfqq_expire(q, false, Expiration::BudgetExhausted, now, trace);
        }
        slot
    }

    /// Kernel: bfq_dispatch_request() / __bfq_dispatch_request().
    pub(crate) fn dispatch_request(&mut self, now: Time, trace: &mut dyn Trace) -> Option<Request> {
        if let Some(slot) = self.dispatch_list.pop_front() {
            let q = self.h(slot).bfqq;
            self.qm(q).dispatched += 1;
            return Some(self.start_request(slot));
        }
        let busy = self.tot_busy_queues();
        bfq_log!(
            self,
            trace,
            now,
            format_args!("dispatch requests: {busy} busy queues"),
        );
        if busy == 0 {
            return None;
        }
        if self.tun.strict_guarantees && self.tot_rq_in_driver > 0 {
            return None;
        }
        let q = self.select_queue(now, trace)?;
        let slot = self.dispatch_rq_from_bfqq(q, now, trace);
        Some(self.start_request(slot))
    }

    /// The request goes to the device (`rq_in_driver++`, RQF_STARTED).
    fn start_request(&mut self, slot: Slot) -> Request {
        self.tot_rq_in_driver += 1;
        let held = self.hm(slot);
        assert!(!held.started, "request dispatched twice");
        held.started = true;
        let rq = held.rq;
        // The kernel finds a completed request's data through `rq->elv.priv`; iosched
        // through the id, in a table of the requests in the device only: a few entries
        // that stay in cache, where a table of every queued request (hundreds at 256
        // queues) missed the first-level cache at most completions.
        let previous = self.slot_of.insert(rq.id, slot);
        assert!(
            previous.is_none(),
            "request {:?} in the device twice",
            rq.id
        );
        rq
    }

    /// Kernel: bfq_completed_request().
    fn completed_request(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        self.update_hw_tag();
        self.tot_rq_in_driver -= 1;
        self.qm(q).dispatched -= 1;
        assert!(
            self.tot_rq_in_driver >= 0 && self.q(q).dispatched >= 0,
            "completion count below zero"
        );
        if self.q(q).dispatched == 0 && !self.q(q).busy {
            self.qm(q).budget_timeout = Bfq::jif(now);
            self.del_bfqq_in_groups_with_pending_reqs(q);
            self.weights_tree_remove(q, now, trace);
        }
        self.qm(q).ttime.last_end_request = now;
        let delta_us = now.wrapping_sub(self.last_completion) / 1000;
        if delta_us > super::BFQ_MIN_TT / 1000
            && (u64::from(self.last_rq_max_size) << super::budget::BFQ_RATE_SHIFT) / delta_us
                < 1 << (super::budget::BFQ_RATE_SHIFT - 10)
        {
            self.update_rate_reset(None, now, trace);
        }
        self.last_completion = now;
        self.last_completed_rq_bfqq = (!self.q(q).coop).then_some(q);
        let b = self.q(q);
        if b.softrt_update
            && b.dispatched == 0
            && b.sort_list.is_empty()
            && b.wr_coeff != self.tun.wr_coeff
        {
            let next = self.softrt_next_start(q, now);
            self.qm(q).soft_rt_next_start = next;
        }
        if self.in_service_queue == Some(q) && !self.completion_keeps_idling(q, now, trace) {
            return;
        }
        if self.tot_rq_in_driver == 0 {
            self.schedule_dispatch(now, trace);
        }
    }

    /// The in-service branch of bfq_completed_request(): arm the idle timer or expire.
    /// False when the kernel returns early (idling is wanted).
    fn completion_keeps_idling(&mut self, q: QId, now: Time, trace: &mut dyn Trace) -> bool {
        if self.must_idle(q) {
            if self.q(q).dispatched == 0 {
                self.arm_slice_timer(now, trace);
            }
            return false;
        }
        if self.may_expire_for_budg_timeout(q, now, trace) {
            self.bfqq_expire(q, false, Expiration::BudgetTimeout, now, trace);
        } else if self.q(q).sort_list.is_empty()
            && (self.q(q).dispatched == 0 || !self.better_to_idle(q))
        {
            if self.q(q).dispatched == 0 {
                let why = self.idle_verdict(q).err().unwrap_or("not_idling");
                self.decide(trace, now, DecisionKind::NoIdle, Some(q), why, None);
            }
            self.bfqq_expire(q, false, Expiration::NoMoreRequests, now, trace);
        }
        true
    }

    /// Kernel: bfq_finish_requeue_request(): the device completed `rq`.
    pub(crate) fn finish_request(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) {
        let slot = *self
            .slot_of
            .get(rq.id)
            .unwrap_or_else(|| panic!("completion of request {:?} never dispatched", rq.id));
        debug_assert!(self.h(slot).started, "slot_of holds only started requests");
        let q = self.h(slot).bfqq;
        if self.waited_rq == Some(rq.id) {
            self.update_inject_limit(q, now);
        }
        self.completed_request(q, now, trace);
        self.request_freed(q);
        self.put_queue(q, now, trace);
        let held = self.release(slot);
        self.drop_bic_request(held.bic);
    }

    /// O(n) consistency checks.
    pub(crate) fn check(&self) {
        self.check_wf2q();
        let queued: i32 = self
            .queues
            .iter()
            .flatten()
            .map(|q| q.queued[0] + q.queued[1])
            .sum();
        assert_eq!(queued, self.queued, "queued requests");
        for (slot, end) in self.hash.check() {
            let h = self.held[slot].as_ref().expect("a hashed request is held");
            assert_eq!(
                h.rq.end_sector(),
                end,
                "request {:?}: stale hash key",
                h.rq.id
            );
        }
        let in_driver = self.held.iter().flatten().filter(|h| h.started).count();
        assert_eq!(
            in_driver as i32, self.tot_rq_in_driver,
            "requests in the device"
        );
        assert_eq!(
            in_driver,
            self.slot_of.len(),
            "requests in the device by id"
        );
        let mut ids = std::collections::BTreeSet::new();
        for (slot, h) in self.held.iter().enumerate() {
            let Some(h) = h else { continue };
            assert!(ids.insert(h.rq.id), "request {:?} inserted twice", h.rq.id);
            if h.started {
                assert_eq!(
                    self.slot_of.get(h.rq.id),
                    Some(&slot),
                    "slot of {:?}",
                    h.rq.id
                );
            }
        }
        for b in self.queues.iter().flatten() {
            assert_eq!(
                b.sort_list.len(),
                b.fifo.len(),
                "queue {}: sort list and fifo",
                b.id
            );
            let fifo = self.fifo_slots(b.id);
            assert_eq!(fifo.len(), b.fifo.len(), "queue {}: fifo links", b.id);
            for &s in &fifo {
                assert!(
                    self.h(s).sorted,
                    "queue {}: fifo holds a dispatched request",
                    b.id
                );
                assert_eq!(self.h(s).bfqq, b.id, "queue {}: fifo holds another's", b.id);
            }
            assert_eq!(
                b.next_rq.is_some(),
                !b.sort_list.is_empty(),
                "queue {}: next_rq",
                b.id
            );
            assert!(b.ref_ > 0, "live queue {} without references", b.id);
        }
        if self.idle_timer.is_some() {
            let q = self
                .in_service_queue
                .expect("idle timer armed with no queue in service");
            assert!(
                self.q(q).wait_request,
                "idle timer armed but queue {q} not waiting"
            );
        }
    }
}
