//! Linux 6.12's own BFQ (`block/bfq-iosched.c`, `bfq-wf2q.c`, `bfq-cgroup.c`, compiled
//! unmodified from Debian's linux-source-6.12 against the project's shim) run by the oracle's
//! driver: the hand-written families of `oracle/scenarios/bfq/` and generated scenarios each
//! run twice with byte-identical output, and every run shows the facts of
//! `oracle::sanity` (each request inserted, dispatched and completed once, the device within
//! its depth, the idle timer never firing after a cancel, no timer with slice_idle 0). The
//! weight scenarios get service in the ratio of their weights within 5 %: BFQ's own
//! guarantee, read from the kernel's decisions.
//!
//! Then iosched's BFQ (`crates/core/src/bfq`) against that
//! kernel code on the same scenarios, line for line: every dispatch, merge, idle-timer arm,
//! cancel and expiry, and every `bfq_log` message with its queue's cgroup.
//!
//! Compiling the oracle takes about 3 s of gcc CPU; the first test about 19 s of CPU (70 s of
//! wall time at load 21 on 2 cores, debug build).

use std::path::{Path, PathBuf};

use iosched_lab::oracle::{self, kernel, sanity, scenario};

/// The seed CI runs; `scripts/kernel-oracle bfq --random N --seed S` runs others.
const SEED: u64 = 2026;
const GENERATED: u64 = 240;

/// Sectors served to `pid` over those served to `other`.
fn share(sum: &sanity::Summary, pid: u32, other: u32) -> f64 {
    sum.sectors_by_pid[&pid] as f64 / sum.sectors_by_pid[&other] as f64
}

/// The weight ratio a scenario's two processes must be served in, if it is a weight one.
fn expected_ratio(path: &Path) -> Option<f64> {
    match path.file_name()?.to_str()? {
        "p-weights-cgroup.scn" => Some(3.0),
        "p-weights-ioprio.scn" => Some(2.0),
        _ => None,
    }
}

/// Runs one scenario twice and checks it; its summary and line count.
fn run_and_check(bin: &Path, path: &Path) -> Result<(sanity::Summary, usize), String> {
    let name = path.display();
    let sc = scenario::read_scenario(path).map_err(|e| e.to_string())?;
    let a = kernel::run_kernel(bin, path).map_err(|e| e.to_string())?;
    let b = kernel::run_kernel(bin, path).map_err(|e| e.to_string())?;
    if let Some(d) = oracle::first_divergence(&a, &b) {
        return Err(format!("{name}: two runs differ\n{d}"));
    }
    let sum = sanity::check(&sc, &a).map_err(|e| format!("{name}: {e}"))?;
    if sum.dispatched == 0 {
        return Err(format!("{name}: nothing dispatched"));
    }
    if let Some(ratio) = expected_ratio(path) {
        let got = share(&sum, 2, 1).max(share(&sum, 1, 2));
        if (got / ratio - 1.0).abs() >= 0.05 {
            return Err(format!(
                "{name}: service ratio {got:.3}, weights give {ratio}"
            ));
        }
    }
    Ok((sum, a.lines().count()))
}

/// The oracle binary and the scenario files (hand-written first), or `None` (printed
/// SKIPPED) when the kernel source package is absent.
fn setup(gen_dir: &Path) -> Option<(PathBuf, usize, Vec<PathBuf>)> {
    let tree = match kernel::kernel_tree() {
        Ok(tree) => tree,
        Err(kernel::KernelError::Absent) => {
            println!("SKIPPED: {}", kernel::KernelError::Absent);
            return None;
        }
        Err(e) => panic!("kernel source: {e}"),
    };
    let bin = kernel::build("bfq", &tree).expect("BFQ's oracle compiles");
    let hand = oracle::scenario_files(&kernel::shim_dir().join("scenarios/bfq"))
        .expect("hand-written scenarios");
    let mut files = hand.clone();
    files.extend(oracle::write_generated("bfq", gen_dir, SEED, GENERATED).expect("generated"));
    Some((bin, hand.len(), files))
}

/// One test, one oracle build (two tests of one process would share the binary's path).
#[test]
fn bfq_decides_as_linux_6_12() {
    let gen_dir = std::env::temp_dir().join(format!("iosched-bfq-test-{}", std::process::id()));
    let Some((bin, hand, files)) = setup(&gen_dir) else {
        return;
    };
    let sound = std::panic::catch_unwind(|| kernel_side_is_deterministic_and_sound(&bin, &files));
    let same = sound
        .is_ok()
        .then(|| std::panic::catch_unwind(|| core_is_identical(&bin, hand, &files)));
    let _ = std::fs::remove_file(&bin);
    let _ = std::fs::remove_dir_all(&gen_dir);
    if let Err(e) = sound {
        std::panic::resume_unwind(e);
    }
    if let Some(Err(e)) = same {
        std::panic::resume_unwind(e);
    }
}

/// The kernel side: every scenario twice byte-identical and sound.
fn kernel_side_is_deterministic_and_sound(bin: &Path, files: &[PathBuf]) {
    let results =
        iosched_lab::pool::map_in_order(files, 0, |p: &PathBuf| run_and_check(bin, p), || {});
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures[0]
    );
    let (lines, fires) = results
        .iter()
        .flatten()
        .fold((0, 0), |(l, f), (sum, n)| (l + n, f + sum.timer_fires));
    println!(
        "{} scenarios ({GENERATED} generated, seed {SEED}) twice identical and sound; {lines} \
         decision lines, {fires} idle-timer expiries",
        files.len(),
    );
    assert!(files.len() >= 300, "only {} scenarios", files.len());
    assert!(fires > 0, "the idle timer never fired");
}

/// iosched's BFQ against Linux 6.12's `block/bfq-iosched.c`, `bfq-wf2q.c` and `bfq-cgroup.c`
/// (the OUTSIDE reference, compiled unmodified against the project's shim): the hand-written
/// families plus generated scenarios, at least 300 in all, every one identical.
fn core_is_identical(bin: &Path, hand: usize, files: &[PathBuf]) {
    let outcomes = oracle::compare_all("bfq", bin, files, 0).expect("both sides run");
    match oracle::all_identical(&outcomes, hand, SEED, 300) {
        Ok(line) => println!("{line}"),
        Err(e) => panic!("{e}"),
    }
}
