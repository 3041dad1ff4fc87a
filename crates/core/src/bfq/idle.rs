//! Idling: whether to keep the device waiting for the empty queue in service.
//!
//! BFQ idles for two reasons. *Throughput*: on a rotational drive without queueing, or for a
//! sequential, I/O-bound queue with a short think time on a device that does not queue
//! deeply, waiting beats seeking away ([`Bfq::idling_boosts_thr_without_issues`]); not while
//! any queue is weight-raised. *Service guarantees*: in an *asymmetric* scenario (queues of
//! different weights, several classes busy, or more than one group with pending requests),
//! or for a raised queue among others, dispatching from another queue would steal the empty
//! queue's share ([`Bfq::idling_needed_for_service_guarantees`]). `strict_guarantees` idles
//! always; `slice_idle` 0, async and idle-class queues never. A seeky queue in a symmetric
//! scenario idles at most 2 ms; a raised one at least 20 ms.
//!
//! The same file keeps the per-queue statistics idling reads: think time, seek history,
//! `has_short_ttime`, `IO_bound`, and the device's queueing (`hw_tag`).
//!
//! Kernel: bfq_asymmetric_scenario(), bfq_weights_tree_add/remove(),
//! idling_needed_for_service_guarantees(), idling_boosts_thr_without_issues(),
//! bfq_better_to_idle(), bfq_bfqq_must_idle(), bfq_arm_slice_timer(),
//! bfq_idle_slice_timer_body(), bfq_update_hw_tag(), bfq_update_io_thinktime(),
//! bfq_update_io_seektime(), bfq_update_has_short_ttime(), bfq_update_io_intensity().

use super::{time_after_eq, Bfq, Expiration, QId, Slot, TimerEvent, BFQ_MIN_TT};
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

/// 800 sectors: a request farther than this from the last is a seek. Kernel: BFQQ_SEEK_THR.
pub(crate) const BFQQ_SEEK_THR: u64 = 8 * 100;
/// 64 sectors: on SSDs only smaller requests count as seeks. Kernel: BFQQ_SECT_THR_NONROT.
pub(crate) const BFQQ_SECT_THR_NONROT: u32 = 2 * 32;
/// Kernel: BFQ_HW_QUEUE_THRESHOLD, BFQ_HW_QUEUE_SAMPLES.
const BFQ_HW_QUEUE_THRESHOLD: i32 = 3;
const BFQ_HW_QUEUE_SAMPLES: i32 = 32;

impl Bfq {
    /// Kernel: get_sdist().
    fn sdist(last_pos: u64, sector: u64) -> u64 {
        if last_pos != 0 {
            sector.abs_diff(last_pos)
        } else {
            0
        }
    }

    /// Kernel: BFQ_RQ_SEEKY().
    pub(crate) fn rq_seeky(&self, last_pos: u64, slot: Slot) -> bool {
        let rq = self.h(slot).rq;
        Bfq::sdist(last_pos, rq.sector) > BFQQ_SEEK_THR
            && (self.rotational || rq.nr_sectors < BFQQ_SECT_THR_NONROT)
    }

    /// Kernel: BFQQ_SEEKY(): more than 19 of the last 32 requests were seeks.
    pub(crate) fn bfqq_seeky(&self, q: QId) -> bool {
        self.q(q).seek_history.count_ones() > 19
    }

    /// Kernel: BFQQ_TOTALLY_SEEKY().
    pub(crate) fn bfqq_totally_seeky(&self, q: QId) -> bool {
        self.q(q).seek_history == u32::MAX
    }

    /// Kernel: bfq_asymmetric_scenario().
    pub(crate) fn asymmetric_scenario(&self, q: Option<QId>) -> bool {
        let smallest = self.queue_weights_tree.keys().next().copied();
        let smallest_weight = q.is_some_and(|q| {
            let c = self.q(q).weight_counter;
            c.is_some() && c == smallest
        });
        let varied_queue_weights = !smallest_weight && self.queue_weights_tree.len() > 1;
        let b = &self.busy_queues;
        // At least two of the three classes have busy queues.
        let multiple_classes_busy = b.iter().filter(|&&n| n > 0).count() >= 2;
        varied_queue_weights || multiple_classes_busy || self.num_groups_with_pending_reqs > 1
    }

