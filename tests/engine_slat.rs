//! The engine measures submission latency as fio 3.33 does (issue 14): slat runs from the
//! moment the job generates the I/O (fio's `io_u->start_time`, set as `get_io_u()` returns)
//! to the return of the `io_uring_enter` that handed it to the kernel (`issue_time`, read
//! once per commit in fio's io_uring engine), clat from there to the completion being
//! reaped, and lat from generation to completion, so that lat = slat + clat for every I/O.
//! iosched's scheduler sits before io_uring: its residency there counts in slat (the
//! "Choice:" in the engine's `stamp_sent`).
//!
//! The outside reference is fio itself on the same job and file: its slat mean and ours are
//! of the same order of magnitude (a factor of 10 either way; not equality: two programs,
//! a shared machine). Without fio that half prints SKIPPED. Nothing here measures speed.

mod common;

use std::process::Command;

use common::Scratch;

use serde_json::Value;

fn job_text(log_prefix: &str) -> String {
    format!(
        "[slat]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\niodepth=8\nsize=8m\n\
         write_lat_log={log_prefix}\n"
    )
}

/// The values (second field) of a per-I/O log, in order.
fn log_values(path: &str) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("{path}: {error}"))
        .lines()
        .map(|line| {
            line.split(',')
                .nth(1)
                .unwrap()
                .trim()
                .parse::<u64>()
                .unwrap_or_else(|error| panic!("{path}: {line:?}: {error}"))
        })
        .collect()
}

fn slat_mean(job: &Value) -> f64 {
    job["read"]["slat_ns"]["mean"]
        .as_f64()
        .expect("slat_ns.mean")
}

#[test]
fn the_engine_measures_slat_and_lat_is_slat_plus_clat_per_io() {
    let scratch = Scratch::new("slat-engine");
    let prefix = scratch.path("ours");
    let job = scratch.path("slat.fio");
    // Relative, from the run's folder: a job file's paths stay below it (issue 28).
    std::fs::write(&job, job_text("ours")).unwrap();
    let target = scratch.path("target.img");
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .current_dir(&scratch.0)
        .args(["run", &job, "--device", &target, "--scheduler", "noop"])
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("io_uring") {
        eprintln!("SKIPPED: io_uring is not available here: {stderr}");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = &ours["jobs"][0]["read"];
    assert_eq!(read["total_ios"], 2048);
    assert_eq!(read["slat_ns"]["N"], 2048);
    assert!(
        slat_mean(&ours["jobs"][0]) > 0.0,
        "slat is measured: {}",
        read["slat_ns"]
    );
    // Means: lat = slat + clat up to the rounding of three printed means.
    let mean = |key: &str| read[key]["mean"].as_f64().unwrap();
    let sum = mean("slat_ns") + mean("clat_ns");
    assert!((mean("lat_ns") - sum).abs() <= 1.0, "{read}");
    // Per I/O, from the per-I/O logs (one line each, in completion order).
    let (lat, clat, slat) = (
        log_values(&format!("{prefix}_lat.1.log")),
        log_values(&format!("{prefix}_clat.1.log")),
        log_values(&format!("{prefix}_slat.1.log")),
    );
    assert_eq!(lat.len(), 2048);
    assert_eq!((clat.len(), slat.len()), (2048, 2048));
    for (index, ((lat, clat), slat)) in lat.iter().zip(&clat).zip(&slat).enumerate() {
        assert_eq!(
            *lat,
            clat + slat,
            "I/O {index}: lat {lat} clat {clat} slat {slat}"
        );
    }
    assert!(slat.iter().any(|&slat| slat > 0));

    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("SKIPPED: fio is not installed; the engine's side was checked");
        return;
    }
    std::fs::write(scratch.path("fio.fio"), job_text(&scratch.path("theirs"))).unwrap();
    let out = Command::new("fio")
        .args([&scratch.path("fio.fio"), "--output-format=json"])
        .arg(format!("--filename={target}"))
        .output()
        .unwrap();
    common::assert_ran(&out);
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (ours, theirs) = (slat_mean(&ours["jobs"][0]), slat_mean(&theirs["jobs"][0]));
    assert!(theirs > 0.0, "fio measures slat on this job");
    let ratio = ours / theirs;
    assert!(
        (0.1..=10.0).contains(&ratio),
        "slat mean: iosched {ours:.0} ns, fio {theirs:.0} ns (ratio {ratio:.2})"
    );
}
