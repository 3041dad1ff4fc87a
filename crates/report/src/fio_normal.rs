//! fio's normal (human) output: the per-job block, the group summary and disk stats.
//!
//! Line by line this follows fio 3.33's `show_thread_status_normal()`, `show_ddir_status()`,
//! `show_group_stats()` and `show_disk_util()`: the `IOPS=..., BW=...` line with fio's
//! 4-significant-figure unit scaling (`num2str()`), `slat`/`clat`/` lat` lines in an
//! automatically chosen unit, the percentile block laid out as fio lays it out, `bw`/`iops`
//! sample lines, latency buckets five per line, depth distributions, then
//! `Run status group N (all jobs):` and `Disk stats (read/write):`. The job header's date is
//! [`RunResult::time`], so the text is byte-stable for a given run.

use crate::stats::{
    DiskStats, GroupStats, JobStats, RunResult, DDIR_COUNT, LAT_KEYS_MS, LAT_KEYS_SHORT,
};
use crate::LatStat;
use std::fmt::Write as _;

/// fio's default `sig_figs`.
const SIG_FIGS: usize = 4;
/// Direction names in `show_ddir_status()`.
const DIR_NAMES: [&str; DDIR_COUNT] = ["read", "write", "trim"];
/// Direction labels in the group summary.
const GROUP_NAMES: [&str; DDIR_COUNT] = ["   READ", "  WRITE", "   TRIM"];

/// Unit suffix of [`num2str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    None,
    Byte,
    BytePerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Byte => "B",
            Unit::BytePerSec => "B/s",
        }
    }
}

/// fio's `num2str()`: `num` divided by 1000 (or 1024 with `pow2`) until it has at most
/// `maxlen` digits, with as many decimals as still fit, and an SI (or IEC) prefix.
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    num2str_from(num, 0, maxlen, pow2, unit)
}

/// fio's `num2str()` with `base` 1024: `num_kib` is already in KiB, so its prefix starts one
/// step up (`Ki`, or fio's `k` when not `pow2`, the same number read as kB).
pub fn num2str_kib(num_kib: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    num2str_from(num_kib, 1, maxlen, pow2, unit)
}

fn num2str_from(num: u64, first_prefix: usize, maxlen: usize, pow2: bool, unit: Unit) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { IEC } else { SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut num = num;
    let mut post = first_prefix;
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefixes.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }
    let Some(modulo) = modulo else {
        return format!("{num}{}{}", prefixes[post], unit.suffix());
    };
    let digits = num.to_string().len();
    if maxlen <= digits + 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{}", prefixes[post], unit.suffix());
    }
    let decimals = maxlen - digits - 1;
    let frac = format!("{:.*}", decimals, modulo as f64 / thousand as f64);
    // `frac` is "0.xxx"; fio keeps what follows "0." (and, like fio, drops a round-up to 1).
    let tail = frac.get(2..).unwrap_or("");
    format!("{num}.{tail}{}{}", prefixes[post], unit.suffix())
}

/// `    clat (usec): min=.., max=.., avg=.., stdev=..` (fio's `display_lat()`), unit chosen by
/// the spread of the values as fio chooses it.
fn display_lat(out: &mut String, name: &str, s: &LatStat) {
    let (mut min, mut max, mut mean, mut dev) = (s.min(), s.max(), s.mean(), s.stddev());
    let mut base = "(nsec)";
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        base = "(msec)";
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1_000_000.0;
        dev /= 1_000_000.0;
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        base = "(usec)";
        min /= 1000;
        max /= 1000;
        mean /= 1000.0;
        dev /= 1000.0;
    }
    let _ = writeln!(
        out,
        "    {name} {base}: min={}, max={}, avg={mean:5.02}, stdev={dev:5.02}",
        num2str(min, 6, false, Unit::None),
        num2str(max, 6, false, Unit::None),
    );
}

