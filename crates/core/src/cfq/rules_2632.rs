//! Linux 2.6.32's low_latency and idling rules, behind the `rules_2632` switch (seed 003).
//!
//! iosched's CFQ is 4.20's. Seed 003 measured 2.6.32, whose `cfq_latency` did two things: the
//! async depth ramp-up after the last sync completion (`rampup_any_sync`, dispatch.rs), and,
//! in cfq_update_idle_window(), letting a seeky process keep its idle window on an NCQ disk
//! (with low_latency off such a queue lost it). 2.6.32 had none of 4.20's target_latency slice
//! scaling, workload trees, idling on the last SYNC_NOIDLE queue or `deep` (all 2.6.33), nor
//! group_idle (2.6.37). With the switch on:
//! - seekiness is 2.6.32's: a decaying mean of each process's seek distance ([`SeekMean`],
//!   cfq_update_io_seektime(), `CIC_SEEKY`), not 4.20's per-queue history of seeky arrivals;
//! - the idle window follows 2.6.32's cfq_update_idle_window() ([`Cfq::update_idle_window_2632`]);
//! - CFQ idles only on a queue with an idle window (`should_idle`, 2.6.32's
//!   cfq_arm_slice_timer() and cfq_select_queue()), for at most `CFQ_MIN_TT` when its
//!   process is seeky ([`Cfq::queue_idle_ns`]); select-time rule 8 (8e1ac6655104, 2.6.33) and
//!   the group_idle fallback are off;
//! - low_latency does not scale slices (2.6.32's cfq_set_prio_slice(), slice.rs);
//! - every sync queue of a class is on its SYNC tree ([`Cfq::tree_wl_type`]).
//!
//! Choice: 2.6.32 kept async queues on the same single tree as sync ones, ordered by the same
//! key. Here async queues keep their own tree, so 4.20's workload switching between the sync
//! and async trees stays; moving them would replace the sync/async time split as well, which
//! is more than the low_latency rules the seed is about. Close-cooperator choice keeps 4.20's
//! per-queue seek history.
//!
//! Read in 2.6.32's block/cfq-iosched.c (a public 2.6.32.9 tree).

use super::{Cfq, QId, SYNC_WORKLOAD};
use crate::request::{Time, NSEC_PER_MSEC};
use crate::trace::Trace;

/// 8 × 1024 sectors (4 MiB): 2.6.32's `CIC_SEEK_THR`; a process whose mean seek distance
/// exceeds it is seeky.
pub(crate) const CIC_SEEK_THR: u64 = 8 * 1024;
/// 2 ms: 2.6.32's `CFQ_MIN_TT`, a seeky process's think-time bound and idle cap.
pub(crate) const CFQ_MIN_TT_NS: Time = 2 * NSEC_PER_MSEC;

/// A process's seek statistics as 2.6.32 kept them in its io context (`cic->seek_*`,
/// `cic->last_request_pos`), sync and async requests alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)] // `last_request_pos` first: it sits in the context's first line (see `Cic`).
pub(crate) struct SeekMean {
    pub last_request_pos: u64,
    /// Fixed point, 256 per sample, decaying by 7/8 (as think time's samples).
    pub seek_samples: u64,
    pub seek_total: u64,
    /// Sectors.
    pub seek_mean: u64,
}

impl SeekMean {
    /// Kernel 2.6.32: cfq_update_io_seektime(): the distance from the end of the process's
    /// previous request, folded into a decaying mean.
    // Out of line: run at every insertion only under `rules_2632` (issue 34: the default
    // insertion's hot code keeps out what it never runs).
    #[cold]
    #[inline(never)]
    pub(crate) fn update(&mut self, sector: u64) {
        let sdist = if self.last_request_pos == 0 {
            0
        } else {
            self.last_request_pos.abs_diff(sector)
        };
        // One far jump (a page-in, a fragment) must not decide the mean: a sample is
        // capped at four means plus 1 GiB while the record is young, 64 MiB after.
        let slack: u64 = if self.seek_samples <= 60 {
            2 * 1024 * 1024
        } else {
            2 * 1024 * 64
        };
        let sdist = sdist.min(self.seek_mean.saturating_mul(4).saturating_add(slack));
        self.seek_samples = (7 * self.seek_samples + 256) / 8;
        self.seek_total = (7 * self.seek_total + 256 * sdist) / 8;
        self.seek_mean = (self.seek_total + self.seek_samples / 2) / self.seek_samples;
    }

    /// Kernel 2.6.32: sample_valid(cic->seek_samples), from the third sample.
    pub(crate) fn valid(&self) -> bool {
        self.seek_samples > 80
    }

