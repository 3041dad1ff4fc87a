//! Hash maps keyed by the small integer ids the block layer hands out (request ids, io
//! context ids), for lookups the kernel does in O(1) through a pointer or a hash table.
//!
//! The kernel reaches a request's scheduler data through `rq->elv.priv`, a process's CFQ
//! context through `ioc->icq_hint` / the io context's radix tree, and a task's batching
//! state through `current->io_context`: none of them costs more with more processes or more
//! requests in flight. Ordered maps (`BTreeMap`) or linear scans there made the simulator's
//! cost per request grow with the number of queues. [`IdMap`] is `std`'s `HashMap` with the
//! kernel's own multiplicative hash (`hash_64()`: multiply by `GOLDEN_RATIO_64`, keep the
//! high bits; include/linux/hash.h): ids are unique and mostly sequential, so no keyed hash
//! is needed, and a fixed hasher keeps runs reproducible. Nothing may depend on an `IdMap`'s
//! iteration order; it is only looked up.
//!
//! Choice: the crate bans `HashMap` because a `RandomState` map iterates in a different order
//! each run. This one has no random state (the same inserts give the same table, run after
//! run), and it is never iterated for a decision; the ban is lifted here and only here.
#![allow(clippy::disallowed_types)]

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// `GOLDEN_RATIO_64` of include/linux/hash.h.
pub const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// The kernel's `hash_64()` without the final shift (`HashMap` takes the bits it needs):
/// each integer written is folded into the state and multiplied by the golden ratio.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher {
    state: u64,
}

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // hash_64() keeps the product's high bits, the well-mixed ones (Fibonacci hashing);
        // hashbrown takes its bucket from the low bits, so they are rotated down.
        self.state.rotate_left(32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.state = (self.state ^ value).wrapping_mul(GOLDEN_RATIO_64);
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

/// A `HashMap` keyed by an id, hashed with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{IoContextId, RequestId};
    use std::hash::{BuildHasher, Hash};

    fn hash_of<T: Hash>(value: T) -> u64 {
        BuildHasherDefault::<IdHasher>::default().hash_one(value)
    }

    #[test]
    fn sequential_ids_spread_over_the_low_bits() {
        // 4096 consecutive request ids must not crowd into a few buckets of a 4096-bucket
        // table (an identity hash would be perfect here, but a stride of 4096 would not).
        for stride in [1u64, 3, 8, 4096, 1 << 20] {
            let mut buckets = vec![0u32; 4096];
            for i in 0..4096u64 {
                buckets[(hash_of(RequestId(i * stride)) & 4095) as usize] += 1;
            }
            let worst = buckets.iter().max().copied().unwrap_or(0);
            assert!(worst <= 4, "stride {stride}: {worst} ids in one bucket");
        }
    }

    #[test]
    fn map_finds_what_it_holds() {
        let mut map: IdMap<IoContextId, usize> = IdMap::default();
        for pid in 1000..5096u32 {
            map.insert(IoContextId(pid), pid as usize * 3);
        }
        assert_eq!(map.len(), 4096);
        assert_eq!(map.get(&IoContextId(1000)), Some(&3000));
        assert_eq!(map.get(&IoContextId(5095)), Some(&15285));
        assert_eq!(map.get(&IoContextId(5096)), None);
        assert_eq!(map.remove(&IoContextId(2000)), Some(6000));
        assert_eq!(map.get(&IoContextId(2000)), None);
    }
}
