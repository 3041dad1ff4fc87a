//! The command queue: NCQ with shortest positioning time first and ageing, destage choice,
//! flushes, and the event loop that runs the mechanism.

use super::*;

/// [`HddDevice::pick_host`]'s answer: the cheapest command (cost ns and index) and the oldest.
struct HostPick {
    cost: u64,
    index: usize,
    oldest: usize,
    oldest_arrival: Time,
}

impl HddDevice {
    /// Earliest internal event (completion or end of mechanism work), even with nothing in
    /// flight: destaging continues in the background.
    pub fn next_internal_event(&self) -> Option<Time> {
        let done = self.done.keys().next().map(|&(time, _)| time);
        let mech = self.current.map(|service| service.done_at);
        match (done, mech) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub(super) fn complete_at(&mut self, time: Time, id: RequestId) {
        self.done.insert((time, self.next_seq), id);
        self.next_seq += 1;
    }

    /// Runs the mechanism's internal events up to and including `now`.
    pub(super) fn run_until(&mut self, now: Time) {
        while let Some(service) = self.current {
            if service.done_at > now {
                break;
            }
            self.current = None;
            self.finish(service);
            self.decide(service.done_at);
        }
    }

    pub(super) fn finish(&mut self, service: Service) {
        let time = service.done_at;
        match service.work {
            Work::Streaming => {}
            Work::HostRead { lba, sectors } => {
                if let Some(id) = service.id {
                    self.complete_at(time, id);
                }
                self.start_stream(lba, sectors, time);
            }
            Work::HostWrite { lba, sectors } => {
                if let Some(id) = service.id {
                    self.complete_at(time, id);
                }
                self.invalidate_segments(lba, sectors, time);
            }
            Work::Destage { sectors } => {
                assert!(self.destaging_seq.is_some(), "destage without a source");
                self.destaging_seq = None;
                self.dirty_bytes -= sectors * SECTOR_SIZE;
                self.admit_blocked(time);
                self.complete_flushes(time);
            }
        }
    }

    pub(super) fn admit_blocked(&mut self, time: Time) {
        while let Some(write) = self.blocked.front().copied() {
            if !self.buffer_has_room(write.lba, write.sectors) {
                break;
            }
            self.blocked.pop_front();
            self.buffer_write(write.lba, write.sectors, write.seq, time);
            let done = time + self.params.cache_hit_overhead_ns + self.link_ns(write.sectors);
            self.complete_at(done, write.id);
        }
    }

    pub(super) fn complete_flushes(&mut self, time: Time) {
        if self.flushes.is_empty() {
            return;
        }
        let oldest_dirty = self
            .dirty_order
            .keys()
            .next()
            .copied()
            .unwrap_or(u64::MAX)
            .min(self.destaging_seq.unwrap_or(u64::MAX));
        let oldest_blocked = self.blocked.front().map_or(u64::MAX, |write| write.seq);
        let oldest = oldest_dirty.min(oldest_blocked);
        let mut index = 0;
        while index < self.flushes.len() {
            let (seq, id) = self.flushes[index];
            if oldest > seq {
                self.flushes.swap_remove(index);
                self.complete_at(time + self.params.cache_hit_overhead_ns, id);
            } else {
                index += 1;
            }
        }
    }

    /// The mechanism is free at `time`: pick the next work, if any.
    pub(super) fn decide(&mut self, time: Time) {
        if self.current.is_some() {
            return;
        }
        let flush_mode = !self.flushes.is_empty() && !self.dirty.is_empty();
        let high_water =
            self.dirty_bytes * 4 > self.params.write_cache_bytes * 3 || self.segments_full();
        let use_host = !flush_mode && !self.queue.is_empty();
        let use_dirty =
            !self.dirty.is_empty() && (flush_mode || high_water || self.queue.is_empty());
        if !use_host && !use_dirty {
            return;
        }
        if self.hold_for_read_ahead(time, use_host && !use_dirty) {
            return;
        }
        self.stop_stream(time);
        let base_platter = (time + self.phase_ns.unwrap_or(0)) % self.rev_ns;
        let best_host = if use_host {
            let pick = self.pick_host(base_platter, time);
            // Ageing bound first for host commands (dirty extents age inside `pick_destage`).
            if pick.oldest_arrival + self.params.sptf_age_limit_ns <= time {
                self.start_host(pick.oldest, time, None);
                return;
            }
            Some((pick.cost, pick.index))
        } else {
            None
        };
        let best_dirty = if use_dirty {
            self.pick_destage(base_platter, time)
        } else {
            None
        };
        match (best_host, best_dirty) {
            (Some((host_cost, index)), Some((dirty_cost, _))) if host_cost <= dirty_cost => {
                self.start_host(index, time, Some(host_cost))
            }
            (_, Some((_, lba))) => self.start_destage(lba, time),
            (Some((host_cost, index)), None) => self.start_host(index, time, Some(host_cost)),
            (None, None) => unreachable!("a candidate"),
        }
    }

    /// Shortest positioning time first over the host commands (at least one): the first
    /// cheapest, and in the same pass the first of the oldest for the ageing bound. A
    /// candidate whose delay plus settled seek alone reaches the best cost so far cannot win
    /// (rotation only adds), so its rotation is skipped.
    fn pick_host(&self, base_platter: u64, time: Time) -> HostPick {
        let mut best: Option<(u64, usize)> = None;
        let (mut oldest, mut oldest_arrival) = (0, self.queue[0].arrival);
        for (index, queued) in self.queue.iter().enumerate() {
            if queued.arrival < oldest_arrival {
                (oldest, oldest_arrival) = (index, queued.arrival);
            }
            let delay = queued.ready_at.saturating_sub(time);
            let distance = self.cyl.abs_diff(queued.location.cyl);
            let seek = self.settled_seek(&queued.location, self.seek_ns(distance), queued.write);
            if best.is_some_and(|(c, _)| delay + seek >= c) {
                continue;
            }
            let cost =
                delay + self.positioning_after_settle(base_platter + delay, &queued.location, seek);
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, index));
            }
        }
        let (cost, index) = best.expect("a host command");
        HostPick {
            cost,
            index,
            oldest,
            oldest_arrival,
        }
    }

    /// Keeps the running read-ahead on the heads while no command needs them yet: until it has
    /// read the minimum read-ahead (DiskSim's "minimum read-ahead"), and, when only host
    /// commands wait (`host_only`), until the first of them has paid its command overhead.
    /// DiskSim's validated drives stop the read-ahead only when a miss is ready for the heads
    /// (`disk_read_arrive` charges the overhead first); this is what lets a returning
    /// sequential stream find its blocks in its segment. Returns whether it holds.
    fn hold_for_read_ahead(&mut self, time: Time, host_only: bool) -> bool {
        let Some(stream) = self.stream else {
            return false;
        };
        let position = self.stream_position(&stream, time);
        let min_sectors = self.params.min_read_ahead_bytes / SECTOR_SIZE;
        let must_reach = (stream.origin_lba + min_sectors).min(stream.limit_lba);
        let mut until = if position < must_reach {
            self.stream_time_of(&stream, must_reach).max(time + 1)
        } else {
            time
        };
        if host_only && position < stream.limit_lba {
            let needed = self.queue.iter().map(|queued| queued.ready_at).min();
            let limit_reached = self.stream_time_of(&stream, stream.limit_lba);
            until = until.max(needed.unwrap_or(time).min(limit_reached));
        }
        if until <= time {
            return false;
        }
        self.current = Some(Service {
            work: Work::Streaming,
            id: None,
            done_at: until,
        });
        true
    }

    /// The dirty extent to destage next among a window of `queue_depth` extents: the one whose
    /// destage (up to `destage_max_bytes`) writes the most bytes per unit of mechanism time,
    /// positioning plus transfer. A long run of one stream thus beats a lone block a little
    /// closer, while among equal sizes this is plain shortest positioning time first. The
    /// window holds the extents nearest the head in LBA order (half after it, half before),
    /// or, once the oldest extent has waited `sptf_age_limit_ns`, the oldest extents, so that
    /// nothing starves. Returns (positioning ns, first LBA).
    ///
    /// Choice: the window keeps the cost per decision at O(queue depth + log n) like the host
    /// side's SPTF.
    pub(super) fn pick_destage(&self, base_platter: u64, time: Time) -> Option<(u64, u64)> {
        let max_sectors = self.destage_max_sectors();
        let depth = self.params.queue_depth as usize;
        let (_, (_, first)) = self.dirty_order.iter().next()?;
        // (positioning, positioning + transfer, sectors, lba)
        let mut best: Option<(u64, u64, u64, u64)> = None;
        // Plain loops over one inlined step rather than a chain of three iterators: the
        // chain's state checks cost more than the step's arithmetic (callgrind, seed 003).
        if first.arrival + self.params.sptf_age_limit_ns <= time {
            for (lba, extent) in self.dirty_order.values().take(depth) {
                self.destage_candidate(*lba, extent, max_sectors, base_platter, time, &mut best);
            }
        } else {
            let half = depth.div_ceil(2);
            for (&lba, extent) in self.dirty.range(self.head_lba..).take(half) {
                self.destage_candidate(lba, extent, max_sectors, base_platter, time, &mut best);
            }
            for (&lba, extent) in self.dirty.range(..self.head_lba).rev().take(half) {
                self.destage_candidate(lba, extent, max_sectors, base_platter, time, &mut best);
            }
        }
        best.map(|(positioning, _, _, lba)| (positioning, lba))
    }

    /// One candidate of [`Self::pick_destage`]: replaces `best` if it writes more per unit
    /// of mechanism time (the first such wins ties).
    #[inline(always)]
    fn destage_candidate(
        &self,
        lba: u64,
        extent: &Dirty,
        max_sectors: u64,
        base_platter: u64,
        time: Time,
        best: &mut Option<(u64, u64, u64, u64)>,
    ) {
        let sectors = extent.sectors.min(max_sectors);
        let transfer = extent.destage_ns;
        // Worse per sector than the best even with the shortest seek: skip.
        let beats = |total: u64, best: &(u64, u64, u64, u64)| {
            u128::from(total) * u128::from(best.2) < u128::from(best.1) * u128::from(sectors)
        };
        let floor = self.positioning_floor(&extent.location) + transfer;
        if best.as_ref().is_some_and(|b| !beats(floor, b)) {
            return;
        }
        // Destage is the drive's own work: no host command overhead.
        let positioning = self.positioning_from(base_platter, time, &extent.location, time, true);
        let total = positioning + transfer;
        if best.as_ref().is_none_or(|b| beats(total, b)) {
            *best = Some((positioning, total, sectors, lba));
        }
    }

    /// Starts the host command at `index`; `cost`, when [`Self::pick_host`] computed it, is
    /// its delay plus positioning (the same sum `positioning_ns` makes, without its division).
    pub(super) fn start_host(&mut self, index: usize, time: Time, cost: Option<u64>) {
        let queued = self.queue.swap_remove(index);
        let start = time.max(queued.ready_at);
        let positioning = match cost {
            Some(cost) => cost - (start - time),
            None => self.positioning_ns(&queued.location, start, queued.write),
        };
        let transfer = self.transfer_ns(&queued.location, queued.sectors);
        let end = self.locate(queued.lba + queued.sectors - 1);
        self.cyl = end.cyl;
        self.head = end.head;
        self.head_lba = queued.lba + queued.sectors;
        let work = if queued.write {
            Work::HostWrite {
                lba: queued.lba,
                sectors: queued.sectors,
            }
        } else {
            Work::HostRead {
                lba: queued.lba,
                sectors: queued.sectors,
            }
        };
        self.current = Some(Service {
            work,
            id: Some(queued.id),
            done_at: start + positioning + transfer,
        });
    }

    /// Writes the front of the dirty extent at `lba`, up to `destage_max_bytes`, in one media
    /// operation; the rest stays dirty and may keep growing.
    pub(super) fn start_destage(&mut self, lba: u64, time: Time) {
        let extent = self.dirty.remove(&lba).expect("dirty extent");
        self.dirty_order.remove(&extent.seq);
        let sectors = extent.sectors.min(self.destage_max_sectors());
        if sectors < extent.sectors {
            let rest = lba + sectors;
            let rest_extent =
                self.dirty_extent(rest, extent.sectors - sectors, extent.seq, extent.arrival);
            self.dirty.insert(rest, rest_extent);
            self.dirty_order.insert(extent.seq, (rest, rest_extent));
        }
        assert!(self.destaging_seq.is_none(), "one destage at a time");
        self.destaging_seq = Some(extent.seq);
        let positioning = self.positioning_ns(&extent.location, time, true);
        let transfer = extent.destage_ns;
        let end = self.locate(lba + sectors - 1);
        self.cyl = end.cyl;
        self.head = end.head;
        self.head_lba = lba + sectors;
        self.current = Some(Service {
            work: Work::Destage { sectors },
            id: None,
            done_at: time + positioning + transfer,
        });
    }
}