    /// Kernel 2.6.32: CIC_SEEKY().
    pub(crate) fn seeky(&self) -> bool {
        self.seek_mean > CIC_SEEK_THR
    }
}

impl Cfq {
    /// `CFQ_MIN_TT` as 2.6.32 used it, `msecs_to_jiffies(CFQ_MIN_TT)`: with `timer_hz` set
    /// it rounds up to whole jiffies (4 ms at HZ = 250).
    fn min_tt_ns(&self) -> Time {
        if self.tun.timer_hz == 0 {
            return CFQ_MIN_TT_NS;
        }
        let jiffy = crate::request::NSEC_PER_SEC / self.tun.timer_hz;
        CFQ_MIN_TT_NS.div_ceil(jiffy) * jiffy
    }

    /// Kernel 2.6.32: cfq_update_idle_window(). A process that exits, or a seeky one on an
    /// NCQ disk with low_latency off, loses its idle window; otherwise, once its think time
    /// is known, it keeps the window while that think time is at most `slice_idle` (at most
    /// `CFQ_MIN_TT` for a seeky process). This is the rule low_latency changed in 2.6.32.
    #[cold]
    #[inline(never)]
    pub(crate) fn update_idle_window_2632(
        &mut self,
        q: QId,
        c: usize,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let old_idle = self.queues[q].idle_window;
        let cic = &self.cics[c];
        let seeky = cic.seek.seeky();
        // 2.6.32 starts hw_tag at 1 (cfq_init_queue()); iosched's "not yet known" (-1)
        // counts as queueing likewise.
        let ncq = self.hw_tag != 0;
        let enable =
            if cic.exited || self.tun.slice_idle_ns == 0 || (!self.tun.low_latency && ncq && seeky)
            {
                false
            } else if cic.ttime.valid() {
                let bound = if cic.seek.valid() && seeky {
                    self.min_tt_ns()
                } else {
                    self.tun.slice_idle_ns
                };
                cic.ttime.mean() <= bound
            } else {
                old_idle
            };
        if enable != old_idle {
            self.log_q(trace, now, q, format_args!("idle={}", u8::from(enable)));
            self.queues[q].idle_window = enable;
        }
    }

    /// How long CFQ idles for the active queue's process: `slice_idle`; under `rules_2632`
    /// at most `CFQ_MIN_TT` for a seeky process (2.6.32's cfq_arm_slice_timer(): "allow a
    /// little time" for back-to-back seeks).
    pub(crate) fn queue_idle_ns(&self) -> Time {
        let slice_idle = self.tun.slice_idle_ns;
        if !self.tun.rules_2632 {
            return slice_idle;
        }
        match self.active_cic.map(|c| &self.cics[c].seek) {
            Some(seek) if seek.valid() && seek.seeky() => slice_idle.min(self.min_tt_ns()),
            _ => slice_idle,
        }
    }

    /// The workload type that places a queue on a service tree: 4.20's cfqq_type(); under
    /// `rules_2632` every sync queue is SYNC, as 2.6.32 had no SYNC_NOIDLE tree, so a queue
    /// without an idle window is never idled on as the last of its tree.
    pub(crate) fn tree_wl_type(&self, q: QId) -> usize {
        self.tree_wl_type_of(&self.queues[q])
    }

    /// [`Cfq::tree_wl_type`] of a queue already looked up.
    pub(crate) fn tree_wl_type_of(&self, cfqq: &super::queue::CfqQueue) -> usize {
        if self.tun.rules_2632 && cfqq.sync {
            SYNC_WORKLOAD
        } else {
            cfqq.wl_type()
        }
    }
}

/// Scenario tests, each naming the 2.6.32 function whose rule it checks; each was run with
/// its rule removed and failed. Checked against 2.6.32's block/cfq-iosched.c as read.
#[cfg(test)]
mod tests {
    use super::super::service_tree::tree_index;
    use super::super::tests::*;
    use super::super::{Cfq, Dispatch, BE_WORKLOAD, SYNC_NOIDLE_WORKLOAD};
    use super::*;
    use crate::elevator::Elevator;
    use crate::trace::DecisionKind;

    /// 1M sectors (512 MiB) between reads: seeky by both 2.6.32's mean and 4.20's history.
    const FAR: u64 = 1 << 20;

    fn cfq_2632(low_latency: bool) -> Cfq {
        let mut cfq = hdd();
        cfq.set_tunable("rules_2632", "1").unwrap();
        let ll = if low_latency { "1" } else { "0" };
        cfq.set_tunable("low_latency", ll).unwrap();
        cfq
    }

