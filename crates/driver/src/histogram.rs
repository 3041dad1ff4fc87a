//! One latency series: exact moments plus fio's own histogram for percentiles.
//!
//! fio keeps, per direction and per kind (submission, completion, total), the exact minimum,
//! maximum, mean and variance (Welford's running sums, `struct io_stat` in fio's `stat.h`) and a
//! log-linear histogram of 1856 buckets (`io_u_plat`, [`crate::fio_plat`]) from which it reads
//! percentiles. [`LatStat`] keeps the same two things, so its percentiles are fio's: the value
//! naming the bucket where the running count reaches the share, not the exact sample.
//!
//! Merging two series (fio's `sum_stat()` for group reporting) combines the moments with the
//! parallel form of Welford's update and adds the histograms, so a merged series reports the
//! same figures as one series that had seen every sample.
//!
//! Memory: fio holds each histogram dense (1856 counters, 14.5 KiB). Here only the span of
//! buckets between the lowest and the highest occupied one is kept, dense, so a series that
//! records nothing allocates nothing, a job's clustered latencies cost a few dozen counters,
//! and a sample is an index and an add (issue 34: the sorted vector of occupied buckets
//! before it cost a binary search per sample whenever a sample left the last bucket).
//! The number of buckets is fixed, so a series never grows past 1856 counters however long
//! the run (issue 17: the earlier 3-significant-digit histogram kept gaining buckets as a
//! seeking disk's latencies spread, about 47 bytes per I/O in rate-limited jobs).

use crate::fio_plat;

/// Exact moments and fio's percentile histogram of one latency series, in nanoseconds.
///
/// While every sample is 0 (`max == 0`: the simulator's submission latencies) the
/// histogram is bucket 0 holding `n`, kept implicit: such a series touches only `n` and
/// `max` per sample, and holds no heap line of its own (issue 34: one cache line less per
/// I/O at 4096 clones). `repr(C)`: those two first.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct LatStat {
    n: u64,
    max: u64,
    min: u64,
    mean: f64,
    /// Sum of squared deviations from the mean (Welford's `S`).
    m2: f64,
    first: u64,
    /// Counts of fio buckets `first..first + buckets.len()`: empty while `max == 0`.
    buckets: Vec<u64>,
}

impl LatStat {
    /// An empty series (allocates nothing).
    pub fn new() -> LatStat {
        LatStat::default()
    }

    /// Adds one sample. Kernel-free analogue of fio's `add_stat_sample()` plus
    /// `add_lat_percentile_sample()`.
    #[inline]
    pub fn record(&mut self, value_ns: u64) {
        if self.max == 0 {
            if value_ns == 0 {
                // Every sample so far was 0 (the simulator's submission latencies): Welford's
                // update would leave the mean and `m2` at exactly 0.0 and `min` at 0, and
                // bucket 0 is `n`: only the count moves.
                self.n += 1;
                return;
            }
            self.materialize_zeros();
        }
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
        self.add_to_bucket(fio_plat::bucket_index(value_ns), 1);
    }

    /// The implicit bucket 0 of an all-zero series made explicit, before a sample or a merge
    /// that may leave `max` above 0.
    #[cold]
    fn materialize_zeros(&mut self) {
        if self.max == 0 && self.n > 0 && self.buckets.is_empty() {
            self.first = 0;
            self.buckets.push(self.n);
        }
    }

    /// Adds `count` to bucket `index`, widening the span to reach it when outside.
    fn add_to_bucket(&mut self, index: u64, count: u64) {
        // Below `first` wraps to a huge offset: outside too.
        let offset = index.wrapping_sub(self.first);
        if let Some(bucket) = self.buckets.get_mut(offset as usize) {
            *bucket += count;
            return;
        }
        self.widen_to(index);
        self.buckets[(index - self.first) as usize] += count;
    }

