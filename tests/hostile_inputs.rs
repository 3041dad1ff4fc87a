//! Hostile input to the readers added after issue 17 (issue 28, 4 and 5): every file iosched
//! reads goes through one bounded reader, and numbers are checked where they enter. Each test
//! here failed before its fix: the /dev/zero and 1e307 cases by running until killed (hence
//! [`iosched_within`]), the others by exiting 0 or saying the wrong thing.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{assert_input_error, iosched, skip, stderr_of, tool_available, Scratch};

/// 30 s: each refusal here takes milliseconds; what it replaced read until memory ran out or
/// drew axes forever.
const PATIENCE: Duration = Duration::from_secs(30);

/// [`iosched`], killed and failed if it runs longer than [`PATIENCE`].
fn iosched_within(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let start = Instant::now();
    while child.try_wait().expect("waitable").is_none() {
        if start.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("iosched {args:?} still running after {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("the output")
}

/// A fio JSON result of one job whose read bandwidth is `bw` (JSON text).
fn result_with_bw(bw: &str) -> String {
    format!(
        r#"{{"jobs": [{{"jobname": "r", "read": {{"bw": {bw}, "bw_bytes": 4096000, "iops": 1000,
        "total_ios": 10, "clat_ns": {{"mean": 1000, "percentile": {{"50.000000": 1000}}}}}}}}]}}"#
    )
}

/// Issue 28, 4: `sweep`, `run --spec`, `plot`, `compare` and `replay` given /dev/zero read until
/// memory ran out (replay said the capture did not exist); each now refuses it at once as
/// the character device it is.
#[test]
fn dev_zero_is_refused_by_every_reader() {
    let scratch = Scratch::new("inputs-zero");
    let good = scratch.file("good.json", &result_with_bw("4000"));
    let out_dir = scratch.path("charts");
    let cases: [&[&str]; 5] = [
        &["sweep", "/dev/zero"],
        &["run", "--spec", "/dev/zero"],
        &["plot", "/dev/zero", "--out", &out_dir],
        &["compare", "/dev/zero", &good],
        &["replay", "/dev/zero", "--device", "fixed"],
    ];
    for args in cases {
        let out = iosched_within(args);
        assert_input_error(&out, "/dev/zero: a character device, not a regular file");
    }
}