/// The percentile block (fio's `show_clat_percentiles()`, precision 2).
fn show_percentiles(out: &mut String, pre: &str, s: &LatStat, list: &[f64]) {
    let vals = s.percentiles(list);
    if vals.is_empty() {
        return;
    }
    let minv = vals.iter().map(|v| v.1).min().unwrap_or(0);
    let maxv = vals.iter().map(|v| v.1).max().unwrap_or(0);
    let (scale_down, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    let scaled_max = maxv / divisor;
    let digits = if scaled_max == 0 {
        1
    } else {
        scaled_max.to_string().len()
    };
    let time_width = digits.max(5);
    let precision = 2;
    let per_line = (80 - 7) / (precision + 10 + time_width);
    let len = vals.len();
    for (j, &(p, v)) in vals.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let mut v = v;
        for _ in 0..scale_down {
            v = v.div_ceil(1000);
        }
        let is_last = j == len - 1;
        let _ = write!(
            out,
            " {p:5.2}th=[{v:>time_width$}]{}",
            if is_last { '\n' } else { ',' }
        );
        if is_last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

fn show_ddir(out: &mut String, job: &JobStats, ddir: usize, group: &GroupStats) {
    let runt = job.dir_runtime_ms(ddir);
    if runt == 0 {
        return;
    }
    let d = &job.dirs[ddir];
    let bw = job.bw_bytes(ddir);
    let iops = d.total_ios * 1000 / runt;
    let post = if ddir == 0 { "" } else { "; 0 zone resets" };
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec){}",
        DIR_NAMES[ddir],
        num2str(iops, SIG_FIGS, false, Unit::None),
        num2str(bw, SIG_FIGS, true, Unit::BytePerSec),
        num2str(bw, SIG_FIGS, false, Unit::BytePerSec),
        num2str(d.io_bytes, SIG_FIGS, true, Unit::Byte),
        runt,
        post
    );
    if d.slat.count() > 0 {
        display_lat(out, "slat", &d.slat);
    }
    if d.clat.count() > 0 {
        display_lat(out, "clat", &d.clat);
    }
    if d.lat().count() > 0 {
        display_lat(out, " lat", d.lat());
    }
    // fio 3.33's `show_ddir_status()`: one block per series whose percentiles are on.
    let blocks = [
        (job.slat_percentiles, "slat", &d.slat),
        (job.clat_percentiles, "clat", &d.clat),
        (job.lat_percentiles, "lat", d.lat()),
    ];
    for (on, pre, series) in blocks {
        if on {
            show_percentiles(out, pre, series, &job.percentile_list);
        }
    }
    let bw_s = job.bw_samples(ddir);
    if bw_s.samples > 0 {
        let agg = group.agg_percent(ddir, bw_s.mean);
        let (mut min, mut max, mut mean, mut dev) = (bw_s.min, bw_s.max, bw_s.mean, bw_s.stddev);
        let mut unit = "KiB";
        if mean > 1024.0 * 1024.0 {
            min /= 1024;
            max /= 1024;
            mean /= 1024.0;
            dev /= 1024.0;
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={agg:3.2}%, avg={mean:5.02}, stdev={dev:5.02}, samples={}",
            bw_s.samples
        );
    }
    let io = job.iops_samples(ddir);
    if io.samples > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
            io.min, io.max, io.mean, io.stddev, io.samples
        );
    }
}

/// Latency bucket lines, five entries per line, nonzero buckets only (fio's `show_lat()`).
fn show_lat(out: &mut String, values: &[f64], keys: &[&str], unit: &str) {
    let mut new_line = true;
    let mut shown = false;
    let mut line = 0;
    for (v, k) in values.iter().zip(keys) {
        if *v <= 0.0 {
            continue;
        }
        shown = true;
        if new_line {
            if line > 0 {
                out.push('\n');
            }
            let _ = write!(out, "  lat ({unit})   : ");
            new_line = false;
            line = 0;
        }
        if line > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{k}={v:3.2}%");
        line += 1;
        if line == 5 {
            new_line = true;
        }
    }
    if shown {
        out.push('\n');
    }
}

fn dist_line(out: &mut String, label: &str, keys: &[&str], values: &[f64]) {
    out.push_str(label);
    for (i, (k, v)) in keys.iter().zip(values).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{k}={v:3.1}%");
    }
    out.push('\n');
}