    /// Process 1 reads `n` 8 KiB requests starting `gap` sectors apart (16: back to back);
    /// the disk serves each in 1 ms and the process thinks `think` after each completion.
    /// Larger than a page, each arrival ends idling at once (cfq_rq_enqueued()).
    /// hw_tag is still undecided (fewer than 50 samples), which counts as NCQ as 2.6.32's
    /// initial hw_tag = 1 did. Returns the last completion's time.
    fn one_process(cfq: &mut Cfq, rec: &mut Rec, n: u64, gap: u64, think: Time) -> Time {
        let mut now = UP;
        for i in 0..n {
            let _ = cfq.dispatch(now, rec); // the idle timer fires if it is due
            let mut rq = read(i + 1, 1, FAR + i * gap);
            rq.nr_sectors = 16;
            insert(cfq, rq, now, rec);
            assert_eq!(dispatch_id(cfq, now, rec), i + 1);
            now += MS;
            complete(cfq, rq, now, rec);
            if i + 1 < n {
                now += think;
            }
        }
        now
    }

    fn idle_until(cfq: &mut Cfq, now: Time, rec: &mut Rec) -> Option<Time> {
        match cfq.dispatch(now, rec) {
            Dispatch::IdleUntil(t) => Some(t),
            _ => None,
        }
    }

    /// 2.6.32's cfq_set_prio_slice(): the priority's slice, whatever low_latency says. Five
    /// busy sync queues get 100 ms each (4.20 scales them to 75 ms).
    #[test]
    fn rules_2632_low_latency_does_not_scale_slices() {
        let mut cfq = cfq_2632(true);
        let mut rec = Rec::default();
        for pid in 1..=5u32 {
            let sector = u64::from(pid) * 1_000_000;
            insert(&mut cfq, read(u64::from(pid), pid, sector), 0, &mut rec);
        }
        let id = dispatch_id(&mut cfq, 0, &mut rec);
        complete(&mut cfq, read(id, id as u32, id * 1_000_000), MS, &mut rec);
        assert!(rec.has(MS, "set_slice=100000000"));
    }

    /// 2.6.32's cfq_update_io_seektime(): a decaying mean of the distance from the previous
    /// request's end; once past 60/256 samples a far jump counts as at most four means plus
    /// 64 MiB (131072 sectors).
    #[test]
    fn rules_2632_seek_mean_decays_and_clamps() {
        let mut seek = SeekMean::default();
        for i in 0..3u64 {
            seek.update(1000 + 8 * i);
            seek.last_request_pos = 1000 + 8 * (i + 1);
        }
        assert_eq!((seek.seek_samples, seek.seek_mean), (84, 0));
        assert!(seek.valid() && !seek.seeky());
        seek.update(seek.last_request_pos + 10_000_000);
        // samples (7 * 84 + 256) / 8 = 105; total 256 * 131072 / 8; mean rounded.
        assert_eq!(seek.seek_samples, 105);
        assert_eq!(seek.seek_mean, (32 * 131_072 + 52) / 105);
        assert!(seek.seeky());
    }

    /// 2.6.32's cfq_update_idle_window(): a seeky process on an NCQ disk keeps its idle
    /// window under low_latency and loses it without: the rule the seed's switch changed.
    #[test]
    fn rules_2632_seeky_process_keeps_idle_window_only_under_low_latency() {
        for low_latency in [true, false] {
            let mut cfq = cfq_2632(low_latency);
            let mut rec = Rec::default();
            let end = one_process(&mut cfq, &mut rec, 6, FAR, MS);
            let q = cfq.cic(crate::request::IoContextId(1)).sync_q.unwrap();
            assert_eq!(
                cfq.queues[q].idle_window, low_latency,
                "low_latency {low_latency}"
            );
            assert_eq!(
                idle_until(&mut cfq, end, &mut rec).is_some(),
                low_latency,
                "low_latency {low_latency}"
            );
        }
    }

    /// 2.6.32's cfq_update_idle_window(): a seeky process keeps its idle window only while
    /// it thinks at most CFQ_MIN_TT (2 ms); a sequential one up to slice_idle (8 ms).
    #[test]
    fn rules_2632_seeky_think_time_bound_is_min_tt() {
        let mut cfq = cfq_2632(true);
        let mut rec = Rec::default();
        let end = one_process(&mut cfq, &mut rec, 6, FAR, 3 * MS);
        assert_eq!(idle_until(&mut cfq, end, &mut rec), None);
        let mut cfq = cfq_2632(true);
        let mut rec = Rec::default();
        let end = one_process(&mut cfq, &mut rec, 6, 16, 3 * MS);
        assert_eq!(idle_until(&mut cfq, end, &mut rec), Some(end + 8 * MS));
    }

