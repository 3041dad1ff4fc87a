//! What a driver records about each job during a run, and what a run hands to the formatters.
//!
//! The simulator (or the real engine) owns one [`JobStats`] per job and calls
//! [`JobStats::record_io`] at every completion with the three instants fio keeps per I/O:
//! *issue* (the job decided to do the I/O: `io_u->start_time`), *submit* (it reached the
//! block layer: `io_u->issue_time`) and *complete*. From those it derives fio's three latency
//! series — `slat = submit - issue`, `clat = complete - submit`, `lat = complete - issue` —
//! and fio's distributions (completion-latency buckets, I/O depth at submission).
//!
//! Bandwidth and IOPS *samples* (`bw_min` .. `iops_stddev`) are fio's 500 ms averaging windows
//! (`bwavgtime`/`iopsavgtime`), counted from the start the driver announces with
//! [`JobStats::set_sample_origin`] when the clone starts. Completions add up in the open
//! window; when one falls in a later window the open one is complete and is folded into
//! running sums (fio's `add_stat_sample()`: min, max, mean, Welford's `S`), so a job keeps a
//! fixed few dozen bytes per direction, whatever the rate and the run length (issue 17).
//! Only windows that fit inside the runtime ([`JobStats::set_runtime`]) are samples. Without
//! an announced start (tests, callers outside the driver) completions are kept per busy
//! millisecond and the windows cut when the formatters ask.
//! `group_reporting` adds the jobs' samples up as fio's `sum_stat(.., pure_sum)` does.
//!
//! At the end the driver assembles a [`RunResult`] — jobs, [`DiskStats`] per device, the job
//! options to echo, and an `iosched` JSON object for everything that is not fio's (scheduler,
//! device model, seed, wall-clock figures) — and passes it to the formatters in
//! `iosched_report`'s `fio_json`, `fio_terse` and `fio_normal`. Nothing here reads a
//! clock: timestamps are fields the caller fills in, so output is byte-stable per seed.

use crate::histogram::LatStat;
use crate::io_log::{IoLog, LogRequest};
use iosched_core::{NSEC_PER_MSEC, NSEC_PER_SEC};

/// Direction index of reads in per-direction arrays (fio's `DDIR_READ`).
pub const DDIR_READ: usize = 0;
/// Direction index of writes (`DDIR_WRITE`).
pub const DDIR_WRITE: usize = 1;
/// Direction index of trims/discards (`DDIR_TRIM`).
pub const DDIR_TRIM: usize = 2;
/// Number of data directions fio reports.
pub const DDIR_COUNT: usize = 3;

/// fio's default `percentile_list`: 17 entries.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// 500 ms: fio's default `bwavgtime` and `iopsavgtime`, the bandwidth/IOPS sample window.
pub const SAMPLE_WINDOW_MS: u64 = 500;

/// Labels of fio's `iodepth_level` buckets (bucket k covers depths k..2k-1).
pub const DEPTH_KEYS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// Labels of fio's `iodepth_submit` / `iodepth_complete` buckets (I/Os per call).
pub const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
/// Labels of the `latency_ns` and `latency_us` buckets: each holds [previous label, label).
pub const LAT_KEYS_SHORT: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
/// Labels of the `latency_ms` buckets.
pub const LAT_KEYS_MS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];
/// Total latency buckets: 10 ns + 10 µs + 12 ms.
pub const LAT_BUCKETS: usize = 32;

/// [`JobStats`]' `sample_origin_ms` before its clone's start is announced.
const NO_ORIGIN: u64 = u64::MAX;

/// Where each of a unit band's 10 buckets starts, and the band's end (fio's
/// `io_u_mark_lat_nsec/usec/msec`): 0-1, 2-3, 4-9, 10-19, 20-49, 50-99, 100-249, 250-499,
/// 500-749, 750-999.
const SHORT_EDGES: [u64; 11] = [0, 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// Bucket of a value below 1000 in a 10-bucket unit band.
fn short_bucket(v: u64) -> usize {
    SHORT_EDGES[1..10].partition_point(|&edge| edge <= v)
}

/// Index into the 32 latency buckets for a completion latency in ns.
/// Kernel-free analogue of fio's `io_u_mark_latency()`.
pub fn latency_bucket(nsec: u64) -> usize {
    if nsec < 1000 {
        short_bucket(nsec)
    } else if nsec < 1_000_000 {
        10 + short_bucket(nsec / 1000)
    } else {
        let msec = nsec / 1_000_000;
        20 + match msec {
            0..=999 => short_bucket(msec),
            1000..=1999 => 10,
            _ => 11,
        }
    }
}

/// The latencies [`latency_bucket`] puts in `bucket`: `lo..hi` ns (the last reaches up
/// to, not including, `u64::MAX`).
pub fn latency_bucket_bounds(bucket: usize) -> (u64, u64) {
    match bucket {
        0..=29 => {
            let unit = [1, 1_000, 1_000_000][bucket / 10];
            let k = bucket % 10;
            // The µs and ms bands' first buckets start at the band (1 µs, 1 ms), not at 0.
            let band = [0, 1_000, 1_000_000][bucket / 10];
            ((SHORT_EDGES[k] * unit).max(band), SHORT_EDGES[k + 1] * unit)
        }
        30 => (1_000_000_000, 2_000_000_000),
        _ => (2_000_000_000, u64::MAX),
    }
}

/// Bucket of an I/O depth (fio's `io_u_mark_depth()`).
pub fn depth_bucket(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// Bucket of a submit/complete batch size (fio's `io_u_mark_submit()`/`_complete()`).
pub fn batch_bucket(n: u32) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// Summary of a set of samples (bandwidth or IOPS windows), as fio's `calc_lat()` gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleStat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sample standard deviation (N - 1); 0 below two samples.
    pub stddev: f64,
    pub samples: u64,
}

impl SampleStat {
    /// Summarises `values`; all zero when empty.
    pub fn from_samples(values: &[u64]) -> SampleStat {
        if values.is_empty() {
            return SampleStat::default();
        }
        let n = values.len() as f64;
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
        let stddev = if values.len() < 2 {
            0.0
        } else {
            let ss: f64 = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
            (ss / (n - 1.0)).sqrt()
        };
        SampleStat {
            min: values.iter().copied().min().unwrap_or(0),
            max: values.iter().copied().max().unwrap_or(0),
            mean,
            stddev,
            samples: values.len() as u64,
        }
    }
}

/// Running sums of bandwidth or IOPS samples, fio's `struct io_stat` as
/// `add_stat_sample()` fills it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct RunningStat {
    samples: u64,
    min: u64,
    max: u64,
    mean: f64,
    /// Welford's sum of squared deviations (fio's `S`).
    s: f64,
}

impl RunningStat {
    /// Adds one sample. Kernel-free analogue of fio's `add_stat_sample()`.
    fn add(&mut self, value: u64) {
        if self.samples == 0 {
            (self.min, self.max) = (value, value);
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
        let delta = value as f64 - self.mean;
        if delta != 0.0 {
            self.mean += delta / (self.samples as f64 + 1.0);
            self.s += delta * (value as f64 - self.mean);
        }
        self.samples += 1;
    }

    /// Adds `other` up into `self` as fio merges bandwidth and IOPS samples for
    /// `group_reporting` (`sum_stat()` with `pure_sum`): min, max, mean, `S` and the sample
    /// count are each summed, so the group's figures are aggregate rates.
    fn pure_sum(&mut self, other: &RunningStat) {
        if other.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *other;
            return;
        }
        self.min += other.min;
        self.max += other.max;
        self.samples += other.samples;
        self.mean += other.mean;
        self.s += other.s;
    }

    /// The summary fio prints (`calc_lat()`: sample standard deviation from `S`).
    fn summary(&self) -> SampleStat {
        if self.samples == 0 {
            return SampleStat::default();
        }
        let stddev = if self.samples > 1 {
            (self.s / (self.samples - 1) as f64).sqrt()
        } else {
            0.0
        };
        SampleStat {
            min: self.min,
            max: self.max,
            mean: self.mean,
            stddev,
            samples: self.samples,
        }
    }
}

/// A window's bandwidth sample in KiB/s and IOPS sample.
fn window_samples(bytes: u64, ios: u64) -> (u64, u64) {
    (
        bytes * 1000 / SAMPLE_WINDOW_MS / 1024,
        ios * 1000 / SAMPLE_WINDOW_MS,
    )
}

