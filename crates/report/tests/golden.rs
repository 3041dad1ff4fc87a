//! Golden files for fio JSON, terse and normal output from one hand-built run.
//!
//! Proves the formatters are byte-stable and that their layout only changes on purpose:
//! `IOSCHED_BLESS=1 cargo test -p iosched-report` rewrites `tests/golden/*`; otherwise a
//! mismatch prints the expected and actual text.

use iosched_report::{
    fio_json, fio_normal, fio_terse, DiskStats, JobStats, RunResult, DDIR_READ, DDIR_WRITE,
    DEFAULT_PERCENTILES,
};
use serde_json::Value;
use std::path::PathBuf;

const MS: u64 = 1_000_000;

/// A tiny deterministic generator (64-bit LCG) so the scenario needs no dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound
    }
}

/// Two jobs in group 0 (a sequential reader at depth 4, a random writer with fsyncs) and one
/// job in group 1, over about two seconds, on one disk.
pub fn sample_run() -> RunResult {
    let mut rng = Lcg(42);
    let mut reader = JobStats::new("seqread", 0, &DEFAULT_PERCENTILES);
    reader.pid = 1001;
    reader.options = vec![
        ("rw".into(), "read".into()),
        ("bs".into(), "128k".into()),
        ("iodepth".into(), "4".into()),
    ];
    let mut t = 0;
    for _ in 0..3000 {
        let slat = 1500 + rng.next(1000);
        let clat = 400_000 + rng.next(2_500_000);
        reader.record_depth(1 + (rng.next(4) as u32));
        reader.record_submit_batch(1);
        reader.record_complete_batch(1);
        reader.record_io(DDIR_READ, 131072, t, t + slat, t + slat + clat);
        t += 2 * MS / 3;
    }
    reader.set_runtime(0, 2010 * MS);
    reader.usr_cpu = 1.25;
    reader.sys_cpu = 7.5;
    reader.ctx = 3100;
    reader.minf = 40;
    reader.latency_depth = 4;

    let mut writer = JobStats::new("randwrite", 0, &DEFAULT_PERCENTILES);
    writer.pid = 1002;
    writer.options = vec![
        ("rw".into(), "randwrite".into()),
        ("fsync".into(), "50".into()),
    ];
    let mut t = 5 * MS;
    for i in 0..1000 {
        let clat = 20_000 + rng.next(200_000) + if i % 97 == 0 { 30 * MS } else { 0 };
        writer.record_depth(1);
        writer.record_io(DDIR_WRITE, 4096, t, t + 800, t + 800 + clat);
        if i % 50 == 49 {
            writer.record_sync(3 * MS + rng.next(2 * MS));
        }
        t += 2 * MS;
    }
    writer.set_runtime(5 * MS, 2015 * MS);

    let mut trimmer = JobStats::new("trim", 1, &[50.0, 99.0]);
    trimmer.pid = 1003;
    for i in 0..10 {
        trimmer.record_io(2, 1 << 20, i * MS, i * MS, i * MS + 150);
    }
    trimmer.set_runtime(0, 100 * MS);

    RunResult {
        timestamp_s: 1_700_000_000,
        timestamp_ms: 1_700_000_000_123,
        time: "Tue Nov 14 22:13:20 2023".into(),
        global_options: vec![
            ("ioengine".into(), "psync".into()),
            ("direct".into(), "1".into()),
        ],
        jobs: vec![reader, writer, trimmer],
        disks: vec![DiskStats {
            name: "sda".into(),
            read_ios: 3000,
            write_ios: 1020,
            read_sectors: 768_000,
            write_sectors: 8000,
            read_merges: 0,
            write_merges: 12,
            read_ticks_ms: 5000,
            write_ticks_ms: 150,
            in_queue_ms: 5150,
            util_pct: 97.53,
        }],
        iosched: serde_json::json!({"scheduler": "cfq", "seed": 7, "device": "hdd-7200"}),
        ..RunResult::default()
    }
}

/// Compares `actual` with `tests/golden/<name>`, or rewrites it under `IOSCHED_BLESS=1`.
fn golden(name: &str, actual: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "golden", name]
        .iter()
        .collect();
    if std::env::var_os("IOSCHED_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with IOSCHED_BLESS=1 to create it\nactual:\n{actual}",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .map(|i| i + 1)
            .unwrap_or(expected.lines().count().min(actual.lines().count()) + 1);
        panic!(
            "{} differs from the output (first difference on line {first}); \
             IOSCHED_BLESS=1 rewrites it\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        );
    }
}

#[test]
fn fio_json_golden() {
    golden("fio.json", &fio_json::to_string(&sample_run()));
}

#[test]
fn fio_terse_golden() {
    golden("fio.terse", &fio_terse::to_string(&sample_run()));
}

#[test]
fn fio_normal_golden() {
    golden("fio.normal", &fio_normal::to_string(&sample_run()));
}

