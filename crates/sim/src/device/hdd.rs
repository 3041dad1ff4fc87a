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
//!   command needs the mechanism, once at least `min_read_ahead_bytes` are read (DiskSim's
//!   minimum read-ahead; 0 in the presets, so the prefetch is aborted at once).
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
//! Cost per command: O(queue depth) for the SPTF scan (candidates whose seek alone cannot beat
//! the best so far are skipped via a lower-bound table) plus O(log zones) for the LBA lookup;
//! a buffered write costs O(log extents) per extent it joins, a destage choice O(queue depth ·
//! log extents). The host queue and segments are preallocated; only the completion map and the
//! write buffer's bookkeeping allocate, as B-tree nodes.

use std::collections::{BTreeMap, VecDeque};

use iosched_core::{Op, RequestId, Time, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC, SECTOR_SIZE};
use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;

use super::{Command, Device};

/// The longest a queued command waits while the drive serves others by positioning time:
/// Google measured NCQ drives delaying an I/O by up to 1–2 s (cited in the Wikipedia article
/// "Native Command Queuing"; Valente and Andreolini, SYSTOR '12, and Yu et al., ACM TOS 6(1),
/// 2010, describe the same postponement); Alexander Motin found "a hard deadline between 1
/// and 4 seconds, depending on a model" on every SATA HDD he tested under mixed sequential and
/// random reads, the drives otherwise serving the sequential reads first (openzfs/zfs#15270,
/// 2023). Choice: 1 s, the low end of both ranges.
pub const NCQ_AGE_LIMIT_NS: u64 = NSEC_PER_SEC;

/// Parameters of one mechanical drive. Every field carries its unit; the preset constructors
/// below name the source of each value.
#[derive(Clone, Debug, PartialEq)]
pub struct HddParams {
    pub name: String,
    /// Spindle speed, revolutions per minute (a model file may give a fraction).
    pub rpm: f64,
    /// Cylinders (tracks per surface).
    pub cylinders: u32,
    /// Data surfaces (heads).
    pub heads: u32,
    /// Zones (bands) of equal cylinder count.
    pub zones: u32,
    /// Media rate in the outermost zone, bytes per second.
    pub media_rate_outer_bytes_per_s: u64,
    /// Media rate in the innermost zone, bytes per second.
    pub media_rate_inner_bytes_per_s: u64,
    /// Seek time over one cylinder.
    pub seek_single_cyl_ns: u64,
    /// Short-seek constant `a` in `a + b·√x`.
    pub seek_short_base_ns: u64,
    /// Short-seek coefficient `b` in `a + b·√x + f·x` (x = distance / full stroke).
    pub seek_short_sqrt_ns: u64,
    /// Short-seek linear coefficient `f` in `a + b·√x + f·x`: 0 for a Ruemmler–Wilkes curve,
    /// Lee's `B` for a three-point curve (with the boundary at the full stroke).
    pub seek_short_linear_ns: u64,
    /// Boundary between the short and the long piece, in millionths of the full stroke.
    pub seek_boundary_ppm: u32,
    /// Long-seek constant `c` in `c + e·x`.
    pub seek_long_base_ns: u64,
    /// Long-seek coefficient `e` in `c + e·x`.
    pub seek_long_linear_ns: u64,
    /// Extra settle time before writing after any head movement.
    pub write_settle_ns: u64,
    /// Switching heads within a cylinder.
    pub head_switch_ns: u64,
    /// Controller overhead of a read that goes to the media.
    pub read_overhead_ns: u64,
    /// Controller overhead of a write that goes to the media.
    pub write_overhead_ns: u64,
    /// Controller overhead of a command served from the cache (read hit, buffered write, flush).
    pub cache_hit_overhead_ns: u64,
    /// Host link payload rate, bytes per second.
    pub host_link_bytes_per_s: u64,
    /// Read cache segments.
    pub read_segments: u32,
    /// Bytes per read segment (the read-ahead limit).
    pub read_segment_bytes: u64,
    /// Read-ahead done after a media read even when another command waits (DiskSim's
    /// "minimum read-ahead"); 0 aborts the prefetch at once.
    pub min_read_ahead_bytes: u64,
    /// Write-back buffer; 0 turns the write cache off (WCE = 0).
    pub write_cache_bytes: u64,
    /// Write-back buffer segments: how many separate dirty runs it holds at once (DiskSim's
    /// segmented cache); 0 leaves the count free, bounded only by `write_cache_bytes`.
    pub write_segments: u32,
    /// Largest piece of a dirty extent written by one destage operation.
    pub destage_max_bytes: u64,
    /// NCQ/TCQ tags.
    pub queue_depth: u32,
    /// A command that has waited this long is served before any SPTF choice.
    pub sptf_age_limit_ns: u64,
}

