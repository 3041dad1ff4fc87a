//! A mechanical disk drive in the DiskSim / Ruemmler–Wilkes style.
//!
//! Every command is timed from positions, not from a service-time distribution:
//!
//! - **Layout.** LBAs run cylinder by cylinder from the outer diameter (all heads of a
//!   cylinder, then the next). The surface is cut into zones with equal cylinder counts; the
//!   sectors per track (SPT) fall linearly from the outer to the inner zone, so the media rate
//!   does too. Each track starts `skew` sectors later than the previous one, where the skew
//!   covers a head switch or a one-cylinder seek, so a sequential transfer crossing a track
//!   loses only that switch time, never a revolution.
//! - **Rotation.** The spindle turns continuously: the platter's angle is a function of absolute
//!   time plus a phase drawn from the simulator's generator on the first command.
//! - **Access.** command overhead, then seek (Ruemmler–Wilkes piecewise: `a + b·√x` for short,
//!   `c + e·x` for long seeks, `x` the distance over the full stroke; a head switch alone inside
//!   a cylinder; DiskSim's max() rule for both), a write-settle delay for writes, the rotational
//!   wait until the first sector passes under the head, and the media transfer at the zone's rate.
//! - **Read cache.** `read_segments` segments, each holding one sequential run. After a media
//!   read the drive keeps reading ahead into the segment until the segment is full or until a new
//!   command needs the mechanism — once that command has paid its overhead, as DiskSim's
//!   validated drives order it — and at least `min_read_ahead_bytes` are read (DiskSim's
//!   minimum read-ahead; 0 in the presets). Read hits never need the mechanism.
//!   A read inside a segment is a hit (hit overhead plus host-link time); a read that the running
//!   prefetch will reach is served by the prefetch stream itself, without positioning.
//! - **Write-back cache.** With `write_cache_bytes > 0` (WCE on) writes complete once in the buffer
//!   (hit overhead plus link time) while it has room; when it is full they wait, in order, for
//!   destages to free space. The buffer keeps dirty *extents* in LBA order: a write joins every
//!   extent it overlaps or abuts, whichever writes came between, so interleaved sequential
//!   streams each build one long run. A destage writes the front of one extent, up to
//!   `destage_max_bytes`, as one media operation; the extent is chosen from a window of
//!   `queue_depth` extents (those nearest the head, or the oldest once one has waited
//!   `sptf_age_limit_ns`) for the most bytes per unit of positioning plus transfer time, which
//!   for equal sizes is shortest positioning time first. Destages run after host commands unless
//!   the buffer is three quarters full. With `write_segments > 0` the buffer holds at most that
//!   many runs (DiskSim's segmented cache): a write that would start another waits, in order,
//!   for a destage to empty one, and a full set of segments counts as three quarters full.
//!   `Op::Flush` completes when every extent holding a write older than it is on the media;
//!   while a flush waits the drive destages only. `fua` writes and all writes with WCE off go
//!   to the media before completing.
//! - **NCQ.** Up to `queue_depth` commands wait; the mechanism serves the one with the shortest
//!   positioning time (seek plus rotation, SPTF / rotational position ordering), except that a
//!   command older than `sptf_age_limit_ns` is served first, so nothing starves for longer
//!   (1 s in the presets, after Google's measured 1–2 s NCQ delays; docs/device-models.md
//!   gives every queue and cache parameter's source).
//!
//! Choice: reads are not checked against the dirty write buffer, and the media rate used by a
//! prefetch stream is the rate of the zone where the stream started.
//!
//! The mechanisms live a file each: `params.rs` (parameters and presets), `layout.rs` (zones
//! and LBA mapping), `mechanics.rs` (seeks, rotation, transfers), `cache.rs` (read segments,
//! read-ahead streams, the write-back buffer) and `queue.rs` (NCQ, destage choice, flushes,
//! the event loop); this file holds the drive's state and its [`Device`] face.
//!
//! Cost per command: O(queue depth) for the SPTF scan (candidates whose seek alone cannot beat
//! the best so far are skipped via a lower-bound table) plus O(log zones) for the LBA lookup;
//! a buffered write costs O(log extents) per extent it joins, a destage choice O(queue depth ·
//! log extents). The host queue and segments are preallocated; only the completion map and the
//! write buffer's bookkeeping allocate, as B-tree nodes.

