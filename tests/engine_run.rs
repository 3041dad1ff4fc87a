//! `iosched run JOB --device PATH` from the outside: the io_uring engine behind the same
//! command line and output formats as the simulator, its exit statuses (1 for a failed verify,
//! 2 for a refused target, 130 after Ctrl-C), and a path the user may not open.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{assert_input_error, iosched, is_root, json_of, skip, Loop, Scratch};

const WEIGHTED: &str = "\
[global]
ioengine=io_uring
direct=1
bs=4k
iodepth=8
size=4m

[heavy]
rw=randwrite
cgroup=heavy
cgroup_weight=800

[light]
rw=randread
cgroup=light
cgroup_weight=200
";

/// `iosched run JOB --device TARGET` in JSON, which must succeed.
fn engine_json(job: &str, target: &str) -> serde_json::Value {
    json_of(&iosched(&[
        "run",
        job,
        "--device",
        target,
        "--output-format",
        "json",
    ]))
}

#[test]
fn a_path_device_runs_the_engine_and_reports_in_fio_json() {
    let scratch = Scratch::new("engine-cli-json");
    let job = scratch.file("w.fio", WEIGHTED);
    let target = scratch.path("target.img");
    let out = iosched(&["run", &job, "--device", &target, "--output-format", "json"]);
    let json = json_of(&out);
    assert_eq!(json["iosched"]["driver"], "engine");
    assert_eq!(json["iosched"]["device"]["kind"], "file");
    let jobs = json["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["write"]["io_bytes"], 4 << 20);
    assert_eq!(jobs[1]["read"]["io_bytes"], 4 << 20);
    assert_eq!(jobs[0]["error"], 0);
    let groups = json["iosched"]["cgroups"].as_array().unwrap();
    assert_eq!(groups[0]["path"], "/heavy");
    assert_eq!(groups[0]["ideal_share"], 0.8);
    // The other formats come from the same result.
    let terse = iosched(&["run", &job, "--device", &target, "--output-format", "terse"]);
    assert!(terse.status.success());
    assert_eq!(String::from_utf8_lossy(&terse.stdout).lines().count(), 2);
}

/// `--set nr_requests=N` sizes the engine's request lists, as the simulator's: a job deeper
/// than a list sleeps on it (`S` in the trace) and still does all its I/O; the device's own
/// depth is unchanged; a bad value is refused naming the flag. Without request lists in the
/// engine there is no `S` (the list size is the kernel's legacy block layer rule, BLK_BATCH_REQ
/// batching included, as `core::request_pool` has it).
#[test]
fn nr_requests_sizes_the_engines_request_lists() {
    let scratch = Scratch::new("engine-cli-nrreq");
    let job = scratch.file(
        "r.fio",
        "[r]\nrw=randread\nbs=4k\nsize=1m\nioengine=libaio\niodepth=16\ndirect=1\n",
    );
    let target = scratch.path("target.img");
    let trace = scratch.path("trace.txt");
    let args = ["run", &job, "--device", &target, "--output-format", "json"];
    let out = iosched(&[&args[..], &["--set", "nr_requests=4", "--trace", &trace]].concat());
    let json = json_of(&out);
    assert_eq!(json["iosched"]["device"]["nr_requests"], 4);
    // The device's depth stays its own (the disk's queue/nr_requests).
    assert_ne!(json["iosched"]["device"]["queue_depth"], 4);
    assert_eq!(json["jobs"][0]["read"]["io_bytes"], 1 << 20);
    let text = std::fs::read_to_string(&trace).unwrap();
    let sleeps = text.lines().filter(|l| l.contains(" S ")).count();
    assert!(sleeps > 0, "no sleep on a 4-request list at iodepth 16");
    let bad = iosched(&[&args[..], &["--set", "nr_requests=0"]].concat());
    assert_input_error(&bad, "--set nr_requests=0");
}

/// A sequential writer's adjacent 4 KiB writes submitted as one batch reach a loop device
/// merged, as the kernel's block layer merges them (blkparse shows `M`, the disk's stat
/// counts write merges: fio 3.33 on this machine with `iodepth_batch_submit=16` on the
/// kernel's `none` merges its first batch, 15 merges in 256 writes; with fio's default batch
/// of 1 each write goes alone and neither fio nor the engine merges): `M` lines in the trace,
/// merges in disk_util, every I/O either its own request or merged, and each process's batch
/// plugged (`P`, `U`). Without merges in the engine all 256 writes would be requests of their
/// own. Choice: the engine merges more than the kernel here (each merged request's
/// completions reach the job together, so it refills a whole batch at once, where fio reaps
/// and refills them one by one).
#[test]
fn a_sequential_writers_adjacent_writes_reach_a_loop_device_merged() {
    const TEST: &str = "a_sequential_writers_adjacent_writes_reach_a_loop_device_merged";
    let scratch = Scratch::new("engine-cli-merge");
    let Some(device) = Loop::over_image(TEST, &scratch.path("backing.img"), 16 << 20) else {
        return;
    };
    let job = scratch.file(
        "w.fio",
        "[w]\nrw=write\nbs=4k\nsize=1m\nioengine=io_uring\niodepth=16\ndirect=1\n\
         iodepth_batch_submit=16\n",
    );
    let trace = scratch.path("trace.txt");
    let out = iosched(&[
        "run",
        &job,
        "--device",
        &device.0,
        "--scheduler",
        "noop",
        "--trace",
        &trace,
        "--output-format",
        "json",
    ]);
    let json = json_of(&out);
    assert_eq!(json["jobs"][0]["write"]["io_bytes"], 1 << 20);
    let disk = &json["disk_util"][0];
    let (ios, merges) = (
        disk["write_ios"].as_u64().unwrap(),
        disk["write_merges"].as_u64().unwrap(),
    );
    assert!(merges > 0, "no write merged: {disk}");
    assert_eq!(ios + merges, 256, "{disk}");
    let text = std::fs::read_to_string(&trace).unwrap();
    let count = |action: &str| text.lines().filter(|l| l.contains(action)).count() as u64;
    assert_eq!(count(" M "), merges);
    assert_eq!(count(" Q "), 256);
    assert_eq!(count(" D "), ios);
    assert!(count(" P ") > 0 && count(" P ") == count(" U "), "plugs");
}

#[test]
fn cpus_allowed_pins_the_engine_or_names_the_missing_cpu() {
    let scratch = Scratch::new("engine-cli-cpus");
    let target = scratch.path("target.img");
    // A CPU this test may run on (a container's cpuset need not include CPU 0).
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let cpu: String = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let pinned = scratch.file(
        "p.fio",
        &format!("[p]\nrw=randread\nbs=4k\nsize=1m\ndirect=1\ncpus_allowed={cpu}\n"),
    );
    let json = engine_json(&pinned, &target);
    assert_eq!(json["jobs"][0]["read"]["io_bytes"], 1 << 20);
    let far = scratch.file(
        "f.fio",
        "[far]\nrw=write\nbs=4k\nsize=1m\ndirect=1\ncpus_allowed=4000\n",
    );
    let out = iosched(&["run", &far, "--device", &target]);
    assert_input_error(&out, "job 'far': cpus_allowed names CPU 4000");
}

/// `verify_only` reads where the job would write and checks what an earlier run left:
/// clean data passes, a flipped bit fails naming its offset, and a target too short to hold
/// the blocks is refused without being created.
#[test]
fn verify_only_checks_an_earlier_runs_data_without_writing() {
    let scratch = Scratch::new("engine-cli-verifyonly");
    let target = scratch.path("target.img");
    let body = "[v]\nrw=randwrite\nbs=4k\nsize=1m\ndirect=1\nverify=crc32c\n";
    let writer = scratch.file("w.fio", &format!("{body}do_verify=0\n"));
    let checker = scratch.file("c.fio", &format!("{body}verify_only\n"));
    let missing = scratch.path("missing.img");
    let out = iosched(&["run", &checker, "--device", &missing]);
    assert_input_error(&out, "nothing was written there");
    assert!(!std::path::Path::new(&missing).exists());
    assert!(iosched(&["run", &writer, "--device", &target])
        .status
        .success());
    let before = std::fs::read(&target).unwrap();
    let json = engine_json(&checker, &target);
    assert_eq!(json["jobs"][0]["read"]["io_bytes"], 1 << 20);
    assert_eq!(json["jobs"][0]["write"]["io_bytes"], 0);
    assert_eq!(std::fs::read(&target).unwrap(), before, "verify_only wrote");
    let mut bytes = before;
    bytes[(1 << 20) + 7 * 4096 + 9] ^= 2;
    std::fs::write(&target, &bytes).unwrap();
    let out = iosched(&["run", &checker, "--device", &target]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("offset {}", (1 << 20) + 7 * 4096))
    );
}

