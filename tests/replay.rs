//! `iosched replay` and `read_iolog=` from the outside: a simulated run's capture replayed,
//! fio 3.33's own iologs replayed, closed loop against open loop, bad captures refused.

mod common;

use std::path::Path;
use std::process::Command;

use common::{fio3_available, iosched, json_of, skip, stderr_of, Scratch};
use iosched_workload::generator::IoKind;
use iosched_workload::replay::ReplayLog;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `job` traced; returns the run's JSON.
fn traced_run(job: &Path, scheduler: &str, trace: &Path) -> serde_json::Value {
    json_of(&iosched(&[
        "run",
        s(job),
        "--scheduler",
        scheduler,
        "--device",
        "hdd-7200",
        "--trace",
        s(trace),
        "--output-format",
        "json",
    ]))
}

fn replay(capture: &Path, schedulers: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "replay",
        s(capture),
        "--scheduler",
        schedulers,
        "--device",
        "hdd-7200",
        "--output-format",
        "json",
    ];
    args.extend_from_slice(extra);
    json_of(&iosched(&args))
}

const MIXED: &str = "\
[global]
direct=1
bs=16k
size=16m
[seq]
rw=read
[rand]
rw=randread
bs=4k
size=4m
[wr]
rw=write
ioengine=libaio
iodepth=4
";

/// The reference is the original run itself: its capture, replayed open loop on the same
/// device and scheduler, gives every process the bytes it moved and the same throughput.
#[test]
fn a_simulated_runs_capture_replays_to_the_same_bytes_and_throughput() {
    let dir = Scratch::new("replay-roundtrip");
    let job = dir.0.join("mixed.fio");
    std::fs::write(&job, MIXED).unwrap();
    for scheduler in ["noop", "cfq"] {
        let trace = dir.0.join(format!("{scheduler}.blktrace"));
        let original = traced_run(&job, scheduler, &trace);
        let replayed = replay(&trace, scheduler, &[]);
        let run = &replayed["runs"][0];
        let jobs = original["jobs"].as_array().unwrap();
        let processes = run["processes"].as_array().unwrap();
        assert_eq!(
            processes.len(),
            jobs.len(),
            "{scheduler}: one process per job"
        );
        let mut total = 0;
        for job in jobs {
            let name = job["jobname"].as_str().unwrap();
            let bytes = job["read"]["io_bytes"].as_u64().unwrap()
                + job["write"]["io_bytes"].as_u64().unwrap();
            total += bytes;
            let process = processes
                .iter()
                .find(|p| p["name"].as_str().unwrap().starts_with(&format!("{name}.")))
                .unwrap_or_else(|| panic!("{scheduler}: no process for job {name}"));
            let replayed_bytes =
                process["read_bytes"].as_u64().unwrap() + process["write_bytes"].as_u64().unwrap();
            assert_eq!(replayed_bytes, bytes, "{scheduler}: {name}'s bytes");
        }
        let elapsed = original["iosched"]["simulated_time_ns"].as_f64().unwrap();
        let original_mb_s = total as f64 / 1e6 / (elapsed / 1e9);
        let replayed_mb_s = run["aggregate_mb_s"].as_f64().unwrap();
        let ratio = replayed_mb_s / original_mb_s;
        assert!(
            (0.98..=1.02).contains(&ratio),
            "{scheduler}: replayed {replayed_mb_s:.3} MB/s against {original_mb_s:.3}"
        );
    }
    std::fs::remove_dir_all(&dir.0).unwrap();
}

const TWO_READERS: &str = "\
[global]
direct=1
rw=read
bs=64k
size=32m
[r1]
[r2]
";