#[test]
fn same_run_twice_gives_identical_bytes() {
    let (a, b) = (sample_run(), sample_run());
    assert_eq!(fio_json::to_string(&a), fio_json::to_string(&b));
    assert_eq!(fio_terse::to_string(&a), fio_terse::to_string(&b));
    assert_eq!(fio_normal::to_string(&a), fio_normal::to_string(&b));
}

#[test]
fn json_parses_and_has_the_fields_scripts_read() {
    let text = fio_json::to_string(&sample_run());
    let v: Value = serde_json::from_str(&text).expect("output is valid JSON");
    let job = &v["jobs"][0];
    assert_eq!(job["jobname"], "seqread");
    assert_eq!(job["groupid"], 0);
    let read = &job["read"];
    assert_eq!(read["io_bytes"], 3000u64 * 131072);
    assert_eq!(read["runtime"], 2010);
    let bw_bytes = 1000 * 3000u64 * 131072 / 2010;
    assert_eq!(read["bw_bytes"], bw_bytes);
    assert_eq!(read["bw"], bw_bytes / 1024);
    assert!((read["iops"].as_f64().unwrap() - 1000.0 * 3000.0 / 2010.0).abs() < 1e-5);
    let p50 = read["clat_ns"]["percentile"]["50.000000"].as_u64().unwrap();
    assert!((400_000..2_900_000).contains(&p50), "p50 {p50}");
    assert!(read["clat_ns"]["percentile"]["99.990000"].is_u64());
    assert_eq!(read["lat_ns"]["N"], 3000);
    assert!(read["lat_ns"].get("percentile").is_none());
    assert_eq!(read["bw_samples"], 4);
    assert_eq!(job["write"]["total_ios"], 0);
    assert_eq!(v["jobs"][1]["sync"]["total_ios"], 20);
    // Every trim takes 150 ns, which fio files in its bucket [150, 152), named 151.
    assert_eq!(
        v["jobs"][2]["trim"]["clat_ns"]["percentile"]["99.000000"],
        151
    );
    assert_eq!(v["disk_util"][0]["name"], "sda");
    assert_eq!(v["disk_util"][0]["util"], 97.53);
    assert_eq!(v["global options"]["ioengine"], "psync");
    assert_eq!(v["iosched"]["scheduler"], "cfq");
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().unwrap().as_str(), "iosched");
}

