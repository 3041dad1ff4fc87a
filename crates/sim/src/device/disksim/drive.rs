//! Command handling of a validated drive with one command at a time (DiskSim's `disk`
//! module with "Max queue length = 1", as every drive of `valid/` runs).
//!
//! - **Overheads** by kind (DiskSim "Read hit over. after read" and its seven siblings): a read
//!   pays the hit overhead when its first block is in the buffer and the miss overhead
//!   otherwise; a write pays the write-hit overhead when write-back is on and the miss overhead
//!   when not (`disk_write_arrive`); each by whether the previous command was a read.
//! - **Bus**: every block crosses the bus in "Bulk sector transfer time"; a block read from the
//!   media goes once it is in the buffer, so transfers overlap the media.
//! - **Reads** that miss wait for the heads (a destage under way finishes first), position,
//!   read, and start a read-ahead ([`super::cache`]).
//! - **Writes** with write-back ("Fast write level" 1 or 2) complete once their blocks are in
//!   the buffer; the drive then writes them to the media (destage) while the host is away. A
//!   write waits for the heads' destage only when every write segment is still dirty. Without
//!   write-back a write completes when on the media. With `deferred_destage` the drive holds
//!   buffered writes and writes them when it chooses ([`destage`]).

use super::cache::{Buffer, Lookup, ReadAhead, Segment};
use super::layout::Layout;
use super::mechanics::{Heads, Mechanics, Pass};
use super::spec::DiskSpec;

mod destage;

/// A DiskSim-validated drive serving one command at a time.
#[derive(Clone, Debug)]
pub struct Drive {
    spec: DiskSpec,
    layout: Layout,
    mechanics: Mechanics,
    heads: Heads,
    buffer: Buffer,
    read_ahead: Option<ReadAhead>,
    /// The heads are busy writing buffered data until then.
    destage_until_ms: f64,
    last_was_read: bool,
    /// One past the previous write's last block (an appending write skips the extra
    /// disconnect).
    last_write_end: Option<u64>,
    /// When the last command completed: the drive is idle from then until the next arrives.
    idle_from_ms: f64,
}

impl Drive {
    pub fn new(spec: &DiskSpec) -> Drive {
        let mut buffer = Buffer::new(
            spec.segments,
            spec.separate_write_segment,
            spec.read_hits_on_write_data,
        );
        buffer.deferred = spec.deferred_destage && spec.fast_write_level > 0;
        Drive {
            layout: Layout::new(spec),
            mechanics: Mechanics::new(spec),
            heads: Heads {
                cylinder: 0,
                head: 0,
            },
            buffer,
            read_ahead: None,
            destage_until_ms: 0.0,
            // DiskSim starts with `lastflags = READ` (disk_initialize).
            last_was_read: true,
            last_write_end: None,
            idle_from_ms: 0.0,
            spec: spec.clone(),
        }
    }

    pub fn capacity(&self) -> u64 {
        self.layout.capacity()
    }

    /// A flush at `now_ms`: writes every buffered run (deferred destage) and returns when all
    /// buffered data is on the media.
    pub fn flush(&mut self, now_ms: f64) -> f64 {
        let done = if self.deferred() {
            self.destage_all(now_ms)
        } else {
            now_ms.max(self.destage_until_ms)
        };
        self.idle_from_ms = self.idle_from_ms.max(done);
        done
    }

    /// A FUA write of block `lbn` buffered by `buffered_ms`: returns when its data is on the
    /// media (its own run, when destage is deferred; every earlier write otherwise).
    pub fn force_unit_access(&mut self, buffered_ms: f64, lbn: u64) -> f64 {
        let done = if self.deferred() {
            self.destage_block(buffered_ms, lbn).max(buffered_ms)
        } else {
            buffered_ms.max(self.destage_until_ms)
        };
        self.idle_from_ms = self.idle_from_ms.max(done);
        done
    }

    /// When every buffered write already planned is on the media.
    pub fn destaged_ms(&self) -> f64 {
        self.destage_until_ms
    }

    /// Serves one command arriving at `now_ms` with the drive otherwise idle; returns its
    /// completion time.
    pub fn serve(&mut self, now_ms: f64, read: bool, lbn: u64, count: u64) -> f64 {
        assert!(count > 0, "empty command");
        assert!(lbn + count <= self.capacity(), "command past the capacity");
        if self.deferred() {
            self.destage_while_idle(now_ms);
        }
        self.settle_read_ahead(now_ms);
        let done = if read {
            self.read(now_ms, lbn, count)
        } else if self.deferred() {
            self.write_deferred(now_ms, lbn, count)
        } else {
            self.write(now_ms, lbn, count)
        };
        self.last_was_read = read;
        // A buffered write under deferred destage never needs the heads: they stay free
        // for destaging while its data crosses the bus.
        if read || !self.deferred() {
            self.idle_from_ms = done;
        }
        done
    }

    /// How long after `now_ms` the heads would reach the first block of a command arriving
    /// then, without serving it: 0 for a read the buffer holds, the read-ahead's time for
    /// one it is reading; otherwise the command overhead that comes before the heads move
    /// (as [`Drive::serve`] charges it), the wait for the heads (a destage), the seek or
    /// head switch, and the rotation to the block. Transfers are left out: the rule is
    /// positioning time (DiskSim's `SPTF_OPT`).
    pub fn positioning_estimate_ms(&self, now_ms: f64, read: bool, lbn: u64) -> f64 {
        if read {
            if let Some(ready) = self.buffered_ready_ms(now_ms, lbn) {
                return (ready - now_ms).max(0.0);
            }
        }
        let overhead = if read {
            self.overhead(
                self.spec.read_miss_after_read_ms,
                self.spec.read_miss_after_write_ms,
            )
        } else if self.deferred() && self.buffer.dirty_segments(now_ms) < self.write_limit() {
            // A write the buffer takes needs no heads: its overhead alone.
            return self.write_protocol(lbn, true).data_after_ms;
        } else {
            self.write_protocol(lbn, self.spec.fast_write_level > 0)
                .heads_after_ms
        };
        let free_ms = (now_ms + overhead).max(self.destage_until_ms);
        let heads = self.heads_at(free_ms);
        let place = self.layout.locate(lbn);
        let target = Heads {
            cylinder: place.cylinder,
            head: place.head,
        };
        let arrive_ms = free_ms + self.mechanics.positioning_ms(heads, target, !read);
        let rotation = self
            .mechanics
            .rotation_wait_ms(arrive_ms, self.layout.angle(&place));
        arrive_ms + rotation - now_ms
    }