    /// Kernel: bfq_weights_tree_add(): counts the queue under its weight.
    pub(crate) fn weights_tree_add(&mut self, q: QId) {
        if self.q(q).weight_counter.is_some() {
            return;
        }
        let weight = self.qe(q).weight;
        *self.queue_weights_tree.entry(weight).or_insert(0) += 1;
        let bfqq = self.qm(q);
        bfqq.weight_counter = Some(weight);
        bfqq.ref_ += 1;
    }

    /// Kernel: bfq_weights_tree_remove(): the queue is no longer counted; its reference
    /// for the counter is put.
    pub(crate) fn weights_tree_remove(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let Some(weight) = self.q(q).weight_counter else {
            return;
        };
        let count = self
            .queue_weights_tree
            .get_mut(&weight)
            .expect("counted weight");
        *count -= 1;
        if *count == 0 {
            self.queue_weights_tree.remove(&weight);
        }
        self.qm(q).weight_counter = None;
        self.put_queue(q, now, trace);
    }

    /// Kernel: idling_needed_for_service_guarantees().
    pub(crate) fn idling_needed_for_service_guarantees(&self, q: QId) -> bool {
        if self.process_refs(q) == 0 {
            return false;
        }
        let tot_busy = self.tot_busy_queues() as i32;
        let bfqq = self.q(q);
        (bfqq.wr_coeff > 1
            && (self.wr_busy_queues < tot_busy || self.tot_rq_in_driver >= bfqq.dispatched + 4))
            || self.asymmetric_scenario(Some(q))
            || tot_busy == 1
    }

    /// Kernel: idling_boosts_thr_without_issues().
    pub(crate) fn idling_boosts_thr_without_issues(&self, q: QId) -> bool {
        // `!bfqd->hw_tag` is true only once hw_tag was measured 0 (it starts at -1).
        let rot_without_queueing = self.rotational && self.hw_tag == 0;
        if self.process_refs(q) == 0 {
            return false;
        }
        let bfqq = self.q(q);
        let sequential_and_io_bound = !self.bfqq_seeky(q) && bfqq.io_bound && bfqq.has_short_ttime;
        let idling_boosts_thr = rot_without_queueing
            || ((self.rotational || self.hw_tag == 0) && sequential_and_io_bound);
        idling_boosts_thr && self.wr_busy_queues == 0
    }

    /// Kernel: bfq_better_to_idle().
    pub(crate) fn better_to_idle(&self, q: QId) -> bool {
        self.idle_verdict(q).is_ok()
    }

    /// bfq_better_to_idle() with its reason: `Ok(why idle)` or `Err(why not)`.
    pub(crate) fn idle_verdict(&self, q: QId) -> Result<&'static str, &'static str> {
        if self.process_refs(q) == 0 {
            return Err("no_process");
        }
        if self.tun.strict_guarantees {
            return Ok("strict_guarantees");
        }
        let bfqq = self.q(q);
        if self.tun.slice_idle == 0 {
            return Err("slice_idle_0");
        }
        if !bfqq.sync {
            return Err("async");
        }
        if self.class_idle(q) {
            return Err("idle_class");
        }
        if self.idling_boosts_thr_without_issues(q) {
            return Ok("boosts_throughput");
        }
        if self.idling_needed_for_service_guarantees(q) {
            return Ok(if self.asymmetric_scenario(Some(q)) {
                "asymmetric"
            } else {
                "guarantees"
            });
        }
        Err("symmetric_no_gain")
    }

    /// Kernel: bfq_bfqq_must_idle().
    pub(crate) fn must_idle(&self, q: QId) -> bool {
        self.q(q).sort_list.is_empty() && self.better_to_idle(q)
    }

