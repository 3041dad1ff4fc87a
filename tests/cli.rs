//! The `iosched` binary from the outside: outputs people parse, and bad input refused with
//! one clear message and exit status 2 (never a panic's 101).

mod common;

use std::path::Path;
use std::process::Command;

use common::{assert_input_error, iosched, json_of, skip, tool_available, Scratch};

const TWO_JOBS: &str = "\
[global]
direct=1
size=8m
bs=4k

[seq]
rw=read
cgroup=a

[rand]
rw=randread
cgroup=b
";

#[test]
fn json_output_has_fio_fields_for_each_scheduler() {
    let job_dir = Scratch::new("cli-two");
    let job = job_dir.file("two.fio", TWO_JOBS);
    for scheduler in ["noop", "deadline", "kyber"] {
        let output = iosched(&[
            "run",
            &job,
            "--scheduler",
            scheduler,
            "--output-format",
            "json",
        ]);
        let doc = json_of(&output);
        let jobs = doc["jobs"].as_array().expect("jobs[]");
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0]["jobname"], "seq");
        assert_eq!(jobs[1]["groupid"], 0);
        let read = &jobs[0]["read"];
        assert_eq!(read["io_bytes"], 8 << 20);
        assert!(read["bw"].as_u64().unwrap() > 0);
        assert!(read["iops"].as_f64().unwrap() > 0.0);
        assert!(read["runtime"].as_u64().unwrap() > 0);
        assert!(read["clat_ns"]["percentile"]["50.000000"].as_u64().unwrap() > 0);
        assert!(read["lat_ns"]["mean"].as_f64().unwrap() > 0.0);
        assert_eq!(doc["disk_util"][0]["name"], "fixed");
        assert_eq!(doc["iosched"]["scheduler"], scheduler);
        let cgroups = doc["iosched"]["cgroups"]
            .as_array()
            .expect("per-cgroup shares");
        assert_eq!(cgroups.len(), 2);
        assert_eq!(cgroups[0]["path"], "/a");
        assert_eq!(cgroups[0]["ideal_share"], 0.5);
    }
}

/// Same seed: everything but the wall-clock figures is byte-identical.
#[test]
fn same_seed_gives_identical_json_apart_from_wall_clock() {
    let job_dir = Scratch::new("cli-det");
    let job = job_dir.file("det.fio", TWO_JOBS);
    let run = || {
        let mut doc = json_of(&iosched(&[
            "run",
            &job,
            "--scheduler",
            "deadline",
            "--seed",
            "42",
            "--output-format",
            "json",
        ]));
        doc["iosched"]
            .as_object_mut()
            .unwrap()
            .remove("wall_clock")
            .expect("wall-clock figures live in iosched.wall_clock");
        serde_json::to_string(&doc).unwrap()
    };
    assert_eq!(run(), run());
}

