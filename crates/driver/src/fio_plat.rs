//! fio's latency histogram (`io_u_plat`): the 1856 buckets behind `--output-format=json+`'s
//! `bins` and fio's own percentiles.
//!
//! fio files every latency (in ns) into a log-linear histogram. Values below 128 ns have a
//! bucket each. Above, each power of two `[2^m, 2^(m+1))` (`m >= 7`) is cut into 64 equal
//! buckets of width `2^(m-6)`: the top 7 bits of a value name its bucket
//! (`FIO_IO_U_PLAT_BITS = 6`, `FIO_IO_U_PLAT_VAL = 64`). There are 29 groups of 64 buckets
//! (`FIO_IO_U_PLAT_GROUP_NR`), 1856 in all; anything from 2^34 ns (about 17 s) up lands in the
//! last. A bucket is named by its middle value (fio's `plat_idx_to_val()`), which is the key
//! json+ prints and the value fio reports for a percentile falling in it.
//!
//! iosched records each series in a finer histogram ([`LatStat`]: 3 significant digits, whose
//! buckets have power-of-two widths `2^(m-10)` aligned the same way), so every one of its
//! buckets lies inside exactly one of fio's, and fio's counts follow exactly from ours:
//! [`bins`] regroups them without any sample being re-read.

use crate::histogram::LatStat;

/// Bits of a value kept exactly in its bucket (fio's `FIO_IO_U_PLAT_BITS`).
pub const PLAT_BITS: u32 = 6;
/// Buckets per power of two (fio's `FIO_IO_U_PLAT_VAL`).
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Groups of [`PLAT_VAL`] buckets (fio's `FIO_IO_U_PLAT_GROUP_NR`).
pub const PLAT_GROUP_NR: u64 = 29;
/// Buckets in all (fio's `FIO_IO_U_PLAT_NR`): 1856.
pub const PLAT_NR: u64 = PLAT_GROUP_NR * PLAT_VAL;

/// The bucket index of `value_ns`. Kernel-free analogue of fio's `plat_val_to_idx()`.
pub fn bucket_index(value_ns: u64) -> u64 {
    // Position of the highest set bit (0 for 0 and 1).
    let msb = 63 - (value_ns | 1).leading_zeros();
    if msb <= PLAT_BITS {
        return value_ns;
    }
    // Low bits below the kept ones are dropped; each dropped bit doubles the bucket width.
    let dropped = msb - PLAT_BITS;
    let group_start = u64::from(dropped + 1) << PLAT_BITS;
    let within = (value_ns >> dropped) & (PLAT_VAL - 1);
    (group_start + within).min(PLAT_NR - 1)
}

/// The value naming bucket `index`: itself below 128, else the bucket's middle, rounded
/// down. Kernel-free analogue of fio's `plat_idx_to_val()`.
pub fn bucket_value(index: u64) -> u64 {
    assert!(index < PLAT_NR, "bucket {index} beyond fio's {PLAT_NR}");
    if index < 2 * PLAT_VAL {
        return index;
    }
    let width_bits = (index >> PLAT_BITS) - 1;
    let group_min = 1u64 << (width_bits + u64::from(PLAT_BITS));
    let k = index % PLAT_VAL;
    // (k + 1/2) widths into the group; the width is even here, so this is exact.
    group_min + (2 * k + 1) * (1u64 << width_bits) / 2
}

/// The values bucket `index` holds, `lo..hi` (the last bucket also holds everything above).
pub fn bucket_bounds(index: u64) -> (u64, u64) {
    assert!(index < PLAT_NR, "bucket {index} beyond fio's {PLAT_NR}");
    if index < 2 * PLAT_VAL {
        return (index, index + 1);
    }
    let width_bits = (index >> PLAT_BITS) - 1;
    let lo = (1u64 << (width_bits + u64::from(PLAT_BITS))) + ((index % PLAT_VAL) << width_bits);
    (lo, lo + (1u64 << width_bits))
}

/// The series' non-empty buckets as `(bucket value, count)`, by increasing value: what fio
/// prints as `bins` in json+.
pub fn bins(stat: &LatStat) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut last_index = None;
    for (lowest, count) in stat.buckets() {
        let index = bucket_index(lowest);
        match out.last_mut() {
            Some(bin) if last_index == Some(index) => bin.1 += count,
            _ => out.push((bucket_value(index), count)),
        }
        last_index = Some(index);
    }
    out
}