    /// Grows the span of kept buckets to include `index` (new ones at 0).
    #[cold]
    fn widen_to(&mut self, index: u64) {
        if self.buckets.is_empty() {
            self.first = index;
            self.buckets.push(0);
        } else if index < self.first {
            let grow = (self.first - index) as usize;
            self.buckets.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = index;
        } else if index - self.first >= self.buckets.len() as u64 {
            let len = (index - self.first) as usize + 1;
            self.buckets.resize(len, 0);
        }
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
        self.materialize_zeros();
        let n = self.n + other.n;
        let delta = other.mean - self.mean;
        let (na, nb) = (self.n as f64, other.n as f64);
        self.mean += delta * nb / n as f64;
        self.m2 += other.m2 + delta * delta * na * nb / n as f64;
        self.n = n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        // Widened once to other's span, not a bucket at a time.
        let (first, counts) = other.span();
        self.widen_to(first);
        self.widen_to(first + counts.len() as u64 - 1);
        for (index, count) in other.buckets() {
            self.add_to_bucket(index, count);
        }
        if self.max == 0 {
            // Still all zeros: bucket 0 implicit again.
            self.buckets = Vec::new();
            self.first = 0;
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

    /// The value fio reports at percentile `p` (0 < p <= 100); `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.percentiles(&[p]).first().map(|&(_, v)| v)
    }

    /// The percentiles of `list` as fio computes and prints them
    /// ([`fio_plat::percentiles`]: sorted, cut at a 0); empty when there are no samples.
    pub fn percentiles(&self, list: &[f64]) -> Vec<(f64, u64)> {
        fio_plat::percentiles(self, list)
    }

    /// The kept span: the index of its first bucket and the counts from there on, dense
    /// (zeros between occupied buckets included).
    pub(crate) fn span(&self) -> (u64, &[u64]) {
        if self.max == 0 && self.n > 0 {
            // All zeros: bucket 0 holds them all.
            return (0, std::slice::from_ref(&self.n));
        }
        (self.first, &self.buckets)
    }

    /// Occupied fio buckets as `(bucket index, count)`, by increasing index.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let (first, counts) = self.span();
        (first..)
            .zip(counts)
            .filter(|&(_, &count)| count > 0)
            .map(|(index, &count)| (index, count))
    }

    /// Occupied histogram buckets.
    pub fn occupied_buckets(&self) -> usize {
        self.span().1.iter().filter(|&&count| count > 0).count()
    }