/// One job's block. Kernel-free analogue of fio's `show_thread_status_normal()`.
pub fn job_block(job: &JobStats, group: &GroupStats, time: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={:2}: pid={}: {}",
        job.name, job.groupid, job.nr_jobs, job.error, job.pid, time
    );
    for ddir in 0..DDIR_COUNT {
        show_ddir(&mut out, job, ddir, group);
    }
    let lat = job.lat_dist();
    show_lat(&mut out, &lat[0..10], &LAT_KEYS_SHORT, "nsec");
    show_lat(&mut out, &lat[10..20], &LAT_KEYS_SHORT, "usec");
    show_lat(&mut out, &lat[20..32], &LAT_KEYS_MS, "msec");
    if job.sync.count() > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        display_lat(&mut out, "sync", &job.sync);
        show_percentiles(&mut out, "sync", &job.sync, &job.percentile_list);
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        job.usr_cpu, job.sys_cpu, job.ctx, job.majf, job.minf
    );
    dist_line(
        &mut out,
        "  IO depths    : ",
        &["1", "2", "4", "8", "16", "32", ">=64"],
        &job.depth_dist(),
    );
    let batch = ["0", "4", "8", "16", "32", "64", ">=64"];
    dist_line(&mut out, "     submit    : ", &batch, &job.submit_dist());
    dist_line(&mut out, "     complete  : ", &batch, &job.complete_dist());
    let d = &job.dirs;
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        d[0].total_ios + d[0].failed_ios,
        d[1].total_ios + d[1].failed_ios,
        d[2].total_ios + d[2].failed_ios,
        job.sync.count(),
        d[0].short_ios,
        d[1].short_ios,
        d[2].short_ios,
        d[0].drop_ios,
        d[1].drop_ios,
        d[2].drop_ios
    );
    if job.continue_on_error {
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            job.total_err,
            job.first_error,
            strerror(job.first_error)
        );
    }
    if job.latency_depth > 0 {
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            job.latency_target_ns, job.latency_window_ns, job.latency_percentile, job.latency_depth
        );
    }
    if let Some(ss) = &job.steadystate {
        show_steadystate(&mut out, ss);
    }
    out
}

/// `  steadystate  : attained=.., bw=.. (..), iops=.., iops slope=..%` (fio 3.33's
/// `show_ss_normal()`): the window's mean rates, then the criterion's last value.
fn show_steadystate(out: &mut String, ss: &iosched_workload::steady_state::SteadyStateReport) {
    let mean = |v: &[u64]| v.iter().sum::<u64>() / (v.len().max(1) as u64);
    let bw_kib = mean(&ss.bw) / 1024;
    let spec = &ss.spec;
    let criterion = if ss.criterion.is_finite() {
        ss.criterion
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={criterion:.3}{}",
        if ss.attained { "yes" } else { "no" },
        num2str_kib(bw_kib, SIG_FIGS, true, Unit::BytePerSec),
        num2str_kib(bw_kib, SIG_FIGS, false, Unit::BytePerSec),
        num2str(mean(&ss.iops), SIG_FIGS, false, Unit::None),
        if spec.iops { "iops" } else { "bw" },
        if spec.slope { " slope" } else { " mean dev" },
        if spec.percent { "%" } else { "" }
    );
}

/// C's `strerror()`: the message of an errno, without Rust's "(os error N)".
fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.rfind(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// `Run status group N (all jobs):` and its per-direction lines (fio's `show_group_stats()`),
/// starting with the blank line fio prints before it.
pub fn group_block(g: &GroupStats) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nRun status group {} (all jobs):", g.groupid);
    for (ddir, label) in GROUP_NAMES.iter().enumerate() {
        if g.max_run_ms[ddir] == 0 {
            continue;
        }
        let b = |v: u64, pow2: bool| num2str(v, SIG_FIGS, pow2, Unit::BytePerSec);
        let _ = writeln!(
            out,
            "{}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            label,
            b(g.agg_bw_bytes[ddir], true),
            b(g.agg_bw_bytes[ddir], false),
            b(g.min_bw_bytes[ddir], true),
            b(g.max_bw_bytes[ddir], true),
            b(g.min_bw_bytes[ddir], false),
            b(g.max_bw_bytes[ddir], false),
            num2str(g.io_bytes[ddir], SIG_FIGS, true, Unit::Byte),
            num2str(g.io_bytes[ddir], SIG_FIGS, false, Unit::Byte),
            g.min_run_ms[ddir],
            g.max_run_ms[ddir]
        );
    }
    out
}

