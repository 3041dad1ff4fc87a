//! Think time as a distribution, not a mean.
//!
//! CFQ keeps a decaying *mean* of the gap between a completion and the next arrival
//! (`cfq::think_time::Ttime`) and idles when it is under `slice_idle`. A mean cannot tell a
//! reader that always pauses 6 ms from one that pauses 0 ms seven times and 50 ms the
//! eighth: both average 6 ms, and CFQ idles 8 ms after each burst for nothing. Here each
//! queue and group keeps a decaying histogram of its gaps in power-of-two buckets; the idle
//! window is the gap below which a chosen fraction of them fall (the `idle_quantile`), or
//! none when that fraction is only reached past the longest window worth waiting.

use crate::request::{Time, NSEC_PER_USEC};

/// Buckets: `[0, 2 us)`, `[2, 4 us)`, ... `[2^15, 2^16 us)`; the last also holds longer gaps.
const BUCKETS: usize = 17;
/// Fixed point of the decaying counts: a fresh sample weighs 256.
const ONE: u32 = 256;
/// Samples before the distribution is trusted (CFQ's sample_valid() waits for about three).
const VALID_SAMPLES: u32 = 3;

/// A decaying histogram of think times. Each sample scales the old counts by 7/8, as CFQ's
/// average does, so the distribution follows a change of pattern within a few dozen gaps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThinkDist {
    counts: [u32; BUCKETS],
    samples: u32,
}

/// The bucket of a gap: 0 below 2 us, then one per doubling.
fn bucket(gap_ns: Time) -> usize {
    let us = gap_ns / NSEC_PER_USEC;
    if us < 2 {
        return 0;
    }
    ((63 - us.leading_zeros()) as usize).min(BUCKETS - 1)
}

/// The upper edge of a bucket, in ns.
fn upper_ns(b: usize) -> Time {
    (2u64 << b) * NSEC_PER_USEC
}

impl ThinkDist {
    /// Folds one gap in.
    pub fn sample(&mut self, gap_ns: Time) {
        for c in &mut self.counts {
            *c -= *c / 8;
        }
        self.counts[bucket(gap_ns)] += ONE;
        self.samples = self.samples.saturating_add(1);
    }

    /// Whether enough gaps were seen to decide on.
    pub fn valid(&self) -> bool {
        self.samples >= VALID_SAMPLES
    }

    /// The smallest bucket edge under which `pct` % of the (weighted) gaps fall; `None` when
    /// the fraction is only reached in the last, open bucket.
    pub fn quantile_ns(&self, pct: u64) -> Option<Time> {
        let total: u64 = self.counts.iter().map(|&c| u64::from(c)).sum();
        if total == 0 {
            return None;
        }
        let mut below = 0u64;
        for (b, &c) in self.counts.iter().enumerate().take(BUCKETS - 1) {
            below += u64::from(c);
            if below * 100 >= total * pct {
                return Some(upper_ns(b));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::NSEC_PER_MSEC;

    /// The bursty reader: seven short gaps and one of 50 ms per burst. The 75 % window is
    /// the short gaps' bucket, where CFQ's mean (about 6 ms) would idle 8 ms per burst.
    #[test]
    fn bursty_gaps_give_a_short_window() {
        let mut d = ThinkDist::default();
        for _ in 0..4 {
            for _ in 0..7 {
                d.sample(20 * NSEC_PER_USEC);
            }
            d.sample(50 * NSEC_PER_MSEC);
        }
        assert_eq!(d.quantile_ns(75), Some(32 * NSEC_PER_USEC));
        // Covering the pauses too takes a window of 65 ms, which no idle rule accepts.
        assert_eq!(d.quantile_ns(99), Some(65_536 * NSEC_PER_USEC));
        let mut never = ThinkDist::default();
        never.sample(200 * NSEC_PER_MSEC);
        assert_eq!(never.quantile_ns(50), None);
    }

    /// Gaps that change from long to short move the window within a few dozen samples.
    #[test]
    fn the_window_follows_a_change_of_pattern() {
        let mut d = ThinkDist::default();
        for _ in 0..50 {
            d.sample(3 * NSEC_PER_MSEC);
        }
        assert_eq!(d.quantile_ns(75), Some(4096 * NSEC_PER_USEC));
        for _ in 0..20 {
            d.sample(NSEC_PER_USEC);
        }
        assert_eq!(d.quantile_ns(75), Some(2 * NSEC_PER_USEC));
    }

    #[test]
    fn valid_after_three_samples() {
        let mut d = ThinkDist::default();
        d.sample(1);
        d.sample(1);
        assert!(!d.valid());
        d.sample(1);
        assert!(d.valid());
    }
}
