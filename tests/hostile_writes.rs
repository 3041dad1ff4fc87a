//! Issue 28: one gate for every byte iosched writes, and names that are names. Each test here
//! failed before its fix: a job file's `write_iolog` overwrote a device's ext4 superblock in a
//! simulated read job, a hand-edited spec's `outputs.trace` climbed out of the folder, a spec
//! carrying `"force": true` wrote over a file system, a refused run still saved its spec, a
//! full file system left 0-byte files behind, and 5000 small clones filled an 8 MiB file with
//! 5.2 GB of layout data. The walks at the end run every job-file option and every command-line
//! flag: a new output that skips the gate fails them.
//!
//! Tests that need root, loop devices or fio print `SKIPPED: ...`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{
    assert_input_error, fio3_available, is_root, len_of, skip, stderr_of, Loop, Mount, Scratch,
};

/// 8 KiB that `blkid` and the gate read as ext4: s_magic 0xEF53 at 1080, the rest filler.
fn ext4_bytes() -> Vec<u8> {
    let mut bytes = vec![0x5Au8; 8192];
    bytes[1080..1082].copy_from_slice(&[0x53, 0xEF]);
    bytes
}

/// Writes [`ext4_bytes`] at `path`, making its folder.
fn plant(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, ext4_bytes()).unwrap();
}

/// The first 8 KiB of `path` (a file or a device).
fn head(path: &str) -> Vec<u8> {
    use std::io::Read;
    let mut bytes = vec![0u8; 8192];
    let mut file = std::fs::File::open(path).unwrap();
    file.read_exact(&mut bytes).unwrap();
    bytes
}

/// Runs iosched with `args` in `dir` (where a job file's relative log paths land), killed
/// after `limit`.
fn iosched_in(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    iosched_in(dir, args, Duration::from_secs(120))
}