    /// When block `lbn` is (or will be, by the running read-ahead) in a readable segment.
    fn buffered_ready_ms(&self, now_ms: f64, lbn: u64) -> Option<f64> {
        if let Lookup::Whole(_) | Lookup::Partial { .. } = self.buffer.lookup(lbn, 1, now_ms) {
            return Some(now_ms);
        }
        let ahead = self.read_ahead.as_ref()?;
        let segment = self.buffer.segments[ahead.segment]?;
        if segment.start <= lbn && lbn < ahead.end {
            return Some(ahead.ready_ms(lbn).unwrap_or(now_ms));
        }
        None
    }

    /// Where the heads are at `at_ms`: on the track the read-ahead is reading then, else
    /// where the last command (or the finished read-ahead) left them.
    fn heads_at(&self, at_ms: f64) -> Heads {
        let pass = self.read_ahead.as_ref().and_then(|ahead| {
            ahead
                .passes
                .iter()
                .rev()
                .find(|pass| pass.start_ms <= at_ms)
                .or(ahead.passes.first())
        });
        match pass {
            Some(pass) if self.read_ahead.as_ref().is_some_and(|a| at_ms < a.end_ms()) => {
                self.target(pass.first_lbn)
            }
            _ => self.heads,
        }
    }

    /// A block's time on the bus: the drive's own or its bus's, whichever is slower
    /// (`disk_get_blktranstime`).
    fn read_block_ms(&self) -> f64 {
        self.spec
            .bus_ms_per_sector
            .max(self.spec.controller.bus_read_block_ms)
    }

    fn write_block_ms(&self) -> f64 {
        self.spec
            .bus_ms_per_sector
            .max(self.spec.controller.bus_write_block_ms)
    }

    /// Blocks a read miss waits for in the buffer before it takes the bus back
    /// (`disk_read_arrive`'s read water mark).
    fn water_mark(&self, count: u64) -> u64 {
        let c = &self.spec.controller;
        let segment = u64::from(self.spec.segment_sectors);
        let blocks = if c.water_mark_by_request_size {
            ((segment.min(count) as f64 * c.read_water_mark) as u64).max(1)
        } else {
            (segment as f64 * c.read_water_mark + 0.999_999_999_9) as u64
        };
        blocks.clamp(1, count)
    }

    fn overhead(&self, after_read: f64, after_write: f64) -> f64 {
        if self.last_was_read {
            after_read
        } else {
            after_write
        }
    }

    /// Moves the read-ahead's progress into its segment.
    fn settle_read_ahead(&mut self, now_ms: f64) {
        let Some(ahead) = &self.read_ahead else {
            return;
        };
        let (index, reached, finished) = (
            ahead.segment,
            ahead.reached(now_ms),
            now_ms >= ahead.end_ms(),
        );
        if let Some(segment) = &mut self.buffer.segments[index] {
            segment.end = segment.end.max(reached);
        }
        self.trim(index);
        if finished {
            self.read_ahead = None;
        }
    }

    /// Keeps a segment within its size: with "read-ahead over requested" the oldest blocks
    /// give way.
    fn trim(&mut self, index: usize) {
        let size = u64::from(self.spec.segment_sectors);
        if let Some(segment) = &mut self.buffer.segments[index] {
            if segment.end - segment.start > size {
                segment.start = segment.end - size;
            }
        }
    }

    /// Stops the read-ahead at `now_ms`; the heads stay where it took them. Returns when the
    /// heads are free.
    fn stop_read_ahead(&mut self, now_ms: f64) -> f64 {
        let Some(ahead) = &self.read_ahead else {
            return now_ms;
        };
        let (free_ms, heads) = self.read_ahead_stop(ahead, now_ms);
        self.settle_read_ahead(free_ms);
        if self.read_ahead.take().is_some() {
            self.heads = heads;
        }
        free_ms
    }

    /// When a read-ahead stopped at `now_ms` lets the heads go, and on which track
    /// (`disk_buffer_stopable_access`): reading a sector, at its end unless "Stop prefetch in
    /// sector"; moving to the next track, once there (a seek under way completes); waiting
    /// there for its first sector, at once. Choice: DiskSim holds the heads to that sector's
    /// arrival too (the stop ends at the access's pending event) when the drive stops only at
    /// sector boundaries; with that, IBM 18ES scores 0.1362 ms instead of 0.1355.
    fn read_ahead_stop(&self, ahead: &ReadAhead, now_ms: f64) -> (f64, Heads) {
        let passes = &ahead.passes;
        let next = passes.iter().position(|pass| pass.start_ms > now_ms);
        let current = match next {
            Some(index) => index.checked_sub(1),
            None => passes.len().checked_sub(1),
        };
        if let Some(pass) = current.map(|index| passes[index]) {
            let into = (now_ms - pass.start_ms) / pass.sector_ms;
            if into < pass.sectors as f64 {
                let free_ms = if self.spec.stop_prefetch_in_sector {
                    now_ms
                } else {
                    pass.start_ms + into.ceil() * pass.sector_ms
                };
                return (free_ms, self.target(pass.first_lbn));
            }
        }
        let Some(index) = next else {
            let heads = current.map_or(self.heads, |i| self.target(passes[i].first_lbn));
            return (now_ms, heads);
        };
        let (from, from_ms) = match current {
            Some(i) => (self.target(passes[i].first_lbn), passes[i].end_ms()),
            None => (ahead.origin, ahead.origin_ms),
        };
        let to = self.target(passes[index].first_lbn);
        let arrived_ms = from_ms + self.mechanics.positioning_ms(from, to, false);
        (arrived_ms.max(now_ms), to)
    }