/// Percentiles as fio computes them from its buckets (`calc_clat_percentiles()`): for each
/// `p` of `list` (in increasing order), the value of the first bucket whose running count
/// reaches `p`% of the samples. Empty when the series is.
pub fn percentiles(stat: &LatStat, list: &[f64]) -> Vec<(f64, u64)> {
    let total = stat.count() as f64;
    let bins = bins(stat);
    let mut out = Vec::with_capacity(list.len());
    let mut running = 0u64;
    let mut bins = bins.iter();
    let mut current = None;
    for &p in list {
        let need = p / 100.0 * total;
        while current.is_none() || (running as f64) < need {
            match bins.next() {
                Some(&(value, count)) => {
                    running += count;
                    current = Some(value);
                }
                None => break,
            }
        }
        match current {
            Some(value) => out.push((p, value)),
            None => return Vec::new(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked values from fio's `stat.h` comment (M = 6): 128..255 in buckets of 2, then 4.
    #[test]
    fn bucket_index_follows_fios_layout() {
        assert_eq!(bucket_index(0), 0);
        assert_eq!(bucket_index(127), 127);
        assert_eq!(bucket_index(128), 128);
        assert_eq!(bucket_index(129), 128);
        assert_eq!(bucket_index(130), 129);
        assert_eq!(bucket_index(255), 191);
        assert_eq!(bucket_index(256), 192);
        assert_eq!(bucket_index(259), 192);
        assert_eq!(bucket_index(260), 193);
        assert_eq!(bucket_index(u64::MAX), PLAT_NR - 1);
        assert_eq!(bucket_index(1 << 34), PLAT_NR - 1);
        assert_eq!(bucket_index((1 << 34) - 1), PLAT_NR - 1);
        assert_eq!(bucket_index(1 << 33), PLAT_NR - 64);
    }

    /// Keys fio 3.33 printed in json+ on this machine (`fio --output-format=json+`, psync
    /// randwrite on a file): 2640, 2672, 2800, 626688, 667648, 872448.
    #[test]
    fn bucket_values_are_fios_json_plus_keys() {
        for key in [2640u64, 2672, 2800, 626_688, 667_648, 872_448] {
            assert_eq!(bucket_value(bucket_index(key)), key, "key {key}");
        }
        assert_eq!(bucket_value(127), 127);
        assert_eq!(bucket_value(128), 129);
        assert_eq!(bucket_value(192), 258);
        // Every bucket's value lies in its own bucket, and values increase with the index;
        // the bounds tile the line.
        for index in 0..PLAT_NR {
            assert_eq!(bucket_index(bucket_value(index)), index, "bucket {index}");
            let (lo, hi) = bucket_bounds(index);
            assert!(lo <= bucket_value(index) && bucket_value(index) < hi);
            assert_eq!(bucket_index(lo), index);
            if index + 1 < PLAT_NR {
                assert_eq!(bucket_index(hi - 1), index);
                assert_eq!(bucket_bounds(index + 1).0, hi);
            }
            if index > 0 {
                assert!(bucket_value(index) > bucket_value(index - 1));
            }
        }
    }

    /// The premise of [`bins`]: a value's iosched bucket (its lowest equivalent value) falls
    /// in the same fio bucket as the value itself.
    #[test]
    fn latstat_buckets_nest_in_fio_buckets() {
        let mut x: u64 = 99;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1442695040888963407);
            let v = (x >> (x % 40 + 4)) & ((1 << 40) - 1);
            let mut s = LatStat::new();
            s.record(v);
            let (lowest, _) = s.buckets().next().unwrap();
            assert_eq!(bucket_index(lowest), bucket_index(v), "value {v}");
        }
    }

    #[test]
    fn bins_count_every_sample_once() {
        let mut s = LatStat::new();
        for v in [5u64, 5, 130, 131, 1_000_000, 1_000_100, 3_000_000_000] {
            s.record(v);
        }
        let b = bins(&s);
        assert_eq!(b.iter().map(|&(_, c)| c).sum::<u64>(), 7);
        assert_eq!(b[0], (5, 2));
        assert_eq!(b[1], (131, 2)); // 130 and 131 share the bucket [130, 132)
        assert!(b.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(bins(&LatStat::new()).is_empty());
    }

    #[test]
    fn percentiles_take_the_first_bucket_reaching_the_share() {
        let mut s = LatStat::new();
        for v in 1..=100u64 {
            s.record(v);
        }
        let got = percentiles(&s, &[1.0, 50.0, 99.5, 100.0]);
        assert_eq!(got, vec![(1.0, 1), (50.0, 50), (99.5, 100), (100.0, 100)]);
        assert!(percentiles(&LatStat::new(), &[50.0]).is_empty());
    }
}
