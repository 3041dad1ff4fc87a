//! fio's random map (its `axmap`): with uniform random offsets and without `norandommap`,
//! every block of a file is used once before any is used again. A drawn block already used
//! gives way to the next free one after it, wrapping to the start (`axmap_next_free()`); an
//! I/O covering several blocks is cut short at the first one already used
//! (`mark_random_map()`); a full map starts over.

/// A bitmap over a file's blocks with a second level that marks full words, so finding the
/// next free block costs a word scan, not a block scan.
///
/// `repr(C)`: the count, size and bits a draw reads first, the second level (touched when a
/// word fills) last.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct RandomMap {
    blocks: u64,
    used: u64,
    words: Vec<u64>,
    /// Bit `i` set: `words[i]` is full.
    full_words: Vec<u64>,
}

impl RandomMap {
    /// A map of `blocks` blocks, none used.
    pub fn new(blocks: u64) -> RandomMap {
        assert!(blocks > 0, "a random map needs at least one block");
        let nwords = blocks.div_ceil(64) as usize;
        RandomMap {
            words: vec![0; nwords],
            full_words: vec![0; nwords.div_ceil(64)],
            blocks,
            used: 0,
        }
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.used == self.blocks
    }

    #[inline]
    pub fn is_free(&self, block: u64) -> bool {
        block < self.blocks && self.words[(block / 64) as usize] & (1 << (block % 64)) == 0
    }

    /// Forgets every use: the next pass over the file.
    pub fn reset(&mut self) {
        self.words.fill(0);
        self.full_words.fill(0);
        self.used = 0;
    }

    /// The first free block at or after `from`, up to the end of the map.
    fn first_free_from(&self, from: u64) -> Option<u64> {
        if from >= self.blocks {
            return None;
        }
        let word = (from / 64) as usize;
        let free_here = !self.words[word] & (u64::MAX << (from % 64));
        if free_here != 0 {
            return Some(word as u64 * 64 + u64::from(free_here.trailing_zeros()))
                .filter(|&block| block < self.blocks);
        }
        // Whole words after this one, skipping full ones by the second level.
        let mut next = word + 1;
        while next < self.words.len() {
            let group = next / 64;
            let not_full = !self.full_words[group] & (u64::MAX << (next % 64));
            if not_full == 0 {
                next = (group + 1) * 64;
                continue;
            }
            let candidate = group * 64 + not_full.trailing_zeros() as usize;
            if candidate >= self.words.len() {
                return None;
            }
            let block =
                candidate as u64 * 64 + u64::from((!self.words[candidate]).trailing_zeros());
            return (block < self.blocks).then_some(block);
        }
        None
    }

    /// The next free block after `block`, wrapping around to the start; `None` when full.
    pub fn next_free(&self, block: u64) -> Option<u64> {
        let after = if block + 1 >= self.blocks {
            0
        } else {
            block + 1
        };
        self.first_free_from(after)
            .or_else(|| self.first_free_from(0))
    }

    /// Marks the free `block` used: [`RandomMap::mark`] of one block, the common case.
    #[inline]
    pub fn mark_one(&mut self, block: u64) {
        debug_assert!(self.is_free(block), "marking a used block");
        let word = (block / 64) as usize;
        self.words[word] |= 1 << (block % 64);
        if self.words[word] == u64::MAX {
            self.full_words[word / 64] |= 1 << (word % 64);
        }
        self.used += 1;
    }

    /// Marks up to `count` blocks from `block` used, stopping at the first one already used
    /// or at the end of the map; returns how many it marked (at least `block` itself, which
    /// must be free).
    pub fn mark(&mut self, block: u64, count: u64) -> u64 {
        assert!(self.is_free(block), "marking a used block");
        let mut marked = 0;
        while marked < count.max(1) && self.is_free(block + marked) {
            let b = block + marked;
            let word = (b / 64) as usize;
            self.words[word] |= 1 << (b % 64);
            if self.words[word] == u64::MAX {
                self.full_words[word / 64] |= 1 << (word % 64);
            }
            marked += 1;
        }
        self.used += marked;
        assert!(self.used <= self.blocks, "more blocks used than exist");
        marked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_used_block_gives_way_to_the_next_free_one_wrapping_at_the_end() {
        let mut map = RandomMap::new(130);
        assert_eq!(map.mark(5, 1), 1);
        assert_eq!(map.next_free(5), Some(6));
        assert_eq!(map.mark(129, 1), 1);
        assert_eq!(map.next_free(129), Some(0), "wraps to the start");
        for block in 0..130 {
            if map.is_free(block) {
                map.mark(block, 1);
            }
        }
        assert!(map.is_full());
        assert_eq!(map.next_free(7), None);
        map.reset();
        assert!(map.is_free(5) && !map.is_full());
    }

    #[test]
    fn a_multi_block_mark_stops_at_a_used_block_and_at_the_end() {
        let mut map = RandomMap::new(10);
        map.mark(4, 1);
        assert_eq!(map.mark(2, 4), 2, "blocks 2 and 3; 4 is used");
        assert_eq!(map.mark(8, 4), 2, "blocks 8 and 9; the map ends");
    }

    proptest! {
        /// next_free agrees with a plain scan, across word and second-level boundaries.
        #[test]
        fn next_free_matches_a_linear_scan(
            blocks in 1u64..9000,
            used in proptest::collection::vec(0u64..9000, 0..400),
            from in 0u64..9000,
        ) {
            let mut map = RandomMap::new(blocks);
            for block in used.into_iter().filter(|&b| b < blocks) {
                if map.is_free(block) {
                    map.mark(block, 1);
                }
            }
            let from = from % blocks;
            let scan = (1..=blocks)
                .map(|step| (from + step) % blocks)
                .find(|&b| map.is_free(b));
            prop_assert_eq!(map.next_free(from), scan);
        }
    }
}