/// `verify_pattern` writes fio's pattern (with the block's offset for `%o`) and checks it on
/// read-back; a flipped byte fails naming it; beside a checksum method it fills the data after
/// the header; `verify=pattern` without a pattern is refused with exit 2.
#[test]
fn verify_pattern_writes_and_checks_fios_pattern() {
    let scratch = Scratch::new("engine-cli-pattern");
    let target = scratch.path("target.img");
    let body = "[p]\nrw=randwrite\nbs=4k\nsize=64k\ndirect=1\n";
    let job = scratch.file("p.fio", &format!("{body}verify_pattern=0xa5%o\"io\"\n"));
    let json = engine_json(&job, &target);
    assert_eq!(json["jobs"][0]["read"]["io_bytes"], 64 << 10, "read back");
    let mut bytes = std::fs::read(&target).unwrap();
    let block = (1 << 20) + 4096;
    assert_eq!(bytes[block], 0xa5);
    assert_eq!(bytes[block + 1..block + 9], (block as u64).to_le_bytes());
    assert_eq!(&bytes[block + 9..block + 11], b"io");
    bytes[block + 100] ^= 1;
    std::fs::write(&target, &bytes).unwrap();
    let checker = scratch.file(
        "c.fio",
        &format!("{body}verify_pattern=0xa5%o\"io\"\nverify_only\n"),
    );
    let out = iosched(&["run", &checker, "--device", &target]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pattern mismatch at byte 100"));
    let both = scratch.file("m.fio", &format!("{body}verify=md5\nverify_pattern=0xff\n"));
    let json = engine_json(&both, &target);
    assert_eq!(json["jobs"][0]["read"]["io_bytes"], 64 << 10, "read back");
    let bytes = std::fs::read(&target).unwrap();
    assert!(bytes[block + 64..block + 4096].iter().all(|&b| b == 0xff));
    let bad = scratch.file("b.fio", &format!("{body}verify=pattern\n"));
    let out = iosched(&["run", &bad, "--device", &target]);
    assert_input_error(&out, "needs verify_pattern");
}

/// A job ends at its first bad block, with or without `verify_fatal=1`: fio 3.33 on this
/// machine (`verify_only`, crc32c, 64 blocks, two flipped) reads 4 blocks and exits 1 either
/// way; only `continue_on_error=verify` goes on (tests/continue_on_error.rs).
#[test]
fn verify_fatal_stops_at_the_first_bad_block() {
    let scratch = Scratch::new("engine-cli-fatal");
    let target = scratch.path("target.img");
    let body = "[v]\nrw=write\nbs=4k\nsize=256k\ndirect=1\nverify=crc32c\n";
    let writer = scratch.file("w.fio", &format!("{body}do_verify=0\n"));
    assert!(iosched(&["run", &writer, "--device", &target])
        .status
        .success());
    let mut bytes = std::fs::read(&target).unwrap();
    for block in [10, 20, 30] {
        bytes[(1 << 20) + block * 4096 + 100] ^= 1;
    }
    std::fs::write(&target, &bytes).unwrap();
    for (fatal, bad, read) in [("0", 1, 11 * 4096), ("1", 1, 11 * 4096)] {
        let checker = scratch.file(
            "c.fio",
            &format!("{body}verify_only\nverify_fatal={fatal}\n"),
        );
        let args = [
            "run",
            &checker,
            "--device",
            &target,
            "--output-format",
            "json",
        ];
        let out = iosched(&args);
        assert_eq!(out.status.code(), Some(1), "verify_fatal={fatal}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("found {bad} bad block")),
            "{stderr}"
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            json["jobs"][0]["read"]["io_bytes"], read,
            "verify_fatal={fatal}"
        );
    }
}

#[test]
fn a_corrupted_block_fails_the_run_naming_its_offset() {
    let scratch = Scratch::new("engine-cli-verify");
    let target = scratch.path("target.img");
    let writer = scratch.file(
        "write.fio",
        "[v]\nrw=write\nbs=4k\nsize=1m\ndirect=1\nverify=md5\ndo_verify=0\n",
    );
    assert!(iosched(&["run", &writer, "--device", &target])
        .status
        .success());
    let reader = scratch.file(
        "read.fio",
        "[v]\nrw=read\nbs=4k\nsize=1m\ndirect=1\nverify=md5\n",
    );
    assert!(iosched(&["run", &reader, "--device", &target])
        .status
        .success());
    // The job's one file lies at 1 MiB; corrupt its third block.
    let offset = (1 << 20) + 2 * 4096;
    let mut bytes = std::fs::read(&target).unwrap();
    bytes[offset + 100] ^= 1;
    std::fs::write(&target, &bytes).unwrap();
    let out = iosched(&["run", &reader, "--device", &target]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("at offset {offset}: md5 mismatch")),
        "{stderr}"
    );
}

