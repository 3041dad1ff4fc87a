//! The drive's buffer: segments holding runs of blocks, and the read-ahead that fills one.
//!
//! - **Segments** (DiskSim "Number of buffer segments", "Segment size"): each holds one run
//!   of consecutive blocks, read from the media or written by the host. A read wholly inside a
//!   run is a hit; a read whose first blocks are inside one is a partial hit. A new run takes
//!   the least recently used segment that holds no unwritten data; with a separate write
//!   segment, writes always use segment 0 and reads the others, and no read is served from
//!   segment 0 (`disk_buffer_select_read_segment` passes the dedicated write segment over).
//! - **Read-ahead**: after a read that went to the media, the drive goes on reading the blocks
//!   after it into the same segment while no other command needs the heads ([`ReadAhead`]),
//!   up to a limit set by the prefetch mode ([`super::drive::read_ahead_end`]). A command that needs the
//!   heads stops it; the segment keeps what was read by then. A read hit does not stop it,
//!   and a read that the running read-ahead will reach is served from it as it arrives.
//! - **Deferred destage** ([`Buffer::deferred`]): a buffered write's segment stays *pending*
//!   (dirty, not yet given to the heads) until the drive chooses to write it; only a pending
//!   run takes appends, and a pending run that a later write only partly covers is kept.
//! - **Written data** stays readable after it reaches the media only with "Allow read hits on
//!   write data"; a write drops every other segment's copy of the blocks it overlaps.

use super::mechanics::{Heads, Pass};

/// One buffer segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub start: u64,
    /// One past the last valid block.
    pub end: u64,
    /// Least-recently-used order stamp.
    pub used: u64,
    /// Holds host-written data not yet on the media until this time.
    pub dirty_until_ms: f64,
    /// The run came from host writes.
    pub written: bool,
    /// When its last host write was in the buffer (a pending run can be destaged from then).
    pub since_ms: f64,
}

impl Segment {
    /// Dirty and not yet being written: its destage has not been planned.
    pub fn pending(&self) -> bool {
        self.dirty_until_ms == f64::INFINITY
    }

    pub fn contains(&self, lbn: u64) -> bool {
        self.start <= lbn && lbn < self.end
    }
}

/// A read-ahead in progress into one segment.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadAhead {
    pub segment: usize,
    /// The planned passes, in order, reading up to `end`.
    pub passes: Vec<Pass>,
    pub end: u64,
    /// Where the heads were, and from when free, before the first pass.
    pub origin: Heads,
    pub origin_ms: f64,
}

impl ReadAhead {
    /// One past the last block read by `now_ms`.
    pub fn reached(&self, now_ms: f64) -> u64 {
        let mut reached = self.passes.first().map_or(self.end, |pass| pass.first_lbn);
        for pass in &self.passes {
            if pass.start_ms >= now_ms {
                break;
            }
            let done = ((now_ms - pass.start_ms) / pass.sector_ms).floor() as u64;
            reached = pass.first_lbn + done.min(pass.sectors);
            if done < pass.sectors {
                break;
            }
        }
        reached
    }

    /// When block `lbn` (below `end`) is in the buffer.
    pub fn ready_ms(&self, lbn: u64) -> Option<f64> {
        self.passes
            .iter()
            .find(|pass| pass.first_lbn <= lbn && lbn < pass.first_lbn + pass.sectors)
            .map(|pass| pass.done_ms(lbn))
    }

    /// When the read-ahead would finish undisturbed.
    pub fn end_ms(&self) -> f64 {
        self.passes.last().map_or(0.0, Pass::end_ms)
    }
}

/// How a read finds the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Whole(usize),
    /// The segment holds the blocks before `cached_end`.
    Partial {
        segment: usize,
        cached_end: u64,
    },
    Miss,
}

/// The segments.
#[derive(Clone, Debug)]
pub struct Buffer {
    pub segments: Vec<Option<Segment>>,
    stamp: u64,
    separate_write_segment: bool,
    hits_on_written: bool,
    /// Writes wait pending in their segments (the spec's `deferred_destage`).
    pub deferred: bool,
}