/// One busy millisecond of completions: absolute ms, bytes, I/Os.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MsBin {
    ms: u64,
    bytes: u64,
    ios: u64,
}

/// Everything recorded for one direction of one job.
///
/// Laid out in declaration order (`repr(C)`) from a cache-line boundary, the fields each
/// completion touches first: counts and the open window in the first line, `lat_apart`,
/// `clat` and `slat`'s count in the next two (issue 34: with 4096 clones every clone's
/// statistics are out of cache at its next completion, so each line touched is a miss).
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct DirStats {
    pub io_bytes: u64,
    pub total_ios: u64,
    /// The open window's span in ns, `from..until` (empty without one): a completion inside
    /// it needs none of the window arithmetic (issue 34).
    open_ns: (u64, u64),
    /// With an announced start: the window completions currently fall in (`ms` is its start).
    open: Option<MsBin>,
    /// `lat` holds its own samples: some sample's total differed from its completion
    /// latency, or one series was not measured.
    lat_apart: bool,
    /// Completion latency: submit to complete.
    pub clat: LatStat,
    /// Submission latency: issue to submit.
    pub slat: LatStat,
    /// I/Os that transferred less than asked (fio's `short_ios`).
    pub short_ios: u64,
    /// I/Os dropped (fio's `drop_ios`).
    pub drop_ios: u64,
    /// I/Os that failed: issued (fio's `total_ios` counts them) but moved nothing.
    pub failed_ios: u64,
    /// Total latency: issue to complete; read it with [`DirStats::lat`]. While every sample
    /// had the same total as completion latency (no submission latency: the simulator's),
    /// it is `clat` and this stays empty (issue 34: one series recorded instead of two).
    lat: LatStat,
    /// Without an announced start: completions per busy millisecond.
    bins: Vec<MsBin>,
    /// Complete windows folded in: bandwidth (KiB/s) and IOPS samples.
    bw: RunningStat,
    iops: RunningStat,
    /// Set by a `group_reporting` merge: the group's summed samples, which replace the above.
    summed: Option<(RunningStat, RunningStat)>,
}

impl DirStats {
    /// Total latency: issue to complete.
    pub fn lat(&self) -> &LatStat {
        if self.lat_apart {
            &self.lat
        } else {
            &self.clat
        }
    }

    /// Gives `lat` its own copy of the samples it shares with `clat`, before they part.
    fn part_lat(&mut self) {
        if !self.lat_apart {
            self.lat = self.clat.clone();
            self.lat_apart = true;
        }
    }

    /// Counts a completion in its 500 ms window counted from `origin_ms` when known (a
    /// completion before it belongs to no window: dropped), else in its millisecond.
    /// `end_ms` is the runtime's end once known: windows reaching past it are no samples.
    fn add_completion(
        &mut self,
        complete_ns: u64,
        bytes: u64,
        origin_ms: Option<u64>,
        end_ms: Option<u64>,
    ) {
        if end_ms.is_none() && (self.open_ns.0..self.open_ns.1).contains(&complete_ns) {
            // The open window's own: what the arithmetic below finds (it starts at or after
            // the origin, and its start is the one the completion's millisecond gives).
            if let Some(window) = self.open.as_mut() {
                window.bytes += bytes;
                window.ios += 1;
                return;
            }
        }
        let ms = complete_ns / NSEC_PER_MSEC;
        let Some(origin) = origin_ms else {
            match self.bins.last_mut() {
                Some(bin) if bin.ms == ms => {
                    bin.bytes += bytes;
                    bin.ios += 1;
                }
                _ => self.bins.push(MsBin { ms, bytes, ios: 1 }),
            }
            return;
        };
        if ms < origin {
            return;
        }
        let start = origin + (ms - origin) / SAMPLE_WINDOW_MS * SAMPLE_WINDOW_MS;
        if end_ms.is_some_and(|end| start + SAMPLE_WINDOW_MS > end) {
            return;
        }
        match self.open.as_mut() {
            // Completions come in time order, so an earlier window cannot reopen.
            Some(window) if window.ms >= start => {
                window.bytes += bytes;
                window.ios += 1;
            }
            _ => {
                self.open_ns = (
                    start * NSEC_PER_MSEC,
                    (start + SAMPLE_WINDOW_MS) * NSEC_PER_MSEC,
                );
                if let Some(done) = self.open.replace(MsBin {
                    ms: start,
                    bytes,
                    ios: 1,
                }) {
                    self.fold(done);
                }
            }
        }
    }

    /// Adds `other`'s counts and latency series (the samples are summed apart).
    fn merge_counts(&mut self, other: &DirStats) {
        self.io_bytes += other.io_bytes;
        self.total_ios += other.total_ios;
        self.short_ios += other.short_ios;
        self.drop_ios += other.drop_ios;
        self.failed_ios += other.failed_ios;
        self.slat.merge(&other.slat);
        if self.lat_apart || other.lat_apart {
            self.part_lat();
            self.lat.merge(other.lat());
        }
        self.clat.merge(&other.clat);
    }

    /// Folds a complete window into the running samples.
    fn fold(&mut self, window: MsBin) {
        let (bw, iops) = window_samples(window.bytes, window.ios);
        self.bw.add(bw);
        self.iops.add(iops);
    }
}

/// Statistics of one job (or of a group, after [`JobStats::merge`]), in fio's terms.
///
/// Laid out in declaration order (`repr(C)`) from a cache-line boundary, what every I/O
/// touches first: the flags, window origin, latency-bucket hint and the pending depth and
/// batch counts of [`JobStats::record_io`] and its siblings in the first line, then the
/// directions (issue 34: with 4096 clones each clone's record is out of cache at its every
/// I/O, and the fields it needed lay on a dozen lines, then on six).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct JobStats {
    /// Whether submission latency is sampled: fio samples it only where submitting is a step
    /// of its own (an async engine queues the I/O); a sync engine's I/O has no `slat`.
    pub measures_slat: bool,
    /// `disable_clat` / `disable_lat` turn those series off (no buckets without clat).
    pub measures_clat: bool,
    pub measures_lat: bool,
    /// [`JobStats::set_runtime`] was called: later completions fall outside the runtime.
    ended: bool,
    /// `log` is set (asked here, in the first line, rather than the pointer).
    logs: bool,
    /// The latency bucket last counted in, and its bounds `lat_lo..lat_hi` (the last
    /// bucket's end held as `u32::MAX`: a longer latency finds its bucket again, and
    /// counts the same): a job's latencies cluster, and the bucket's walk of thresholds
    /// cost 25 instructions (issue 34).
    lat_bucket: u8,
    /// Per `io_maps` column, the bucket whose count is pending in `map_pending`.
    map_bucket: [u8; 3],
    lat_lo: u32,
    lat_hi: u32,
    /// The clone's start in whole ms, announced when it started (`NO_ORIGIN`: not
    /// announced): sample bins are windows.
    sample_origin_ms: u64,
    /// Completions counted in `lat_bucket` and not yet in `lat_buckets` (added when the
    /// bucket changes, and by [`JobStats::lat_buckets`]): the 256-byte array stays out of
    /// the way of every I/O.
    lat_pending: u64,
    /// Per `io_maps` column, counts of `map_bucket`'s bucket not yet in `io_maps` (added
    /// when the bucket changes, and by the maps' readers): a job's depth and batch sizes
    /// repeat, and the maps' line stays out of the way of every I/O.
    map_pending: [u64; 3],
    /// Per bucket: the I/Os submitted at a depth in it (fio's `io_u_mark_depth()`, by
    /// [`depth_bucket`]), submit calls and completion reaps of as many I/Os (by
    /// [`batch_bucket`]), but for `map_pending`.
    io_maps: [[u64; 3]; 7],
    /// fio's log files for this clone (`write_bw_log`...), when asked for; not merged.
    log: Option<Box<IoLog>>,
    /// Per direction, indexed by [`DDIR_READ`], [`DDIR_WRITE`], [`DDIR_TRIM`].
    pub dirs: [DirStats; DDIR_COUNT],
    pub name: String,
    pub groupid: u32,
    /// Jobs folded into this one (1 unless merged for `group_reporting`).
    pub nr_jobs: u32,
    /// Process id shown in the normal-output header.
    pub pid: u32,
    pub error: i32,
    /// Percentiles to report, as fio's `percentile_list`.
    pub percentile_list: Vec<f64>,
    /// Which series report percentiles (and json+ bins): fio's `slat_percentiles` (default
    /// off), `clat_percentiles` (on) and `lat_percentiles` (off).
    pub slat_percentiles: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    /// Options echoed as `"job options"`, in the order the job file gave them.
    pub options: Vec<(String, String)>,
    /// fsync/fdatasync latencies (fio's `sync` object).
    pub sync: LatStat,
    /// Run start and end; see [`JobStats::set_runtime`].
    pub start_ns: u64,
    pub end_ns: u64,
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// Completion-latency buckets (10 ns, 10 µs, 12 ms), counted over all directions, but
    /// for `lat_pending`; read them with [`JobStats::lat_buckets`].
    lat_buckets: [u64; LAT_BUCKETS],
    /// Echoed `latency_*` job settings (fio's `latency_target` machinery; not acted on here).
    pub latency_depth: u32,
    pub latency_target_ns: u64,
    pub latency_percentile: f64,
    pub latency_window_ns: u64,
    /// `continue_on_error` was set: fio then reports `total_err` and `first_error`.
    pub continue_on_error: bool,
    /// Failed I/Os (fio's `total_err_count`).
    pub total_err: u64,
    /// The first failed I/O's errno (fio's `first_error`).
    pub first_error: i32,
    /// A verify job's phase changes, in order: when a read-back began (`true`) or writing
    /// resumed (`false`, a time-based job's next pass). fio times writes and read-backs
    /// apart and adds up each direction's phases.
    pub verify_phases: Vec<(u64, bool)>,
    /// The steady-state criterion (`ss=`) the job ran under, as fio reports it.
    pub steadystate: Option<iosched_workload::steady_state::SteadyStateReport>,
    /// The runtimes `usr_cpu`/`sys_cpu` are over, summed by [`JobStats::merge`] (0: this
    /// clone's own).
    cpu_runtime_ns: u64,
}

