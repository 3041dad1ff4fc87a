//! Dispatching: one request per call from the selected queue, within the dispatch limits,
//! in elevator order (or FIFO order once a deadline passed).
//!
//! Limits: async requests drain before a sync queue that may idle starts; async queues wait
//! while sync requests are in flight; a queue may have `quantum/2` requests in flight (up to
//! `quantum` early in its slice, unlimited when alone); under `low_latency` async depth ramps
//! up with the time since the last *delayed* sync completion. Within a queue, the next request
//! is the one closest ahead of the head, with short backward seeks allowed at a penalty.
//! Kernel: cfq_dispatch_requests(), cfq_dispatch_request(), cfq_may_dispatch(),
//! cfq_dispatch_insert(), cfq_remove_request(), cfq_activate_request(), cfq_choose_req(),
//! cfq_find_next_rq(), cfq_forced_dispatch().

use std::ops::Bound;

use super::fifo;
use super::queue::{InFlight, RqRef, Slot, SortKey};
use super::slice::ExpireCause;
use super::{Cfq, QId};
use crate::request::{Request, Time};
use crate::trace::{DecisionKind, Trace};

impl Cfq {
    /// Kernel: cfq_choose_req(): which of two queued requests (of one queue) to serve first
    /// with the head at `last`.
    /// Inline for its usual answer (one side empty: a queue's only request).
    #[inline]
    pub(crate) fn choose_req(
        &self,
        a: Option<RqRef>,
        b: Option<RqRef>,
        last: u64,
    ) -> Option<RqRef> {
        match (a, b) {
            (None, b) => b,
            (a, None) => a,
            (Some(e1), Some(e2)) if e1 == e2 => Some(e2),
            (Some(e1), Some(e2)) => Some(self.choose_between(e1, e2, last)),
        }
    }

    /// cfq_choose_req() of two distinct requests.
    pub(crate) fn choose_between(&self, e1: RqRef, e2: RqRef, last: u64) -> RqRef {
        let r1 = &self.pending[e1.1 as usize].rq;
        let r2 = &self.pending[e2.1 as usize].rq;
        if r1.is_sync() != r2.is_sync() {
            return if r1.is_sync() { e1 } else { e2 };
        }
        if r1.flags.prio != r2.flags.prio {
            return if r1.flags.prio { e1 } else { e2 };
        }
        let (s1, s2) = (r1.sector, r2.sector);
        // back_seek_max is in KiB: 1 KiB is 2 sectors.
        let back_max = self.tun.back_seek_max * 2;
        let penalty = self.tun.back_seek_penalty;
        let dist = |s: u64| -> Option<u64> {
            if s >= last {
                Some(s - last)
            } else if s + back_max >= last {
                Some((last - s) * penalty)
            } else {
                None // wrapped: behind the head beyond back_seek_max
            }
        };
        match (dist(s1), dist(s2)) {
            (Some(d1), Some(d2)) => {
                if d1 < d2 {
                    e1
                } else if d2 < d1 {
                    e2
                } else if s1 >= s2 {
                    e1
                } else {
                    e2
                }
            }
            (Some(_), None) => e1,
            (None, Some(_)) => e2,
            (None, None) => {
                if s1 <= s2 {
                    e1
                } else {
                    e2
                }
            }
        }
    }

    /// Kernel: cfq_find_next_rq(): the best request after `last` is dispatched.
    pub(crate) fn find_next_rq(&self, q: QId, last: SortKey) -> Option<RqRef> {
        let list = &self.queues[q].sort_list;
        let prev = list.range(..last).next_back().map(|(k, &s)| (*k, s));
        let next = list
            .range((Bound::Excluded(last), Bound::Unbounded))
            .next()
            .map(|(k, &s)| (*k, s))
            .or_else(|| {
                list.first_key_value()
                    .map(|(k, &s)| (*k, s))
                    .filter(|&(k, _)| k != last)
            });
        self.choose_req(next, prev, last.0)
    }