impl Buffer {
    pub fn new(segments: u32, separate_write_segment: bool, hits_on_written: bool) -> Buffer {
        Buffer {
            segments: vec![None; segments as usize],
            stamp: 0,
            separate_write_segment: separate_write_segment && segments > 1,
            hits_on_written,
            deferred: false,
        }
    }

    /// Marks a segment most recently used.
    pub fn touch(&mut self, index: usize) {
        self.stamp += 1;
        if let Some(segment) = &mut self.segments[index] {
            segment.used = self.stamp;
        }
    }

    /// Where a read of `count` blocks from `lbn` finds its data at `now_ms`.
    pub fn lookup(&self, lbn: u64, count: u64, now_ms: f64) -> Lookup {
        let mut best = Lookup::Miss;
        // DiskSim 4.0 run beside this model: HP C3323A reads 5 blocks just written (trace
        // request 209) from the media, 7.0 ms, where a hit here gave 2.4 (measured 2.8).
        let first = usize::from(self.separate_write_segment);
        for (index, segment) in self.segments.iter().enumerate().skip(first) {
            let Some(segment) = segment else { continue };
            let readable =
                !segment.written || self.hits_on_written || segment.dirty_until_ms > now_ms;
            if !readable || !segment.contains(lbn) {
                continue;
            }
            if segment.end >= lbn + count {
                return Lookup::Whole(index);
            }
            best = Lookup::Partial {
                segment: index,
                cached_end: segment.end,
            };
        }
        best
    }

    /// The segment a new read run takes: the least recently used clean read segment.
    pub fn victim_for_read(&self, now_ms: f64) -> usize {
        let first = usize::from(self.separate_write_segment);
        self.lru(first, now_ms).unwrap_or(first)
    }

    /// The segment a write of `lbn..lbn + count` takes: the write segment, a dirty written
    /// run it appends to (when `combine`) while the run still fits in `segment_sectors`, a
    /// clean run it overlaps, or the least recently used clean segment. A stream of appending
    /// writes thus fills segment after segment, and waits once every write segment is dirty,
    /// instead of buffering without end in one.
    pub fn victim_for_write(
        &self,
        lbn: u64,
        count: u64,
        combine: bool,
        segment_sectors: u64,
        now_ms: f64,
    ) -> usize {
        if self.separate_write_segment {
            return 0;
        }
        if let Some(index) = self.appended_by(lbn, count, combine, segment_sectors, now_ms) {
            return index;
        }
        // `disk_buffer_select_write_segment`: a clean run the write overlaps is emptied
        // anyway, so it goes before an empty or a merely old one.
        let overlapped = self.segments.iter().position(|segment| {
            segment
                .is_some_and(|s| s.dirty_until_ms <= now_ms && s.start < lbn + count && lbn < s.end)
        });
        overlapped.or_else(|| self.lru(0, now_ms)).unwrap_or(0)
    }

    /// The dirty written run a write of `lbn..lbn + count` appends to (when `combine`), while
    /// the run still fits in `segment_sectors`.
    pub fn appended_by(
        &self,
        lbn: u64,
        count: u64,
        combine: bool,
        segment_sectors: u64,
        now_ms: f64,
    ) -> Option<usize> {
        if !combine {
            return None;
        }
        self.segments.iter().position(|segment| {
            segment.is_some_and(|s| {
                // Deferred: a run the heads are writing takes no more blocks.
                let open = if self.deferred {
                    s.pending()
                } else {
                    s.dirty_until_ms > now_ms
                };
                s.written && s.end == lbn && open && s.end - s.start + count <= segment_sectors
            })
        })
    }

    fn lru(&self, first: usize, now_ms: f64) -> Option<usize> {
        let clean = |s: &Option<Segment>| s.is_none_or(|s| s.dirty_until_ms <= now_ms);
        (first..self.segments.len())
            .filter(|&index| clean(&self.segments[index]))
            .min_by_key(|&index| self.segments[index].map_or(0, |s| s.used))
    }

    /// Segments holding written data not yet on the media at `now_ms`.
    pub fn dirty_segments(&self, now_ms: f64) -> usize {
        self.segments
            .iter()
            .flatten()
            .filter(|s| s.dirty_until_ms > now_ms)
            .count()
    }

