//! A validated job description: what a fio job section means once parsed.
//!
//! Both drivers consume [`JobSpec`]s; the fio parser (`crate::fio`) is one way to build them.
//! All sizes are bytes and all times are nanoseconds, whatever unit the job file used.

use iosched_core::{IoPrio, Time};

/// Where a job section (or option) came from, for error messages and the JSON echo.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub path: String,
    pub line: usize,
}

/// Data direction index for per-direction options: read, write, trim.
pub const DDIR_READ: usize = 0;
pub const DDIR_WRITE: usize = 1;
pub const DDIR_TRIM: usize = 2;

/// fio's `rw=` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwMode {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    /// `rw` / `readwrite`: sequential mixed.
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

impl RwMode {
    /// Whether offsets are drawn at random.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandTrim
                | RwMode::RandRw
                | RwMode::RandTrimWrite
        )
    }

    /// fio's name for the mode, as echoed in "job options".
    pub fn fio_name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Trim => "trim",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandTrim => "randtrim",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
}

/// `rw_sequencer=`: what the `:N` suffix of a random mode means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RwSequencer {
    /// N consecutive blocks after each random jump (fio's default).
    #[default]
    Sequential,
    /// The same offset N times.
    Identical,
}

/// Block sizes for one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockSizes {
    /// `bs=`.
    Fixed(u64),
    /// `bsrange=min-max`: sizes are multiples of `min` in `[min, max]` (unless unaligned).
    Range { min: u64, max: u64 },
    /// `bssplit=`: (size, percent) with the percentages resolved to sum to 100.
    Split(Vec<(u64, u32)>),
}

impl BlockSizes {
    /// The smallest size this direction can issue.
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(size) => *size,
            BlockSizes::Range { min, .. } => *min,
            BlockSizes::Split(entries) => entries.iter().map(|(s, _)| *s).min().unwrap_or(4096),
        }
    }

    /// The largest size this direction can issue.
    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(size) => *size,
            BlockSizes::Range { max, .. } => *max,
            BlockSizes::Split(entries) => entries.iter().map(|(s, _)| *s).max().unwrap_or(4096),
        }
    }
}

/// fio's I/O engines, reduced to what a driver needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoEngine {
    Sync,
    Psync,
    Vsync,
    Pvsync,
    Pvsync2,
    Libaio,
    IoUring,
    Mmap,
    PosixAio,
}

impl IoEngine {
    /// Engines that keep up to `iodepth` I/Os in flight. libaio only queues with
    /// `direct=1` (buffered libaio submits synchronously), which the caller accounts for.
    pub fn is_async(self) -> bool {
        matches!(
            self,
            IoEngine::Libaio | IoEngine::IoUring | IoEngine::PosixAio
        )
    }

    pub fn fio_name(self) -> &'static str {
        match self {
            IoEngine::Sync => "sync",
            IoEngine::Psync => "psync",
            IoEngine::Vsync => "vsync",
            IoEngine::Pvsync => "pvsync",
            IoEngine::Pvsync2 => "pvsync2",
            IoEngine::Libaio => "libaio",
            IoEngine::IoUring => "io_uring",
            IoEngine::Mmap => "mmap",
            IoEngine::PosixAio => "posixaio",
        }
    }
}

/// A size that may be given as a percentage of the file or device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeOrPercent {
    Bytes(u64),
    /// 0 < percent <= 100.
    Percent(f64),
}

/// `random_distribution=`.
#[derive(Clone, Debug, PartialEq)]
pub enum RandomDistribution {
    Uniform,
    Zipf {
        theta: f64,
    },
    Pareto {
        h: f64,
    },
    /// Normal with sigma as a percentage of the range.
    Normal {
        sigma_pct: f64,
    },
    /// `zoned:` (access%/size% pairs).
    Zoned(Vec<(u32, u32)>),
}

/// `zonemode=strided`: I/O keeps to one zone of a file until `size` bytes are done, then
/// moves `range + skip` bytes on (wrapping at the end of the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedZones {
    /// `zonesize`: bytes to transfer in a zone.
    pub size: u64,
    /// `zonerange`: the zone's extent (random offsets stay inside it); `zonesize` if unset.
    pub range: u64,
    /// `zoneskip`: bytes skipped after each zone (they count toward the job's size, as
    /// fio's `io_skip_bytes` do).
    pub skip: u64,
}

/// What a job's writes carry (fio's buffer options); only the real engine moves data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WriteData {
    /// `zero_buffers`: zeros.
    Zeros,
    /// `refill_buffers`: new pseudo-random bytes every write.
    Refilled,
    /// fio's default (`scramble_buffers=1`): random bytes stamped per write so none repeats.
    #[default]
    Scrambled,
    /// `scramble_buffers=0`: the buffer as it is.
    AsIs,
}

