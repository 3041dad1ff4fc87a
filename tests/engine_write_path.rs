//! A 4 KiB random write at queue depth 1 reaches the kernel from the engine as it does from
//! fio 3.33 (issue 16: the engine's QD1 randwrite IOPS read 0.78–0.83 of fio's).
//!
//! What was compared, with fio itself on the same job as the reference: the system calls per
//! I/O (one `io_uring_enter` that submits, one that waits: fio's `commit` and `getevents`),
//! the offsets (every block of the region once per pass, fio's random map: the same set of
//! blocks as fio's own `write_iolog`, in a shuffled order), and the bytes (no block left as
//! zeros or written twice alike: fio's `scramble_buffers=1` default). All three agree, so the
//! write path makes no extra work for the device or the kernel; the IOPS gap measured on this
//! VM came from runs landing on one CPU or two (see docs/benchmarks.md). Nothing here
//! measures speed.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use common::{assert_ran, fio3_available, json_of, skip, tool_available, Scratch};

const BLOCKS: u64 = 256;

fn job(log: &str) -> String {
    format!(
        "[w]\nioengine=io_uring\ndirect=1\nrw=randwrite\nbs=4k\niodepth=1\nsize={}\n\
         write_iolog={log}\n",
        BLOCKS * 4096
    )
}

/// The byte offsets of the writes in an iolog (version 3: `TIME FILE write OFFSET LEN`).
fn written_offsets(log: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && f[2] == "write")
        .map(|f| f[3].parse().unwrap())
        .collect()
}

/// Each block of the region written once, not in order.
fn assert_one_pass(who: &str, offsets: &[u64]) -> BTreeSet<u64> {
    let set: BTreeSet<u64> = offsets.iter().copied().collect();
    assert_eq!(offsets.len() as u64, BLOCKS, "{who}: writes");
    assert_eq!(set.len() as u64, BLOCKS, "{who}: a block written twice");
    assert!(
        offsets.windows(2).any(|w| w[1] != w[0] + 4096),
        "{who}: sequential"
    );
    set
}

/// The target laid out beforehand as zeros, so every block found non-zero was written by
/// the job (neither driver fills a file that is already its size).
fn zeros(path: &str) {
    std::fs::write(path, vec![0u8; (BLOCKS * 4096) as usize]).unwrap();
}

/// `BLOCKS` blocks of `path` hold data (the job's: the file was zeros), no two alike.
/// (The engine places a job's file where iosched's layout puts it, not always at 0.)
fn assert_blocks_distinct(who: &str, path: &str) {
    let data = std::fs::read(path).unwrap();
    let written: Vec<&[u8]> = data
        .chunks(4096)
        .filter(|b| b.iter().any(|&x| x != 0))
        .collect();
    assert_eq!(written.len() as u64, BLOCKS, "{who}: blocks with data");
    let distinct: BTreeSet<&[u8]> = written.iter().copied().collect();
    assert_eq!(distinct.len(), written.len(), "{who}: two blocks alike");
}

/// `io_uring_enter` calls per write of fio running `job` on `target`, counted by strace.
fn fio_enters_per_io(scratch: &Scratch, job: &str, target: &str) -> f64 {
    let counts = scratch.path("fio.strace");
    let out = Command::new("strace")
        .args([
            "-f",
            "-c",
            "-e",
            "trace=io_uring_enter",
            "-o",
            &counts,
            "fio",
        ])
        .args([job, "--output-format=json", &format!("--filename={target}")])
        .output()
        .unwrap();
    assert_ran(&out);
    let text = std::fs::read_to_string(&counts).unwrap();
    let calls: f64 = text
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.last() == Some(&"io_uring_enter"))
        .map(|f| f[3].parse().unwrap())
        .unwrap_or_else(|| panic!("no io_uring_enter in strace's counts: {text}"));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    calls / json["jobs"][0]["write"]["total_ios"].as_f64().unwrap()
}

#[test]
fn a_qd1_random_write_reaches_the_kernel_as_fios_does() {
    let scratch = Scratch::new("write-path");
    let ours_log = scratch.path("engine.log");
    // Relative, from the run's folder: a job file's paths stay below it (issue 28).
    let job_file = scratch.file("w.fio", &job("engine.log"));
    let target = scratch.path("engine.img");
    zeros(&target);
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .current_dir(&scratch.0)
        .args(["run", &job_file, "--device", &target, "--scheduler", "noop"])
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    if !out.status.success() && common::stderr_of(&out).contains("io_uring") {
        return skip("write path", "io_uring is not available here");
    }
    let ours = json_of(&out);
    let writes = ours["jobs"][0]["write"]["total_ios"].as_f64().unwrap();
    let enters = ours["iosched"]["inflight"]["io_uring_enter_calls"]
        .as_f64()
        .unwrap();
    // One call submits the write, one waits for it; nothing else per I/O (no fsync, no
    // second wait).
    assert!(
        enters <= 2.0 * writes + 2.0,
        "{enters} calls for {writes} writes"
    );
    let our_blocks = assert_one_pass("engine", &written_offsets(&ours_log));
    assert_blocks_distinct("engine", &target);

    if !fio3_available() {
        return skip("write path, fio's side", "fio 3 is not installed");
    }
    let theirs_log = scratch.path("fio.log");
    let fio_job = scratch.file("f.fio", &job(&theirs_log));
    let fio_target = scratch.path("fio.img");
    zeros(&fio_target);
    if !tool_available("strace") {
        skip("write path, fio's calls", "strace is not installed");
        let out = Command::new("fio")
            .args([&fio_job, &format!("--filename={fio_target}")])
            .output()
            .unwrap();
        assert_ran(&out);
    } else {
        // The reference: fio makes at most the same two calls per write (fewer when a
        // completion is already in the ring when it comes to wait, which the engine now
        // checks too; how often that happens depends on the device, so it is not compared).
        let theirs = fio_enters_per_io(&scratch, &fio_job, &fio_target);
        assert!(
            theirs > 0.9 && theirs <= 2.0 + 2.0 / BLOCKS as f64,
            "fio: {theirs:.3} io_uring_enter calls per write"
        );
    }
    let their_offsets = written_offsets(&theirs_log);
    let their_blocks = assert_one_pass("fio", &their_offsets);
    assert_eq!(our_blocks, their_blocks, "the same blocks as fio's");
    assert_blocks_distinct("fio", &fio_target);
}
