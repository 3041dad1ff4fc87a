//! The starvation of random readers beyond the device's queue depth, in the conformance
//! harness's own loop (the loop that fed Linux 4.20.1's `cfq-iosched.c` for the recorded
//! scenarios): no simulated drive, no process model, only CFQ and the kernel's event order.
//!
//! Reference: every rule of the loop is pinned by the kernel's recorded decisions in
//! `../shared/conformance/cfq/` (315 of 315 identical). In particular the workload slice
//! saved at each expiry and restored from the *next* selection: charging the time between
//! them instead makes 29 of the 315 recorded scenarios diverge from the kernel (x0019, whose
//! SYNC_NOIDLE workload of 32.6 ms lasts 125 ms through 669 such preemptions, among them).
//! docs/cfq.md gives the mechanism.

use std::path::Path;

use iosched_lab::conformance::harness::run_scenario;
use iosched_lab::conformance::scenario::parse_scenario;

const SCENARIO: &str = "tests/data/starve-n6-d2.scn";

struct Run {
    /// Dispatches per pid, pids 100..=105.
    dispatched: [usize; 6],
    /// (time, reason and slice) of every workload choice.
    workloads: Vec<(u64, String)>,
    /// Reasons of the preemptions after the last workload choice.
    late_preemptions: Vec<String>,
    end: u64,
}

/// Runs the scenario with `extra` directives appended.
fn run(extra: &str) -> Run {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(SCENARIO);
    let text = std::fs::read_to_string(&path).expect("the scenario file") + extra;
    let sc = parse_scenario(&text, &path).expect("the scenario parses");
    let out = run_scenario(&sc, None, true).expect("the scenario runs");
    let mut dispatched = [0; 6];
    for &(_, _, pid) in &out.dispatches {
        dispatched[(pid - 100) as usize] += 1;
    }
    let mut workloads = Vec::new();
    let mut late_preemptions = Vec::new();
    for line in out.text.as_deref().unwrap_or("").lines() {
        let mut f = line.splitn(4, ' ');
        let (Some("X"), Some(t), Some(kind), Some(rest)) = (f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let t: u64 = t.parse().unwrap();
        match kind {
            "workload" => {
                workloads.push((t, rest.to_string()));
                late_preemptions.clear();
            }
            "preempt" => late_preemptions.push(rest.to_string()),
            _ => {}
        }
    }
    Run {
        dispatched,
        workloads,
        late_preemptions,
        end: sc.origin_ns + sc.end_ns,
    }
}

/// Three of the six readers (device depth 2, plus the one waiting at the front of the tree)
/// get the device; the others are stuck with the few requests they did before the loop
/// closed. The loop runs on one SYNC_NOIDLE workload whose slice never runs out: chosen in
/// the first 200 ms with a 250 ms slice, it is still the serving workload 2.8 s later,
/// renewed by preemptions of an empty SYNC_NOIDLE queue (rule 9).
#[test]
fn three_of_six_readers_keep_a_two_slot_device() {
    let r = run("");
    let mut counts = r.dispatched;
    counts.sort_unstable();
    assert!(
        counts[..3].iter().all(|&n| n <= 10) && counts[3..].iter().all(|&n| n > 500),
        "dispatches per reader: {:?}",
        r.dispatched
    );
    let (t, last) = r.workloads.last().expect("a workload was chosen");
    assert!(
        last.contains("sync-noidle") && last.contains("Some(250000000)"),
        "last workload choice: {last}"
    );
    assert!(
        r.end - t > 10 * 250_000_000,
        "the workload was chosen again at {t}, {} ns before the end",
        r.end - t
    );
    assert!(r.late_preemptions.len() > 500);
    assert!(
        r.late_preemptions.iter().all(|p| p.contains("rule 9")),
        "{:?}",
        r.late_preemptions.iter().find(|p| !p.contains("rule 9"))
    );
}

/// The pre-4.6 preemption rules (a SYNC_NOIDLE queue preempts only when it and one other are
/// on the tree) do not help: the empty active queue, which should not idle, is preempted by
/// the older rule 11 instead, and the same three keep the device.
#[test]
fn pre_4_6_preemption_rules_starve_the_same_readers() {
    let now = run("");
    let old = run("tunable ancestor_preempt 0\n");
    assert_eq!(now.dispatched, old.dispatched);
    assert!(old.late_preemptions.len() > 500);
    assert!(
        old.late_preemptions.iter().all(|p| p.contains("rule 11")),
        "{:?}",
        old.late_preemptions.iter().find(|p| !p.contains("rule 11"))
    );
}