    fn read(&mut self, now_ms: f64, lbn: u64, count: u64) -> f64 {
        let bus = self.read_block_ms();
        let (prep, completion) = (
            self.spec.controller.data_prep_ms,
            self.spec.controller.read_completion_ms,
        );
        match self.continues_read_ahead(self.buffer.lookup(lbn, count, now_ms), lbn) {
            Lookup::Whole(index) => {
                self.buffer.touch(index);
                // A hit on the segment being read ahead moves its limit on, as the hit's own
                // read-ahead would (`disk_check_hda_pending`); a finished one stays finished.
                if self
                    .read_ahead
                    .as_ref()
                    .is_some_and(|ahead| ahead.segment == index)
                {
                    self.extend_read_ahead(lbn, count);
                }
                // Choice: a hit on another segment leaves the read-ahead running, as a drive
                // whose heads nothing else needs would; DiskSim stops it
                // (`disk_buffer_stopable_access`). No trace tells the two apart (every
                // demerit is the same to 0.0001 ms); interleaved streams do.
                let overhead = self.overhead(
                    self.spec.read_hit_after_read_ms,
                    self.spec.read_hit_after_write_ms,
                );
                let done = now_ms + overhead + prep + count as f64 * bus;
                if self.read_ahead.is_none() && self.spec.controller.read_ahead_on_idle_hit {
                    self.read_ahead_after_hit(index, lbn, count, done);
                }
                done + completion
            }
            Lookup::Partial {
                segment,
                cached_end,
            } => self.read_partial(now_ms, lbn, count, segment, cached_end) + completion,
            Lookup::Miss => self.read_miss(now_ms, lbn, count) + completion,
        }
    }

    /// A read starting exactly where the running read-ahead has got to is a partial hit
    /// with nothing cached yet: the read-ahead is about to read its first block. Without
    /// this a read arriving before the read-ahead's first block is in (a host that sends
    /// the next sequential read the moment the last one completes) would stop it and wait
    /// a revolution for the very sector under the head.
    fn continues_read_ahead(&self, found: Lookup, lbn: u64) -> Lookup {
        let Lookup::Miss = found else { return found };
        let Some(ahead) = &self.read_ahead else {
            return found;
        };
        match self.buffer.segments[ahead.segment] {
            Some(segment) if segment.end == lbn && lbn < ahead.end && !segment.written => {
                Lookup::Partial {
                    segment: ahead.segment,
                    cached_end: lbn,
                }
            }
            _ => found,
        }
    }

    /// A miss: the command overhead, then, unless the drive never disconnects, it lets the
    /// bus go while the heads work and takes it back (reselect) once the water mark's blocks
    /// are buffered.
    fn read_miss(&mut self, now_ms: f64, lbn: u64, count: u64) -> f64 {
        let overhead = self.overhead(
            self.spec.read_miss_after_read_ms,
            self.spec.read_miss_after_write_ms,
        );
        // A running read-ahead stops at the command's arrival (at the end of the sector under
        // the head) and the seek waits for the command overhead and that stop, added
        // (`disk_check_hda`'s delay).
        let stopped = self.stop_read_ahead(now_ms);
        let c = &self.spec.controller;
        let heads_from = now_ms + overhead + (stopped - now_ms);
        let bus = if c.never_disconnect {
            BusStart::Held(heads_from + c.data_prep_ms)
        } else {
            let disconnect = self.overhead(
                c.read_disconnect_after_read_ms,
                c.read_disconnect_after_write_ms,
            );
            BusStart::Reconnect {
                free_ms: heads_from + disconnect,
                water_mark: self.water_mark(count),
                delay_ms: c.first_reselect_ms + c.data_prep_ms,
            }
        };
        let index = self.buffer.victim_for_read(now_ms);
        self.read_media(heads_from, bus, lbn, count, lbn, index)
    }

    /// "Read-ahead on idle hit": a hit with the heads idle sets them reading after the
    /// segment's run, from when the hit's data has gone.
    fn read_ahead_after_hit(&mut self, index: usize, lbn: u64, count: u64, from_ms: f64) {
        let Some(segment) = self.buffer.segments[index] else {
            return;
        };
        if segment.written {
            return;
        }
        let heads_free = from_ms.max(self.destage_until_ms);
        let end = read_ahead_end(&self.spec, &self.layout, segment.start, lbn, count)
            .min(self.capacity());
        if end <= segment.end {
            return;
        }
        self.plan_read_ahead(index, heads_free, segment.end, end);
    }

    /// A read whose first blocks are buffered: those go at once; the rest come from the
    /// running read-ahead if it will reach them, else from the media.
    fn read_partial(
        &mut self,
        now_ms: f64,
        lbn: u64,
        count: u64,
        index: usize,
        cached_end: u64,
    ) -> f64 {
        let overhead = self.overhead(
            self.spec.read_hit_after_read_ms,
            self.spec.read_hit_after_write_ms,
        );
        let bus_start = now_ms + overhead + self.spec.controller.data_prep_ms;
        let bus = self.read_block_ms();
        let end = lbn + count;
        self.buffer.touch(index);
        // The read-ahead streaming into this segment goes on to the request's end and the
        // prefetch beyond it (modes 1 and 2: to the end of the track or cylinder holding the
        // request's last block), rather than stopping under the head and coming back a
        // revolution later for the same blocks (`disk_buffer_attempt_access_swap`).
        if self.spec.prefetch_mode >= 1
            && self
                .read_ahead
                .as_ref()
                .is_some_and(|ahead| ahead.segment == index && ahead.end < end)
        {
            self.extend_read_ahead(lbn, count);
        }
        let covered = self
            .read_ahead
            .as_ref()
            .filter(|ahead| ahead.segment == index && ahead.end >= end);
        if let Some(ahead) = covered {
            let mut done = bus_start;
            for block in lbn..end {
                let ready = if block < cached_end {
                    bus_start
                } else {
                    ahead.ready_ms(block).unwrap_or(bus_start)
                };
                done = done.max(ready) + bus;
            }
            self.extend_read_ahead(lbn, count);
            return done;
        }
        let cached = cached_end - lbn;
        let start = self.buffer.segments[index].map_or(lbn, |s| s.start);
        // The drive holds the bus while the media catches up.
        let head_done = bus_start + cached as f64 * bus;
        // The heads wait for the read-miss overhead, whatever the hit (`overhead_done` in
        // `disk_request_arrive`): the bus starts on the cached blocks after the hit overhead.
        let heads_from = now_ms
            + self.overhead(
                self.spec.read_miss_after_read_ms,
                self.spec.read_miss_after_write_ms,
            );
        self.read_media(
            heads_from,
            BusStart::Held(head_done),
            cached_end,
            end - cached_end,
            start,
            index,
        )
    }

