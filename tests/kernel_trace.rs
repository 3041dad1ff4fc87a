//! `iosched kernel --trace FILE`: the kernel's own record of a run, from ftrace's `blk`
//! tracer (blktrace cannot capture on this locked-down kernel), checked against what fio
//! says it did: every I/O fio counted is queued, dispatched and completed in the trace, BFQ's
//! own messages are there, and every tracing setting is as it was before. Needs root, fio,
//! loop devices and tracefs; each missing piece skips with a printed note.

mod common;

use std::process::Command;

use common::{iosched, is_root, json_of, skip, stderr_of, tool_available, Loop, Scratch};

/// tracefs's settings as a fresh private mount shows them: tracer, tracing_on, buffer size,
/// the timer event's enable and filter.
fn tracing_state() -> Option<String> {
    let script = r#"d=$(mktemp -d); mount -t tracefs nodev "$d" || exit 1
cat "$d/current_tracer" "$d/tracing_on" "$d/buffer_size_kb" \
    "$d/events/timer/hrtimer_start/enable" "$d/events/timer/hrtimer_start/filter"
umount "$d"; rmdir "$d""#;
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

const JOBS: &str =
    "[seq]\nrw=read\nbs=4k\nsize=2m\ndirect=1\n\n[rand]\nrw=randread\nbs=4k\nsize=2m\ndirect=1\n";

#[test]
fn a_bfq_run_is_traced_whole_and_tracing_is_put_back() {
    const TEST: &str = "a_bfq_run_is_traced_whole_and_tracing_is_put_back";
    if !is_root() || !tool_available("fio") {
        skip(TEST, "needs root and fio");
        return;
    }
    let Some(before) = tracing_state() else {
        skip(TEST, "tracefs cannot be mounted here");
        return;
    };
    let scratch = Scratch::new("kernel-trace");
    let Some(device) = Loop::over_image(TEST, &scratch.path("disk.img"), 32 << 20) else {
        return;
    };
    let enable = format!(
        "/sys/block/{}/trace/enable",
        device.0.trim_start_matches("/dev/")
    );
    let enable_before = std::fs::read_to_string(&enable).unwrap();
    let job = scratch.file("two.fio", JOBS);
    let trace = scratch.path("kernel.txt");
    let args = [
        "kernel",
        &job,
        "--device",
        &device.0,
        "--scheduler",
        "bfq",
        "--trace",
        &trace,
    ];
    let report = json_of(&iosched(&args));
    let ios: u64 = report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(ios, 1024);
    let summary = &report["iosched"]["trace"];
    for action in ["Q", "D", "C"] {
        assert_eq!(summary["events"][action], ios, "{action}: {summary}");
    }
    assert_eq!(summary["lost_events"], 0, "{summary}");
    let messages = &summary["messages"];
    for kind in ["add_request", "set_in_service_queue", "select_queue"] {
        assert!(
            messages[kind].as_u64().unwrap_or(0) > 0,
            "{kind}: {messages}"
        );
    }
    let text = std::fs::read_to_string(&trace).unwrap();
    assert_eq!(
        text.lines().count() as u64,
        summary["lines"].as_u64().unwrap()
    );
    assert!(text.contains(" m   N bfq"), "no BFQ message in the trace");
    assert_eq!(
        tracing_state().unwrap(),
        before,
        "tracefs settings not put back"
    );
    assert_eq!(std::fs::read_to_string(&enable).unwrap(), enable_before);
}

#[test]
fn a_binary_trace_name_is_refused_before_the_device_is_touched() {
    let scratch = Scratch::new("kernel-trace-binary");
    let job = scratch.file("one.fio", "[r]\nrw=read\nbs=4k\nsize=64k\n");
    let out = iosched(&[
        "kernel",
        &job,
        "--device",
        "/dev/loop-none",
        "--scheduler",
        "bfq",
        "--trace",
        &scratch.path("k.blktrace"),
    ]);
    if out.status.code() == Some(2) && stderr_of(&out).contains("fio") && !tool_available("fio") {
        skip("a_binary_trace_name_is_refused", "fio not installed");
        return;
    }
    common::assert_input_error(&out, "name it without .blktrace");
}