/// Two sequential readers recorded under noop: replayed closed loop under CFQ they regain
/// what CFQ's idling gives such readers (the kernel's reason for `slice_idle`; seed 000 and
/// the CFQ documentation describe the gain), while open loop, tied to noop's recorded times,
/// cannot go faster than the capture did.
#[test]
fn closed_loop_lets_cfq_idle_where_open_loop_cannot() {
    let dir = Scratch::new("replay-closed");
    let job = dir.0.join("two.fio");
    std::fs::write(&job, TWO_READERS).unwrap();
    let trace = dir.0.join("noop.blktrace");
    traced_run(&job, "noop", &trace);
    let mb_s =
        |doc: &serde_json::Value, i: usize| doc["runs"][i]["aggregate_mb_s"].as_f64().unwrap();
    let open = replay(&trace, "noop,cfq", &[]);
    let closed = replay(&trace, "noop,cfq", &["--closed-loop"]);
    let open_gain = mb_s(&open, 1) / mb_s(&open, 0);
    let closed_gain = mb_s(&closed, 1) / mb_s(&closed, 0);
    assert!(
        open_gain < 1.03,
        "open loop cannot beat the recorded times: {open_gain:.3}"
    );
    assert!(
        closed_gain > 2.0,
        "closed loop under CFQ should serve each reader sequentially: {closed_gain:.3}"
    );
    // Closed loop under the recording's own scheduler stays close to the recording.
    let noop_ratio = mb_s(&closed, 0) / mb_s(&open, 0);
    assert!((0.95..=1.05).contains(&noop_ratio), "{noop_ratio:.3}");
    std::fs::remove_dir_all(&dir.0).unwrap();
}

/// `--assign` puts one of two readers (recorded under noop) in a weight-100 group and the
/// other in a weight-1000 one: replayed closed loop under CFQ, the heavier group's reader
/// finishes its equal share well before the other, as CFQ's group weights intend (without
/// the assignment the first to start finishes a little earlier: 0.86 of the other's time).
#[test]
fn assign_moves_processes_into_weighted_groups() {
    let dir = Scratch::new("replay-assign");
    let job = dir.0.join("two.fio");
    std::fs::write(&job, TWO_READERS).unwrap();
    let trace = dir.0.join("noop.blktrace");
    traced_run(&job, "noop", &trace);
    let runtimes = |extra: &[&str]| -> (f64, f64) {
        let mut args = vec!["--closed-loop"];
        args.extend_from_slice(extra);
        let doc = replay(&trace, "cfq", &args);
        let p = &doc["runs"][0]["processes"];
        let t = |name: &str| {
            p.as_array()
                .unwrap()
                .iter()
                .find(|q| q["name"].as_str().unwrap().starts_with(name))
                .unwrap()["runtime_ns"]
                .as_f64()
                .unwrap()
        };
        (t("r1."), t("r2."))
    };
    let (r1, r2) = runtimes(&[]);
    let alone = r1 / r2;
    let (r1, r2) = runtimes(&[
        "--assign",
        "r1=cgroup=fg,cgroup_weight=1000",
        "--assign",
        "r2=cgroup=bk,cgroup_weight=100",
    ]);
    let grouped = r1 / r2;
    assert!(
        grouped < 0.75 * alone,
        "the weight-1000 reader finishes first: {grouped:.3} against {alone:.3} without groups"
    );
    std::fs::remove_dir_all(&dir.0).unwrap();
}

