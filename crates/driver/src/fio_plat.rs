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
//! [`LatStat`] records each series in these very buckets, so `bins` and percentiles are
//! fio's without any conversion. fio decides whether a bucket reaches a percentile in x87
//! extended precision (a 64-bit mantissa), which now and then differs from `f64`;
//! [`reaches`] repeats its arithmetic exactly in integers.

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
    stat.buckets()
        .map(|(index, count)| (bucket_value(index), count))
        .collect()
}

/// A positive number `mantissa * 2^exp` whose mantissa has exactly 64 significant bits, as an
/// x87 `long double` holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Extended {
    mantissa: u64,
    exp: i32,
}

impl Extended {
    /// `value * 2^exp` rounded to 64 significant bits, to nearest and ties to even; `sticky`
    /// says that something nonzero lies below `value`'s last bit. `value` must be nonzero.
    fn round(value: u128, exp: i32, sticky: bool) -> Extended {
        let bits = 128 - value.leading_zeros() as i32;
        if bits <= 64 {
            let shift = 64 - bits;
            return Extended {
                mantissa: (value << shift) as u64,
                exp: exp - shift,
            };
        }
        let drop = (bits - 64) as u32;
        let kept = (value >> drop) as u64;
        let rest = value & ((1u128 << drop) - 1);
        let half = 1u128 << (drop - 1);
        let up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        match kept.checked_add(u64::from(up)) {
            Some(mantissa) => Extended {
                mantissa,
                exp: exp + drop as i32,
            },
            None => Extended {
                mantissa: 1 << 63,
                exp: exp + drop as i32 + 1,
            },
        }
    }

    /// A finite `value > 0` as a 53-bit significand and its exponent.
    fn of_f64(value: f64) -> (u128, i32) {
        let bits = value.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let fraction = u128::from(bits & ((1 << 52) - 1));
        // A subnormal has no implicit bit and the exponent of the smallest normal.
        if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | 1 << 52, biased - 1075)
        }
    }

    /// `0.01L`: one hundredth rounded to 64 bits.
    fn hundredth() -> Extended {
        // 2^120 / 100, with the remainder as the sticky bit.
        let numerator = 1u128 << 120;
        Extended::round(numerator / 100, -120, !numerator.is_multiple_of(100))
    }

    /// `self * factor`, rounded as the x87 unit rounds.
    fn times(self, factor: u128, factor_exp: i32) -> Extended {
        // A 64-bit mantissa times at most 64 bits fits in 128.
        Extended::round(
            u128::from(self.mantissa) * factor,
            self.exp + factor_exp,
            false,
        )
    }
}

/// Whether a running count `sum` reaches percentile `p` of `nr` samples, exactly as fio 3.33
/// decides `sum >= (long double) p / 100.0 * nr` on x86-64. fio is built with `-ffast-math`,
/// and the packaged binary computes `nr * 0.01L` once and multiplies each `p` by it, in x87
/// extended precision (its `calc_clat_percentiles()` disassembled: `fildll`, `fldt` of
/// 0.01L, `fmulp`; then `fldl` of `p`, `fmulp`, `fcomi`). Rounded so, p99.95 of 100000 needs
/// 99951 samples where `f64` arithmetic gives 99950.
pub fn reaches(sum: u64, p: f64, nr: u64) -> bool {
    Threshold::new(p, nr).met(sum)
}

/// The count percentile `p` of `nr` samples needs ([`reaches`]), worked out once for every
/// running count it is compared with (issue 34: the extended arithmetic cost some 600
/// instructions per bucket walked, 15 K per job's percentile list).
#[derive(Clone, Copy, Debug)]
struct Threshold {
    /// `None`: every count reaches it (`p <= 0`, no samples).
    need: Option<Extended>,
}

impl Threshold {
    fn new(p: f64, nr: u64) -> Threshold {
        if nr == 0 {
            return Threshold { need: None };
        }
        Threshold::of(Extended::hundredth().times(u128::from(nr), 0), p)
    }

    /// The threshold of `p` given `per_cent`, `nr * 0.01L` (worked out once per list).
    fn of(per_cent: Extended, p: f64) -> Threshold {
        if p <= 0.0 {
            return Threshold { need: None };
        }
        let (significand, exp) = Extended::of_f64(p);
        Threshold {
            need: Some(per_cent.times(significand, exp)),
        }
    }

