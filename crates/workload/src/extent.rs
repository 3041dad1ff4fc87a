//! How long and how big a run will be, estimated before it starts from its parsed jobs and
//! their clones' regions: the one place the progress line's totals, the trace-size check and
//! the kernel run's watchdog take their figures from.
//!
//! Per clone, three figures: the I/Os it will do when something bounds them ahead of time
//! ([`clone_ios`]), the most time it can take when a `runtime` caps it ([`clone_time_bound`]),
//! and the time it takes at a given [`Pace`] ([`clone_time_at`]). Per run, the clones of a job
//! run together and jobs start as fio 3.33's `run_threads()` starts them ([`run_length`]).
//!
//! fio notes (each checked against fio 3.33 on this machine, `--output-format=json`):
//! - `time_based` ignores `io_size` and `number_ios` (`keep_running()` returns early): 1 s of
//!   `io_size=64k` reads did 295941 I/Os, 1 s of `number_ios=10` did 7404428. Only a rate
//!   bounds such a job's count.
//! - `number_ios` counts over every loop (`exceeds_number_ios()` multiplies by `loops`):
//!   `number_ios=10 loops=3` did 30 reads.
//! - A verify read-back follows the writes it checks: `rw=write verify=crc32c` over 1 MiB in
//!   4 KiB did 256 writes and 256 reads, with `number_ios=10` 10 and 10; `rw=randrw` 256 I/Os
//!   with 124 writes plus 124 read back; `rw=read verify=null` only its 256 reads.
//! - Only the directions a job does count: `rw=read bs=64k,4k` over 1 MiB did 16 reads.
//! - A `wait_for` job waits for the named job only, but no job starts before an earlier
//!   `stonewall` job has started (the start loop stops at it): see [`run_length`].

use crate::job::{JobSpec, RwMode, DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use crate::layout::Layout;

const NSEC_PER_SEC: u128 = 1_000_000_000;

/// How fast a device is assumed to go for a job bounded by its bytes: the job's own rate caps
/// apply on top, whichever is slower.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pace {
    pub bytes_per_s: u64,
    pub iops: u64,
}

/// One clone: its job's index and the bytes of its files it works on (0 when not laid out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloneRegion {
    pub job: usize,
    pub region_bytes: u64,
}

/// Every clone of `jobs` with its region, from `layout`; without one, `numjobs` clones of each
/// job over nothing (enough for the time bounds, which need no region).
pub fn clone_regions(jobs: &[JobSpec], layout: Option<&Layout>) -> Vec<CloneRegion> {
    match layout {
        Some(layout) => layout
            .clones
            .iter()
            .map(|plan| CloneRegion {
                job: plan.job,
                region_bytes: plan.regions.iter().map(|r| r.len).sum(),
            })
            .collect(),
        None => jobs
            .iter()
            .enumerate()
            .flat_map(|(job, spec)| {
                (0..spec.numjobs.max(1)).map(move |_| CloneRegion {
                    job,
                    region_bytes: 0,
                })
            })
            .collect(),
    }
}

/// The directions whose I/O a job does (and whose bytes fio counts toward its size).
pub(crate) fn counted_dirs(rw: RwMode) -> &'static [usize] {
    match rw {
        RwMode::ReadWrite | RwMode::RandRw => &[DDIR_READ, DDIR_WRITE],
        RwMode::Write | RwMode::RandWrite | RwMode::TrimWrite | RwMode::RandTrimWrite => {
            &[DDIR_WRITE]
        }
        RwMode::Read | RwMode::RandRead => &[DDIR_READ],
        RwMode::Trim | RwMode::RandTrim => &[DDIR_TRIM],
    }
}

/// The smallest block the job's directions use: the most I/Os its bytes can take.
fn min_bs(spec: &JobSpec) -> u64 {
    let dirs = counted_dirs(spec.rw);
    let min = dirs.iter().map(|&d| spec.bs[d].min()).min();
    min.unwrap_or(4096).max(1)
}

