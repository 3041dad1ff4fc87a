//! A file's cached pages keyed by page index: a flat, two-level radix map (the kernel's
//! `address_space` radix tree / xarray, reduced to two levels).
//!
//! Choice: the directory holds one slot per 64-page block of the file's extent (4 bytes per
//! 256 KiB: 16 KiB for a 1 GiB file), naming a leaf for the blocks that hold a page. A leaf
//! is dense: 64 values at their offsets and a presence mask, so a look-up is two array reads
//! and a bit test, without hashing or probing. A leaf is freed when its last page goes and
//! reused by the next block that needs one, so memory follows the blocks in use, not how
//! long the run has churned (the hashed map this replaces left a tombstone per removed page
//! that only a rebuild reclaimed; issue 34). The cost: a leaf holding a single page still
//! takes its 64 slots. Leaves that store only their pages, found by the rank of the page's
//! bit, were tried: without a `popcnt` instruction in the build target the rank cost more
//! than the hashing it saved.

use std::ops::Range;

const LEAF_PAGES: u64 = 64;
const NO_LEAF: u32 = u32::MAX;

/// The pages of one 64-page block, each at its offset in the block.
#[derive(Clone, Debug)]
struct Leaf<T> {
    present: u64,
    /// Pages carrying the map's tag (a subset of `present`).
    tagged: u64,
    items: Box<[T; LEAF_PAGES as usize]>,
}

/// Values keyed by page index, some of them tagged (the kernel's radix-tree tags, here
/// one: the page cache's dirty tag), walked in index order.
#[derive(Clone, Debug)]
pub struct PageMap<T> {
    /// Block (index / 64) to its leaf's slot, `NO_LEAF` for a block without pages.
    dir: Vec<u32>,
    leaves: Vec<Leaf<T>>,
    /// Slots of `leaves` free for reuse (their storage kept: every leaf is the same size).
    free: Vec<u32>,
    len: u64,
    /// One bit per block with a tagged page: ordered walks of the tagged pages skip 64
    /// blocks (4096 pages) a word.
    tagged_blocks: Vec<u64>,
    tagged_len: u64,
}

impl<T> Default for PageMap<T> {
    fn default() -> Self {
        PageMap {
            dir: Vec::new(),
            leaves: Vec::new(),
            free: Vec::new(),
            len: 0,
            tagged_blocks: Vec::new(),
            tagged_len: 0,
        }
    }
}

/// A page's block and its offset in the block.
fn split(index: u64) -> (usize, usize) {
    ((index / LEAF_PAGES) as usize, (index % LEAF_PAGES) as usize)
}

impl<T: Copy + Default> PageMap<T> {
    pub fn len(&self) -> u64 {
        self.len
    }

    fn slot(&self, block: usize) -> Option<usize> {
        match self.dir.get(block) {
            Some(&slot) if slot != NO_LEAF => Some(slot as usize),
            _ => None,
        }
    }

    pub fn get(&self, index: u64) -> Option<&T> {
        let (block, offset) = split(index);
        let leaf = &self.leaves[self.slot(block)?];
        (leaf.present & (1 << offset) != 0).then(|| &leaf.items[offset])
    }

    pub fn get_mut(&mut self, index: u64) -> Option<&mut T> {
        let (block, offset) = split(index);
        let slot = self.slot(block)?;
        let leaf = &mut self.leaves[slot];
        (leaf.present & (1 << offset) != 0).then(|| &mut leaf.items[offset])
    }

    pub fn contains(&self, index: u64) -> bool {
        let (block, offset) = split(index);
        self.slot(block)
            .is_some_and(|slot| self.leaves[slot].present & (1 << offset) != 0)
    }

    /// Adds `value` at `index`; false (and the map unchanged) if a value is there already.
    #[cfg(test)]
    pub fn insert(&mut self, index: u64, value: T) -> bool {
        self.insert_tagged(index, value, false)
    }

    /// [`PageMap::insert`], tagged when `tagged`, through one look-up.
    pub fn insert_tagged(&mut self, index: u64, value: T, tagged: bool) -> bool {
        let (block, offset) = split(index);
        let slot = match self.slot(block) {
            Some(slot) => slot,
            None => self.new_leaf(block),
        };
        let leaf = &mut self.leaves[slot];
        if leaf.present & (1 << offset) != 0 {
            return false;
        }
        leaf.items[offset] = value;
        leaf.present |= 1 << offset;
        self.len += 1;
        if tagged {
            self.tag_at(block, slot, offset);
        }
        true
    }