    /// The smallest running count that reaches it (`u128::MAX`: none does).
    fn count(self) -> u128 {
        let Some(need) = self.need else {
            return 0;
        };
        // sum >= need.mantissa * 2^need.exp, with need.mantissa < 2^64.
        if need.exp >= 64 {
            u128::MAX
        } else if need.exp >= 0 {
            u128::from(need.mantissa) << need.exp
        } else if need.exp > -64 {
            // sum * 2^-exp >= mantissa: sum at least the quotient rounded up.
            u128::from(need.mantissa).div_ceil(1u128 << -need.exp)
        } else {
            // The threshold lies in (0, 1).
            1
        }
    }

    /// Whether the running count `sum` reaches it.
    fn met(self, sum: u64) -> bool {
        u128::from(sum) >= self.count()
    }
}

/// Percentiles as fio computes them (`calc_clat_percentiles()`): the list is read up to its
/// first 0 and sorted; each `p` gets the value of the first bucket whose running count
/// reaches `p`% of the samples ([`reaches`]). Empty when the series is.
pub fn percentiles(stat: &LatStat, list: &[f64]) -> Vec<(f64, u64)> {
    let nr = stat.count();
    if nr == 0 {
        return Vec::new();
    }
    let mut sorted: Vec<f64> = Vec::with_capacity(list.len());
    sorted.extend(list.iter().copied().take_while(|&p| p != 0.0));
    sorted.sort_by(f64::total_cmp);
    // One walk of the kept buckets for the whole list, each percentile's count needed worked
    // out beforehand (issue 34: a walk of the bucket iterator per percentile, with the
    // extended arithmetic redone for each, cost some 14 K instructions per job).
    let per_cent = Extended::hundredth().times(u128::from(nr), 0);
    let mut walk = Walk {
        wanted: sorted
            .iter()
            .map(|&p| (p, Threshold::of(per_cent, p).count()))
            .collect(),
        met: 0,
        running: 0,
        out: Vec::with_capacity(sorted.len()),
    };
    if walk.wanted.is_empty() {
        return walk.out;
    }
    // The span of a job's latencies is mostly empty buckets (a 4096-job run: ~60 occupied
    // in ~750): four at a time are passed over with one test.
    let (first, counts) = stat.span();
    let mut chunks = counts.chunks_exact(4);
    let mut index = first;
    for chunk in chunks.by_ref() {
        if chunk[0] | chunk[1] | chunk[2] | chunk[3] != 0 {
            for (at, &count) in (index..).zip(chunk) {
                if walk.bucket(at, count) {
                    return walk.out;
                }
            }
        }
        index += 4;
    }
    for (at, &count) in (index..).zip(chunks.remainder()) {
        if walk.bucket(at, count) {
            return walk.out;
        }
    }
    // Every sample counted and still short (p above 100): fio stops there too.
    walk.out
}

/// [`percentiles`]' walk: the sorted list with each percentile's count needed, how many are
/// met, the running count and the values found.
struct Walk {
    wanted: Vec<(f64, u128)>,
    met: usize,
    running: u128,
    out: Vec<(f64, u64)>,
}

impl Walk {
    /// Takes bucket `index` holding `count`; true once every percentile is met. A percentile
    /// is met only at an occupied bucket, the first one even when its count needed is 0, as
    /// fio takes a bucket before comparing.
    #[inline(always)]
    fn bucket(&mut self, index: u64, count: u64) -> bool {
        if count == 0 {
            return false;
        }
        self.running += u128::from(count);
        while let Some(&(p, need)) = self.wanted.get(self.met) {
            if self.running < need {
                return false;
            }
            self.out.push((p, bucket_value(index)));
            self.met += 1;
        }
        true
    }
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