    /// Kernel: bfq_arm_slice_timer().
    pub(crate) fn arm_slice_timer(&mut self, now: Time, trace: &mut dyn Trace) {
        let q = self
            .in_service_queue
            .expect("idling needs a queue in service");
        assert!(
            self.q(q).sort_list.is_empty(),
            "idling armed for a queue with requests"
        );
        self.qm(q).wait_request = true;
        let mut sl = u64::from(self.tun.slice_idle);
        let bfqq = self.q(q);
        if self.bfqq_seeky(q) && bfqq.wr_coeff == 1 && !self.asymmetric_scenario(Some(q)) {
            sl = sl.min(BFQ_MIN_TT);
        } else if bfqq.wr_coeff > 1 {
            sl = sl.max(20_000_000);
        }
        self.last_idling_start = now;
        self.last_idling_start_jiffies = Bfq::jif(now);
        self.idle_timer = Some(now + sl);
        self.record_timer(now, TimerEvent::Arm(now + sl), trace);
        let why = self.idle_verdict(q).unwrap_or("armed");
        self.decide(trace, now, DecisionKind::ArmIdle, Some(q), why, Some(sl));
    }

    /// Kernel: bfq_idle_slice_timer() and bfq_idle_slice_timer_body().
    pub(crate) fn idle_slice_timer(&mut self, now: Time, trace: &mut dyn Trace) {
        let Some(q) = self.in_service_queue else {
            return;
        };
        self.qm(q).wait_request = false;
        self.decide(trace, now, DecisionKind::IdleEnd, Some(q), "timer", None);
        let reason = if self.budget_timeout(q, now) {
            Some(Expiration::BudgetTimeout)
        } else if self.q(q).queued == [0, 0] {
            Some(Expiration::TooIdle)
        } else {
            None
        };
        if let Some(reason) = reason {
            self.bfqq_expire(q, true, reason, now, trace);
        }
        self.schedule_dispatch(now, trace);
    }

    /// Kernel: hrtimer_try_to_cancel(&bfqd->idle_slice_timer).
    pub(crate) fn cancel_idle_timer(&mut self, now: Time, trace: &mut dyn Trace) {
        if self.idle_timer.take().is_some() {
            self.record_timer(now, TimerEvent::Cancel, trace);
        }
    }

    /// Notes an idle-timer event when recording is on.
    pub(crate) fn record_timer(&mut self, now: Time, event: TimerEvent, trace: &mut dyn Trace) {
        trace.timer_event(now, event);
        if let Some(events) = self.timer_events.as_mut() {
            events.push((now, event));
        }
    }

    /// Kernel: bfq_schedule_dispatch() (the re-run is the driver's).
    pub(crate) fn schedule_dispatch(&self, now: Time, trace: &mut dyn Trace) {
        if self.queued != 0 {
            bfq_log!(self, trace, now, format_args!("schedule dispatch"));
        }
    }

    /// Kernel: bfq_update_hw_tag(): after 32 samples with enough work, whether the device
    /// keeps more than 3 requests.
    pub(crate) fn update_hw_tag(&mut self) {
        self.max_rq_in_driver = self.max_rq_in_driver.max(self.tot_rq_in_driver);
        if self.hw_tag == 1 {
            return;
        }
        if self.tot_rq_in_driver + self.queued <= BFQ_HW_QUEUE_THRESHOLD {
            return;
        }
        if let Some(q) = self.in_service_queue {
            let b = self.q(q);
            if b.has_short_ttime
                && b.dispatched + b.queued[0] + b.queued[1] < BFQ_HW_QUEUE_THRESHOLD
                && self.tot_rq_in_driver < BFQ_HW_QUEUE_THRESHOLD
            {
                return;
            }
        }
        let samples = self.hw_tag_samples;
        self.hw_tag_samples += 1;
        if samples < BFQ_HW_QUEUE_SAMPLES {
            return;
        }
        self.hw_tag = i32::from(self.max_rq_in_driver > BFQ_HW_QUEUE_THRESHOLD);
        self.max_rq_in_driver = 0;
        self.hw_tag_samples = 0;
        self.nonrot_with_queueing = self.nonrot() && self.hw_tag == 1;
    }