    /// Histogram buckets held (the series' memory, 8 bytes each, apart from a fixed 72).
    pub fn kept_buckets(&self) -> usize {
        self.span().1.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A span grown downwards (a job's first latencies its highest) and merged reports
    /// exactly the buckets between the lowest and the highest occupied one, with their counts.
    #[test]
    fn a_span_grown_downwards_holds_every_count() {
        let mut series = LatStat::new();
        let mut counts = std::collections::BTreeMap::new();
        let mut other = LatStat::new();
        for (i, value) in [
            190_000_000u64,
            9_000_000,
            800_000,
            60_000,
            52_000,
            70_000,
            49_000,
        ]
        .into_iter()
        .chain((0..200).map(|i| 45_000 + i * 37))
        .enumerate()
        {
            let target = if i % 3 == 0 { &mut other } else { &mut series };
            target.record(value);
            *counts.entry(fio_plat::bucket_index(value)).or_insert(0u64) += 1;
        }
        series.merge(&other);
        let (first, span) = series.span();
        let lowest = *counts.keys().next().unwrap();
        let highest = *counts.keys().last().unwrap();
        assert_eq!(first, lowest);
        assert_eq!(span.len() as u64, highest - lowest + 1);
        assert_eq!(
            series.buckets().collect::<Vec<_>>(),
            counts.into_iter().collect::<Vec<_>>()
        );
    }

    /// Issue 34: an all-zero series keeps its bucket 0 implicit (no heap line per sample)
    /// and reports, merges and goes on recording as one that kept it explicitly.
    #[test]
    fn implicit_zero_bucket_reads_and_merges_as_a_bucket() {
        let zeros = |n: u64| {
            let mut series = LatStat::new();
            for _ in 0..n {
                series.record(0);
            }
            series
        };
        let a = zeros(3);
        assert_eq!(a.kept_buckets(), 1);
        assert_eq!(a.buckets().collect::<Vec<_>>(), [(0, 3)]);
        assert_eq!(a.percentiles(&[50.0, 99.0]), [(50.0, 0), (99.0, 0)]);
        // Two all-zero series merged: still all zeros, and a later 0 counts in bucket 0.
        let mut b = zeros(2);
        b.merge(&a);
        b.record(0);
        assert_eq!(b.buckets().collect::<Vec<_>>(), [(0, 6)]);
        b.record(7);
        b.record(0);
        assert_eq!(b.buckets().collect::<Vec<_>>(), [(0, 7), (7, 1)]);
        assert_eq!((b.count(), b.min(), b.max()), (8, 0, 7));
        // Merged both ways with a series holding other values.
        let mut c = LatStat::new();
        c.record(300);
        c.record(0);
        let mut d = zeros(4);
        d.merge(&c);
        c.merge(&zeros(4));
        for merged in [&c, &d] {
            assert_eq!(
                merged.buckets().collect::<Vec<_>>(),
                [(0, 5), (fio_plat::bucket_index(300), 1)]
            );
            assert_eq!((merged.count(), merged.min(), merged.max()), (6, 0, 300));
        }
        assert_eq!(c.mean().to_bits(), d.mean().to_bits());
    }

    /// Issue 34: zeros recorded before and after other values leave the series exactly as
    /// Welford's update does (the zero fast path applies only while every sample was 0).
    #[test]
    fn zeros_record_as_welford_does() {
        let mut series = LatStat::new();
        let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
        for value in [0u64, 0, 0, 7, 0, 3, 0] {
            series.record(value);
            n += 1;
            let delta = value as f64 - mean;
            mean += delta / n as f64;
            m2 += delta * (value as f64 - mean);
            assert_eq!(series.mean().to_bits(), mean.to_bits(), "after {value}");
        }
        assert_eq!(series.count(), 7);
        assert_eq!((series.min(), series.max()), (0, 7));
        assert_eq!(series.stddev().to_bits(), (m2 / 6.0).sqrt().to_bits());
        assert_eq!(series.percentile(50.0), Some(0));
    }

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
        assert_eq!(s.buckets.capacity(), 0);
    }

    /// Percentiles are bucket values, as fio prints them: below 128 ns a value is its own
    /// bucket; 1 ms falls in fio's bucket [999424, 1007616), named by its middle, 1003520.
    #[test]
    fn percentiles_are_fio_bucket_values() {
        let mut s = LatStat::new();
        for v in 1..=100u64 {
            s.record(v);
        }
        assert_eq!(s.percentile(50.0), Some(50));
        assert_eq!(s.percentile(100.0), Some(100));
        let mut ms = LatStat::new();
        ms.record(1_000_000);
        assert_eq!(ms.percentile(50.0), Some(1_003_520));
        assert_eq!(ms.max(), 1_000_000, "moments stay exact");
    }

    /// Issue 17: a series spread over every latency up to 2^40 ns fills all of fio's 1856
    /// buckets and no more, however many samples it records.
    #[test]
    fn memory_is_bounded_by_fios_buckets() {
        let mut s = LatStat::new();
        let mut x: u64 = 12_345;
        for round in 1..=2u64 {
            for _ in 0..400_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                // Log-uniform: a random bit length up to 40, then random bits below it.
                let bits = (x >> 58) % 41;
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                s.record((x >> 1) >> (63 - bits));
            }
            assert_eq!(s.occupied_buckets(), fio_plat::PLAT_NR as usize);
            assert_eq!(s.kept_buckets(), fio_plat::PLAT_NR as usize);
            assert_eq!(s.buckets().map(|(_, c)| c).sum::<u64>(), round * 400_000);
        }
    }

    /// The kept span widens down and up as samples leave it, and buckets report only the
    /// occupied ones, in order, as the sorted list of occupied buckets did.
    #[test]
    fn span_widens_both_ways_and_reports_occupied_buckets() {
        let mut s = LatStat::new();
        for v in [5_000u64, 70, 5_100, 3_000_000, 71, 5_000] {
            s.record(v);
        }
        let got: Vec<(u64, u64)> = s.buckets().collect();
        let mut want: Vec<(u64, u64)> = Vec::new();
        for v in [70u64, 71, 5_000, 5_000, 5_100, 3_000_000] {
            let index = fio_plat::bucket_index(v);
            match want.last_mut() {
                Some((last, count)) if *last == index => *count += 1,
                _ => want.push((index, 1)),
            }
        }
        assert_eq!(got, want);
        assert_eq!(s.occupied_buckets(), want.len());
        let span = fio_plat::bucket_index(3_000_000) - fio_plat::bucket_index(70) + 1;
        assert_eq!(s.kept_buckets() as u64, span);
    }

    #[test]
    fn merge_equals_recording_everything_once() {
        let (mut a, mut b, mut all) = (LatStat::new(), LatStat::new(), LatStat::new());
        for v in 0..500u64 {
            let x = v * v * 977 % 100_003 + 3;
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
        assert_eq!(
            a.buckets().collect::<Vec<_>>(),
            all.buckets().collect::<Vec<_>>()
        );
        assert_eq!(a.percentile(50.0), all.percentile(50.0));
        assert_eq!(a.percentile(99.9), all.percentile(99.9));
    }
}