    /// 2.6.32's cfq_arm_slice_timer(): the idle timer for a seeky process is
    /// min(slice_idle, CFQ_MIN_TT).
    #[test]
    fn rules_2632_seeky_idle_capped_at_min_tt() {
        for (slice_idle_us, armed) in [("8000", 2 * MS), ("1000", MS)] {
            let mut cfq = cfq_2632(true);
            cfq.set_tunable("slice_idle_us", slice_idle_us).unwrap();
            let mut rec = Rec::default();
            let end = one_process(&mut cfq, &mut rec, 6, FAR, MS / 2);
            assert_eq!(idle_until(&mut cfq, end, &mut rec), Some(end + armed));
            let arm = rec.decision(DecisionKind::ArmIdle).unwrap();
            assert_eq!((arm.0, arm.4), (end, Some(armed)));
        }
    }

    /// 2.6.32's cfq_arm_slice_timer() and cfq_select_queue(): no idling on a queue without an
    /// idle window — neither as the last queue of its tree (4.20's cfq_should_idle()) nor
    /// by group_idle (2.6.37), though group_idle keeps its 8 ms default.
    #[test]
    fn rules_2632_idles_only_with_idle_window() {
        let mut cfq = cfq_2632(false);
        let mut rec = Rec::default();
        let end = one_process(&mut cfq, &mut rec, 6, FAR, MS);
        assert_eq!(idle_until(&mut cfq, end, &mut rec), None);
        assert!(rec
            .decision(DecisionKind::ArmIdle)
            .is_none_or(|arm| arm.0 < end));
    }

    /// 2.6.32's cfq_select_queue() waits while a dry queue with an idle window has a request
    /// in flight; select-time rule 8 (8e1ac6655104, 2.6.33), which would clear a seeky
    /// queue's window early in its slice and hand the disk to a waiting process, is off.
    #[test]
    fn rules_2632_dry_seeky_queue_keeps_disk_while_in_flight() {
        let mut cfq = cfq_2632(true);
        let mut rec = Rec::default();
        let mut now = UP;
        for i in 0..6u64 {
            let mut rq = read(i + 1, 1, FAR + i * FAR);
            rq.nr_sectors = 16;
            insert(&mut cfq, rq, now, &mut rec);
            if i == 0 {
                insert(&mut cfq, read(100, 2, 9 * FAR), now, &mut rec);
            }
            assert_eq!(dispatch_id(&mut cfq, now, &mut rec), i + 1);
            // The driver asks again while the read is in flight and process 2 waits; by the
            // sixth read process 1 is seeky by 4.20's history as well.
            let again = cfq.dispatch(now, &mut rec);
            assert!(!matches!(again, Dispatch::Request(_)), "read {i}");
            now += MS;
            complete(&mut cfq, rq, now, &mut rec);
            now += MS;
        }
    }

    /// 2.6.32 had one service tree: a sync queue without an idle window is queued on the
    /// SYNC tree, not on 4.20's SYNC_NOIDLE one.
    #[test]
    fn rules_2632_sync_queues_share_one_tree() {
        for rules in ["1", "0"] {
            let mut cfq = cfq_2632(false);
            cfq.set_tunable("rules_2632", rules).unwrap();
            let mut rec = Rec::default();
            // Nine far reads: seeky by 4.20's history too, so both rule sets drop the window.
            let end = one_process(&mut cfq, &mut rec, 9, FAR, MS);
            // Another process takes the disk, so the reader's queue leaves the service tree
            // and is queued anew by its next read.
            let t = end + 20 * MS;
            let other = read(200, 2, 8 * FAR);
            insert(&mut cfq, other, t, &mut rec);
            assert_eq!(dispatch_id(&mut cfq, t, &mut rec), 200);
            complete(&mut cfq, other, t + MS, &mut rec);
            insert(&mut cfq, read(100, 1, 4 * FAR), t + 2 * MS, &mut rec);
            let q = cfq.cic(crate::request::IoContextId(1)).sync_q.unwrap();
            assert!(!cfq.queues[q].idle_window);
            let wl = if rules == "1" {
                SYNC_WORKLOAD
            } else {
                SYNC_NOIDLE_WORKLOAD
            };
            assert_eq!(
                cfq.queues[q].service_tree.map(usize::from),
                Some(tree_index(BE_WORKLOAD, wl))
            );
        }
    }
}
