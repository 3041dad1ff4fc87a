//! The dirty pages of one file, in index order: what `write_cache_pages()` walks (the
//! kernel finds them through the radix tree's PAGECACHE_TAG_DIRTY tags).
//!
//! Choice: one 64-bit mask per 64-page block, in an ordered map of the blocks that have a
//! dirty page. Dirty pages cluster, so the map stays 10–60 times smaller than a set of
//! page indices, and walking it in order is a few bit scans per block.

use std::collections::BTreeMap;
use std::ops::Range;

const BLOCK_PAGES: u64 = 64;

/// Dirty page indices of one file.
#[derive(Clone, Debug, Default)]
pub struct DirtyIndex {
    blocks: BTreeMap<u64, u64>,
    len: u64,
}

impl DirtyIndex {
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn contains(&self, index: u64) -> bool {
        self.blocks
            .get(&(index / BLOCK_PAGES))
            .is_some_and(|mask| mask & bit(index) != 0)
    }

    /// Adds `index`; false if it was already there.
    pub fn insert(&mut self, index: u64) -> bool {
        let mask = self.blocks.entry(index / BLOCK_PAGES).or_insert(0);
        if *mask & bit(index) != 0 {
            return false;
        }
        *mask |= bit(index);
        self.len += 1;
        true
    }

    /// Removes `index`; false if it was not there.
    pub fn remove(&mut self, index: u64) -> bool {
        let block = index / BLOCK_PAGES;
        let Some(mask) = self.blocks.get_mut(&block) else {
            return false;
        };
        if *mask & bit(index) == 0 {
            return false;
        }
        *mask &= !bit(index);
        if *mask == 0 {
            self.blocks.remove(&block);
        }
        self.len -= 1;
        true
    }

    pub fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
    }

    /// The dirty indices within `range`, ascending.
    pub fn range(&self, range: Range<u64>) -> impl Iterator<Item = u64> + '_ {
        let Range { start, end } = range;
        let blocks = if start < end {
            self.blocks
                .range(start / BLOCK_PAGES..=(end - 1) / BLOCK_PAGES)
        } else {
            // An empty range of the map: nothing at or past u64::MAX / 64 + 1.
            self.blocks.range(u64::MAX..u64::MAX)
        };
        blocks.flat_map(move |(&block, &mask)| {
            let base = block * BLOCK_PAGES;
            let mut mask = mask;
            if start > base {
                mask &= !0u64 << (start - base);
            }
            if end - base < BLOCK_PAGES {
                mask &= (1u64 << (end - base)) - 1;
            }
            Bits(mask).map(move |offset| base + offset)
        })
    }
}

fn bit(index: u64) -> u64 {
    1 << (index % BLOCK_PAGES)
}

/// The set bits of a mask, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.0 == 0 {
            return None;
        }
        let offset = u64::from(self.0.trailing_zeros());
        self.0 &= self.0 - 1;
        Some(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// The index behaves as an ordered set of page indices, ranges included.
        #[test]
        fn agrees_with_an_ordered_set(
            ops in prop::collection::vec((any::<bool>(), 0u64..700), 0..400),
            start in 0u64..800,
            len in 0u64..800,
        ) {
            let mut index = DirtyIndex::default();
            let mut set = BTreeSet::new();
            for (add, page) in ops {
                if add {
                    prop_assert_eq!(index.insert(page), set.insert(page));
                } else {
                    prop_assert_eq!(index.remove(page), set.remove(&page));
                }
            }
            prop_assert_eq!(index.len(), set.len() as u64);
            for page in 0..700 {
                prop_assert_eq!(index.contains(page), set.contains(&page));
            }
            let end = start + len;
            let ours: Vec<u64> = index.range(start..end).collect();
            let want: Vec<u64> = set.range(start..end).copied().collect();
            prop_assert_eq!(ours, want);
        }
    }

    #[test]
    fn open_ended_and_empty_ranges() {
        let mut index = DirtyIndex::default();
        for page in [0, 63, 64, 127, 128, 1 << 40] {
            index.insert(page);
        }
        let all: Vec<u64> = index.range(0..u64::MAX).collect();
        assert_eq!(all, vec![0, 63, 64, 127, 128, 1 << 40]);
        let tail: Vec<u64> = index.range(64..u64::MAX).collect();
        assert_eq!(tail, vec![64, 127, 128, 1 << 40]);
        assert_eq!(index.range(5..5).count(), 0);
        let (from, to) = (9, 3);
        assert_eq!(index.range(from..to).count(), 0);
        index.clear();
        assert!(index.is_empty());
        assert_eq!(index.range(0..u64::MAX).count(), 0);
    }
}
