//! One latency series: exact moments plus an HDR histogram for percentiles.
//!
//! fio keeps, per direction and per kind (submission, completion, total), the exact minimum,
//! maximum, mean and variance (Welford's running sums, `struct io_stat` in fio's `stat.h`) and a
//! log-linear histogram for percentiles (`io_u_plat`). [`LatStat`] does the same with an
//! [`hdrhistogram`] at 3 significant digits: any percentile it reports lies within 0.1% of the
//! true sample, a little tighter than fio's own 1856-bucket histogram (~0.8%).
//!
//! Merging two series (fio's `sum_stat()` for group reporting) combines the moments with the
//! parallel form of Welford's update and adds the histograms, so a merged series reports the
//! same figures as one series that had seen every sample.
//!
//! Memory: the histogram is kept sparse while recording — a sorted map from each occupied
//! bucket (named by its lowest equivalent value) to its count — and built as a dense
//! [`hdrhistogram`] only when percentiles are asked for. The buckets are the dense
//! histogram's own, so the percentiles are identical; an empty series costs nothing and a
//! busy one a few bytes per occupied bucket, where the dense form is 16 KiB empty and about
//! 190 KiB once it spans seconds (a simulated process keeps ten series).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use hdrhistogram::Histogram;

/// 3 significant digits: percentiles within 0.1% of the true value.
const SIGNIFICANT_DIGITS: u8 = 3;

/// Exact moments and a percentile histogram of one latency series, in nanoseconds.
#[derive(Clone, Debug)]
pub struct LatStat {
    n: u64,
    min: u64,
    max: u64,
    mean: f64,
    /// Sum of squared deviations from the mean (Welford's `S`).
    m2: f64,
    /// Occupied buckets: lowest equivalent value → count.
    buckets: BTreeMap<u64, u64>,
}

/// A dense histogram of the series' configuration (3 significant digits, auto-resizing).
fn dense() -> Histogram<u64> {
    let mut hist = Histogram::<u64>::new(SIGNIFICANT_DIGITS)
        .expect("3 significant digits is a valid histogram configuration");
    hist.auto(true);
    hist
}

/// The bucket of `value_ns`: its lowest equivalent value in the dense histogram (bucket
/// boundaries depend only on the configuration, so one shared instance answers).
fn bucket_of(value_ns: u64) -> u64 {
    static SHAPE: OnceLock<Histogram<u64>> = OnceLock::new();
    let shape = SHAPE.get_or_init(dense);
    // Beyond 2^62 the dense histogram cannot record; such values saturate there.
    shape.lowest_equivalent(value_ns.min(u64::MAX >> 2))
}

impl Default for LatStat {
    fn default() -> Self {
        LatStat::new()
    }
}

impl LatStat {
    /// An empty series.
    pub fn new() -> LatStat {
        LatStat {
            n: 0,
            min: 0,
            max: 0,
            mean: 0.0,
            m2: 0.0,
            buckets: BTreeMap::new(),
        }
    }

    /// Adds one sample. Kernel-free analogue of fio's `add_stat_sample()`.
    pub fn record(&mut self, value_ns: u64) {
        if self.n == 0 {
            self.min = value_ns;
            self.max = value_ns;
        } else {
            self.min = self.min.min(value_ns);
            self.max = self.max.max(value_ns);
        }
        self.n += 1;
        let value = value_ns as f64;
        let delta = value - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (value - self.mean);
        *self.buckets.entry(bucket_of(value_ns)).or_insert(0) += 1;
    }