impl HddParams {
    /// The "slow 7200 RPM SATA" desktop drive of device-models.md §1.1 (2009–2011 class).
    pub fn hdd_7200() -> HddParams {
        HddParams {
            name: "hdd-7200".to_string(),
            // Datasheets (Hitachi 7K series): 8.33 ms per revolution.
            rpm: 7200.0,
            // §1.1: N_cyl ≈ 100 000–150 000; with 4 heads and the rates below about 460 GB.
            cylinders: 150_000,
            // Estimate: two platters.
            heads: 4,
            // Deskstar 7K500 has 30 zones.
            zones: 30,
            // §1.1: 120–130 MB/s at the OD (xbitlabs 2009).
            media_rate_outer_bytes_per_s: 125_000_000,
            // §1.1: 55–65 MB/s at the ID (ratio about 2:1, 7K500 2.1).
            media_rate_inner_bytes_per_s: 60_000_000,
            // §1.1 recommended curve: t(1 cyl) = 0.8 ms.
            seek_single_cyl_ns: 800 * NSEC_PER_USEC,
            // §1.1 recommended curve: 1.0 + 13.8·√x ms for x < 0.2 ...
            seek_short_base_ns: NSEC_PER_MSEC,
            seek_short_sqrt_ns: 13_800 * NSEC_PER_USEC,
            seek_short_linear_ns: 0,
            seek_boundary_ppm: 200_000,
            // ... 4.7 + 12.3·x ms beyond (average 8.5 ms, full stroke 17 ms).
            seek_long_base_ns: 4_700 * NSEC_PER_USEC,
            seek_long_linear_ns: 12_300 * NSEC_PER_USEC,
            // §1.1: write-settle delta +1.0 ms (7K1000.C 8.5 vs 9.5 ms average).
            write_settle_ns: NSEC_PER_MSEC,
            // §1.1: 0.5–1.5 ms on modern drives (estimate).
            head_switch_ns: NSEC_PER_MSEC,
            // §1.1: 0.2 ms read, 0.3 ms write miss (DiskSim-extracted Maxtor, rounded up).
            read_overhead_ns: 200 * NSEC_PER_USEC,
            write_overhead_ns: 300 * NSEC_PER_USEC,
            // DiskSim-extracted Maxtor read hit 0.10 ms.
            cache_hit_overhead_ns: 100 * NSEC_PER_USEC,
            // SATA 3 Gb/s ≈ 300 MB/s.
            host_link_bytes_per_s: 300_000_000,
            // §1.1: 16 segments (assumption).
            read_segments: 16,
            // Estimate: half of a 32 MiB cache for reads, 1 MiB per segment.
            read_segment_bytes: 1 << 20,
            // §1.1: minimum read-ahead 0 (DiskSim: "usually right").
            min_read_ahead_bytes: 0,
            // Estimate: the other half of the 32 MiB cache buffers writes (WCE on), as runs in
            // any number. §1.1's 16–32 segments straddle a cliff for seed 000's 32 streams
            // (README, "000, slow HDD"), so no count is assumed.
            write_cache_bytes: 16 << 20,
            write_segments: 0,
            // Estimate.
            destage_max_bytes: 1 << 20,
            // SATA NCQ: Linux uses 31 of 32 tags.
            queue_depth: 31,
            // Measured: Google found NCQ drives holding a command back for up to 1–2 s
            // (docs/device-models.md, "Command ageing"). Choice: the low end of that range.
            sptf_age_limit_ns: NCQ_AGE_LIMIT_NS,
        }
    }

