//! Weight raising under `low_latency`: interactive and soft real-time queues get their weight
//! multiplied for a while, so they are served promptly among heavy ones.
//!
//! *Interactive*: a sync queue of default weight that becomes busy after being idle for
//! `wr_min_idle_time` (2 s) and not born in a large burst gets `wr_coeff` (30) for a
//! duration that shrinks as the peak rate grows (3..25 s; [`Bfq::wr_duration`]), or until
//! it received 120000 sectors of raised service. *Soft real-time*: a queue whose I/O stays
//! under `wr_max_softrt_rate` (7000 sectors/s), measured by `soft_rt_next_start`, gets
//! `wr_coeff * 100` for `wr_rt_max_time` (300 ms) at each arrival on time; an interactive
//! queue that turns soft real-time goes back to interactive raising if that period has not
//! ended. An async queue busy for long (`wr_min_inter_arr_async`) is raised too.
//!
//! Kernel: bfq_wr_duration(), switch_back_to_interactive_wr(),
//! bfq_update_bfqq_wr_on_rq_arrival(), bfq_bfqq_end_wr(), bfq_end_wr(), bfq_update_wr_data(),
//! bfq_bfqq_softrt_next_start(), bfq_smallest_from_now(), bfq_bfqq_idle_for_long_time().

use super::{time_after, Bfq, QId, MAX_JIFFY_OFFSET};
use crate::deadline::tunables::{jiffies_to_msecs, msecs_to_jiffies};
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

/// Kernel: BFQ_SOFTRT_WEIGHT_FACTOR.
pub(crate) const BFQ_SOFTRT_WEIGHT_FACTOR: u32 = 100;
/// Sectors of raised service an interactive queue may receive. Kernel: max_service_from_wr.
const MAX_SERVICE_FROM_WR: u64 = 120_000;
/// Kernel: HZ.
const HZ: u64 = 250;

impl Bfq {
    /// Kernel: bfq_smallest_from_now().
    pub(crate) fn smallest_from_now(now: Time) -> u64 {
        Bfq::jif(now).wrapping_sub(MAX_JIFFY_OFFSET)
    }

    /// Kernel: bfq_wr_duration(): jiffies of interactive raising.
    pub(crate) fn wr_duration(&self) -> u64 {
        let dur = self.rate_dur_prod / u64::from(self.peak_rate);
        dur.clamp(msecs_to_jiffies(3000), msecs_to_jiffies(25000))
    }

    /// Kernel: switch_back_to_interactive_wr().
    fn switch_back_to_interactive_wr(&mut self, q: QId) {
        let (coeff, dur) = (self.tun.wr_coeff, self.wr_duration());
        let bfqq = self.qm(q);
        bfqq.wr_coeff = coeff;
        bfqq.wr_cur_max_time = dur;
        bfqq.last_wr_start_finish = bfqq.wr_start_at_switch_to_srt;
    }

    /// The totally-seeky branch of bfq_update_io_seektime(): a soft real-time queue doing
    /// only seeks loses soft real-time raising.
    pub(crate) fn soft_rt_seeky_end(&mut self, q: QId, now: Time) {
        let j = Bfq::jif(now);
        if time_after(
            j,
            self.q(q)
                .wr_start_at_switch_to_srt
                .wrapping_add(self.wr_duration()),
        ) {
            self.bfqq_end_wr(q, now, &mut crate::trace::NoTrace);
        } else {
            self.switch_back_to_interactive_wr(q);
            self.qem(q).prio_changed = true;
        }
    }

    /// Kernel: bfq_bfqq_idle_for_long_time().
    pub(crate) fn idle_for_long_time(&self, q: QId, now: Time) -> bool {
        let bfqq = self.q(q);
        bfqq.dispatched == 0
            && time_after(
                Bfq::jif(now),
                bfqq.budget_timeout.wrapping_add(self.tun.wr_min_idle_time),
            )
    }

    /// Kernel: bfq_update_bfqq_wr_on_rq_arrival().
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn update_wr_on_rq_arrival(
        &mut self,
        q: QId,
        old_wr_coeff: u32,
        wr_or_deserves_wr: bool,
        interactive: bool,
        in_burst: bool,
        soft_rt: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let j = Bfq::jif(now);
        let (wr_coeff, rt_max) = (self.tun.wr_coeff, self.tun.wr_rt_max_time);
        if old_wr_coeff == 1 && wr_or_deserves_wr {
            if interactive {
                let dur = self.wr_duration();
                let bfqq = self.qm(q);
                bfqq.service_from_wr = 0;
                bfqq.wr_coeff = wr_coeff;
                bfqq.wr_cur_max_time = dur;
            } else {
                let bfqq = self.qm(q);
                bfqq.wr_start_at_switch_to_srt = Bfq::smallest_from_now(now);
                bfqq.wr_coeff = wr_coeff * BFQ_SOFTRT_WEIGHT_FACTOR;
                bfqq.wr_cur_max_time = rt_max;
            }
            let cap = 2 * self.min_budget();
            let b = self.qe(q).budget.min(cap);
            self.qem(q).budget = b;
            let kind = if interactive {
                "interactive"
            } else {
                "soft_rt"
            };
            let dur = self.q(q).wr_cur_max_time * 4_000_000;
            self.decide(
                trace,
                now,
                DecisionKind::WeightRaise,
                Some(q),
                kind,
                Some(dur),
            );
        } else if old_wr_coeff > 1 {
            if interactive {
                let dur = self.wr_duration();
                let bfqq = self.qm(q);
                bfqq.wr_coeff = wr_coeff;
                bfqq.wr_cur_max_time = dur;
            } else if in_burst {
                self.qm(q).wr_coeff = 1;
                self.decide(
                    trace,
                    now,
                    DecisionKind::WeightRaise,
                    Some(q),
                    "ended_in_burst",
                    None,
                );
            } else if soft_rt {
                let bfqq = self.qm(q);
                if bfqq.wr_cur_max_time != rt_max {
                    bfqq.wr_start_at_switch_to_srt = bfqq.last_wr_start_finish;
                    bfqq.wr_cur_max_time = rt_max;
                    bfqq.wr_coeff = wr_coeff * BFQ_SOFTRT_WEIGHT_FACTOR;
                }
                bfqq.last_wr_start_finish = j;
            }
        }
    }