mod cache;
mod layout;
mod mechanics;
mod params;
mod queue;

pub use params::{HddParams, NCQ_AGE_LIMIT_NS};

use std::collections::{BTreeMap, VecDeque};

use iosched_core::{Op, RequestId, Time, NSEC_PER_SEC, SECTOR_SIZE};
use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;

use super::{Command, Device};

/// One zone of the layout.
#[derive(Clone, Copy, Debug)]
struct Zone {
    first_lba: u64,
    first_cyl: u32,
    /// Sectors per track.
    spt: u64,
    /// Track skew in sectors.
    skew_sectors: u64,
    /// Reading one whole track and switching to the next.
    track_ns: u64,
}

/// A physical location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Location {
    zone: u32,
    cyl: u32,
    head: u32,
    /// Time offset of the sector's start within a revolution.
    angle_ns: u64,
    /// Sector index within its track.
    sector: u64,
}

/// A host command waiting for the mechanism.
#[derive(Clone, Copy, Debug)]
struct Queued {
    id: RequestId,
    lba: u64,
    sectors: u64,
    write: bool,
    arrival: Time,
    ready_at: Time,
    location: Location,
}

/// A dirty extent in the write-back buffer, keyed by its first LBA.
#[derive(Clone, Copy, Debug)]
struct Dirty {
    sectors: u64,
    /// Submission sequence of the oldest write in it (for flush ordering and ageing).
    seq: u64,
    /// When the oldest write in it entered the buffer.
    arrival: Time,
    location: Location,
    /// Media transfer of its next destage piece (up to `destage_max_bytes`), computed once
    /// when the extent is made: the destage choice reads it for every window candidate.
    destage_ns: u64,
}

/// What the mechanism is doing.
#[derive(Clone, Copy, Debug)]
enum Work {
    HostRead {
        lba: u64,
        sectors: u64,
    },
    HostWrite {
        lba: u64,
        sectors: u64,
    },
    /// Destaging `sectors` taken off the front of a dirty extent.
    Destage {
        sectors: u64,
    },
    /// Serving reads from the running prefetch stream.
    Streaming,
}

#[derive(Clone, Copy, Debug)]
struct Service {
    work: Work,
    id: Option<RequestId>,
    done_at: Time,
}

#[derive(Clone, Copy, Debug, Default)]
struct Segment {
    start: u64,
    /// Valid data ends here (exclusive) unless the segment is being filled by the stream.
    end: u64,
    last_use: Time,
}

/// Read-ahead in progress into one segment.
#[derive(Clone, Copy, Debug)]
struct Stream {
    segment: usize,
    origin_lba: u64,
    origin_time: Time,
    limit_lba: u64,
    spt: u64,
    /// Time per track including the switch: the stream's sustained pace.
    track_ns: u64,
}

/// A write waiting for room in the write buffer.
#[derive(Clone, Copy, Debug)]
struct Blocked {
    id: RequestId,
    lba: u64,
    sectors: u64,
    seq: u64,
}