    /// Folds `other` into `self`, as if every sample of `other` had been recorded here.
    pub fn merge(&mut self, other: &LatStat) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = other.clone();
            return;
        }
        let n = self.n + other.n;
        let delta = other.mean - self.mean;
        let (na, nb) = (self.n as f64, other.n as f64);
        self.mean += delta * nb / n as f64;
        self.m2 += other.m2 + delta * delta * na * nb / n as f64;
        self.n = n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        for (&bucket, &count) in &other.buckets {
            *self.buckets.entry(bucket).or_insert(0) += count;
        }
    }

    /// Number of samples (fio's `N`).
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Smallest sample, 0 when empty.
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Largest sample, 0 when empty.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Arithmetic mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample standard deviation (denominator `N - 1`, as fio's `calc_lat()`); 0 below 2 samples.
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }

    /// The value at percentile `p` (0..=100): the smallest recorded value such that at least
    /// `p`% of samples are at or below it, to 3 significant digits; `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.percentiles(&[p]).first().map(|&(_, v)| v)
    }

    /// The percentiles of `list`, in order; empty when there are no samples. Builds the
    /// dense histogram once for the list.
    pub fn percentiles(&self, list: &[f64]) -> Vec<(f64, u64)> {
        if self.n == 0 {
            return Vec::new();
        }
        let mut hist = dense();
        for (&bucket, &count) in &self.buckets {
            // Auto-resizing, and buckets are clamped below 2^62: recording cannot fail.
            let _ = hist.record_n(bucket, count);
        }
        list.iter()
            .map(|&p| {
                let q = (p / 100.0).clamp(0.0, 1.0);
                // The histogram answers with the highest value equivalent to the bucket;
                // never report beyond the exact extremes we keep on the side.
                (p, hist.value_at_quantile(q).clamp(self.min, self.max))
            })
            .collect()
    }

    /// Occupied buckets as `(lowest value, count)`, by increasing value. Each bucket's width
    /// is a power of two aligned to it (1 below 2048, `2^(m-10)` in `[2^m, 2^(m+1))`).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets.iter().map(|(&lowest, &count)| (lowest, count))
    }

    /// Occupied histogram buckets (the series' memory, apart from a fixed 40 bytes).
    pub fn occupied_buckets(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_are_exact() {
        let mut s = LatStat::new();
        for v in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            s.record(v);
        }
        assert_eq!(s.count(), 8);
        assert_eq!(s.min(), 2);
        assert_eq!(s.max(), 9);
        assert!((s.mean() - 5.0).abs() < 1e-12);
        // Sum of squared deviations is 32; sample variance 32/7.
        assert!((s.stddev() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn empty_series_reports_zero_and_no_percentiles() {
        let s = LatStat::new();
        assert_eq!((s.count(), s.min(), s.max()), (0, 0, 0));
        assert_eq!(s.mean(), 0.0);
        assert_eq!(s.stddev(), 0.0);
        assert_eq!(s.percentile(50.0), None);
        assert!(s.percentiles(&[50.0]).is_empty());
    }

    #[test]
    fn percentiles_of_uniform_one_to_thousand() {
        let mut s = LatStat::new();
        for v in 1..=1000u64 {
            s.record(v);
        }
        // Values below 2048 are exact at 3 significant digits.
        assert_eq!(s.percentile(50.0), Some(500));
        assert_eq!(s.percentile(99.0), Some(990));
        assert_eq!(s.percentile(100.0), Some(1000));
        assert_eq!(s.percentile(1.0), Some(10));
    }

    #[test]
    fn large_values_within_a_thousandth() {
        let mut s = LatStat::new();
        for v in 1..=10_000u64 {
            s.record(v * 1_000_003);
        }
        let p90 = s.percentile(90.0).unwrap() as f64;
        let exact = 9000.0 * 1_000_003.0;
        assert!((p90 - exact).abs() / exact < 1e-3, "p90 {p90} vs {exact}");
    }

    /// The sparse buckets give exactly the dense histogram's percentiles (hdrhistogram is
    /// the outside reference here), while an empty series holds no bucket at all.
    #[test]
    fn sparse_buckets_match_the_dense_histogram() {
        let mut s = LatStat::new();
        assert_eq!(s.occupied_buckets(), 0);
        let mut reference = dense();
        let mut x: u64 = 12_345;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let v = (x >> 33) % 3_000_000_000 + 1;
            s.record(v);
            reference.record(v).unwrap();
        }
        for p in [1.0, 10.0, 50.0, 90.0, 99.0, 99.5, 99.9, 99.99, 100.0] {
            let want = reference
                .value_at_quantile(p / 100.0)
                .clamp(s.min(), s.max());
            assert_eq!(s.percentile(p), Some(want), "p{p}");
        }
        assert!(s.occupied_buckets() < 20_000);
    }

    #[test]
    fn merge_equals_recording_everything_once() {
        let (mut a, mut b, mut all) = (LatStat::new(), LatStat::new(), LatStat::new());
        for v in 0..500u64 {
            let x = v * v % 977 + 3;
            if v % 3 == 0 {
                a.record(x);
            } else {
                b.record(x);
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        assert_eq!((a.min(), a.max()), (all.min(), all.max()));
        assert!((a.mean() - all.mean()).abs() < 1e-9);
        assert!((a.stddev() - all.stddev()).abs() < 1e-9);
        assert_eq!(a.percentile(50.0), all.percentile(50.0));
        assert_eq!(a.percentile(99.9), all.percentile(99.9));
    }
}
