//! How long fio may run before iosched takes it for hung: the jobs' planned time plus a
//! generous margin. fio's job processes were seen stuck on a futex for ever when two test
//! suites ran at once; without a limit iosched waited with them, the device switched to the
//! run's scheduler.
//!
//! A job's planned time is what fio itself would take at the least: `startdelay` (its upper
//! end), `ramp_time`, then `runtime` for a time-based job. A job bounded by its bytes (no
//! `time_based`) takes its bytes (`io_size`, or its region, times `loops`; doubled by a
//! verify pass after writing) at its `rate`/`rate_iops` cap, but a device may be slower than
//! the cap, so at least [`FLOOR_BYTES_PER_S`] and [`FLOOR_IOPS`] are assumed (a busy 7200 rpm
//! disk's random 4 KiB reads); `thinktime` adds to it; a `runtime` caps it, as in fio.
//! Jobs split into phases by `stonewall` or `wait_for` run one phase after another; the
//! clones and jobs within a phase together. A time-based job without a `runtime` runs until
//! it is stopped: no limit then, unless `--timeout` gives one.
//!
//! Choice: the limit is twice the planned time plus [`MARGIN`]: fio's set-up (cgroups, job
//! processes) and a slow device get their time, and a hung fio is still found.

use std::time::Duration;

use iosched_workload::layout::Layout;
use iosched_workload::{JobSet, JobSpec, RwMode};

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

/// The least time fio takes for `jobs` laid out as `layout`; `None` when a job runs until
/// it is stopped.
pub fn planned(jobs: &JobSet, layout: &Layout) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut phase = Duration::ZERO;
    for (index, job) in jobs.jobs.iter().enumerate() {
        if index > 0 && (job.stonewall || job.wait_for.is_some()) {
            total = total.saturating_add(phase);
            phase = Duration::ZERO;
        }
        for clone in layout.clones.iter().filter(|clone| clone.job == index) {
            let region: u64 = clone.regions.iter().map(|region| region.len).sum();
            phase = phase.max(job_time(job, region)?);
        }
    }
    Some(total.saturating_add(phase))
}

/// One clone's time over a region of `region_bytes`.
fn job_time(job: &JobSpec, region_bytes: u64) -> Option<Duration> {
    let lead = nanos(job.startdelay_ns.1.saturating_add(job.ramp_time_ns));
    let main = if job.time_based {
        nanos(job.runtime_ns?)
    } else {
        let by_size = size_time(job, region_bytes);
        job.runtime_ns
            .map_or(by_size, |runtime| by_size.min(nanos(runtime)))
    };
    Some(lead.saturating_add(main))
}

/// A size-bounded clone's bytes at its rate cap or the floors, whichever is slower, plus its
/// think time.
fn size_time(job: &JobSpec, region_bytes: u64) -> Duration {
    let mut bytes = job
        .io_size
        .unwrap_or(region_bytes)
        .saturating_mul(u64::from(job.loops.max(1)));
    let writes = !matches!(job.rw, RwMode::Read | RwMode::RandRead);
    if job.do_verify && job.verify.is_some() && writes {
        bytes = bytes.saturating_mul(2);
    }
    let min_bs = job
        .bs
        .iter()
        .map(|bs| bs.min())
        .min()
        .unwrap_or(4096)
        .max(1);
    let mut ios = bytes.div_ceil(min_bs);
    if let Some(number) = job.number_ios {
        ios = ios.min(number);
        let max_bs = job.bs.iter().map(|bs| bs.max()).max().unwrap_or(4096);
        bytes = bytes.min(number.saturating_mul(max_bs));
    }
    let slowest = |caps: &[Option<u64>; 3]| caps.iter().flatten().copied().filter(|&c| c > 0).min();
    let mut secs = (bytes as f64 / FLOOR_BYTES_PER_S as f64).max(ios as f64 / FLOOR_IOPS as f64);
    if let Some(rate) = slowest(&job.rate) {
        secs = secs.max(bytes as f64 / rate as f64);
    }
    if let Some(iops) = slowest(&job.rate_iops) {
        secs = secs.max(ios as f64 / iops as f64);
    }
    let think =
        nanos(job.thinktime_ns).as_secs_f64() * ios as f64 / f64::from(job.thinktime_blocks.max(1));
    Duration::try_from_secs_f64(secs + think).unwrap_or(Duration::MAX)
}

fn nanos(ns: u64) -> Duration {
    Duration::from_nanos(ns)
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