/// The mechanical drive.
#[derive(Debug)]
pub struct HddDevice {
    params: HddParams,
    rev_ns: u64,
    zones: Vec<Zone>,
    capacity: u64,
    /// Seek curve constants in ns (f64 for the square root).
    seek_a: f64,
    seek_b: f64,
    seek_f: f64,
    seek_c: f64,
    seek_e: f64,
    seek_boundary: f64,
    /// 1 / (cylinders − 1).
    inverse_stroke: f64,
    /// Lower bounds of the seek time per distance bucket (`distance >> seek_bucket_shift`),
    /// to skip SPTF candidates that cannot win without evaluating their seek and rotation.
    seek_floor_ns: Vec<u64>,
    seek_bucket_shift: u32,
    /// `seek_ns(d)` for the short distances (`d < SHORT_SEEKS`) most SPTF candidates lie at:
    /// the curve's square root and float conversions once per distance, not per candidate.
    short_seeks_ns: Vec<u32>,
    phase_ns: Option<u64>,
    /// Head position once the current work is done.
    cyl: u32,
    head: u32,
    /// The LBA just past the last one the mechanism reached, where the destage window centres.
    head_lba: u64,
    current: Option<Service>,
    stream: Option<Stream>,
    segments: Vec<Segment>,
    queue: Vec<Queued>,
    /// Dirty extents by first LBA: disjoint and never touching (a write joins every extent it
    /// overlaps or abuts).
    dirty: BTreeMap<u64, Dirty>,
    /// The same extents by the sequence of their oldest write: (seq → first LBA and a copy
    /// of the extent, kept in step: an extent only changes by removal and reinsertion in
    /// both), so the ageing window reads its extents without a look-up in `dirty` each.
    dirty_order: BTreeMap<u64, (u64, Dirty)>,
    /// Sequence of the oldest write in the piece being destaged, while one is.
    destaging_seq: Option<u64>,
    /// Bytes buffered and not yet on the media (the destage in progress included).
    dirty_bytes: u64,
    blocked: VecDeque<Blocked>,
    /// Pending flushes: (sequence, id).
    flushes: Vec<(u64, RequestId)>,
    /// Completions not yet reported, by (time, sequence).
    done: BTreeMap<(Time, u64), RequestId>,
    next_seq: u64,
    in_flight: u32,
}

impl HddDevice {
    /// Builds the drive. Panics on parameters [`HddParams::validate`] rejects (presets and
    /// [`super::load_device_file`] validate first).
    pub fn new(params: HddParams) -> HddDevice {
        if let Err(message) = params.validate() {
            panic!("invalid HDD parameters: {message}");
        }
        let rev_ns = params.revolution_ns();
        let mut zones = Vec::with_capacity(params.zones as usize);
        let cyl_per_zone = params.cylinders / params.zones;
        let mut lba = 0u64;
        // Skew: the longer of a head switch and a one-cylinder seek (Choice: one skew for
        // track and cylinder crossings).
        let skew_time = params.head_switch_ns.max(params.seek_single_cyl_ns);
        for z in 0..params.zones {
            let first_cyl = z * cyl_per_zone;
            let cyls = if z + 1 == params.zones {
                params.cylinders - first_cyl
            } else {
                cyl_per_zone
            };
            let outer = params.media_rate_outer_bytes_per_s as f64;
            let inner = params.media_rate_inner_bytes_per_s as f64;
            let fraction = if params.zones > 1 {
                f64::from(z) / f64::from(params.zones - 1)
            } else {
                0.0
            };
            let rate = outer + (inner - outer) * fraction;
            // The rates are sustained figures (benchmarks read across track switches), so the
            // raw track holds enough sectors to deliver them including one skew per track.
            let sustained_track_ns = rev_ns as f64 + skew_time as f64;
            let spt = (rate * sustained_track_ns / NSEC_PER_SEC as f64 / SECTOR_SIZE as f64) as u64;
            let spt = spt.max(2);
            let skew_sectors = (skew_time * spt).div_ceil(rev_ns) % spt;
            zones.push(Zone {
                first_lba: lba,
                first_cyl,
                spt,
                skew_sectors,
                track_ns: rev_ns + skew_sectors * rev_ns / spt,
            });
            lba += spt * u64::from(params.heads) * u64::from(cyls);
        }
        let mut device = HddDevice {
            seek_a: params.seek_short_base_ns as f64,
            seek_b: params.seek_short_sqrt_ns as f64,
            seek_f: params.seek_short_linear_ns as f64,
            seek_c: params.seek_long_base_ns as f64,
            seek_e: params.seek_long_linear_ns as f64,
            seek_boundary: f64::from(params.seek_boundary_ppm) / 1e6,
            inverse_stroke: 1.0 / f64::from(params.cylinders.max(2) - 1),
            seek_floor_ns: Vec::new(),
            seek_bucket_shift: 0,
            short_seeks_ns: Vec::new(),
            rev_ns,
            capacity: lba,
            zones,
            phase_ns: None,
            cyl: 0,
            head: 0,
            current: None,
            stream: None,
            segments: vec![Segment::default(); params.read_segments as usize],
            queue: Vec::with_capacity(params.queue_depth as usize),
            head_lba: 0,
            dirty: BTreeMap::new(),
            dirty_order: BTreeMap::new(),
            destaging_seq: None,
            dirty_bytes: 0,
            blocked: VecDeque::new(),
            flushes: Vec::new(),
            done: BTreeMap::new(),
            next_seq: 0,
            in_flight: 0,
            params,
        };
        device.build_seek_floor();
        device
    }

