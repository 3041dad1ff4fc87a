//! The engine keeps a job's queue full the way fio does (issue 16).
//!
//! fio 3.33 with an async engine reaps `iodepth_batch_complete_max` completions (1 by
//! default) and refills before it looks at the next, so an `iodepth=32` job submits at depth
//! 32 nearly every time: its `iodepth_level` is ~100 % at 32. The reference is fio itself,
//! run on the same file with the same job when it is installed. The engine once reaped every
//! completion there was and refilled after, so on a fast target its queue drained and its
//! depths spread over 1, 2, 4 ... 32 (3.5 % at 32 on this machine's disk). Its in-flight
//! gauges (`iosched.inflight`) say the same in time: the job spends its run at depth 31–32.
//! Nothing here measures speed.

mod common;

use std::process::Command;

use common::{fio3_available, Scratch};

use serde_json::Value;

const JOB: &str = "[qd32]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\niodepth=32\n\
                   size=16m\nloops=4\n";

/// Percent of submissions at depth 32 in fio's `iodepth_level`.
fn at_32(job: &Value) -> f64 {
    job["iodepth_level"]["32"]
        .as_f64()
        .expect("iodepth_level 32")
}

/// The engine's JSON for `job` on `target` (`extra` arguments added), or `None` (said
/// SKIPPED) where io_uring is not available.
fn engine_json(job: &str, target: &str, extra: &[&str]) -> Option<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", job, "--device", target, "--output-format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("io_uring") {
        eprintln!("SKIPPED: io_uring is not available here: {stderr}");
        return None;
    }
    assert!(out.status.success(), "{stderr}");
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// fio 3.33's JSON for the same job on the same file, or `None` (said SKIPPED) without fio.
fn fio_json(job: &str, target: &str) -> Option<Value> {
    if !fio3_available() {
        eprintln!("SKIPPED: fio is not installed; the engine's side was checked");
        return None;
    }
    let out = Command::new("fio")
        .args([job, "--output-format=json", &format!("--filename={target}")])
        .output()
        .unwrap();
    common::assert_ran(&out);
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn an_iodepth_32_job_keeps_its_queue_full_as_fio_does() {
    let scratch = Scratch::new("qd32");
    let job = scratch.path("qd32.fio");
    std::fs::write(&job, JOB).unwrap();
    let target = scratch.path("target.img");
    let Some(ours) = engine_json(&job, &target, &["--scheduler", "noop"]) else {
        return;
    };
    let job_result = &ours["jobs"][0];
    assert_eq!(job_result["read"]["total_ios"], 16384);
    assert!(
        at_32(job_result) >= 95.0,
        "the engine refills before its queue drains: {}",
        job_result["iodepth_level"]
    );
    let inflight = &ours["iosched"]["inflight"];
    let depth = &inflight["jobs"][0];
    assert_eq!(depth["cap"], 32);
    assert!(
        depth["mean"].as_f64().unwrap() >= 30.0,
        "the job's time-weighted depth: {depth}"
    );
    let device = inflight["device"]["mean"].as_f64().unwrap();
    assert!(device >= 28.0, "requests in the device: {inflight}");
    // fio submits one I/O per io_uring_enter by default (iodepth_batch_submit=1).
    assert_eq!(job_result["iodepth_submit"]["4"], 100.0);

    let Some(theirs) = fio_json(&job, &target) else {
        return;
    };
    assert!(
        at_32(&theirs["jobs"][0]) >= 95.0,
        "fio itself keeps the queue full: {}",
        theirs["jobs"][0]["iodepth_level"]
    );
}

/// `iodepth_batch_submit=8` with `iodepth_batch_complete_min=8`: the job reaps 8
/// completions at a time, then submits 8 in one `io_uring_enter`, so fio's `iodepth_submit`
/// and `iodepth_complete` put (nearly) every call in their "8" bucket (5–8 I/Os), and
/// `iodepth_level` counts the batch at the depth it reached (32), as fio 3.33 does for the
/// same job on the same file (the reference, when installed). Before, the engine counted
/// each completion as a reap of 1 and each I/O at its own depth (87 % in the 16–31 bucket).
#[test]
fn a_batch_of_eight_is_submitted_in_one_call_as_fio_does() {
    let scratch = Scratch::new("batch8");
    let job = scratch.path("batch8.fio");
    std::fs::write(
        &job,
        "[b8]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\niodepth=32\n\
         iodepth_batch_submit=8\niodepth_batch_complete_min=8\nsize=16m\nloops=2\n",
    )
    .unwrap();
    let target = scratch.path("target.img");
    let Some(ours) = engine_json(&job, &target, &[]) else {
        return;
    };
    let eight = |job: &Value| {
        let submit = job["iodepth_submit"]["8"].as_f64().unwrap();
        let complete = job["iodepth_complete"]["8"].as_f64().unwrap();
        submit.min(complete).min(at_32(job))
    };
    assert!(eight(&ours["jobs"][0]) >= 95.0, "{}", ours["jobs"][0]);
    let Some(theirs) = fio_json(&job, &target) else {
        return;
    };
    assert!(eight(&theirs["jobs"][0]) >= 95.0, "{}", theirs["jobs"][0]);
}

/// A sequential `iodepth=8` job with `iodepth_batch_submit=8`: its first batch of 8 goes in
/// one step, and iosched's block layer merges it (as 4.20's plug does) into one 32 KiB
/// request. fio 3.33 reaps one completion at a time (`iodepth_batch_complete_max=1`) and
/// refills one at a time from then on, so nearly every submit call carries 1 I/O (its
/// `iodepth_submit` "4" bucket, 1–4 I/Os, ~100 %), as fio itself shows on the same file (the
/// reference, when installed). The engine once handed all 8 I/Os of the merged request to
/// the job at once: it refilled a whole batch of 8, which merged again, for the whole run
/// ("8" bucket 100 %). Now each I/O of a merged request is a completion of its own, with the
/// job refilling in between.
#[test]
fn a_merged_requests_completion_refills_one_at_a_time_as_fio_does() {
    let scratch = Scratch::new("merged");
    let job = scratch.path("merged.fio");
    std::fs::write(
        &job,
        "[seq]\nioengine=io_uring\ndirect=1\nrw=read\nbs=4k\niodepth=8\n\
         iodepth_batch_submit=8\nsize=16m\n",
    )
    .unwrap();
    let target = scratch.path("target.img");
    let Some(ours) = engine_json(&job, &target, &[]) else {
        return;
    };
    let one_at_a_time = |job: &Value| {
        let submit = job["iodepth_submit"]["4"].as_f64().unwrap();
        let complete = job["iodepth_complete"]["4"].as_f64().unwrap();
        submit.min(complete)
    };
    let job_result = &ours["jobs"][0];
    assert_eq!(job_result["read"]["total_ios"], 4096);
    assert!(one_at_a_time(job_result) >= 95.0, "{job_result}");
    let Some(theirs) = fio_json(&job, &target) else {
        return;
    };
    assert!(
        one_at_a_time(&theirs["jobs"][0]) >= 95.0,
        "{}",
        theirs["jobs"][0]
    );
}
