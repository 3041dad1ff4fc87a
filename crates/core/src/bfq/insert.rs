//! Insertion: a request joins its process's queue; an idle queue becomes busy.
//!
//! On arrival BFQ updates the queue's think time, seekiness and I/O intensity, picks the
//! queue's next request (the one nearest ahead of the head, `bfq_choose_req()`), and, if the
//! queue was not busy, decides weight raising, gives it a budget and activates it; a queue
//! coming back in time with budget left, of a higher class or weight, or arriving while the
//! queue in service is not worth idling for, preempts the queue in service. A request that
//! arrives while BFQ idles for its queue ends the idling (unless small and worth batching).
//!
//! Kernel: bfq_insert_request(), __bfq_insert_request(), bfq_add_request(),
//! bfq_bfqq_handle_idle_busy_switch(), bfq_bfqq_higher_class_or_weight(), bfq_choose_req(),
//! bfq_rq_enqueued(), bfq_limit_depth(), bfqq_request_over_limit(), bfq_update_depths().

use super::{time_after, Bfq, Expiration, Held, QId, Slot};
use crate::deadline::tunables::msecs_to_jiffies;
use crate::request::{Request, Time};
use crate::trace::{DecisionKind, Trace};

impl Bfq {
    /// A slot for a new request. Only a request in the device is found by its id (at its
    /// completion), so the id goes into `slot_of` at dispatch, not here; an id inserted
    /// twice is caught by [`Bfq::check`], or at dispatch if both are in the device.
    fn store(&mut self, held: Held) -> Slot {
        match self.free_held.pop() {
            Some(slot) => {
                self.held[slot] = Some(held);
                slot
            }
            None => {
                self.held.push(Some(held));
                self.held.len() - 1
            }
        }
    }

    /// Frees a finished (or merged-away) request's slot.
    pub(crate) fn release(&mut self, slot: Slot) -> Held {
        let held = self.held[slot]
            .take()
            .expect("released slot holds a request");
        if held.started {
            self.slot_of.remove(held.rq.id);
        }
        self.free_held.push(slot);
        held
    }

    /// Kernel: bfq_insert_request() (after bfq_prepare_request()), without the insert merge
    /// ([`Bfq::insert_request_merging`] has it).
    pub(crate) fn insert_request(&mut self, rq: Request, now: Time, trace: &mut dyn Trace) {
        let slot = self.prepare_insert(rq, now, trace);
        self.queue_request(slot, now, trace);
    }

    /// Kernel: bfq_prepare_request() and bfq_init_rq(): the request gets its process
    /// context and queue.
    pub(crate) fn prepare_insert(&mut self, rq: Request, now: Time, trace: &mut dyn Trace) -> Slot {
        let bic = self.bic_for(&rq);
        let slot = self.store(Held {
            rq,
            bfqq: usize::MAX,
            bic,
            fifo_time: 0,
            sorted: false,
            started: false,
            nomerge: false,
            fifo: Default::default(),
        });
        self.init_rq(slot, now, trace);
        slot
    }

    /// The rest of bfq_insert_request(): __bfq_insert_request(), then the request joins the
    /// merge hash and, if it is empty, the one-hit cache.
    pub(crate) fn queue_request(&mut self, slot: Slot, now: Time, trace: &mut dyn Trace) {
        self.insert_request_inner(slot, now, trace);
        if super::merge::op_mergeable(&self.h(slot).rq) {
            self.hash_add(slot);
            self.last_merge.get_or_insert(slot);
        }
    }

    /// Kernel: __bfq_insert_request().
    fn insert_request_inner(&mut self, slot: Slot, now: Time, trace: &mut dyn Trace) {
        let (rq, mut q, bic) = (self.h(slot).rq, self.h(slot).bfqq, self.h(slot).bic);
        if let Some(new) = self.setup_cooperator(q, rq.sector, bic, now, trace) {
            let old = q;
            self.request_allocated(new);
            self.request_freed(q);
            self.qm(new).ref_ += 1;
            if self.bics[&bic].bfqq[1] == Some(q) {
                q = self.merge_chain(bic, q, new, now, trace);
            }
            self.qm(old).just_created = false;
            self.put_queue(old, now, trace);
            self.hm(slot).bfqq = new;
        }
        self.update_io_thinktime(q, now);
        self.update_has_short_ttime(q, now);
        self.update_io_seektime(q, slot, now);
        self.add_request(slot, now, trace);
        let sync = usize::from(rq.is_sync());
        self.hm(slot).fifo_time = now + self.tun.fifo_expire[sync];
        self.fifo_push_back(q, slot);
        self.rq_enqueued(q, slot, now, trace);
    }

