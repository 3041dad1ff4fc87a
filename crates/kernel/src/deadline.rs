//! How long fio may run before iosched takes it for hung: the jobs' planned time plus a
//! generous margin. fio's job processes were seen stuck on a futex for ever when two test
//! suites ran at once; without a limit iosched waited with them, the device switched to the
//! run's scheduler.
//!
//! A job's planned time is what fio itself would take at the least, as the workload crate's
//! [`extent`] estimates it: `startdelay` (its upper end), `ramp_time`, then `runtime` for a
//! time-based job. A job bounded by its bytes (no `time_based`) takes its I/O (`io_size`, or
//! its region, times `loops`, or `number_ios`; with a verify pass's read-back of its writes)
//! at its `rate`/`rate_iops` cap, but a device may be slower than the cap, so at least
//! [`FLOOR_BYTES_PER_S`] and [`FLOOR_IOPS`] are assumed (a busy 7200 rpm disk's random 4 KiB
//! reads); `thinktime` adds to it; a `runtime` caps it, as in fio. Jobs start as fio starts
//! them: after every earlier job for `stonewall`, after the named job for `wait_for`; clones
//! run together. A time-based job without a `runtime` runs until it is stopped: no limit
//! then, unless `--timeout` gives one.
//!
//! Choice: the limit is twice the planned time plus [`MARGIN`]: fio's set-up (cgroups, job
//! processes) and a slow device get their time, and a hung fio is still found.

use std::time::Duration;

use iosched_workload::extent::{self, Pace};
use iosched_workload::layout::Layout;
use iosched_workload::JobSet;

/// Bandwidth assumed of a device when a size-bounded job has no rate: 1 MiB/s.
pub const FLOOR_BYTES_PER_S: u64 = 1 << 20;

/// I/Os per second assumed likewise (random 4 KiB reads on a busy 7200 rpm disk).
pub const FLOOR_IOPS: u64 = 50;

/// Added to twice the planned time: fio's start-up and tear-down.
pub const MARGIN: Duration = Duration::from_secs(60);

/// What the run-length watchdog does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timeout {
    /// Kill fio at twice the jobs' planned time plus [`MARGIN`] (no limit when the jobs run
    /// until stopped).
    #[default]
    Planned,
    /// Kill fio after this long (`--timeout SECONDS`).
    After(Duration),
    /// Never (`--timeout 0`).
    Never,
}

impl Timeout {
    /// `--timeout SECONDS`: 0 turns the watchdog off.
    pub fn from_secs(secs: u64) -> Timeout {
        match secs {
            0 => Timeout::Never,
            secs => Timeout::After(Duration::from_secs(secs)),
        }
    }

    /// The limit for jobs whose planned time is `planned` (`None`: they run until stopped).
    pub fn limit(self, planned: Option<Duration>) -> Option<Duration> {
        match self {
            Timeout::Planned => planned.map(|p| p.saturating_mul(2).saturating_add(MARGIN)),
            Timeout::After(limit) => Some(limit),
            Timeout::Never => None,
        }
    }
}

