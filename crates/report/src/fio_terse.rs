//! fio's terse (`--minimal`) output, version 3: one `;`-separated line per job.
//!
//! The field order is fio 3.33's `show_thread_status_terse_all()` for version 3, which
//! mmtests and many scripts split by position: 5 header fields, 41 per direction for read and
//! write (no trim block in v3), 5 CPU fields, 7 depth buckets, 10 µs and 12 ms latency
//! buckets, then 9 fields per disk — 130 fields with one disk. Latencies are µs (ns / 1000,
//! integers truncated, means as `%f`), bandwidth KiB/s. The first µs bucket also holds the sum
//! of the ns buckets (fio's `stat_calc_lat_nu()`), which is why it can read `100.01%`.

use crate::stats::{DiskStats, GroupStats, JobStats, RunResult, DDIR_READ, DDIR_WRITE};
use crate::LatStat;
use std::fmt::Write as _;

/// Terse format version written.
pub const TERSE_VERSION: u32 = 3;
/// fio's `FIO_IO_U_LIST_MAX_LEN`: percentile slots per direction.
pub const PERCENTILE_SLOTS: usize = 20;

fn lat_fields(out: &mut String, s: &LatStat) {
    let _ = write!(
        out,
        ";{};{};{:.6};{:.6}",
        s.min() / 1000,
        s.max() / 1000,
        s.mean() / 1000.0,
        s.stddev() / 1000.0
    );
}

fn ddir_fields(out: &mut String, job: &JobStats, ddir: usize, group: &GroupStats) {
    let d = &job.dirs[ddir];
    // IOPS as fio's integer `1000 * total_ios / runtime_ms` (the bandwidth formula's shape).
    let _ = write!(
        out,
        ";{};{};{};{}",
        d.io_bytes / 1024,
        job.bw_kib(ddir),
        crate::stats::bw_bytes(d.total_ios, job.dir_runtime_ms(ddir)),
        job.dir_runtime_ms(ddir)
    );
    lat_fields(out, &d.slat);
    lat_fields(out, &d.clat);
    let pcts = terse_percentiles(job, ddir);
    for slot in 0..PERCENTILE_SLOTS {
        match pcts.get(slot) {
            Some((p, v)) => {
                let _ = write!(out, ";{:.6}%={}", p, v / 1000);
            }
            None => out.push_str(";0%=0"),
        }
    }
    lat_fields(out, d.lat());
    let bw = job.bw_samples(ddir);
    let agg = if bw.samples > 0 {
        group.agg_percent(ddir, bw.mean)
    } else {
        0.0
    };
    let _ = write!(
        out,
        ";{};{};{:.6}%;{:.6};{:.6}",
        bw.min, bw.max, agg, bw.mean, bw.stddev
    );
}

/// The percentile slots' figures: of total latency with `lat_percentiles=1`, else of
/// completion latency, none with `clat_percentiles=0`. fio computes them even for a direction
/// without samples, where every percentile of its list reads 0 (`calc_clat_percentiles()` on an
/// empty histogram: each share of 0 samples is reached at once, in bucket 0).
fn terse_percentiles(job: &JobStats, ddir: usize) -> Vec<(f64, u64)> {
    let d = &job.dirs[ddir];
    let series = if job.lat_percentiles {
        d.lat()
    } else if job.clat_percentiles {
        &d.clat
    } else {
        return Vec::new();
    };
    if series.count() > 0 {
        return series.percentiles(&job.percentile_list);
    }
    let mut list: Vec<f64> = job
        .percentile_list
        .iter()
        .copied()
        .take_while(|&p| p != 0.0)
        .collect();
    list.sort_by(f64::total_cmp);
    list.into_iter().map(|p| (p, 0)).collect()
}

/// The per-disk fields: name, ios, merges, ticks, in_queue, util.
fn disk_fields(out: &mut String, d: &DiskStats) {
    let _ = write!(
        out,
        ";{};{};{};{};{};{};{};{};{:3.2}%",
        d.name,
        d.read_ios,
        d.write_ios,
        d.read_merges,
        d.write_merges,
        d.read_ticks_ms,
        d.write_ticks_ms,
        d.in_queue_ms,
        d.util_pct.min(100.0)
    );
}

