//! Issue 28, 3: SIGINT and SIGTERM the same in every command that runs something. `sweep`,
//! `replay` (simulated and on a real file), `reproduce` and `calibrate` stop soon after the
//! signal, print what they measured marked `interrupted`, and exit 128 + the signal (130,
//! 143), as `iosched run` does (tests/signals.rs). Before, SIGTERM killed a sweep with
//! nothing written and a replay printed a cut run as a finished one, exit 0.
//!
//! Robust under load: a signal is sent only after a sign that the command is at work (a file
//! it writes once its handlers are in place, then CPU time it has spent, read from
//! `/proc/PID/stat`), never after a fixed short sleep; every wait has a generous deadline.

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::Scratch;
use serde_json::Value;

/// Longest wait for any sign of progress, and for the command to end after its signal.
const DEADLINE: Duration = Duration::from_secs(300);

/// CPU time (user + system) `pid` has used, from `/proc/PID/stat` (clock ticks of 10 ms,
/// the kernel's USER_HZ of 100 on every Linux architecture).
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: the fields start after its closing parenthesis.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat(5); the first field after ')' is 3.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// A command under test in the background, killed if the test fails before it ends.
struct Running {
    child: Option<Child>,
}

impl Running {
    fn start(args: &[&str], dir: &Path) -> Running {
        let child = Command::new(env!("CARGO_BIN_EXE_iosched"))
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        Running { child: Some(child) }
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Waits until `ready()` holds; fails if the command ends first or the deadline passes.
    fn wait_until(&mut self, what: &str, ready: &mut dyn FnMut(u32) -> bool) {
        let deadline = Instant::now() + DEADLINE;
        let pid = self.pid();
        while !ready(pid) {
            let child = self.child.as_mut().expect("running");
            if let Some(status) = child.try_wait().unwrap() {
                let out = self.child.take().unwrap().wait_with_output().unwrap();
                panic!(
                    "ended ({status}) before {what}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            assert!(Instant::now() < deadline, "no sign of {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the command has used `more` CPU time beyond what it has used now.
    fn wait_for_cpu(&mut self, more: Duration) {
        let start = cpu_time(self.pid()).unwrap_or_default();
        self.wait_until(&format!("{more:?} of CPU time"), &mut |pid| {
            cpu_time(pid).is_some_and(|used| used >= start + more)
        });
    }

    /// Sends `signal` (`INT`, `TERM`) and waits for the command to end.
    fn stop(mut self, signal: &str) -> Output {
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let child = self.child.take().expect("running");
        let pid = child.id();
        // Ends the wait below if the command ignores the signal: the test then fails.
        let watchdog = std::thread::spawn(move || {
            let deadline = Instant::now() + DEADLINE;
            while Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    return;
                }
            }
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        });
        let out = child.wait_with_output().unwrap();
        drop(watchdog);
        out
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn exit_status(signal: &str) -> i32 {
    match signal {
        "INT" => 130,
        "TERM" => 143,
        _ => unreachable!("{signal}"),
    }
}

/// The exit status is 128 + the signal and stderr says the results are partial.
fn assert_interrupted(out: &Output, signal: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(exit_status(signal)), "{stderr}");
    assert!(
        stderr.contains("interrupted: the results above are partial"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// A sweep of two points, one at a time: 64 KiB of random reads, then an hour of them.
fn sweep_stopped_by(signal: &str) {
    let scratch = Scratch::new(&format!("sig-sweep-{signal}"));
    scratch.file(
        "j.fio",
        "[j]\nrw=randread\nbs=4k\nsize=64m\nio_size=${IO}\nruntime=3600\n",
    );
    scratch.file(
        "s.toml",
        "jobs = 'j.fio'\ndevices = 'nvme-gen4'\nschedulers = 'noop'\n[env]\nIO = ['64k', '1t']\n",
    );
    let mut run = Running::start(
        &["sweep", "s.toml", "--jobs", "1", "--output-format", "json"],
        &scratch.0,
    );
    run.wait_for_cpu(Duration::from_millis(300));
    let out = run.stop(signal);
    assert_interrupted(&out, signal);
    let rows = json_lines(&String::from_utf8_lossy(&out.stdout));
    let of = |io: &str| -> Vec<&Value> { rows.iter().filter(|r| r["IO"] == io).collect() };
    assert!(!of("64k").is_empty(), "the first point's rows: {rows:?}");
    assert!(
        of("64k").iter().all(|r| r["interrupted"] == false),
        "{rows:?}"
    );
    assert!(!of("1t").is_empty(), "the cut point's rows: {rows:?}");
    assert!(
        of("1t").iter().all(|r| r["interrupted"] == true),
        "{rows:?}"
    );
}

/// The same with `--out`: the folder holds the table and chart, marked.
fn sweep_out_stopped_by(signal: &str) {
    let scratch = Scratch::new(&format!("sig-sweep-out-{signal}"));
    scratch.file(
        "j.fio",
        "[j]\nrw=randread\nbs=4k\nsize=64m\nio_size=${IO}\nruntime=3600\n",
    );
    scratch.file(
        "s.toml",
        "jobs = 'j.fio'\ndevices = 'nvme-gen4'\nschedulers = 'noop'\n[env]\nIO = ['64k', '1t']\n",
    );
    let mut run = Running::start(
        &["sweep", "s.toml", "--jobs", "1", "--out", "out"],
        &scratch.0,
    );
    run.wait_for_cpu(Duration::from_millis(300));
    let out = run.stop(signal);
    assert_interrupted(&out, signal);
    let csv = std::fs::read_to_string(scratch.0.join("out/sweep.csv")).expect("sweep.csv");
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",interrupted"), "{csv}");
    assert!(lines.next().unwrap().ends_with(",false"), "{csv}");
    let jsonl = std::fs::read_to_string(scratch.0.join("out/sweep.jsonl")).expect("jsonl");
    assert!(
        json_lines(&jsonl).iter().any(|r| r["interrupted"] == true),
        "{jsonl}"
    );
    let svg = std::fs::read_to_string(scratch.0.join("out/sweep.svg")).expect("the chart");
    assert!(svg.contains("interrupted"), "the chart's title says so");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        csv,
        "stdout is the table"
    );
}

#[test]
fn sigint_stops_a_sweep_with_its_rows_marked_and_status_130() {
    sweep_stopped_by("INT");
}

#[test]
fn sigterm_stops_a_sweep_with_its_rows_marked_and_status_143() {
    sweep_stopped_by("TERM");
}

#[test]
fn sigint_stops_a_sweep_with_its_out_files_marked() {
    sweep_out_stopped_by("INT");
}

#[test]
fn sigterm_stops_a_sweep_with_its_out_files_marked() {
    sweep_out_stopped_by("TERM");
}

/// An iolog of `ios` 4 KiB reads over 4 MiB, one every millisecond of recorded time.
fn iolog(scratch: &Scratch, ios: u64) -> String {
    let mut text = String::from("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n");
    for i in 0..ios {
        text.push_str(&format!(
            "{i} /dev/x read {} 4096\n",
            (i * 7919 % 1024) * 4096
        ));
    }
    text.push_str(&format!("{ios} /dev/x close\n"));
    scratch.file("c.iolog", &text)
}

/// A simulated replay under noop then cfq, as fast as the device allows, of 500 clones of a
/// 20,000-read log: the signal comes during noop's run, so cfq never runs.
fn simulated_replay_stopped_by(signal: &str) {
    let scratch = Scratch::new(&format!("sig-replay-sim-{signal}"));
    let capture = iolog(&scratch, 20_000);
    let mut run = Running::start(
        &[
            "replay",
            &capture,
            "--device",
            "nvme-gen4",
            "--scheduler",
            "noop,cfq",
            "--no-stall",
            "--assign",
            "0=numjobs=500",
            "--jobfile",
            "r.fio",
            "--output-format",
            "json",
        ],
        &scratch.0,
    );
    // The job file is written once the capture is read, the handlers long in place.
    let jobfile = scratch.0.join("r.fio");
    run.wait_until("the job file", &mut |_| jobfile.exists());
    run.wait_for_cpu(Duration::from_millis(300));
    let out = run.stop(signal);
    assert_interrupted(&out, signal);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("partial JSON");
    assert_eq!(doc["interrupted"], true, "{doc}");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "cfq never ran: {doc}");
    assert_eq!(runs[0]["interrupted"], true, "{doc}");
    let bytes = runs[0]["bytes"].as_u64().unwrap();
    assert!(bytes > 0 && bytes < 500 * 20_000 * 4096, "{bytes}");
}

#[test]
fn sigint_stops_a_simulated_replay_with_partial_results_and_status_130() {
    simulated_replay_stopped_by("INT");
}

#[test]
fn sigterm_stops_a_simulated_replay_with_partial_results_and_status_143() {
    simulated_replay_stopped_by("TERM");
}

/// The engine replays a minute of recorded reads on a file: the signal comes a second in.
/// Before, the cut run was printed as a finished one, exit 0.
fn engine_replay_stopped_by(signal: &str) {
    let scratch = Scratch::new(&format!("sig-replay-engine-{signal}"));
    let capture = iolog(&scratch, 60_000);
    let target = scratch.0.join("target.img");
    std::fs::File::create(&target).unwrap();
    let mut run = Running::start(
        &[
            "replay",
            &capture,
            "--device",
            "./target.img",
            "--scheduler",
            "noop,cfq",
            "--jobfile",
            "r.fio",
            "--output-format",
            "json",
        ],
        &scratch.0,
    );
    let jobfile = scratch.0.join("r.fio");
    run.wait_until("the job file", &mut |_| jobfile.exists());
    // The engine grows the file to the capture's last byte before the first read.
    run.wait_until("the target laid out", &mut |_| {
        std::fs::metadata(&target).is_ok_and(|m| m.len() > 0)
    });
    // Long enough for some I/O, short of both replays: on a quiet machine the engine ran
    // all 120,000 reads within a second once (CI, session 22), and the signal found it done.
    std::thread::sleep(Duration::from_millis(250));
    let out = run.stop(signal);
    assert_interrupted(&out, signal);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("partial JSON");
    assert_eq!(doc["interrupted"], true, "{doc}");
    // On a quiet machine noop's whole replay may end within the second, so the signal cuts
    // cfq's instead: the cut run is the last one shown, every run before it whole, and no
    // scheduler after it runs.
    let runs = doc["runs"].as_array().unwrap();
    assert!(!runs.is_empty() && runs.len() <= 2, "{doc}");
    let (cut, whole) = runs.split_last().unwrap();
    for run in whole {
        assert_eq!(run["interrupted"], Value::Null, "{doc}");
        assert_eq!(run["bytes"].as_u64(), Some(60_000 * 4096), "{doc}");
    }
    assert_eq!(cut["interrupted"], true, "{doc}");
    let bytes = cut["bytes"].as_u64().unwrap();
    assert!(bytes > 0 && bytes < 60_000 * 4096, "{bytes}");
}

#[test]
fn sigint_stops_an_engine_replay_with_partial_results_and_status_130() {
    engine_replay_stopped_by("INT");
}

#[test]
fn sigterm_stops_an_engine_replay_with_partial_results_and_status_143() {
    engine_replay_stopped_by("TERM");
}

/// A scenarios folder of two tables, one at a time: 64 KiB of reads, then an hour of them.
fn reproduce_stopped_by(signal: &str) {
    let scratch = Scratch::new(&format!("sig-reproduce-{signal}"));
    std::fs::create_dir_all(scratch.0.join("scn/900")).unwrap();
    std::fs::write(
        scratch.0.join("scn/900/j.fio"),
        "[j]\nrw=randread\nbs=4k\nsize=64m\nio_size=${IO}\nruntime=3600\n",
    )
    .unwrap();
    let table = |id: &str, io: &str| {
        format!(
            r#"{{ "id": "{id}", "title": "{id}", "device": "nvme-gen4", "jobfiles": ["j.fio"],
              "env": {{ "IO": "{io}" }}, "unit": "MB/s",
              "columns": [{{ "header": "a", "metric": "total_mb_s" }}],
              "rows": [{{ "label": "r", "scheduler": "noop", "seed_values": [1.0] }}] }}"#
        )
    };
    std::fs::write(
        scratch.0.join("scn/900/scenario.json"),
        format!(
            r#"{{ "seed": "900", "title": "t", "source": "s",
                 "tables": [{}, {}] }}"#,
            table("short", "64k"),
            table("long", "1t")
        ),
    )
    .unwrap();
    let mut run = Running::start(
        &[
            "reproduce",
            "--scenarios",
            "scn",
            "--jobs",
            "1",
            "--output-format",
            "json",
        ],
        &scratch.0,
    );
    run.wait_for_cpu(Duration::from_millis(300));
    let out = run.stop(signal);
    assert_interrupted(&out, signal);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("partial JSON");
    assert_eq!(doc["interrupted"], true, "{doc}");
    let tables: Vec<&str> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["table"].as_str().unwrap())
        .collect();
    assert_eq!(tables, ["short"], "the cut row is left out: {doc}");
}