/// Issue 28, 5: a FIFO or a folder given as a capture was "no such capture"; it is refused for
/// what it is, without blocking on the FIFO.
#[test]
fn a_fifo_or_folder_as_a_capture_is_refused_for_what_it_is() {
    const TEST: &str = "a_fifo_or_folder_as_a_capture_is_refused_for_what_it_is";
    let scratch = Scratch::new("inputs-fifo");
    let folder = scratch.path("capture");
    std::fs::create_dir(&folder).unwrap();
    let out = iosched_within(&["replay", &folder, "--device", "fixed"]);
    assert_input_error(&out, &format!("{folder}: a directory, not a regular file"));
    if !tool_available("mkfifo") {
        return skip(TEST, "mkfifo is needed for the FIFO half");
    }
    let fifo = scratch.path("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = iosched_within(&["replay", &fifo, "--device", "fixed"]);
    assert_input_error(&out, &format!("{fifo}: a FIFO, not a regular file"));
}

/// Issue 28, 4: a sweep spec past its 1 MiB limit is refused naming the limit, not parsed.
#[test]
fn an_oversized_sweep_spec_is_refused_naming_the_limit() {
    let scratch = Scratch::new("inputs-bigsweep");
    let text = "# padding padding padding padding padding padding\n".repeat(21_000);
    assert!(text.len() > 1 << 20);
    let spec = scratch.file("big.toml", &text);
    let out = iosched_within(&["sweep", &spec]);
    assert_input_error(&out, "larger than 1 MiB, the limit for a sweep spec");
}

/// Issue 28, 4: a sweep of 33^6 = 1.29e9 points started running; its size is computed from
/// the lists and refused before anything expands.
#[test]
fn a_sweep_of_a_billion_points_is_refused_up_front() {
    let scratch = Scratch::new("inputs-hugesweep");
    scratch.file("j.fio", "[j]\nrw=read\nsize=64k\n");
    let values: Vec<String> = (0..33).map(|v| v.to_string()).collect();
    let list = format!("[{}]", values.join(", "));
    let env: String = ["A", "B", "C", "D", "E", "F"]
        .iter()
        .map(|name| format!("{name} = {list}\n"))
        .collect();
    let spec = scratch.file("huge.toml", &format!("jobs = [\"j.fio\"]\n[env]\n{env}"));
    let out = iosched_within(&["sweep", &spec]);
    assert_input_error(&out, "1.291e9 points");
    assert_input_error(&out, "more than the 100000 a sweep may have");
}

/// A blktrace v7 record, little-endian: queue (`Q`) of `bytes` at `sector` by pid 100.
fn queue_record(sector: u64, bytes: u32) -> Vec<u8> {
    const READ: u32 = 1 << 16; // TC_READ in the category half.
    let mut r = Vec::new();
    r.extend_from_slice(&(0x6561_7400u32 | 7).to_le_bytes());
    r.extend_from_slice(&1u32.to_le_bytes()); // sequence
    r.extend_from_slice(&1000u64.to_le_bytes()); // time
    r.extend_from_slice(&sector.to_le_bytes());
    r.extend_from_slice(&bytes.to_le_bytes());
    r.extend_from_slice(&(READ | 1).to_le_bytes()); // action: queue
    r.extend_from_slice(&100u32.to_le_bytes()); // pid
    r.extend_from_slice(&((8u32 << 20) | 16).to_le_bytes()); // device 8,16
    r.extend_from_slice(&0u32.to_le_bytes()); // cpu
    r.extend_from_slice(&0u16.to_le_bytes()); // error
    r.extend_from_slice(&0u16.to_le_bytes()); // payload length
    r
}

/// Issue 28, 5: a queue event at sector 2^62 (byte 2^71) wrapped to byte 0 and replayed there,
/// exit 0; the record is refused at its byte offset.
#[test]
fn a_blktrace_sector_past_2_63_bytes_is_refused() {
    let scratch = Scratch::new("inputs-sector");
    let capture = scratch.0.join("far.blktrace.0");
    let mut bytes = queue_record(8, 4096);
    bytes.extend(queue_record(1 << 62, 4096));
    std::fs::write(&capture, bytes).unwrap();
    let capture = capture.to_string_lossy().into_owned();
    let out = iosched_within(&["replay", &capture, "--device", "fixed"]);
    assert_input_error(
        &out,
        &format!("{capture}: byte 48: sector 4611686018427387904 (+4096 bytes) ends past 2^63"),
    );
}

/// Issue 28, 5: an iolog offset of 2^64 - 1 was accepted; an I/O ending past 2^63 bytes is
/// refused at its line.
#[test]
fn an_iolog_offset_past_2_63_is_refused_at_its_line() {
    let scratch = Scratch::new("inputs-offset");
    let log = scratch.file(
        "far.log",
        "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n\
         /dev/x read 18446744073709551615 4096\n",
    );
    let out = iosched_within(&["replay", &log, "--device", "fixed"]);
    assert_input_error(&out, &format!("{log}:5: offset 18446744073709551615"));
    assert_input_error(&out, "ends past 2^63 bytes");
}

/// Issue 28, 5: an iolog of fio's old version 1, or a version 2 log without its header, was
/// decoded as blktrace ("truncated record"); it is named for what it is, as fio 3.33 does
/// ("iolog version 1 is no longer supported").
#[test]
fn an_iolog_without_a_version_header_is_named_as_such() {
    let scratch = Scratch::new("inputs-v1");
    let v1 = scratch.file("v1.log", "0,0,4096\n0,4096,4096\n1,8192,4096\n");
    let headless = scratch.file("headless.log", "/dev/x add\n/dev/x read 0 4096\n");
    for log in [v1, headless] {
        let out = iosched_within(&["replay", &log, "--device", "fixed"]);
        assert_input_error(&out, &format!("{log}:1: neither a blktrace capture"));
        assert_input_error(&out, "a version 1 iolog or a log without its header");
        assert!(!stderr_of(&out).contains("truncated record"));
    }
}

/// Issue 28, 4: `plot` and `compare --plot` of a result whose bandwidth is 1e307 (infinite in
/// bytes per second) drew axes forever; the figure is refused naming the file and field.
#[test]
fn an_absurd_bandwidth_is_refused_by_plot_and_compare() {
    let scratch = Scratch::new("inputs-1e307");
    let huge = scratch.file("huge.json", &result_with_bw("1e307"));
    let good = scratch.file("good.json", &result_with_bw("4000"));
    let charts = scratch.path("charts");
    let says = format!("{huge}: jobs[0] 'r': read.bw: 1e+307 is out of range");
    assert_input_error(&iosched_within(&["plot", &huge, "--out", &charts]), &says);
    let out = iosched_within(&["compare", &good, &huge, "--plot", &charts]);
    assert_input_error(&out, &says);
    // A real result still plots.
    let out = iosched_within(&["plot", &good, "--out", &charts]);
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// Issue 28, 5: `compare` printed a bandwidth of `"abc"` as 0.00; it names file and field.
#[test]
fn a_bandwidth_that_is_no_number_is_an_error() {
    let scratch = Scratch::new("inputs-abc");
    let bad = scratch.file("bad.json", &result_with_bw("\"abc\""));
    let good = scratch.file("good.json", &result_with_bw("4000"));
    let out = iosched_within(&["compare", &good, &bad]);
    assert_input_error(
        &out,
        &format!("{bad}: jobs[0] 'r': read.bw: \"abc\" is not a number"),
    );
}

/// Issue 28, 4: a saved spec edited to `"ncpus": 0` ran; the machine is refused.
#[test]
fn a_spec_with_no_cpus_is_refused() {
    let scratch = Scratch::new("inputs-ncpus");
    let job = scratch.file("j.fio", "[j]\nrw=read\nsize=64k\n");
    let spec = scratch.path("s.json");
    let out = iosched(&["run", &job, "--save-spec", &spec]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(&spec).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["machine"]["ncpus"] = 0.into();
    std::fs::write(&spec, json.to_string()).unwrap();
    let out = iosched_within(&["run", "--spec", &spec]);
    assert_input_error(&out, "machine.ncpus = 0: must be 1 to 4096");
}

/// Issue 28, 5: `--trace-limit` refused a run whose trace was 2.5 KB on a 55 KiB estimate (100
/// buffered writes under CFQ, which the page cache merges). Only a trace sure to pass the
/// limit is refused up front; this one runs and stays under it.
#[test]
fn a_trace_limit_refuses_only_a_trace_sure_to_pass_it() {
    let scratch = Scratch::new("inputs-tracelimit");
    let job = scratch.file("w.fio", "[w]\nrw=write\nbs=4k\nsize=400k\n");
    let trace = scratch.path("w.txt");
    let args = [
        "run",
        &job,
        "--scheduler",
        "cfq",
        "--trace",
        &trace,
        "--trace-limit",
        "16k",
    ];
    let out = iosched_within(&args);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(std::fs::metadata(&trace).unwrap().len() <= 16 << 10);
}

/// An iolog of one job (pid 0) reading 8 KiB.
fn small_iolog(scratch: &Scratch) -> String {
    scratch.file(
        "small.log",
        "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n/dev/x read 4096 4096\n",
    )
}

/// Issue 28, 5: `replay --assign` with an empty MATCH or one naming no process ran without
/// assigning anything.
#[test]
fn an_assign_matching_nothing_is_refused() {
    let scratch = Scratch::new("inputs-assign");
    let log = small_iolog(&scratch);
    let replay =
        |assign: &str| iosched_within(&["replay", &log, "--device", "fixed", "--assign", assign]);
    assert_input_error(&replay("=cgroup=a"), "--assign '=cgroup=a': empty MATCH");
    assert_input_error(
        &replay("4242=cgroup=a"),
        "--assign '4242=cgroup=a': no process of the log matches (have: 0)",
    );
    assert_input_error(&replay("0="), "--assign '0=': no OPTIONS");
    let out = replay("0=cgroup=a");
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// Issue 28, 5: `reproduce --scenarios` of an empty folder reproduced nothing and exited 0.
#[test]
fn reproducing_an_empty_scenarios_folder_is_an_error() {
    let scratch = Scratch::new("inputs-noscenario");
    let dir = scratch.path("empty");
    std::fs::create_dir(&dir).unwrap();
    let out = iosched_within(&["reproduce", "--scenarios", &dir]);
    assert_input_error(&out, &format!("{dir}: no scenario here"));
}