/// `Disk stats (read/write):` and one line per disk, starting with a blank line. fio 3.33
/// prints no `sectors=` here (later releases do; the JSON carries them in neither).
pub fn disk_block(disks: &[DiskStats]) -> String {
    let mut out = String::new();
    if disks.is_empty() {
        return out;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for d in disks {
        let _ = writeln!(
            out,
            "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
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
    out
}

/// The whole report: every job block, every group summary, then disk stats.
pub fn to_string(run: &RunResult) -> String {
    let groups = run.groups();
    let mut out = String::new();
    for job in &run.jobs {
        let group = iosched_driver::stats::find_group(&groups, job.groupid)
            .cloned()
            .unwrap_or_default();
        out.push_str(&job_block(job, &group, &run.time));
    }
    for g in &groups {
        out.push_str(&group_block(g));
    }
    out.push_str(&disk_block(&run.disks));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_matches_fio_samples() {
        // Figures from a real fio 3.33 run: 1677856 I/Os of 4 KiB in 1001 ms.
        assert_eq!(num2str(1_676_179, 4, false, Unit::None), "1676k");
        assert_eq!(
            num2str(6_865_632_543, 4, true, Unit::BytePerSec),
            "6548MiB/s"
        );
        assert_eq!(
            num2str(6_865_632_543, 4, false, Unit::BytePerSec),
            "6866MB/s"
        );
        assert_eq!(num2str(6_872_498_176, 4, true, Unit::Byte), "6554MiB");
        assert_eq!(num2str(65_217, 6, false, Unit::None), "65217");
        // Room for decimals: 12345 -> "12.3k".
        assert_eq!(num2str(12_345, 4, false, Unit::None), "12.3k");
        assert_eq!(num2str(999, 4, false, Unit::None), "999");
        assert_eq!(num2str(4096, 4, true, Unit::Byte), "4096B");
        assert_eq!(num2str(40_960, 4, true, Unit::Byte), "40.0KiB");
    }

    #[test]
    fn lat_buckets_wrap_after_five() {
        let mut out = String::new();
        let v = [0.0, 0.0, 0.0, 0.27, 98.91, 0.29, 0.52, 0.01, 0.01, 0.01];
        show_lat(&mut out, &v, &LAT_KEYS_SHORT, "nsec");
        assert_eq!(
            out,
            "  lat (nsec)   : 20=0.27%, 50=98.91%, 100=0.29%, 250=0.52%, 500=0.01%\n  lat (nsec)   : 750=0.01%, 1000=0.01%\n"
        );
    }

    /// fio 3.33's `show_ddir_status()` on a libaio job with `slat_percentiles=1
    /// lat_percentiles=1 clat_percentiles=0`: a `slat percentiles` block, then a `lat
    /// percentiles` one, and none for clat.
    /// fio 3.33 on this machine, a rate-limited psync job whose fastest writes took under
    /// 2 µs: nanoseconds, 7 digits wide, so three entries a row (`per_line = 73 / 19`).
    #[test]
    fn wide_nanosecond_percentiles_take_three_a_row() {
        let mut s = LatStat::new();
        s.record(1_576);
        for _ in 0..98 {
            s.record(60_000);
        }
        s.record(2_375_680);
        let mut out = String::new();
        show_percentiles(&mut out, "clat", &s, &crate::DEFAULT_PERCENTILES);
        let rows: Vec<&str> = out.lines().skip(1).collect();
        assert!(out.starts_with("    clat percentiles (nsec):\n"), "{out}");
        assert_eq!(rows.len(), 6, "17 entries, 3 a row: {out}");
        assert_eq!(rows[0].matches("th=[").count(), 3, "{out}");
    }

    #[test]
    fn percentile_blocks_follow_each_series_switch() {
        let mut job = JobStats::new("p", 0, &crate::stats::DEFAULT_PERCENTILES);
        job.slat_percentiles = true;
        job.lat_percentiles = true;
        job.clat_percentiles = false;
        job.record_io(0, 4096, 0, 40_000, 41_000);
        job.set_runtime(0, 1_000_000_000);
        let text = job_block(&job, &GroupStats::default(), "");
        let heads: Vec<&str> = text.lines().filter(|l| l.contains("percentiles")).collect();
        assert_eq!(
            heads,
            vec![
                "    slat percentiles (nsec):",
                "    lat percentiles (nsec):"
            ]
        );
    }

    /// fio 3.33 printed `  steadystate  : attained=yes, bw=45.2MiB/s (46.3MB/s),
    /// iops=11.6k, iops mean dev=4.322%` for `ss=iops:10% ss_dur=2` (psync randread on a
    /// file): the window's mean rates, bandwidth from KiB as fio's `num2str()` with base 1024.
    #[test]
    fn steadystate_line_as_fios() {
        use iosched_workload::steady_state::{SteadyStateReport, SteadyStateSpec};
        let mut job = JobStats::new("s", 0, &crate::stats::DEFAULT_PERCENTILES);
        job.steadystate = Some(SteadyStateReport {
            spec: SteadyStateSpec {
                iops: true,
                slope: false,
                limit: 10.0,
                percent: true,
                window_s: 2,
                ramp_ns: 0,
            },
            attained: true,
            criterion: 4.322_049,
            max_deviation: 0.0,
            slope: 0.0,
            iops: vec![11_500, 11_700],
            bw: vec![46_285 * 1024 - 100, 46_285 * 1024 + 100],
        });
        let text = job_block(&job, &GroupStats::default(), "");
        assert_eq!(
            text.lines().last().unwrap(),
            "  steadystate  : attained=yes, bw=45.2MiB/s (46.3MB/s), iops=11.6k, iops mean dev=4.322%"
        );
    }
}
