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
        let mut from = self.idle_from_ms.max(self.destage_until_ms).max(ahead_end);
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
        let index = self
            .buffer
            .pending()
            .find(|&index| self.buffer.segments[index].is_some_and(|s: Segment| s.contains(lbn)));
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

#[cfg(test)]
mod tests {
    use super::super::super::spec::DiskSpec;
    use super::*;

    /// The tiny test drive (`testdata_small.toml`: 10 ms a revolution, 1 ms a sector) with
    /// deferred destage and `write_segments` of its segments free for writes.
    fn deferred(write_segments: u32) -> DiskSpec {
        let mut spec = DiskSpec::parse(include_str!("../testdata_small.toml")).unwrap();
        spec.segments = 3;
        spec.write_segments = write_segments;
        spec.deferred_destage = true;
        spec
    }

    fn pending_count(drive: &Drive) -> usize {
        drive.buffer.pending().count()
    }

    /// A write sent the moment the last completed finds the drive never idle: both stay
    /// pending, and a flush then writes the near run (cylinder 0) before the far one
    /// (cylinder 10), although the far one came first.
    #[test]
    fn a_flush_destages_the_nearest_run_first() {
        let mut drive = Drive::new(&deferred(3));
        let first = drive.serve(0.0, false, 90, 2);
        let second = drive.serve(first, false, 12, 2);
        assert_eq!(pending_count(&drive), 2);
        let flushed = drive.flush(second);
        assert_eq!(pending_count(&drive), 0);
        let until = |lbn: u64| {
            drive
                .buffer
                .segments
                .iter()
                .flatten()
                .find(|s| s.contains(lbn))
                .map(|s| s.dirty_until_ms)
                .unwrap()
        };
        assert!(until(12) < until(90), "{} {}", until(12), until(90));
        assert!((flushed - until(90)).abs() < 1e-9);
    }

    /// A read arriving as a buffered write completes does not wait for that write's media
    /// write; without deferred destage it does.
    #[test]
    fn a_read_goes_before_a_pending_write() {
        let read_after_write = |spec: &DiskSpec| {
            let mut drive = Drive::new(spec);
            let written = drive.serve(0.0, false, 90, 2);
            drive.serve(written, true, 0, 2) - written
        };
        let mut in_order = deferred(3);
        in_order.deferred_destage = false;
        let held = read_after_write(&deferred(3));
        let waited = read_after_write(&in_order);
        assert!(
            held + 5.0 < waited,
            "deferred {held} ms, in order {waited} ms"
        );
    }

    /// With every write segment dirty a new (non-appending) write waits for a destage to
    /// empty one; with a segment free it is buffered at once.
    #[test]
    fn a_write_waits_only_when_every_write_segment_is_dirty() {
        let mut drive = Drive::new(&deferred(2));
        let mut now = 0.0;
        for lbn in [90, 12] {
            let done = drive.serve(now, false, lbn, 2);
            assert!(done - now < 1.0, "buffered at once: {}", done - now);
            now = done;
        }
        let done = drive.serve(now, false, 40, 2);
        assert!(done - now > 2.0, "waited for a destage: {}", done - now);
        assert_eq!(
            pending_count(&drive),
            2,
            "one run written, the new one pending"
        );
    }

    /// An idle drive destages at once: a read arriving long after a write finds the run
    /// written and the heads free.
    #[test]
    fn an_idle_drive_destages_its_pending_runs() {
        let mut drive = Drive::new(&deferred(2));
        let written = drive.serve(0.0, false, 90, 2);
        drive.serve(written + 100.0, true, 94, 1);
        assert_eq!(pending_count(&drive), 0);
        assert!(drive.destaged_ms() < written + 100.0);
    }

    /// A FUA write's own run reaches the media before it completes; another pending run
    /// stays pending.
    #[test]
    fn a_fua_write_waits_for_its_own_run_only() {
        let mut drive = Drive::new(&deferred(3));
        let first = drive.serve(0.0, false, 90, 2);
        let buffered = drive.serve(first, false, 12, 2);
        let done = drive.force_unit_access(buffered, 12);
        assert!(done > buffered + 0.5, "{done} against {buffered}");
        assert_eq!(pending_count(&drive), 1);
    }
}