#[test]
fn sigint_stops_reproduce_with_the_rows_run_and_status_130() {
    reproduce_stopped_by("INT");
}

#[test]
fn sigterm_stops_reproduce_with_the_rows_run_and_status_143() {
    reproduce_stopped_by("TERM");
}

/// CPU time of a whole run of `args`, read until it ends (short by at most one poll).
fn cpu_of_whole_run(args: &[&str]) -> Duration {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(args)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut used = Duration::ZERO;
    loop {
        used = cpu_time(child.id()).unwrap_or(used).max(used);
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{args:?}");
            return used;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A calibration 250 times longer than the default. Its first loop (random reads at
/// queue depth 1) is about a fiftieth of the whole, five default calibrations; the signal
/// comes after ten default calibrations' CPU time, so that loop is measured and most of the
/// calibration is still to come.
fn calibrate_stopped_by(signal: &str) {
    let scratch = Scratch::new(&format!("sig-calibrate-{signal}"));
    let whole = cpu_of_whole_run(&["calibrate", "nvme-gen4", "--ops", "4000"]);
    let mut run = Running::start(
        &[
            "calibrate",
            "nvme-gen4",
            "--ops",
            "1000000",
            "--output-format",
            "json",
        ],
        &scratch.0,
    );
    run.wait_for_cpu(whole * 10 + Duration::from_millis(300));
    let out = run.stop(signal);
    assert_interrupted(&out, signal);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("partial JSON");
    assert_eq!(doc["interrupted"], true, "{doc}");
    let rows = doc["measurements"].as_array().unwrap().len();
    let all = serde_json::from_slice::<Value>(
        &Command::new(env!("CARGO_BIN_EXE_iosched"))
            .args(["calibrate", "nvme-gen4", "--output-format", "json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()["measurements"]
        .as_array()
        .unwrap()
        .len();
    assert!(rows > 0 && rows < all, "{rows} of {all} rows");
}

#[test]
fn sigint_stops_calibrate_with_the_loops_run_and_status_130() {
    calibrate_stopped_by("INT");
}

#[test]
fn sigterm_stops_calibrate_with_the_loops_run_and_status_143() {
    calibrate_stopped_by("TERM");
}
