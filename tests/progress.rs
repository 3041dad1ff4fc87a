//! The progress line: on a terminal an engine run shows its elapsed time of the jobs' total
//! with an ETA, as fio's eta line does, and `--eta never` turns it off. Run under `script`
//! (util-linux), which gives the command a pseudo-terminal.

mod common;

use std::process::Command;

use common::{skip, tool_available, Scratch};

/// What `iosched run` draws on a terminal for a 2-second engine run on a file.
fn terminal_output(scratch: &Scratch, extra: &str) -> String {
    let data = scratch.data_file("data", 16 << 20);
    let job = scratch.file(
        "r.fio",
        &format!("[r]\nrw=randread\nbs=4k\ndirect=1\nruntime=2\ntime_based\nfilename={data}\n"),
    );
    let command = format!(
        "{} run {job} --device {data} --output-format terse --output {} {extra}",
        env!("CARGO_BIN_EXE_iosched"),
        scratch.path("out.txt"),
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script runs");
    let drawn = String::from_utf8_lossy(&out.stdout).into_owned();
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{drawn}{errors}");
    drawn
}

/// What `iosched run` draws on a terminal for a simulated run of `jobs` on `nvme-gen4`.
fn simulated_terminal_output(scratch: &Scratch, jobs: &str) -> String {
    let job = scratch.file("r.fio", jobs);
    let command = format!(
        "{} run {job} --device nvme-gen4 --output-format terse --output {}",
        env!("CARGO_BIN_EXE_iosched"),
        scratch.path("out.txt"),
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script runs");
    let drawn = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{drawn}");
    drawn
}

#[test]
fn engine_run_shows_elapsed_of_total_with_eta_unless_told_not_to() {
    if !tool_available("script") {
        return skip(
            "progress",
            "no `script` (util-linux) to give iosched a terminal",
        );
    }
    let scratch = Scratch::new("progress");
    let shown = terminal_output(&scratch, "");
    assert!(shown.contains("of 2.0 s, ETA 00m:0"), "{shown:?}");
    assert!(shown.contains("elapsed 1."), "{shown:?}");
    let hidden = terminal_output(&scratch, "--eta never");
    assert!(!hidden.contains("ETA"), "{hidden:?}");
}

/// A simulated run on a terminal shows the simulator's clock against the jobs' planned time
/// with an ETA from its pace so far: `simulated 12.3 s of 240.0 s, ETA 00m:02s`. The run
/// takes a few seconds of wall time (the bar waits one before it draws).
#[test]
fn simulated_run_shows_simulated_time_of_total_with_eta() {
    if !tool_available("script") {
        return skip(
            "progress",
            "no `script` (util-linux) to give iosched a terminal",
        );
    }
    let scratch = Scratch::new("progress-sim");
    let drawn = simulated_terminal_output(
        &scratch,
        "[global]\ndirect=1\ntime_based=1\nruntime=240\nsize=1g\nbs=4k\n\
         [a]\nrw=randread\n[b]\nrw=randread\n",
    );
    assert!(drawn.contains("of 240.0 s, ETA "), "{drawn:?}");
    assert!(drawn.contains("simulated "), "{drawn:?}");
}

/// A simulated run that ends when its bytes are done has no planned time; its line counts
/// the I/Os done against the jobs' expected count (sizes over block sizes), with the
/// simulator's clock and an ETA: `simulated 12.3 s, 1048576 of ~16777216 I/Os, ETA 00m:02s`.
#[test]
fn size_bound_simulated_run_counts_ios_of_the_expected_total() {
    if !tool_available("script") {
        return skip(
            "progress",
            "no `script` (util-linux) to give iosched a terminal",
        );
    }
    let scratch = Scratch::new("progress-size");
    let drawn = simulated_terminal_output(
        &scratch,
        "[global]\ndirect=1\nsize=32g\nbs=4k\n[a]\nrw=randread\n[b]\nrw=randread\n",
    );
    // Two clones of 32 GiB in 4 KiB blocks: sized to take several seconds, since the bar
    // waits one second before it draws (8 GiB ran in about one second after session 20's
    // speed-ups, and the bar did not always draw).
    assert!(drawn.contains(" of ~16777216 I/Os, ETA "), "{drawn:?}");
    assert!(drawn.contains("simulated "), "{drawn:?}");
}
