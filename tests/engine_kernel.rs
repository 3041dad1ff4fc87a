//! `iosched kernel` from the outside: fio on the kernel's own scheduler of a loop device, the
//! device's scheduler, tunables and cgroups put back afterwards — after success, after a bad
//! tunable, and after Ctrl-C — and `iosched compare` over the results. Needs root, loop
//! devices and fio; each missing piece skips with a printed note.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{iosched, skip, tool_available, Loop, Scratch};

/// Runs the binary; also returns its pid, which names its cgroup directory.
fn iosched_pid(args: &[&str]) -> (Output, u32) {
    let child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let pid = child.id();
    (child.wait_with_output().unwrap(), pid)
}

/// A loop device with a known kernel scheduler and tunable; `none` again, then detached, on
/// drop.
struct Device {
    attached: Loop,
    queue: String,
    /// `queue/nr_requests` under mq-deadline before the run.
    nr_requests: String,
}

impl Device {
    /// The device's path, `/dev/loopN`.
    fn path(&self) -> &str {
        &self.attached.0
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let _ = std::fs::write(format!("{}/scheduler", self.queue), "none");
    }
}

fn setup(test: &str, scratch: &Scratch) -> Option<Device> {
    if !tool_available("fio") {
        skip(test, "fio not installed (apt-get install fio)");
        return None;
    }
    let attached = Loop::over_image(test, &scratch.path("backing.img"), 64 << 20)?;
    let name = attached.0.trim_start_matches("/dev/").to_string();
    let queue = format!("/sys/block/{name}/queue");
    let mut lp = Device {
        attached,
        queue,
        nr_requests: String::new(),
    };
    if std::fs::write(format!("{}/scheduler", lp.queue), "mq-deadline").is_err() {
        skip(test, "cannot select mq-deadline");
        return None;
    }
    std::fs::write(format!("{}/iosched/fifo_batch", lp.queue), "5").unwrap();
    lp.nr_requests = std::fs::read_to_string(format!("{}/nr_requests", lp.queue))
        .unwrap()
        .trim()
        .to_string();
    Some(lp)
}

fn assert_restored(lp: &Device, pid: u32) {
    let scheduler = std::fs::read_to_string(format!("{}/scheduler", lp.queue)).unwrap();
    assert!(scheduler.contains("[mq-deadline]"), "{scheduler}");
    let batch = std::fs::read_to_string(format!("{}/iosched/fifo_batch", lp.queue)).unwrap();
    assert_eq!(batch.trim(), "5");
    let requests = std::fs::read_to_string(format!("{}/nr_requests", lp.queue)).unwrap();
    assert_eq!(requests.trim(), lp.nr_requests, "nr_requests put back");
    for root in [
        "/sys/fs/cgroup/blkio",
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/unified",
    ] {
        let leftover = std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| *n == format!("iosched-{pid}"));
        assert_eq!(leftover, None, "cgroup left under {root}");
    }
}

const WEIGHTED: &str = "\
[global]
ioengine=io_uring
direct=1
bs=4k
iodepth=8
size=8m
rw=randread
time_based
runtime=1

[heavy]
cgroup=heavy
cgroup_weight=800

[light]
cgroup=light
cgroup_weight=200
";

#[test]
fn bfq_run_is_reported_in_our_json_and_everything_is_put_back() {
    let scratch = Scratch::new("kernel-test-bfq");
    let Some(lp) = setup(
        "bfq_run_is_reported_in_our_json_and_everything_is_put_back",
        &scratch,
    ) else {
        return;
    };
    let job = scratch.file("w.fio", WEIGHTED);
    let (out, pid) = iosched_pid(&[
        "kernel",
        &job,
        "--device",
        lp.path(),
        "--scheduler",
        "bfq",
        "--set",
        "slice_idle=0",
        "--set",
        "nr_requests=32",
    ]);
    common::assert_ran(&out);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["iosched"]["driver"], "kernel");
    assert_eq!(json["iosched"]["scheduler"], "bfq");
    assert_eq!(json["iosched"]["tunables"]["slice_idle"], "0");
    assert_eq!(json["iosched"]["device"]["nr_requests"], 32);
    assert_eq!(
        json["iosched"]["device"]["previous_scheduler"],
        "mq-deadline"
    );
    let jobs = json["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert!(jobs[0]["read"]["io_bytes"].as_u64().unwrap() > 0);
    assert_eq!(json["iosched"]["cgroups"][1]["path"], "/light");
    assert_restored(&lp, pid);

    // The engine on the same device and job, then both side by side.
    let _ = std::fs::write(format!("{}/scheduler", lp.queue), "none");
    let kernel_json = scratch.file("kernel-bfq.json", &String::from_utf8_lossy(&out.stdout));
    let engine = iosched(&[
        "run",
        &job,
        "--device",
        lp.path(),
        "--output-format",
        "json",
    ]);
    common::assert_ran(&engine);
    let engine_json = scratch.file("engine-noop.json", &String::from_utf8_lossy(&engine.stdout));
    let table = iosched(&["compare", &engine_json, &kernel_json]);
    assert!(table.status.success());
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("Share-%") && text.contains("/heavy"),
        "{text}"
    );
    assert!(text.contains("IOPS        total"), "{text}");
}

