//! Kyber's domain tokens: a scalable bitmap, allocated bit by bit as 6.12's does it.
//! Kernel: `lib/sbitmap.c` — sbitmap_init_node(), sbitmap_get(), sbitmap_resize(),
//! sbitmap_deferred_clear(), sbitmap_queue_clear(), and `include/linux/sbitmap.h`'s
//! sbitmap_calculate_shift() and __map_depth().
//!
//! Whether a token can be had is not "fewer than `depth` in use": the bitmap is split into
//! words of `1 << shift` bits, a freed bit is only marked in the word's `cleared` mask (and
//! folded back when a search finds the word full), and after a shrink (sbitmap_resize())
//! only bits below the new depth may be handed out, while tokens above it stay held until
//! their requests finish. So the bits themselves are modelled, with the per-CPU allocation
//! hint that decides which word a search starts in.
//!
//! How the core models what is around it: one CPU (the hint is one number, and a freed
//! token's CPU is that CPU); kyber's pools are never round-robin and never shallow, so a
//! search starts at bit 0 of the hint's word. Where the kernel draws a random hint
//! (get_random_u32_below(): a hint past a shrunk depth), the core draws 0, as the oracle's
//! shim does. The wait queues (sbitmap_queue_wake_up() and its wake batches) only re-run
//! the hardware queue, which the drivers do after every completion anyway, so they are not
//! modelled.

/// `BITS_PER_LONG`.
const BITS_PER_WORD: u32 = 64;

/// Kernel: struct sbitmap_word.
#[derive(Clone, Copy, Debug, Default)]
struct Word {
    word: u64,
    /// Freed bits not yet folded back into `word`.
    cleared: u64,
}

/// Kernel: struct sbitmap (round_robin false, alloc_hint on, one CPU).
#[derive(Clone, Debug)]
pub struct Sbitmap {
    depth: u32,
    shift: u32,
    map_nr: u32,
    map: Vec<Word>,
    alloc_hint: u32,
}

/// Kernel: sbitmap_calculate_shift(): words of 64 bits, fewer for small maps so that a map
/// spreads over at least four words.
fn calculate_shift(depth: u32) -> u32 {
    let mut shift = BITS_PER_WORD.ilog2();
    if depth >= 4 {
        while (4u32 << shift) > depth {
            shift -= 1;
        }
    }
    shift
}

impl Sbitmap {
    /// Kernel: sbitmap_queue_init_node(depth, shift -1, round_robin false). The hint starts
    /// at get_random_u32_below(depth), drawn as 0 (see the module doc).
    pub fn new(depth: u32) -> Sbitmap {
        let shift = calculate_shift(depth);
        let map_nr = depth.div_ceil(1 << shift);
        Sbitmap {
            depth,
            shift,
            map_nr,
            map: vec![Word::default(); map_nr as usize],
            alloc_hint: 0,
        }
    }

    /// The current depth (`sb.depth`).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Kernel: __map_depth(): the bits of word `index` below the depth.
    fn map_depth(&self, index: u32) -> u32 {
        if index == self.map_nr - 1 {
            self.depth - (index << self.shift)
        } else {
            1 << self.shift
        }
    }

    /// Kernel: sbitmap_deferred_clear(map, depth, 0, wrap true): folds the word's freed bits
    /// back; true if that may have freed something to retry for.
    fn deferred_clear(&mut self, index: u32, depth: u32) -> bool {
        let w = &mut self.map[index as usize];
        if w.cleared == 0 {
            if depth == 0 {
                return false;
            }
            let mask = u64::MAX >> (BITS_PER_WORD - depth);
            return w.word & mask != mask;
        }
        w.word &= !std::mem::take(&mut w.cleared);
        true
    }

    /// Kernel: sbitmap_find_bit_in_word() from bit 0: the lowest free bit below `depth`,
    /// folding freed bits back when the word looks full.
    fn find_bit_in_word(&mut self, index: u32, depth: u32) -> Option<u32> {
        loop {
            let w = &mut self.map[index as usize];
            let free = !w.word & (u64::MAX >> (BITS_PER_WORD - depth));
            if free != 0 {
                let nr = free.trailing_zeros();
                w.word |= 1 << nr;
                return Some(nr);
            }
            if !self.deferred_clear(index, depth) {
                return None;
            }
        }
    }