/// Key paths of a JSON value, in document order, with array elements collapsed to `[]` and
/// percentile/option maps left out (their presence and keys depend on the run).
fn key_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                // Percentiles appear only for directions with samples.
                if k == "percentile" {
                    continue;
                }
                let path = format!("{prefix}/{k}");
                out.push(path.clone());
                if k != "job options" {
                    key_paths(child, &path, out);
                }
            }
        }
        Value::Array(a) => {
            if let Some(first) = a.first() {
                key_paths(first, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn json_keys_follow_a_real_fio_3_33_document() {
    let fixture = include_str!("fixtures/fio-3.33-null-randrw.json");
    let real: Value = serde_json::from_str(fixture).unwrap();
    let ours: Value = serde_json::from_str(&fio_json::to_string(&sample_run())).unwrap();
    let (mut want, mut got) = (Vec::new(), Vec::new());
    key_paths(&real["jobs"], "jobs", &mut want);
    key_paths(&ours["jobs"], "jobs", &mut got);
    assert_eq!(want, got);
}

#[test]
fn terse_lines_have_130_fields_and_fio_positions() {
    let run = sample_run();
    let text = fio_terse::to_string(&run);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    let f: Vec<&str> = lines[0].split(';').collect();
    assert_eq!(f.len(), 130);
    // mmtests reads 0-based fields 5 (read KiB) and 44 (read bw mean).
    assert_eq!(f[5], (3000u64 * 128).to_string());
    let json: Value = serde_json::from_str(&fio_json::to_string(&run)).unwrap();
    let mean = json["jobs"][0]["read"]["bw_mean"].as_f64().unwrap();
    assert_eq!(f[44], format!("{mean:.6}"));
    assert_eq!(f[121], "sda");
    assert_eq!(f[129], "97.53%");
}

/// A job that fills every field fio's JSON can carry: options needing escapes, percentiles
/// on all three series and the sync series, an error count, a steady-state report, a
/// non-finite CPU figure, negative and fractional floats; and one with an empty percentile
/// list (fio then prints `"percentile" : {}`) and no options (`"job options" : {}`).
fn every_field_run() -> RunResult {
    use iosched_workload::steady_state::{SteadyStateReport, SteadyStateSpec};
    let mut full = JobStats::new("odd \"name\"\\\n\u{1}é", 3, &DEFAULT_PERCENTILES);
    full.options = vec![
        ("filename".into(), "/dev/\"x\"\\y\tz".into()),
        ("bs".into(), "4k".into()),
    ];
    (full.slat_percentiles, full.lat_percentiles) = (true, true);
    full.continue_on_error = true;
    (full.total_err, full.first_error, full.error) = (3, -5, 5);
    for i in 0..400u64 {
        let t = i * MS;
        full.record_io(
            i as usize % 3,
            4096,
            t,
            t + 900 + i,
            t + 50_000 + i * i * 31,
        );
        full.record_sync(2 * MS + i * 7_777);
    }
    full.set_runtime(0, 400 * MS);
    (full.usr_cpu, full.sys_cpu) = (f64::NAN, 0.1 + 0.2);
    full.latency_percentile = -0.0;
    full.steadystate = Some(SteadyStateReport {
        spec: SteadyStateSpec {
            iops: true,
            slope: true,
            limit: 0.3,
            percent: true,
            window_s: 3,
            ramp_ns: 0,
        },
        attained: true,
        criterion: -1.25,
        max_deviation: f64::INFINITY,
        slope: -0.015625,
        iops: vec![100, 250, 0],
        bw: vec![],
    });
    let mut bare = JobStats::new("bare", 3, &[0.0]);
    bare.record_io(0, 512, 0, 10, 20);
    bare.set_runtime(0, MS);
    RunResult {
        jobs: vec![full, bare],
        // The document's own entries are written straight from the value too: nesting,
        // empty containers, negative and fractional numbers, escapes.
        iosched: serde_json::json!({
            "scheduler": "cfq",
            "service": [
                {"name": "queue 1000", "served_ns": 100000000u64, "slices": 100},
                {"name": "odd \"q\"\n", "served_ns": 0, "share": 0.0078125},
                [],
                {},
                [-3, 2.5, -0.25, 1e-7, true, false, null, u64::MAX, i64::MIN],
            ],
            "empty": {},
            "list": [[[]]],
        }),
        ..sample_run()
    }
}

/// Jobs whose objects repeat in part (the text writer repeats an object's text when every
/// figure it prints is the same as last time): alike jobs, one with a write, one whose
/// depth distribution differs, one whose only difference is the sign of a zero, and the
/// alike ones again after them.
fn alike_jobs_run() -> RunResult {
    let mut bare = JobStats::new("bare", 3, &[0.0]);
    bare.record_io(0, 512, 0, 10, 20);
    bare.set_runtime(0, MS);
    let mut written = bare.clone();
    written.record_io(1, 4096, 0, 10, 30);
    let mut deeper = bare.clone();
    deeper.record_io(0, 512, 10, 20, 25);
    let mut signed = bare.clone();
    signed.usr_cpu = -0.0;
    signed.latency_percentile = -0.0;
    let mut percentiles = bare.clone();
    percentiles.clat_percentiles = true;
    percentiles.lat_percentiles = true;
    RunResult {
        jobs: vec![
            bare.clone(),
            bare.clone(),
            written,
            bare.clone(),
            deeper,
            signed,
            percentiles,
            bare.clone(),
            bare,
        ],
        ..sample_run()
    }
}

/// The text writer (each job written straight as text, so thousands of jobs never sit in
/// memory as values) and the `Value` tree, both fed by the one layout, give the same bytes
/// for every field in both flavours: the golden run's and every field's (the tree printed
/// by serde_json with fio's formatter, the writer the text one replaced for speed, issue 15).
#[test]
fn text_writer_matches_serde_for_every_field() {
    for (run, flavor) in [
        (sample_run(), fio_json::JSON),
        (sample_run(), fio_json::JSON_PLUS),
        (every_field_run(), fio_json::JSON),
        (every_field_run(), fio_json::JSON_PLUS),
        (alike_jobs_run(), fio_json::JSON),
        (alike_jobs_run(), fio_json::JSON_PLUS),
    ] {
        let mut whole = Vec::new();
        fio_json::write_value(&fio_json::to_value_as(&run, flavor), &mut whole).unwrap();
        let mut text = Vec::new();
        fio_json::write_json_as(&run, flavor, &mut text).unwrap();
        let (whole, text) = (
            String::from_utf8(whole).unwrap(),
            String::from_utf8(text).unwrap(),
        );
        assert_eq!(text, whole);
        if run.jobs[0].name == "seqread" || run.jobs[0].name == "bare" {
            continue;
        }
        for needle in [
            "\"percentile\" : {}",
            "\"job options\" : {}",
            "\"bw\" : []",
            "\"first_error\" : -5",
            "\"usr_cpu\" : 0.000000",
            "\"latency_percentile\" : -0.000000",
            "odd \\\"name\\\"\\\\\\n\\u0001é",
        ] {
            assert!(text.contains(needle), "{needle} missing");
        }
        assert_eq!(text.contains("\"bins\""), flavor == fio_json::JSON_PLUS);
    }
    let empty = RunResult {
        jobs: vec![],
        ..RunResult::default()
    };
    let mut whole = Vec::new();
    fio_json::write_value(&fio_json::to_value(&empty), &mut whole).unwrap();
    assert_eq!(fio_json::to_string(&empty).into_bytes(), whole);
}