/// Which of [`JobStats`]' `io_maps` columns a count goes to.
const MAP_DEPTH: usize = 0;
const MAP_SUBMIT: usize = 1;
const MAP_COMPLETE: usize = 2;

impl JobStats {
    /// An empty record for job `name` in group `groupid`, reporting `percentile_list`
    /// (pass [`DEFAULT_PERCENTILES`] for fio's default).
    pub fn new(name: &str, groupid: u32, percentile_list: &[f64]) -> JobStats {
        JobStats {
            name: name.to_string(),
            groupid,
            nr_jobs: 1,
            pid: 0,
            error: 0,
            percentile_list: percentile_list.to_vec(),
            slat_percentiles: false,
            clat_percentiles: true,
            lat_percentiles: false,
            measures_slat: true,
            measures_clat: true,
            measures_lat: true,
            options: Vec::new(),
            dirs: Default::default(),
            sync: LatStat::new(),
            start_ns: 0,
            end_ns: 0,
            usr_cpu: 0.0,
            sys_cpu: 0.0,
            cpu_runtime_ns: 0,
            ctx: 0,
            majf: 0,
            minf: 0,
            io_maps: [[0; 3]; 7],
            map_bucket: [0; 3],
            map_pending: [0; 3],
            lat_buckets: [0; LAT_BUCKETS],
            lat_pending: 0,
            latency_depth: 1,
            latency_target_ns: 0,
            latency_percentile: 100.0,
            latency_window_ns: 0,
            continue_on_error: false,
            total_err: 0,
            first_error: 0,
            log: None,
            logs: false,
            verify_phases: Vec::new(),
            steadystate: None,
            sample_origin_ms: NO_ORIGIN,
            ended: false,
            lat_bucket: 0,
            lat_lo: 0,
            lat_hi: 0,
        }
    }

    /// Announces where the clone's statistics start (after `ramp_time`), the `start_ns` that
    /// [`JobStats::set_runtime`] will be given: completions are then binned by sample window
    /// as they come, so a long rate-limited run keeps one bin per 500 ms, not per I/O.
    pub fn set_sample_origin(&mut self, start_ns: u64) {
        self.sample_origin_ms = start_ns / NSEC_PER_MSEC;
        for dir in &mut self.dirs {
            // Windows cut from another origin are not this one's.
            dir.open_ns = (0, 0);
        }
    }

    /// The empty record of one clone of `spec`, keeping the log files the job asked for.
    pub fn for_job(spec: &iosched_workload::JobSpec) -> JobStats {
        let mut stats = JobStats::new(&spec.name, spec.group_id, &spec.percentile_list);
        // fio's fixup_options(): a disabled series reports no percentiles either.
        stats.slat_percentiles = spec.slat_percentiles && !spec.disable_slat;
        stats.clat_percentiles = spec.clat_percentiles && !spec.disable_clat;
        stats.lat_percentiles = spec.lat_percentiles && !spec.disable_lat;
        stats.measures_slat = spec.ioengine.is_async() && !spec.disable_slat;
        stats.measures_clat = !spec.disable_clat;
        stats.measures_lat = !spec.disable_lat;
        stats.continue_on_error = spec.errors.continues();
        // fio's `latency_qd` starts at `iodepth` when no `latency_target` ramps it.
        stats.latency_depth = spec.iodepth.max(1);
        let request = LogRequest {
            bw: spec.log_bw.clone(),
            iops: spec.log_iops.clone(),
            lat: spec.log_lat.clone(),
            avg_ns: spec.log_avg_ns,
            slat: stats.measures_slat,
            hist: spec.log_hist.clone(),
            hist_msec: spec.log_hist_msec,
            hist_coarseness: spec.log_hist_coarseness,
            hist_unfilled: !spec.clat_percentiles,
        };
        if !request.is_empty() {
            stats.log = Some(Box::new(IoLog::new(request)));
            stats.logs = true;
        }
        stats
    }

    /// Records one completed I/O of `bytes` in direction `ddir` (0 read, 1 write, 2 trim).
    /// Instants must be ordered `issue_ns <= submit_ns <= complete_ns`.
    /// Kernel-free analogue of fio's `account_io_completion()`.
    pub fn record_io(
        &mut self,
        ddir: usize,
        bytes: u64,
        issue_ns: u64,
        submit_ns: u64,
        complete_ns: u64,
    ) {
        assert!(ddir < DDIR_COUNT, "direction index {ddir} out of range");
        assert!(issue_ns <= submit_ns, "submitted before issued");
        assert!(submit_ns <= complete_ns, "completed before submitted");
        let clat = complete_ns - submit_ns;
        let lat = complete_ns - issue_ns;
        let dir = &mut self.dirs[ddir];
        dir.io_bytes += bytes;
        dir.total_ios += 1;
        if self.measures_slat {
            dir.slat.record(submit_ns - issue_ns);
        }
        if !(self.measures_clat && self.measures_lat && lat == clat) {
            dir.part_lat();
        }
        if self.measures_clat {
            dir.clat.record(clat);
        }
        if self.measures_lat && dir.lat_apart {
            dir.lat.record(lat);
        }
        let end_ms = self
            .ended
            .then(|| self.start_ns / NSEC_PER_MSEC + self.runtime_ms());
        let origin_ms = self.sample_origin();
        let dir = &mut self.dirs[ddir];
        dir.add_completion(complete_ns, bytes, origin_ms, end_ms);
        if self.measures_clat {
            if !(u64::from(self.lat_lo)..u64::from(self.lat_hi)).contains(&clat) {
                self.enter_lat_bucket(clat);
            }
            self.lat_pending += 1;
        }
        if !self.logs {
            return;
        }
        if let Some(log) = self.log.as_mut() {
            log.record(complete_ns, ddir, bytes, submit_ns - issue_ns, clat);
        }
    }

    /// Records an I/O that completed short (counted in `short_ios`, in addition to `record_io`).
    pub fn record_short(&mut self, ddir: usize) {
        assert!(ddir < DDIR_COUNT, "direction index {ddir} out of range");
        self.dirs[ddir].short_ios += 1;
    }