/// A write job with `verify=` and fio's default `do_verify=1` reads back every block once its
/// writes are done (the random map writes each block once), and every read checks out.
#[test]
fn a_write_job_reads_back_and_checks_every_block() {
    let scratch = Scratch::new("engine-cli-readback");
    let target = scratch.path("target.img");
    let job = scratch.file(
        "rw.fio",
        "[v]\nrw=randwrite\nbs=4k\nsize=1m\ndirect=1\nioengine=io_uring\niodepth=8\n\
         verify=crc32c\n",
    );
    let out = iosched(&["run", &job, "--device", &target, "--output-format", "json"]);
    let json = json_of(&out);
    let ios = |dir: &str| json["jobs"][0][dir]["total_ios"].as_u64().unwrap();
    assert_eq!((ios("read"), ios("write")), (256, 256));
}

/// What written blocks hold: fio's default makes every block distinct data; `zero_buffers`
/// writes zeros.
#[test]
fn written_data_follows_fios_buffer_options() {
    let scratch = Scratch::new("engine-cli-buffers");
    for (option, zeros_expected) in [("", false), ("zero_buffers\n", true)] {
        let target = scratch.path(&format!("t{}.img", zeros_expected as u8));
        let job = scratch.file(
            "w.fio",
            &format!("[w]\nrw=write\nbs=4k\nsize=1m\ndirect=1\n{option}"),
        );
        assert!(iosched(&["run", &job, "--device", &target])
            .status
            .success());
        let bytes = std::fs::read(&target).unwrap();
        // The job's file lies at 1 MiB.
        let blocks: Vec<&[u8]> = bytes[1 << 20..2 << 20].chunks(4096).collect();
        let zero_blocks = blocks.iter().filter(|b| b.iter().all(|&x| x == 0)).count();
        if zeros_expected {
            assert_eq!(zero_blocks, blocks.len());
        } else {
            assert_eq!(zero_blocks, 0);
            let mut distinct = blocks.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), blocks.len(), "no two blocks alike");
        }
    }
    // buffer_pattern: every written byte is the pattern's.
    let target = scratch.path("pattern.img");
    let job = scratch.file(
        "p.fio",
        "[w]\nrw=write\nbs=4k\nsize=64k\ndirect=1\nbuffer_pattern=0x5a\"z\"\n",
    );
    assert!(iosched(&["run", &job, "--device", &target])
        .status
        .success());
    let bytes = std::fs::read(&target).unwrap();
    let written = &bytes[1 << 20..(1 << 20) + (64 << 10)];
    assert!(written.chunks(2).all(|pair| pair == [0x5a, b'z']));
}

