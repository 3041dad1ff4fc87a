//! The lines fio prints before any result when the normal format is on: one line per job
//! section as it reads the job file (`name: (g=G): rw=..., bs=(R) ..., ioengine=..,
//! iodepth=N`, then `...` when the section has more clones), its version, and
//! `Starting N processes`. fio 3.33 writes them from `add_job()`, `parse_options()` and
//! `run_threads()`; they open the normal output, before the terse or json documents of a
//! comma list, and the blank line that opens the job blocks follows them.

use std::fmt::Write as _;

use iosched_workload::{JobSet, JobSpec};

use crate::fio_normal::{num2str, Unit};

/// fio's default `sig_figs`, which the block sizes are printed with.
const SIG_FIGS: usize = 4;

/// The banner of `jobs`, with `version` where fio prints `fio-3.33`.
pub fn banner(jobs: &JobSet, version: &str) -> String {
    let mut out = String::new();
    for spec in jobs.jobs.iter().filter(|spec| spec.numjobs > 0) {
        out.push_str(&job_line(spec));
        if spec.numjobs > 1 {
            out.push_str("...\n");
        }
    }
    let _ = writeln!(out, "{version}");
    let count = |thread: bool| -> u32 {
        let specs = jobs.jobs.iter().filter(|spec| spec.thread == thread);
        specs.map(|spec| spec.numjobs).sum()
    };
    out.push_str(&starting_line(count(true), count(false)));
    out
}

/// `name: (g=G): rw=MODE, bs=(R) min-max, (W) min-max, (T) min-max, ioengine=E, iodepth=N`.
fn job_line(spec: &JobSpec) -> String {
    // fio prints sizes in IEC units when kb_base is a power of two (1024, its default).
    let pow2 = spec.kb_base.is_power_of_two();
    let size = |bytes: u64| num2str(bytes, SIG_FIGS, pow2, Unit::Byte);
    let range = |ddir: usize| {
        format!(
            "{}-{}",
            size(spec.bs[ddir].min()),
            size(spec.bs[ddir].max())
        )
    };
    format!(
        "{}: (g={}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}\n",
        spec.name,
        spec.group_id,
        spec.rw.fio_name(),
        range(0),
        range(1),
        range(2),
        spec.ioengine.fio_name(),
        spec.iodepth
    )
}

/// `Starting 2 threads and 1 process`, as `run_threads()` words it.
fn starting_line(threads: u32, processes: u32) -> String {
    let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n > 1 { many } else { one });
    let mut parts = Vec::new();
    if threads > 0 {
        parts.push(plural(threads, "thread", "threads"));
    }
    if processes > 0 {
        parts.push(plural(processes, "process", "processes"));
    }
    format!("Starting {}\n", parts.join(" and "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_workload::{BlockSizes, IoEngine, RwMode};

    fn spec(name: &str, numjobs: u32) -> JobSpec {
        let mut spec = JobSpec::new(name);
        spec.numjobs = numjobs;
        spec
    }

    /// The lines fio 3.33 printed for the same two sections (`fio n2.fio` on this machine).
    #[test]
    fn two_sections_with_clones_as_fio_prints_them() {
        let mut mixed = spec("a", 2);
        mixed.rw = RwMode::RandRw;
        mixed.bs = [0, 1, 2].map(|_| BlockSizes::Range {
            min: 4096,
            max: 16384,
        });
        mixed.ioengine = IoEngine::IoUring;
        mixed.iodepth = 2;
        let mut seq = spec("b", 3);
        seq.group_id = 1;
        seq.rw = RwMode::Read;
        seq.bs = [0, 1, 2].map(|_| BlockSizes::Fixed(65536));
        seq.ioengine = IoEngine::IoUring;
        seq.iodepth = 1;
        let jobs = JobSet {
            jobs: vec![mixed, seq],
            ..JobSet::default()
        };
        assert_eq!(
            banner(&jobs, "fio-3.33"),
            "a: (g=0): rw=randrw, bs=(R) 4096B-16.0KiB, (W) 4096B-16.0KiB, (T) 4096B-16.0KiB, \
             ioengine=io_uring, iodepth=2\n...\n\
             b: (g=1): rw=read, bs=(R) 64.0KiB-64.0KiB, (W) 64.0KiB-64.0KiB, (T) 64.0KiB-64.0KiB, \
             ioengine=io_uring, iodepth=1\n...\n\
             fio-3.33\nStarting 5 processes\n"
        );
    }

    #[test]
    fn threads_and_processes_are_counted_apart() {
        let mut threaded = spec("t", 2);
        threaded.thread = true;
        let jobs = JobSet {
            jobs: vec![threaded, spec("p", 1)],
            ..JobSet::default()
        };
        let text = banner(&jobs, "v");
        assert!(
            text.ends_with("v\nStarting 2 threads and 1 process\n"),
            "{text}"
        );
    }
}
