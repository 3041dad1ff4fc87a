//! Where one writeback call on a file looks for dirty pages and where it leaves the file's
//! `mapping->writeback_index`, by the file system's `writepages` ([`Writepages`]).
//!
//! - `write_cache_pages()` (generic): from the index to the end of the file, then from the
//!   start up to the index, in one call; the index is left after the last page written.
//! - ext4's delayed-allocation `ext4_da_writepages()` of 2.6.30–2.6.32 (read in those three
//!   sources): it turns the cyclic call into the range `[writeback_index, end]`, writes it
//!   one extent per journal handle, and wraps to `[0, writeback_index)` only when nothing
//!   was written (`if (!io_done && !cycled)`); it then sets the index to where the call
//!   started *plus the number of pages written* (`index += pages_written`). With sparse
//!   dirty pages the index lags behind the pages written, and a call that starts near the
//!   end of a file writes only what was dirtied there since the last sweep: a short call.
//!
//! A writeback thread or a throttled writer may take a file's pages in several of our
//! calls (one request's worth at a time); [`Sweep::Continue`] carries on the call a turn
//! began, as the kernel's one `writepages` call would, instead of starting a new one.

use std::ops::Range;

use crate::config::Writepages;

/// What a writeback call on one file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// The whole file from its start; the index is left alone (fsync, `WB_SYNC_ALL`).
    Whole,
    /// A new cyclic call (`range_cyclic`): a file's turn in a writeback pass begins.
    Cyclic,
    /// More pages of the cyclic call this file's turn began.
    Continue,
}

/// The open ext4 call on a file: its range's start (the index it set out from, or 0 after
/// wrapping), its end, and the pages it wrote so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Turn {
    base: u64,
    end: u64,
    written: u64,
}

/// The ranges a call scans, in order, and whether a wrap to the second one needs the
/// first to have given nothing (ext4) or is part of the same scan (generic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub first: Range<u64>,
    pub then: Option<Range<u64>>,
    /// ext4: the second range is tried only when the first gave no page.
    pub then_only_if_empty: bool,
}

/// The ranges a call of kind `sweep` scans, for a file whose index is `index` and whose
/// open ext4 call is `turn`.
pub fn plan(mode: Writepages, sweep: Sweep, index: u64, turn: Option<Turn>) -> Plan {
    let cyclic = |then_only_if_empty| Plan {
        first: index..u64::MAX,
        then: (index > 0).then_some(0..index),
        then_only_if_empty,
    };
    match (sweep, mode, turn) {
        (Sweep::Whole, _, _) => Plan {
            first: 0..u64::MAX,
            then: None,
            then_only_if_empty: false,
        },
        (_, Writepages::Generic, _) => cyclic(false),
        // The kernel restarts each extent's scan at the range's start: pages it already
        // wrote are clean now and skipped, pages redirtied behind it are taken.
        (Sweep::Continue, Writepages::Ext4Legacy, Some(turn)) => Plan {
            first: turn.base..turn.end,
            then: None,
            then_only_if_empty: false,
        },
        (_, Writepages::Ext4Legacy, _) => cyclic(true),
    }
}

/// After a call wrote `pages`, its last one at `last`, having scanned `wrapped` (the
/// second range) or not: the file's new index and its open ext4 call.
pub fn finish(
    mode: Writepages,
    sweep: Sweep,
    index: u64,
    turn: Option<Turn>,
    (pages, last, wrapped): (u64, Option<u64>, bool),
) -> (u64, Option<Turn>) {
    match (sweep, mode) {
        (Sweep::Whole, _) => (index, turn),
        (_, Writepages::Generic) => (last.map_or(index, |last| last + 1), None),
        (_, Writepages::Ext4Legacy) => {
            let turn = match (sweep, turn) {
                (Sweep::Continue, Some(turn)) => Turn {
                    written: turn.written + pages,
                    ..turn
                },
                _ if wrapped => Turn {
                    base: 0,
                    end: index,
                    written: pages,
                },
                _ => Turn {
                    base: index,
                    end: u64::MAX,
                    written: pages,
                },
            };
            (turn.base + turn.written, Some(turn))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ext4 of 2.6.30: a call from index 100 that wrote 3 pages (the last at 180) leaves
    /// the index at 103, not 181, and does not wrap; its continuation scans 100.. again.
    /// The generic walk wraps in the same call and leaves the index after the last page.
    #[test]
    fn ext4_legacy_index_advances_by_pages_written_and_wraps_only_when_empty() {
        let ext4 = Writepages::Ext4Legacy;
        let first = plan(ext4, Sweep::Cyclic, 100, None);
        assert_eq!(first.first, 100..u64::MAX);
        assert_eq!(first.then, Some(0..100));
        assert!(first.then_only_if_empty);
        let (index, turn) = finish(ext4, Sweep::Cyclic, 100, None, (3, Some(180), false));
        assert_eq!(index, 103);
        let more = plan(ext4, Sweep::Continue, index, turn);
        assert_eq!((more.first, more.then), (100..u64::MAX, None));
        let (index, _) = finish(ext4, Sweep::Continue, index, turn, (2, Some(190), false));
        assert_eq!(index, 105);
        // Nothing from 105 on: the call wraps to 0..105 and the index restarts near 0.
        let (index, turn) = finish(ext4, Sweep::Cyclic, 105, None, (4, Some(50), true));
        assert_eq!(index, 4);
        assert_eq!(plan(ext4, Sweep::Continue, index, turn).first, 0..105);
        let generic = plan(Writepages::Generic, Sweep::Cyclic, 100, None);
        assert!(!generic.then_only_if_empty);
        let (index, _) = finish(
            Writepages::Generic,
            Sweep::Cyclic,
            100,
            None,
            (3, Some(180), false),
        );
        assert_eq!(index, 181);
    }
}