    /// Reads `count` blocks from `lbn` off the media into segment `index` (whose run starts at
    /// `run_start`), the heads free from `heads_from_ms` and the bus as `bus` says;
    /// starts the read-ahead; returns when the last block has crossed the bus.
    fn read_media(
        &mut self,
        heads_from_ms: f64,
        bus: BusStart,
        lbn: u64,
        count: u64,
        run_start: u64,
        index: usize,
    ) -> f64 {
        let start = heads_from_ms.max(self.destage_until_ms);
        let start = self.stop_read_ahead(start);
        let free = self.free_blocks_before(start, lbn);
        let passes = self
            .mechanics
            .access(&self.layout, &mut self.heads, start, lbn, count, false);
        let block_ms = self.read_block_ms();
        let mut done = match bus {
            BusStart::Held(from_ms) => from_ms,
            BusStart::Reconnect {
                free_ms,
                water_mark,
                delay_ms,
            } => {
                let ready = block_done_ms(&passes, lbn + water_mark - 1).unwrap_or(free_ms);
                free_ms.max(ready) + delay_ms
            }
        };
        for pass in &passes {
            for block in pass.first_lbn..pass.first_lbn + pass.sectors {
                done = done.max(pass.done_ms(block)) + block_ms;
            }
        }
        let media_end = passes.last().map_or(start, Pass::end_ms);
        let keep_run =
            self.buffer.segments[index].is_some_and(|s| s.start == run_start && !s.written);
        let run_start = if keep_run { run_start } else { lbn - free };
        self.buffer.segments[index] = Some(Segment {
            start: run_start,
            end: lbn + count,
            used: 0,
            dirty_until_ms: 0.0,
            written: false,
            since_ms: 0.0,
        });
        self.buffer.invalidate(lbn, count, index);
        self.buffer.touch(index);
        self.trim(index);
        self.start_read_ahead(index, lbn, count, media_end);
        done
    }

    /// "Read any free blocks": the blocks of the target track that pass under the head
    /// between its landing and `lbn`'s sector are read into the segment on the way
    /// (`disk_buffer_sector_done`), as long as they run up to `lbn` without a gap.
    fn free_blocks_before(&self, heads_free_ms: f64, lbn: u64) -> u64 {
        if !self.spec.read_any_free_blocks {
            return 0;
        }
        let place = self.layout.locate(lbn);
        let target = Heads {
            cylinder: place.cylinder,
            head: place.head,
        };
        let landed_ms = heads_free_ms + self.mechanics.positioning_ms(self.heads, target, false);
        let waited = self
            .mechanics
            .rotation_wait_ms(landed_ms, self.layout.angle(&place));
        let spt = f64::from(self.layout.sectors_per_track(place.zone));
        let passed = (waited / self.mechanics.revolution_ms() * spt).floor() as u64;
        passed.min(lbn - self.layout.track_first_lbn(lbn))
    }

    /// Plans the read-ahead after a media read of `lbn..lbn + count` ending at `from_ms`.
    fn start_read_ahead(&mut self, index: usize, lbn: u64, count: u64, from_ms: f64) {
        let run_start = self.buffer.segments[index].map_or(lbn, |s| s.start);
        let end = read_ahead_end(&self.spec, &self.layout, run_start, lbn, count);
        let first = lbn + count;
        if end <= first {
            return;
        }
        self.plan_read_ahead(index, from_ms, first, end);
    }

    /// Sets the heads reading `first..end` into segment `index` from `heads_free_ms`, the
    /// passes kept to the track or cylinder of the block before `first` as the prefetch mode
    /// asks.
    fn plan_read_ahead(&mut self, index: usize, heads_free_ms: f64, first: u64, end: u64) {
        let origin = self.heads;
        let mut heads = self.heads;
        let passes = self.mechanics.access(
            &self.layout,
            &mut heads,
            heads_free_ms,
            first,
            end - first,
            false,
        );
        let passes = limit_passes(&self.spec, &self.layout, passes, first - 1);
        let Some(last) = passes.last() else { return };
        let end = last.first_lbn + last.sectors;
        // On the last track read, not where the unlimited plan would have gone on to.
        self.heads = self.target(last.first_lbn);
        self.read_ahead = Some(ReadAhead {
            segment: index,
            passes,
            end,
            origin,
            origin_ms: heads_free_ms,
        });
    }

    /// A read served by the running read-ahead may push its limit further (a sequential
    /// stream keeps a track ahead under prefetch mode 4).
    fn extend_read_ahead(&mut self, lbn: u64, count: u64) {
        let Some(ahead) = &self.read_ahead else {
            return;
        };
        let run_start = self.buffer.segments[ahead.segment].map_or(lbn, |s| s.start);
        let end =
            read_ahead_end(&self.spec, &self.layout, run_start, lbn, count).min(self.capacity());
        if end <= ahead.end {
            return;
        }
        let (from_ms, first) = (ahead.end_ms(), ahead.end);
        let mut heads = self.heads;
        let more =
            self.mechanics
                .access(&self.layout, &mut heads, from_ms, first, end - first, false);
        let more = limit_passes(&self.spec, &self.layout, more, lbn + count - 1);
        let Some(last) = more.last().copied() else {
            return;
        };
        if let Some(ahead) = &mut self.read_ahead {
            ahead.end = last.first_lbn + last.sectors;
            ahead.passes.extend(more);
        }
        self.heads = self.target(last.first_lbn);
    }