    /// The parameters the drive was built from.
    pub fn params(&self) -> &HddParams {
        &self.params
    }
}

impl Device for HddDevice {
    fn name(&self) -> &str {
        &self.params.name
    }

    fn rotational(&self) -> bool {
        true
    }

    fn queue_depth(&self) -> u32 {
        self.params.queue_depth
    }

    fn capacity_sectors(&self) -> u64 {
        self.capacity
    }

    fn in_flight(&self) -> u32 {
        self.in_flight
    }

    fn submit(&mut self, now: Time, command: Command, rng: &mut Pcg64Mcg) {
        assert!(
            self.in_flight < self.params.queue_depth,
            "device queue overfilled"
        );
        if self.phase_ns.is_none() {
            self.phase_ns = Some(rng.next_u64() % self.rev_ns);
        }
        self.run_until(now);
        self.in_flight += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        let lba = command.sector.min(self.capacity - 1);
        let sectors = u64::from(command.nr_sectors)
            .max(1)
            .min(self.capacity - lba);
        match command.op {
            Op::Discard => {
                self.complete_at(now + self.params.cache_hit_overhead_ns, command.id);
            }
            Op::Flush => {
                self.flushes.push((seq, command.id));
                self.complete_flushes(now);
                self.decide(now);
            }
            Op::Read => {
                if self.try_cache_hit(lba, sectors, now) {
                    let done = now + self.params.cache_hit_overhead_ns + self.link_ns(sectors);
                    self.complete_at(done, command.id);
                } else if !self.try_stream(command.id, lba, sectors, now) {
                    self.queue.push(Queued {
                        id: command.id,
                        lba,
                        sectors,
                        write: false,
                        arrival: now,
                        ready_at: now + self.params.read_overhead_ns,
                        location: self.locate(lba),
                    });
                    self.decide(now);
                }
            }
            Op::Write => {
                let buffered = self.params.write_cache_bytes > 0 && !command.fua;
                if buffered {
                    if self.buffer_has_room(lba, sectors) && self.blocked.is_empty() {
                        self.buffer_write(lba, sectors, seq, now);
                        let done = now + self.params.cache_hit_overhead_ns + self.link_ns(sectors);
                        self.complete_at(done, command.id);
                    } else {
                        self.blocked.push_back(Blocked {
                            id: command.id,
                            lba,
                            sectors,
                            seq,
                        });
                    }
                } else {
                    self.queue.push(Queued {
                        id: command.id,
                        lba,
                        sectors,
                        write: true,
                        arrival: now,
                        ready_at: now + self.params.write_overhead_ns,
                        location: self.locate(lba),
                    });
                }
                self.decide(now);
            }
        }
    }

    fn next_event(&self) -> Option<Time> {
        if self.in_flight == 0 {
            return None;
        }
        self.next_internal_event()
    }

