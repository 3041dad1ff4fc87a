//! Per-request heuristics: think time, seekiness, the idle window and the `deep` flag.
//!
//! Think time is a decaying average of the gap between a completion and the next arrival,
//! kept for each process, each service tree and each group. Seekiness is a 32-bit shift
//! register of "was this arrival far from the last one". Together with `deep` (the queue once
//! held ≥ 4 requests) they decide `idle_window`, i.e. whether CFQ idles for the queue.
//! Kernel: __cfq_update_io_thinktime(), cfq_update_io_thinktime(), cfq_update_io_seektime(),
//! cfq_update_idle_window(), CFQQ_SEEKY().

use super::{Cfq, QId};
use crate::request::{Request, Time};
use crate::trace::Trace;

/// 800 sectors (400 KiB): a rotational arrival farther than this from the last is seeky.
pub(crate) const CFQQ_SEEK_THR: u64 = 8 * 100;
/// 64 sectors (32 KiB): on non-rotational devices a smaller request counts as seeky.
pub(crate) const CFQQ_SECT_THR_NONROT: u64 = 64;
/// A queue holding this many requests is marked `deep`.
pub(crate) const DEEP_QUEUED: u32 = 4;

/// Where a record's sample weight settles: `(7 * 249 + 256) / 8 == 249`, reached from 0.
const SETTLED_SAMPLES: u64 = 249;

/// Kernel: struct cfq_ttime. Its `ttime_mean` is [`Ttime::mean`], worked out when read:
/// the kernel divides at every sample (three or four a request), and nearly all are never
/// read (issue 34); the quotient is the same whenever it is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ttime {
    pub last_end_request: Time,
    pub ttime_total: u64,
    pub ttime_samples: u64,
}

impl Ttime {
    pub(crate) fn starting(now: Time) -> Ttime {
        Ttime {
            last_end_request: now,
            ..Ttime::default()
        }
    }

    /// Kernel: sample_valid(): valid from the third sample (32, 60, 84 > 80).
    pub(crate) fn valid(&self) -> bool {
        self.ttime_samples > 80
    }

    /// Kernel: __cfq_update_io_thinktime(). Fixed point: samples count in 1/256 units.
    pub(crate) fn update(&mut self, now: Time, clamp: Time) {
        let elapsed = now.wrapping_sub(self.last_end_request).min(2 * clamp);
        self.sample(elapsed);
    }

    /// Folds one observation into the decaying average (weight 1/8, as think time does).
    pub(crate) fn sample(&mut self, value: u64) {
        // The weight climbs from 0 (32, 60, 84, ..., 248) to 249, where the kernel's
        // formula gives 249 again: from there on it is left as it stands (issue 34: four
        // samples a request; `sample_weight_settles_at_249`).
        if self.ttime_samples < SETTLED_SAMPLES {
            self.ttime_samples = (7 * self.ttime_samples + 256) / 8;
        }
        self.ttime_total = (7 * self.ttime_total + 256 * value) / 8;
    }

    /// Kernel: `ttime_mean`, as the last sample set it (0 before any sample).
    pub(crate) fn mean(&self) -> u64 {
        if self.ttime_samples == 0 {
            return 0;
        }
        (self.ttime_total + 128) / self.ttime_samples
    }
}

/// Kernel: cfq_update_io_seektime() on the queue itself.
#[inline]
fn seek_sample(cfqq: &mut super::queue::CfqQueue, rq: &Request, rotational: bool) {
    let sdist = if cfqq.last_request_pos != 0 {
        cfqq.last_request_pos.abs_diff(rq.sector)
    } else {
        0
    };
    let bit = if rotational {
        sdist > CFQQ_SEEK_THR
    } else {
        u64::from(rq.nr_sectors) < CFQQ_SECT_THR_NONROT
    };
    let dropped = (cfqq.seek_history >> 31) as u8;
    cfqq.seek_history = (cfqq.seek_history << 1) | u32::from(bit);
    cfqq.seeky_arrivals = cfqq.seeky_arrivals + u8::from(bit) - dropped;
}