    fn write(&mut self, now_ms: f64, lbn: u64, count: u64) -> f64 {
        let write_back = self.spec.fast_write_level > 0;
        let protocol = self.write_protocol(lbn, write_back);
        let stopped = if self.spec.write_hit_stops_prefetch || !write_back {
            self.stop_read_ahead(now_ms)
        } else {
            now_ms
        };
        let write_segments = self.spec.write_segments.max(1) as usize;
        let mut bus_start = now_ms + protocol.data_after_ms;
        if self.buffer.dirty_segments(now_ms) >= write_segments {
            bus_start = bus_start.max(self.destage_until_ms);
        }
        let block_ms = self.write_block_ms();
        let buffered = bus_start + count as f64 * block_ms;
        // The heads write each block once positioned and holding it; the positioning takes
        // at least the minimum seek delay (`disk_initiate_seek`).
        let heads_from = (stopped + protocol.heads_after_ms).max(self.destage_until_ms);
        let heads_from = self.stop_read_ahead(heads_from);
        let positioning = self
            .mechanics
            .positioning_ms(self.heads, self.target(lbn), true);
        let minimum = self.spec.controller.minimum_seek_ms;
        let write_from = heads_from + (minimum - positioning).max(0.0);
        let arrived = |block: u64| bus_start + (block - lbn + 1) as f64 * block_ms;
        let first_write_ms = arrived(lbn + self.blocks_before_writing(count) - 1);
        let ready = |block: u64| arrived(block).max(first_write_ms);
        let passes = self.mechanics.access_gated(
            &self.layout,
            &mut self.heads,
            write_from,
            lbn,
            count,
            true,
            &ready,
        );
        let media_end = passes.last().map_or(write_from, Pass::end_ms);
        self.destage_until_ms = media_end;
        self.last_write_end = Some(lbn + count);
        self.buffer_write(now_ms, lbn, count, media_end, now_ms);
        let completion = self.spec.controller.write_completion_ms;
        match protocol.reconnect {
            None => buffered + completion,
            Some((disconnect_ms, reselect_ms)) => {
                media_end.max(buffered + disconnect_ms) + reselect_ms + completion
            }
        }
    }

    /// Write segments that may hold dirty data at once.
    fn write_limit(&self) -> usize {
        (self.spec.write_segments.max(1) as usize).min(self.buffer.segments.len().max(1))
    }

    /// A buffered write under deferred destage: the command overhead, a write segment (an
    /// appending write extends its pending run; another may wait for a destage to empty one),
    /// the data across the bus, and the run left pending.
    fn write_deferred(&mut self, now_ms: f64, lbn: u64, count: u64) -> f64 {
        let protocol = self.write_protocol(lbn, true);
        if self.spec.write_hit_stops_prefetch {
            self.stop_read_ahead(now_ms);
        }
        let ready = now_ms + protocol.data_after_ms;
        let appends = self.buffer.appended_by(
            lbn,
            count,
            self.spec.combine_sequential_writes,
            u64::from(self.spec.segment_sectors),
            now_ms,
        );
        let bus_start = if appends.is_some() {
            ready
        } else {
            self.free_write_segment(ready)
        };
        let buffered = bus_start + count as f64 * self.write_block_ms();
        self.last_write_end = Some(lbn + count);
        self.buffer_write(bus_start, lbn, count, f64::INFINITY, buffered);
        buffered + self.spec.controller.write_completion_ms
    }

    /// Blocks of a write that must be in the buffer before the heads write any of them. A
    /// drive with the extra write disconnect writes only once 10 of the command's blocks, or
    /// all of a shorter one, are in (15 from 45 blocks on); others write each block as it
    /// arrives (`disk_buffer_block_available`).
    fn blocks_before_writing(&self, count: u64) -> u64 {
        if !self.spec.controller.extra_write_disconnect {
            1
        } else if count < 45 {
            count.min(10)
        } else {
            15
        }
    }

    /// The bus protocol of a write (`disk_write_arrive`, `disk_disconnect`, `disk_check_bus`).
    fn write_protocol(&self, lbn: u64, write_back: bool) -> WriteProtocol {
        let c = &self.spec.controller;
        let overhead = if write_back {
            self.overhead(
                self.spec.write_hit_after_read_ms,
                self.spec.write_hit_after_write_ms,
            )
        } else {
            self.overhead(
                self.spec.write_miss_after_read_ms,
                self.spec.write_miss_after_write_ms,
            )
        };
        // The extra disconnect needs the write segment to be the one used last, so the
        // previous command was a write (`disk_buffer_select_segment`).
        let extra = c.extra_write_disconnect
            && !c.never_disconnect
            && !self.last_was_read
            && self.last_write_end.is_some_and(|end| end != lbn);
        let reconnect = match (write_back, c.never_disconnect, extra) {
            (true, ..) => None,
            (false, true, _) => Some((0.0, 0.0)),
            (false, false, false) => Some((c.write_disconnect_ms, c.first_reselect_ms)),
            (false, false, true) => Some((c.extra_second_disconnect_ms, c.other_reselect_ms)),
        };
        if extra {
            // The drive disconnects after the command and comes back for the data.
            WriteProtocol {
                heads_after_ms: c.extra_command_ms + c.extra_seek_delta_ms,
                data_after_ms: c.extra_command_ms
                    + c.extra_disconnect_ms
                    + c.extra_inter_disconnect_ms
                    + c.first_reselect_ms
                    + c.data_prep_ms,
                reconnect,
            }
        } else {
            WriteProtocol {
                heads_after_ms: overhead,
                data_after_ms: overhead + c.data_prep_ms,
                reconnect,
            }
        }
    }

    /// Puts a write's blocks in a segment, dirty until `media_end`, buffered by `since_ms`.
    fn buffer_write(&mut self, now_ms: f64, lbn: u64, count: u64, media_end: f64, since_ms: f64) {
        let index = self.buffer.victim_for_write(
            lbn,
            count,
            self.spec.combine_sequential_writes,
            u64::from(self.spec.segment_sectors),
            now_ms,
        );
        let joined = self.buffer.segments[index]
            .filter(|s| s.written && s.end == lbn && s.dirty_until_ms > now_ms);
        let start = joined.map_or(lbn, |s| s.start);
        self.buffer.segments[index] = Some(Segment {
            start,
            end: lbn + count,
            used: 0,
            dirty_until_ms: media_end,
            written: true,
            since_ms,
        });
        self.buffer.invalidate(lbn, count, index);
        self.buffer.touch(index);
        self.trim(index);
    }

    fn target(&self, lbn: u64) -> Heads {
        let place = self.layout.locate(lbn);
        Heads {
            cylinder: place.cylinder,
            head: place.head,
        }
    }
}