#[test]
fn sigint_stops_submission_and_prints_partial_results() {
    let scratch = Scratch::new("engine-cli-sigint");
    let job = scratch.file(
        "long.fio",
        "[long]\nrw=randread\nbs=4k\nsize=4m\ndirect=1\ntime_based\nruntime=60\n",
    );
    let target = scratch.path("target.img");
    let child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", &job, "--device", &target, "--output-format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The engine creates the target once its SIGINT handler is in place; wait for it (a
    // loaded machine may take a while to start the binary), then let it run a little.
    for _ in 0..300 {
        if std::path::Path::new(&target).exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("partial JSON");
    assert_eq!(json["iosched"]["interrupted"], true);
    let bytes = json["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert!(bytes > 0, "some I/O before the interrupt");
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
}

#[test]
fn buffered_jobs_are_refused_with_status_2() {
    let scratch = Scratch::new("engine-cli-buffered");
    let job = scratch.file("b.fio", "[b]\nrw=read\nsize=1m\n");
    let out = iosched(&["run", &job, "--device", &scratch.path("t.img")]);
    assert_input_error(&out, "direct=0");
}

/// As an unprivileged user (root drops to `nobody` with setpriv), a root-only file is a clear
/// permission error, not a panic.
#[test]
fn a_path_without_permission_is_a_clear_error() {
    let scratch = Scratch::new("engine-cli-perm");
    let job = scratch.file("w.fio", "[w]\nrw=write\nsize=1m\ndirect=1\n");
    let target = scratch.file("root-only.img", "");
    if !is_root() {
        // Not root: the file is ours, so use one we surely may not write instead.
        let out = iosched(&["run", &job, "--device", "/proc/version"]);
        assert_ne!(out.status.code(), Some(0));
        return;
    }
    let chmod = |mode: &str, path: &str| {
        Command::new("chmod").args([mode, path]).status().unwrap();
    };
    chmod("0600", &target);
    chmod("0755", &scratch.0.to_string_lossy());
    chmod("0644", &job);
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", &job, "--device", &target])
        .output();
    let Ok(out) = out else {
        skip(
            "a_path_without_permission_is_a_clear_error",
            "setpriv unavailable",
        );
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("setpriv:") {
        skip(
            "a_path_without_permission_is_a_clear_error",
            &format!("setpriv failed: {stderr}"),
        );
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("permission denied"), "{stderr}");
    assert!(stderr.contains(&target), "{stderr}");
}

/// A loop device through noop and cfq (when the core has it), like the crate tests but through
/// the command line; skipped with a note when not root.
#[test]
fn weighted_job_on_a_loop_device() {
    const TEST: &str = "weighted_job_on_a_loop_device";
    let scratch = Scratch::new("engine-cli-loop");
    let job = scratch.file("w.fio", WEIGHTED);
    let Some(lp) = Loop::over_image(TEST, &scratch.path("backing.img"), 32 << 20) else {
        return;
    };
    let device = lp.0.clone();
    // A kernel scheduler other than none reorders after ours: the engine says so.
    let queue = format!(
        "/sys/block/{}/queue/scheduler",
        device.trim_start_matches("/dev/")
    );
    if std::fs::write(&queue, "mq-deadline").is_ok() {
        let out = iosched(&["run", &job, "--device", &device, "--output-format", "terse"]);
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("kernel's own scheduler is 'mq-deadline'"),
            "{stderr}"
        );
        std::fs::write(&queue, "none").unwrap();
    }
    let schedulers = iosched(&["schedulers"]);
    let has_cfq = String::from_utf8_lossy(&schedulers.stdout).contains("cfq");
    for scheduler in ["noop", "cfq"] {
        if scheduler == "cfq" && !has_cfq {
            eprintln!("note: cfq not available yet");
            continue;
        }
        let out = iosched(&[
            "run",
            &job,
            "--device",
            &device,
            "--scheduler",
            scheduler,
            "--output-format",
            "json",
        ]);
        let json = json_of(&out);
        assert_eq!(json["iosched"]["device"]["kind"], "block");
        assert_eq!(json["jobs"][0]["write"]["io_bytes"], 4 << 20, "{scheduler}");
        assert_eq!(json["jobs"][1]["read"]["io_bytes"], 4 << 20, "{scheduler}");
        assert_eq!(json["iosched"]["io_errors"], 0);
    }
}

/// One job file through both drivers: the same jobs, the same bytes per job, the same fields.
#[test]
fn the_simulator_and_the_engine_agree_on_what_was_done() {
    let scratch = Scratch::new("engine-cli-both");
    let job = scratch.file("w.fio", WEIGHTED);
    let sim = json_of(&iosched(&["run", &job, "--output-format", "json"]));
    let engine = json_of(&iosched(&[
        "run",
        &job,
        "--device",
        &scratch.path("t.img"),
        "--output-format",
        "json",
    ]));
    assert_eq!(sim["iosched"]["driver"], "sim");
    let (a, b) = (
        sim["jobs"].as_array().unwrap(),
        engine["jobs"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x["jobname"], y["jobname"]);
        assert_eq!(x["job options"], y["job options"]);
        for dir in ["read", "write"] {
            assert_eq!(x[dir]["io_bytes"], y[dir]["io_bytes"], "{dir}");
            assert_eq!(x[dir]["total_ios"], y[dir]["total_ios"], "{dir}");
        }
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v.as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(keys(x), keys(y), "same fields in both drivers' job entries");
    }
}

/// `--trace` and `--decisions` work with the engine as with the simulator: blkparse text with
/// every request queued, inserted, issued and completed, and one JSON line per decision.
#[test]
fn the_engine_writes_traces_and_decisions() {
    let scratch = Scratch::new("engine-cli-trace");
    let job = scratch.file("w.fio", WEIGHTED);
    let trace = scratch.path("trace.txt");
    let decisions = scratch.path("decisions.jsonl");
    let out = iosched(&[
        "run",
        &job,
        "--device",
        &scratch.path("t.img"),
        "--scheduler",
        "deadline",
        "--trace",
        &trace,
        "--decisions",
        &decisions,
        "--output-format",
        "terse",
    ]);
    common::assert_ran(&out);
    let text = std::fs::read_to_string(&trace).unwrap();
    // 2 jobs x 1024 I/Os, each queued (Q), then merged (M, F) or a request of its own
    // (I, D, C).
    let count = |action: &str| text.lines().filter(|l| l.contains(action)).count();
    assert_eq!(count(" Q "), 2048);
    assert_eq!(count(" I ") + count(" M ") + count(" F "), 2048);
    assert_eq!(count(" I "), count(" D "));
    assert_eq!(count(" D "), count(" C "));
    assert!(text.contains("[heavy]") && text.contains("[light]"));
    let decisions = std::fs::read_to_string(&decisions).unwrap();
    for line in decisions.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("one JSON object per line");
    }
}

/// `iosched compare` refuses what is not fio JSON with status 2, naming the file.
#[test]
fn compare_refuses_files_that_are_not_fio_json() {
    let scratch = Scratch::new("engine-cli-compare");
    let good = scratch.file("a.json", r#"{"jobs": []}"#);
    let bad = scratch.file("b.json", "not json");
    let out = iosched(&["compare", &good, &bad]);
    assert_input_error(&out, "b.json");
    let out = iosched(&["compare", &good, &good, "--titles", "x"]);
    assert_eq!(out.status.code(), Some(2));
}