    /// Kernel: bfq_bfqq_end_wr().
    pub(crate) fn bfqq_end_wr(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let j = Bfq::jif(now);
        let rt_max = self.tun.wr_rt_max_time;
        let bfqq = self.qm(q);
        if bfqq.wr_cur_max_time != rt_max {
            bfqq.soft_rt_next_start = j;
        }
        let busy = bfqq.busy;
        let was = bfqq.wr_coeff;
        bfqq.wr_coeff = 1;
        bfqq.wr_cur_max_time = 0;
        bfqq.last_wr_start_finish = j;
        if busy {
            self.wr_busy_queues -= 1;
        }
        self.qem(q).prio_changed = true;
        if was > 1 {
            self.decide(
                trace,
                now,
                DecisionKind::WeightRaise,
                Some(q),
                "ended",
                None,
            );
        }
    }

    /// Kernel: bfq_end_wr(): `low_latency` turned off ends every raising.
    pub(crate) fn end_wr(&mut self, now: Time, trace: &mut dyn Trace) {
        let listed: Vec<QId> = self
            .active_list
            .iter()
            .chain(self.idle_list.iter())
            .collect();
        for q in listed {
            self.bfqq_end_wr(q, now, trace);
        }
        // Kernel: bfq_end_wr_async(): every blkg's group's async queues, then the root
        // group's again (the queue's blkg_list holds the root's blkg too): a busy root async
        // queue is counted out of wr_busy_queues twice more, as in the kernel.
        for g in (0..self.groups.len()).chain([0]) {
            let group = &self.groups[g];
            let asyncs: Vec<QId> = group
                .async_bfqq
                .iter()
                .flatten()
                .flatten()
                .copied()
                .chain(group.async_idle_bfqq)
                .collect();
            for q in asyncs {
                self.bfqq_end_wr(q, now, trace);
            }
        }
    }

    /// Kernel: bfq_update_wr_data(): at each dispatch of the queue in service, ends raising
    /// that has run its time (or its service), and applies a weight change.
    pub(crate) fn update_wr_data(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let j = Bfq::jif(now);
        if self.q(q).wr_coeff > 1 {
            let b = self.q(q);
            let e = self.qe(q);
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!(
                    "raising period dur {}/{} msec, old coeff {}, w {}({})",
                    jiffies_to_msecs(j.wrapping_sub(b.last_wr_start_finish)),
                    jiffies_to_msecs(b.wr_cur_max_time),
                    b.wr_coeff,
                    e.weight,
                    e.orig_weight
                ),
            );
            if self.qe(q).prio_changed {
                bfq_log_q!(
                    self,
                    trace,
                    now,
                    q,
                    format_args!("WARN: pending prio change")
                );
            }
            let b = self.q(q);
            if b.in_large_burst {
                self.bfqq_end_wr(q, now, trace);
            } else if time_after(j, b.last_wr_start_finish.wrapping_add(b.wr_cur_max_time)) {
                if b.wr_cur_max_time != self.tun.wr_rt_max_time
                    || time_after(
                        j,
                        b.wr_start_at_switch_to_srt.wrapping_add(self.wr_duration()),
                    )
                {
                    self.bfqq_end_wr(q, now, trace);
                } else {
                    self.switch_back_to_interactive_wr(q);
                    self.qem(q).prio_changed = true;
                }
            }
            let b = self.q(q);
            if b.wr_coeff > 1
                && b.wr_cur_max_time != self.tun.wr_rt_max_time
                && b.service_from_wr > MAX_SERVICE_FROM_WR
            {
                self.bfqq_end_wr(q, now, trace);
            }
        }
        let e = self.qe(q);
        if (e.weight > e.orig_weight) != (self.q(q).wr_coeff > 1) {
            let ent = self.q(q).entity;
            let st = self.entity_service_tree(ent);
            self.update_weight_prio(st, ent, false, now, trace);
        }
    }

    /// Kernel: bfq_bfqq_softrt_next_start(): the earliest time a new arrival still counts as
    /// soft real-time (service so far at `wr_max_softrt_rate`).
    pub(crate) fn softrt_next_start(&self, q: QId, now: Time) -> u64 {
        let b = self.q(q);
        let by_rate = b
            .last_idle_bklogged
            .wrapping_add(HZ * b.service_from_backlogged / self.tun.wr_max_softrt_rate);
        // nsecs_to_jiffies() truncates at HZ=250.
        let slice = u64::from(self.tun.slice_idle) / 4_000_000;
        let soon = Bfq::jif(now) + slice + 4;
        b.soft_rt_next_start.max(by_rate).max(soon)
    }
}