    /// Gives `block` a leaf (a freed one when there is one); returns its slot.
    fn new_leaf(&mut self, block: usize) -> usize {
        if block >= self.dir.len() {
            self.dir.resize(block + 1, NO_LEAF);
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.leaves.push(Leaf {
                    present: 0,
                    tagged: 0,
                    items: Box::new([T::default(); LEAF_PAGES as usize]),
                });
                u32::try_from(self.leaves.len() - 1).expect("page map leaves overflow")
            }
        };
        self.dir[block] = slot;
        slot as usize
    }

    /// Removes and returns the value at `index`.
    pub fn remove(&mut self, index: u64) -> Option<T> {
        let (block, offset) = split(index);
        let slot = self.slot(block)?;
        let leaf = &mut self.leaves[slot];
        if leaf.present & (1 << offset) == 0 {
            return None;
        }
        leaf.present &= !(1 << offset);
        self.len -= 1;
        let value = leaf.items[offset];
        if leaf.tagged & (1 << offset) != 0 {
            self.untag_at(block, slot, offset);
        }
        if self.leaves[slot].present == 0 {
            self.free_leaf(block, slot);
        }
        Some(value)
    }

    fn free_leaf(&mut self, block: usize, slot: usize) {
        self.dir[block] = NO_LEAF;
        self.free.push(slot as u32);
    }

    /// Keeps the values for which `keep(index, value)` is true, in index order.
    pub fn retain(&mut self, mut keep: impl FnMut(u64, &mut T) -> bool) {
        for block in 0..self.dir.len() {
            let Some(slot) = self.slot(block) else {
                continue;
            };
            let base = block as u64 * LEAF_PAGES;
            for offset in Bits(self.leaves[slot].present) {
                let offset = offset as usize;
                let leaf = &mut self.leaves[slot];
                if !keep(base + offset as u64, &mut leaf.items[offset]) {
                    leaf.present &= !(1 << offset);
                    self.len -= 1;
                    if leaf.tagged & (1 << offset) != 0 {
                        self.untag_at(block, slot, offset);
                    }
                }
            }
            if self.leaves[slot].present == 0 {
                self.free_leaf(block, slot);
            }
        }
    }

    /// Tags the page at `index` (present); false if it was tagged already.
    #[cfg(test)]
    pub fn tag(&mut self, index: u64) -> bool {
        let (block, offset) = split(index);
        let slot = self.slot(block).expect("tagging an absent page");
        debug_assert!(
            self.leaves[slot].present & (1 << offset) != 0,
            "tagging an absent page"
        );
        self.tag_at(block, slot, offset)
    }

    /// Tags the page at `index` if present and returns it, with whether the tag is new:
    /// [`PageMap::get_mut`] and [`PageMap::tag`] through one look-up.
    pub fn tag_get_mut(&mut self, index: u64) -> Option<(&mut T, bool)> {
        let (block, offset) = split(index);
        let slot = self.slot(block)?;
        if self.leaves[slot].present & (1 << offset) == 0 {
            return None;
        }
        let newly = self.tag_at(block, slot, offset);
        Some((&mut self.leaves[slot].items[offset], newly))
    }

    fn tag_at(&mut self, block: usize, slot: usize, offset: usize) -> bool {
        let leaf = &mut self.leaves[slot];
        if leaf.tagged & (1 << offset) != 0 {
            return false;
        }
        if leaf.tagged == 0 {
            let word = block / 64;
            if word >= self.tagged_blocks.len() {
                self.tagged_blocks.resize(word + 1, 0);
            }
            self.tagged_blocks[word] |= 1 << (block % 64);
        }
        leaf.tagged |= 1 << offset;
        self.tagged_len += 1;
        true
    }

    /// Clears the tag of the page at `index`; false if it was not tagged (or is absent).
    pub fn untag(&mut self, index: u64) -> bool {
        let (block, offset) = split(index);
        match self.slot(block) {
            Some(slot) if self.leaves[slot].tagged & (1 << offset) != 0 => {
                self.untag_at(block, slot, offset);
                true
            }
            _ => false,
        }
    }

    fn untag_at(&mut self, block: usize, slot: usize, offset: usize) {
        let leaf = &mut self.leaves[slot];
        leaf.tagged &= !(1 << offset);
        self.tagged_len -= 1;
        if leaf.tagged == 0 {
            self.tagged_blocks[block / 64] &= !(1 << (block % 64));
        }
    }

    /// Clears every tag.
    pub fn untag_all(&mut self) {
        for word in 0..self.tagged_blocks.len() {
            let mut bits = std::mem::take(&mut self.tagged_blocks[word]);
            while bits != 0 {
                let block = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let slot = self.slot(block).expect("tagged block without a leaf");
                self.leaves[slot].tagged = 0;
            }
        }
        self.tagged_len = 0;
    }

    /// Tagged pages.
    pub fn tagged_len(&self) -> u64 {
        self.tagged_len
    }

    pub fn is_tagged(&self, index: u64) -> bool {
        let (block, offset) = split(index);
        self.slot(block)
            .is_some_and(|slot| self.leaves[slot].tagged & (1 << offset) != 0)
    }

    /// The tagged page indices within `range`, ascending.
    pub fn tagged(&self, range: Range<u64>) -> impl Iterator<Item = u64> + '_ {
        let Range { start, end } = range;
        // Blocks past the tagged ones' words hold no tag: the walk stops there.
        let blocks = self.tagged_blocks.len() as u64 * 64;
        let first_block = (start / LEAF_PAGES).min(blocks) as usize;
        let end_block = if end > start {
            ((end - 1) / LEAF_PAGES + 1).min(blocks) as usize
        } else {
            first_block
        };
        TaggedBlocks {
            words: &self.tagged_blocks,
            next: first_block,
            end: end_block.max(first_block),
        }
        .flat_map(move |block| {
            let slot = self.slot(block).expect("tagged block without a leaf");
            let base = block as u64 * LEAF_PAGES;
            let mut mask = self.leaves[slot].tagged;
            if start > base {
                mask &= !0u64 << (start - base);
            }
            if end - base < LEAF_PAGES {
                mask &= (1u64 << (end - base)) - 1;
            }
            Bits(mask).map(move |offset| base + offset)
        })
    }

    /// Every (index, value), in index order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> + '_ {
        (0..self.dir.len())
            .filter_map(|block| Some((block, self.slot(block)?)))
            .flat_map(move |(block, slot)| {
                let leaf = &self.leaves[slot];
                let base = block as u64 * LEAF_PAGES;
                Bits(leaf.present).map(move |offset| (base + offset, &leaf.items[offset as usize]))
            })
    }

    /// Bytes of storage held (directory, leaves and their pages), for memory checks.
    #[cfg(test)]
    pub fn storage_bytes(&self) -> usize {
        self.dir.capacity() * std::mem::size_of::<u32>()
            + self.leaves.capacity() * std::mem::size_of::<Leaf<T>>()
            + self.free.capacity() * std::mem::size_of::<u32>()
            + self.leaves.len() * std::mem::size_of::<[T; LEAF_PAGES as usize]>()
    }
}