/// Kernel: CFQQ_SEEKY() of a history (CFQ's queues keep their count, `CfqQueue::seeky`).
pub(crate) fn seeky(history: u32) -> bool {
    history.count_ones() > 32 / 8
}

/// Kernel: req_noidle(): a sync write whose submitter did not promise more (no REQ_IDLE).
pub(crate) fn req_noidle(rq: &Request) -> bool {
    rq.op == crate::request::Op::Write && rq.flags.sync && !rq.flags.idle
}

impl Cfq {
    /// cfq_rq_enqueued()'s per-arrival bookkeeping of queue `q` and context `c`, in the
    /// kernel's order: think time, seekiness (and 2.6.32's seek mean), the idle window, then
    /// the last positions. One look-up each of the queue, the context and the group (issue
    /// 34: the four helpers looked each up again, ~40 instructions a request in index
    /// checks).
    /// Kernel: cfq_update_io_thinktime(), cfq_update_io_seektime(), cfq_update_idle_window().
    #[inline]
    pub(crate) fn update_on_arrival(
        &mut self,
        q: QId,
        c: usize,
        rq: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let slice_idle = self.tun.slice_idle_ns;
        let cfqq = &mut self.queues[q];
        let cic = &mut self.cics[c];
        let cfqg = &mut self.groups[cfqq.group];
        if cfqq.sync {
            cic.ttime.update(now, slice_idle);
            if let Some(st) = cfqq.service_tree {
                cfqg.trees[usize::from(st)].ttime.update(now, slice_idle);
            }
        }
        cfqg.ttime.update(now, self.tun.group_idle_ns);
        seek_sample(cfqq, rq, self.rotational);
        let end = rq.end_sector();
        if self.tun.rules_2632 {
            cic.seek.update(rq.sector);
        }
        if cfqq.sync && !cfqq.class_idle() {
            if self.tun.rules_2632 || slice_idle != 0 {
                self.update_idle_window(q, c, now, trace);
            } else {
                // `slice_idle = 0` turns idling off whatever the rest says (see
                // update_idle_window): only the `deep` mark and the change remain.
                if self.tun.deep_mark && cfqq.queued[0] + cfqq.queued[1] >= DEEP_QUEUED {
                    cfqq.deep = true;
                }
                if cfqq.idle_window {
                    self.log_q(trace, now, q, format_args!("idle=0"));
                    self.queues[q].idle_window = false;
                }
            }
        }
        self.queues[q].last_request_pos = end;
        self.cics[c].seek.last_request_pos = end;
    }

    /// Kernel: cfq_update_idle_window(), with the seed-000 switches.
    pub(crate) fn update_idle_window(
        &mut self,
        q: QId,
        c: usize,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let cfqq = &self.queues[q];
        if !cfqq.sync || cfqq.class_idle() {
            return;
        }
        if self.tun.rules_2632 {
            // 2.6.32 had no `deep`: its rule reads the process's seek mean (rules_2632.rs).
            self.update_idle_window_2632(q, c, now, trace);
            return;
        }
        let old_idle = cfqq.idle_window;
        if self.tun.deep_mark && cfqq.queued[0] + cfqq.queued[1] >= DEEP_QUEUED {
            self.queues[q].deep = true;
        }
        // `slice_idle = 0` (non-rotational devices) turns idling off whatever the rest says:
        // answered before the rest is worked out.
        let enable = self.tun.slice_idle_ns != 0 && self.idle_window_rule(q, c, old_idle);
        if old_idle != enable {
            self.log_q(trace, now, q, format_args!("idle={}", u8::from(enable)));
            self.queues[q].idle_window = enable;
        }
    }