/// A refusal by the gate: non-zero exit, the gate's sentence, no panic, no debug dump.
fn assert_refused(out: &Output, what: &str) {
    let stderr = stderr_of(out);
    assert_ne!(out.status.code(), Some(0), "{what}: ran: {stderr}");
    assert!(
        stderr.contains("refusing to write") || stderr.contains("may not climb"),
        "{what}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

/// Issue 28, 1: `write_iolog=/dev/loopN` in a simulated read job overwrote the device's
/// ext4 superblock, exit 0. The gate refuses the device by its path and by a relative name
/// that leads to it (a symbolic link).
#[test]
fn write_iolog_cannot_reach_a_block_device() {
    const TEST: &str = "write_iolog_cannot_reach_a_block_device";
    let scratch = Scratch::new("hw-iolog-dev");
    let image = scratch.path("ext4.img");
    let Some(lp) = Loop::over_image(TEST, &image, 8 << 20) else {
        return;
    };
    std::fs::write(&lp.0, ext4_bytes()).unwrap();
    let before = head(&lp.0);
    for target in [lp.0.as_str(), "dev.log"] {
        let job = scratch.file(
            "r.fio",
            &format!("[r]\nrw=read\nbs=4k\nsize=64k\nwrite_iolog={target}\n"),
        );
        let _ = std::fs::remove_file(scratch.0.join("dev.log"));
        std::os::unix::fs::symlink(&lp.0, scratch.0.join("dev.log")).unwrap();
        let out = run_in(&scratch.0, &["run", &job]);
        assert_input_error(&out, "write_iolog");
        assert_eq!(head(&lp.0), before, "{target}: the device was written");
    }
    let out = run_in(&scratch.0, &["run", &scratch.path("r.fio")]);
    assert!(
        stderr_of(&out).contains("it is a block device"),
        "{}",
        stderr_of(&out)
    );
}

/// fio's job files name their logs by absolute paths (`write_bw_log=/tmp/run/a`): the gate
/// lets a new file there be written, refusing only what holds data. (A first cut of the
/// gate confined job-file paths below the current folder, which refused fio's own usage.)
#[test]
fn a_job_files_absolute_log_path_is_written() {
    let scratch = Scratch::new("hw-abs-log");
    let logs = scratch.path("logs");
    std::fs::create_dir(&logs).unwrap();
    let job = scratch.file(
        "r.fio",
        &format!("[r]\nrw=read\nbs=4k\nsize=64k\nwrite_bw_log={logs}/run\n"),
    );
    let elsewhere = scratch.path("cwd");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = run_in(Path::new(&elsewhere), &["run", &job]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let written = std::fs::read_dir(&logs).unwrap().count();
    assert!(written > 0, "no bw log under {logs}");
}

/// Issue 28, 2: a hand-edited `--spec` whose `outputs.trace` climbs out with `..` replaced
/// an unrelated file. Paths read from a spec stay below the current folder.
#[test]
fn a_specs_output_paths_cannot_climb_out() {
    let scratch = Scratch::new("hw-spec-climb");
    let work = scratch.0.join("work");
    std::fs::create_dir(&work).unwrap();
    let victim = scratch.file("victim.txt", "precious\n");
    let job = scratch.file("r.fio", "[r]\nrw=read\nbs=4k\nsize=64k\n");
    let out = run_in(
        &work,
        &["run", &job, "--save-spec", "s.json", "--trace", "t.txt"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(work.join("s.json")).unwrap();
    for (key, path) in [("trace", "../victim.txt"), ("decisions", victim.as_str())] {
        let edited = text.replace(
            "\"trace\": \"t.txt\"",
            &format!("\"{key}\": {}", serde_json::json!(path)),
        );
        let edited = if key == "decisions" {
            edited.replace("\"decisions\": null,", "")
        } else {
            edited
        };
        std::fs::write(work.join("e.json"), edited).unwrap();
        let out = run_in(&work, &["run", "--spec", "e.json"]);
        assert_input_error(&out, &format!("outputs.{key}"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    }
}

/// Issue 28, 2: a spec carrying `"force": true` wrote to a target holding ext4 with no
/// `--force` on the command line. Only the command line grants it.
#[test]
fn a_spec_cannot_grant_force() {
    let scratch = Scratch::new("hw-spec-force");
    let plain = scratch.data_file("plain.img", 1 << 20);
    let image = scratch.path("ext4.img");
    let mut bytes = ext4_bytes();
    bytes.resize(1 << 20, 0x5A);
    std::fs::write(&image, &bytes).unwrap();
    let job = scratch.file("w.fio", "[w]\nrw=write\nbs=64k\nsize=256k\ndirect=1\n");
    let out = run_in(
        &scratch.0,
        &["run", &job, "--device", &plain, "--save-spec", "s.json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(scratch.0.join("s.json")).unwrap();
    assert!(!text.contains("\"force\""), "a saved spec carries no force");
    let edited = text
        .replace(&plain, &image)
        .replace("\"check\": false,", "\"check\": false,\n  \"force\": true,");
    std::fs::write(scratch.0.join("e.json"), edited).unwrap();
    let out = run_in(&scratch.0, &["run", "--spec", "e.json"]);
    assert_input_error(&out, "ext2/3/4");
    assert_eq!(
        std::fs::read(&image).unwrap(),
        bytes,
        "the image was written"
    );
}

/// Issue 28, 5: a run refused by write safety still wrote its `--save-spec` file.
#[test]
fn a_refused_run_saves_no_spec() {
    let scratch = Scratch::new("hw-save-refused");
    let image = scratch.path("ext4.img");
    let mut bytes = ext4_bytes();
    bytes.resize(1 << 20, 0x5A);
    std::fs::write(&image, &bytes).unwrap();
    let job = scratch.file("w.fio", "[w]\nrw=write\nbs=64k\nsize=256k\ndirect=1\n");
    let out = run_in(
        &scratch.0,
        &["run", &job, "--device", &image, "--save-spec", "s.json"],
    );
    assert_input_error(&out, "refusing to write");
    assert!(!scratch.0.join("s.json").exists(), "spec saved");
    assert!(!scratch.0.join("s.json.partial").exists(), "partial left");
}

/// Issue 28, 5: `numjobs=5000 size=8k` reading an 8 MiB file wrote 5.2 GB of layout data
/// into it (each clone's file is 1 MiB aligned). A file holding data is not grown for
/// reading jobs without `--force`.
#[test]
fn many_small_readers_do_not_fill_a_file_holding_data() {
    let scratch = Scratch::new("hw-layout");
    let data = scratch.data_file("data.img", 8 << 20);
    let job = scratch.file(
        "r.fio",
        "[r]\nrw=read\nbs=4k\nsize=8k\nnumjobs=5000\ndirect=1\nioengine=io_uring\n",
    );
    let before = std::fs::read(&data).unwrap();
    let out = run_in(&scratch.0, &["run", &job, "--device", &data]);
    assert_input_error(&out, "it holds 8388608 bytes of data");
    assert_eq!(std::fs::read(&data).unwrap(), before);
}

/// Issue 28, 2 and 5: `kernel --set ../../decoy.txt=PWNED` replaced the decoy, and an
/// unknown tunable was reported as "Permission denied".
#[test]
fn kernel_set_names_only_the_schedulers_tunables() {
    const TEST: &str = "kernel_set_names_only_the_schedulers_tunables";
    if !fio3_available() {
        return skip(TEST, "fio 3 is not installed");
    }
    let scratch = Scratch::new("hw-kernel-set");
    let Some(lp) = Loop::over_image(TEST, &scratch.path("disk.img"), 16 << 20) else {
        return;
    };
    let decoy = scratch.file("decoy.txt", "keep\n");
    let job = scratch.file("r.fio", "[r]\nrw=read\nbs=4k\nsize=64k\n");
    let climb = format!("{}{}=PWNED", "../".repeat(12), &decoy[1..]);
    let out = run_in(
        &scratch.0,
        &[
            "kernel",
            &job,
            "--device",
            &lp.0,
            "--scheduler",
            "mq-deadline",
            "--set",
            &climb,
        ],
    );
    assert_input_error(&out, "may not contain '/'");
    assert_eq!(std::fs::read_to_string(&decoy).unwrap(), "keep\n");
    let out = run_in(
        &scratch.0,
        &[
            "kernel",
            &job,
            "--device",
            &lp.0,
            "--scheduler",
            "mq-deadline",
            "--set",
            "no_such=1",
        ],
    );
    assert_input_error(&out, "has no tunable");
    assert!(
        stderr_of(&out).contains("fifo_batch"),
        "{}",
        stderr_of(&out)
    );
    // fio writes a job's logs itself: they pass the same gate first.
    let logged = scratch.file(
        "l.fio",
        "[l]\nrw=read\nbs=4k\nsize=64k\nwrite_iolog=l.log\n",
    );
    plant(&scratch.0.join("l.log"));
    let out = run_in(
        &scratch.0,
        &["kernel", &logged, "--device", &lp.0, "--scheduler", "none"],
    );
    assert_input_error(&out, "write_iolog");
    assert_eq!(
        std::fs::read(scratch.0.join("l.log")).unwrap(),
        ext4_bytes()
    );
}

/// Fills the file system at `dir` to its last block.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(dir.join("filler")).unwrap();
    let block = vec![1u8; 4096];
    while file.write_all(&block).is_ok() {}
    let _ = file.sync_all();
}

/// Files in `dir` (recursively) that are empty or partial: what a failed write left.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(leftovers(&path));
        } else if len_of(path.to_str().unwrap()) == 0 || path.to_string_lossy().contains(".partial")
        {
            found.push(path);
        }
    }
    found
}

/// Issue 28, 5: on a full file system `--save-spec`, `sweep --out`, `plot`, `compare
/// --plot`, `write_bw_log` and `replay --plot` left 0-byte files, and chart errors printed
/// Rust debug dumps. Each now fails with one plain message and leaves nothing.
#[test]
fn a_full_file_system_leaves_no_empty_or_partial_files() {
    const TEST: &str = "a_full_file_system_leaves_no_empty_or_partial_files";
    if !is_root() {
        return skip(TEST, "mounting a small tmpfs needs root");
    }
    let scratch = Scratch::new("hw-full");
    let point = scratch.0.join("mnt");
    std::fs::create_dir(&point).unwrap();
    let Some(_mount) = Mount::new(
        &["-t", "tmpfs", "-o", "size=256k", "tmpfs"],
        point.to_str().unwrap(),
    ) else {
        return skip(TEST, "mount -t tmpfs failed");
    };
    let job = scratch.file(
        "r.fio",
        "[r]\nrw=read\nbs=4k\nsize=256k\nwrite_bw_log=bw\nwrite_iolog=cap.log\n",
    );
    let out = run_in(
        &scratch.0,
        &["run", &job, "--output-format", "json", "--output", "a.json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    std::fs::copy(scratch.0.join("a.json"), scratch.0.join("b.json")).unwrap();
    scratch.file("s.fio", "[s]\nrw=read\nbs=64k\nsize=1m\n");
    let sweep = scratch.file(
        "sweep.toml",
        "title = \"t\"\njobs = [\"s.fio\"]\ndevices = [\"fixed\"]\nschedulers = [\"noop\"]\n",
    );
    let (a, b, cap) = (
        scratch.path("a.json"),
        scratch.path("b.json"),
        scratch.path("cap.log"),
    );
    let mnt = |name: &str| point.join(name).to_string_lossy().into_owned();
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "--save-spec",
            vec![
                "run".into(),
                job.clone(),
                "--save-spec".into(),
                mnt("s.json"),
            ],
        ),
        (
            "sweep --out",
            vec!["sweep".into(), sweep.clone(), "--out".into(), mnt("sw")],
        ),
        (
            "plot",
            vec!["plot".into(), a.clone(), "--out".into(), mnt("pl")],
        ),
        (
            "compare --plot",
            vec![
                "compare".into(),
                a.clone(),
                b.clone(),
                "--plot".into(),
                mnt("cp"),
            ],
        ),
        ("write_bw_log", vec!["run".into(), job.clone()]),
        (
            "replay --plot",
            vec!["replay".into(), cap.clone(), "--plot".into(), mnt("rp")],
        ),
    ];
    fill(&point);
    for (what, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_in(&point, &args);
        let stderr = stderr_of(&out);
        assert_ne!(out.status.code(), Some(0), "{what}: {stderr}");
        assert!(stderr.contains("No space left"), "{what}: {stderr}");
        for dump in ["Os {", "IOError", "kind:", "panicked"] {
            assert!(!stderr.contains(dump), "{what}: a debug dump: {stderr}");
        }
        assert_eq!(leftovers(&point), Vec::<PathBuf>::new(), "{what}: {stderr}");
    }
}

// ---------------------------------------------------------------------------------------
// The walk: every output the job-file parser and the command line know goes through the
// gate. Each option or flag is first run with a plain name in an empty folder to discover
// the files it writes; each such file is then planted with an ext4 signature and the same
// command must refuse, leaving it unchanged. A new output that bypasses the gate fails here.
// ---------------------------------------------------------------------------------------

/// Files and folders under `dir` (relative), except `keep`.
fn created(dir: &Path, keep: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(dir).unwrap().to_path_buf();
            if keep.iter().any(|k| relative == Path::new(k)) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(relative);
            }
        }
    }
    found.sort();
    found
}

/// Empties `dir` except `keep`.
fn clean(dir: &Path, keep: &[&str]) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name();
        if keep.iter().any(|k| Path::new(k) == Path::new(&name)) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
}

/// Runs `args` in `dir` to find what it writes, then plants each such file and checks the
/// command refuses it unchanged. Returns the files found.
fn prove_gated(dir: &Path, keep: &[&str], args: &[&str], what: &str) -> Vec<PathBuf> {
    clean(dir, keep);
    let limit = Duration::from_secs(60);
    let _ = iosched_in(dir, args, limit);
    let outputs = created(dir, keep);
    if !outputs.is_empty() {
        eprintln!("{what}: writes {outputs:?}");
    }
    for output in &outputs {
        clean(dir, keep);
        let planted = dir.join(output);
        plant(&planted);
        let out = iosched_in(dir, args, limit);
        assert_refused(&out, &format!("{what} writing {}", output.display()));
        assert_eq!(
            std::fs::read(&planted).unwrap(),
            ext4_bytes(),
            "{what}: {} was written",
            output.display()
        );
    }
    clean(dir, keep);
    outputs
}

/// Every option of the fio parser's table, as `OPTION=target` and bare, in a simulated read
/// job: whatever file it makes is refused when it carries a file system.
#[test]
fn every_job_file_output_goes_through_the_gate() {
    let scratch = Scratch::new("hw-walk-options");
    let keep = ["j.fio"];
    let mut writers = Vec::new();
    for name in iosched_workload::fio::option_names() {
        for line in [format!("{name}=target"), name.to_string()] {
            let job = format!("[j]\nrw=read\nbs=4k\nsize=64k\nruntime=1\n{line}\n");
            std::fs::write(scratch.0.join("j.fio"), job).unwrap();
            let found = prove_gated(&scratch.0, &keep, &["run", "j.fio"], &line);
            if !found.is_empty() {
                writers.push(name);
            }
        }
    }
    writers.dedup();
    // The walk found the outputs it must: a walk that finds nothing proves nothing.
    for known in [
        "write_iolog",
        "write_bw_log",
        "write_lat_log",
        "write_iops_log",
        "write_hist_log",
    ] {
        assert!(
            writers.contains(&known),
            "{known} wrote nothing: {writers:?}"
        );
    }
}

/// The value-taking flags of `iosched WORDS... --help` (option lines only, not the usage).
fn value_flags(words: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(words)
        .arg("--help")
        .output()
        .unwrap();
    let mut flags: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim_start)
        .filter(|line| line.starts_with('-'))
        .filter_map(|line| {
            let flag = line.split_whitespace().find(|w| w.starts_with("--"))?;
            let flag = flag.trim_end_matches(',');
            line.contains(&format!("{flag} <"))
                .then(|| flag.to_string())
        })
        .collect();
    flags.dedup();
    flags
}