/// `exit_what=`: whom a finishing `exitall` job stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExitWhat {
    /// The running jobs of its reporting group (fio's default).
    #[default]
    Group,
    /// Every running job, of any group; later stonewalled groups still run.
    Stonewall,
    /// Every job: the running ones stop and none starts any more.
    All,
}

/// `file_service_type=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileService {
    /// Switch file every `n` I/Os (default 1).
    RoundRobin {
        n: u32,
    },
    Random {
        n: u32,
    },
    /// Finish one file before the next.
    Sequential,
}

/// fio's `fadvise_hint`: the access-pattern advice fio gives the kernel for each file it opens
/// (`posix_fadvise()` in `td_io_open_file()`, fio 3.33). The default, `1`, advises
/// `POSIX_FADV_RANDOM` for random jobs and `POSIX_FADV_SEQUENTIAL` for the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FadviseHint {
    /// `0`: no advice; the file keeps the device's read-ahead.
    None,
    /// `1`: by the job's `rw=`.
    #[default]
    ByPattern,
    /// `random`.
    Random,
    /// `sequential`.
    Sequential,
    /// `noreuse`: advice Linux 4.20 ignores.
    NoReuse,
}

/// Which generator drives a job's I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    /// fio's own: `rw=`, `bs=`, `fsync=`...
    #[default]
    Fio,
    /// A dbench4 client (`iosched_workload=dbench4`, see [`crate::dbench`]).
    Dbench4,
}

