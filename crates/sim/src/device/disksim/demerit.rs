//! DiskSim's validation score: the Ruemmler–Wilkes demerit between two response-time
//! distributions, binned and compared exactly as DiskSim 4.0 does it.
//!
//! - **Binning** (`valid/statdefs`, "Physical access time" and "Trace access time":
//!   1750 buckets, scale 1000, `Start 0 step 1 grow 1`; `src/disksim_stat.c`): a value `v` ms
//!   becomes `int(v · 1000)` µs, truncated. Bucket lower edges start at 0 and each next edge is
//!   `edge + 1 + int(edge / 100)`, so buckets are 1 µs wide up to 0.1 ms and then grow by about
//!   1 %. A value in `[edge_k, edge_k+1)` is counted in bucket `k + 1`, which the distribution
//!   prints under the label `edge_k+1`: each printed point is (upper edge, fraction below it).
//!   Values at or past the second-to-last edge share the last bucket; negative ones the first.
//! - **Printing**: the label in ms with three decimals (exact, the edges are whole µs) and the
//!   running sum of bucket fractions with six decimals; the reader (`src/rms.c`) takes the
//!   printed points up to the first whose cumulative fraction reads 1.0.
//! - **RMS** (`src/rms.c`): for q = 0.0001, 0.0002, … (accumulated by repeated addition, as
//!   DiskSim does) while q ≤ 1, each curve's time at fraction q by linear interpolation between
//!   the last point below q and the first at or above it; the demerit is the root mean square of
//!   the differences, in ms.

/// Buckets of DiskSim's access-time distributions (`valid/statdefs`).
pub const BUCKETS: usize = 1750;
/// `Scale/Equals: 1000/0`: values are counted in µs.
const SCALE: f64 = 1000.0;
/// `src/rms.c`'s `RMS_INCR`.
const RMS_INCR: f64 = 0.0001;

/// A binned response-time distribution: DiskSim's printed points.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    /// (upper bucket edge in ms, cumulative fraction as printed), up to the first 1.0.
    points: Vec<(f64, f64)>,
}

/// The lower edges of the buckets, in µs.
fn bucket_edges() -> Vec<i64> {
    let mut edges = Vec::with_capacity(BUCKETS);
    let mut edge = 0_i64;
    for _ in 0..BUCKETS {
        edges.push(edge);
        edge += 1 + edge / 100;
    }
    edges
}

/// `(int)(value * scale)` as DiskSim's 32-bit build computes it: the x87 unit multiplies in
/// 64-bit precision, where a double times 1000 is exact, and the cast truncates that exact
/// product. In double precision 0.688 · 1000 rounds up to 688.0, while the exact product of
/// the double nearest 0.688 is just below 688 and truncates to 687: a trace's 688 µs lands a
/// bucket lower in DiskSim's own distribution. The fused multiply-add gives the rounding
/// error, whose sign says which side of a whole product the exact one lies.
fn scaled_micros(value_ms: f64) -> i64 {
    let rounded = value_ms * SCALE;
    let error = value_ms.mul_add(SCALE, -rounded);
    let whole = rounded.trunc();
    // Only a product rounded onto a whole number can truncate differently.
    if rounded == whole && error != 0.0 {
        if rounded > 0.0 && error < 0.0 {
            return whole as i64 - 1;
        }
        if rounded < 0.0 && error > 0.0 {
            return whole as i64 + 1;
        }
    }
    whole as i64
}

/// The bucket a value in ms lands in (`stat_update` with `grow`).
fn bucket_of(edges: &[i64], value_ms: f64) -> usize {
    let micros = scaled_micros(value_ms);
    if micros < edges[0] {
        return 0;
    }
    let top = BUCKETS - 2;
    if micros >= edges[top] {
        return BUCKETS - 1;
    }
    // The bucket k with edges[k] <= micros < edges[k + 1], counted one further up.
    edges.partition_point(|&edge| edge <= micros)
}

impl Distribution {
    /// Bins `values_ms` as DiskSim bins one access-time statistic. `None` when empty.
    pub fn from_values(values_ms: &[f64]) -> Option<Distribution> {
        if values_ms.is_empty() {
            return None;
        }
        let edges = bucket_edges();
        let mut counts = vec![0_u64; BUCKETS];
        for &value in values_ms {
            counts[bucket_of(&edges, value)] += 1;
        }
        let total = values_ms.len() as f64;
        let mut running = 0.0_f64;
        let mut points = Vec::new();
        for (edge, count) in edges.iter().zip(&counts) {
            running += *count as f64 / total;
            // As printed with %f and read back.
            let printed = (running * 1e6).round() / 1e6;
            points.push((*edge as f64 / SCALE, printed));
            if printed >= 1.0 {
                break;
            }
        }
        Some(Distribution { points })
    }

    /// The printed points: (upper bucket edge in ms, cumulative fraction).
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The time at cumulative fraction `q`, interpolated as `compute_rms` does.
    fn time_at(&self, q: f64, cursor: &mut usize) -> f64 {
        while *cursor + 1 < self.points.len() && self.points[*cursor].1 < q {
            *cursor += 1;
        }
        let upper = *cursor;
        if upper == 0 {
            return self.points[0].0;
        }
        let (x0, y0) = self.points[upper - 1];
        let (x1, y1) = self.points[upper];
        if y1 <= y0 {
            return x1;
        }
        x0 + (q - y0) / (y1 - y0) * (x1 - x0)
    }
}

