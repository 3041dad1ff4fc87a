//! SIGINT and SIGTERM stop a simulated run at the next event: the jobs stop, what is in
//! flight completes, the partial results are written (marked `iosched.interrupted`) and
//! the exit status is the shell's 128 + signal. `--output` is written whole or not at all.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{iosched, Scratch};

/// An hour of random reads: far longer than any test waits.
const ENDLESS: &str = "[global]\ndirect=1\ntime_based=1\nruntime=3600\nsize=1g\nbs=4k\n\
                       [a]\nrw=randread\n[b]\nrw=randread\n";

/// Waits until `path` exists (the run's output, created once its signal handler is set).
fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `iosched run JOB` on a file target in `scratch`, JSON on stdout, and returns once
/// the engine is running: it lays its target out only after its signal handler is in place.
fn start_engine_run(scratch: &Scratch, job: &str) -> Child {
    let target = scratch.0.join("target.img");
    let child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", job, "--device"])
        .arg(&target)
        .args(["--output-format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_or_kill(&child, &target);
    std::thread::sleep(Duration::from_millis(500));
    child
}

/// Waits for `path`; a long run must not outlive a failed test, so `child` is killed when
/// the wait fails.
fn wait_or_kill(child: &Child, path: &Path) {
    if let Err(failure) = std::panic::catch_unwind(|| wait_for(path)) {
        let _ = Command::new("kill")
            .args(["-KILL", &child.id().to_string()])
            .status();
        std::panic::resume_unwind(failure);
    }
}

/// Sends `signal` (as `kill` spells it, "-INT") to `child`.
fn send(child: &Child, signal: &str) {
    let killed = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

fn stopped_by(signal: &str, status: i32) {
    let scratch = Scratch::new(&format!("signal-{signal}"));
    let job = scratch.file("endless.fio", ENDLESS);
    let output = scratch.0.join("out.json");
    let child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", &job, "--device", "nvme-gen4", "--scheduler", "cfq"])
        .args(["--output-format", "json", "--output"])
        .arg(&output)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_or_kill(&child, &scratch.0.join("out.json.partial"));
    std::thread::sleep(Duration::from_millis(200));
    send(&child, &format!("-{signal}"));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(status), "{stderr}");
    assert!(stderr.contains("partial"), "{stderr}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    assert_eq!(run["iosched"]["interrupted"], true);
    let read = run["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert!(read > 0, "some I/O done before the signal");
    // Stopped long before the hour: the results are the run so far.
    assert!(run["iosched"]["simulated_time_ns"].as_u64().unwrap() < 3_600_000_000_000);
    assert!(!scratch.0.join("out.json.partial").exists());
}

#[test]
fn sigint_ends_a_simulation_with_partial_results_and_status_130() {
    stopped_by("INT", 130);
}

#[test]
fn sigterm_ends_a_simulation_with_partial_results_and_status_143() {
    stopped_by("TERM", 143);
}

#[test]
fn a_run_that_fails_leaves_no_output_file() {
    let scratch = Scratch::new("signal-failed");
    let job = scratch.file("a.fio", "[a]\nsize=1m\nrw=read\n");
    let output = scratch.path("out.json");
    let trace = scratch.path("missing-dir/t.trace");
    let out = iosched(&["run", &job, "--output", &output, "--trace", &trace]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--trace"));
    assert!(!Path::new(&output).exists());
    assert!(!Path::new(&format!("{output}.partial")).exists());
}

/// Runs a 1 MiB read job whose log (`log_option`) goes into a folder that does not exist:
/// the log fails, the results are printed whole, the exit status is 1 and stderr names
/// `log_file`.
fn a_failing_log_keeps_the_results(log_option: &str, log_file: &str) {
    let scratch = Scratch::new("signal-log");
    let job = scratch.file("a.fio", &format!("[a]\nsize=1m\nrw=read\n{log_option}\n"));
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", &job, "--output-format", "json"])
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(log_file), "{stderr}");
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).expect("results printed");
    assert_eq!(run["jobs"][0]["read"]["io_bytes"], 1 << 20);
}

#[test]
fn a_log_file_that_cannot_be_written_keeps_the_results() {
    a_failing_log_keeps_the_results(
        "write_iolog=missing-dir/a.iolog",
        "write_iolog file missing-dir/a.iolog",
    );
}

#[test]
fn a_trace_over_its_limit_is_cut_and_the_results_kept() {
    let scratch = Scratch::new("trace-limit");
    // Time-based without a rate: nothing bounds its I/O ahead of time, so the run is not
    // refused up front (tests/hostile.rs) and its trace is cut at the limit.
    let job = scratch.file(
        "a.fio",
        "[a]\nsize=4m\nrw=randread\ntime_based=1\nruntime=1\n",
    );
    let trace = scratch.path("t.txt");
    let out = iosched(&[
        "run",
        &job,
        "--trace",
        &trace,
        "--trace-limit",
        "4k",
        "--output-format",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--trace-limit"), "{stderr}");
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).expect("results printed");
    assert!(run["jobs"][0]["read"]["io_bytes"].as_u64() > Some(0));
    let size = std::fs::metadata(&trace).unwrap().len();
    assert!(size > 0 && size <= 4096, "{size} bytes");
    let bad = iosched(&["run", &job, "--trace-limit", "2q"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Issue 28, 5: a decision file cut at `--trace-limit` was reported as "writing the
/// trace". The error names the decision file by its flag and path; the results are kept.
#[test]
fn a_decision_file_over_its_limit_is_named_in_the_error() {
    let scratch = Scratch::new("decisions-limit");
    let job = scratch.file(
        "a.fio",
        "[a]\nsize=4m\nrw=randread\ntime_based=1\nruntime=1\n",
    );
    let decisions = scratch.path("d.jsonl");
    let out = iosched(&[
        "run",
        &job,
        "--scheduler",
        "cfq",
        "--decisions",
        &decisions,
        "--trace-limit",
        "4k",
        "--output-format",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "writing --decisions {decisions}: reached --trace-limit"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("the trace"), "{stderr}");
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).expect("results printed");
    assert!(run["jobs"][0]["read"]["io_bytes"].as_u64() > Some(0));
}

/// Issue 17, 5: SIGTERM killed the engine's runs with nothing printed. On a real target (a
/// file here) it stops submission like SIGINT: what is in flight completes, the partial
/// results are printed, marked `interrupted`, and the exit status is 128 + 15.
#[test]
fn sigterm_ends_an_engine_run_with_partial_results_and_status_143() {
    let scratch = Scratch::new("signal-engine-term");
    let job = scratch.file(
        "long.fio",
        "[long]\nrw=randread\nbs=4k\nsize=4m\ndirect=1\ntime_based\nruntime=600\n",
    );
    let child = start_engine_run(&scratch, &job);
    send(&child, "-TERM");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("partial"), "{stderr}");
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).expect("partial JSON");
    assert_eq!(run["iosched"]["interrupted"], true);
    assert!(run["jobs"][0]["read"]["io_bytes"].as_u64() > Some(0));
}

/// Issue 17, 5: `--output` was opened only after the run, so a typo in its folder wasted
/// the run. It is refused before anything runs: the job's `write_iolog`, which a run would
/// have written, does not exist.
#[test]
fn an_output_folder_that_does_not_exist_is_refused_before_the_run() {
    let scratch = Scratch::new("signal-output-dir");
    let job = scratch.file("a.fio", "[a]\nsize=1m\nrw=read\nwrite_iolog=a.iolog\n");
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", &job, "--output", "missing-dir/out.json"])
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--output missing-dir/out.json"), "{stderr}");
    assert!(!scratch.0.join("a.iolog").exists(), "the run did not start");
}

/// Issue 17, 5: on ENOSPC a truncated, invalid JSON file was left at `--output`. Results
/// larger than the file system (a 64 KiB tmpfs) fail with a message naming `--output`, and
/// leave neither the file nor its `.partial`.
#[test]
fn a_full_file_system_leaves_no_truncated_output() {
    const TEST: &str = "a_full_file_system_leaves_no_truncated_output";
    if !common::is_root() {
        return common::skip(TEST, "mounting a small tmpfs needs root");
    }
    let scratch = Scratch::new("signal-enospc");
    let point = scratch.path("mnt");
    std::fs::create_dir(&point).unwrap();
    let Some(_mount) = common::Mount::new(&["-t", "tmpfs", "-o", "size=64k", "tmpfs"], &point)
    else {
        return common::skip(TEST, "mount -t tmpfs failed");
    };
    // 64 clones reported one by one: about 380 KB of JSON.
    let job = scratch.file("many.fio", "[a]\nsize=64k\nrw=read\nnumjobs=64\n");
    let output = format!("{point}/out.json");
    let out = iosched(&["run", &job, "--output-format", "json", "--output", &output]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("--output {output}: No space left on device")),
        "{stderr}"
    );
    assert!(!Path::new(&output).exists(), "no truncated file");
    assert!(!Path::new(&format!("{output}.partial")).exists());
}

/// Issue 17, 5: a failing `write_bw_log` (its folder does not exist) discarded the main
/// results. They are printed whole, the failure names the log file, and the exit status is 1.
/// One clone's log that cannot be written does not keep the other clones' logs from being
/// written: the first job's bandwidth log and iolog go to a folder that does not exist, the
/// second job's to the run's folder, and both of the second's files are there afterwards.
#[test]
fn a_failing_log_does_not_skip_the_other_jobs_logs() {
    let scratch = Scratch::new("signal-logs-apart");
    let job = scratch.file(
        "a.fio",
        "[global]\nsize=1m\nrw=read\n\
         [a]\nwrite_bw_log=missing-dir/a\nwrite_iolog=missing-dir/a.iolog\n\
         [b]\nwrite_bw_log=b\nwrite_iolog=b.iolog\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", &job, "--output-format", "json"])
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("missing-dir/a_bw.1.log"), "{stderr}");
    assert!(
        stderr.contains("write_iolog file missing-dir/a.iolog"),
        "{stderr}"
    );
    assert!(Path::new(&scratch.path("b_bw.2.log")).exists(), "{stderr}");
    let iolog = std::fs::read_to_string(scratch.path("b.iolog")).expect("b's iolog");
    assert!(iolog.starts_with("fio version 3 iolog\n"), "{iolog}");
}

#[test]
fn a_bandwidth_log_that_cannot_be_written_keeps_the_results() {
    a_failing_log_keeps_the_results("write_bw_log=missing-dir/a", "missing-dir/a_bw.1.log");
}

/// An engine run blocked in `io_uring_enter` (a job that starts in a minute, nothing in
/// flight) stops at once on SIGINT. signal-hook installs its handler with `SA_RESTART`; the
/// kernel's wait for completions ends with EINTR, which no flag restarts, so the wait ends
/// when the signal arrives, not when the minute is over (outside reference: the kernel's
/// behaviour on this machine; a restarted wait would hold the run for the whole delay).
#[test]
fn sigint_ends_an_engine_run_waiting_in_the_kernel() {
    let scratch = Scratch::new("signal-engine-wait");
    let job = scratch.file(
        "late.fio",
        "[late]\nrw=read\nbs=4k\nsize=1m\ndirect=1\nstartdelay=60\n",
    );
    let child = start_engine_run(&scratch, &job);
    let sent = Instant::now();
    send(&child, "-INT");
    let out = child.wait_with_output().unwrap();
    let waited = sent.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    // Far below the 60 s start delay, whatever the machine's load.
    assert!(waited < Duration::from_secs(30), "stopped after {waited:?}");
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).expect("partial JSON");
    assert_eq!(run["iosched"]["interrupted"], true);
}