/// A capture turned into a job file (`--jobfile`) runs under `iosched run` like any job
/// file; traced again, blktrace 1.2.0's `blkparse` reads it, and it replays once more to the
/// same per-process bytes.
#[test]
fn a_replay_job_file_traces_again_for_blkparse() {
    let dir = Scratch::new("replay-jobfile");
    let job = dir.0.join("mixed.fio");
    std::fs::write(&job, MIXED).unwrap();
    let first = dir.0.join("first.blktrace");
    traced_run(&job, "cfq", &first);
    let scenario = dir.0.join("scenario.fio");
    let once = replay(&first, "cfq", &["--jobfile", s(&scenario)]);
    let second = dir.0.join("second.blktrace");
    traced_run(&scenario, "cfq", &second);
    let twice = replay(&second, "cfq", &[]);
    let bytes = |doc: &serde_json::Value| -> Vec<(u64, u64)> {
        doc["runs"][0]["processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["pid"].as_u64().unwrap(),
                    p["read_bytes"].as_u64().unwrap() + p["write_bytes"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(bytes(&once), bytes(&twice));
    match Command::new("blkparse")
        .args(["-i", s(&dir.0.join("second")), "-o", "/dev/null"])
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => skip(
            "a_replay_job_file_traces_again_for_blkparse",
            "blkparse is not installed",
        ),
    }
    std::fs::remove_dir_all(&dir.0).unwrap();
}

/// The engine replays a capture on a real file (grown to the capture's last byte): open
/// loop, every process's bytes as recorded, under two schedulers.
#[test]
fn the_engine_replays_a_capture_on_a_real_file() {
    let dir = Scratch::new("replay-engine");
    let job = dir.0.join("two.fio");
    std::fs::write(&job, TWO_READERS.replace("32m", "2m")).unwrap();
    let trace = dir.0.join("noop.blktrace");
    traced_run(&job, "noop", &trace);
    let target = dir.0.join("target.img");
    std::fs::File::create(&target).unwrap();
    let doc = json_of(&iosched(&[
        "replay",
        s(&trace),
        "--scheduler",
        "noop,cfq",
        "--device",
        s(&target),
        "--output-format",
        "json",
    ]));
    for run in doc["runs"].as_array().unwrap() {
        for p in run["processes"].as_array().unwrap() {
            assert_eq!(p["read_bytes"].as_u64(), Some(2 << 20), "{run}");
        }
    }
    std::fs::remove_dir_all(&dir.0).unwrap();
}

/// `(kind, offset, len)` of each I/O of a log or capture.
fn sequence(log: &ReplayLog) -> Vec<(IoKind, u64, u64)> {
    log.ios
        .iter()
        .map(|io| (io.kind, io.offset, io.len))
        .collect()
}

/// The reference is fio 3.33: the iolog it wrote of a real run, replayed by iosched with
/// `read_iolog=` in simulation and on a real file with the engine, issues the same I/Os in
/// the same order (the capture's offsets are the file's plus where the layout put it).
#[test]
fn an_iolog_written_by_fio_replays_with_the_same_io_sequence() {
    if !fio3_available() {
        skip(
            "an_iolog_written_by_fio_replays_with_the_same_io_sequence",
            "fio 3.x is not installed",
        );
        return;
    }
    let dir = Scratch::new("replay-fio");
    let data = dir.0.join("data");
    let iolog = dir.0.join("x.iolog");
    let fio = Command::new("fio")
        .args([
            "--name=x",
            &format!("--filename={}", s(&data)),
            "--size=4m",
            "--rw=randrw",
            "--bs=4k",
            "--direct=1",
            "--ioengine=psync",
            "--number_ios=150",
            &format!("--write_iolog={}", s(&iolog)),
            "--output=/dev/null",
        ])
        .output()
        .unwrap();
    if !fio.status.success() {
        skip(
            "an_iolog_written_by_fio_replays_with_the_same_io_sequence",
            &format!("fio could not run here: {}", stderr_of(&fio)),
        );
        return;
    }
    let recorded = sequence(&ReplayLog::load(&iolog).unwrap());
    assert_eq!(recorded.len(), 150);
    let job = dir.0.join("r.fio");
    std::fs::write(&job, format!("[r]\nread_iolog={}\ndirect=1\n", s(&iolog))).unwrap();
    let target = dir.0.join("target.img");
    std::fs::File::create(&target)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    for device in ["hdd-7200", s(&target)] {
        let trace = dir.0.join("replayed.blktrace");
        let output = iosched(&[
            "run",
            s(&job),
            "--device",
            device,
            "--trace",
            s(&trace),
            "--output-format",
            "json",
        ]);
        json_of(&output);
        let replayed = sequence(&ReplayLog::load(&trace).unwrap());
        assert_eq!(replayed.len(), recorded.len(), "{device}");
        let shift = replayed[0].1 - recorded[0].1;
        for (r, o) in replayed.iter().zip(&recorded) {
            assert_eq!((r.0, r.1 - shift, r.2), *o, "{device}");
        }
    }
    std::fs::remove_dir_all(&dir.0).unwrap();
}

#[test]
fn malformed_captures_are_refused_naming_file_and_byte() {
    let dir = Scratch::new("replay-bad");
    let job = dir.0.join("two.fio");
    std::fs::write(&job, TWO_READERS.replace("32m", "1m")).unwrap();
    let trace = dir.0.join("t.blktrace");
    traced_run(&job, "noop", &trace);
    let file = dir.0.join("t.blktrace.0");
    let bytes = std::fs::read(&file).unwrap();
    // Walk to the last record (48-byte headers, payload length in bytes 46..48) and cut it
    // inside its header.
    let mut last = 0;
    let mut at = 0;
    while at < bytes.len() {
        last = at;
        at += 48 + usize::from(u16::from_le_bytes([bytes[at + 46], bytes[at + 47]]));
    }
    std::fs::write(&file, &bytes[..last + 20]).unwrap();
    let output = iosched(&["replay", s(&trace)]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!("{}: byte {last}: truncated record", s(&file));
    assert!(stderr.contains(&expected), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    std::fs::remove_dir_all(&dir.0).unwrap();
}