    /// Records an I/O that failed with `errno` (in direction `ddir`, `None` for a sync): it
    /// counts as issued, moves no bytes, and is counted in `total_err` (fio's
    /// `update_error_count()`); the job's `error` is the first one.
    pub fn record_error(&mut self, ddir: Option<usize>, errno: i32) {
        if let Some(ddir) = ddir {
            self.dirs[ddir].failed_ios += 1;
        }
        self.total_err += 1;
        if self.first_error == 0 {
            self.first_error = errno;
        }
        if self.error == 0 {
            self.error = errno;
        }
    }

    /// Records a block that read back wrong (fio's EILSEQ, of its verify type): the job's
    /// `error` either way, and counted in `total_err`/`first_error` when the job continues
    /// past it (fio's `update_error_count()` for a non-fatal error).
    pub fn record_verify_error(&mut self, errno: i32, survived: bool) {
        if survived {
            self.total_err += 1;
            if self.first_error == 0 {
                self.first_error = errno;
            }
        }
        if self.error == 0 {
            self.error = errno;
        }
    }

    /// Records one fsync/fdatasync and its latency.
    pub fn record_sync(&mut self, lat_ns: u64) {
        self.sync.record(lat_ns);
    }

    /// Records the job's in-flight depth at one submission, this I/O included
    /// (fio's `io_u_mark_depth()`).
    #[inline]
    pub fn record_depth(&mut self, depth_at_submit: u32) {
        self.record_depths(depth_at_submit, 1);
    }

    /// [`JobStats::record_depth`] for `ios` submissions at the same depth.
    #[inline]
    pub fn record_depths(&mut self, depth_at_submit: u32, ios: u32) {
        self.count_in_map_n(MAP_DEPTH, depth_bucket(depth_at_submit), ios);
    }

    /// Records how many I/Os one submit call carried.
    #[inline]
    pub fn record_submit_batch(&mut self, ios: u32) {
        self.count_in_map(MAP_SUBMIT, batch_bucket(ios));
    }

    /// Records how many I/Os one completion reap returned.
    #[inline]
    pub fn record_complete_batch(&mut self, ios: u32) {
        self.count_in_map(MAP_COMPLETE, batch_bucket(ios));
    }

    /// One more count in `bucket` of `io_maps` column `column`, pending while the column's
    /// bucket stays the same.
    #[inline]
    fn count_in_map(&mut self, column: usize, bucket: usize) {
        self.count_in_map_n(column, bucket, 1);
    }

    /// `n` more counts in `bucket` of `io_maps` column `column`.
    #[inline]
    fn count_in_map_n(&mut self, column: usize, bucket: usize, n: u32) {
        if usize::from(self.map_bucket[column]) != bucket {
            self.flush_map(column);
            self.map_bucket[column] = bucket as u8;
        }
        self.map_pending[column] += u64::from(n);
    }

    /// `io_maps` column `column`'s pending count moved to its bucket.
    fn flush_map(&mut self, column: usize) {
        let bucket = usize::from(self.map_bucket[column]);
        self.io_maps[bucket][column] += std::mem::take(&mut self.map_pending[column]);
    }

    /// fio's log files for this clone (`write_bw_log`...), when asked for.
    pub fn log(&self) -> Option<&IoLog> {
        self.log.as_deref()
    }

    /// The clone's start in whole ms, once announced ([`JobStats::set_sample_origin`]).
    fn sample_origin(&self) -> Option<u64> {
        (self.sample_origin_ms != NO_ORIGIN).then_some(self.sample_origin_ms)
    }

    /// Sets when the job started and stopped running; runtime and sample windows count from
    /// `start_ns`.
    pub fn set_runtime(&mut self, start_ns: u64, end_ns: u64) {
        assert!(start_ns <= end_ns, "job ended before it started");
        self.start_ns = start_ns;
        self.end_ns = end_ns;
        self.ended = true;
    }

    /// Job runtime in whole milliseconds (fio truncates to ms).
    pub fn runtime_ms(&self) -> u64 {
        (self.end_ns - self.start_ns) / NSEC_PER_MSEC
    }

    /// Runtime of one direction in ms: the job's runtime if it did I/O that way, else 0; for
    /// a verify job, its writes count until the read-back and its reads from then on.
    pub fn dir_runtime_ms(&self, ddir: usize) -> u64 {
        if self.dirs[ddir].total_ios == 0 {
            return 0;
        }
        if self.verify_phases.is_empty() {
            return self.runtime_ms();
        }
        // Phases alternate from a writing one at the start; sum those of this direction.
        let mut total = 0;
        let mut from = self.start_ns;
        let mut reading = false;
        for &(at, read_back) in self
            .verify_phases
            .iter()
            .chain([(self.end_ns, false)].iter())
        {
            let at = at.clamp(from, self.end_ns.max(from));
            if reading == (ddir == DDIR_READ) {
                total += at - from;
            }
            from = at;
            reading = read_back;
        }
        total / NSEC_PER_MSEC
    }

    /// A verify job's read-back begins at `at_ns`.
    pub fn set_verify_start(&mut self, at_ns: u64) {
        self.verify_phases.push((at_ns, true));
    }

    /// A time-based verify job goes back to writing at `at_ns`.
    pub fn set_write_start(&mut self, at_ns: u64) {
        self.verify_phases.push((at_ns, false));
    }

    /// `elapsed` in fio's JSON: whole seconds, rounded up.
    pub fn elapsed_s(&self) -> u64 {
        (self.end_ns - self.start_ns).div_ceil(NSEC_PER_SEC)
    }

    /// Bytes per second: `1000 * io_bytes / runtime_ms`, 0 without runtime.
    pub fn bw_bytes(&self, ddir: usize) -> u64 {
        bw_bytes(self.dirs[ddir].io_bytes, self.dir_runtime_ms(ddir))
    }

    /// KiB per second, integer: `bw_bytes / 1024`.
    pub fn bw_kib(&self, ddir: usize) -> u64 {
        self.bw_bytes(ddir) / 1024
    }

    /// I/Os per second: `1000 * total_ios / runtime_ms`, 0 without runtime.
    pub fn iops(&self, ddir: usize) -> f64 {
        iops(self.dirs[ddir].total_ios, self.dir_runtime_ms(ddir))
    }

