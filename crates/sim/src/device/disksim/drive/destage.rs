//! Deferred destage: a write-back drive that keeps buffered writes in their segments and
//! writes them when it chooses (the spec's `deferred_destage`).
//!
//! Seagate's SAS manuals (§"Caching write data": Cheetah 15K.5, Constellation ES) and HGST's
//! OEM specifications (§"Write cache function": the drive reports completion once the data is
//! in its buffer and "assumes responsibility to write the data subsequently"; flush cache
//! completes after the writing) say what the host sees. What the heads do, after DiskSim's
//! validated drives and the NCQ white paper's rotational position ordering:
//! - **When**: while the drive is idle (no command in service, the read-ahead finished), at
//!   once, as the validated drives start their destage at once; when a write finds every write
//!   segment dirty (it waits for one to empty, as DiskSim's `disk_buffer_select_write_segment`
//!   makes it); for a flush (everything) and a FUA write (its own run). A host command that
//!   arrives while nothing is being written goes first.
//! - **Order**: the pending run whose first block the heads reach soonest (seek or head switch,
//!   write settle and rotation), as the drive orders its queued commands (SPTF).
//! - **Unit**: a whole run (one segment, at most its size), never interrupted once started.

use super::super::cache::Segment;
use super::super::mechanics::{Heads, Pass};
use super::Drive;

impl Drive {
    /// Whether buffered writes wait to be destaged.
    pub(super) fn deferred(&self) -> bool {
        self.buffer.deferred
    }

    /// Destages, nearest first, every run the drive would have written while idle between the
    /// last command's completion and `now_ms`; a destage that starts before `now_ms` runs to
    /// its end. The read-ahead, if still running, keeps the heads.
    pub(super) fn destage_while_idle(&mut self, now_ms: f64) {
        let ahead_end = self.read_ahead.as_ref().map_or(0.0, |ahead| ahead.end_ms());
        let mut from = self
            .idle_from_ms
            .max(self.destage_until_ms)
            .max(ahead_end);
        if from >= now_ms {
            return;
        }
        self.settle_read_ahead(from);
        // Bounded: each pass plans one pending run, and planned runs are no longer pending.
        for _ in 0..2 * self.buffer.segments.len() {
            if from >= now_ms {
                break;
            }
            if let Some(index) = self.nearest_pending(from) {
                from = self.destage(index, from);
                continue;
            }
            // Nothing was buffered by then: the heads wait for the next run to come in.
            match self.first_buffered_ms() {
                Some(since) if since > from => from = since,
                _ => break,
            }
        }
    }

    /// When a write arriving with its data ready at `from_ms` finds a write segment: at once if
    /// fewer than the limit are dirty, else once a destage under way ends, starting the nearest
    /// pending run when none is under way.
    pub(super) fn free_write_segment(&mut self, from_ms: f64) -> f64 {
        let limit = self.write_limit();
        let mut at = from_ms;
        // Bounded: each pass either ends a destage or plans one.
        for _ in 0..=2 * self.buffer.segments.len() {
            if self.buffer.dirty_segments(at) < limit {
                return at;
            }
            if let Some(end) = self.buffer.next_destaged_ms(at) {
                at = end;
                continue;
            }
            let heads_free = self.stop_read_ahead(at.max(self.destage_until_ms));
            let Some(index) = self.nearest_pending(heads_free) else {
                return at;
            };
            self.destage(index, heads_free);
        }
        at
    }

    /// Writes every pending run, nearest first, from `now_ms` (or once the heads are free);
    /// returns when all buffered data is on the media.
    pub(super) fn destage_all(&mut self, now_ms: f64) -> f64 {
        let mut from = self.stop_read_ahead(now_ms.max(self.destage_until_ms));
        while let Some(index) = self.nearest_pending(from) {
            from = self.destage(index, from);
        }
        now_ms.max(self.destage_until_ms)
    }

    /// Writes the pending run holding block `lbn` now (or once the heads are free); returns
    /// when it is on the media.
    pub(super) fn destage_block(&mut self, now_ms: f64, lbn: u64) -> f64 {
        let index = self.buffer.pending().find(|&index| {
            self.buffer.segments[index].is_some_and(|s: Segment| s.contains(lbn))
        });
        let Some(index) = index else {
            return now_ms.max(self.destage_until_ms);
        };
        let from = self.stop_read_ahead(now_ms.max(self.destage_until_ms));
        self.destage(index, from)
    }

    /// When the earliest pending run was buffered.
    fn first_buffered_ms(&self) -> Option<f64> {
        self.buffer
            .pending()
            .filter_map(|index| self.buffer.segments[index].map(|s| s.since_ms))
            .min_by(f64::total_cmp)
    }

    /// Of the runs pending and buffered by `from_ms`, the one whose first block the heads,
    /// free then, reach soonest (the lowest index on a tie).
    fn nearest_pending(&self, from_ms: f64) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for index in self.buffer.pending() {
            let Some(segment) = self.buffer.segments[index] else {
                continue;
            };
            if segment.since_ms > from_ms {
                continue;
            }
            let place = self.layout.locate(segment.start);
            let target = Heads {
                cylinder: place.cylinder,
                head: place.head,
            };
            let arrive = from_ms + self.mechanics.positioning_ms(self.heads, target, true);
            let cost = arrive - from_ms
                + self
                    .mechanics
                    .rotation_wait_ms(arrive, self.layout.angle(&place));
            if best.is_none_or(|(least, _)| cost < least) {
                best = Some((cost, index));
            }
        }
        best.map(|(_, index)| index)
    }

    /// Writes pending run `index` from `from_ms`; returns when it is on the media.
    fn destage(&mut self, index: usize, from_ms: f64) -> f64 {
        let Some(segment) = self.buffer.segments[index] else {
            return from_ms;
        };
        let passes = self.mechanics.access(
            &self.layout,
            &mut self.heads,
            from_ms,
            segment.start,
            segment.end - segment.start,
            true,
        );
        let end = passes.last().map_or(from_ms, Pass::end_ms);
        if let Some(segment) = &mut self.buffer.segments[index] {
            segment.dirty_until_ms = end;
        }
        self.destage_until_ms = end;
        end
    }
}
