//! The seeded random streams. One run seed; each simulated process derives its own stream
//! from (seed, process index), so adding a job never shifts another job's offsets.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A pinned PCG generator (Pcg64Mcg from rand_pcg 0.3.1) with the few draws jobs need.
#[derive(Clone, Debug)]
pub struct Rng(Pcg64Mcg);

/// SplitMix64's finaliser: spreads nearby (seed, index) pairs over the whole seed space.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(Pcg64Mcg::seed_from_u64(mix(seed)))
    }

    /// The stream of process `index` under run seed `seed`.
    pub fn for_stream(seed: u64, index: u64) -> Rng {
        Rng::new(mix(seed) ^ mix(index.wrapping_add(0x5851_f42d_4c95_7f2d)))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (n > 0), by widening multiply (bias below 2^-64 per draw).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi]`.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            lo
        } else {
            lo + self.below(hi - lo + 1)
        }
    }

    /// The underlying generator, for device models that take one.
    pub fn pcg(&mut self) -> &mut Pcg64Mcg {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_stream(7, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::for_stream(7, 1).next_u64(),
            Rng::for_stream(7, 2).next_u64()
        );
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = Rng::new(3);
        assert!((0..10_000).all(|_| rng.below(10) < 10));
    }
}
