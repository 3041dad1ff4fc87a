//! The reclaim order of clean, idle pages: least recently used first.
//!
//! Each page on the list carries the stamp of its latest entry; an entry whose stamp no
//! longer matches its page (used again, dirtied, read, dropped) is stale and skipped when
//! met. Entries only ever join at the young end, so the queue stays in stamp order and the
//! oldest live entry is the page a map ordered by stamp would give, at a push per use
//! instead of a map removal and insertion. Stale entries are swept out once they outnumber
//! the live ones, so the queue stays within twice the list's size, and also when the queue
//! is full and a quarter of it is stale: the queue's storage then grows with the list, not
//! with the stale entries a long run of cache hits leaves (issue 17: a 2400 s buffered run's
//! queue doubled to 4 Mi entries, 100 MB, long after the cache had filled).

use std::collections::VecDeque;

use crate::page_cache::FileId;

/// Stale entries tolerated before a sweep, beyond the live count.
const SWEEP_SLACK: usize = 4096;

/// One use of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LruEntry {
    pub stamp: u64,
    pub file: FileId,
    pub index: u64,
}

/// Clean, idle pages in order of last use.
#[derive(Clone, Debug)]
pub struct Lru {
    entries: VecDeque<LruEntry>,
    live: usize,
    next_stamp: u64,
}

impl Default for Lru {
    fn default() -> Self {
        Lru {
            entries: VecDeque::new(),
            live: 0,
            next_stamp: 1,
        }
    }
}

impl Lru {
    /// Pages on the list.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Puts a page at the young end; returns the stamp the page must carry (never 0, which
    /// marks a page off the list). `is_live` tells a current entry from a stale one, for the
    /// sweep.
    pub fn push(&mut self, file: FileId, index: u64, is_live: impl Fn(&LruEntry) -> bool) -> u64 {
        if self.sweep_due() {
            self.entries.retain(|entry| is_live(entry));
            assert_eq!(self.entries.len(), self.live, "LRU live count out of step");
        }
        self.push_unswept(file, index)
    }

    /// Whether the next [`Lru::push`] sweeps out stale entries first. When it does not, a
    /// caller may call [`Lru::push_unswept`] with no liveness check: the page cache then
    /// looks its page up once per use instead of three times.
    #[inline]
    pub fn sweep_due(&self) -> bool {
        let stale = self.entries.len() - self.live;
        // A sweep frees a quarter of the storage at least, so sweeps cost O(1) a push.
        let full = self.entries.len() == self.entries.capacity() && stale > 0;
        self.entries.len() > 2 * self.live + SWEEP_SLACK
            || (full && stale >= self.entries.capacity() / 4)
    }

    /// [`Lru::push`] when no sweep is due ([`Lru::sweep_due`] is false).
    #[inline]
    pub fn push_unswept(&mut self, file: FileId, index: u64) -> u64 {
        debug_assert!(!self.sweep_due(), "a sweep is due: use push");
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.entries.push_back(LruEntry { stamp, file, index });
        self.live += 1;
        stamp
    }

    /// A page left the list: its entry is stale. The caller clears the page's stamp before
    /// the next [`Lru::push`].
    #[inline]
    pub fn forget(&mut self) {
        assert!(self.live > 0, "LRU count went negative");
        self.live -= 1;
    }

    /// Takes the least recently used page off the list.
    pub fn pop_oldest(&mut self, is_live: impl Fn(&LruEntry) -> bool) -> Option<LruEntry> {
        while let Some(entry) = self.entries.pop_front() {
            if is_live(&entry) {
                self.live -= 1;
                return Some(entry);
            }
        }
        assert_eq!(self.live, 0, "LRU lost a live page");
        None
    }

    /// Every entry, oldest first, stale ones included (for consistency checks).
    pub fn entries(&self) -> impl Iterator<Item = &LruEntry> {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A steady list of 3000 pages, each used again and again: the stale entries the uses
    /// leave are swept before the queue's storage grows for them. Without the sweep on a
    /// full queue it held 2 x 3000 + 4096 entries (16 Ki of storage); the list needs 4 Ki.
    #[test]
    fn storage_follows_the_list_not_its_stale_entries() {
        const PAGES: u64 = 3000;
        let mut lru = Lru::default();
        let mut stamps = vec![0u64; PAGES as usize];
        for round in 0..20u64 {
            for page in 0..PAGES {
                // Used again, in a scrambled order: off the list, then at its young end.
                let page = (page * 7919 + round) % PAGES;
                if stamps[page as usize] != 0 {
                    lru.forget();
                    stamps[page as usize] = 0;
                }
                let live = |e: &LruEntry| stamps[e.index as usize] == e.stamp;
                stamps[page as usize] = lru.push(0, page, live);
            }
        }
        assert_eq!(lru.len(), PAGES as usize);
        assert!(
            lru.entries.capacity() <= 4096,
            "{} entries of storage for {PAGES} pages",
            lru.entries.capacity()
        );
    }

    proptest! {
        /// Uses, removals and evictions give the order a map keyed by last-use stamp gives.
        #[test]
        fn evicts_as_a_stamp_ordered_map(ops in prop::collection::vec((0u8..3, 0u64..40), 0..3000)) {
            let mut lru = Lru::default();
            // page -> current stamp (0: off the list); the reference keeps stamp -> page.
            let mut stamps: BTreeMap<u64, u64> = BTreeMap::new();
            let mut reference: BTreeMap<u64, u64> = BTreeMap::new();
            for (op, page) in ops {
                let current = stamps.get(&page).copied().unwrap_or(0);
                match op {
                    0 => {
                        // Use: onto the young end (again).
                        if current != 0 {
                            lru.forget();
                            reference.remove(&current);
                            stamps.insert(page, 0);
                        }
                        // Odd pages take the page cache's path: no liveness check
                        // unless a sweep is due.
                        let stamp = if page % 2 == 1 && !lru.sweep_due() {
                            lru.push_unswept(0, page)
                        } else {
                            let live = |e: &LruEntry| stamps.get(&e.index) == Some(&e.stamp);
                            lru.push(0, page, live)
                        };
                        stamps.insert(page, stamp);
                        reference.insert(stamp, page);
                    }
                    1 => {
                        // Dirtied or dropped: off the list.
                        if current != 0 {
                            lru.forget();
                            reference.remove(&current);
                            stamps.insert(page, 0);
                        }
                    }
                    _ => {
                        let live = |e: &LruEntry| stamps.get(&e.index) == Some(&e.stamp);
                        let got = lru.pop_oldest(live).map(|e| e.index);
                        let want = reference.pop_first().map(|(_, page)| page);
                        prop_assert_eq!(got, want);
                        if let Some(page) = got {
                            stamps.insert(page, 0);
                        }
                    }
                }
                prop_assert_eq!(lru.len(), reference.len());
                prop_assert!(lru.entries().count() <= 2 * reference.len() + SWEEP_SLACK + 1);
            }
        }
    }
}