/// The share of a job's I/Os that write, in percent (what a verify pass reads back).
fn write_percent(spec: &JobSpec) -> u64 {
    if spec.verify_only {
        return 0;
    }
    match spec.rw {
        RwMode::Read | RwMode::RandRead | RwMode::Trim | RwMode::RandTrim => 0,
        RwMode::ReadWrite | RwMode::RandRw => 100 - u64::from(spec.rwmixread.min(100)),
        _ => 100,
    }
}

/// `amount` (I/Os or bytes) with what a verify pass reads back once the writing is over:
/// the writes' share of it, when the job verifies.
fn with_read_back(spec: &JobSpec, amount: u64) -> u64 {
    if spec.verify.is_none() || !spec.do_verify {
        return amount;
    }
    let written = (u128::from(amount) * u128::from(write_percent(spec)) / 100) as u64;
    amount.saturating_add(written)
}

/// The bytes a size-bounded clone moves per loop times its loops (`None` when time-based).
pub(crate) fn clone_bytes(spec: &JobSpec, region_bytes: u64) -> Option<u64> {
    let loops = u64::from(spec.loops.max(1));
    (!spec.time_based).then(|| spec.io_size.unwrap_or(region_bytes).saturating_mul(loops))
}

/// `number_ios` over every loop (`None` when time-based or unset); a trim and its write count
/// as one step of `trimwrite`.
pub(crate) fn clone_count_cap(spec: &JobSpec) -> Option<u64> {
    let number = spec.number_ios.filter(|&n| n > 0 && !spec.time_based)?;
    let steps = if matches!(spec.rw, RwMode::TrimWrite | RwMode::RandTrimWrite) {
        2
    } else {
        1
    };
    Some(
        number
            .saturating_mul(u64::from(spec.loops.max(1)))
            .saturating_mul(steps),
    )
}

/// The I/Os a `runtime` allows at the job's rate caps, when every direction it does has one.
fn ios_by_rate(spec: &JobSpec) -> Option<u64> {
    let ns = spec.runtime_ns.filter(|&ns| ns > 0)?;
    let per_second = counted_dirs(spec.rw)
        .iter()
        .map(|&d| match (spec.rate_iops[d], spec.rate[d]) {
            (Some(iops), _) if iops > 0 => Some(iops),
            (_, Some(bytes)) if bytes > 0 => Some(bytes / spec.bs[d].min().max(1)),
            _ => None,
        })
        .sum::<Option<u64>>()?;
    Some((u128::from(per_second) * u128::from(ns) / NSEC_PER_SEC) as u64)
}