#[test]
fn a_bad_tunable_fails_and_still_restores() {
    let scratch = Scratch::new("kernel-test-badset");
    let Some(lp) = setup("a_bad_tunable_fails_and_still_restores", &scratch) else {
        return;
    };
    let job = scratch.file("w.fio", WEIGHTED);
    let (out, pid) = iosched_pid(&[
        "kernel",
        &job,
        "--device",
        lp.path(),
        "--scheduler",
        "kyber",
        "--set",
        "bogus=1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));
    assert_restored(&lp, pid);
}

/// `queue/nr_requests` as it was before the run comes back, whether the run set its own or
/// not: the kernel resets it on every scheduler switch (to twice the hardware depth under a
/// scheduler, to the depth under `none`), so a value read after the switch, or none at all,
/// loses a custom setting (here 100 under mq-deadline) or cannot be written back under
/// `none` (EINVAL above the hardware depth).
#[test]
fn nr_requests_before_the_run_is_put_back() {
    let scratch = Scratch::new("kernel-test-nr-requests");
    let Some(mut lp) = setup("nr_requests_before_the_run_is_put_back", &scratch) else {
        return;
    };
    let job = scratch.file("w.fio", WEIGHTED);
    std::fs::write(format!("{}/nr_requests", lp.queue), "100").unwrap();
    lp.nr_requests = "100".to_string();
    for set in [None, Some("nr_requests=32")] {
        let mut args = vec!["kernel", &job, "--device", lp.path(), "--scheduler", "bfq"];
        if let Some(set) = set {
            args.extend(["--set", set]);
        }
        let (out, pid) = iosched_pid(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{set:?}: {stderr}");
        assert!(!stderr.contains("warning"), "{set:?}: {stderr}");
        assert_restored(&lp, pid);
    }
    // From `none`, whose request count is the hardware depth: no warning, the depth back.
    std::fs::write(format!("{}/scheduler", lp.queue), "none").unwrap();
    let depth = std::fs::read_to_string(format!("{}/nr_requests", lp.queue)).unwrap();
    let args = [
        "kernel",
        &job,
        "--device",
        lp.path(),
        "--scheduler",
        "bfq",
        "--set",
        "nr_requests=32",
    ];
    let out = iosched(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("warning"),
        "{stderr}"
    );
    let after = std::fs::read_to_string(format!("{}/nr_requests", lp.queue)).unwrap();
    assert_eq!(after, depth);
    let scheduler = std::fs::read_to_string(format!("{}/scheduler", lp.queue)).unwrap();
    assert!(scheduler.contains("[none]"), "{scheduler}");
}

/// `--save-spec` writes the run's description and `--spec` runs it again: the same
/// scheduler, tunable, request count, device and jobs (fio's figures differ run to run on a
/// real device; the description is what must not).
#[test]
fn a_saved_spec_runs_again() {
    let scratch = Scratch::new("kernel-test-spec");
    let Some(lp) = setup("a_saved_spec_runs_again", &scratch) else {
        return;
    };
    let job = scratch.file("w.fio", WEIGHTED);
    let saved = scratch.0.join("run.json").to_string_lossy().into_owned();
    let first = iosched(&[
        "kernel",
        &job,
        "--device",
        lp.path(),
        "--scheduler",
        "deadline",
        "--set",
        "fifo_batch=7",
        "--set",
        "nr_requests=48",
        "--save-spec",
        &saved,
    ]);
    common::assert_ran(&first);
    std::fs::remove_file(&job).unwrap();
    let (again, pid) = iosched_pid(&["kernel", "--spec", &saved]);
    common::assert_ran(&again);
    for out in [&first, &again] {
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let ours = &json["iosched"];
        assert_eq!(ours["scheduler"], "mq-deadline");
        assert_eq!(ours["tunables"]["fifo_batch"], "7");
        assert_eq!(ours["device"]["nr_requests"], 48);
        assert_eq!(ours["device"]["path"], lp.path());
        assert_eq!(json["jobs"].as_array().unwrap().len(), 2);
    }
    assert_restored(&lp, pid);
}

/// Whether, within a minute, both of the run's job cgroups hold a process and the device has
/// completed reads.
fn fio_jobs_running(pid: u32, lp: &Device) -> bool {
    let name = lp.path().trim_start_matches("/dev/");
    let reads_done = || {
        std::fs::read_to_string(format!("/sys/block/{name}/stat"))
            .ok()
            .and_then(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let before = reads_done();
    let has_procs = |group: &str| {
        [
            "/sys/fs/cgroup/blkio",
            "/sys/fs/cgroup/unified",
            "/sys/fs/cgroup",
        ]
        .iter()
        .any(|root| {
            std::fs::read_to_string(format!("{root}/iosched-{pid}/{group}/cgroup.procs"))
                .is_ok_and(|procs| !procs.trim().is_empty())
        })
    };
    for _ in 0..3000 {
        if has_procs("heavy") && has_procs("light") && reads_done() > before {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// `signal` to iosched once fio's jobs run: fio is stopped, its partial report printed, the
/// device put back, and the exit status is 128 + the signal's number.
fn signal_stops_fio_reports_and_restores(test: &str, signal: &str, status: i32) {
    let scratch = Scratch::new(&format!("kernel-test-{test}"));
    let Some(lp) = setup(test, &scratch) else {
        return;
    };
    let job = scratch.file("w.fio", &WEIGHTED.replace("runtime=1", "runtime=60"));
    let child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["kernel", &job, "--device", lp.path(), "--scheduler", "bfq"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // fio deadlocks in its own signal handler when SIGINT lands while it sets its jobs up,
    // so a fixed pause failed on a loaded machine: wait until fio's jobs are in their
    // cgroups and the device has served reads (the jobs are running), however long it takes.
    assert!(
        fio_jobs_running(pid, &lp),
        "fio's jobs never started: {:?}",
        child.id()
    );
    Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(status),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("partial JSON");
    assert_eq!(json["iosched"]["interrupted"], true);
    assert_restored(&lp, pid);
}

#[test]
fn sigint_stops_fio_reports_and_restores() {
    signal_stops_fio_reports_and_restores("sigint_stops_fio_reports_and_restores", "INT", 130);
}

/// Issue 17, 5: SIGTERM is a stop request as SIGINT is (it was reported as 130).
#[test]
fn sigterm_stops_fio_reports_and_restores_with_status_143() {
    signal_stops_fio_reports_and_restores(
        "sigterm_stops_fio_reports_and_restores_with_status_143",
        "TERM",
        143,
    );
}

/// Processes whose command line names `needle` (fio's job processes carry the generated
/// job file's path, under `iosched-kernel-PID`).
fn processes_naming(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).contains(needle))
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// fio job processes were seen hung on a futex for ever when two suites ran at once, and
/// iosched waited with them. A job fio cannot finish in time (one read a second over 32 MiB,
/// no runtime) is killed at `--timeout` with its job processes, the run fails saying so, and
/// the device is put back.
#[test]
fn a_fio_past_its_time_is_killed_and_the_device_restored() {
    let scratch = Scratch::new("kernel-test-timeout");
    let Some(lp) = setup(
        "a_fio_past_its_time_is_killed_and_the_device_restored",
        &scratch,
    ) else {
        return;
    };
    let job = scratch.file(
        "slow.fio",
        "[slow]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\nsize=32m\nrate_iops=1\n",
    );
    // Outputs to files, not pipes: a job process that survived would hold a pipe open and
    // hang the test instead of failing it.
    let stdout = scratch.path("stdout");
    let stderr = scratch.path("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["kernel", &job, "--device", lp.path(), "--scheduler", "bfq"])
        .args(["--timeout", "3"])
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("fio was still running at --timeout 3 s: killed fio and its job processes"),
        "{stderr}"
    );
    assert!(std::fs::read(&stdout).unwrap().is_empty(), "no results");
    assert_restored(&lp, pid);
    let left = processes_naming(&format!("iosched-kernel-{pid}/"));
    if !left.is_empty() {
        // Not left running after the test.
        Command::new("kill")
            .arg("-KILL")
            .args(&left)
            .status()
            .unwrap();
        panic!("fio processes left running: {left:?}");
    }
}

/// Issue 17, 5: `iosched kernel --output` was written only after the run, so a typo in its
/// folder cost the run. It is checked before the device is: the error names `--output`,
/// not the target (`/dev/null`, which the run would refuse).
#[test]
fn a_kernel_output_folder_that_does_not_exist_is_refused_first() {
    if !tool_available("fio") {
        return skip(
            "a_kernel_output_folder_that_does_not_exist_is_refused_first",
            "fio not installed",
        );
    }
    let scratch = Scratch::new("kernel-test-output");
    let job = scratch.file("w.fio", WEIGHTED);
    let output = scratch.path("missing-dir/out.json");
    let out = iosched(&[
        "kernel",
        &job,
        "--device",
        "/dev/null",
        "--scheduler",
        "bfq",
        "--output",
        &output,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("--output {output}")), "{stderr}");
}

/// SIGINT at any moment: 0.05 s after start (before fio runs), 0.3 s, 1 s and 3 s (fio
/// setting its jobs up, where fio 3.33 can hang in its own signal handler, or running). Each
/// run ends with exit 130, or, when fio had to be killed after the grace period, a clear
/// message; the device's scheduler, tunables, nr_requests and cgroups are put back each time.
#[test]
fn sigint_at_any_moment_ends_cleanly_and_restores() {
    let scratch = Scratch::new("kernel-test-sigint-any");
    let Some(lp) = setup("sigint_at_any_moment_ends_cleanly_and_restores", &scratch) else {
        return;
    };
    let job = scratch.file("w.fio", &WEIGHTED.replace("runtime=1", "runtime=60"));
    for delay_ms in [50, 300, 1000, 3000] {
        let child = Command::new(env!("CARGO_BIN_EXE_iosched"))
            .args(["kernel", &job, "--device", lp.path(), "--scheduler", "bfq"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        std::thread::sleep(Duration::from_millis(delay_ms));
        Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let clear = out.status.code() == Some(130)
            || (out.status.code().is_some() && stderr.contains("after SIGINT: killed"));
        assert!(clear, "after {delay_ms} ms: {:?} {stderr}", out.status);
        assert_restored(&lp, pid);
    }
}

/// A fio that ignores SIGINT (as fio 3.33 can when the signal lands while it sets up) is
/// killed after the grace period, the run says so, and the device is put back; without the
/// watchdog iosched would wait forever.
#[test]
fn a_fio_deaf_to_sigint_is_killed_and_the_device_restored() {
    let scratch = Scratch::new("kernel-test-deaf");
    let Some(lp) = setup(
        "a_fio_deaf_to_sigint_is_killed_and_the_device_restored",
        &scratch,
    ) else {
        return;
    };
    let fio = scratch.file(
        "deaf-fio",
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo fio-3.33; exit 0; fi\ntrap '' INT\nsleep 60\n",
    );
    Command::new("chmod").args(["+x", &fio]).status().unwrap();
    let job = scratch.file("w.fio", WEIGHTED);
    let child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args([
            "kernel",
            &job,
            "--device",
            lp.path(),
            "--scheduler",
            "bfq",
            "--fio",
            &fio,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(1000));
    Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("after SIGINT: killed"), "{stderr}");
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_restored(&lp, pid);
}

#[test]
fn a_missing_fio_is_a_clear_error() {
    let out = iosched(&[
        "kernel",
        "job.fio",
        "--device",
        "/dev/null",
        "--scheduler",
        "bfq",
        "--fio",
        "/nonexistent/fio",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("install fio"));
}

#[test]
fn a_regular_file_is_refused() {
    let scratch = Scratch::new("kernel-test-file");
    if !Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        skip("a_regular_file_is_refused", "fio not installed");
        return;
    }
    let job = scratch.file("w.fio", WEIGHTED);
    let target = scratch.file("t.img", "");
    let out = iosched(&["kernel", &job, "--device", &target, "--scheduler", "bfq"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("need a block device"));
}

/// Issue 14: `iosched kernel --output-format` takes fio's comma list, as `iosched run` does,
/// and hands it to fio: `normal,terse` gives fio's terse line then its normal report (fio
/// 3.33's order), a list of json alone stays the JSON document with the `iosched` object.
#[test]
fn kernel_output_format_takes_fios_comma_list() {
    const TEST: &str = "kernel_output_format_takes_fios_comma_list";
    let scratch = Scratch::new("kernel-test-formats");
    let Some(lp) = setup(TEST, &scratch) else {
        return;
    };
    let job = scratch.file("r.fio", "[r]\nrw=read\nbs=64k\nsize=1m\ndirect=1\n");
    let run = |formats: &str| {
        let out = iosched(&[
            "kernel",
            &job,
            "--device",
            lp.path(),
            "--scheduler",
            "none",
            "--output-format",
            formats,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{formats}: {stderr}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let text = run("normal,terse");
    let terse = text.find("\n3;fio-3").expect("fio's terse line");
    let normal = text
        .find("Run status group 0 (all jobs):")
        .expect("fio's normal report");
    assert!(terse < normal, "terse before normal: {text}");
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert!(json["iosched"].is_object());
}