    /// Drops every copy of blocks `lbn..lbn + count` except in segment `keep`. A pending run
    /// goes only when wholly covered: its other blocks still have to reach the media.
    pub fn invalidate(&mut self, lbn: u64, count: u64, keep: usize) {
        for (index, slot) in self.segments.iter_mut().enumerate() {
            if index == keep {
                continue;
            }
            if let Some(segment) = slot {
                let overlaps = segment.start < lbn + count && lbn < segment.end;
                let covered = lbn <= segment.start && segment.end <= lbn + count;
                if overlaps && (!segment.pending() || covered) {
                    *slot = None;
                }
            }
        }
    }

    /// Indexes of the pending segments.
    pub fn pending(&self) -> impl Iterator<Item = usize> + '_ {
        self.segments
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_some_and(|s| s.pending()))
            .map(|(index, _)| index)
    }

    /// The earliest time after `now_ms` a destage under way empties a segment.
    pub fn next_destaged_ms(&self, now_ms: f64) -> Option<f64> {
        self.segments
            .iter()
            .flatten()
            .map(|s| s.dirty_until_ms)
            .filter(|&until| until > now_ms && until.is_finite())
            .min_by(f64::total_cmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start: u64, end: u64, used: u64) -> Option<Segment> {
        Some(Segment {
            start,
            end,
            used,
            dirty_until_ms: 0.0,
            written: false,
            since_ms: 0.0,
        })
    }

    #[test]
    fn whole_partial_and_missing_reads_are_told_apart() {
        let mut buffer = Buffer::new(2, false, true);
        buffer.segments[0] = run(100, 120, 1);
        assert_eq!(buffer.lookup(104, 8, 0.0), Lookup::Whole(0));
        assert_eq!(
            buffer.lookup(116, 8, 0.0),
            Lookup::Partial {
                segment: 0,
                cached_end: 120
            }
        );
        assert_eq!(buffer.lookup(120, 8, 0.0), Lookup::Miss);
    }

    #[test]
    fn a_separate_write_segment_serves_no_read() {
        let mut buffer = Buffer::new(2, true, true);
        buffer.segments[0] = Some(Segment {
            written: true,
            ..run(100, 120, 1).unwrap()
        });
        assert_eq!(buffer.lookup(104, 8, 0.0), Lookup::Miss);
        // Shared segments: the written run is read.
        let mut shared = Buffer::new(2, false, true);
        shared.segments[0] = buffer.segments[0];
        assert_eq!(shared.lookup(104, 8, 0.0), Lookup::Whole(0));
    }

    #[test]
    fn the_least_recently_used_clean_segment_is_replaced() {
        let mut buffer = Buffer::new(3, false, true);
        buffer.segments[0] = run(0, 8, 5);
        buffer.segments[1] = run(8, 16, 2);
        buffer.segments[2] = Some(Segment {
            dirty_until_ms: 10.0,
            ..run(16, 24, 1).unwrap()
        });
        assert_eq!(buffer.victim_for_read(0.0), 1);
        assert_eq!(buffer.victim_for_read(11.0), 2);
    }

    #[test]
    fn read_ahead_reports_the_blocks_read_so_far() {
        let ahead = ReadAhead {
            segment: 0,
            passes: vec![
                Pass {
                    first_lbn: 10,
                    sectors: 5,
                    start_ms: 1.0,
                    sector_ms: 0.5,
                },
                Pass {
                    first_lbn: 15,
                    sectors: 5,
                    start_ms: 5.0,
                    sector_ms: 0.5,
                },
            ],
            end: 20,
            origin: Heads {
                cylinder: 0,
                head: 0,
            },
            origin_ms: 0.0,
        };
        assert_eq!(ahead.reached(0.5), 10);
        assert_eq!(ahead.reached(2.0), 12);
        assert_eq!(ahead.reached(4.0), 15);
        assert_eq!(ahead.reached(9.0), 20);
        assert_eq!(ahead.ready_ms(16), Some(6.0));
    }
}