    /// The smallest running count that [`reaches`] `p`% of `nr`.
    fn needed(p: f64, nr: u64) -> u64 {
        let (mut lo, mut hi) = (0u64, nr);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if reaches(mid, p, nr) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// Outside reference: the smallest integer `sum` with `sum >= p * (nr * 0.01L)` in x87
    /// extended precision, the order the packaged fio 3.33 binary computes it in, printed by
    /// a C program built with gcc 12 on this x86-64 machine. `f64` arithmetic gets two of
    /// these wrong: 99950 for p99.95 of 100000, 10 for p0.01 of 100000.
    #[test]
    fn reaches_matches_fios_x87_arithmetic() {
        const PS: [f64; 21] = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.95, 99.99, 33.3, 66.6, 0.01, 1e-300,
        ];
        #[rustfmt::skip]
        let table: [(u64, [u64; 21]); 9] = [
            (3, [1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 2, 1, 1]),
            (10, [1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 10, 10, 4, 7, 1, 1]),
            (25, [1, 2, 3, 5, 8, 10, 13, 15, 18, 20, 23, 24, 25, 25, 25, 25, 25, 9, 17, 1, 1]),
            (100, [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 100, 100, 100, 100, 34, 67, 1, 1]),
            (1000, [10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950, 990, 995, 1000, 1000, 1000, 333, 666, 1, 1]),
            (1024, [11, 52, 103, 205, 308, 410, 512, 615, 717, 820, 922, 973, 1014, 1019, 1023, 1024, 1024, 341, 682, 1, 1]),
            (4096, [41, 205, 410, 820, 1229, 1639, 2048, 2458, 2868, 3277, 3687, 3892, 4056, 4076, 4092, 4094, 4096, 1364, 2728, 1, 1]),
            (100000, [1000, 5000, 10000, 20000, 30000, 40000, 50000, 60000, 70000, 80000, 90000, 95000, 99000, 99500, 99901, 99951, 99990, 33300, 66600, 11, 1]),
            (123456789, [1234568, 6172840, 12345679, 24691358, 37037037, 49382716, 61728395, 74074074, 86419753, 98765432, 111111111, 117283950, 122222222, 122839506, 123333333, 123395061, 123444444, 41111111, 82222222, 12346, 1]),
        ];
        // 0.01L as fio's binary holds it (bytes 0a d7 a3 70 3d 0a d7 a3 f8 3f).
        let hundredth = Extended::hundredth();
        assert_eq!(
            (hundredth.mantissa, hundredth.exp),
            (0xa3d7_0a3d_70a3_d70a, -70)
        );
        for (nr, want) in table {
            for (p, want) in PS.iter().zip(want) {
                assert_eq!(needed(*p, nr), want, "p{p} of {nr}");
            }
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

    /// Issue 34: the one walk for the whole list gives what a walk per percentile over the
    /// occupied buckets gives (`reaches` at each), with gaps between buckets, several
    /// percentiles in one bucket, p at or beyond 100 and below 0, and unsorted lists.
    #[test]
    fn one_walk_equals_a_walk_per_percentile() {
        let per_percentile = |s: &LatStat, list: &[f64]| {
            let mut sorted: Vec<f64> = list.iter().copied().take_while(|&p| p != 0.0).collect();
            sorted.sort_by(f64::total_cmp);
            let mut out = Vec::new();
            for p in sorted {
                let mut running = 0;
                let hit = s.buckets().find(|&(_, count)| {
                    running += count;
                    reaches(running, p, s.count())
                });
                match hit {
                    Some((index, _)) => out.push((p, bucket_value(index))),
                    None => break,
                }
            }
            out
        };
        let lists: [&[f64]; 4] = [
            &[
                1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5,
                99.9, 99.95, 99.99,
            ],
            &[99.0, -3.0, 50.0, 50.0, 100.0, 100.5, 20.0],
            &[0.001, 99.999, 0.0, 40.0],
            &[],
        ];
        let mut x: u64 = 99;
        for samples in [1u64, 2, 3, 7, 100, 1000, 100_000] {
            let mut s = LatStat::new();
            for _ in 0..samples {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1442695040888963407);
                s.record((x >> 33) % 5_000_000 + if x & 1 == 0 { 0 } else { 40 });
            }
            for list in lists {
                assert_eq!(
                    percentiles(&s, list),
                    per_percentile(&s, list),
                    "{samples} samples"
                );
            }
        }
    }

    #[test]
    fn percentiles_take_the_first_bucket_reaching_the_share() {
        let mut s = LatStat::new();
        for v in 1..=100u64 {
            s.record(v);
        }
        let got = percentiles(&s, &[1.0, 50.0, 99.5, 100.0]);
        assert_eq!(got, vec![(1.0, 1), (50.0, 50), (99.5, 100), (100.0, 100)]);
        // fio sorts the list and stops at a 0.
        let got = percentiles(&s, &[60.0, 30.0, 0.0, 10.0]);
        assert_eq!(got, vec![(30.0, 30), (60.0, 60)]);
        assert!(percentiles(&LatStat::new(), &[50.0]).is_empty());
    }
}