    fn advance(&mut self, now: Time, _rng: &mut Pcg64Mcg, completed: &mut Vec<RequestId>) {
        loop {
            self.run_until(now);
            let Some(entry) = self.done.first_entry() else {
                break;
            };
            if entry.key().0 > now {
                break;
            }
            completed.push(entry.remove());
            self.in_flight -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_core::NSEC_PER_MSEC;
    use rand_core::SeedableRng;

    fn read(id: u64, sector: u64, nr_sectors: u32) -> Command {
        Command {
            id: RequestId(id),
            op: Op::Read,
            sector,
            nr_sectors,
            fua: false,
        }
    }

    fn run_one(device: &mut HddDevice, rng: &mut Pcg64Mcg, now: Time, command: Command) -> Time {
        device.submit(now, command, rng);
        let mut done = Vec::new();
        while done.is_empty() {
            let t = device.next_event().expect("in flight");
            device.advance(t, rng, &mut done);
            if !done.is_empty() {
                return t;
            }
        }
        unreachable!()
    }

    /// The short-seek table holds the curve's own values, and longer seeks use the curve:
    /// the table changes no positioning time.
    #[test]
    fn short_seek_table_is_the_curve() {
        for params in [HddParams::hdd_7200(), HddParams::atlas_10k_v()] {
            let device = HddDevice::new(params);
            assert!(!device.short_seeks_ns.is_empty());
            for distance in 0..device.params().cylinders.min(6000) {
                assert_eq!(device.seek_ns(distance), device.seek_curve_ns(distance));
            }
        }
    }

    /// The seek curve reproduces the reference's landmarks: 0.8 ms one cylinder, about 8.8 ms
    /// at a third of the stroke, 17 ms full stroke.
    #[test]
    fn seek_curve_matches_reference_points() {
        let device = HddDevice::new(HddParams::hdd_7200());
        let n = device.params().cylinders;
        assert_eq!(device.seek_ns(1), 800_000);
        let third = device.seek_ns(n / 3) as f64 / 1e6;
        assert!((8.6..9.0).contains(&third), "{third}");
        let full = device.seek_ns(n - 1) as f64 / 1e6;
        assert!((16.9..17.1).contains(&full), "{full}");
    }

    /// Outer zones hold about twice the sectors per track of inner zones.
    #[test]
    fn zones_fall_from_outer_to_inner() {
        let device = HddDevice::new(HddParams::hdd_7200());
        let outer = device.media_rate_at(0) as f64;
        let inner = device.media_rate_at(device.capacity_sectors() - 1) as f64;
        assert!((1.9..2.3).contains(&(outer / inner)), "{outer} / {inner}");
    }

    /// A read following the previous one is served by read-ahead: far faster than a random one.
    #[test]
    fn sequential_read_hits_read_ahead() {
        let mut device = HddDevice::new(HddParams::hdd_7200());
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let t1 = run_one(&mut device, &mut rng, 0, read(1, 1_000_000, 256));
        let start = t1 + 50_000;
        let t2 = run_one(&mut device, &mut rng, start, read(2, 1_000_256, 256));
        // 128 KiB at about 125 MB/s is about 1 ms; a miss would cost a revolution or more.
        assert!(t2 - start < 1_500_000, "{}", t2 - start);
    }

    /// With a minimum read-ahead, the prefetch survives a waiting command: the stream's next
    /// block is still a hit after a far read.
    #[test]
    fn minimum_read_ahead_survives_new_command() {
        let mut params = HddParams::hdd_7200();
        params.min_read_ahead_bytes = 64 << 10;
        let mut device = HddDevice::new(params);
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let t1 = run_one(&mut device, &mut rng, 0, read(1, 1_000_000, 8));
        let t2 = run_one(&mut device, &mut rng, t1, read(2, 500_000_000, 8));
        let t3 = run_one(&mut device, &mut rng, t2, read(3, 1_000_000 + 64, 8));
        assert!(t3 - t2 < 500_000, "{}", t3 - t2);
    }

    /// A new command aborts the read-ahead: after a random read elsewhere, the first stream's
    /// next block is no longer there.
    #[test]
    fn new_command_aborts_read_ahead() {
        let mut device = HddDevice::new(HddParams::hdd_7200());
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let t1 = run_one(&mut device, &mut rng, 0, read(1, 1_000_000, 8));
        // Immediately a far read: the prefetch had no time to run.
        let t2 = run_one(&mut device, &mut rng, t1, read(2, 500_000_000, 8));
        let t3 = run_one(&mut device, &mut rng, t2, read(3, 1_000_000 + 2048, 8));
        assert!(t3 - t2 > 2_000_000, "{}", t3 - t2);
    }

    /// Buffered writes complete quickly; a flush waits until they are on the media.
    #[test]
    fn flush_waits_for_destage() {
        let mut device = HddDevice::new(HddParams::hdd_7200());
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut now = 0;
        for i in 0..8u64 {
            let write = Command {
                id: RequestId(i),
                op: Op::Write,
                sector: i * 10_000_000,
                nr_sectors: 8,
                fua: false,
            };
            let done = run_one(&mut device, &mut rng, now, write);
            assert!(done - now < 300_000, "write {i} took {}", done - now);
            now = done;
        }
        let flush = Command {
            id: RequestId(100),
            op: Op::Flush,
            sector: 0,
            nr_sectors: 0,
            fua: false,
        };
        let done = run_one(&mut device, &mut rng, now, flush);
        assert!(done - now > 20_000_000, "flush took {}", done - now);
        assert_eq!(device.dirty_bytes(), 0);
    }

    /// FUA writes go to the media: they pay positioning.
    #[test]
    fn fua_write_goes_through() {
        let mut device = HddDevice::new(HddParams::hdd_7200());
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let write = Command {
            id: RequestId(1),
            op: Op::Write,
            sector: 400_000_000,
            nr_sectors: 8,
            fua: true,
        };
        let done = run_one(&mut device, &mut rng, 0, write);
        assert!(done > 2_000_000, "{done}");
    }

    /// Ageing: a command far from the head is still served within the age limit plus one
    /// service, even while nearby commands keep arriving.
    #[test]
    fn far_command_does_not_starve() {
        let mut params = HddParams::hdd_7200();
        params.sptf_age_limit_ns = 100 * NSEC_PER_MSEC;
        let mut device = HddDevice::new(params);
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let far = device.capacity_sectors() - 100;
        device.submit(0, read(0, 0, 8), &mut rng);
        device.submit(0, read(1, far, 8), &mut rng);
        let mut next_id = 2;
        let mut far_done = None;
        let mut done = Vec::new();
        while far_done.is_none() {
            let t = device.next_event().expect("in flight");
            done.clear();
            device.advance(t, &mut rng, &mut done);
            for id in &done {
                if *id == RequestId(1) {
                    far_done = Some(t);
                } else if t < 400 * NSEC_PER_MSEC {
                    // Keep a near command waiting, a few tracks from the last one.
                    device.submit(t, read(next_id, 3000 * next_id, 8), &mut rng);
                    next_id += 1;
                }
            }
        }
        assert!(far_done.unwrap() < 150 * NSEC_PER_MSEC, "{far_done:?}");
    }

    fn write(id: u64, sector: u64, nr_sectors: u32) -> Command {
        Command {
            id: RequestId(id),
            op: Op::Write,
            sector,
            nr_sectors,
            fua: false,
        }
    }

    /// Two streams' 4 KiB writes, interleaved, build one extent per stream (plus the block
    /// already being destaged); rewriting buffered sectors neither adds an extent nor counts
    /// the bytes twice.
    #[test]
    fn interleaved_writes_join_their_own_extents() {
        let mut device = HddDevice::new(HddParams::hdd_7200());
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let streams = [1_000_000u64, 50_000_000];
        for i in 0..16u64 {
            let stream = streams[(i % 2) as usize];
            device.submit(0, write(i, stream + i / 2 * 8, 8), &mut rng);
        }
        // The first block went to the media at once; the rest joined into one run per stream
        // (stream A's run starts right after the block in flight).
        assert_eq!(device.dirty_extents(), 2);
        assert_eq!(device.dirty_bytes(), 16 * 4096);
        // Rewrite the middle of stream B's run and bridge nothing new.
        device.submit(0, write(16, streams[1] + 8, 24), &mut rng);
        assert_eq!(device.dirty_extents(), 2);
        assert_eq!(device.dirty_bytes(), 16 * 4096);
        // A write between two runs of one stream joins them.
        device.submit(0, write(17, streams[1] + 64, 8), &mut rng);
        device.submit(0, write(18, streams[1] + 72, 8), &mut rng);
        assert_eq!(device.dirty_extents(), 2);
        assert_eq!(device.dirty_bytes(), 18 * 4096);
    }

    /// With the buffer cut into segments, a write that starts a new run while every segment
    /// holds one waits for a destage to free a segment; writes extending a held run go in at
    /// once. Without segments (the presets) the third stream is buffered at once too.
    #[test]
    fn new_run_waits_for_a_free_segment() {
        for segments in [0, 2] {
            let mut device = HddDevice::new(HddParams {
                write_segments: segments,
                ..HddParams::hdd_7200()
            });
            let mut rng = Pcg64Mcg::seed_from_u64(3);
            // Stream A's first block goes to the media at once (the mechanism is idle).
            device.submit(0, write(0, 1_000_000, 8), &mut rng);
            device.submit(0, write(1, 1_000_008, 8), &mut rng);
            device.submit(0, write(2, 50_000_000, 8), &mut rng);
            assert_eq!(device.dirty_extents(), 2);
            // Stream C: a third run.
            device.submit(0, write(3, 90_000_000, 8), &mut rng);
            let mut done = Vec::new();
            device.advance(NSEC_PER_MSEC, &mut rng, &mut done);
            let third_buffered_at_once = done.contains(&RequestId(3));
            assert_eq!(third_buffered_at_once, segments == 0, "segments {segments}");
            // Either way every write completes, the third once a segment is free.
            while let Some(t) = device.next_event() {
                device.advance(t, &mut rng, &mut done);
            }
            assert_eq!(done.len(), 4);
        }
    }

    /// A run of one stream is destaged as one long media write: 40 streams 1 MiB apart, each
    /// 16 blocks of 4 KiB written round-robin, drain in about 40 positionings (0.33 s).
    /// Destaging block by block (one stream's next block lies 40 blocks later in arrival
    /// order, beyond an NCQ-sized window) pays a positioning for each of the 640 blocks: the
    /// model before coalescing took 3.3 s.
    #[test]
    fn destage_writes_whole_runs() {
        let mut device = HddDevice::new(HddParams::hdd_7200());
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut done = Vec::new();
        let mut now = 0;
        for i in 0..640u64 {
            let (stream, block) = (i % 40, i / 40);
            while device.in_flight() >= device.queue_depth() {
                now = device.next_event().expect("in flight");
                device.advance(now, &mut rng, &mut done);
            }
            device.submit(
                now,
                write(i, 1_000_000 + stream * 2048 + block * 8, 8),
                &mut rng,
            );
        }
        let start = now;
        while device.dirty_bytes() > 0 {
            now = device.next_internal_event().expect("destaging");
            device.advance(now, &mut rng, &mut done);
        }
        assert_eq!(done.len(), 640);
        assert!(now - start < 500 * NSEC_PER_MSEC, "{}", now - start);
    }

    /// A flush after many interleaved stream writes completes exactly once, only when the
    /// buffer is empty, and every write completes exactly once too.
    #[test]
    fn flush_drains_every_extent_once() {
        let mut device = HddDevice::new(HddParams::hdd_7200());
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let streams: Vec<u64> = (0..8).map(|s| s * 100_000_000 + 12_345).collect();
        let mut seen = BTreeMap::new();
        let mut done = Vec::new();
        let mut now = 0;
        let mut next = streams.clone();
        for id in 0..2_000u64 {
            while device.in_flight() >= device.queue_depth() {
                now = device.next_event().expect("in flight");
                done.clear();
                device.advance(now, &mut rng, &mut done);
                for id in &done {
                    *seen.entry(*id).or_insert(0) += 1;
                }
            }
            let stream = (id % 8) as usize;
            device.submit(now, write(id, next[stream], 8), &mut rng);
            next[stream] += 8;
        }
        let flush_id = RequestId(1_000_000);
        let flush = Command {
            id: flush_id,
            op: Op::Flush,
            sector: 0,
            nr_sectors: 0,
            fua: false,
        };
        let flushed_at = now;
        device.submit(now, flush, &mut rng);
        assert!(device.dirty_bytes() > 0);
        let mut flush_done = None;
        while let Some(t) = device.next_event() {
            done.clear();
            device.advance(t, &mut rng, &mut done);
            for id in &done {
                *seen.entry(*id).or_insert(0) += 1;
                if *id == flush_id {
                    flush_done = Some(t);
                    assert_eq!(device.dirty_bytes(), 0, "flush completed with dirty data");
                    assert_eq!(device.dirty_extents(), 0);
                }
            }
        }
        assert!(flush_done.is_some_and(|t| t > flushed_at));
        assert_eq!(seen.len(), 2_001);
        assert!(seen.values().all(|&count| count == 1));
        assert_eq!(device.in_flight(), 0);
    }
}
