//! `scripts/kernel-side-by-side.py` counts the engine's scheduler messages by kind from the
//! trace file the engine writes. Checked here against that file as `iosched run --trace`
//! writes it: a BFQ message whose first word starts with "bfq" (`bfqq_served 8 secs`) was
//! once taken for a queue's tag and counted under its number ("8", "1057"), so the table
//! showed no `bfqq_served` for the engine and rows of numbers instead.

mod common;

use std::process::Command;

use common::{iosched, skip, Scratch};

/// Two weighted random readers, short enough for a debug build.
const JOB: &str = "\
[global]
ioengine=libaio
direct=1
rw=randread
bs=4k
iodepth=8
size=8m
runtime=30ms
time_based

[heavy]
cgroup=heavy
cgroup_weight=1000

[light]
cgroup=light
cgroup_weight=100
";

/// The script's `message_kinds` over `trace`, as `kind count` lines.
fn kinds_by_script(trace: &str) -> Vec<(String, u64)> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kernel-side-by-side.py");
    let program = "import importlib.util, sys\n\
        spec = importlib.util.spec_from_file_location('sbs', sys.argv[1])\n\
        sbs = importlib.util.module_from_spec(spec)\n\
        spec.loader.exec_module(sbs)\n\
        for kind, n in sorted(sbs.message_kinds(sys.argv[2]).items()):\n\
        \x20   print(kind, n)\n";
    let out = Command::new("python3")
        .args(["-c", program, script, trace])
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let (kind, n) = line.rsplit_once(' ').expect("kind count");
            (kind.to_string(), n.parse().expect("a count"))
        })
        .collect()
}

#[test]
fn engine_bfq_messages_are_counted_under_their_own_kind() {
    if !common::tool_available("python3") {
        skip("engine_bfq_messages_are_counted_under_their_own_kind", "no python3");
        return;
    }
    let scratch = Scratch::new("side-by-side-script");
    let job = scratch.file("two-groups.fio", JOB);
    let trace = scratch.path("bfq.txt");
    let out = iosched(&[
        "run", &job, "--scheduler", "bfq", "--device", "ufs31", "--trace", &trace,
    ]);
    common::assert_ran(&out);
    let text = std::fs::read_to_string(&trace).unwrap();
    let dispatched = text.lines().filter(|l| l.contains(" D ")).count() as u64;
    assert!(dispatched > 100, "too short a run: {dispatched} dispatches");
    let kinds = kinds_by_script(&trace);
    let numeric: Vec<_> = kinds
        .iter()
        .filter(|(kind, _)| kind.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    assert!(numeric.is_empty(), "numbers counted as kinds: {numeric:?}");
    // bfq_bfqq_served() logs once per dispatched request, and again for a budget timeout's
    // charge at expiry.
    let served = kinds.iter().find(|(kind, _)| kind == "bfqq_served");
    assert!(
        served.is_some_and(|(_, n)| *n >= dispatched),
        "bfqq_served {served:?} for {dispatched} dispatches"
    );
}