/// The least time fio takes for `jobs` laid out as `layout`, each clone at the floors
/// ([`extent::clone_time_at`]), the jobs started as fio starts them ([`extent::run_length`]);
/// `None` when a job runs until it is stopped.
pub fn planned(jobs: &JobSet, layout: &Layout) -> Option<Duration> {
    let floors = Pace {
        bytes_per_s: FLOOR_BYTES_PER_S,
        iops: FLOOR_IOPS,
    };
    let clones = extent::clone_regions(&jobs.jobs, Some(layout));
    let ns = extent::run_length(&jobs.jobs, &clones, |job, region_bytes| {
        extent::clone_time_at(job, region_bytes, floors)
    })?;
    Some(Duration::from_nanos(ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_workload::fio::{parse_str, ParseContext};
    use iosched_workload::layout::lay_out;

    fn planned_for(text: &str) -> Option<Duration> {
        let jobs = parse_str(text, "t.fio", &ParseContext::default()).unwrap();
        let layout = lay_out(&jobs.jobs, Some(1 << 30), 1).unwrap();
        planned(&jobs, &layout)
    }

    /// A time-based job takes its start delay, ramp and runtime; clones run together.
    #[test]
    fn time_based_jobs_take_their_runtime() {
        let text = "[a]\nrw=randread\nsize=8m\ntime_based\nruntime=60\nramp_time=5\n\
                    startdelay=2-4\nnumjobs=4\n";
        assert_eq!(planned_for(text), Some(Duration::from_secs(69)));
    }

    /// Phases split by stonewall add up; jobs within one take the longest.
    #[test]
    fn stonewalled_phases_add_up() {
        let text = "[global]\nrw=read\nsize=1m\ntime_based\n[a]\nruntime=10\n[b]\nruntime=30\n\
                    [c]\nstonewall\nruntime=5\n";
        assert_eq!(planned_for(text), Some(Duration::from_secs(35)));
    }

    /// A size-bounded job: its I/Os at its IOPS cap (64 MiB of 4 KiB at 1/s: 16384 s), or
    /// the floors when it has no cap (64 MiB at 1 MiB/s, fewer than 50 I/Os a second), and
    /// a runtime caps either.
    #[test]
    fn size_bounded_jobs_take_their_bytes_at_the_rate_or_the_floor() {
        let capped = "[a]\nrw=randread\nbs=4k\nsize=64m\nrate_iops=1\n";
        assert_eq!(planned_for(capped), Some(Duration::from_secs(16384)));
        let floor = "[a]\nrw=read\nbs=1m\nsize=64m\n";
        assert_eq!(planned_for(floor), Some(Duration::from_secs(64)));
        let random = "[a]\nrw=randread\nbs=4k\nsize=4m\n";
        assert_eq!(
            planned_for(random),
            Some(Duration::from_secs_f64(1024.0 / 50.0))
        );
        let cut = "[a]\nrw=randread\nbs=4k\nsize=64m\nrate_iops=1\nruntime=30\n";
        assert_eq!(planned_for(cut), Some(Duration::from_secs(30)));
    }

    /// fio 3.33 starts a `wait_for` job once the named job is done, beside the others (a
    /// 10 s, b 2 s, c wait_for=b 2 s: c ends at 4 s, the run at 10 s); the watchdog used to
    /// make it a phase after all of them (12 s). See `extent::run_length` for fio's timings.
    #[test]
    fn a_wait_for_job_waits_for_its_job_only() {
        let text = "[global]\nrw=read\nsize=1m\ntime_based\n[a]\nruntime=10\n[b]\nruntime=2\n\
                    [c]\nwait_for=b\nruntime=2\n";
        assert_eq!(planned_for(text), Some(Duration::from_secs(10)));
    }

    /// Only what a job does counts (fio 3.33: `rw=read bs=64k,4k` did 1 MiB / 64 KiB reads):
    /// a read job's write block size and write rate cap used to count (16384 I/Os at 1 KiB/s
    /// here), and a `verify_only` job, which writes nothing, was given a read-back pass.
    #[test]
    fn only_the_jobs_own_directions_and_passes_count() {
        let read = "[a]\nrw=read\nbs=1m,4k\nsize=64m\nrate=,1k\n";
        assert_eq!(planned_for(read), Some(Duration::from_secs(64)));
        let checked = "[a]\nrw=write\nbs=1m\nsize=64m\nverify=crc32c\n";
        assert_eq!(planned_for(checked), Some(Duration::from_secs(128)));
        let only = format!("{checked}verify_only\n");
        assert_eq!(planned_for(&only), Some(Duration::from_secs(64)));
    }

    /// A time-based job without a runtime runs until stopped: no planned time, no limit
    /// unless one is given.
    #[test]
    fn an_endless_job_has_no_limit_unless_given() {
        let planned = planned_for("[a]\nrw=read\nsize=1m\ntime_based\n");
        assert_eq!(planned, None);
        assert_eq!(Timeout::Planned.limit(planned), None);
        assert_eq!(
            Timeout::from_secs(3).limit(planned),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            Timeout::Planned.limit(Some(Duration::from_secs(10))),
            Some(Duration::from_secs(80))
        );
        assert_eq!(
            Timeout::from_secs(0).limit(Some(Duration::from_secs(1))),
            None
        );
    }
}