/// A write's protocol timings, from its arrival.
#[derive(Clone, Copy, Debug)]
struct WriteProtocol {
    /// The heads may move from then.
    heads_after_ms: f64,
    /// The data starts across the bus then.
    data_after_ms: f64,
    /// Write-through: the disconnect after the data and the reselect before the completion
    /// (both 0 for a drive that never disconnects); write-back completes once buffered.
    reconnect: Option<(f64, f64)>,
}

/// When a read miss's data may start across the bus.
#[derive(Clone, Copy, Debug)]
enum BusStart {
    /// The drive holds the bus: blocks go from then, each once read.
    Held(f64),
    /// The drive let the bus go at `free_ms`; it takes it back once `water_mark` blocks
    /// are buffered and spends `delay_ms` (reselect, data preparation) before sending.
    Reconnect {
        free_ms: f64,
        water_mark: u64,
        delay_ms: f64,
    },
}

/// When block `lbn` of `passes` is read, if they read it.
fn block_done_ms(passes: &[Pass], lbn: u64) -> Option<f64> {
    passes
        .iter()
        .find(|pass| pass.first_lbn <= lbn && lbn < pass.first_lbn + pass.sectors)
        .map(|pass| pass.done_ms(lbn))
}

/// One past the last block the read-ahead after `lbn..lbn + count` may read
/// (`disk_buffer_get_max_readahead`).
pub fn read_ahead_end(
    spec: &DiskSpec,
    layout: &Layout,
    run_start: u64,
    lbn: u64,
    count: u64,
) -> u64 {
    let end = lbn + count;
    let capacity = layout.capacity();
    if end >= capacity {
        return end;
    }
    let limit = match spec.prefetch_mode {
        0 => end,
        4 => {
            // The end of the track holding the next block, one track further when the run
            // already began before that track (a sequential stream).
            let track_first = layout.track_first_lbn(end);
            let track_end = layout.track_last_lbn(end) + 1;
            if run_start < track_first {
                track_end + u64::from(layout.sectors_per_track(layout.locate(end).zone))
            } else {
                track_end
            }
        }
        _ if spec.max_read_ahead_sectors > 0 => end + u64::from(spec.max_read_ahead_sectors),
        // Without a maximum, "read-ahead over requested" = 0 keeps the request's blocks:
        // the read-ahead stops when the segment is full.
        _ if !spec.read_ahead_over_requested && count < u64::from(spec.segment_sectors) => {
            lbn + u64::from(spec.segment_sectors)
        }
        _ => end + u64::from(spec.segment_sectors),
    };
    limit.min(capacity)
}