    /// Kernel: __sbitmap_queue_get() / sbitmap_get(): a free bit, searching the words from
    /// the hint's, each from bit 0; `None` when every word below the depth is full.
    pub fn get(&mut self) -> Option<u32> {
        let depth = self.depth;
        // update_alloc_hint_before_get(): a hint past the depth is redrawn (as 0).
        if self.alloc_hint >= depth {
            self.alloc_hint = 0;
        }
        let hint = self.alloc_hint;
        let mut index = hint >> self.shift;
        let mut found = None;
        for _ in 0..self.map_nr {
            let word_depth = self.map_depth(index);
            if word_depth != 0 {
                if let Some(bit) = self.find_bit_in_word(index, word_depth) {
                    found = Some(bit + (index << self.shift));
                    break;
                }
            }
            index += 1;
            if index >= self.map_nr {
                index = 0;
            }
        }
        // update_alloc_hint_after_get(): only a used hint moves on.
        match found {
            None => self.alloc_hint = 0,
            Some(nr) if nr == hint => {
                let next = nr + 1;
                self.alloc_hint = if next >= depth.wrapping_sub(1) {
                    0
                } else {
                    next
                };
            }
            Some(_) => {}
        }
        found
    }

    /// Kernel: sbitmap_queue_clear(): the bit is marked freed (deferred), and becomes the
    /// CPU's hint if it lies below the depth (sbitmap_update_cpu_hint()).
    pub fn clear(&mut self, nr: u32) {
        let w = &mut self.map[(nr >> self.shift) as usize];
        let bit = 1u64 << (nr & ((1 << self.shift) - 1));
        assert!(w.word & bit != 0, "token {nr} freed but not held");
        assert!(w.cleared & bit == 0, "token {nr} freed twice");
        w.cleared |= bit;
        if nr < self.depth {
            self.alloc_hint = nr;
        }
    }

    /// Kernel: sbitmap_queue_resize() / sbitmap_resize(): every word's freed bits are folded
    /// back, then the depth changes (never past the depth the map was built with).
    pub fn resize(&mut self, depth: u32) {
        assert!(
            depth as usize <= self.map.len() << self.shift,
            "resize past the map"
        );
        for w in &mut self.map[..self.map_nr as usize] {
            w.word &= !std::mem::take(&mut w.cleared);
        }
        self.depth = depth;
        self.map_nr = depth.div_ceil(1 << self.shift);
    }

    /// Tokens held (set and not freed), over the whole map.
    pub fn busy(&self) -> u32 {
        self.map
            .iter()
            .map(|w| (w.word & !w.cleared).count_ones())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words follow sbitmap_calculate_shift(): 256 tokens in 4 words of 64, 16 in 4 of 4.
    #[test]
    fn word_size_spreads_small_maps() {
        assert_eq!(calculate_shift(256), 6);
        assert_eq!(calculate_shift(128), 5);
        assert_eq!(calculate_shift(16), 2);
        assert_eq!(calculate_shift(3), 6);
    }

    /// After a shrink, tokens held above the new depth still count against it: with 0..=5
    /// held and the depth cut to 4, freeing token 5 gives nothing; freeing token 1 does.
    #[test]
    fn shrunk_depth_hands_out_only_low_bits() {
        let mut sb = Sbitmap::new(16);
        let got: Vec<u32> = (0..6).map(|_| sb.get().expect("free")).collect();
        assert_eq!(got, [0, 1, 2, 3, 4, 5]);
        sb.resize(4);
        assert_eq!(sb.get(), None);
        sb.clear(5);
        assert_eq!(sb.get(), None);
        sb.clear(1);
        assert_eq!(sb.get(), Some(1));
        assert_eq!(sb.busy(), 5, "0..=4: token 4 is still held above the depth");
    }

    /// A search starts in the hint's word: a token freed in word 1 becomes the hint, so the
    /// next search takes the lowest free bit of word 1, not of word 0.
    #[test]
    fn search_starts_in_the_hint_word() {
        let mut sb = Sbitmap::new(16); // 4 words of 4 bits
        for _ in 0..8 {
            sb.get();
        }
        sb.clear(1);
        sb.clear(6);
        assert_eq!(sb.get(), Some(6), "hint 6 is in word 1");
        assert_eq!(
            sb.get(),
            Some(8),
            "hint moved to 7; word 1 is full, word 2 next"
        );
    }
}