/// About how many I/Os one clone of `spec` does over `region_bytes`, known before it runs:
/// its bytes in its smallest block, `number_ios`, or what `runtime` allows at its rate,
/// whichever is least, plus the verify pass's read-back of the writes among them. `None`
/// when nothing bounds it (time-based without a rate: the device decides).
pub fn clone_ios(spec: &JobSpec, region_bytes: u64) -> Option<u64> {
    let by_bytes = clone_bytes(spec, region_bytes).map(|bytes| bytes / min_bs(spec));
    let by_count = clone_count_cap(spec);
    let issued = [by_bytes, by_count].into_iter().flatten().min();
    [
        issued.map(|ios| with_read_back(spec, ios)),
        ios_by_rate(spec),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// The I/Os of every clone together, and the indices of the jobs with a clone nothing bounds.
pub fn run_ios(jobs: &[JobSpec], clones: &[CloneRegion]) -> (u64, Vec<usize>) {
    let mut total = 0u64;
    let mut unbounded = Vec::new();
    for clone in clones {
        match clone_ios(&jobs[clone.job], clone.region_bytes) {
            Some(ios) => total = total.saturating_add(ios),
            None if !unbounded.contains(&clone.job) => unbounded.push(clone.job),
            None => {}
        }
    }
    (total, unbounded)
}

/// What comes before a clone's I/O: the upper end of `startdelay`, then `ramp_time`.
fn lead_ns(spec: &JobSpec) -> u64 {
    spec.startdelay_ns.1.saturating_add(spec.ramp_time_ns)
}

/// The most time a clone can take, when its `runtime` caps it: its lead plus the runtime.
/// `None` without a runtime (a size-bounded job ends when its bytes are done, which only
/// the run tells).
pub fn clone_time_bound(spec: &JobSpec) -> Option<u64> {
    Some(lead_ns(spec).saturating_add(spec.runtime_ns?))
}

/// The time a clone takes when its device goes at `pace` (its rate caps, if slower, apply):
/// a time-based clone its lead and runtime; a size-bounded one its lead, its I/O (verify
/// read-back included) at the pace, and its think time, cut at its runtime. `None` for a
/// time-based clone without a runtime (it runs until stopped).
pub fn clone_time_at(spec: &JobSpec, region_bytes: u64, pace: Pace) -> Option<u64> {
    if spec.time_based {
        return clone_time_bound(spec);
    }
    let ios = clone_ios(spec, region_bytes).unwrap_or(0);
    let max_bs = counted_dirs(spec.rw)
        .iter()
        .map(|&d| spec.bs[d].max())
        .max()
        .unwrap_or(4096);
    let bytes = clone_bytes(spec, region_bytes).unwrap_or(0);
    let bytes = with_read_back(spec, bytes).min(ios.saturating_mul(max_bs));
    let secs = io_secs(spec, ios, bytes, pace);
    let think =
        spec.thinktime_ns as f64 / 1e9 * ios as f64 / f64::from(spec.thinktime_blocks.max(1));
    let main = ((secs + think) * 1e9).min(u64::MAX as f64) as u64;
    let main = spec.runtime_ns.map_or(main, |runtime| main.min(runtime));
    Some(lead_ns(spec).saturating_add(main))
}

/// Seconds for `ios` I/Os of `bytes` at `pace` or at the job's slowest rate cap of the
/// directions it does, whichever is slower.
fn io_secs(spec: &JobSpec, ios: u64, bytes: u64, pace: Pace) -> f64 {
    let dirs = counted_dirs(spec.rw);
    let slowest = |caps: &[Option<u64>; 3]| {
        let caps = dirs.iter().filter_map(|&d| caps[d]).filter(|&c| c > 0);
        caps.min().map(|c| c as f64)
    };
    let mut secs =
        (bytes as f64 / pace.bytes_per_s.max(1) as f64).max(ios as f64 / pace.iops.max(1) as f64);
    if let Some(rate) = slowest(&spec.rate) {
        secs = secs.max(bytes as f64 / rate);
    }
    if let Some(iops) = slowest(&spec.rate_iops) {
        secs = secs.max(ios as f64 / iops);
    }
    secs
}

/// The run's length from each clone's (`clone_ns`; `None`: unknown, and so is the run's):
/// a job lasts as long as its longest clone, and starts as fio 3.33's `run_threads()` starts
/// it: a `stonewall` job once every earlier job has ended, a `wait_for` job once the named
/// job has ended, and no job before the last earlier `stonewall` job has started (fio's
/// start loop stops at a stonewall it cannot start yet). Measured with fio 3.33, null engine,
/// time-based: `a` 2 s, `b` 1 s, `c` stonewall 1 s, `d` wait_for=b 3 s took 5.5 s (d from
/// 2 s to 5 s); `a` 2 s, `b` 1 s, `c` wait_for=b 1 s took 2.4 s.
pub fn run_length(
    jobs: &[JobSpec],
    clones: &[CloneRegion],
    clone_ns: impl Fn(&JobSpec, u64) -> Option<u64>,
) -> Option<u64> {
    let mut ends: Vec<u64> = Vec::with_capacity(jobs.len());
    let mut gate = 0u64;
    for (index, spec) in jobs.iter().enumerate() {
        let mut start = gate;
        if spec.stonewall {
            start = start.max(ends.iter().copied().max().unwrap_or(0));
            gate = start;
        }
        if let Some(target) = &spec.wait_for {
            if let Some(waitee) = jobs[..index].iter().position(|job| &job.name == target) {
                start = start.max(ends[waitee]);
            }
        }
        let mut length = 0u64;
        for clone in clones.iter().filter(|clone| clone.job == index) {
            length = length.max(clone_ns(spec, clone.region_bytes)?);
        }
        ends.push(start.saturating_add(length));
    }
    Some(ends.into_iter().max().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn job(lines: &str) -> JobSpec {
        let text = format!("[j]\n{lines}\n");
        let set = crate::fio::parse_str(&text, "j.fio", &Default::default()).unwrap();
        set.jobs[0].clone()
    }

    fn jobs(text: &str) -> Vec<JobSpec> {
        crate::fio::parse_str(text, "j.fio", &Default::default())
            .unwrap()
            .jobs
    }

    const MIB: u64 = 1 << 20;

    /// Issue 17: the count a trace's size is estimated from. A time-based job is bounded
    /// only by a rate (runtime times rate_iops, or the byte rate in its smallest block);
    /// without one, nothing bounds it.
    #[test]
    fn clone_ios_take_the_tightest_limit() {
        let mib = MIB;
        assert_eq!(clone_ios(&job("rw=read\nbs=4k\nsize=1m"), mib), Some(256));
        assert_eq!(clone_ios(&job("rw=read\nbs=4k\nloops=3"), mib), Some(768));
        assert_eq!(
            clone_ios(&job("rw=write\nbs=4k\nverify=crc32c"), mib),
            Some(512)
        );
        assert_eq!(
            clone_ios(&job("rw=read\nbs=4k\nnumber_ios=10"), mib),
            Some(10)
        );
        let timed = "rw=randrw\nbs=4k\ntime_based=1\nruntime=600";
        assert_eq!(clone_ios(&job(timed), mib), None);
        assert_eq!(
            clone_ios(&job(&format!("{timed}\nrate_iops=50")), mib),
            Some(60_000)
        );
        assert_eq!(
            clone_ios(&job(&format!("{timed}\nrate_iops=50,10")), mib),
            Some(36_000)
        );
        assert_eq!(
            clone_ios(&job(&format!("{timed}\nrate=4m")), mib),
            Some(1_228_800)
        );
    }

    /// fio 3.33: a time-based job ignores `io_size` and `number_ios` (1 s of `io_size=64k`
    /// did 295941 reads; of `number_ios=10`, 7404428). The trace estimate used to take
    /// io_size and number_ios as the count of such a job.
    #[test]
    fn time_based_jobs_ignore_io_size_and_number_ios() {
        let timed = "rw=read\nbs=4k\ntime_based\nruntime=1";
        assert_eq!(clone_ios(&job(&format!("{timed}\nio_size=64k")), MIB), None);
        assert_eq!(
            clone_ios(&job(&format!("{timed}\nnumber_ios=10")), MIB),
            None
        );
        let rated = format!("{timed}\nio_size=64k\nrate_iops=100");
        assert_eq!(clone_ios(&job(&rated), MIB), Some(100));
    }

    /// fio 3.33: `number_ios` counts over every loop (10 with loops=3 did 30 reads), and a
    /// verify pass reads back the writes it allowed (10 writes, then 10 reads). Both old
    /// estimates stopped at 10.
    #[test]
    fn number_ios_counts_every_loop_and_its_read_back() {
        let looped = job("rw=read\nbs=4k\nnumber_ios=10\nloops=3");
        assert_eq!(clone_ios(&looped, MIB), Some(30));
        let verified = job("rw=write\nbs=4k\nnumber_ios=10\nverify=crc32c");
        assert_eq!(clone_ios(&verified, MIB), Some(20));
    }

    /// fio 3.33: only written blocks are read back: `rw=read verify=null` did its 256 reads
    /// only (the trace estimate doubled it), `verify_only` writes nothing (the watchdog
    /// doubled it), and `rw=randrw` reads back its writes' share (256 + 124 in fio).
    #[test]
    fn only_writes_are_read_back() {
        assert_eq!(
            clone_ios(&job("rw=read\nbs=4k\nverify=null"), MIB),
            Some(256)
        );
        let only = job("rw=write\nbs=4k\nverify=crc32c\nverify_only");
        assert_eq!(clone_ios(&only, MIB), Some(256));
        let mixed = job("rw=randrw\nbs=4k\nverify=crc32c");
        assert_eq!(clone_ios(&mixed, MIB), Some(384));
        let pace = Pace {
            bytes_per_s: MIB,
            iops: 1 << 20,
        };
        assert_eq!(clone_time_at(&only, MIB, pace), Some(1_000_000_000));
    }

    /// fio 3.33: only the directions a job does count: `rw=read bs=64k,4k` over 1 MiB did 16
    /// reads. The watchdog took the write size (256 I/Os) and a write rate cap for it.
    #[test]
    fn other_directions_block_sizes_and_rates_do_not_count() {
        let spec = job("rw=read\nbs=64k,4k\nrate=,1k");
        assert_eq!(clone_ios(&spec, MIB), Some(16));
        let pace = Pace {
            bytes_per_s: MIB,
            iops: 16,
        };
        assert_eq!(clone_time_at(&spec, MIB, pace), Some(1_000_000_000));
    }

    /// fio 3.33 (null engine, time-based, wall time measured): `c wait_for=b` runs once b
    /// is done, beside a (2.4 s for a 2 s, b 1 s, c 1 s); `d wait_for=b` after a stonewall
    /// `c` starts with c (5.5 s for a 2, b 1, c 1, d 3). The watchdog made each wait_for a
    /// phase (3 s and 6 s here); the progress bar ignored wait_for (2 s, not 3, for `c
    /// wait_for=a`).
    #[test]
    fn wait_for_waits_for_its_job_and_stonewalls_hold_later_starts() {
        let head = "[global]\ntime_based\n[a]\nruntime=2\n[b]\nruntime=1\n";
        let after_b = jobs(&format!("{head}[c]\nwait_for=b\nruntime=1\n"));
        let length = |jobs: &[JobSpec]| {
            let clones = clone_regions(jobs, None);
            run_length(jobs, &clones, |spec, _| clone_time_bound(spec))
        };
        assert_eq!(length(&after_b), Some(2_000_000_000));
        let chained = jobs(&format!("{head}[c]\nwait_for=a\nruntime=1\n"));
        assert_eq!(length(&chained), Some(3_000_000_000));
        let walled = jobs(&format!(
            "{head}[c]\nstonewall\nruntime=1\n[d]\nwait_for=b\nruntime=3\n"
        ));
        assert_eq!(length(&walled), Some(5_000_000_000));
    }

    /// The I/O count held against fio 3.33 itself, run in a scratch folder on a scratch
    /// file: written blocks read back, number_ios over loops, the read block size only.
    #[test]
    fn io_counts_match_fio() {
        let dir = crate::scratch::ScratchDir::new("extent-fio");
        let cases = [
            "rw=write\nbs=4k\nsize=256k\nverify=crc32c",
            "rw=read\nbs=4k\nsize=256k\nnumber_ios=10\nloops=3",
            "rw=read\nbs=64k,4k\nsize=256k\nio_size=128k\nloops=2",
            "rw=randrw\nbs=4k\nsize=256k\nnumber_ios=20\nverify=md5\nrwmixread=0",
        ];
        for (index, lines) in cases.iter().enumerate() {
            let text = format!("[j]\nfilename=data{index}\n{lines}\n");
            std::fs::write(dir.join("j.fio"), &text).unwrap();
            let run = Command::new("fio")
                .args(["--output-format=json", "j.fio"])
                .current_dir(&*dir)
                .output();
            let Ok(run) = run else {
                eprintln!("SKIPPED: io_counts_match_fio: fio not installed");
                return;
            };
            assert!(run.status.success(), "fio failed on {lines:?}");
            let fio = total_ios(&String::from_utf8_lossy(&run.stdout));
            let expect = clone_ios(&jobs(&text)[0], 256 << 10);
            assert_eq!(expect, Some(fio), "{lines:?}");
        }
    }

    /// Every `"total_ios" : N` of fio's JSON output (read, write, trim and sync) added up.
    fn total_ios(json: &str) -> u64 {
        json.split("\"total_ios\"")
            .skip(1)
            .map(|rest| {
                let digits = rest.trim_start_matches([' ', ':']);
                let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
                digits[..end].parse::<u64>().unwrap()
            })
            .sum()
    }
}