/// Prefetch modes 1 and 2 stop at the end of the track or cylinder holding block `last`;
/// passes up to `last` itself (a request's own blocks) are all kept.
fn limit_passes(spec: &DiskSpec, layout: &Layout, passes: Vec<Pass>, last: u64) -> Vec<Pass> {
    let home = layout.locate(last);
    passes
        .into_iter()
        .take_while(|pass| {
            if pass.first_lbn <= last {
                return true;
            }
            let place = layout.locate(pass.first_lbn);
            match spec.prefetch_mode {
                1 => place.cylinder == home.cylinder && place.head == home.head,
                2 => place.cylinder == home.cylinder,
                _ => true,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiny drive: 6000 rpm (10 ms a revolution), 10 sectors a track (1 ms a sector),
    /// bus 0.1 ms a sector, read-ahead mode 3 up to 16 blocks.
    fn tiny() -> DiskSpec {
        DiskSpec::parse(include_str!("testdata_small.toml")).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_miss_pays_overhead_positioning_rotation_and_the_bus_behind_the_media() {
        let mut drive = Drive::new(&tiny());
        // Overhead 0.3 ms, then block 0 passes at 10 ms: read by 11 and 12 ms; each block
        // crosses the bus in 0.1 ms once read.
        let done = drive.serve(0.0, true, 0, 2);
        assert!(close(done, 12.1), "{done}");
    }

    #[test]
    fn a_returning_stream_is_served_by_the_read_ahead_as_it_arrives() {
        let mut drive = Drive::new(&tiny());
        drive.serve(0.0, true, 0, 2);
        // The read-ahead reads blocks 2-9 (to 20 ms), switches heads, and reads blocks 10-17
        // from 22 ms. At 25 ms blocks up to 12 are in; block 13 is in at 26 ms.
        let done = drive.serve(25.0, true, 12, 2);
        assert!(close(done - 25.0, 1.1), "{}", done - 25.0);
        let mut cold = tiny();
        cold.prefetch_mode = 0;
        let mut drive = Drive::new(&cold);
        drive.serve(0.0, true, 0, 2);
        let done = drive.serve(25.0, true, 12, 2);
        assert!(
            done - 25.0 > 5.0,
            "without read-ahead it waits for the media: {}",
            done - 25.0
        );
    }

    #[test]
    fn a_partial_hit_reads_the_rest_after_the_read_miss_overhead() {
        // No read-ahead: blocks 0-1 stay buffered and the heads stay on track 0. Block 1 is a
        // hit; blocks 2-3 come from the media. Arriving at 101.85 ms, the hit overhead (0.1)
        // would have the heads ready before block 2's sector at 102 ms; the read-miss
        // overhead (0.3) misses it, and blocks 2-3 are read at 112-114 ms, as DiskSim's
        // `overhead_done` has it (Cheetah 9LP's trace request 5504: 6.6 ms in DiskSim).
        let mut spec = tiny();
        spec.prefetch_mode = 0;
        let mut drive = Drive::new(&spec);
        drive.serve(0.0, true, 0, 2);
        let done = drive.serve(101.85, true, 1, 3);
        assert!(close(done - 101.85, 12.25), "{}", done - 101.85);
    }

    #[test]
    fn a_read_ahead_kept_to_its_track_leaves_the_heads_on_that_track() {
        // Prefetch mode 1 stops at the end of the track (block 9); the 16 blocks the maximum
        // allows would have gone on to the next track. The heads stay where the read-ahead
        // ended, as in DiskSim (DEC RZ26's trace request 13 pays the head switch there).
        let mut spec = tiny();
        spec.prefetch_mode = 1;
        let mut drive = Drive::new(&spec);
        drive.serve(0.0, true, 0, 2);
        drive.settle_read_ahead(100.0);
        assert!(drive.read_ahead.is_none(), "finished by 100 ms");
        assert_ne!(
            drive.target(9),
            drive.target(10),
            "block 10 is on the next track"
        );
        assert_eq!(drive.heads, drive.target(9));
    }

    #[test]
    fn a_read_into_the_running_track_read_ahead_takes_it_over() {
        // Prefetch mode 1: the read-ahead after blocks 0-1 reads 2-9 from 12 to 20 ms. A read
        // of 2-11 at 13 ms finds block 2 in and takes the read-ahead over to block 11 on the
        // next track (DiskSim's `disk_buffer_attempt_access_swap`), instead of stopping it
        // and waiting a revolution for block 3 (DEC RZ26: 71 requests apart from DiskSim
        // fell to 10 with this and the rule above).
        let mut spec = tiny();
        spec.prefetch_mode = 1;
        let mut drive = Drive::new(&spec);
        drive.serve(0.0, true, 0, 2);
        let done = drive.serve(13.0, true, 2, 10);
        assert!(done - 13.0 < 12.0, "{}", done - 13.0);
    }

    #[test]
    fn a_whole_hit_costs_the_hit_overhead_and_the_bus() {
        let mut drive = Drive::new(&tiny());
        drive.serve(0.0, true, 0, 2);
        // Read hit after read: 0.1 ms, plus 4 blocks at 0.1 ms.
        let done = drive.serve(100.0, true, 4, 4);
        assert!(close(done - 100.0, 0.5), "{}", done - 100.0);
    }

    #[test]
    fn write_back_completes_once_buffered_and_the_next_miss_waits_for_the_destage() {
        let mut drive = Drive::new(&tiny());
        // Write hit after read: 0.5 ms, plus 2 blocks on the bus.
        let done = drive.serve(0.0, false, 20, 2);
        assert!(close(done, 0.7), "{done}");
        assert!(drive.destage_until_ms > done, "destaged after completing");
        let mut through = tiny();
        through.fast_write_level = 0;
        let mut drive = Drive::new(&through);
        let done = drive.serve(0.0, false, 20, 2);
        assert!(
            close(done, drive.destage_until_ms),
            "write-through completes on the media"
        );
    }

    #[test]
    fn a_write_starts_on_the_media_with_its_first_blocks_buffered() {
        // The bus is slower than the media (1.5 ms a block against 1 ms a sector): blocks 3
        // and 4 arrive by 2.0 and 3.5 ms (write overhead 0.5 ms). Block 3's sector passes
        // at 3 ms and block 4's at 4 ms, each with its data there, so the media is done at
        // 5 ms; waiting for both blocks first would miss block 3's sector until 13 ms.
        let mut spec = tiny();
        spec.bus_ms_per_sector = 1.5;
        let mut drive = Drive::new(&spec);
        drive.serve(0.0, false, 3, 2);
        assert!(close(drive.destaged_ms(), 5.0), "{}", drive.destaged_ms());
        // A block that is not there when its sector passes waits a revolution: block 6
        // arrives at 6.5 ms, after its sector's 6 ms, and is written from 16 ms.
        let mut drive = Drive::new(&spec);
        drive.serve(0.0, false, 3, 4);
        assert!(close(drive.destaged_ms(), 17.0), "{}", drive.destaged_ms());
    }

    #[test]
    fn a_drive_with_the_extra_write_disconnect_writes_once_its_first_blocks_are_in() {
        // As above (blocks 3 and 4 in by 2.0 and 3.5 ms, their sectors at 3 and 4 ms), but
        // such a drive writes only once min(count, 10) blocks are buffered, here both at 3.5
        // ms: block 3's sector has passed, so the heads write blocks 3-4 at 13-15 ms. DiskSim
        // 4.0 (`disk_buffer_block_available`) times HP C2247A's appending writes this way, and
        // the drive's measured response times agree.
        let mut spec = tiny();
        spec.bus_ms_per_sector = 1.5;
        spec.controller.extra_write_disconnect = true;
        let mut drive = Drive::new(&spec);
        drive.serve(0.0, false, 3, 2);
        assert!(close(drive.destaged_ms(), 15.0), "{}", drive.destaged_ms());
        assert_eq!(drive.blocks_before_writing(44), 10);
        assert_eq!(drive.blocks_before_writing(45), 15);
        assert_eq!(drive.blocks_before_writing(7), 7);
    }

    #[test]
    fn the_extra_write_disconnect_follows_only_a_write() {
        // A write that does not append to the previous one disconnects after its command only
        // when the write segment was the last one used: after a read it does not.
        let mut spec = tiny();
        spec.fast_write_level = 0;
        spec.controller.extra_write_disconnect = true;
        spec.controller.extra_command_ms = 2.0;
        let mut drive = Drive::new(&spec);
        drive.serve(0.0, false, 20, 2);
        let extra = drive.write_protocol(3, false);
        assert!(close(extra.heads_after_ms, 2.0), "{extra:?}");
        drive.serve(100.0, true, 40, 1);
        let plain = drive.write_protocol(3, false);
        assert!(close(plain.heads_after_ms, 0.7), "{plain:?}");
    }

    #[test]
    fn a_write_through_drive_reconnects_and_completes_after_the_media() {
        // Write-through with the older drives' bus protocol: the data (0.8 ms overhead, 0.1
        // ms a block) is in by 1.0 ms; the drive disconnects (0.2 ms), writes block 3 from 3 to
        // 5 ms, reselects (0.3 ms) and sends the completion (0.4 ms).
        let mut spec = tiny();
        spec.fast_write_level = 0;
        spec.controller.write_disconnect_ms = 0.2;
        spec.controller.first_reselect_ms = 0.3;
        spec.controller.write_completion_ms = 0.4;
        let mut drive = Drive::new(&spec);
        let done = drive.serve(0.0, false, 3, 2);
        assert!(close(done, 5.7), "{done}");
        spec.controller.never_disconnect = true;
        let mut drive = Drive::new(&spec);
        let done = drive.serve(0.0, false, 3, 2);
        assert!(close(done, 5.4), "holding the bus, no reselect: {done}");
    }

    #[test]
    fn a_read_miss_reconnects_at_its_water_mark() {
        // Blocks 0-3 pass at 10-14 ms (miss overhead 0.3 ms). A water mark of 1/2 takes the
        // bus back once 2 blocks are in (12 ms), reselects (0.5 ms) and sends at the bus's
        // 0.1 ms a block behind the media: the last block goes at 14.1 ms, completion 0.2.
        let mut spec = tiny();
        spec.controller.read_water_mark = 0.5;
        spec.controller.first_reselect_ms = 0.5;
        spec.controller.read_completion_ms = 0.2;
        spec.controller.bus_read_block_ms = 0.05;
        let mut drive = Drive::new(&spec);
        let done = drive.serve(0.0, true, 0, 4);
        assert!(close(done, 14.3), "{done}");
        // With a bus slower than the media, the water mark decides when data starts: 12.5 ms
        // plus 4 blocks of 1.2 ms.
        spec.controller.bus_read_block_ms = 1.2;
        let mut drive = Drive::new(&spec);
        let done = drive.serve(0.0, true, 0, 4);
        assert!(close(done, 12.5 + 4.8 + 0.2), "{done}");
    }

    #[test]
    fn a_sequential_stream_never_loses_a_revolution_to_rounding() {
        // The read-ahead is extended a few blocks at a time; each extension starts where the
        // last sector ended, which rounding once placed just past the sector's start, costing
        // a whole revolution (10 ms here) per extension.
        // The host asks for 2 blocks every 3 ms and more, slower than the media's 1 ms a
        // block, so every block is read ahead before it is asked for.
        let mut drive = Drive::new(&tiny());
        let mut now = drive.serve(0.0, true, 0, 2) + 3.0;
        for request in 1..20 {
            let done = drive.serve(now, true, request * 2, 2);
            assert!(done - now < 1.0, "request {request}: {} ms", done - now);
            now = done + 3.0;
        }
    }

    #[test]
    fn a_hit_on_another_segment_leaves_the_read_ahead_running() {
        let mut drive = Drive::new(&tiny());
        // Stream B fills a segment and its read-ahead finishes.
        drive.serve(0.0, true, 40, 2);
        // Stream A misses and starts reading ahead; B returns and hits its own segment.
        let a_done = drive.serve(100.0, true, 0, 2);
        let b_done = drive.serve(a_done + 0.05, true, 44, 2);
        // A returns: the blocks it asks for were read ahead meanwhile.
        let back = b_done + 2.0;
        let done = drive.serve(back, true, 2, 2);
        assert!(
            done - back < 1.0,
            "A waited {} ms for the media",
            done - back
        );
    }

    #[test]
    fn a_read_ahead_stopped_between_tracks_lets_the_heads_go_once_on_the_next_track() {
        // The read-ahead after blocks 0-1 reads blocks 2-9 to 20 ms, switches heads (0.5 ms)
        // and waits for block 10 on head 1 until 22 ms. Stopped during the switch, the heads
        // are free once it is done, on head 1 (DiskSim 4.0 completes a seek under way); stopped
        // while waiting for the sector, at once, on head 1.
        let mut drive = Drive::new(&tiny());
        drive.serve(0.0, true, 0, 2);
        assert!(close(drive.stop_read_ahead(20.2), 20.5));
        assert_eq!(drive.heads, drive.target(10));
        assert_ne!(
            drive.target(10),
            drive.target(9),
            "block 10 is on the next track"
        );
        let mut drive = Drive::new(&tiny());
        drive.serve(0.0, true, 0, 2);
        assert!(close(drive.stop_read_ahead(21.0), 21.0));
        assert_eq!(drive.heads, drive.target(10));
    }

    #[test]
    fn a_read_ahead_stops_at_a_sector_boundary_unless_allowed_mid_sector() {
        // The read-ahead after blocks 0-1 reads block 2 from 12 to 13 ms.
        let mut drive = Drive::new(&tiny());
        drive.serve(0.0, true, 0, 2);
        assert!(close(drive.stop_read_ahead(12.5), 13.0));
        assert_eq!(
            drive.buffer.segments.iter().flatten().map(|s| s.end).max(),
            Some(3)
        );
        let mut spec = tiny();
        spec.stop_prefetch_in_sector = true;
        let mut drive = Drive::new(&spec);
        drive.serve(0.0, true, 0, 2);
        assert!(close(drive.stop_read_ahead(12.5), 12.5));
        assert_eq!(
            drive.buffer.segments.iter().flatten().map(|s| s.end).max(),
            Some(2)
        );
    }

    /// A host that sends the next sequential read the moment the last completes finds the
    /// read-ahead's first block not yet in; the read still continues the read-ahead instead
    /// of stopping it and waiting a revolution (10 ms) for the sector under the head.
    #[test]
    fn a_read_sent_as_the_last_completes_continues_the_read_ahead() {
        let mut drive = Drive::new(&tiny());
        let done = drive.serve(0.0, true, 0, 2);
        let next = drive.serve(done, true, 2, 2);
        assert!(next - done < 3.0, "{}", next - done);
    }

    /// A read running past the read-ahead's limit is served by the read-ahead moved on, not by
    /// a new access that misses the sector the stopped read-ahead left under the head.
    #[test]
    fn a_partial_hit_past_the_read_ahead_extends_it() {
        let mut drive = Drive::new(&tiny());
        drive.serve(0.0, true, 0, 2);
        // The read-ahead reads to block 18; block 3 is in at 14 ms, block 4 passes 14-15 ms.
        let now = 13.95;
        let done = drive.serve(now, true, 2, 20);
        let mut cold = Drive::new(&tiny());
        cold.serve(0.0, true, 0, 2);
        cold.read_ahead = None;
        let fresh = cold.serve(now, true, 2, 20);
        assert!(
            done < fresh - 5.0,
            "extended {done} against a new access {fresh}"
        );
    }

    /// Appending writes fill one segment, then take others, and wait once every write
    /// segment is dirty instead of buffering without end.
    #[test]
    fn appending_writes_wait_once_every_write_segment_is_dirty() {
        let mut spec = tiny();
        spec.write_segments = 2;
        let mut drive = Drive::new(&spec);
        let mut now = 0.0;
        let mut waited = false;
        for index in 0..5 {
            let done = drive.serve(now, false, 20 + index * 8, 8);
            waited |= done - now > 5.0;
            now = done;
        }
        assert!(
            waited,
            "five 8-block writes into 16-block segments never waited"
        );
    }
}