    /// Total completed data I/Os over the three directions (fio's `ddir_rw_sum(total_io_u)`).
    pub fn total_rw_ios(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios).sum()
    }

    /// Bytes and I/Os of each full 500 ms window of the run from millisecond bins (no start
    /// announced), windows with no I/O in this direction left out (fio takes no sample for
    /// an interval without I/O).
    fn windows(&self, ddir: usize) -> Vec<(u64, u64)> {
        let nwin = self.runtime_ms() / SAMPLE_WINDOW_MS;
        let mut sums = vec![(0u64, 0u64); nwin as usize];
        let start_ms = self.start_ns / NSEC_PER_MSEC;
        for bin in &self.dirs[ddir].bins {
            if bin.ms < start_ms {
                continue;
            }
            let w = (bin.ms - start_ms) / SAMPLE_WINDOW_MS;
            if let Some(slot) = sums.get_mut(w as usize) {
                slot.0 += bin.bytes;
                slot.1 += bin.ios;
            }
        }
        sums.retain(|&(bytes, _)| bytes > 0);
        sums
    }

    /// The bandwidth and IOPS samples of direction `ddir` as running sums.
    fn sample_sums(&self, ddir: usize) -> (RunningStat, RunningStat) {
        let d = &self.dirs[ddir];
        if let Some(summed) = d.summed {
            return summed;
        }
        let (mut bw, mut iops) = (d.bw, d.iops);
        let mut add = |bytes, ios| {
            let (b, i) = window_samples(bytes, ios);
            bw.add(b);
            iops.add(i);
        };
        if self.sample_origin().is_none() {
            for (bytes, ios) in self.windows(ddir) {
                add(bytes, ios);
            }
        } else if let Some(open) = d.open {
            let end_ms = self.start_ns / NSEC_PER_MSEC + self.runtime_ms();
            if open.ms + SAMPLE_WINDOW_MS <= end_ms {
                add(open.bytes, open.ios);
            }
        }
        (bw, iops)
    }

    /// Bandwidth samples in KiB/s over 500 ms windows (fio's `bw_min` .. `bw_samples`).
    /// Choice: only windows that fit entirely inside the runtime are sampled, so runs shorter
    /// than 500 ms show zeros, as fio's do.
    pub fn bw_samples(&self, ddir: usize) -> SampleStat {
        self.sample_sums(ddir).0.summary()
    }

    /// IOPS samples over 500 ms windows (fio's `iops_min` .. `iops_samples`).
    pub fn iops_samples(&self, ddir: usize) -> SampleStat {
        self.sample_sums(ddir).1.summary()
    }

    /// CPU percentages of a group: fio adds the members' user and system times and their
    /// runtimes (`sum_thread_stats()`), so the group's `usr_cpu` is the members'
    /// runtime-weighted mean, not their sum.
    fn merge_cpu(&mut self, other: &JobStats) {
        let own = |stats: &JobStats| match stats.cpu_runtime_ns {
            0 => stats.end_ns.saturating_sub(stats.start_ns),
            summed => summed,
        };
        let (a, b) = (own(self) as f64, own(other) as f64);
        if a + b > 0.0 {
            self.usr_cpu = (self.usr_cpu * a + other.usr_cpu * b) / (a + b);
            self.sys_cpu = (self.sys_cpu * a + other.sys_cpu * b) / (a + b);
        }
        self.cpu_runtime_ns = own(self) + own(other);
    }

    /// Folds `other` into `self` for `group_reporting` (fio's `sum_thread_stats()`): counts and
    /// latency series add up, bandwidth and IOPS samples are summed as fio sums them
    /// ([`RunningStat::pure_sum`]), runtime is the longer of the two, the name stays `self`'s.
    pub fn merge(&mut self, other: &JobStats) {
        for ddir in 0..DDIR_COUNT {
            let (mut bw, mut iops) = self.sample_sums(ddir);
            let (other_bw, other_iops) = other.sample_sums(ddir);
            bw.pure_sum(&other_bw);
            iops.pure_sum(&other_iops);
            self.dirs[ddir].summed = Some((bw, iops));
            self.dirs[ddir].merge_counts(&other.dirs[ddir]);
        }
        self.merge_cpu(other);
        let runtime = (self.end_ns - self.start_ns).max(other.end_ns - other.start_ns);
        self.end_ns = self.start_ns + runtime;
        self.nr_jobs += other.nr_jobs;
        self.continue_on_error |= other.continue_on_error;
        self.total_err += other.total_err;
        if self.first_error == 0 {
            self.first_error = other.first_error;
        }
        if self.error == 0 {
            self.error = other.error;
        }
        self.sync.merge(&other.sync);
        self.ctx += other.ctx;
        self.majf += other.majf;
        self.minf += other.minf;
        for column in [MAP_DEPTH, MAP_SUBMIT, MAP_COMPLETE] {
            self.flush_map(column);
            let theirs = other.map(column);
            for (counts, b) in self.io_maps.iter_mut().zip(theirs) {
                counts[column] += b;
            }
        }
        let mut lat_buckets = self.lat_buckets();
        for (a, b) in lat_buckets.iter_mut().zip(other.lat_buckets()) {
            *a += b;
        }
        self.lat_buckets = lat_buckets;
        self.lat_pending = 0;
    }

    /// `iodepth_level` percentages (fio's `stat_calc_dist()`: nonzero buckets show at least
    /// 0.1%).
    pub fn depth_dist(&self) -> [f64; 7] {
        let map = self.depth_map();
        dist(&map, map.iter().sum(), 0.1)
    }

    /// `iodepth_submit` percentages.
    pub fn submit_dist(&self) -> [f64; 7] {
        let map = self.submit_map();
        dist(&map, map.iter().sum(), 0.1)
    }

    /// `iodepth_complete` percentages.
    pub fn complete_dist(&self) -> [f64; 7] {
        let map = self.complete_map();
        dist(&map, map.iter().sum(), 0.1)
    }

    /// Submissions by the depth they were made at, bucketed by [`depth_bucket`].
    pub fn depth_map(&self) -> [u64; 7] {
        self.map(MAP_DEPTH)
    }

    /// I/Os per submit call, bucketed by [`batch_bucket`].
    pub fn submit_map(&self) -> [u64; 7] {
        self.map(MAP_SUBMIT)
    }

    /// I/Os reaped per completion call, bucketed by [`batch_bucket`].
    pub fn complete_map(&self) -> [u64; 7] {
        self.map(MAP_COMPLETE)
    }

    /// `io_maps` column `column` with its pending count.
    fn map(&self, column: usize) -> [u64; 7] {
        let mut map = self.io_maps.map(|counts| counts[column]);
        map[usize::from(self.map_bucket[column])] += self.map_pending[column];
        map
    }

    /// Completion-latency bucket counts (10 ns, 10 µs, 12 ms), over all directions.
    pub fn lat_buckets(&self) -> [u64; LAT_BUCKETS] {
        let mut buckets = self.lat_buckets;
        buckets[usize::from(self.lat_bucket)] += self.lat_pending;
        buckets
    }

    /// A completion latency outside `lat_lo..lat_hi`: the pending count goes to its bucket, and
    /// the span becomes `clat`'s bucket's.
    fn enter_lat_bucket(&mut self, clat: u64) {
        self.lat_buckets[usize::from(self.lat_bucket)] += std::mem::take(&mut self.lat_pending);
        let bucket = latency_bucket(clat);
        let (lo, hi) = latency_bucket_bounds(bucket);
        // Every bound but the last bucket's end fits (2 s); that end is held short, so a
        // latency past it comes back here and lands in the same bucket.
        self.lat_lo = u32::try_from(lo).expect("bucket bounds below 2^32 ns");
        self.lat_hi = u32::try_from(hi).unwrap_or(u32::MAX);
        self.lat_bucket = bucket as u8;
    }

    /// Completion-latency bucket percentages of all I/Os (fio's `stat_calc_lat()`: nonzero
    /// buckets show at least 0.01%): 10 ns buckets, 10 µs buckets, 12 ms buckets.
    pub fn lat_dist(&self) -> [f64; LAT_BUCKETS] {
        dist(&self.lat_buckets(), self.total_rw_ios(), 0.01)
    }
}

fn dist<const N: usize>(map: &[u64; N], total: u64, floor: f64) -> [f64; N] {
    let mut out = [0.0; N];
    if total == 0 {
        return out;
    }
    for (o, &c) in out.iter_mut().zip(map) {
        *o = c as f64 * 100.0 / total as f64;
        if c > 0 && *o < floor {
            *o = floor;
        }
    }
    out
}

/// fio's bandwidth formula: `1000 * io_bytes / runtime_ms` bytes/s (integer), 0 without runtime.
pub fn bw_bytes(io_bytes: u64, runtime_ms: u64) -> u64 {
    if runtime_ms == 0 {
        0
    } else {
        (u128::from(io_bytes) * 1000 / u128::from(runtime_ms)) as u64
    }
}

/// fio's IOPS formula: `1000 * total_ios / runtime_ms`, 0 without runtime.
pub fn iops(total_ios: u64, runtime_ms: u64) -> f64 {
    if runtime_ms == 0 {
        0.0
    } else {
        1000.0 * total_ios as f64 / runtime_ms as f64
    }
}

/// Jobs merged per group id for `group_reporting`, in order of each group's first job; the
/// merged entry keeps that job's name, as fio does.
pub fn group_reporting(jobs: &[JobStats]) -> Vec<JobStats> {
    let mut out: Vec<JobStats> = Vec::new();
    for job in jobs {
        match out.iter_mut().find(|g| g.groupid == job.groupid) {
            Some(g) => g.merge(job),
            None => out.push(job.clone()),
        }
    }
    out
}

/// Per-device counters, as fio reads them from `/proc/diskstats` (`disk_util[]`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskStats {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_sectors: u64,
    pub write_sectors: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    /// Time-weighted queue occupancy (`time_in_queue`), ms.
    pub in_queue_ms: u64,
    /// Busy time over elapsed time, percent, at most 100.
    pub util_pct: f64,
}

/// Aggregates of one reporting group (fio's `struct group_run_stats`), per direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupStats {
    pub groupid: u32,
    pub io_bytes: [u64; DDIR_COUNT],
    /// Aggregate bandwidth: group bytes over the longest runtime, bytes/s.
    pub agg_bw_bytes: [u64; DDIR_COUNT],
    /// Smallest and largest per-job bandwidth, bytes/s.
    pub min_bw_bytes: [u64; DDIR_COUNT],
    pub max_bw_bytes: [u64; DDIR_COUNT],
    /// Shortest and longest per-job runtime, ms.
    pub min_run_ms: [u64; DDIR_COUNT],
    pub max_run_ms: [u64; DDIR_COUNT],
}