    /// Kernel: cfq_may_dispatch().
    fn may_dispatch(&mut self, q: QId, now: Time, trace: &mut dyn Trace) -> bool {
        let cfqq = &self.queues[q];
        if cfqq.must_dispatch {
            return true;
        }
        let sync = cfqq.sync;
        // should_idle() first, as the kernel evaluates it (and logs "Not idling") even when
        // no async request is in flight.
        if self.should_idle(q, now, trace) && self.rq_in_flight[0] > 0 {
            return false; // drain async requests before sync I/O
        }
        if self.rq_in_flight[1] > 0 && !sync {
            return false; // async waits while sync I/O is in flight
        }
        let cfqq = &self.queues[q];
        let mut max_dispatch = (self.tun.quantum / 2).max(1);
        if cfqq.class_idle() {
            max_dispatch = 1;
        }
        let dispatched = u64::from(cfqq.dispatched);
        if dispatched >= max_dispatch {
            if cfqq.class_idle() {
                return false;
            }
            let promote_sync = sync && self.busy_sync_queues == 1;
            if self.busy_queues > 1 && self.slice_used_soon(q, now) && !promote_sync {
                return false;
            }
            max_dispatch = if self.busy_queues == 1 || promote_sync {
                u64::MAX
            } else {
                self.tun.quantum
            };
        }
        if !sync && self.tun.low_latency {
            let last_sync = now.wrapping_sub(self.last_delayed_sync);
            let mut depth = last_sync / self.tun.slice_ns[1];
            if depth == 0 && dispatched == 0 {
                depth = 1;
            }
            max_dispatch = max_dispatch.min(depth);
        }
        dispatched < max_dispatch
    }