    /// Kernel: bfq_add_request().
    fn add_request(&mut self, slot: Slot, now: Time, trace: &mut dyn Trace) {
        let (rq, q, bic) = (self.h(slot).rq, self.h(slot).bfqq, self.h(slot).bic);
        let old_wr_coeff = self.q(q).wr_coeff;
        let sync = rq.is_sync();
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("add_request {}", i32::from(sync)),
        );
        self.qm(q).queued[usize::from(sync)] += 1;
        self.queued += 1;
        if self.q(q).sync && self.bics[&bic].requests <= 1 {
            self.check_waker(q, now, trace);
            self.inject_on_arrival(q, now);
        }
        if self.q(q).sync {
            self.update_io_intensity(q, now);
        }
        self.qm(q).sort_list.add();
        self.rb_add(q, slot);
        self.hm(slot).sorted = true;
        let prev = self.q(q).next_rq;
        let next = self.choose_req(prev, Some(slot), self.last_position);
        self.qm(q).next_rq = next;
        if !self.nonrot_with_queueing && prev != next {
            self.pos_tree_add_move(q, now, trace);
        }
        let mut interactive = false;
        let j = Bfq::jif(now);
        if !self.q(q).busy {
            interactive = self.handle_idle_busy_switch(q, old_wr_coeff, slot, now, trace);
        } else {
            if self.tun.low_latency
                && old_wr_coeff == 1
                && !sync
                && time_after(
                    j,
                    self.q(q)
                        .last_wr_start_finish
                        .wrapping_add(self.tun.wr_min_inter_arr_async),
                )
            {
                let (dur, coeff) = (self.wr_duration(), self.tun.wr_coeff);
                let b = self.qm(q);
                b.wr_coeff = coeff;
                b.wr_cur_max_time = dur;
                self.wr_busy_queues += 1;
                self.qem(q).prio_changed = true;
                self.decide(
                    trace,
                    now,
                    DecisionKind::WeightRaise,
                    Some(q),
                    "async_long_busy",
                    Some(dur * 4_000_000),
                );
            }
            if prev != self.q(q).next_rq {
                self.updated_next_req(q, now, trace);
            }
        }
        let wr = self.q(q).wr_coeff;
        if self.tun.low_latency && (old_wr_coeff == 1 || wr == 1 || interactive) {
            self.qm(q).last_wr_start_finish = j;
        }
    }

    /// Kernel: bfq_bfqq_handle_idle_busy_switch(): an idle queue gets a request. Returns
    /// whether it counts as interactive.
    fn handle_idle_busy_switch(
        &mut self,
        q: QId,
        old_wr_coeff: u32,
        slot: Slot,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        let j = Bfq::jif(now);
        let b = self.q(q);
        let idle_for_long_time = self.idle_for_long_time(q, now);
        let arrived_in_time = now
            <= b.ttime
                .last_end_request
                .wrapping_add(u64::from(self.tun.slice_idle) * 3);
        let non_merged_or_stably =
            b.bic.is_some() || self.bics[&self.h(slot).bic].data.stably_merged;
        let in_burst = b.in_large_burst;
        let default_weight = self.qe(q).new_weight == 40;
        let soft_rt = self.tun.wr_max_softrt_rate > 0
            && !self.bfqq_totally_seeky(q)
            && !in_burst
            && time_after(j, b.soft_rt_next_start)
            && b.dispatched == 0
            && default_weight;
        let interactive = !in_burst && idle_for_long_time && default_weight;
        let wr_or_deserves_wr = self.tun.low_latency
            && (b.wr_coeff > 1 || (b.sync && non_merged_or_stably && (interactive || soft_rt)));
        let wants_to_preempt = self.update_budg_for_activation(q, arrived_in_time);
        let b = self.q(q);
        if !b.just_created
            && idle_for_long_time
            && time_after(j, b.budget_timeout.wrapping_add(msecs_to_jiffies(10000)))
        {
            self.burst_list_del(q);
            self.qm(q).in_large_burst = false;
        }
        self.qm(q).just_created = false;
        if self.tun.low_latency {
            if time_after(self.q(q).split_time, j) {
                self.qm(q).split_time = j.wrapping_sub(self.tun.wr_min_idle_time).wrapping_sub(1);
            }
            if time_after(
                j,
                self.q(q).split_time.wrapping_add(self.tun.wr_min_idle_time),
            ) {
                self.update_wr_on_rq_arrival(
                    q,
                    old_wr_coeff,
                    wr_or_deserves_wr,
                    interactive,
                    in_burst,
                    soft_rt,
                    now,
                    trace,
                );
                if old_wr_coeff != self.q(q).wr_coeff {
                    self.qem(q).prio_changed = true;
                }
            }
        }
        let b = self.qm(q);
        b.last_idle_bklogged = j;
        b.service_from_backlogged = 0;
        b.softrt_update = false;
        self.add_bfqq_busy(q, now, trace);
        self.maybe_preempt(q, wants_to_preempt, now, trace);
        interactive
    }

    /// The preemption test at the end of bfq_bfqq_handle_idle_busy_switch().
    fn maybe_preempt(&mut self, q: QId, wants_to_preempt: bool, now: Time, trace: &mut dyn Trace) {
        let Some(s) = self.in_service_queue else {
            return;
        };
        let why = if wants_to_preempt && self.q(q).wr_coeff >= self.q(s).wr_coeff {
            "budget_left"
        } else if self.higher_class_or_weight(q, s) {
            "higher_class_or_weight"
        } else if !self.better_to_idle(s) {
            "not_worth_idling"
        } else {
            return;
        };
        if self.next_queue_may_preempt() {
            self.decide(trace, now, DecisionKind::Preempt, Some(q), why, None);
            self.bfqq_expire(s, false, Expiration::Preempted, now, trace);
        }
    }

    /// Kernel: bfq_bfqq_higher_class_or_weight().
    fn higher_class_or_weight(&self, q: QId, in_serv: QId) -> bool {
        if self.q(q).ioprio_class < self.q(in_serv).ioprio_class {
            return true;
        }
        let (a, b) = (self.qe(q), self.qe(in_serv));
        let (wa, wb) = if a.parent == b.parent {
            (a.weight, b.weight)
        } else {
            (
                a.parent.map_or(a.weight, |p| self.e(p).weight),
                b.parent.map_or(b.weight, |p| self.e(p).weight),
            )
        };
        wa > wb
    }

    /// Kernel: bfq_choose_req(): of two requests, the one to serve first from `last`: sync
    /// before async, metadata first, then the nearest ahead (backward seeks count
    /// `back_seek_penalty` times, and only within `back_seek_max`).
    pub(crate) fn choose_req(
        &self,
        rq1: Option<Slot>,
        rq2: Option<Slot>,
        last: u64,
    ) -> Option<Slot> {
        let Some(r1) = rq1.filter(|&r| Some(r) != rq2) else {
            return rq2;
        };
        let Some(r2) = rq2 else {
            return rq1;
        };
        // The two requests by reference: this runs at every insertion and dispatch.
        let (a, b) = (&self.h(r1).rq, &self.h(r2).rq);
        let (sync1, sync2) = (a.is_sync(), b.is_sync());
        if sync1 != sync2 {
            return Some(if sync1 { r1 } else { r2 });
        }
        if a.flags.meta != b.flags.meta {
            return Some(if a.flags.meta { r1 } else { r2 });
        }
        let back_max = u64::from(self.tun.back_max) * 2;
        let penalty = u64::from(self.tun.back_penalty);
        let dist = |s: u64| -> Option<u64> {
            if s >= last {
                Some(s - last)
            } else if s + back_max >= last {
                Some((last - s) * penalty)
            } else {
                None
            }
        };
        let (s1, s2) = (a.sector, b.sector);
        Some(match (dist(s1), dist(s2)) {
            (Some(d1), Some(d2)) if d1 < d2 => r1,
            (Some(d1), Some(d2)) if d2 < d1 => r2,
            (Some(_), Some(_)) => {
                if s1 >= s2 {
                    r1
                } else {
                    r2
                }
            }
            (Some(_), None) => r1,
            (None, Some(_)) => r2,
            (None, None) => {
                if s1 <= s2 {
                    r1
                } else {
                    r2
                }
            }
        })
    }

    /// Kernel: bfq_rq_enqueued(): a request for the queue idled for ends the idling (a small
    /// one is batched if idling boosts throughput and the budget has time left).
    fn rq_enqueued(&mut self, q: QId, slot: Slot, now: Time, trace: &mut dyn Trace) {
        let rq = self.h(slot).rq;
        if rq.flags.meta {
            self.qm(q).meta_pending += 1;
        }
        self.qm(q).last_request_pos = rq.end_sector();
        if self.in_service_queue == Some(q) && self.q(q).wait_request {
            let small_req = self.q(q).queued[usize::from(rq.is_sync())] == 1 && rq.nr_sectors < 32;
            let budget_timeout = self.budget_timeout(q, now);
            if small_req && self.idling_boosts_thr_without_issues(q) && !budget_timeout {
                return;
            }
            self.qm(q).wait_request = false;
            self.cancel_idle_timer(now, trace);
            self.decide(
                trace,
                now,
                DecisionKind::IdleEnd,
                Some(q),
                "request_arrived",
                None,
            );
            if budget_timeout {
                self.bfqq_expire(q, false, Expiration::BudgetTimeout, now, trace);
            }
        }
    }

    /// Kernel: bfq_update_depths() via bfq_depth_updated(): the queue's `nr_requests`
    /// changed; async and write requests may hold only part of the tags.
    pub fn depth_updated(&mut self, nr_requests: u32) {
        self.nr_requests = nr_requests;
        self.async_depths[0][0] = (nr_requests >> 1).max(1);
        self.async_depths[0][1] = ((nr_requests * 3) >> 2).max(1);
        self.async_depths[1][0] = ((nr_requests * 3) >> 4).max(1);
        self.async_depths[1][1] = ((nr_requests * 6) >> 4).max(1);
    }

    /// Kernel: bfq_limit_depth(): the shallow depth a request like `rq` may allocate its tag
    /// with, or `None` when it may use every tag.
    pub fn limit_depth(&mut self, rq: &Request, now: Time, trace: &mut dyn Trace) -> Option<u32> {
        self.listen(trace);
        let sync = rq.is_sync();
        let mut limit = if sync && rq.op.data_dir() == 0 {
            self.nr_requests
        } else {
            self.async_depths[usize::from(self.wr_busy_queues != 0)][usize::from(sync)]
        };
        let q = self
            .bics
            .get(rq.ioc)
            .and_then(|b| b.bfqq[usize::from(sync)]);
        if let Some(q) = q {
            if self.request_over_limit(q, limit, now, trace) {
                limit = 1;
            }
        }
        bfq_log!(
            self,
            trace,
            now,
            format_args!(
                "[bfq_limit_depth] wr_busy {} sync {} depth {limit}",
                self.wr_busy_queues,
                i32::from(sync)
            ),
        );
        (limit < self.nr_requests).then_some(limit)
    }

    /// Kernel: BFQ_LIMIT_INLINE_DEPTH.
    const BFQ_LIMIT_INLINE_DEPTH: usize = 16;

    /// Kernel: bfqq_request_over_limit(): whether the queue holds more than its share of
    /// `limit` tags at some level of the hierarchy.
    fn request_over_limit(&self, q: QId, mut limit: u32, now: Time, trace: &mut dyn Trace) -> bool {
        // The kernel's inline array of BFQ_LIMIT_INLINE_DEPTH entities; a deeper hierarchy
        // (rare) allocates, as the kernel's kmalloc_array() does.
        let mut inline = [0; Self::BFQ_LIMIT_INLINE_DEPTH];
        let mut deep = Vec::new();
        let mut depth = 0;
        let mut at = Some(self.q(q).entity);
        while let Some(e) = at {
            if !self.e(e).on_st_or_in_serv {
                return false;
            }
            if depth < Self::BFQ_LIMIT_INLINE_DEPTH {
                inline[depth] = e;
            } else {
                if deep.is_empty() {
                    deep.extend_from_slice(&inline);
                }
                deep.push(e);
            }
            depth += 1;
            at = self.e(e).parent;
        }
        let chain = if deep.is_empty() {
            &inline[..depth]
        } else {
            &deep[..]
        };
        let sched = self.qe(q).sched_data;
        for level in (0..chain.len()).rev() {
            let e = chain[level];
            let wsum = if level > 0 {
                self.st(self.entity_service_tree(e)).wsum
            } else {
                (0..self.q(q).ioprio_class as usize).fold(0u64, |w, i| {
                    w * 8 + self.groups[sched].sched_data.service_tree[i].wsum
                })
            };
            if wsum == 0 {
                continue;
            }
            let weight = u64::from(self.e(e).weight);
            limit = ((u64::from(limit) * weight + wsum / 2) / wsum) as u32;
            let allocated = self.e(e).allocated;
            if allocated >= limit as i32 {
                bfq_log_q!(
                    self,
                    trace,
                    now,
                    q,
                    format_args!(
                        "too many requests: allocated {allocated} limit {limit} level {level}"
                    ),
                );
                return true;
            }
        }
        false
    }
}