impl GroupStats {
    /// Share of the group's aggregate bandwidth that `mean_kib` (a job's mean sample, KiB/s)
    /// represents, capped at 100% (fio's `convert_agg_kbytes_percent()`).
    pub fn agg_percent(&self, ddir: usize, mean_kib: f64) -> f64 {
        if self.agg_bw_bytes[ddir] > 1024 {
            (mean_kib * 100.0 / (self.agg_bw_bytes[ddir] as f64 / 1024.0)).min(100.0)
        } else {
            100.0
        }
    }
}

/// Group aggregates for every group id present in `jobs`, in ascending id order
/// (fio's `__show_run_stats()` grouping pass).
pub fn group_stats(jobs: &[JobStats]) -> Vec<GroupStats> {
    // One pass over the jobs into groups kept by id (a pass per group made N stonewalled
    // sections, N groups, cost N²).
    let mut groups: std::collections::BTreeMap<u32, GroupStats> = Default::default();
    for job in jobs {
        let g = groups.entry(job.groupid).or_insert_with(|| GroupStats {
            groupid: job.groupid,
            min_bw_bytes: [u64::MAX; DDIR_COUNT],
            ..GroupStats::default()
        });
        for d in 0..DDIR_COUNT {
            let run = job.dir_runtime_ms(d);
            if run == 0 {
                continue;
            }
            if g.min_run_ms[d] == 0 || run < g.min_run_ms[d] {
                g.min_run_ms[d] = run;
            }
            g.max_run_ms[d] = g.max_run_ms[d].max(run);
            let bw = job.bw_bytes(d);
            g.min_bw_bytes[d] = g.min_bw_bytes[d].min(bw);
            g.max_bw_bytes[d] = g.max_bw_bytes[d].max(bw);
            g.io_bytes[d] += job.dirs[d].io_bytes;
        }
    }
    groups
        .into_values()
        .map(|mut g| {
            for d in 0..DDIR_COUNT {
                if g.min_bw_bytes[d] == u64::MAX {
                    g.min_bw_bytes[d] = 0;
                }
                g.agg_bw_bytes[d] = bw_bytes(g.io_bytes[d], g.max_run_ms[d]);
            }
            g
        })
        .collect()
}

/// Group `groupid` of `groups` (as [`group_stats`] gives them, in id order), found by
/// bisection: a report looks up every job's group.
pub fn find_group(groups: &[GroupStats], groupid: u32) -> Option<&GroupStats> {
    groups
        .binary_search_by_key(&groupid, |g| g.groupid)
        .ok()
        .map(|index| &groups[index])
}

/// Everything one run produced, as the formatters consume it.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// `"fio version"`; defaults to `iosched-<crate version>`.
    pub fio_version: String,
    /// Epoch seconds and milliseconds, and ctime-style text, for fio's `timestamp`,
    /// `timestamp_ms` and `time`. Supplied by the caller (0 and "" keep output byte-stable).
    pub timestamp_s: u64,
    pub timestamp_ms: u64,
    pub time: String,
    /// What fio prints on reading the job file and starting its jobs (each job's `name:
    /// (g=G): rw=...` line, the version, `Starting N processes`): the normal output's head.
    pub banner: String,
    /// `"global options"` as written in the job file.
    pub global_options: Vec<(String, String)>,
    /// One entry per job, or per group when the caller merged them for `group_reporting`.
    pub jobs: Vec<JobStats>,
    pub disks: Vec<DiskStats>,
    /// Appended to the JSON top level as `"iosched"` unless `Null`: scheduler, tunables, device
    /// model, seed, wall-clock figures.
    pub iosched: serde_json::Value,
}

impl Default for RunResult {
    fn default() -> Self {
        RunResult {
            fio_version: format!("iosched-{}", env!("CARGO_PKG_VERSION")),
            timestamp_s: 0,
            timestamp_ms: 0,
            time: String::new(),
            banner: String::new(),
            global_options: Vec::new(),
            jobs: Vec::new(),
            disks: Vec::new(),
            iosched: serde_json::Value::Null,
        }
    }
}

impl RunResult {
    /// Group aggregates of [`RunResult::jobs`].
    pub fn groups(&self) -> Vec<GroupStats> {
        group_stats(&self.jobs)
    }

