//! Seed 004's regime (issue 33): four buffered dd readers under CFQ's `group_idle`. CFQ idles
//! for a group only while the group's mean think time is below `group_idle`, and a buffered
//! reader's think time is the CPU time it spends copying one read-ahead window, less the
//! device's time for the next. Checked against the seed's own measured sweep (a phone, Dec
//! 2022): 1 ms keeps the total of 0 (669 against 659 MB/s), 2 ms halves it (362), and one group
//! at a time runs at one reader's speed (the 2–10 ms rows average 332 MB/s).

mod common;

use std::process::Command;

/// Total MB/s of `scenarios/004/dd-buffered.fio` on the phone with these settings.
fn total_mb_s(group_idle_us: u32, read_ahead_kb: u32) -> f64 {
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SIZE", "1g")
        .env("RUNTIME", "300ms")
        .args(["run", "scenarios/004/dd-buffered.fio", "--device", "ufs31"])
        .args(["--scheduler", "cfq", "--output-format", "json"])
        .args(["--set", "cpu_era=phone-2022", "--set", "cpus=8"])
        .args(["--set", &format!("read_ahead_kb={read_ahead_kb}")])
        .args(["--set", &format!("group_idle_us={group_idle_us}")])
        .output()
        .unwrap();
    let doc = common::json_of(&out);
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    jobs.iter()
        .map(|job| job["read"]["bw_bytes"].as_f64().unwrap() / 1e6)
        .sum()
}

/// With Android's post-boot 512 KiB window a reader copies for 1.55 ms per window, so its
/// think time falls between 1 and 2 ms: 1 ms of group idle is not armed and keeps the total,
/// 2 ms is and serialises the groups. The kernel's 128 KiB window puts the cliff below 1 ms.
#[test]
fn seed_004_dd_readers_cliff_between_1_and_2_ms() {
    let none = total_mb_s(0, 512);
    let one_ms = total_mb_s(1000, 512);
    let two_ms = total_mb_s(2000, 512);
    assert!(one_ms / none > 0.85, "1 ms: {one_ms:.0} of {none:.0} MB/s");
    assert!(
        two_ms / one_ms < 0.5,
        "2 ms: {two_ms:.0} of {one_ms:.0} MB/s"
    );
    // One group at a time: one CPU-bound reader, within ±30 % of the seed's 332 MB/s.
    assert!(
        (232.0..432.0).contains(&two_ms),
        "serialised: {two_ms:.0} MB/s"
    );
    let small_window = total_mb_s(1000, 128);
    assert!(
        small_window / none < 0.5,
        "128 KiB, 1 ms: {small_window:.0} of {none:.0} MB/s"
    );
}