/// The demerit in ms between two distributions (`src/rms.c`'s `compute_rms`).
pub fn demerit_ms(simulated: &Distribution, measured: &Distribution) -> f64 {
    let (mut cursor_a, mut cursor_b) = (0, 0);
    let mut squares = 0.0;
    let mut count = 0_u32;
    let mut q = RMS_INCR;
    while q <= 1.0 {
        let a = simulated.time_at(q, &mut cursor_a);
        let b = measured.time_at(q, &mut cursor_b);
        squares += (a - b) * (a - b);
        count += 1;
        q += RMS_INCR;
    }
    (squares / f64::from(count)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(n: usize, scale: f64) -> Vec<f64> {
        // A skewed spread of response times from 0.2 ms to about 25 ms.
        (0..n)
            .map(|i| 0.2 + scale * ((i * 7919) % n) as f64 / n as f64)
            .collect()
    }

    #[test]
    fn edges_grow_by_one_percent_after_a_tenth_of_a_millisecond() {
        let edges = bucket_edges();
        assert_eq!(&edges[..3], &[0, 1, 2]);
        assert_eq!(edges[100], 100);
        assert_eq!(edges[101], 102);
        assert!(edges[BUCKETS - 1] > 1_000_000, "the last edge passes 1 s");
    }

    #[test]
    fn a_value_is_counted_under_its_buckets_upper_edge() {
        let edges = bucket_edges();
        // 0.0005 ms is 0 µs after truncation: bucket [0, 1) printed under 1 µs.
        assert_eq!(bucket_of(&edges, 0.0005), 1);
        assert_eq!(bucket_of(&edges, 0.1005), 101);
        assert_eq!(bucket_of(&edges, -1.0), 0);
        assert_eq!(bucket_of(&edges, 1e9), BUCKETS - 1);
    }

    #[test]
    fn a_distribution_against_itself_scores_zero() {
        let values = spread(10_000, 25.0);
        let dist = Distribution::from_values(&values).unwrap();
        assert_eq!(demerit_ms(&dist, &dist), 0.0);
    }

    #[test]
    fn a_shift_by_a_constant_scores_that_constant() {
        // The same binned curve moved right by c: every quantile's time moves by c.
        let a = Distribution::from_values(&spread(10_000, 25.0)).unwrap();
        let shifted = Distribution {
            points: a.points().iter().map(|&(x, y)| (x + 0.25, y)).collect(),
        };
        let demerit = demerit_ms(&shifted, &a);
        assert!((demerit - 0.25).abs() < 1e-9, "demerit {demerit}");
    }

    #[test]
    fn binning_truncates_to_whole_microseconds_as_disksim_does() {
        // A trace's 1005 µs reads as 1.005 ms, which scales back to 1004.99... µs: DiskSim
        // truncates that to 1004 µs, in the bucket [995, 1005) printed under 1005, not in
        // [1005, 1016) where the exact value belongs.
        let edges = bucket_edges();
        let bucket = bucket_of(&edges, 1005.0 / 1000.0);
        assert_eq!((edges[bucket - 1], edges[bucket]), (995, 1005));
        assert_eq!(bucket_of(&edges, 1.0051), bucket + 1);
    }

    #[test]
    fn binning_truncates_the_exact_product_as_disksims_x87_build_does() {
        // DiskSim 4.0 built for 32-bit x86 bins a trace's 688 µs under 0.688 ms (its
        // hp_c3323a.outv "VALIDATE Trace access time distribution" opens with 4 there):
        // 688.0 / 1000.0 is just below 0.688, and so is its exact product by 1000.
        let edges = bucket_edges();
        assert_eq!(edges[bucket_of(&edges, 688.0 / 1000.0)], 688);
        assert_eq!(
            (688.0_f64 / 1000.0 * 1000.0) as i64,
            688,
            "double rounding differs"
        );
        assert_eq!(scaled_micros(688.0 / 1000.0), 687);
        assert_eq!(scaled_micros(1.0), 1000);
        assert_eq!(scaled_micros(0.6885), 688);
        assert_eq!(scaled_micros(-688.0 / 1000.0), -687);
    }

    #[test]
    fn a_larger_shift_on_grown_buckets_comes_close_to_the_shift() {
        let values = spread(10_000, 25.0);
        let shifted: Vec<f64> = values.iter().map(|v| v + 1.0).collect();
        let a = Distribution::from_values(&values).unwrap();
        let b = Distribution::from_values(&shifted).unwrap();
        let demerit = demerit_ms(&a, &b);
        // Buckets 1 % wide blur each curve by up to 1 % of its time.
        assert!((demerit - 1.0).abs() < 0.05, "demerit {demerit}");
    }

    #[test]
    fn empty_values_give_no_distribution() {
        assert_eq!(Distribution::from_values(&[]), None);
    }
}
