//! `--output-format=json+` read by fio's own tool, `fio_jsonplus_clat2csv` (packaged with fio
//! in `/usr/bin`, or named by `FIO_JSONPLUS_CLAT2CSV`).
//!
//! Outside references: fio 3.33's json+ output of a job on this machine (its `bins` keys are
//! exactly the bucket values iosched prints, and its percentiles are what the CSV's cumulative
//! column gives), and fio's script, which must turn iosched's json+ into a CSV that its own
//! `--validate` accepts and whose percentiles are iosched's JSON percentiles at the resolution
//! of fio's histogram (the bucket each falls in).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{skip, target_scratch, tool_available};

use iosched_report::fio_plat::{bucket_index, bucket_value};
use serde_json::Value;

const DIRS: [&str; 3] = ["read", "write", "trim"];
const KINDS: [&str; 3] = ["slat_ns", "clat_ns", "lat_ns"];

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    })
}

/// fio's script, if it is here and its interpreter can run it.
fn script() -> Option<PathBuf> {
    let path = std::env::var_os("FIO_JSONPLUS_CLAT2CSV")
        .map(PathBuf::from)
        .or_else(|| on_path("fio_jsonplus_clat2csv"))?;
    let usable = Command::new("python3")
        .args(["-c", "import six"])
        .status()
        .is_ok_and(|s| s.success());
    usable.then_some(path)
}

/// fio's json+ output of the job file `name` in `dir`, run there: the file and its document.
fn fio_json_plus(dir: &Path, name: &str) -> (PathBuf, Value) {
    let json = dir.join("fio.json");
    let out = Command::new("fio")
        .current_dir(dir)
        .args(["--output-format=json+", "--output"])
        .arg(&json)
        .arg(name)
        .output()
        .unwrap();
    common::assert_ran(&out);
    let doc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (json, doc)
}

