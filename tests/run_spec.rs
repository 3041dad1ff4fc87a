//! A run's description written as JSON (`iosched run --save-spec`) and read back (`--spec`)
//! runs to the same result, without the job files or the environment that described it.

mod common;

use common::{iosched, Scratch};
use serde_json::Value;

/// The results without the wall clock, which is the only part allowed to differ.
fn results(stdout: &[u8]) -> Value {
    let mut run: Value = serde_json::from_slice(stdout).expect("fio JSON");
    run["iosched"]
        .as_object_mut()
        .expect("an iosched object")
        .remove("wall_clock");
    run
}

#[test]
fn a_saved_spec_runs_to_the_same_result_after_its_files_and_variables_are_gone() {
    let scratch = Scratch::new("run-spec");
    let job = scratch.file(
        "mixed.fio",
        "[global]\nsize=${SIZE}\ndirect=1\n[reader]\nrw=randread\nbs=4k\n\
         [writer]\nrw=write\nbs=64k\nprio=7\n",
    );
    let spec = scratch.path("run.json");
    let trace = scratch.path("first.trace");
    // Relative, as a spec's output paths must be to be written again without --force (a
    // path read from a file stays below the current folder, issue 28).
    let first = std::process::Command::new(env!("CARGO_BIN_EXE_iosched"))
        .current_dir(&scratch.0)
        .args(["run", &job, "--scheduler", "cfq", "--device", "hdd-7200"])
        .args([
            "--set",
            "slice_idle=4",
            "--set",
            "dirty_ratio=10",
            "--seed",
            "9",
        ])
        .args([
            "--output-format",
            "json",
            "--save-spec",
            &spec,
            "--trace",
            "first.trace",
        ])
        .env("SIZE", "2m")
        .output()
        .unwrap();
    common::assert_ran(&first);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    assert_eq!(saved["machine"]["env"]["SIZE"], "2m", "{saved:#}");
    assert_eq!(saved["tunables"][0]["name"], "slice_idle");
    assert_eq!(saved["knobs"][0]["name"], "dirty_ratio");

    // The job file is gone and SIZE is unset: only the spec describes the run now.
    std::fs::remove_file(&job).unwrap();
    std::fs::remove_file(&trace).unwrap();
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_iosched"))
        .current_dir(&scratch.0)
        .args(["run", "--spec", &spec, "--output-format", "json"])
        .output()
        .unwrap();
    common::assert_ran(&again);
    let (first, again) = (results(&first.stdout), results(&again.stdout));
    assert_eq!(first, again);
    assert_eq!(first["jobs"][0]["read"]["io_bytes"], 2 << 20);
    // The trace file named in the spec is written again, the same way.
    assert!(std::fs::metadata(&trace).is_ok_and(|m| m.len() > 0));
}

#[test]
fn a_spec_of_another_version_or_with_flags_beside_it_is_refused() {
    let scratch = Scratch::new("run-spec-bad");
    let job = scratch.file("a.fio", "[a]\nsize=1m\nrw=read\n");
    let spec = scratch.path("run.json");
    let saved = iosched(&[
        "run",
        &job,
        "--save-spec",
        &spec,
        "--output-format",
        "terse",
    ]);
    assert!(saved.status.success());
    let text = std::fs::read_to_string(&spec).unwrap();
    let newer = scratch.file(
        "newer.json",
        &text.replace("\"version\": 1", "\"version\": 2"),
    );
    let out = iosched(&["run", "--spec", &newer]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--spec") && stderr.contains("version 2"),
        "{stderr}"
    );
    let out = iosched(&["run", "--spec", &spec, "--set", "quantum=4"]);
    assert_eq!(out.status.code(), Some(2));
}