    /// Kernel: cfq_dispatch_insert() + cfq_remove_request(). The driver activates the request
    /// afterwards (`activate_request`). Answers the request's slot, which the caller reads
    /// and frees ([`Cfq::take_dispatched`]): the request is copied once, where it is handed
    /// out, not returned through each call (issue 34: ~20 instructions a request).
    #[inline]
    fn dispatch_insert(
        &mut self,
        q: QId,
        (key, slot): RqRef,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Slot {
        self.log_q(trace, now, q, format_args!("dispatch_insert"));
        // The request's slot read once, and the queue updated through one look-up (issue
        // 34: each helper looked slot and queue up again).
        let p = &self.pending[slot as usize];
        let (rq, start_time, cic) = (p.rq, p.start_time, p.cic);
        let cfqq = &mut self.queues[q];
        fifo::unlink(&mut self.pending, &mut cfqq.fifo, slot);
        // cfq_find_next_rq()'s candidates come from the removal's own search.
        let (removed, prev, next) = cfqq
            .sort_list
            .remove_between(&key)
            .expect("dispatched request is queued");
        assert_eq!(removed, slot, "dispatched request is queued");
        let sync = usize::from(rq.is_sync());
        assert!(cfqq.queued[sync] > 0, "queued count underflow");
        cfqq.queued[sync] -= 1;
        if rq.flags.prio {
            cfqq.prio_pending -= 1;
        }
        cfqq.dispatched += 1;
        cfqq.nr_sectors += u64::from(rq.nr_sectors);
        let queue_sync = usize::from(cfqq.sync);
        let g = cfqq.group;
        // The queue stays on its service tree until it expires; only the prio tree
        // forgets it once empty.
        let emptied = cfqq.on_rr && cfqq.sort_list.is_empty();
        if prev.is_none() && next.is_none() {
            cfqq.next_rq = None;
        } else {
            self.queues[q].next_rq = self.choose_req(next, prev, key.0);
        }
        if emptied {
            self.prio_tree_remove(q);
        }
        self.rq_queued -= 1;
        self.groups[g].dispatched += 1;
        self.rq_in_flight[queue_sync] += 1;
        // Panics if the request was dispatched twice.
        self.in_flight.insert_new(
            rq.id,
            // Queue and context slabs of 2^32 entries would take terabytes: the ids fit.
            InFlight {
                queue: q as u32,
                start_time,
                cic: cic as u32,
                dispatched_at: now,
                in_driver_at_dispatch: std::num::NonZeroU32::MIN.saturating_add(self.rq_in_driver),
            },
        );

        if self.active_cic.is_none() && self.active_queue == Some(q) {
            self.active_cic = Some(cic);
        }
        slot
    }

    /// The request `dispatch_insert` left in `slot`, its slot freed.
    #[inline]
    pub(crate) fn take_dispatched(&mut self, slot: Slot) -> Request {
        self.free_pending_slot(slot).rq
    }

    /// Kernel: cfq_activate_request(), run when the driver takes a dispatched request: after
    /// cfq_dispatch_requests() has returned (and logged "dispatched a request").
    /// `q` is the queue it was dispatched from (the kernel reads it from the request).
    #[inline]
    pub(crate) fn activate_request(
        &mut self,
        q: QId,
        rq: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        self.rq_in_driver += 1;
        let drv = self.rq_in_driver;
        self.log_q(trace, now, q, format_args!("activate rq, drv={drv}"));
        self.last_position = rq.end_sector();
    }

    /// Kernel: cfq_dispatch_request(): one request from the active queue, if allowed.
    // This and dispatch_requests() inline into `dispatch_caught_up`: the request is then
    // built once where it is returned, not copied out through each call (issue 34).
    #[inline]
    fn dispatch_request(&mut self, q: QId, now: Time, trace: &mut dyn Trace) -> Option<Slot> {
        assert!(
            !self.queues[q].is_empty(),
            "dispatching from an empty queue"
        );
        let expired = self.check_fifo(q, now);
        if expired.is_some() {
            self.queues[q].must_dispatch = true;
        }
        if !self.may_dispatch(q, now, trace) {
            self.decide(
                trace,
                now,
                DecisionKind::DispatchLimit,
                Some(q),
                "may_dispatch refused",
                None,
            );
            return None;
        }
        let entry = match expired {
            Some(entry) => {
                // Choice: the kernel prints the request's address (`fifo=%p`); we print the
                // request's insertion sequence number, stable across runs.
                self.log_q(trace, now, q, format_args!("fifo=0x{:x}", (entry.0).1));
                self.decide(
                    trace,
                    now,
                    DecisionKind::FifoExpired,
                    Some(q),
                    "FIFO head past its deadline",
                    None,
                );
                entry
            }
            None => self.queues[q]
                .next_rq
                .expect("non-empty queue has a next_rq"),
        };
        Some(self.dispatch_insert(q, entry, now, trace))
    }

    /// Kernel: cfq_dispatch_requests() with force = 0.
    #[inline]
    pub(crate) fn dispatch_requests(
        &mut self,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<(Slot, QId)> {
        if self.busy_queues == 0 {
            return None;
        }
        let q = self.select_queue(now, trace)?;
        let slot = self.dispatch_request(q, now, trace)?;
        let cfqq = &mut self.queues[q];
        cfqq.slice_dispatch += 1;
        cfqq.must_dispatch = false;
        let is_async = !cfqq.sync;
        let idle_class = cfqq.class_idle();
        if self.busy_queues > 1
            && ((is_async && self.queues[q].slice_dispatch >= self.prio_to_maxrq(q)) || idle_class)
        {
            self.queues[q].slice_end = now + 1;
            let cause = if idle_class {
                ExpireCause::IdleClass
            } else {
                ExpireCause::AsyncDepth
            };
            self.slice_expired(false, cause, now, trace);
        }
        self.log_q(trace, now, q, format_args!("dispatched a request"));
        Some((slot, q))
    }

    /// Kernel: cfq_forced_dispatch(): expire the active queue, then empty every queue in
    /// service order, ignoring limits and idling.
    pub(crate) fn forced_dispatch(&mut self, now: Time, trace: &mut dyn Trace) -> Vec<Request> {
        let mut out = Vec::new();
        self.slice_expired(false, ExpireCause::Forced, now, trace);
        while let Some(q) = self.next_queue_forced() {
            self.set_active_queue(Some(q), now, trace);
            while let Some(entry) = self.queues[q].next_rq {
                let slot = self.dispatch_insert(q, entry, now, trace);
                out.push(self.take_dispatched(slot));
            }
            self.slice_expired(false, ExpireCause::Forced, now, trace);
        }
        assert_eq!(
            self.busy_queues, 0,
            "queues left busy after a forced dispatch"
        );
        let n = out.len();
        self.log(trace, now, format_args!("forced_dispatch={n}"));
        out
    }

    /// Kernel: cfq_get_next_queue_forced(): leftmost group's first non-empty tree.
    fn next_queue_forced(&mut self) -> Option<QId> {
        if self.rq_queued == 0 {
            return None;
        }
        let g = self.get_next_group()?;
        self.groups[g].trees.iter().find_map(|tree| tree.first())
    }
}