/// Runs the script on `json` (converting, then validating) and returns each job's CSV rows.
fn clat2csv(script: &Path, dir: &Path, json: &Path) -> Vec<Vec<Vec<String>>> {
    let stub = dir.join("lat.csv");
    for extra in [None, Some("--validate")] {
        let out = Command::new("python3")
            .arg(script)
            .arg(json)
            .arg(&stub)
            .args(extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !stdout.contains("mismatch"),
            "fio_jsonplus_clat2csv {extra:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (0..doc["jobs"].as_array().unwrap().len())
        .map(|job| {
            let text = std::fs::read_to_string(dir.join(format!("lat_job{job}.csv"))).unwrap();
            text.lines()
                .map(|line| line.split(',').map(|f| f.trim().to_string()).collect())
                .collect()
        })
        .collect()
}

/// The CSV's answer for percentile `p` of column group `name` (e.g. `read_clat_ns`): the
/// `nsec` of the first row whose cumulative share reaches `p`% (fio's rule).
fn csv_percentile(rows: &[Vec<String>], name: &str, p: f64) -> Option<u64> {
    let column = rows[0]
        .iter()
        .position(|c| *c == format!("{name}_percentile"))
        .unwrap_or_else(|| panic!("no column {name}_percentile"));
    rows[1..].iter().find_map(|row| {
        let share: f64 = row[column].parse().ok()?;
        (share >= p / 100.0 - 1e-9).then(|| row[0].parse().unwrap())
    })
}

/// Checks every printed percentile of `doc` against the CSV; `exact` demands the same value
/// (fio's own output), otherwise the same fio bucket. Returns how many were compared.
fn check_percentiles(doc: &Value, csvs: &[Vec<Vec<String>>], exact: bool) -> usize {
    let mut compared = 0;
    for (job, rows) in doc["jobs"].as_array().unwrap().iter().zip(csvs) {
        for dir in DIRS {
            for kind in KINDS {
                let Some(pcts) = job[dir][kind]["percentile"].as_object() else {
                    continue;
                };
                for (p, value) in pcts {
                    let p: f64 = p.parse().unwrap();
                    let ours = value.as_u64().unwrap();
                    let want = if exact {
                        ours
                    } else {
                        bucket_value(bucket_index(ours))
                    };
                    let got = csv_percentile(rows, &format!("{dir}_{kind}"), p);
                    assert_eq!(got, Some(want), "{} {dir} {kind} p{p}", job["jobname"]);
                    compared += 1;
                }
            }
        }
    }
    compared
}

/// fio 3.33 itself: its bins keys are bucket values as iosched computes them, and its own
/// percentiles are read back from the CSV by [`csv_percentile`] exactly.
#[test]
fn fio_json_plus_bins_are_iosched_buckets() {
    const TEST: &str = "fio_json_plus_bins_are_iosched_buckets";
    let Some(script) = script() else {
        return skip(
            TEST,
            "fio_jsonplus_clat2csv (or python3 with six) not found",
        );
    };
    if !tool_available("fio") {
        return skip(TEST, "fio not installed");
    }
    let dir = target_scratch("jsonplus-fio");
    let job = format!(
        "[r]\nfilename={}\nsize=4m\nbs=4k\nrw=randrw\nioengine=psync\nlat_percentiles=1\n",
        dir.join("data").display()
    );
    std::fs::write(dir.join("r.fio"), job).unwrap();
    let (json, doc) = fio_json_plus(&dir, "r.fio");
    let mut keys = 0;
    for dir_name in ["read", "write"] {
        for kind in ["clat_ns", "lat_ns"] {
            let bins = doc["jobs"][0][dir_name][kind]["bins"].as_object().unwrap();
            for key in bins.keys() {
                let key: u64 = key.parse().unwrap();
                assert_eq!(bucket_value(bucket_index(key)), key, "fio's key {key}");
                keys += 1;
            }
        }
    }
    let csvs = clat2csv(&script, &dir, &json);
    let compared = check_percentiles(&doc, &csvs, true);
    eprintln!("fio 3.33: {keys} bins keys, {compared} percentiles read back from its CSV");
    assert!(compared >= 4 * 17);
}

/// iosched's json+ (simulated disk, every latency series with percentiles) goes through
/// fio's script and its `--validate`, and the CSV's percentiles are iosched's.
#[test]
fn iosched_json_plus_reads_in_fio_jsonplus_clat2csv() {
    const TEST: &str = "iosched_json_plus_reads_in_fio_jsonplus_clat2csv";
    let Some(script) = script() else {
        return skip(
            TEST,
            "fio_jsonplus_clat2csv (or python3 with six) not found",
        );
    };
    let dir = target_scratch("jsonplus-iosched");
    let job = "[global]\nsize=16m\nslat_percentiles=1\nlat_percentiles=1\n\
               [mix]\nrw=randrw\nbs=4k\nioengine=libaio\niodepth=8\nfsync=32\n\
               [seq]\nrw=write\nbs=64k\n";
    std::fs::write(dir.join("j.fio"), job).unwrap();
    let json = dir.join("iosched.json");
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .current_dir(&dir)
        .args(["run", "j.fio", "--device", "hdd-7200", "--scheduler", "cfq"])
        .args(["--output-format", "json+", "--output"])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_ran(&out);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let bins = doc["jobs"][0]["read"]["clat_ns"]["bins"]
        .as_object()
        .unwrap();
    assert!(bins.len() > 20, "a seeking disk spreads reads: {bins:?}");
    let csvs = clat2csv(&script, &dir, &json);
    // Every sample of each series is one CSV count.
    let rows = &csvs[0];
    let column = rows[0]
        .iter()
        .position(|c| c == "read_clat_ns_count")
        .unwrap();
    let counted: u64 = rows[1..]
        .iter()
        .filter_map(|r| r[column].parse::<u64>().ok())
        .sum();
    assert_eq!(
        counted,
        doc["jobs"][0]["read"]["clat_ns"]["N"].as_u64().unwrap()
    );
    let compared = check_percentiles(&doc, &csvs, false);
    eprintln!(
        "iosched: {} read clat bins, {compared} percentiles match the CSV",
        bins.len()
    );
    assert!(compared >= 5 * 17);
}

/// Issue 17: iosched's percentiles are fio's own. Outside reference: fio 3.33 on this
/// machine, json+ of jobs of 100, 250 and 1000 I/Os (counts where fio's `long double`
/// threshold differs from `f64`, e.g. p30 of 100 needs 31 samples) with every latency
/// series' percentiles and a list that includes such shares. Each of fio's histograms
/// (`bins`) is recorded into a [`LatStat`], and the percentiles iosched computes from it must
/// be fio's printed ones, value for value.
#[test]
fn percentiles_from_fios_bins_are_fios_percentiles() {
    const TEST: &str = "percentiles_from_fios_bins_are_fios_percentiles";
    if !common::fio3_available() {
        return skip(TEST, "fio 3 not installed");
    }
    let dir = target_scratch("jsonplus-percentiles");
    let list = "1:5:10:20:30:33.3:40:50:60:66.6:70:80:90:95:99:99.5:99.9:99.95:99.99";
    let mut job = format!(
        "[global]\nfilename={}\nsize=4m\nbs=4k\nioengine=libaio\niodepth=4\n\
         slat_percentiles=1\nlat_percentiles=1\npercentile_list={list}\n",
        dir.join("data").display()
    );
    for rw in ["randread", "randwrite"] {
        for ios in [100, 250, 1000] {
            job.push_str(&format!("[{rw}{ios}]\nrw={rw}\nnumber_ios={ios}\n"));
        }
    }
    std::fs::write(dir.join("p.fio"), job).unwrap();
    let (_, doc) = fio_json_plus(&dir, "p.fio");
    let wanted: Vec<f64> = list.split(':').map(|p| p.parse().unwrap()).collect();
    let mut compared = 0;
    for job in doc["jobs"].as_array().unwrap() {
        for dir_name in ["read", "write"] {
            for kind in KINDS {
                let series = &job[dir_name][kind];
                let Some(bins) = series["bins"].as_object() else {
                    continue;
                };
                let mut stat = iosched_report::LatStat::new();
                for (key, count) in bins {
                    for _ in 0..count.as_u64().unwrap() {
                        stat.record(key.parse().unwrap());
                    }
                }
                assert_eq!(stat.count(), series["N"].as_u64().unwrap());
                for (p, ours) in stat.percentiles(&wanted) {
                    let theirs = &series["percentile"][format!("{p:.6}")];
                    assert_eq!(
                        Some(ours),
                        theirs.as_u64(),
                        "{} {dir_name} {kind} p{p} of {}",
                        job["jobname"],
                        stat.count()
                    );
                    compared += 1;
                }
            }
        }
    }
    eprintln!("fio 3.33: {compared} percentiles recomputed from its bins");
    assert_eq!(compared, 6 * 3 * wanted.len(), "every job's three series");
}