/// One job section after `global` defaults, includes and expansion are applied.
/// `numjobs` clones are made by the driver, not here.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub origin: Origin,
    /// Reporting group (0-based), advanced by `stonewall` and `new_group`.
    pub group_id: u32,
    /// Wait for all earlier jobs to finish before starting.
    pub stonewall: bool,
    /// Wait for the named earlier job.
    pub wait_for: Option<String>,
    pub group_reporting: bool,
    pub exitall: bool,
    pub exit_what: ExitWhat,
    pub numjobs: u32,
    /// `thread`: clones are threads (still one io context each, see formats.md §1.4 #7).
    pub thread: bool,

    pub rw: RwMode,
    /// The `:N` suffix of `rw=`: I/Os per random offset, or the byte gap for sequential modes.
    pub rw_suffix: i64,
    pub rw_sequencer: RwSequencer,
    /// Percentage of mixed I/O that reads.
    pub rwmixread: u32,
    /// Per direction (read, write, trim).
    pub bs: [BlockSizes; 3],
    pub blockalign: [Option<u64>; 3],
    pub bs_unaligned: bool,

    pub ioengine: IoEngine,
    pub iodepth: u32,
    /// `iodepth_batch_submit`: I/Os per submit call; 0 means `iodepth`.
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    /// Refill watermark; 0 means `iodepth`, as fio reads an unset or zero `iodepth_low`.
    pub iodepth_low: u32,
    pub direct: bool,
    /// `sync=`: O_SYNC (true) / O_DSYNC writes.
    pub sync_writes: bool,
    /// `iosched_workload=`: the generator (an iosched extension; fio has no such option).
    pub workload: Workload,

    /// Bytes per job clone (split over its files); `None` = the whole file/device.
    pub size: Option<SizeOrPercent>,
    /// I/O amount independent of the region.
    pub io_size: Option<u64>,
    pub number_ios: Option<u64>,
    /// Per-file size range (min, max).
    pub filesize: Option<(u64, u64)>,
    pub nrfiles: u32,
    /// `filename=` list (already split at unescaped `:`); empty = generated names.
    pub filenames: Vec<String>,
    /// `directory=` list.
    pub directories: Vec<String>,
    pub file_service: FileService,
    pub offset: SizeOrPercent,
    pub offset_increment: u64,
    /// `offset_increment=N%`: the increment as a percentage of the file/device size
    /// (then `offset_increment` is 0).
    pub offset_increment_pct: Option<f64>,
    /// `offset_align=`: what a percentage offset is aligned up to (default: the smallest
    /// block size).
    pub offset_align: Option<u64>,

    pub runtime_ns: Option<Time>,
    pub time_based: bool,
    pub ramp_time_ns: Time,
    /// Start delay range (min, max); equal when fixed.
    pub startdelay_ns: (Time, Time),
    pub loops: u32,

    pub thinktime_ns: Time,
    pub thinktime_spin_ns: Time,
    pub thinktime_blocks: u32,
    /// `thinktime_blocks_type=issue`: count issued rather than completed I/Os (fio's default
    /// is `complete`).
    pub thinktime_on_issue: bool,
    /// fio waits for every I/O in flight before it sleeps (`handle_thinktime()` calls
    /// `io_u_quiesce()`); `iosched_thinktime_quiesce=0` sleeps with them in flight, as a tool
    /// that sleeps right after `io_submit()` does (seed 000's aio-stress).
    pub thinktime_quiesce: bool,
    /// Bytes per second cap per direction.
    pub rate: [Option<u64>; 3],
    /// IOPS cap per direction.
    pub rate_iops: [Option<u64>; 3],
    /// `rate_min`: bytes per second below which fio fails the job, per direction.
    pub rate_min: [Option<u64>; 3],
    /// `rate_iops_min`: IOPS below which fio fails the job, per direction.
    pub rate_iops_min: [Option<u64>; 3],
    /// `rate_process=poisson`: rate-limited I/O arrives as a Poisson process at the rate.
    pub rate_poisson: bool,
    /// `zonemode=strided` with its zone sizes.
    pub zones: Option<StridedZones>,
    /// What written blocks hold (the real engine's business): `zero_buffers`,
    /// `refill_buffers`, `scramble_buffers` (fio's default: scrambled).
    pub write_data: WriteData,
    /// `flow=`: the job's weight in its flow (0: not in one); `flow_id=`; `flow_sleep=` ns.
    pub flow_weight: u64,
    pub flow_id: u32,
    pub flow_sleep_ns: Time,
    /// fio's log files: `write_bw_log`, `write_iops_log`, `write_lat_log` prefixes (a bare
    /// option takes the job's name) and `log_avg_msec` in ns.
    pub log_bw: Option<String>,
    pub log_iops: Option<String>,
    pub log_lat: Option<String>,
    pub log_avg_ns: Time,
    /// `write_hist_log` prefix (bare: the job's name), `log_hist_msec` (0: no records) and
    /// `log_hist_coarseness` (0..=6: each step halves the bins) for fio's completion-latency
    /// histogram log.
    pub log_hist: Option<String>,
    pub log_hist_msec: u64,
    pub log_hist_coarseness: u32,
    /// `write_iolog=FILE`: every I/O the job issues, in fio's iolog version 3 format (see
    /// [`crate::issue_log`]).
    pub write_iolog: Option<String>,
    /// `ss=`, `ss_dur=`, `ss_ramp=`: end the job at steady state (off while `ss_dur` is 0).
    pub steady_state: crate::steady_state::SteadyStateSpec,

    /// Cgroup path relative to the root, without leading `/` (`a/b`; empty for `cgroup=/`,
    /// the root itself).
    pub cgroup: Option<String>,
    /// cgroup v1 weight (100..=1000 as fio accepts it).
    pub cgroup_weight: Option<u32>,
    /// Resolved with fio's rules: `prio` alone gives BE, `prioclass` alone gives level 0.
    pub ioprio: IoPrio,
    pub nice: i32,
    /// `cpus_allowed=` / `cpumask=`: the CPUs the job may run on, ascending (engine only).
    pub cpus_allowed: Option<Vec<u32>>,

    /// fsync every N writes (0 = never).
    pub fsync: u32,
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub fsync_on_close: bool,
    pub overwrite: bool,
    pub pre_read: bool,
    pub invalidate: bool,
    /// `fadvise_hint=`: the advice given at each open (read-ahead of buffered reads).
    pub fadvise_hint: FadviseHint,

    pub random_distribution: RandomDistribution,
    pub percentage_random: [u32; 3],
    pub norandommap: bool,
    pub randseed: u64,
    pub randrepeat: bool,

    pub kb_base: u32,
    /// `verify=` method name, if any (`crc32c`, `md5`...).
    pub verify: Option<String>,
    pub do_verify: bool,
    /// `verify_only`: run the workload's offsets as reads that check an earlier run's data.
    pub verify_only: bool,
    /// `verify_fatal`: a job stops at its first bad block (the engine checks data).
    pub verify_fatal: bool,
    /// `continue_on_error=` and `ignore_error=`: the failed I/Os the job survives.
    pub errors: crate::error_policy::ErrorPolicy,
    /// `verify_pattern=`; alone it implies `verify=pattern`.
    pub verify_pattern: Option<crate::pattern::Pattern>,
    /// `buffer_pattern=`: what writes carry when nothing is verified (engine only).
    pub buffer_pattern: Option<crate::pattern::Pattern>,

    /// `percentile_list`, in percent.
    pub percentile_list: Vec<f64>,
    /// `slat_percentiles`, `clat_percentiles`, `lat_percentiles`: which latency series report
    /// percentiles (and `--output-format=json+` bins).
    pub slat_percentiles: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    /// `disable_slat`, `disable_clat`, `disable_lat`: the series is not sampled at all (no
    /// line, no percentiles; without clat, no latency buckets either), as in fio.
    pub disable_slat: bool,
    pub disable_clat: bool,
    pub disable_lat: bool,

    /// `description=`, echoed in fio's JSON.
    pub description: Option<String>,

    /// Options as written (after expansion), in order, for fio's "job options" echo.
    pub options: Vec<(String, String)>,

    /// `read_iolog=` and the `replay_*` options: the job replays a recorded workload.
    pub replay: Option<crate::replay::ReplaySpec>,
}

