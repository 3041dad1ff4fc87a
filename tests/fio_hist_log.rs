//! `write_hist_log` read by fio's `tools/hist/fio-histo-log-pctiles.py` (shipped by the
//! Debian fio package as `/usr/share/doc/fio/fio-histo-log-pctiles.py.gz`, or named by
//! `FIO_HISTO_LOG_PCTILES`).
//!
//! Outside references: fio 3.33's own histogram log of the same kind of job on this machine
//! (same line shape: time, direction, block size, 1856 buckets; one line per `log_hist_msec`)
//! and fio's script, which must read iosched's log, count every completion, and find
//! iosched's JSON percentiles to within the fio bucket each lies in (the script interpolates
//! inside a bucket).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{skip, target_scratch};

use iosched_report::fio_plat::{bucket_bounds, bucket_index, PLAT_NR};
use serde_json::Value;

const PERCENTILES: [&str; 5] = ["1", "50", "90", "99", "99.9"];

/// fio's script as a file in `dir`, if it is here (unpacked from the package's docs).
fn script(dir: &Path) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FIO_HISTO_LOG_PCTILES") {
        return Some(PathBuf::from(path));
    }
    let docs = Path::new("/usr/share/doc/fio/fio-histo-log-pctiles.py");
    if docs.is_file() {
        return Some(docs.to_path_buf());
    }
    let packed = docs.with_extension("py.gz");
    let out = Command::new("gunzip")
        .arg("-c")
        .arg(&packed)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let path = dir.join("fio-histo-log-pctiles.py");
    std::fs::write(&path, out.stdout).unwrap();
    Some(path)
}

/// Runs the script over `log` with one time quantum spanning the run; returns the samples it
/// counted and its percentiles in ns.
fn pctiles(script: &Path, log: &Path) -> (u64, Vec<f64>) {
    let out = Command::new("python3")
        .arg(script)
        .args(["--time-quantum", "100000", "--output-unit", "usec"])
        .arg("--percentiles")
        .args(PERCENTILES)
        .arg("--")
        .arg(log)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap();
    let fields: Vec<&str> = last.split(',').map(str::trim).collect();
    let samples = fields[1].parse().unwrap();
    let values = fields[2..2 + PERCENTILES.len()]
        .iter()
        .map(|v| v.parse::<f64>().unwrap() * 1000.0)
        .collect();
    (samples, values)
}

/// Lines of a histogram log as (ms, direction, bs, number of buckets).
fn shape(log: &Path) -> Vec<(u64, u64, u64, usize)> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| {
            let v: Vec<u64> = line.split(", ").map(|f| f.parse().unwrap()).collect();
            (v[0], v[1], v[2], v.len() - 3)
        })
        .collect()
}

/// fio 3.33's log of a rate-limited random read: what iosched's must look like.
#[test]
fn fio_hist_log_shape_is_what_iosched_writes() {
    const TEST: &str = "fio_hist_log_shape_is_what_iosched_writes";
    let dir = target_scratch("histlog-fio");
    let Some(script) = script(&dir) else {
        return skip(TEST, "fio-histo-log-pctiles.py not found");
    };
    if Command::new("fio").arg("--version").output().is_err() {
        return skip(TEST, "fio not installed");
    }
    let job = format!(
        "[h]\nfilename={}\nsize=4m\nbs=4k\nrw=randread\nrate_iops=4000\nioengine=psync\n\
         write_hist_log=fh\nlog_hist_msec=50\n",
        dir.join("data").display()
    );
    std::fs::write(dir.join("h.fio"), job).unwrap();
    let out = Command::new("fio")
        .current_dir(&dir)
        .args(["h.fio", "--output-format=terse"])
        .output()
        .unwrap();
    common::assert_ran(&out);
    let lines = shape(&dir.join("fh_clat_hist.1.log"));
    assert!(lines.len() >= 3, "{lines:?}");
    // Windows follow a 50 ms grid from the first completion (drift is carried over): line
    // k comes at or after (k + 1) × 50 ms.
    for (k, line) in lines.iter().enumerate() {
        assert!(line.0 >= (k as u64 + 1) * 50, "{lines:?}");
    }
    // Non-decreasing only: fio under load can log two windows with one timestamp (its own
    // fio-histo-log-pctiles.py filters such records out).
    for pair in lines.windows(2) {
        assert!(pair[1].0 >= pair[0].0, "{lines:?}");
    }
    for &(_, ddir, bs, buckets) in &lines {
        assert_eq!((ddir, bs, buckets), (0, 4096, PLAT_NR as usize));
    }
    let (samples, _) = pctiles(&script, &dir.join("fh_clat_hist.1.log"));
    // fio leaves out its last, unfinished window.
    assert!(samples > 0 && samples <= 1024, "{samples}");
    eprintln!(
        "fio 3.33: {} lines, {samples} of 1024 reads logged",
        lines.len()
    );
}

/// iosched's log (simulated disk): fio's shape, every completion, and the JSON's percentiles.
#[test]
fn iosched_hist_log_reads_in_fio_histo_log_pctiles() {
    const TEST: &str = "iosched_hist_log_reads_in_fio_histo_log_pctiles";
    let dir = target_scratch("histlog-iosched");
    let Some(script) = script(&dir) else {
        return skip(TEST, "fio-histo-log-pctiles.py not found");
    };
    let job = "[h]\nsize=16m\nbs=4k\nrw=randread\nwrite_hist_log=ih\nlog_hist_msec=100\n";
    std::fs::write(dir.join("h.fio"), job).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .current_dir(&dir)
        .args([
            "run",
            "h.fio",
            "--device",
            "hdd-7200",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    common::assert_ran(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clat = &doc["jobs"][0]["read"]["clat_ns"];
    let log = dir.join("ih_clat_hist.1.log");
    let lines = shape(&log);
    assert!(lines.len() >= 10, "{lines:?}");
    for pair in lines.windows(2) {
        assert!(pair[1].0 > pair[0].0, "{lines:?}");
    }
    // fio's 100 ms grid, as in fio's own log; the last line is the final partial window.
    for (k, line) in lines[..lines.len() - 1].iter().enumerate() {
        assert!(line.0 >= (k as u64 + 1) * 100, "{lines:?}");
    }
    for &(_, ddir, bs, buckets) in &lines {
        assert_eq!((ddir, bs, buckets), (0, 4096, PLAT_NR as usize));
    }
    let (samples, values) = pctiles(&script, &log);
    assert_eq!(samples, clat["N"].as_u64().unwrap());
    for (p, got_ns) in PERCENTILES.iter().zip(values) {
        let key = format!("{:.6}", p.parse::<f64>().unwrap());
        let ours = clat["percentile"][&key].as_u64().unwrap();
        // The bucket of our percentile, as the closed range the script interpolates in.
        let (lo, hi) = bucket_bounds(bucket_index(ours));
        assert!(
            (lo as f64 - 1e-6..=hi as f64 + 1e-6).contains(&got_ns),
            "p{p}: script {got_ns} ns, JSON {ours} ns (bucket {lo}..{hi})"
        );
    }
    eprintln!("iosched: {} lines, {samples} reads logged", lines.len());
}
