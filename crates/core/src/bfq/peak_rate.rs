//! Peak-rate estimation: how fast the device serves when kept busy, which sets the largest
//! budget (`bfq_max_budget`: what the peak rate serves in `timeout_sync`) and the duration of
//! interactive weight raising.
//!
//! Dispatches are sampled into an observation interval: at least 32 samples over at least
//! 300 ms, closed after 1 s or when the device went idle for 100 ms. The interval's rate
//! (sectors/µs << 16) enters a low-pass filter whose weight grows with the share of
//! sequential samples and the interval's length; a mostly random interval that does not beat
//! the estimate, or an impossible rate (over 20 sectors/µs), is discarded.
//!
//! Kernel: bfq_update_peak_rate(), bfq_update_rate_reset(), bfq_reset_rate_computation(),
//! update_thr_responsiveness_params(), bfq_calc_max_budget().

use super::budget::BFQ_RATE_SHIFT;
use super::{Bfq, Slot, BFQ_MIN_TT};
use crate::request::Time;
use crate::trace::Trace;

/// Kernel: BFQ_RATE_MIN_SAMPLES, BFQ_RATE_MIN_INTERVAL, BFQ_RATE_REF_INTERVAL.
const BFQ_RATE_MIN_SAMPLES: i32 = 32;
const BFQ_RATE_MIN_INTERVAL: u64 = 300_000_000;
const BFQ_RATE_REF_INTERVAL: u64 = 1_000_000_000;

impl Bfq {
    /// Kernel: bfq_reset_rate_computation(): a new interval starts at `slot`'s dispatch.
    pub(crate) fn reset_rate_computation(
        &mut self,
        slot: Option<Slot>,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        if let Some(slot) = slot {
            self.first_dispatch = now;
            self.last_dispatch = now;
            self.peak_rate_samples = 1;
            self.sequential_samples = 0;
            let sectors = self.h(slot).rq.nr_sectors;
            self.tot_sectors_dispatched = u64::from(sectors);
            self.last_rq_max_size = sectors;
        } else {
            self.peak_rate_samples = 0;
        }
        bfq_log!(
            self,
            trace,
            now,
            format_args!(
                "reset_rate_computation at end, sample {}/{} tot_sects {}",
                self.peak_rate_samples, self.sequential_samples, self.tot_sectors_dispatched
            ),
        );
    }

    /// Kernel: bfq_update_rate_reset(): folds the interval's rate into the estimate.
    pub(crate) fn update_rate_reset(
        &mut self,
        slot: Option<Slot>,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        if self.peak_rate_samples >= BFQ_RATE_MIN_SAMPLES
            && self.delta_from_first >= BFQ_RATE_MIN_INTERVAL
        {
            self.fold_rate(now, trace);
        }
        self.reset_rate_computation(slot, now, trace);
    }

    /// The filter step of bfq_update_rate_reset().
    fn fold_rate(&mut self, now: Time, trace: &mut dyn Trace) {
        self.delta_from_first = self
            .delta_from_first
            .max(self.last_completion.wrapping_sub(self.first_dispatch));
        let usecs = self.delta_from_first / 1000;
        let mut rate = ((self.tot_sectors_dispatched << BFQ_RATE_SHIFT) / usecs) as u32;
        let mostly_random = self.sequential_samples < ((3 * self.peak_rate_samples) >> 2) as u32;
        if (mostly_random && rate <= self.peak_rate) || rate > 20 << BFQ_RATE_SHIFT {
            return;
        }
        let weight = (9 * self.sequential_samples) / self.peak_rate_samples as u32;
        let weight =
            8u32.min((u64::from(weight) * self.delta_from_first / BFQ_RATE_REF_INTERVAL) as u32);
        let divisor = 10 - weight;
        self.peak_rate *= divisor - 1;
        self.peak_rate /= divisor;
        rate /= divisor;
        self.peak_rate += rate;
        self.peak_rate = self.peak_rate.max(1);
        // Kernel: update_thr_responsiveness_params().
        if self.tun.user_max_budget == 0 {
            self.bfq_max_budget = self.calc_max_budget();
            bfq_log!(
                self,
                trace,
                now,
                format_args!("new max_budget = {}", self.bfq_max_budget),
            );
        }
    }

    /// Kernel: bfq_update_peak_rate(): samples one dispatch.
    pub(crate) fn update_peak_rate(&mut self, slot: Slot, now: Time, trace: &mut dyn Trace) {
        if self.peak_rate_samples == 0 {
            bfq_log!(
                self,
                trace,
                now,
                format_args!(
                    "update_peak_rate: goto reset, samples {}",
                    self.peak_rate_samples
                ),
            );
            self.reset_rate_computation(Some(slot), now, trace);
        } else if now.wrapping_sub(self.last_dispatch) > 100_000_000 && self.tot_rq_in_driver == 0 {
            self.update_rate_reset(Some(slot), now, trace);
        } else {
            self.peak_rate_samples += 1;
            if (self.tot_rq_in_driver > 0 || now.wrapping_sub(self.last_completion) < BFQ_MIN_TT)
                && !self.rq_seeky(self.last_position, slot)
            {
                self.sequential_samples += 1;
            }
            let sectors = self.h(slot).rq.nr_sectors;
            self.tot_sectors_dispatched += u64::from(sectors);
            self.last_rq_max_size = if self.peak_rate_samples % 32 != 0 {
                sectors.max(self.last_rq_max_size)
            } else {
                sectors
            };
            self.delta_from_first = now.wrapping_sub(self.first_dispatch);
            if self.delta_from_first >= BFQ_RATE_REF_INTERVAL {
                self.update_rate_reset(Some(slot), now, trace);
            }
        }
        let rq = self.h(slot).rq;
        self.last_position = rq.sector + u64::from(rq.nr_sectors);
        if Some(self.h(slot).bfqq) == self.in_service_queue {
            self.in_serv_last_pos = self.last_position;
        }
        self.last_dispatch = now;
    }
}