#[test]
fn terse_output_is_one_line_per_job_of_fio_v3_fields() {
    let job_dir = Scratch::new("cli-terse");
    let job = job_dir.file("terse.fio", TWO_JOBS);
    let output = iosched(&["run", &job, "--output-format", "terse"]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    for line in lines {
        let fields: Vec<&str> = line.split(';').collect();
        assert_eq!(fields[0], "3");
        assert_eq!(fields.len(), 130, "{line}");
    }
}

#[test]
fn unknown_option_names_file_and_line() {
    let job_dir = Scratch::new("cli-bad");
    let job = job_dir.file("bad.fio", "[j]\nsize=1m\nbogus=1\n");
    let output = iosched(&["run", &job]);
    assert_input_error(&output, "bad.fio:3");
}

#[test]
fn bad_rw_value_is_refused() {
    let job_dir = Scratch::new("cli-badrw");
    let job = job_dir.file("badrw.fio", "[j]\nsize=1m\nrw=bogus\n");
    assert_input_error(&iosched(&["run", &job]), "badrw.fio:3");
}

#[test]
fn unreadable_file_is_refused() {
    let missing = Path::new("/nonexistent/iosched/job.fio");
    assert_input_error(&iosched(&["run", missing.to_str().unwrap()]), "job.fio");
}

#[test]
fn unknown_tunable_is_refused() {
    let job_dir = Scratch::new("cli-tun");
    let job = job_dir.file("tun.fio", TWO_JOBS);
    let output = iosched(&["run", &job, "--scheduler", "deadline", "--set", "nosuch=1"]);
    assert_input_error(&output, "nosuch");
}

#[test]
fn malformed_set_is_refused() {
    let job_dir = Scratch::new("cli-set");
    let job = job_dir.file("set.fio", TWO_JOBS);
    assert_input_error(&iosched(&["run", &job, "--set", "novalue"]), "--set");
}

#[test]
fn unknown_device_and_scheduler_are_refused() {
    let job_dir = Scratch::new("cli-dev");
    let job = job_dir.file("dev.fio", TWO_JOBS);
    assert_input_error(&iosched(&["run", &job, "--device", "nosuch"]), "nosuch");
    assert_input_error(&iosched(&["run", &job, "--scheduler", "nosuch"]), "nosuch");
}

#[test]
fn schedulers_lists_tunables_with_defaults() {
    let output = iosched(&["schedulers"]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("read_expire"));
    assert!(text.contains("fifo_batch"));
}

/// Every knob `--set` accepts besides the scheduler's is listed with its default, and the
/// listed defaults are the ones a run reports.
#[test]
fn knobs_lists_writeback_and_file_system_knobs() {
    let output = iosched(&["knobs"]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    for knob in [
        "dirty_ratio",
        "flusher",
        "dirty_throttle",
        "barrier",
        "commit_ms",
        "cpus",
        "cpu_era",
        "engine_threads",
    ] {
        assert!(
            text.lines()
                .any(|line| line.starts_with(&format!("{knob} "))),
            "{knob} missing:\n{text}"
        );
    }
    let default_of = |knob: &str| {
        let line = text.lines().find(|l| l.starts_with(&format!("{knob} ")));
        line.and_then(|l| l.split_whitespace().nth(1))
            .map(str::to_string)
    };
    assert_eq!(default_of("dirty_throttle").as_deref(), Some("io-less"));
    assert_eq!(default_of("cpu_era").as_deref(), Some("off"));
}

/// One capacity unit: `devices` and `calibrate` give every preset's capacity in the same
/// decimal GB (the figure drive makers print: hdd-7200 is 517.8 GB, which is 482 GiB), and
/// `devices` is a table whose columns line up however wide a value is (nvme-gen4's queue
/// depth of 1024 once pushed its row out of line).
#[test]
fn devices_and_calibrate_agree_on_capacity_in_aligned_columns() {
    let output = iosched(&["devices"]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let header = text.lines().next().unwrap();
    let end_of = |line: &str, column: &str| line.find(column).map(|at| at + column.len());
    let depth_end = end_of(header, "queue depth").unwrap();
    let capacity_end = end_of(header, "capacity (GB)").unwrap();
    for line in text.lines().skip(1) {
        let (name, _) = line.split_once(' ').unwrap();
        // Right-aligned figures end where their column's title ends.
        for end in [depth_end, capacity_end] {
            let (figure, after) = line.split_at(end);
            assert!(
                figure.ends_with(|c: char| c.is_ascii_digit()) && after.starts_with(' '),
                "a figure does not end under its title:\n{header}\n{line}"
            );
        }
        let listed = line[..capacity_end].split_whitespace().last().unwrap();
        let listed: f64 = listed.parse().unwrap_or_else(|_| panic!("{line}"));
        let calibrated = iosched(&["calibrate", name]);
        let calibrated = String::from_utf8(calibrated.stdout).unwrap();
        assert!(
            calibrated
                .lines()
                .next()
                .unwrap()
                .contains(&format!("capacity {listed:.1} GB)")),
            "{name}: devices says {listed} GB, calibrate {calibrated}"
        );
    }
    assert!(
        text.contains("hdd-7200") && text.contains("517.8"),
        "{text}"
    );
}

/// `engine_threads` is the real engine's; a simulated run refuses it by its name, where it
/// was once reported as a tunable the scheduler lacks.
#[test]
fn engine_threads_on_a_simulated_run_is_refused_by_name() {
    let job_dir = Scratch::new("cli-threads");
    let job = job_dir.file("threads.fio", TWO_JOBS);
    let output = iosched(&["run", &job, "--set", "engine_threads=2"]);
    assert_input_error(
        &output,
        "engine_threads=2: the real engine's worker threads",
    );
}

/// A CFQ run's binary trace opens in blkparse and btt, and carries CFQ's messages.
#[test]
fn blkparse_and_btt_read_a_cfq_trace() {
    if !tool_available("blkparse") || !tool_available("btt") {
        skip(
            "blkparse_and_btt_read_a_cfq_trace",
            "blkparse/btt not installed (apt-get install blktrace)",
        );
        return;
    }
    let job_dir = Scratch::new("cli-trace");
    let job = job_dir.file("trace.fio", TWO_JOBS);
    let dir = job_dir.0.as_path();
    let base = dir.join("cfqrun");
    let output = iosched(&[
        "run",
        &job,
        "--scheduler",
        "cfq",
        "--device",
        "hdd-7200",
        "--trace",
        base.with_extension("blktrace").to_str().unwrap(),
        "--output-format",
        "terse",
    ]);
    common::assert_ran(&output);
    let parsed = Command::new("blkparse")
        .args(["-i", "cfqrun", "-d", "cfqrun.bin", "-o", "cfqrun.txt"])
        .current_dir(dir)
        .output()
        .unwrap();
    common::assert_ran(&parsed);
    let text = std::fs::read_to_string(dir.join("cfqrun.txt")).unwrap();
    assert!(text.contains(" D  RS "), "issue events present");
    assert!(
        text.contains("set_active wl_class:0 wl_type:2"),
        "CFQ notes present"
    );
    let btt = Command::new("btt")
        .args(["-i", "cfqrun.bin"])
        .current_dir(dir)
        .output()
        .unwrap();
    common::assert_ran(&btt);
    assert!(String::from_utf8_lossy(&btt.stdout).contains("D2C"));
}

#[test]
fn calibrate_prints_figures_beside_targets() {
    let output = iosched(&["calibrate", "emmc51", "--output-format", "json"]);
    let doc = json_of(&output);
    let measurements = doc["measurements"].as_array().unwrap();
    assert!(measurements.iter().any(|m| m["target"].is_object()));
    assert_eq!(doc["queue_depth"], 2);
    // The coverage object counts what the table marks.
    let coverage = &doc["coverage"];
    let published = measurements.iter().filter(|m| m["published"] == true);
    assert_eq!(coverage["rows"], measurements.len());
    assert_eq!(coverage["checked"], published.clone().count());
    assert_eq!(
        coverage["within"],
        published.filter(|m| m["within_target"] == true).count()
    );
    assert_eq!(
        coverage["checked_rows"].as_array().unwrap().len(),
        coverage["checked"].as_u64().unwrap() as usize
    );
}

/// `calibrate FILE.toml` holds a model file to the published figures of the preset it starts
/// from: a deliberately broken hdd-7200 (3600 rpm) misses the QD1 random-read figure the
/// preset meets (Wikipedia's 75–100 IOPS), and every checked row names its source.
#[test]
fn calibrate_checks_a_model_file_against_its_base_preset() {
    let dir = Scratch::new("cli-calib");
    let broken = dir.file(
        "broken.toml",
        "model = \"hdd\"\nbase = \"hdd-7200\"\nrpm = 3_600\n",
    );
    let row_ok = |doc: &serde_json::Value| {
        let rows = doc["measurements"].as_array().unwrap();
        let row = rows
            .iter()
            .find(|m| m["pattern"] == "randread" && m["queue_depth"] == 1 && m["unit"] == "IOPS")
            .expect("a QD1 random-read row");
        for m in rows.iter().filter(|m| m["published"] == true) {
            assert!(m["target_source"].as_str().is_some_and(|s| !s.is_empty()));
        }
        row["within_target"].as_bool().unwrap()
    };
    let preset = json_of(&iosched(&[
        "calibrate",
        "hdd-7200",
        "--output-format",
        "json",
    ]));
    let file = json_of(&iosched(&["calibrate", &broken, "--output-format", "json"]));
    assert_eq!(file["targets_of"], "hdd-7200");
    assert!(row_ok(&preset));
    assert!(!row_ok(&file));
    assert!(!file["sources"].as_array().unwrap().is_empty());
}

#[test]
fn bad_device_model_file_names_file_and_line() {
    let model_dir = Scratch::new("cli-disk");
    let model = model_dir.file("disk.toml", "model = \"hdd\"\nrpm = fast\n");
    let job_dir = Scratch::new("cli-m");
    let job = job_dir.file("m.fio", TWO_JOBS);
    assert_input_error(&iosched(&["run", &job, "--device", &model]), "disk.toml:2");
}

#[test]
fn device_path_in_a_missing_folder_is_bad_input() {
    let job_dir = Scratch::new("cli-path");
    let job = job_dir.file("path.fio", TWO_JOBS);
    assert_input_error(
        &iosched(&["run", &job, "--device", "/nonexistent/iosched/file"]),
        "/nonexistent/iosched",
    );
}

/// `$mb_memory` in a job file is the simulated machine's memory (`--mem`), not the host's.
#[test]
fn mb_memory_is_the_simulated_machines() {
    let job_dir = Scratch::new("cli-mb");
    let job = job_dir.file("mb.fio", "[m]\nrw=read\nbs=4k\nsize=$mb_memory*1024\n");
    for (mem, bytes) in [("1g", 1u64 << 20), ("2g", 2 << 20)] {
        let output = iosched(&["run", &job, "--mem", mem, "--output-format", "json"]);
        let doc = json_of(&output);
        assert_eq!(doc["jobs"][0]["read"]["io_bytes"].as_u64(), Some(bytes));
    }
}

/// Rate-limited mixed jobs keep each direction's rate (`rate=1m,2m`), and stay quick to
/// simulate at depth (every completion used to re-arm the same wake-up).
#[test]
fn per_direction_rates_hold_for_a_mixed_job() {
    let job_dir = Scratch::new("cli-rate");
    let job = job_dir.file(
        "rate.fio",
        "[j]\nrw=randrw\nbs=4k\nsize=64m\ndirect=1\nioengine=libaio\niodepth=8\n\
         rate=1m,2m\nruntime=5\ntime_based\n",
    );
    let doc = json_of(&iosched(&["run", &job, "--output-format", "json"]));
    let kib_s = |dir: &str| doc["jobs"][0][dir]["bw"].as_f64().unwrap();
    assert!(
        (1000.0..1050.0).contains(&kib_s("read")),
        "{}",
        kib_s("read")
    );
    assert!(
        (2000.0..2100.0).contains(&kib_s("write")),
        "{}",
        kib_s("write")
    );
    assert!(doc["iosched"]["events"].as_u64().unwrap() < 200_000);
}

/// A write job with `verify=` reads back every block it wrote, as fio's verify phase does.
#[test]
fn verify_reads_back_what_was_written() {
    let job_dir = Scratch::new("cli-verify");
    let job = job_dir.file(
        "verify.fio",
        "[v]\nrw=randwrite\nbs=4k\nsize=4m\ndirect=1\nioengine=libaio\niodepth=8\nverify=crc32c\n",
    );
    let doc = json_of(&iosched(&["run", &job, "--output-format", "json"]));
    let ios = |dir: &str| doc["jobs"][0][dir]["total_ios"].as_u64().unwrap();
    assert_eq!((ios("read"), ios("write")), (1024, 1024));
}

/// `exit_what=stonewall`: a finishing `exitall` job stops running jobs of other groups too
/// (here a job that would otherwise need weeks of simulated time).
#[test]
fn exit_what_stonewall_stops_other_groups() {
    let text = "[global]\nexitall=1\nsize=1g\n\
                [slow]\nrw=read\nnumber_ios=100\nnew_group=1\nexit_what=stonewall\n\
                [fast]\nnew_group=1\nrw=randread\nrate=300\n";
    let job_dir = Scratch::new("cli-exitwhat");
    let job = job_dir.file("exitwhat.fio", text);
    let doc = json_of(&iosched(&["run", &job, "--output-format", "json"]));
    assert_eq!(doc["jobs"][0]["read"]["total_ios"].as_u64(), Some(100));
    assert!(doc["jobs"][1]["read"]["total_ios"].as_u64().unwrap() <= 1);
    // Without it, the same jobs run into the simulated-time cap: the error names the job.
    let job_dir = Scratch::new("cli-exitgroup");
    let job = job_dir.file("exitgroup.fio", &text.replace("exit_what=stonewall\n", ""));
    let output = iosched(&["run", &job]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("job 'fast'"), "{stderr}");
}

/// `ss=` ends a time-based job once its rate is steady: after the ramp and one second, a
/// window of `ss_dur` one-second samples within the limit (here at 4 s of a 60 s job).
#[test]
fn steady_state_ends_a_job_early() {
    let text = "[j]\nrw=randread\nbs=4k\nsize=64m\ndirect=1\nioengine=libaio\niodepth=4\n\
                time_based\nruntime=60\nss=iops:10%\nss_dur=3\nss_ramp=1\n";
    let job_dir = Scratch::new("cli-ss");
    let job = job_dir.file("ss.fio", text);
    let doc = json_of(&iosched(&["run", &job, "--output-format", "json"]));
    let runtime_ms = doc["jobs"][0]["job_runtime"].as_u64().unwrap();
    assert!((3990..=4010).contains(&runtime_ms), "{runtime_ms} ms");
}

/// fio's log files land in the working directory, named and laid out as fio 3.33 writes them:
/// a line per I/O, or per `log_avg_msec` window with `bs` 0; a synchronous engine's slat
/// log is empty.
#[test]
fn job_logs_are_written_as_fio_writes_them() {
    let job_dir = Scratch::new("cli-logs");
    let job = job_dir.file(
        "logs.fio",
        "[j]\nrw=randread\nbs=4k\nsize=1m\ndirect=1\nwrite_lat_log\nwrite_bw_log=b\n\
         [k]\nrw=read\nbs=4k\nsize=8m\ndirect=1\nioengine=libaio\niodepth=4\n\
         write_iops_log\nlog_avg_msec=5\n",
    );
    let dir = job_dir.0.join("logs");
    std::fs::create_dir_all(&dir).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["run", &job, "--device", "ssd-x25e"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(output.status.success());
    let lines = |name: &str| -> Vec<String> {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(lines("j_lat.1.log").len(), 256);
    assert_eq!(lines("j_clat.1.log").len(), 256);
    assert!(lines("j_slat.1.log").is_empty());
    let bw = lines("b_bw.1.log");
    let fields: Vec<&str> = bw[0].split(", ").collect();
    assert_eq!(
        (fields.len(), fields[2], fields[3], fields[4]),
        (5, "0", "4096", "0")
    );
    let iops = lines("k_iops.2.log");
    assert!(iops.len() > 1);
    for (window, line) in iops.iter().enumerate() {
        let fields: Vec<&str> = line.split(", ").collect();
        assert_eq!(fields[0], ((window + 1) * 5).to_string(), "{line}");
        assert_eq!((fields[2], fields[3]), ("0", "0"), "{line}");
    }
}

/// A time-based job with `verify=` writes `size` a pass, reads it back, and starts over
/// while time remains (fio's loop); each direction's runtime is its own phases' sum.
#[test]
fn time_based_verify_alternates_writes_and_read_backs() {
    let job_dir = Scratch::new("cli-vt");
    let job = job_dir.file(
        "vt.fio",
        "[v]\nrw=randwrite\nbs=4k\nsize=8m\ndirect=1\nioengine=libaio\niodepth=8\n\
         verify=crc32c\ntime_based\nruntime=3\n",
    );
    let doc = json_of(&iosched(&[
        "run",
        &job,
        "--device",
        "ssd-x25e",
        "--output-format",
        "json",
    ]));
    let j = &doc["jobs"][0];
    let ios = |dir: &str| j[dir]["total_ios"].as_u64().unwrap();
    let runtime = |dir: &str| j[dir]["runtime"].as_u64().unwrap();
    assert!(
        ios("read") >= 2 * 2048,
        "several read-backs: {}",
        ios("read")
    );
    assert_eq!(ios("read") % 2048, 0, "whole passes read back");
    assert!(ios("write") >= ios("read"));
    let total = j["job_runtime"].as_u64().unwrap();
    assert!((2990..=3010).contains(&total), "{total}");
    assert!(runtime("read") + runtime("write") <= total);
    assert!(runtime("read") + runtime("write") + 5 >= total);
}

/// fio's `flow`: two jobs of one flow with weights 8 and 1 do I/O in that proportion (fio's
/// own `examples/flow.fio`, shortened).
#[test]
fn flow_weights_hold_between_jobs() {
    let job_dir = Scratch::new("cli-flow");
    let job = job_dir.file(
        "flow.fio",
        "[global]\nnorandommap\ntime_based\nruntime=1\ndirect=1\nioengine=libaio\n\
         iodepth=32\nsize=256m\nbs=8k\nfilename=flowfile\nflow_sleep=1000\n\
         [writer]\nrw=write\nflow=1\n[reader]\nrw=randread\nflow=8\n",
    );
    let doc = json_of(&iosched(&[
        "run",
        &job,
        "--device",
        "ssd-x25e",
        "--output-format",
        "json",
    ]));
    let writes = doc["jobs"][0]["write"]["total_ios"].as_f64().unwrap();
    let reads = doc["jobs"][1]["read"]["total_ios"].as_f64().unwrap();
    assert!((7.6..8.4).contains(&(reads / writes)), "{reads} / {writes}");
}

/// `--output /dev/null` writes into the device and leaves it a device. Results go to a
/// partial file renamed over the destination; renamed over `/dev/null` (as root) that once
/// replaced the machine's null device with a regular file, which every later `> /dev/null`
/// then filled. Put back here if it happens again, so a failure does not break the machine.
#[test]
fn output_to_dev_null_leaves_the_device_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let job_dir = Scratch::new("cli-dev-null");
    let job = job_dir.file("two.fio", TWO_JOBS);
    let output = iosched(&["run", &job, "--output", "/dev/null"]);
    let kind = std::fs::metadata("/dev/null").map(|meta| meta.file_type());
    let still_null = kind.as_ref().is_ok_and(|kind| kind.is_char_device());
    if !still_null && common::is_root() {
        let _ = std::fs::remove_file("/dev/null");
        let _ = Command::new("mknod")
            .args(["-m", "666", "/dev/null", "c", "1", "3"])
            .status();
    }
    assert!(output.status.success(), "{output:?}");
    assert!(still_null, "/dev/null became {kind:?}");
}

/// `calibrate --disksim` prints one line per DiskSim drive with DiskSim's own figure beside
/// ours; a folder without the data is an input error naming the file.
#[test]
fn calibrate_disksim_prints_each_drive_beside_disksim() {
    let output = iosched(&["calibrate", "--disksim"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let drives: Vec<&str> = text
        .lines()
        .map(|line| line.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        drives,
        [
            "cheetah9LP",
            "ibm18es",
            "atlas10k",
            "cheetah4LP",
            "barracuda",
            "atlas_III",
            "hp_c2247a",
            "hp_c3323a",
            "hp_c2490a",
            "dec_rz26"
        ]
    );
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(
            (words[1], words[3], words[4]),
            ("demerit", "ms", "(DiskSim"),
            "{line}"
        );
        assert!(
            words[2].parse::<f64>().is_ok() && line.ends_with(" ms)"),
            "{line}"
        );
    }
    assert!(
        text.contains("cheetah9LP demerit 0.10") && text.contains("(DiskSim 0.107 ms)"),
        "{text}"
    );
    let empty = Scratch::new("cli-disksim-empty");
    let output = iosched(&["calibrate", "--disksim", &empty.0.to_string_lossy()]);
    assert_input_error(&output, "cheetah9LP.toml: cannot read");
}