    /// The 10K RPM disk with the Maxtor Atlas 10K V extracted seek curve (device-models.md
    /// §1.2's default curve). Its full-span QD1 random read lands at about 124 IOPS, just under
    /// §2.1's 125–150, so the `sas-10k` preset uses the Savvio figures instead.
    pub fn atlas_10k_v() -> HddParams {
        HddParams {
            name: "atlas-10k-v".to_string(),
            // Typical 10K drive (the extracted Maxtor spins at 10 001).
            rpm: 10_000.0,
            // Maxtor Atlas 10K V: 80 512 cylinders, 8 surfaces.
            cylinders: 80_512,
            heads: 8,
            // Estimate: the count matters little.
            zones: 24,
            // Maxtor Atlas 10K V: about 1 170 sectors per track at the OD → 99.8 MB/s.
            media_rate_outer_bytes_per_s: 100_000_000,
            // Savvio 10K.1 internal rate 506 Mbit/s at the ID ≈ 63 MB/s.
            media_rate_inner_bytes_per_s: 63_000_000,
            // Maxtor extracted table: 0.53 ms at one cylinder.
            seek_single_cyl_ns: 530 * NSEC_PER_USEC,
            // §1.2 Ruemmler–Wilkes fit: 1.03 + 6.8·√x ms for x < 0.19 ...
            seek_short_base_ns: 1_030 * NSEC_PER_USEC,
            seek_short_sqrt_ns: 6_800 * NSEC_PER_USEC,
            seek_short_linear_ns: 0,
            seek_boundary_ppm: 190_000,
            // ... 2.96 + 6.2·x ms beyond.
            seek_long_base_ns: 2_960 * NSEC_PER_USEC,
            seek_long_linear_ns: 6_200 * NSEC_PER_USEC,
            // Maxtor extracted: writes +0.15 ms.
            write_settle_ns: 150 * NSEC_PER_USEC,
            // Maxtor extracted: head switch 0.116 ms.
            head_switch_ns: 116 * NSEC_PER_USEC,
            // Savvio 10K.1: 4.2 ms average with overhead, 4.0 without.
            read_overhead_ns: 200 * NSEC_PER_USEC,
            // Maxtor extracted: write miss 0.34 ms.
            write_overhead_ns: 340 * NSEC_PER_USEC,
            // Maxtor extracted: read hit 0.10 ms.
            cache_hit_overhead_ns: 100 * NSEC_PER_USEC,
            // SAS 3 Gb/s.
            host_link_bytes_per_s: 300_000_000,
            // Estimate: 16 MiB cache, half for 16 read segments.
            read_segments: 16,
            read_segment_bytes: 512 << 10,
            // §1.1: minimum read-ahead 0.
            min_read_ahead_bytes: 0,
            // Estimate: the other half buffers writes.
            write_cache_bytes: 8 << 20,
            write_segments: 0,
            destage_max_bytes: 1 << 20,
            // §1.2: TCQ depth 32–64 assumed.
            queue_depth: 64,
            // No published figure for SCSI TCQ firmware: the NCQ measurement.
            sptf_age_limit_ns: NCQ_AGE_LIMIT_NS,
        }
    }

    /// A 2008-era 2.5-inch 10K RPM SAS disk after the Seagate Savvio 10K.1 manual (device-models.md
    /// §1.2's "fast" variant, and the drive behind §2.1's deep-queue figure).
    ///
    /// The manual gives only single-track, average and full-stroke times (0.4 / 4.0 / 8.3 ms).
    /// Lee's three-point curve through them would make 10–1 000 cylinder seeks far too short
    /// (the §1.1 caveat; it pushed deep-queue IOPS past §2.1's range), so the curve is instead
    /// the measured Maxtor Atlas 10K V fit scaled to Savvio's average: every coefficient times
    /// 4.0 / 4.84 = 0.826, the way a public SMR simulator scales the C2200A coefficients. Its full
    /// stroke comes out at 7.6 ms against the manual's 8.3.
    pub fn sas_10k() -> HddParams {
        let scale = |ns: u64| (ns as f64 * 4.0 / 4.84) as u64;
        HddParams {
            name: "sas-10k".to_string(),
            rpm: 10_000.0,
            // Estimate: only distance over the full stroke enters the seek curve.
            cylinders: 80_000,
            // Estimate: 146 GB class, two platters.
            heads: 4,
            // Estimate.
            zones: 24,
            // Savvio 10K.1: internal data rate 506–753 Mbit/s ≈ 63–94 MB/s.
            media_rate_outer_bytes_per_s: 94_000_000,
            media_rate_inner_bytes_per_s: 63_000_000,
            // Savvio 10K.1: single track 0.4 ms.
            seek_single_cyl_ns: 400 * NSEC_PER_USEC,
            // Scaled Maxtor fit: (1.03 + 6.8·√x) × 0.826 for x < 0.19 ...
            seek_short_base_ns: scale(1_030 * NSEC_PER_USEC),
            seek_short_sqrt_ns: scale(6_800 * NSEC_PER_USEC),
            seek_short_linear_ns: 0,
            seek_boundary_ppm: 190_000,
            // ... (2.96 + 6.2·x) × 0.826 beyond.
            seek_long_base_ns: scale(2_960 * NSEC_PER_USEC),
            seek_long_linear_ns: scale(6_200 * NSEC_PER_USEC),
            // Savvio 10K.1: writes 0.4 ms slower on average (4.4 vs 4.0 ms).
            write_settle_ns: 400 * NSEC_PER_USEC,
            // Maxtor extracted: head switch 0.116 ms.
            head_switch_ns: 116 * NSEC_PER_USEC,
            // Savvio 10K.1: 4.2 ms average with controller overhead, 4.0 without.
            read_overhead_ns: 200 * NSEC_PER_USEC,
            // Maxtor extracted: write miss 0.34 ms.
            write_overhead_ns: 340 * NSEC_PER_USEC,
            // Maxtor extracted: read hit 0.10 ms.
            cache_hit_overhead_ns: 100 * NSEC_PER_USEC,
            // SAS 3 Gb/s.
            host_link_bytes_per_s: 300_000_000,
            // §1.2: 16 MiB cache; estimate: half for 16 read segments ...
            read_segments: 16,
            read_segment_bytes: 512 << 10,
            // §1.1: minimum read-ahead 0.
            min_read_ahead_bytes: 0,
            // ... half for writes.
            write_cache_bytes: 8 << 20,
            write_segments: 0,
            // Estimate.
            destage_max_bytes: 1 << 20,
            // §1.2: TCQ depth 32–64 assumed.
            queue_depth: 64,
            // No published figure for SCSI TCQ firmware: the NCQ measurement.
            sptf_age_limit_ns: NCQ_AGE_LIMIT_NS,
        }
    }

