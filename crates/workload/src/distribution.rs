//! fio's non-uniform random offsets (`random_distribution=zipf|pareto|normal`), as fio 3.33
//! draws them (`lib/zipf.c`, `lib/gauss.c`): a skewed index over the file's blocks, then
//! scattered over the range by a multiplicative hash (the 64-bit golden ratio) plus a random
//! per-file rotation, so the popular blocks lie all over the file rather than at its start.
//! fio keeps no random map for these distributions.
//!
//! The skew is fio's: zipf by Gray et al.'s closed-form approximation with ζ(n) summed over
//! at most 10 million terms, pareto as `(n - 1) · u^(ln h / ln(1 - h))`, normal as the mean
//! of 12 uniform draws plus a uniform deviation of ±`dev`% / 2 of the range.

use crate::job::RandomDistribution;
use crate::rng::Rng;

/// fio's `GOLDEN_RATIO_64`, the multiplier of its `__hash_u64()`.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// fio caps the terms of ζ(n) it sums (`ZIPF_MAX_GEN`).
const ZIPF_MAX_TERMS: u64 = 10_000_000;

/// Uniform draws fio averages for one normal value (`GAUSS_ITERS`).
const GAUSS_DRAWS: u64 = 12;

/// One file's state for a skewed distribution over `ranges` blocks.
#[derive(Clone, Debug)]
pub struct Skewed {
    kind: Kind,
    ranges: u64,
    /// The per-file rotation added after hashing.
    rotation: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    Zipf {
        theta: f64,
        zeta_n: f64,
        zeta_2: f64,
    },
    Pareto {
        power: f64,
    },
    Normal {
        spread: u64,
    },
}

impl Skewed {
    /// The state for `distribution` over `ranges` (> 0) blocks, or `None` for the uniform and
    /// zoned distributions, which fio draws otherwise. The rotation is drawn from `rng`.
    pub fn new(distribution: &RandomDistribution, ranges: u64, rng: &mut Rng) -> Option<Skewed> {
        assert!(ranges > 0, "a distribution over no blocks");
        let kind = match *distribution {
            RandomDistribution::Zipf { theta } => {
                let terms = ranges.min(ZIPF_MAX_TERMS);
                let zeta_n = (1..=terms).map(|i| (i as f64).powf(-theta)).sum();
                Kind::Zipf {
                    theta,
                    zeta_n,
                    zeta_2: 1.0 + 0.5f64.powf(theta),
                }
            }
            RandomDistribution::Pareto { h } => Kind::Pareto {
                power: h.ln() / (1.0 - h).ln(),
            },
            RandomDistribution::Normal { sigma_pct } => {
                // fio: ceil(ranges · dev / 100), at most half the range.
                let spread = ((ranges as f64 * sigma_pct / 100.0).ceil() as u64).min(ranges / 2);
                Kind::Normal { spread }
            }
            RandomDistribution::Uniform | RandomDistribution::Zoned(_) => return None,
        };
        // fio draws the rotation from the file's own 32-bit generator; the normal
        // distribution has none unless a centre is given.
        let rotation = match kind {
            Kind::Normal { .. } => 0,
            _ => rng.next_u64() & u64::from(u32::MAX),
        };
        Some(Skewed {
            kind,
            ranges,
            rotation,
        })
    }

    /// The next block, in `0..ranges`.
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let n = self.ranges;
        let index = match self.kind {
            Kind::Zipf {
                theta,
                zeta_n,
                zeta_2,
            } => zipf_index(n, theta, zeta_n, zeta_2, rng.unit()),
            Kind::Pareto { power } => ((n - 1) as f64 * rng.unit().powf(power)) as u64,
            Kind::Normal { spread } => normal_index(n, spread, rng),
        };
        index
            .wrapping_mul(GOLDEN_RATIO_64)
            .wrapping_add(self.rotation)
            % n
    }
}

/// Gray et al.'s zipf approximation: index 0 with probability 1/ζ(n), 1 with 2^-θ/ζ(n), the
/// rest by the closed form.
fn zipf_index(n: u64, theta: f64, zeta_n: f64, zeta_2: f64, u: f64) -> u64 {
    let nf = n as f64;
    let alpha = 1.0 / (1.0 - theta);
    let eta = (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
    let z = u * zeta_n;
    let value = if z < 1.0 {
        1
    } else if z < 1.0 + 0.5f64.powf(theta) {
        2
    } else {
        1 + (nf * (eta * u - eta + 1.0).powf(alpha)) as u64
    };
    value - 1
}

/// fio's normal: the rounded-up mean of 12 draws in `0..=n`, moved by a uniform deviation in
/// `[-spread/2, spread/2)` that is halved until it stays below `n`.
fn normal_index(n: u64, spread: u64, rng: &mut Rng) -> u64 {
    let sum: u64 = (0..GAUSS_DRAWS).map(|_| rng.below(n + 1)).sum();
    let mean = sum.div_ceil(GAUSS_DRAWS);
    if spread == 0 {
        return mean.min(n - 1);
    }
    let mut dev = rng.below(spread) as i64 - (spread / 2) as i64;
    while mean as i64 + dev >= n as i64 {
        dev /= 2;
    }
    (mean as i64 + dev).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Share of `draws` draws that land in each tenth of the range.
    fn tenths(distribution: RandomDistribution, ranges: u64, draws: u32) -> [f64; 10] {
        let mut rng = Rng::new(3);
        let skewed = Skewed::new(&distribution, ranges, &mut rng).unwrap();
        let mut counts = [0u32; 10];
        for _ in 0..draws {
            let block = skewed.next(&mut rng);
            assert!(block < ranges);
            counts[(block * 10 / ranges) as usize] += 1;
        }
        counts.map(|c| f64::from(c) / f64::from(draws))
    }

    /// fio 3.33 spreads the hot blocks: `random_distribution=zipf:1.2` on a 1 GiB loop
    /// device put about 10 % of its I/Os in each tenth of the range (the measurement).
    #[test]
    fn skewed_distributions_are_scattered_over_the_range() {
        for distribution in [
            RandomDistribution::Zipf { theta: 1.2 },
            RandomDistribution::Pareto { h: 0.9 },
            RandomDistribution::Normal { sigma_pct: 10.0 },
        ] {
            let shares = tenths(distribution.clone(), 262_144, 100_000);
            for share in shares {
                assert!(
                    (0.03..0.25).contains(&share),
                    "{distribution:?}: {shares:?}"
                );
            }
        }
    }

    /// The skew survives the scatter: zipf:1.2 puts most I/Os on few blocks.
    #[test]
    fn zipf_keeps_its_skew() {
        let mut rng = Rng::new(5);
        let ranges = 100_000;
        let skewed =
            Skewed::new(&RandomDistribution::Zipf { theta: 1.2 }, ranges, &mut rng).unwrap();
        let mut counts = std::collections::BTreeMap::<u64, u32>::new();
        for _ in 0..100_000 {
            *counts.entry(skewed.next(&mut rng)).or_default() += 1;
        }
        let mut hits: Vec<u32> = counts.into_values().collect();
        hits.sort_unstable_by(|a, b| b.cmp(a));
        let top_1pct: u32 = hits.iter().take(1000).sum();
        assert!(top_1pct > 60_000, "{top_1pct} of 100000 on the hottest 1 %");
    }
}