impl JobSpec {
    /// A job with fio's defaults, named `name`.
    pub fn new(name: &str) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            origin: Origin::default(),
            group_id: 0,
            stonewall: false,
            wait_for: None,
            group_reporting: false,
            exitall: false,
            exit_what: ExitWhat::Group,
            errors: Default::default(),
            numjobs: 1,
            thread: false,
            rw: RwMode::Read,
            rw_suffix: 0,
            rw_sequencer: RwSequencer::Sequential,
            rwmixread: 50,
            bs: [
                BlockSizes::Fixed(4096),
                BlockSizes::Fixed(4096),
                BlockSizes::Fixed(4096),
            ],
            blockalign: [None; 3],
            bs_unaligned: false,
            ioengine: IoEngine::Psync,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 1,
            iodepth_low: 0,
            direct: false,
            sync_writes: false,
            workload: Workload::Fio,
            size: None,
            io_size: None,
            number_ios: None,
            filesize: None,
            nrfiles: 1,
            filenames: Vec::new(),
            directories: Vec::new(),
            file_service: FileService::RoundRobin { n: 1 },
            offset: SizeOrPercent::Bytes(0),
            offset_increment: 0,
            offset_increment_pct: None,
            offset_align: None,
            runtime_ns: None,
            time_based: false,
            ramp_time_ns: 0,
            startdelay_ns: (0, 0),
            loops: 1,
            thinktime_ns: 0,
            thinktime_spin_ns: 0,
            thinktime_blocks: 1,
            thinktime_on_issue: false,
            thinktime_quiesce: true,
            rate: [None; 3],
            rate_iops: [None; 3],
            rate_min: [None; 3],
            rate_iops_min: [None; 3],
            rate_poisson: false,
            steady_state: crate::steady_state::SteadyStateSpec::fio_default(),
            zones: None,
            write_data: WriteData::Scrambled,
            flow_weight: 0,
            flow_id: 0,
            flow_sleep_ns: 0,
            log_bw: None,
            log_iops: None,
            log_lat: None,
            log_avg_ns: 0,
            log_hist: None,
            log_hist_msec: 0,
            log_hist_coarseness: 0,
            write_iolog: None,
            cgroup: None,
            cgroup_weight: None,
            ioprio: IoPrio::none(),
            nice: 0,
            cpus_allowed: None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            overwrite: false,
            pre_read: false,
            invalidate: true,
            fadvise_hint: FadviseHint::ByPattern,
            random_distribution: RandomDistribution::Uniform,
            percentage_random: [100; 3],
            norandommap: false,
            randseed: 0x89,
            randrepeat: true,
            kb_base: 1024,
            verify: None,
            do_verify: true,
            verify_only: false,
            verify_fatal: false,
            verify_pattern: None,
            buffer_pattern: None,
            percentile_list: vec![
                1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5,
                99.9, 99.95, 99.99,
            ],
            slat_percentiles: false,
            disable_slat: false,
            disable_clat: false,
            disable_lat: false,
            clat_percentiles: true,
            lat_percentiles: false,
            description: None,
            options: Vec::new(),
            replay: None,
        }
    }

    /// Whether the job keeps more than one I/O in flight (async engine with `direct=1`,
    /// or io_uring/posixaio which queue buffered I/O too).
    pub fn queues_async(&self) -> bool {
        match self.ioengine {
            IoEngine::Libaio => self.direct,
            engine => engine.is_async(),
        }
    }

    /// The effective in-flight limit of one clone.
    pub fn effective_depth(&self) -> u32 {
        if self.queues_async() {
            self.iodepth.max(1)
        } else {
            1
        }
    }
}

/// A parsed set of job files: the jobs in order, plus what was accepted but means nothing
/// to a driver (listed once each).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobSet {
    pub jobs: Vec<JobSpec>,
    /// Options accepted and ignored (e.g. `exec_prerun`), each listed once, in first-seen order.
    pub ignored_options: Vec<String>,
    /// Options of the global sections as written, for fio's "global options" echo.
    pub global_options: Vec<(String, String)>,
    /// Things fio accepts silently but that probably surprise the author (`runtime=2sec` is
    /// 2 µs, `bs=4k-16k` is not a range), each as `path:line: message`.
    pub warnings: Vec<String>,
}

#[cfg(test)]
impl JobSpec {
    /// A job of `bytes` bytes and fio's defaults otherwise, for tests.
    pub(crate) fn sized(name: &str, bytes: u64) -> JobSpec {
        let mut spec = JobSpec::new(name);
        spec.size = Some(SizeOrPercent::Bytes(bytes));
        spec
    }
}