    /// One revolution, in whole nanoseconds (rounded down: an integral rpm gives what
    /// integer division gave).
    pub fn revolution_ns(&self) -> u64 {
        (60.0 * NSEC_PER_SEC as f64 / self.rpm) as u64
    }

    /// Checks the parameters; the message names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("cylinders", u64::from(self.cylinders)),
            ("heads", u64::from(self.heads)),
            ("zones", u64::from(self.zones)),
            (
                "media_rate_outer_bytes_per_s",
                self.media_rate_outer_bytes_per_s,
            ),
            (
                "media_rate_inner_bytes_per_s",
                self.media_rate_inner_bytes_per_s,
            ),
            ("host_link_bytes_per_s", self.host_link_bytes_per_s),
            ("read_segments", u64::from(self.read_segments)),
            ("read_segment_bytes", self.read_segment_bytes),
            ("destage_max_bytes", self.destage_max_bytes),
            ("queue_depth", u64::from(self.queue_depth)),
        ];
        // Checked first: a revolution's length is computed from it below.
        if !(1_000.0..=30_000.0).contains(&self.rpm) {
            return Err("rpm must lie in 1000..=30000".to_string());
        }
        for (field, value) in positive {
            if value == 0 {
                return Err(format!("{field} must be positive"));
            }
        }
        let bounded = [
            ("cylinders", u64::from(self.cylinders), 2, 10_000_000),
            ("heads", u64::from(self.heads), 1, 64),
            ("zones", u64::from(self.zones), 1, 1_000),
            (
                "media_rate_outer_bytes_per_s",
                self.media_rate_outer_bytes_per_s,
                1,
                10_000_000_000,
            ),
            (
                "media_rate_inner_bytes_per_s",
                self.media_rate_inner_bytes_per_s,
                1,
                10_000_000_000,
            ),
            ("read_segments", u64::from(self.read_segments), 1, 1_024),
            ("queue_depth", u64::from(self.queue_depth), 1, 65_536),
        ];
        for (field, value, low, high) in bounded {
            if !(low..=high).contains(&value) {
                return Err(format!("{field} must lie in {low}..={high}"));
            }
        }
        if self.zones > self.cylinders {
            return Err("zones must not exceed cylinders".to_string());
        }
        if self.seek_boundary_ppm > 1_000_000 {
            return Err("seek_boundary_ppm must be at most 1000000".to_string());
        }
        let rev_ns = self.revolution_ns();
        let slowest = self
            .media_rate_outer_bytes_per_s
            .min(self.media_rate_inner_bytes_per_s);
        if slowest as u128 * rev_ns as u128 / (NSEC_PER_SEC as u128 * SECTOR_SIZE as u128) < 2 {
            return Err("media rate too low: fewer than 2 sectors per track".to_string());
        }
        Ok(())
    }
}

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
    /// The same extents by the sequence of their oldest write: (seq → first LBA).
    dirty_order: BTreeMap<u64, u64>,
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

    /// Fills the seek lower-bound table: the suffix minimum of the seek time at each bucket's
    /// first distance. Exact lower bounds for seek curves that do not fall with distance (all
    /// the presets'); for others the pruning may rarely skip the best candidate.
    fn build_seek_floor(&mut self) {
        let cylinders = self.params.cylinders;
        let mut shift = 0;
        while (cylinders >> shift) > 1024 {
            shift += 1;
        }
        let buckets = (cylinders >> shift) as usize + 1;
        let mut floor: Vec<u64> = (0..buckets)
            .map(|bucket| self.seek_ns((bucket as u32) << shift))
            .collect();
        for index in (0..buckets.saturating_sub(1)).rev() {
            floor[index] = floor[index].min(floor[index + 1]);
        }
        self.seek_floor_ns = floor;
        self.seek_bucket_shift = shift;
    }

    /// A lower bound of the positioning time to `target` (seek only).
    #[inline]
    fn positioning_floor(&self, target: &Location) -> u64 {
        let distance = self.cyl.abs_diff(target.cyl);
        self.seek_floor_ns[(distance >> self.seek_bucket_shift) as usize]
    }

    /// The parameters the drive was built from.
    pub fn params(&self) -> &HddParams {
        &self.params
    }

    /// One revolution.
    pub fn revolution_ns(&self) -> u64 {
        self.rev_ns
    }

    /// Seek time over `distance` cylinders, before any write settle.
    pub fn seek_ns(&self, distance: u32) -> u64 {
        if distance == 0 {
            return 0;
        }
        if distance == 1 {
            return self.params.seek_single_cyl_ns;
        }
        let x = f64::from(distance) * self.inverse_stroke;
        let t = if x < self.seek_boundary {
            self.seek_a + self.seek_b * x.sqrt() + self.seek_f * x
        } else {
            self.seek_c + self.seek_e * x
        };
        (t as u64).max(self.params.seek_single_cyl_ns)
    }

    /// Sustained media rate (track switches included) of the zone holding `lba`, bytes per second.
    pub fn media_rate_at(&self, lba: u64) -> u64 {
        let zone = &self.zones[self.zone_of(lba)];
        (u128::from(zone.spt) * u128::from(SECTOR_SIZE) * u128::from(NSEC_PER_SEC)
            / u128::from(zone.track_ns)) as u64
    }

    /// Dirty bytes in the write buffer.
    pub fn dirty_bytes(&self) -> u64 {
        self.dirty_bytes
    }

    /// Dirty extents waiting in the write buffer (the piece being destaged not counted).
    pub fn dirty_extents(&self) -> usize {
        self.dirty.len()
    }

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

    fn zone_of(&self, lba: u64) -> usize {
        self.zones
            .partition_point(|zone| zone.first_lba <= lba)
            .saturating_sub(1)
    }

    fn locate(&self, lba: u64) -> Location {
        let lba = lba.min(self.capacity - 1);
        let zone_index = self.zone_of(lba);
        let zone = &self.zones[zone_index];
        let offset = lba - zone.first_lba;
        let track = offset / zone.spt;
        let sector = offset % zone.spt;
        let heads = u64::from(self.params.heads);
        let cyl = zone.first_cyl + (track / heads) as u32;
        let head = (track % heads) as u32;
        let skewed = (sector + (track % zone.spt) * zone.skew_sectors) % zone.spt;
        Location {
            zone: zone_index as u32,
            cyl,
            head,
            angle_ns: skewed * self.rev_ns / zone.spt,
            sector,
        }
    }

    /// Seek (or head switch) plus rotational wait from the current head position, starting
    /// to move at `start`.
    fn positioning_ns(&self, target: &Location, start: Time, write: bool) -> u64 {
        let distance = self.cyl.abs_diff(target.cyl);
        let mut seek = self.seek_ns(distance);
        if target.head != self.head {
            seek = seek.max(self.params.head_switch_ns);
        }
        if write && seek > 0 {
            seek += self.params.write_settle_ns;
        }
        let phase = self.phase_ns.unwrap_or(0);
        let platter = (start + seek + phase) % self.rev_ns;
        Self::wait_for(target.angle_ns, platter, self.rev_ns) + seek
    }

    /// Rotational wait from platter position `platter` until `angle` passes, both within
    /// [0, rev).
    #[inline]
    fn wait_for(angle: u64, platter: u64, rev: u64) -> u64 {
        if angle >= platter {
            angle - platter
        } else {
            angle + rev - platter
        }
    }

    /// [`Self::positioning_ns`] for many candidates at one decision time: the platter's
    /// position at `time` is computed once, and each candidate's only by additions.
    #[inline]
    fn positioning_from(
        &self,
        base_platter: u64,
        time: Time,
        target: &Location,
        start: Time,
        write: bool,
    ) -> u64 {
        let distance = self.cyl.abs_diff(target.cyl);
        let mut seek = self.seek_ns(distance);
        if target.head != self.head {
            seek = seek.max(self.params.head_switch_ns);
        }
        if write && seek > 0 {
            seek += self.params.write_settle_ns;
        }
        let mut platter = base_platter + (start - time) + seek;
        while platter >= self.rev_ns {
            platter -= self.rev_ns;
        }
        Self::wait_for(target.angle_ns, platter, self.rev_ns) + seek
    }

    /// Media transfer of `sectors` starting at `location`: sector times plus a skew per
    /// track crossing.
    fn transfer_ns(&self, location: &Location, sectors: u64) -> u64 {
        let zone = &self.zones[location.zone as usize];
        let crossings = (location.sector + sectors.max(1) - 1) / zone.spt;
        (sectors + crossings * zone.skew_sectors) * self.rev_ns / zone.spt
    }

    fn link_ns(&self, sectors: u64) -> u64 {
        (u128::from(sectors * SECTOR_SIZE) * u128::from(NSEC_PER_SEC)
            / u128::from(self.params.host_link_bytes_per_s)) as u64
    }

    fn complete_at(&mut self, time: Time, id: RequestId) {
        self.done.insert((time, self.next_seq), id);
        self.next_seq += 1;
    }

    /// Where the prefetch stream has read up to at `time`.
    fn stream_position(&self, stream: &Stream, time: Time) -> u64 {
        if time <= stream.origin_time {
            return stream.origin_lba;
        }
        let read = u128::from(time - stream.origin_time) * u128::from(stream.spt)
            / u128::from(stream.track_ns);
        (stream.origin_lba + read.min(u128::from(u64::MAX / 2)) as u64)
            .min(stream.limit_lba)
            .min(self.capacity)
    }

    /// When the stream will have read everything below `lba`.
    fn stream_time_of(&self, stream: &Stream, lba: u64) -> Time {
        let sectors = lba.saturating_sub(stream.origin_lba);
        stream.origin_time + (sectors * stream.track_ns).div_ceil(stream.spt)
    }

    fn segment_end(&self, index: usize, time: Time) -> u64 {
        match self.stream {
            Some(stream) if stream.segment == index => self.stream_position(&stream, time),
            _ => self.segments[index].end,
        }
    }

    /// Aborts read-ahead at `time`: the segment keeps what was read, the head rests there.
    fn stop_stream(&mut self, time: Time) {
        if let Some(stream) = self.stream.take() {
            let end = self.stream_position(&stream, time);
            self.segments[stream.segment].end = end;
            let location = self.locate(end);
            self.cyl = location.cyl;
            self.head = location.head;
            self.head_lba = end;
        }
    }

    fn invalidate_segments(&mut self, lba: u64, sectors: u64, time: Time) {
        for index in 0..self.segments.len() {
            let start = self.segments[index].start;
            let end = self.segment_end(index, time);
            if start < lba + sectors && lba < end {
                if self.stream.is_some_and(|s| s.segment == index) {
                    self.stop_stream(time);
                }
                self.segments[index].end = self.segments[index].start;
            }
        }
    }

    /// A read served from a segment, if it lies wholly inside one.
    fn try_cache_hit(&mut self, lba: u64, sectors: u64, now: Time) -> bool {
        for index in 0..self.segments.len() {
            let segment = self.segments[index];
            if segment.start <= lba && lba + sectors <= self.segment_end(index, now) {
                self.segments[index].last_use = now;
                return true;
            }
        }
        false
    }

    /// A read the running prefetch will reach: it completes when the stream passes its end.
    fn try_stream(&mut self, id: RequestId, lba: u64, sectors: u64, now: Time) -> bool {
        let Some(mut stream) = self.stream else {
            return false;
        };
        let mechanism_free = match self.current {
            None => true,
            Some(service) => matches!(service.work, Work::Streaming),
        };
        if !mechanism_free || !self.queue.is_empty() || !self.flushes.is_empty() {
            return false;
        }
        let segment = self.segments[stream.segment];
        if lba < segment.start || lba > stream.limit_lba || lba + sectors > self.capacity {
            return false;
        }
        let seg_sectors = self.params.read_segment_bytes / SECTOR_SIZE;
        stream.limit_lba = stream
            .limit_lba
            .max(lba + sectors.max(seg_sectors))
            .min(self.capacity);
        self.stream = Some(stream);
        let start = stream.limit_lba.saturating_sub(seg_sectors.max(sectors));
        let seg = &mut self.segments[stream.segment];
        seg.start = seg.start.max(start);
        seg.last_use = now;
        let done = self
            .stream_time_of(&stream, lba + sectors)
            .max(now + self.params.cache_hit_overhead_ns);
        self.complete_at(done, id);
        let until = match self.current {
            Some(service) => service.done_at.max(done),
            None => done,
        };
        self.current = Some(Service {
            work: Work::Streaming,
            id: None,
            done_at: until,
        });
        true
    }

    /// Takes a write into the buffer at `time`: it joins every dirty extent it overlaps or
    /// abuts, so one stream's small writes become one run however they interleave with others.
    /// Rewritten sectors are counted once. O(log n) per extent joined.
    fn buffer_write(&mut self, lba: u64, sectors: u64, seq: u64, time: Time) {
        self.invalidate_segments(lba, sectors, time);
        let mut start = lba;
        let mut end = lba + sectors;
        let mut oldest = (seq, time);
        let mut rewritten = 0;
        while let Some((&first, &extent)) = self.dirty.range(..=end).next_back() {
            let last = first + extent.sectors;
            if last < start {
                break;
            }
            rewritten += last.min(lba + sectors).saturating_sub(first.max(lba));
            start = start.min(first);
            end = end.max(last);
            oldest = oldest.min((extent.seq, extent.arrival));
            self.dirty.remove(&first);
            self.dirty_order.remove(&extent.seq);
        }
        assert!(rewritten <= sectors, "extents overlap");
        self.dirty_bytes += (sectors - rewritten) * SECTOR_SIZE;
        let location = self.locate(start);
        self.dirty.insert(
            start,
            Dirty {
                sectors: end - start,
                seq: oldest.0,
                arrival: oldest.1,
                location,
            },
        );
        self.dirty_order.insert(oldest.0, start);
    }

    /// Runs the mechanism's internal events up to and including `now`.
    fn run_until(&mut self, now: Time) {
        while let Some(service) = self.current {
            if service.done_at > now {
                break;
            }
            self.current = None;
            self.finish(service);
            self.decide(service.done_at);
        }
    }

    fn finish(&mut self, service: Service) {
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

    /// Whether the write buffer can take a write now: its bytes fit and it either joins a
    /// dirty run or finds a free segment. An empty buffer takes any write.
    fn buffer_has_room(&self, lba: u64, sectors: u64) -> bool {
        if self.dirty.is_empty() {
            return true;
        }
        let bytes = sectors * SECTOR_SIZE;
        if self.dirty_bytes + bytes > self.params.write_cache_bytes {
            return false;
        }
        let joins = self
            .dirty
            .range(..=lba + sectors)
            .next_back()
            .is_some_and(|(&first, extent)| first + extent.sectors >= lba);
        joins || !self.segments_full()
    }

    /// Every write segment holds a dirty run (never, with the count left free).
    fn segments_full(&self) -> bool {
        self.params.write_segments > 0 && self.dirty.len() >= self.params.write_segments as usize
    }

    fn admit_blocked(&mut self, time: Time) {
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

    fn complete_flushes(&mut self, time: Time) {
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

    fn start_stream(&mut self, lba: u64, sectors: u64, time: Time) {
        let seg_sectors = self.params.read_segment_bytes / SECTOR_SIZE;
        let end = lba + sectors;
        // Reuse the segment this read continues, else the least recently used one.
        let index = (0..self.segments.len())
            .find(|&i| self.segments[i].end == lba && self.segments[i].end > self.segments[i].start)
            .unwrap_or_else(|| {
                (0..self.segments.len())
                    .min_by_key(|&i| (self.segments[i].last_use, i))
                    .expect("at least one segment")
            });
        let start = if sectors >= seg_sectors {
            end - seg_sectors
        } else if self.segments[index].end == lba {
            self.segments[index]
                .start
                .max((lba + sectors).saturating_sub(seg_sectors))
        } else {
            lba
        };
        self.segments[index] = Segment {
            start,
            end,
            last_use: time,
        };
        let limit_lba = (lba + seg_sectors.max(sectors)).min(self.capacity);
        let zone = &self.zones[self.zone_of(end.min(self.capacity - 1))];
        self.stream = Some(Stream {
            segment: index,
            origin_lba: end,
            origin_time: time,
            limit_lba,
            spt: zone.spt,
            track_ns: zone.track_ns,
        });
    }

    /// The mechanism is free at `time`: pick the next work, if any.
    fn decide(&mut self, time: Time) {
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
        // Minimum read-ahead: the prefetch keeps the mechanism until it has read that far.
        if let Some(stream) = self.stream {
            let min_sectors = self.params.min_read_ahead_bytes / SECTOR_SIZE;
            let must_reach = (stream.origin_lba + min_sectors).min(stream.limit_lba);
            if self.stream_position(&stream, time) < must_reach {
                self.current = Some(Service {
                    work: Work::Streaming,
                    id: None,
                    done_at: self.stream_time_of(&stream, must_reach).max(time + 1),
                });
                return;
            }
        }
        self.stop_stream(time);
        // Ageing bound first for host commands (dirty extents age inside `pick_destage`).
        if use_host {
            let oldest = (0..self.queue.len())
                .min_by_key(|&i| (self.queue[i].arrival, i))
                .expect("queue not empty");
            if self.queue[oldest].arrival + self.params.sptf_age_limit_ns <= time {
                self.start_host(oldest, time);
                return;
            }
        }
        // Shortest positioning time first over host commands.
        let mut best_host: Option<(u64, usize)> = None;
        let base_platter = (time + self.phase_ns.unwrap_or(0)) % self.rev_ns;
        if use_host {
            for (index, queued) in self.queue.iter().enumerate() {
                let start = time.max(queued.ready_at);
                let floor = start - time + self.positioning_floor(&queued.location);
                if best_host.is_some_and(|(c, _)| floor >= c) {
                    continue;
                }
                let cost = start - time
                    + self.positioning_from(
                        base_platter,
                        time,
                        &queued.location,
                        start,
                        queued.write,
                    );
                if best_host.is_none_or(|(c, _)| cost < c) {
                    best_host = Some((cost, index));
                }
            }
        }
        let best_dirty = if use_dirty {
            self.pick_destage(base_platter, time)
        } else {
            None
        };
        match (best_host, best_dirty) {
            (Some((host_cost, index)), Some((dirty_cost, _))) if host_cost <= dirty_cost => {
                self.start_host(index, time)
            }
            (_, Some((_, lba))) => self.start_destage(lba, time),
            (Some((_, index)), None) => self.start_host(index, time),
            (None, None) => unreachable!("a candidate"),
        }
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
    fn pick_destage(&self, base_platter: u64, time: Time) -> Option<(u64, u64)> {
        let max_sectors = (self.params.destage_max_bytes / SECTOR_SIZE).max(1);
        let depth = self.params.queue_depth as usize;
        let (_, &oldest_lba) = self.dirty_order.iter().next()?;
        let aged = self.dirty[&oldest_lba].arrival + self.params.sptf_age_limit_ns <= time;
        let oldest = self
            .dirty_order
            .values()
            .take(if aged { depth } else { 0 })
            .map(|lba| (lba, &self.dirty[lba]));
        let half = if aged { 0 } else { depth.div_ceil(2) };
        let after = self.dirty.range(self.head_lba..).take(half);
        let before = self.dirty.range(..self.head_lba).rev().take(half);
        // (positioning, positioning + transfer, sectors, lba)
        let mut best: Option<(u64, u64, u64, u64)> = None;
        for (&lba, extent) in oldest.chain(after).chain(before) {
            let sectors = extent.sectors.min(max_sectors);
            let transfer = self.transfer_ns(&extent.location, sectors);
            // Worse per sector than the best even with the shortest seek: skip.
            let beats = |total: u64, best: &(u64, u64, u64, u64)| {
                u128::from(total) * u128::from(best.2) < u128::from(best.1) * u128::from(sectors)
            };
            let floor = self.positioning_floor(&extent.location) + transfer;
            if best.as_ref().is_some_and(|b| !beats(floor, b)) {
                continue;
            }
            // Destage is the drive's own work: no host command overhead.
            let positioning =
                self.positioning_from(base_platter, time, &extent.location, time, true);
            let total = positioning + transfer;
            if best.as_ref().is_none_or(|b| beats(total, b)) {
                best = Some((positioning, total, sectors, lba));
            }
        }
        best.map(|(positioning, _, _, lba)| (positioning, lba))
    }

    fn start_host(&mut self, index: usize, time: Time) {
        let queued = self.queue.swap_remove(index);
        let start = time.max(queued.ready_at);
        let positioning = self.positioning_ns(&queued.location, start, queued.write);
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
    fn start_destage(&mut self, lba: u64, time: Time) {
        let extent = self.dirty.remove(&lba).expect("dirty extent");
        self.dirty_order.remove(&extent.seq);
        let max_sectors = (self.params.destage_max_bytes / SECTOR_SIZE).max(1);
        let sectors = extent.sectors.min(max_sectors);
        if sectors < extent.sectors {
            let rest = lba + sectors;
            self.dirty.insert(
                rest,
                Dirty {
                    sectors: extent.sectors - sectors,
                    location: self.locate(rest),
                    ..extent
                },
            );
            self.dirty_order.insert(extent.seq, rest);
        }
        assert!(self.destaging_seq.is_none(), "one destage at a time");
        self.destaging_seq = Some(extent.seq);
        let positioning = self.positioning_ns(&extent.location, time, true);
        let transfer = self.transfer_ns(&extent.location, sectors);
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
