//! The block layer's merge hash of queued requests by end sector (`elevator_queue->hash`).
//!
//! 64 buckets (`ELV_HASH_BITS`) indexed by `hash_64(end)`, each a list newest first, linked
//! through the request slots, so adding and removing touch only neighbours and allocate
//! nothing once the slots have been seen. A lookup walks the bucket as the kernel does and
//! drops the unmergeable requests it meets (they never become mergeable again, so dropping
//! them early or late answers the same).
//! Kernel: block/elevator.c elv_rqhash_add(), elv_rqhash_del(), elv_rqhash_find().

/// `ELV_HASH_BITS`.
const HASH_BITS: u32 = 6;

/// No slot.
const NIL: u32 = u32::MAX;

fn opt(s: u32) -> Option<usize> {
    (s != NIL).then_some(s as usize)
}

fn raw(s: Option<usize>) -> u32 {
    match s {
        Some(s) => u32::try_from(s)
            .ok()
            .filter(|&s| s != NIL)
            .expect("hash slots fit in 32 bits"),
        None => NIL,
    }
}

/// A slot's place on the hash (`rq->hash`): the end it was added under and its neighbours
/// in that end's bucket, as `u32`s (`NIL` for none): 16 bytes a slot, touched at every
/// insert and dispatch.
#[derive(Clone, Copy, Debug)]
struct HashLink {
    end: u64,
    newer: u32,
    older: u32,
}

/// Kernel: hash_min() on a 64-bit key: hash_64(end, ELV_HASH_BITS).
fn hash_bucket(end: u64) -> usize {
    (end.wrapping_mul(crate::id_map::GOLDEN_RATIO_64) >> (64 - HASH_BITS)) as usize
}

/// The hash over slots `0..`: a slot is on it at most once.
#[derive(Clone, Debug)]
pub(crate) struct ElvHash {
    /// The newest slot of each bucket.
    heads: [Option<usize>; 1 << HASH_BITS],
    links: Vec<Option<HashLink>>,
}

impl Default for ElvHash {
    fn default() -> ElvHash {
        ElvHash {
            heads: [None; 1 << HASH_BITS],
            links: Vec::new(),
        }
    }
}

impl ElvHash {
    fn link_mut(&mut self, slot: usize) -> &mut HashLink {
        self.links[slot]
            .as_mut()
            .expect("a chained request is on the hash")
    }

    /// The end `slot` is hashed under, if it is on the hash.
    pub(crate) fn end_of(&self, slot: usize) -> Option<u64> {
        self.links.get(slot).copied().flatten().map(|l| l.end)
    }

    /// Kernel: elv_rqhash_add(): `slot` at the head of `end`'s bucket.
    pub(crate) fn add(&mut self, slot: usize, end: u64) {
        debug_assert!(self.end_of(slot).is_none(), "slot {slot} is already hashed");
        if self.links.len() <= slot {
            self.grow(slot);
        }
        let bucket = hash_bucket(end);
        let older = self.heads[bucket].replace(slot);
        self.links[slot] = Some(HashLink {
            end,
            newer: NIL,
            older: raw(older),
        });
        if let Some(o) = older {
            self.link_mut(o).newer = raw(Some(slot));
        }
    }

    /// Room for `slot`'s link: once per slot ever used, out of the hot path.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, slot: usize) {
        self.links.resize(slot + 1, None);
    }

    /// Kernel: elv_rqhash_del(): off its bucket, if on one.
    pub(crate) fn del(&mut self, slot: usize) {
        let Some(link) = self.links.get_mut(slot).and_then(Option::take) else {
            return;
        };
        if let Some(o) = opt(link.older) {
            self.link_mut(o).newer = link.newer;
        }
        match opt(link.newer) {
            Some(n) => self.link_mut(n).older = link.older,
            None => self.heads[hash_bucket(link.end)] = opt(link.older),
        }
    }

    /// Kernel: elv_rqhash_find(): the newest slot ending at `end` that is `mergeable`,
    /// dropping the unmergeable slots of the bucket met before it.
    pub(crate) fn find(&mut self, end: u64, mergeable: impl Fn(usize) -> bool) -> Option<usize> {
        let mut at = self.heads[hash_bucket(end)];
        while let Some(slot) = at {
            let link = self.links[slot].expect("a chained request is on the hash");
            if !mergeable(slot) {
                self.del(slot);
            } else if link.end == end {
                return Some(slot);
            }
            at = opt(link.older);
        }
        None
    }

    /// O(n) check: each bucket's links agree both ways and each slot is in its end's
    /// bucket; returns the slots on the hash with their ends.
    pub(crate) fn check(&self) -> Vec<(usize, u64)> {
        let mut out = Vec::new();
        for (bucket, &head) in self.heads.iter().enumerate() {
            let (mut newer, mut at) = (None, head);
            while let Some(slot) = at {
                let link = self.links[slot].expect("a chained request is on the hash");
                assert_eq!(
                    hash_bucket(link.end),
                    bucket,
                    "slot {slot} in another bucket"
                );
                assert_eq!(opt(link.newer), newer, "slot {slot}: chain links disagree");
                out.push((slot, link.end));
                (newer, at) = (Some(slot), opt(link.older));
            }
        }
        let linked = self.links.iter().flatten().count();
        assert_eq!(linked, out.len(), "a hashed slot is in no bucket");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newest mergeable slot of an end is found; unmergeable ones met first are dropped,
    /// and slots of other ends sharing the bucket are passed over.
    #[test]
    fn find_returns_newest_mergeable_and_drops_unmergeable() {
        let mut h = ElvHash::default();
        let end = 1000;
        // An end that shares `end`'s bucket.
        let other = (end + 1..)
            .find(|&e| hash_bucket(e) == hash_bucket(end))
            .unwrap();
        h.add(0, end);
        h.add(1, end);
        h.add(2, other);
        h.add(3, end);
        assert_eq!(h.find(end, |s| s != 3), Some(1));
        assert_eq!(
            h.end_of(3),
            None,
            "the unmergeable slot met first is dropped"
        );
        assert_eq!(h.find(other, |_| true), Some(2));
        h.del(1);
        assert_eq!(h.find(end, |_| true), Some(0));
        h.del(0);
        assert_eq!(h.find(end, |_| true), None);
        assert_eq!(h.check(), vec![(2, other)]);
    }
}