    /// The aggregates of group `groupid` (all zero if no job has it).
    pub fn group(&self, groupid: u32) -> GroupStats {
        find_group(&group_stats(&self.jobs), groupid)
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 34: while every I/O's total latency equals its completion latency (no
    /// submission latency, as in the simulator) `lat` is read from `clat` and records
    /// nothing of its own; from the first I/O with a submission latency it records apart,
    /// and reports what a series fed every total latency reports.
    #[test]
    fn lat_shares_clat_until_a_submission_latency() {
        let mut stats = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        let mut reference = LatStat::new();
        for i in 0..50u64 {
            stats.record_io(DDIR_READ, 4096, i * 100, i * 100, i * 100 + 1_000 + i * 37);
            reference.record(1_000 + i * 37);
        }
        assert_eq!(stats.dirs[DDIR_READ].lat.count(), 0, "lat recorded apart");
        assert_eq!(stats.dirs[DDIR_READ].slat.max(), 0);
        for i in 0..50u64 {
            let issue = 10_000 + i * 100;
            stats.record_io(DDIR_READ, 4096, issue, issue + 5, issue + 2_000 + i);
            reference.record(2_000 + i);
        }
        let lat = stats.dirs[DDIR_READ].lat();
        assert_eq!(lat.count(), reference.count());
        assert_eq!((lat.min(), lat.max()), (reference.min(), reference.max()));
        assert_eq!(lat.mean().to_bits(), reference.mean().to_bits());
        assert_eq!(lat.stddev().to_bits(), reference.stddev().to_bits());
        assert_eq!(
            lat.percentiles(&DEFAULT_PERCENTILES),
            reference.percentiles(&DEFAULT_PERCENTILES)
        );
        assert_eq!(stats.dirs[DDIR_READ].clat.count(), 100);
    }

    const MS: u64 = NSEC_PER_MSEC;

    /// fio 3.33's account_io_completion(): `disable_clat` drops the clat series and the
    /// latency buckets, `disable_lat` the lat series, and a sync engine has no slat at all.
    #[test]
    fn disabled_series_and_sync_engines_record_no_samples() {
        let mut spec = iosched_workload::JobSpec::new("d");
        spec.ioengine = iosched_workload::IoEngine::Psync;
        spec.disable_clat = true;
        spec.clat_percentiles = true;
        let mut stats = JobStats::for_job(&spec);
        stats.record_io(DDIR_READ, 4096, 0, 1_000, 50_000);
        let read = &stats.dirs[DDIR_READ];
        assert_eq!(
            (read.slat.count(), read.clat.count(), read.lat().count()),
            (0, 0, 1)
        );
        assert_eq!(stats.lat_dist().iter().sum::<f64>(), 0.0);
        assert!(
            !stats.clat_percentiles,
            "a disabled series has no percentiles"
        );
        spec.ioengine = iosched_workload::IoEngine::IoUring;
        spec.disable_clat = false;
        spec.disable_lat = true;
        let mut stats = JobStats::for_job(&spec);
        stats.record_io(DDIR_READ, 4096, 0, 1_000, 50_000);
        let read = &stats.dirs[DDIR_READ];
        assert_eq!(
            (read.slat.count(), read.clat.count(), read.lat().count()),
            (1, 1, 0)
        );
    }

    #[test]
    fn bw_and_iops_follow_fios_formulas() {
        // 1000 I/Os of 4 KiB in 1500 ms.
        let mut j = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        for i in 0..1000u64 {
            j.record_io(DDIR_READ, 4096, i * MS, i * MS + 10, i * MS + 1000);
        }
        j.set_runtime(0, 1500 * MS);
        assert_eq!(j.runtime_ms(), 1500);
        assert_eq!(j.bw_bytes(DDIR_READ), 1000 * 4096 * 1000 / 1500);
        assert_eq!(j.bw_kib(DDIR_READ), 1000 * 4096 * 1000 / 1500 / 1024);
        assert!((j.iops(DDIR_READ) - 1000.0 * 1000.0 / 1500.0).abs() < 1e-9);
        // Unused direction: no runtime, no bandwidth.
        assert_eq!(j.dir_runtime_ms(DDIR_WRITE), 0);
        assert_eq!(j.bw_bytes(DDIR_WRITE), 0);
        assert_eq!(j.iops(DDIR_WRITE), 0.0);
    }

    #[test]
    fn latencies_split_into_slat_clat_lat() {
        let mut j = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        j.record_io(DDIR_WRITE, 512, 100, 350, 2350);
        let d = &j.dirs[DDIR_WRITE];
        assert_eq!(d.slat.min(), 250);
        assert_eq!(d.clat.min(), 2000);
        assert_eq!(d.lat().min(), 2250);
        assert_eq!(j.lat_buckets()[latency_bucket(2000)], 1);
    }

    /// The cached span of the bucket last counted in names the bucket `latency_bucket`
    /// gives for every value inside it, and none outside (a mutation of an edge fails here).
    #[test]
    fn latency_bucket_bounds_hold_their_buckets_values() {
        for bucket in 0..LAT_BUCKETS {
            let (lo, hi) = latency_bucket_bounds(bucket);
            assert_eq!(latency_bucket(lo), bucket, "lo of {bucket}");
            assert_eq!(latency_bucket(hi - 1), bucket, "hi of {bucket}");
            if bucket > 0 {
                assert_eq!(latency_bucket(lo - 1), bucket - 1);
            }
        }
        let mut j = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        let mut expected = [0u64; LAT_BUCKETS];
        for i in 0..5_000u64 {
            let clat = (i * 7_919 % 1_000) * (i % 4 + 1) * 1_013 % 3_000_000 + i % 3;
            j.record_io(DDIR_READ, 4096, 0, 0, clat);
            expected[latency_bucket(clat)] += 1;
        }
        assert_eq!(j.lat_buckets(), expected);
    }

    /// Issue 34: the latency bucket counts held back while latencies stay in one bucket,
    /// and the bucket-major depth and batch maps, read and merge as plain counts.
    #[test]
    fn pending_latency_counts_and_maps_merge_as_counts() {
        let mut a = JobStats::new("a", 0, &DEFAULT_PERCENTILES);
        let mut b = JobStats::new("b", 0, &DEFAULT_PERCENTILES);
        let mut expected = [0u64; LAT_BUCKETS];
        for (i, clat) in [5_000u64, 5_100, 2_000_000, 5_200, 5_300]
            .into_iter()
            .enumerate()
        {
            let stats = if i % 2 == 0 { &mut a } else { &mut b };
            stats.record_io(DDIR_READ, 4096, 0, 0, clat);
            stats.record_depth(i as u32 + 1);
            stats.record_submit_batch(1);
            stats.record_complete_batch(i as u32);
            expected[latency_bucket(clat)] += 1;
        }
        a.set_runtime(0, 1);
        b.set_runtime(0, 1);
        a.merge(&b);
        assert_eq!(a.lat_buckets(), expected);
        assert_eq!(a.depth_map(), [1, 2, 2, 0, 0, 0, 0]);
        assert_eq!(a.submit_map(), [0, 5, 0, 0, 0, 0, 0]);
        assert_eq!(a.complete_map(), [1, 4, 0, 0, 0, 0, 0]);
        // Counting goes on after the merge.
        a.record_io(DDIR_READ, 4096, 0, 0, 5_400);
        expected[latency_bucket(5_400)] += 1;
        assert_eq!(a.lat_buckets(), expected);
        a.record_depth(1);
        a.record_depth(1);
        a.record_complete_batch(9);
        assert_eq!(a.depth_map(), [3, 2, 2, 0, 0, 0, 0]);
        assert_eq!(a.complete_map(), [1, 4, 0, 1, 0, 0, 0]);
        // The last bucket's end is held short of its own (u64::MAX): latencies past it,
        // and between, still count there.
        for clat in [5_000_000_000, 3_000_000_000, 5_000_000_000, 2_000_000_000] {
            a.record_io(DDIR_READ, 4096, 0, 0, clat);
        }
        expected[LAT_BUCKETS - 1] += 4;
        assert_eq!(a.lat_buckets(), expected);
    }

    #[test]
    fn latency_buckets_match_fio_boundaries() {
        assert_eq!(latency_bucket(0), 0);
        assert_eq!(latency_bucket(1), 0);
        assert_eq!(latency_bucket(2), 1);
        assert_eq!(latency_bucket(999), 9);
        assert_eq!(latency_bucket(1000), 10); // 1 µs -> "2" us bucket
        assert_eq!(latency_bucket(249_999), 16); // 249 µs -> "250"
        assert_eq!(latency_bucket(250_000), 17); // 250 µs -> "500"
        assert_eq!(latency_bucket(999_999), 19);
        assert_eq!(latency_bucket(1_000_000), 20); // 1 ms -> "2" ms
        assert_eq!(latency_bucket(1_999_999_999), 30);
        assert_eq!(latency_bucket(2_000_000_000), 31);
    }

    #[test]
    fn depth_buckets_cover_k_to_2k_minus_one() {
        let got: Vec<usize> = [1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 1000]
            .iter()
            .map(|&d| depth_bucket(d))
            .collect();
        assert_eq!(got, vec![0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
    }

    #[test]
    fn windows_sample_full_500ms_intervals_only() {
        let mut j = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        // Window 0: 100 I/Os of 8 KiB; window 1: 300 I/Os; 200 ms tail outside full windows.
        for i in 0..100u64 {
            j.record_io(DDIR_READ, 8192, 0, 0, 10 * MS + i * MS);
        }
        for i in 0..300u64 {
            j.record_io(DDIR_READ, 8192, 0, 0, 600 * MS + i * MS / 2);
        }
        j.record_io(DDIR_READ, 8192, 0, 0, 1100 * MS);
        j.set_runtime(0, 1200 * MS);
        let bw = j.bw_samples(DDIR_READ);
        assert_eq!(bw.samples, 2);
        assert_eq!(bw.min, 100 * 8192 * 1000 / 500 / 1024);
        assert_eq!(bw.max, 300 * 8192 * 1000 / 500 / 1024);
        let iops = j.iops_samples(DDIR_READ);
        assert_eq!((iops.min, iops.max), (200, 600));
        assert!((iops.mean - 400.0).abs() < 1e-9);
        // sqrt(((200-400)^2 + (600-400)^2) / 1)
        assert!((iops.stddev - 282.842712474619).abs() < 1e-6);
        assert_eq!(j.bw_samples(DDIR_WRITE), SampleStat::default());
    }

    /// Issue 17: a rate-limited job completes one I/O per busy millisecond, and kept a bin
    /// per I/O, then one per 500 ms window, for the whole run. With the start announced,
    /// complete windows are folded into running sums: nothing grows with the run, and every
    /// sample figure is what millisecond bins give (same windows, same fio arithmetic),
    /// including completions after the end, which fall outside the runtime either way.
    #[test]
    fn folded_windows_keep_memory_flat_and_samples_unchanged() {
        let fill = |start_ns: u64, announce: bool, ios: u32| {
            let mut j = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
            if announce {
                j.set_sample_origin(start_ns);
            }
            let mut rng = 12345u64;
            let mut at = start_ns;
            for _ in 0..ios {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                at += (rng >> 33) % (3 * MS);
                j.record_io((rng >> 20) as usize % 2, 4096, at, at, at);
            }
            j.set_runtime(start_ns, at);
            // In-flight I/O draining after the end.
            j.record_io(DDIR_READ, 4096, at, at, at + 600 * MS);
            j
        };
        for start in [0, 1_234_567_890, 77 * MS + 400_000] {
            let (old, new) = (fill(start, false, 20_000), fill(start, true, 20_000));
            assert!(
                old.dirs[DDIR_READ].bins.len() > 5_000,
                "one bin per busy ms"
            );
            assert!(new.dirs[DDIR_READ].bins.is_empty());
            assert!(new.bw_samples(DDIR_READ).samples > 50);
            for ddir in [DDIR_READ, DDIR_WRITE] {
                assert_eq!(old.bw_samples(ddir), new.bw_samples(ddir), "start {start}");
                assert_eq!(old.iops_samples(ddir), new.iops_samples(ddir));
            }
            let mut group = fill(5 * MS, true, 20_000);
            let mut old_group = fill(5 * MS, false, 20_000);
            group.merge(&new);
            old_group.merge(&old);
            assert_eq!(group.bw_samples(DDIR_READ), old_group.bw_samples(DDIR_READ));
        }
    }

    /// fio 3.33's `sum_stat()` with `pure_sum` for group_reporting: the jobs' bandwidth min,
    /// max, mean and sample counts add up (`S` too, so the deviation is of the sums).
    #[test]
    fn group_samples_add_up_as_fios_pure_sum() {
        let job = |per_window: &[u64]| {
            let mut j = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
            j.set_sample_origin(0);
            for (w, &ios) in per_window.iter().enumerate() {
                for i in 0..ios {
                    let at = w as u64 * 500 * MS + i * MS;
                    j.record_io(DDIR_READ, 1024, at, at, at);
                }
            }
            j.set_runtime(0, per_window.len() as u64 * 500 * MS);
            j
        };
        let (a, b) = (job(&[10, 20, 30]), job(&[5, 5]));
        let mut g = a.clone();
        g.merge(&b);
        let (sa, sb, sg) = (
            a.iops_samples(DDIR_READ),
            b.iops_samples(DDIR_READ),
            g.iops_samples(DDIR_READ),
        );
        assert_eq!((sa.min, sa.max, sa.samples), (20, 60, 3));
        assert_eq!((sg.min, sg.max, sg.samples), (30, 70, 5));
        assert!((sg.mean - (sa.mean + sb.mean)).abs() < 1e-9);
        // S: a's is 800 (deviations -20, 0, 20), b's 0; over 5 - 1.
        assert!((sg.stddev - 200f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn windows_count_from_job_start() {
        let mut j = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        j.record_io(DDIR_READ, 4096, 0, 0, 10_100 * MS);
        j.set_runtime(10_000 * MS, 10_600 * MS);
        assert_eq!(j.bw_samples(DDIR_READ).samples, 1);
    }

    /// A verify job's writes are timed until its read-back begins and its reads from then
    /// on, so each direction's bandwidth is over its own phase (as fio reports it).
    #[test]
    fn a_verify_job_times_its_two_phases_apart() {
        let mut stats = JobStats::new("v", 0, &DEFAULT_PERCENTILES);
        stats.record_io(DDIR_WRITE, 4096, 0, 0, 1_000_000);
        stats.set_verify_start(40 * NSEC_PER_MSEC);
        stats.record_io(DDIR_READ, 4096, 41_000_000, 41_000_000, 42_000_000);
        stats.set_runtime(0, 100 * NSEC_PER_MSEC);
        assert_eq!(stats.dir_runtime_ms(DDIR_WRITE), 40);
        assert_eq!(stats.dir_runtime_ms(DDIR_READ), 60);
        assert_eq!(stats.runtime_ms(), 100);
        // A time-based job's second pass: write 60-70 ms, read back 70-100 ms.
        stats.verify_phases.clear();
        stats.set_verify_start(40 * NSEC_PER_MSEC);
        stats.set_write_start(60 * NSEC_PER_MSEC);
        stats.set_verify_start(70 * NSEC_PER_MSEC);
        assert_eq!(stats.dir_runtime_ms(DDIR_WRITE), 50);
        assert_eq!(stats.dir_runtime_ms(DDIR_READ), 50);
    }

    #[test]
    fn merge_adds_counts_and_keeps_longest_runtime() {
        let mut a = JobStats::new("a", 0, &DEFAULT_PERCENTILES);
        let mut b = JobStats::new("b", 0, &DEFAULT_PERCENTILES);
        for i in 0..10u64 {
            a.record_io(DDIR_READ, 4096, 0, 0, (i + 1) * 10 * MS);
            b.record_io(DDIR_READ, 4096, 0, 0, 1000 * MS + (i + 1) * 10 * MS);
            b.record_depth(4);
        }
        a.record_depth(1);
        a.set_runtime(0, 1000 * MS);
        b.set_runtime(1000 * MS, 3000 * MS);
        a.merge(&b);
        assert_eq!(a.name, "a");
        assert_eq!(a.nr_jobs, 2);
        assert_eq!(a.dirs[DDIR_READ].total_ios, 20);
        assert_eq!(a.runtime_ms(), 2000);
        assert_eq!(a.depth_map()[0], 1);
        assert_eq!(a.depth_map()[2], 10);
        // One window of 20 IOPS each, summed as fio sums them.
        let s = a.iops_samples(DDIR_READ);
        assert_eq!((s.samples, s.max), (2, 40));
    }

    /// fio 3.33's `sum_thread_stats()` adds user time and runtime: three members at 100 %
    /// sys over 1 s each report 100 % as a group, not 300 %; unequal runtimes weigh.
    #[test]
    fn merged_cpu_is_the_runtime_weighted_mean() {
        let member = |sys: f64, runtime_ms: u64| {
            let mut stats = JobStats::new("m", 0, &DEFAULT_PERCENTILES);
            stats.set_runtime(0, runtime_ms * MS);
            stats.sys_cpu = sys;
            stats.usr_cpu = sys / 4.0;
            stats
        };
        let mut group = member(100.0, 1000);
        group.merge(&member(100.0, 1000));
        group.merge(&member(100.0, 1000));
        assert!((group.sys_cpu - 100.0).abs() < 1e-9, "{}", group.sys_cpu);
        let mut group = member(80.0, 1000);
        group.merge(&member(20.0, 3000));
        assert!((group.sys_cpu - 35.0).abs() < 1e-9, "{}", group.sys_cpu);
        assert!((group.usr_cpu - 8.75).abs() < 1e-9, "{}", group.usr_cpu);
    }

    #[test]
    fn group_reporting_merges_per_group_in_first_appearance_order() {
        let mk = |name: &str, g: u32| {
            let mut j = JobStats::new(name, g, &DEFAULT_PERCENTILES);
            j.record_io(DDIR_READ, 4096, 0, 0, MS);
            j.set_runtime(0, 1000 * MS);
            j
        };
        let merged = group_reporting(&[mk("b", 1), mk("a", 0), mk("c", 1)]);
        assert_eq!(merged.len(), 2);
        assert_eq!((merged[0].name.as_str(), merged[0].nr_jobs), ("b", 2));
        assert_eq!(merged[0].dirs[DDIR_READ].total_ios, 2);
        assert_eq!((merged[1].name.as_str(), merged[1].nr_jobs), ("a", 1));
    }

    #[test]
    fn distributions_floor_tiny_nonzero_shares() {
        let mut j = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        for _ in 0..100_000 {
            j.record_io(DDIR_READ, 512, 0, 0, 30);
        }
        j.record_io(DDIR_READ, 512, 0, 0, 3_000_000_000);
        let d = j.lat_dist();
        assert_eq!(d[31], 0.01);
        assert!((d[4] - 100_000.0 * 100.0 / 100_001.0).abs() < 1e-9);
    }

    #[test]
    fn group_stats_aggregate_over_longest_runtime() {
        let mut a = JobStats::new("a", 0, &DEFAULT_PERCENTILES);
        let mut b = JobStats::new("b", 0, &DEFAULT_PERCENTILES);
        let mut c = JobStats::new("c", 1, &DEFAULT_PERCENTILES);
        a.record_io(DDIR_READ, 1_000_000, 0, 0, MS);
        b.record_io(DDIR_READ, 3_000_000, 0, 0, MS);
        c.record_io(DDIR_WRITE, 1, 0, 0, MS);
        a.set_runtime(0, 1000 * MS);
        b.set_runtime(0, 2000 * MS);
        c.set_runtime(0, 1000 * MS);
        let groups = group_stats(&[a, b, c]);
        assert_eq!(groups.len(), 2);
        let g = &groups[0];
        assert_eq!(g.io_bytes[DDIR_READ], 4_000_000);
        assert_eq!(g.agg_bw_bytes[DDIR_READ], 2_000_000);
        assert_eq!(g.min_bw_bytes[DDIR_READ], 1_000_000);
        assert_eq!(g.max_bw_bytes[DDIR_READ], 1_500_000);
        assert_eq!(
            (g.min_run_ms[DDIR_READ], g.max_run_ms[DDIR_READ]),
            (1000, 2000)
        );
        assert_eq!(g.min_bw_bytes[DDIR_WRITE], 0);
        assert_eq!(groups[1].groupid, 1);
    }
}