    /// cfq_update_idle_window()'s choice with `slice_idle` set, from the idle window `old`.
    fn idle_window_rule(&self, q: QId, c: usize, old: bool) -> bool {
        let mut enable = old;
        let cfqq = &self.queues[q];
        let is_seeky = cfqq.seeky();
        let (exited, ttime) = (self.cics[c].exited, self.cics[c].ttime);
        // Seed 000 fix (iosched's reading of Patlasov's two complaints about 8e1ac6655104:
        // the flags outlive the condition until select time, and "slice half used" misjudges
        // a slow disk as fast): decide at every arrival, from what the device actually does.
        // A deep seeky queue keeps its idle window only while the device is slower than the
        // queue: serving the queue's backlog (its per-request device cost — time in the
        // device over the requests the device held — times the requests it has queued and in
        // flight, at least the deep threshold) takes longer than the idle window. Then the
        // device is the bottleneck and idling costs little; when the device would clear the
        // backlog faster than it idles, idling wastes it and the queue turns SYNC_NOIDLE at
        // once, so others may preempt it. Before the cost is measured the kernel's rule holds.
        let backlog =
            u64::from((cfqq.queued[0] + cfqq.queued[1] + cfqq.dispatched).max(DEEP_QUEUED));
        let device_slower_than_process = !cfqq.service_time.valid()
            || cfqq.service_time.mean() * backlog > self.tun.slice_idle_ns;
        let deep_excuses_seeks =
            cfqq.deep && (!self.tun.deep_seeky_fix || device_slower_than_process);
        let next_noidle = self.next_pending(q).is_some_and(|p| req_noidle(&p.rq));
        if next_noidle || exited || self.tun.slice_idle_ns == 0 || (!deep_excuses_seeks && is_seeky)
        {
            enable = false;
        } else if ttime.valid() {
            enable = ttime.mean() <= self.tun.slice_idle_ns;
        }
        enable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples reach validity on the third update (32, 60, 84), and the mean is in ns.
    #[test]
    fn think_time_valid_after_three_samples() {
        let mut t = Ttime::starting(0);
        t.update(1_000_000, 8_000_000);
        assert!(!t.valid());
        t.last_end_request = 2_000_000;
        t.update(3_000_000, 8_000_000);
        assert!(!t.valid());
        t.last_end_request = 4_000_000;
        t.update(5_000_000, 8_000_000);
        assert_eq!(t.ttime_samples, 84);
        assert!(t.valid());
        assert_eq!(t.mean(), (t.ttime_total + 128) / 84);
    }

    /// The sample weight left alone once settled is the kernel's at every step: from 0 it
    /// climbs to 249 and the formula then keeps it there.
    #[test]
    fn sample_weight_settles_at_249() {
        let mut t = Ttime::starting(0);
        let mut kernel = 0u64;
        for i in 0..200u64 {
            t.sample(i * 1000);
            kernel = (7 * kernel + 256) / 8;
            assert_eq!(t.ttime_samples, kernel, "sample {i}");
        }
        assert_eq!(kernel, SETTLED_SAMPLES);
        assert_eq!((7 * SETTLED_SAMPLES + 256) / 8, SETTLED_SAMPLES);
    }

    /// The queue's count of seeky arrivals follows its 32-arrival history as bits shift
    /// in and out (a pattern of runs longer and shorter than the window), and answers
    /// CFQQ_SEEKY() as the history's population count does.
    #[test]
    fn seeky_count_follows_the_history() {
        let mut cfqq = super::super::queue::CfqQueue::default();
        let mut rq = crate::testing::request(1, crate::request::Op::Read, 0, 8, 1);
        for i in 0..400u64 {
            rq.nr_sectors = if (i / 7 + i / 40) % 3 == 0 { 128 } else { 8 };
            seek_sample(&mut cfqq, &rq, false);
            assert_eq!(
                u32::from(cfqq.seeky_arrivals),
                cfqq.seek_history.count_ones()
            );
            assert_eq!(cfqq.seeky(), seeky(cfqq.seek_history));
        }
    }

    #[test]
    fn seeky_needs_five_of_thirty_two() {
        assert!(!seeky(0b1111));
        assert!(seeky(0b11111));
    }
}