/// The blocks `next..end` whose bit is set in `words`, ascending.
struct TaggedBlocks<'a> {
    words: &'a [u64],
    next: usize,
    end: usize,
}

impl Iterator for TaggedBlocks<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        while self.next < self.end {
            let word = self.next / 64;
            let bits = self.words[word] & (!0u64 << (self.next % 64));
            if bits == 0 {
                self.next = (word + 1) * 64;
                continue;
            }
            let block = word * 64 + bits.trailing_zeros() as usize;
            if block >= self.end {
                break;
            }
            self.next = block + 1;
            return Some(block);
        }
        self.next = self.end;
        None
    }
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
    use std::collections::{BTreeMap, BTreeSet, VecDeque};

    proptest! {
        /// The map behaves as an ordered map of page indices with a tagged subset: inserts,
        /// removals, look-ups, retain, tags, ordered walks of the tagged pages and iteration.
        #[test]
        fn agrees_with_an_ordered_map(
            ops in prop::collection::vec((0u8..7, 0u64..9000), 0..800),
            start in 0u64..10_000,
            len in 0u64..10_000,
        ) {
            let mut map: PageMap<u64> = PageMap::default();
            let mut reference: BTreeMap<u64, u64> = BTreeMap::new();
            let mut tags: BTreeSet<u64> = BTreeSet::new();
            for (step, (op, index)) in ops.into_iter().enumerate() {
                let value = step as u64;
                match op {
                    0 => {
                        let fresh = !reference.contains_key(&index);
                        prop_assert_eq!(map.insert(index, value), fresh);
                        reference.entry(index).or_insert(value);
                    }
                    1 => {
                        // Odd steps insert tagged; an existing value is left as it was.
                        let fresh = !reference.contains_key(&index);
                        prop_assert_eq!(map.insert_tagged(index, value, step % 2 == 1), fresh);
                        reference.entry(index).or_insert(value);
                        if fresh && step % 2 == 1 {
                            tags.insert(index);
                        }
                    }
                    2 => {
                        prop_assert_eq!(map.remove(index), reference.remove(&index));
                        tags.remove(&index);
                    }
                    3 => {
                        // Drop the values of one residue class, bump the rest.
                        let keep = |i: u64, v: &mut u64| {
                            *v += 1;
                            i % 7 != index % 7
                        };
                        map.retain(keep);
                        reference.retain(|&i, v| keep(i, v));
                        tags.retain(|i| reference.contains_key(i));
                    }
                    4 if reference.contains_key(&index) && step % 2 == 0 => {
                        prop_assert_eq!(map.tag(index), tags.insert(index));
                    }
                    4 => {
                        let got = map.tag_get_mut(index).map(|(v, newly)| (*v, newly));
                        let want = reference.get(&index).map(|&v| (v, tags.insert(index)));
                        prop_assert_eq!(got, want);
                    }
                    5 => prop_assert_eq!(map.untag(index), tags.remove(&index)),
                    6 if index % 50 == 0 => {
                        map.untag_all();
                        tags.clear();
                    }
                    _ => {}
                }
                prop_assert_eq!(map.len(), reference.len() as u64);
                prop_assert_eq!(map.tagged_len(), tags.len() as u64);
                prop_assert_eq!(map.get(index), reference.get(&index));
                prop_assert_eq!(map.contains(index), reference.contains_key(&index));
                prop_assert_eq!(map.is_tagged(index), tags.contains(&index));
            }
            let ours: Vec<(u64, u64)> = map.iter().map(|(i, &v)| (i, v)).collect();
            let want: Vec<(u64, u64)> = reference.into_iter().collect();
            prop_assert_eq!(ours, want);
            let end = start + len;
            let ours: Vec<u64> = map.tagged(start..end).collect();
            let want: Vec<u64> = tags.range(start..end).copied().collect();
            prop_assert_eq!(ours, want);
            let ours: Vec<u64> = map.tagged(start..u64::MAX).collect();
            let want: Vec<u64> = tags.range(start..).copied().collect();
            prop_assert_eq!(ours, want);
        }
    }

    #[test]
    fn tagged_walks_of_open_ended_and_empty_ranges() {
        let mut map: PageMap<u8> = PageMap::default();
        for page in [0, 63, 64, 127, 128, 1 << 20] {
            map.insert(page, 0);
            map.tag(page);
        }
        map.insert(5, 0);
        let all: Vec<u64> = map.tagged(0..u64::MAX).collect();
        assert_eq!(all, vec![0, 63, 64, 127, 128, 1 << 20]);
        let tail: Vec<u64> = map.tagged(64..u64::MAX).collect();
        assert_eq!(tail, vec![64, 127, 128, 1 << 20]);
        assert_eq!(map.tagged(5..5).count(), 0);
        let (from, to) = (9, 3);
        assert_eq!(map.tagged(from..to).count(), 0);
        assert_eq!(map.tagged(u64::MAX - 1..u64::MAX).count(), 0);
        map.untag_all();
        assert_eq!(map.tagged_len(), 0);
        assert_eq!(map.tagged(0..u64::MAX).count(), 0);
        assert_eq!(map.len(), 7);
    }

    /// Issue 34: pages coming and going at random over a 1 GiB file leave the map's storage
    /// where it was once the pages held stopped growing: a leaf emptied is reused, not
    /// kept beside a new one.
    #[test]
    fn storage_follows_the_pages_not_the_churn() {
        let mut map: PageMap<u64> = PageMap::default();
        let mut held: VecDeque<u64> = VecDeque::new();
        let mut state = 1u64;
        let mut early = 0;
        for step in 0..400_000u64 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let index = (state >> 32) % (1 << 18);
            if map.insert(index, step) {
                held.push_back(index);
            }
            // A full "cache" of 2000 pages: the oldest goes for each new one.
            if held.len() > 2000 {
                let old = held.pop_front().unwrap();
                assert!(map.remove(old).is_some());
            }
            if step == 50_000 {
                early = map.storage_bytes();
            }
        }
        assert_eq!(map.len(), 2000);
        let late = map.storage_bytes();
        assert!(late * 10 <= early * 11, "grew from {early} to {late} bytes");
    }
}