/// The subcommands `iosched --help` lists.
fn subcommands() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .filter(|name| name != "help")
        .collect()
}

/// A base command line per subcommand, run from anywhere, over inputs made in `inputs`; and
/// the loop device the kernel's runs on, held for the walk.
type Bases<'a> = Vec<(Vec<&'a str>, Vec<String>)>;

fn bases(inputs: &Scratch, test: &str) -> (Bases<'static>, Option<Loop>) {
    let job = inputs.file(
        "r.fio",
        "[r]\nrw=read\nbs=4k\nsize=256k\nwrite_iolog=cap.log\n",
    );
    let out = run_in(
        &inputs.0,
        &["run", &job, "--output-format", "json", "--output", "a.json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let (a, cap) = (inputs.path("a.json"), inputs.path("cap.log"));
    inputs.file("s.fio", "[s]\nrw=read\nbs=64k\nsize=1m\n");
    let sweep = inputs.file(
        "sweep.toml",
        "title = \"t\"\njobs = [\"s.fio\"]\ndevices = [\"fixed\"]\nschedulers = [\"noop\"]\n",
    );
    let repo = env!("CARGO_MANIFEST_DIR");
    let conformance = format!("{repo}/../shared/conformance/cfq");
    let scenarios = format!("{repo}/scenarios");
    let quiet = inputs.file("q.fio", "[q]\nrw=read\nbs=4k\nsize=256k\n");
    let strings = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let mut bases: Bases = vec![
        (vec!["run"], vec![quiet.clone()]),
        (
            vec!["reproduce"],
            strings(&["--short", "000", "--scenarios", &scenarios]),
        ),
        (vec!["replay"], vec![cap]),
        (vec!["compare"], vec![a.clone(), a.clone()]),
        (vec!["plot"], strings(&[&a, "--out", "p"])),
        (vec!["sweep"], vec![sweep]),
        (vec!["manpage"], vec![]),
    ];
    if Path::new(&conformance).join("scenarios").is_dir() {
        let (scn, exp) = (
            format!("{conformance}/scenarios"),
            format!("{conformance}/expected"),
        );
        let args = [
            "--scenarios",
            &scn,
            "--expected",
            &exp,
            "--filter",
            "a-deep-n4-si0-t0",
        ];
        bases.push((vec!["conformance", "cfq"], strings(&args)));
    } else {
        skip(test, &format!("conformance cfq: {conformance} not found"));
    }
    let disk = (is_root() && fio3_available())
        .then(|| Loop::over_image(test, &inputs.path("disk.img"), 16 << 20))
        .flatten();
    match &disk {
        Some(lp) => bases.push((
            vec!["kernel"],
            strings(&[&quiet, "--device", &lp.0, "--scheduler", "none"]),
        )),
        None => skip(test, "kernel: needs root, fio 3 and a loop device"),
    }
    (bases, disk)
}

/// Every value-taking flag of every subcommand, given `target` (and for `--trace`,
/// `target.blktrace`, the binary trace's name), from a base command line that runs: whatever
/// file it makes is refused when it carries a file system. A subcommand with no base line
/// here fails the test until it gets one, or is listed as only printing.
#[test]
fn every_command_line_output_goes_through_the_gate() {
    const TEST: &str = "every_command_line_output_goes_through_the_gate";
    let scratch = Scratch::new("hw-walk-flags");
    let inputs = Scratch::new("hw-walk-inputs");
    let (bases, _disk) = bases(&inputs, TEST);
    let print_only = [
        "calibrate",
        "schedulers",
        "knobs",
        "devices",
        "list",
        "completions",
    ];
    // Said SKIPPED above when this machine cannot run them.
    let skipped = ["conformance", "kernel"];
    for subcommand in subcommands() {
        let of: Vec<_> = bases
            .iter()
            .filter(|(words, _)| words[0] == subcommand)
            .collect();
        if of.is_empty() {
            let known =
                print_only.contains(&subcommand.as_str()) || skipped.contains(&subcommand.as_str());
            assert!(
                known,
                "iosched {subcommand}: no base command line in this walk; add one"
            );
        }
        for (words, base) in of {
            for flag in value_flags(words) {
                walk_flag(&scratch.0, words, base, &flag);
            }
        }
    }
}

/// [`prove_gated`] for `iosched WORDS... BASE... FLAG target` (and `target.blktrace` for
/// `--trace`, whose binary form makes `NAME.blktrace.0`).
fn walk_flag(dir: &Path, words: &[&str], base: &[String], flag: &str) {
    let values: &[&str] = if flag == "--trace" {
        &["target", "target.blktrace"]
    } else {
        &["target"]
    };
    for &value in values {
        let mut args: Vec<&str> = words.to_vec();
        args.extend(base.iter().map(String::as_str));
        // A flag the base already gives (plot --out) takes the walk's value instead.
        if let Some(at) = args.iter().position(|a| *a == flag) {
            args.drain(at..at + 2);
        }
        args.extend([flag, value]);
        let what = format!("iosched {}", args.join(" "));
        prove_gated(dir, &[], &args, &what);
    }
}