/// One job's terse line (no trailing newline). `group` is the job's group aggregate,
/// `disks` are appended to the line.
pub fn job_line(version: &str, job: &JobStats, group: &GroupStats, disks: &[DiskStats]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{TERSE_VERSION};{version};{};{};{}",
        job.name, job.groupid, job.error
    );
    ddir_fields(&mut out, job, DDIR_READ, group);
    ddir_fields(&mut out, job, DDIR_WRITE, group);
    let _ = write!(
        out,
        ";{:.6}%;{:.6}%;{};{};{}",
        job.usr_cpu, job.sys_cpu, job.ctx, job.majf, job.minf
    );
    for v in job.depth_dist() {
        let _ = write!(out, ";{v:3.1}%");
    }
    let lat = job.lat_dist();
    let mut usec = [0.0; 10];
    usec.copy_from_slice(&lat[10..20]);
    usec[0] += lat[0..10].iter().sum::<f64>();
    for v in usec.iter().chain(&lat[20..32]) {
        let _ = write!(out, ";{v:3.2}%");
    }
    for d in disks {
        disk_fields(&mut out, d);
    }
    if job.continue_on_error {
        let _ = write!(out, ";{};{}", job.total_err, job.first_error);
    }
    out
}

/// Every job of the run, one terse line each, newline-terminated.
pub fn to_string(run: &RunResult) -> String {
    let groups = run.groups();
    let mut out = String::new();
    for job in &run.jobs {
        let group = iosched_driver::stats::find_group(&groups, job.groupid)
            .cloned()
            .unwrap_or_default();
        out.push_str(&job_line(&run.fio_version, job, &group, &run.disks));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::DEFAULT_PERCENTILES;

    #[test]
    fn one_disk_gives_130_fields() {
        let mut job = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        job.record_io(DDIR_READ, 4096, 0, 1000, 51_000);
        job.set_runtime(0, 1_000_000_000);
        let line = job_line(
            "iosched-0.1.0",
            &job,
            &GroupStats::default(),
            &[DiskStats::default()],
        );
        let fields: Vec<&str> = line.split(';').collect();
        assert_eq!(fields.len(), 130);
        assert_eq!(fields[0], "3");
        // 1-based field 14/15: clat min/max in µs.
        assert_eq!(fields[13], "50");
        // 1-based field 24: the 50th percentile slot, fio's bucket of 50 µs (49920 ns).
        assert_eq!(fields[23], "50.000000%=49");
        // Slots 18..20 of the percentile block are unused.
        assert_eq!(fields[36], "0%=0");
        // The write block is all zeros, and its percentile slots carry the list with 0, as
        // fio 3.33 prints them for a read job (`fio --output-format=terse`, rw=read).
        assert_eq!(fields[46], "0");
        assert_eq!(fields[58], "1.000000%=0");
        assert_eq!(fields[74], "99.990000%=0");
        assert_eq!(fields[75], "0%=0");
    }

    /// fio 3.33's `show_ddir_status_terse()`: with `lat_percentiles=1` the slots are total
    /// latency's percentiles; with `clat_percentiles=0` (and no lat) all 20 are `0%=0`.
    #[test]
    fn percentile_slots_follow_lat_and_clat_percentiles() {
        let mut job = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        job.record_io(DDIR_READ, 4096, 0, 500_000, 1_000_000);
        job.set_runtime(0, 1_000_000_000);
        let slot50 = |job: &JobStats| {
            let line = job_line("v", job, &GroupStats::default(), &[]);
            line.split(';').nth(23).unwrap().to_string()
        };
        // clat 500 µs: bucket [499712, 503808) named 501760; lat 1 ms: named 1003520.
        assert_eq!(slot50(&job), "50.000000%=501");
        job.lat_percentiles = true;
        assert_eq!(slot50(&job), "50.000000%=1003");
        job.lat_percentiles = false;
        job.clat_percentiles = false;
        assert_eq!(slot50(&job), "0%=0");
    }
}