    /// Kernel: bfq_update_io_thinktime().
    pub(crate) fn update_io_thinktime(&mut self, q: QId, now: Time) {
        let slice_idle = u64::from(self.tun.slice_idle);
        let bfqq = self.qm(q);
        if bfqq.dispatched > 0 || bfqq.busy {
            return;
        }
        let elapsed = now
            .wrapping_sub(bfqq.ttime.last_end_request)
            .min(2 * slice_idle);
        let t = &mut bfqq.ttime;
        t.ttime_samples = (7 * t.ttime_samples + 256) / 8;
        t.ttime_total = (7u64
            .wrapping_mul(t.ttime_total)
            .wrapping_add(256u64.wrapping_mul(elapsed)))
            / 8;
        t.ttime_mean = (t.ttime_total + 128) / t.ttime_samples;
    }

    /// Kernel: bfq_update_io_seektime().
    pub(crate) fn update_io_seektime(&mut self, q: QId, slot: Slot, now: Time) {
        let seeky = self.rq_seeky(self.q(q).last_request_pos, slot);
        let bfqq = self.qm(q);
        bfqq.seek_history = (bfqq.seek_history << 1) | u32::from(seeky);
        let bfqq = self.q(q);
        if bfqq.wr_coeff > 1
            && bfqq.wr_cur_max_time == self.tun.wr_rt_max_time
            && self.bfqq_totally_seeky(q)
        {
            self.soft_rt_seeky_end(q, now);
        }
    }

    /// Kernel: bfq_update_has_short_ttime().
    pub(crate) fn update_has_short_ttime(&mut self, q: QId, now: Time) {
        let bfqq = self.q(q);
        let slice_idle = u64::from(self.tun.slice_idle);
        if !bfqq.sync || self.class_idle(q) || slice_idle == 0 {
            return;
        }
        let j = Bfq::jif(now);
        if time_after_eq(bfqq.split_time.wrapping_add(self.tun.wr_min_idle_time), j) {
            return;
        }
        let exited = bfqq
            .bic
            .and_then(|b| self.bics.get(b))
            .is_some_and(|b| b.exited);
        let has_short_ttime =
            !(exited || (bfqq.ttime.ttime_samples > 80 && bfqq.ttime.ttime_mean > slice_idle >> 1));
        let state_changed = has_short_ttime != bfqq.has_short_ttime;
        self.qm(q).has_short_ttime = has_short_ttime;
        let bfqq = self.q(q);
        if state_changed
            && bfqq.last_serv_time_ns == 0
            && (time_after_eq(
                j,
                bfqq.decrease_time_jif
                    .wrapping_add(super::msecs_to_jiffies(100)),
            ) || !has_short_ttime)
        {
            self.reset_inject_limit(q, now);
        }
    }

    /// Kernel: bfq_update_io_intensity(): I/O-bound unless idle for more than a fifth of
    /// the last 200 ms or so.
    pub(crate) fn update_io_intensity(&mut self, q: QId, now: Time) {
        let bfqq = self.qm(q);
        let tot_io_time = now.wrapping_sub(bfqq.io_start_time);
        if bfqq.sort_list.is_empty() && bfqq.dispatched == 0 {
            bfqq.tot_idle_time = bfqq
                .tot_idle_time
                .wrapping_add(now.wrapping_sub(bfqq.ttime.last_end_request));
        }
        if bfqq.just_created {
            return;
        }
        bfqq.io_bound = bfqq.tot_idle_time.wrapping_mul(5) <= tot_io_time;
        if tot_io_time > 200_000_000 {
            bfqq.io_start_time = now - (tot_io_time >> 1);
            bfqq.tot_idle_time >>= 1;
        }
    }
}
