//! Hostile input and unkind machines (issue 17): each test here failed before its fix. A read
//! job must never write where it was not asked to, a job file must not exhaust the machine,
//! and every refusal is one clear message with a non-zero exit, never a panic.
//!
//! Tests that need root, loop devices or a tool this machine lacks print `SKIPPED: ...`.

mod common;

use std::process::Command;

use common::{
    assert_input_error, iosched, is_root, len_of, skip, stderr_of, tool_available, Loop, Mount,
    Scratch,
};

/// A sequential read job of `size` from `offset`.
fn read_job(scratch: &Scratch, size: &str, offset: &str) -> String {
    scratch.file(
        "r.fio",
        &format!(
            "[r]\nrw=read\nbs=64k\nsize={size}\noffset={offset}\ndirect=1\nioengine=io_uring\n"
        ),
    )
}

/// Issue 17, 1: `rw=read size=100g` on an 8 MB file grew it until the file system was full.
/// On a 16 MB tmpfs the growth is refused up front and the file keeps its 8 MB.
#[test]
fn a_read_job_larger_than_free_space_is_refused_up_front() {
    const TEST: &str = "a_read_job_larger_than_free_space_is_refused_up_front";
    if !is_root() {
        return skip(TEST, "mounting a small tmpfs needs root");
    }
    let scratch = Scratch::new("hostile-nospace");
    let point = scratch.path("mnt");
    std::fs::create_dir(&point).unwrap();
    let Some(_mount) = Mount::new(&["-t", "tmpfs", "-o", "size=16m", "tmpfs"], &point) else {
        return skip(TEST, "mount -t tmpfs failed");
    };
    let image = format!("{point}/small.img");
    std::fs::write(&image, vec![7u8; 8 << 20]).unwrap();
    let job = read_job(&scratch, "100g", "0");
    // O_DIRECT on tmpfs is refused by older kernels; the check comes before the open either way.
    // Without --force growing a file that holds data is refused before (issue 28).
    let out = iosched(&["run", &job, "--device", &image, "--force"]);
    assert_input_error(&out, "file system has");
    assert_eq!(len_of(&image), 8 << 20, "the file was not grown");
}

/// Issue 17, 1: `offset=2000g` on a small file is refused before a byte is written, with a
/// message naming the growth; the file is untouched.
#[test]
fn a_huge_offset_does_not_grow_the_file() {
    let scratch = Scratch::new("hostile-offset");
    let image = scratch.data_file("small.img", 1 << 20);
    let job = read_job(&scratch, "1m", "2000g");
    let out = iosched(&["run", &job, "--device", &image]);
    // Issue 28: a file holding data is not grown for reading jobs without --force (with it,
    // only the 1 MiB region is written, the rest left a hole).
    assert_input_error(&out, "it holds 1048576 bytes of data");
    assert_eq!(len_of(&image), 1 << 20);
}

/// Issue 17, 1: when laying out fails half-way (here: a file-size limit, EFBIG), the file is
/// truncated back to its old length, and a file the run created is removed.
#[test]
fn a_failed_layout_is_undone() {
    const TEST: &str = "a_failed_layout_is_undone";
    if !tool_available("bash") {
        return skip(TEST, "bash is needed for ulimit -f");
    }
    let scratch = Scratch::new("hostile-undo");
    let image = scratch.data_file("short.img", 1 << 20);
    let job = read_job(&scratch, "8m", "0");
    let limited = |target: &str| {
        Command::new("bash")
            .args([
                "-c",
                "ulimit -f 4096; trap '' XFSZ; exec \"$0\" run \"$1\" --device \"$2\" --force",
                env!("CARGO_BIN_EXE_iosched"),
                &job,
                target,
            ])
            .output()
            .unwrap()
    };
    let out = limited(&image);
    assert_ne!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("cannot lay out"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(len_of(&image), 1 << 20, "truncated back");
    let fresh = scratch.path("fresh.img");
    let out = limited(&fresh);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        !std::path::Path::new(&fresh).exists(),
        "created file removed"
    );
}

/// Issue 17, 1: a read job that needs a disk image grown (layout data appended) is refused
/// like a write job, unless `--force`.
#[test]
fn a_read_job_does_not_grow_a_disk_image() {
    const TEST: &str = "a_read_job_does_not_grow_a_disk_image";
    if !tool_available("mkfs.ext4") {
        return skip(TEST, "mkfs.ext4 missing");
    }
    let scratch = Scratch::new("hostile-image");
    let image = scratch.path("ext4.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F", &image])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr_of(&made));
    let job = read_job(&scratch, "16m", "0");
    let out = iosched(&["run", &job, "--device", &image]);
    assert_input_error(&out, "ext2/3/4");
    assert!(stderr_of(&out).contains("reading jobs need it grown"));
    assert_eq!(len_of(&image), 8 << 20);
    // Reading within the image is fine.
    let inside = read_job(&scratch, "4m", "0");
    let out = iosched(&["run", &inside, "--device", &image]);
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// Issue 17, 1: the same for a file backing a live loop device.
#[test]
fn a_read_job_does_not_grow_a_loop_backing_file() {
    const TEST: &str = "a_read_job_does_not_grow_a_loop_backing_file";
    if !is_root() {
        return skip(TEST, "loop devices need root");
    }
    let scratch = Scratch::new("hostile-loopgrow");
    let image = scratch.data_file("backing.img", 8 << 20);
    let Some(lp) = Loop::attach(&image) else {
        return skip(TEST, "losetup failed");
    };
    let job = read_job(&scratch, "16m", "0");
    let out = iosched(&["run", &job, "--device", &image]);
    assert_input_error(&out, &format!("it backs {}", lp.0));
    assert_eq!(len_of(&image), 8 << 20);
}

/// Issue 17, 2: a loop device that backs another loop device is written only with `--force`.
#[test]
fn a_loop_device_backing_another_is_protected() {
    const TEST: &str = "a_loop_device_backing_another_is_protected";
    if !is_root() {
        return skip(TEST, "loop devices need root");
    }
    let scratch = Scratch::new("hostile-looploop");
    let image = scratch.path("backing.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let Some(lower) = Loop::attach(&image) else {
        return skip(TEST, "losetup failed");
    };
    let Some(upper) = Loop::attach(&lower.0) else {
        return skip(TEST, "losetup over a loop device failed");
    };
    let job = scratch.file("w.fio", "[w]\nrw=write\nbs=64k\nsize=1m\ndirect=1\n");
    let out = iosched(&["run", &job, "--device", &lower.0]);
    assert_input_error(&out, &format!("it backs {}", upper.0));
    assert!(stderr_of(&out).contains("--force"));
    drop(upper);
}

/// Issue 17, 3: reading a mounted device works (no `O_EXCL`, which the kernel refuses with
/// EBUSY while a file system holds the device); writing it stays refused.
#[test]
fn a_mounted_device_can_be_read() {
    const TEST: &str = "a_mounted_device_can_be_read";
    if !is_root() || !tool_available("mkfs.ext4") {
        return skip(TEST, "needs root and mkfs.ext4");
    }
    let scratch = Scratch::new("hostile-mounted");
    let image = scratch.path("ext4.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    Command::new("mkfs.ext4")
        .args(["-q", "-F", &image])
        .output()
        .unwrap();
    let Some(lp) = Loop::attach(&image) else {
        return skip(TEST, "losetup failed");
    };
    let point = scratch.path("mnt");
    std::fs::create_dir(&point).unwrap();
    let Some(mount) = Mount::new(&[&lp.0], &point) else {
        return skip(TEST, "mount of the loop device failed");
    };
    let job = read_job(&scratch, "4m", "0");
    let out = iosched(&["run", &job, "--device", &lp.0]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let write = scratch.file("w.fio", "[w]\nrw=write\nbs=64k\nsize=1m\ndirect=1\n");
    let out = iosched(&["run", &write, "--device", &lp.0]);
    assert_input_error(&out, "mounted on");
    drop(mount);
}

/// Issue 17, 3: a character device, FIFO or directory is not a target; the message does not
/// tell a reading run, or one given `--force`, to pass `--force`.
#[test]
fn a_non_block_target_is_named_without_suggesting_force() {
    let scratch = Scratch::new("hostile-kinds");
    let job = read_job(&scratch, "1m", "0");
    let fifo = scratch.path("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut targets = vec![("/dev/null".to_string(), "character device")];
    targets.push((scratch.0.to_string_lossy().into_owned(), "directory"));
    if made.is_ok_and(|status| status.success()) {
        targets.push((fifo, "FIFO"));
    }
    for (target, kind) in &targets {
        for extra in [&[][..], &["--force"][..]] {
            let args = [&["run", &job, "--device", target][..], extra].concat();
            let out = iosched(&args);
            assert_input_error(&out, kind);
            assert!(!stderr_of(&out).contains("--force"), "{}", stderr_of(&out));
        }
    }
}

/// Issue 17, 4: `include /dev/zero` read until memory ran out and `/dev/urandom` hung; a
/// device or FIFO is not a file to include, at the include's `file:line`.
#[test]
fn including_a_device_is_refused_at_its_line() {
    let scratch = Scratch::new("hostile-incdev");
    for device in ["/dev/zero", "/dev/urandom"] {
        let job = scratch.file(
            "j.fio",
            &format!("[j]\nrw=read\nsize=1m\ninclude {device}\n"),
        );
        let out = iosched(&["run", &job]);
        assert_input_error(
            &out,
            &format!("{job}:4: cannot include '{device}': a character device, not a regular file"),
        );
    }
}

/// Issue 17, 4: a job file (or an include) larger than a job file can be is refused, not
/// read into memory whole.
#[test]
fn an_oversized_job_file_is_refused() {
    let scratch = Scratch::new("hostile-big");
    let mut text = String::from("[j]\nrw=read\nsize=1m\n");
    while text.len() <= (4 << 20) {
        text.push_str("; padding padding padding padding padding padding padding padding\n");
    }
    let job = scratch.file("big.fio", &text);
    assert_input_error(&iosched(&["run", &job]), "larger than 4 MiB");
}

/// Issue 17, 4: an include bomb under the depth limit (ten includes of ten includes ... of
/// ten lines: 10^7 lines) stops at the line budget, at once and naming where.
#[test]
fn an_include_bomb_stops_at_the_line_budget() {
    let scratch = Scratch::new("hostile-bomb");
    scratch.file("level0.fio", &"iodepth=1\n".repeat(10));
    for level in 1..7 {
        let text = format!("include level{}.fio\n", level - 1).repeat(10);
        scratch.file(&format!("level{level}.fio"), &text);
    }
    let job = scratch.file("main.fio", "[j]\nrw=read\nsize=1m\ninclude level6.fio\n");
    let started = std::time::Instant::now();
    let out = iosched(&["run", &job]);
    assert_input_error(&out, "more than 200000 lines");
    assert!(
        stderr_of(&out).contains("level0.fio:"),
        "{}",
        stderr_of(&out)
    );
    // Not a speed assertion: only that the budget, not memory, ended it (10^7 lines took
    // minutes before).
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// Issue 17, 4: `numjobs=100000` aborted with exit 134 after allocating ~0.8 MB per clone;
/// far more clones than the machine's memory holds are refused at the numjobs line.
#[test]
fn numjobs_beyond_memory_is_refused_at_its_line() {
    let scratch = Scratch::new("hostile-numjobs");
    let job = scratch.file("n.fio", "[j]\nrw=read\nsize=1m\n\nnumjobs=100000000\n");
    let out = iosched(&["run", &job]);
    assert_input_error(&out, &format!("{job}:5: numjobs: 100000000 job clones"));
    assert!(stderr_of(&out).contains("MiB of memory available"));
}

/// Issue 17, 6: a full disk behind standard output (`> /dev/full`) is an error with a message
/// and exit status 1 in every subcommand that prints, never a panic (101) from `print!`
/// (`reproduce` still panicked so).
#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let scratch = Scratch::new("dev-full");
    let job = scratch.file("a.fio", "[a]\nsize=64k\nrw=read\n");
    let run_json = scratch.path("run.json");
    assert!(iosched(&[
        "run",
        &job,
        "--output-format",
        "json",
        "--output",
        &run_json
    ])
    .status
    .success());
    let commands: [&[&str]; 7] = [
        &["schedulers"],
        &["devices"],
        &["knobs"],
        &["run", &job],
        &["compare", &run_json, &run_json],
        &["calibrate", "fixed"],
        &["reproduce", "--short", "000"],
    ];
    for args in commands {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_iosched"))
            .args(args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Issue 17, 6: a reader that went away (`iosched schedulers | head -c1`) ends the output
/// quietly, as for any Unix filter: exit status 0, nothing on stderr, never a panic (101).
/// The pipe's read end is closed before the command starts, so every write meets EPIPE.
#[test]
fn a_closed_pipe_on_standard_output_ends_quietly() {
    let scratch = Scratch::new("closed-pipe");
    let job = scratch.file("a.fio", "[a]\nsize=64k\nrw=read\n");
    let run_json = scratch.path("run.json");
    let saved = iosched(&[
        "run",
        &job,
        "--output-format",
        "json",
        "--output",
        &run_json,
    ]);
    assert!(saved.status.success(), "{}", stderr_of(&saved));
    let commands: [&[&str]; 7] = [
        &["schedulers"],
        &["devices"],
        &["knobs"],
        &["run", &job],
        &["compare", &run_json, &run_json],
        &["calibrate", "fixed"],
        &["reproduce", "--short", "000"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = stderr_of(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

/// Issue 17, 4: the text `--trace` of a 600 s run was 11.5 GB, with no cap and no warning.
/// The expected size (the jobs' I/O count times the bytes a trace takes per I/O) is said on
/// stderr at the start, and a run whose estimate is over `--trace-limit` is refused before
/// anything is written, naming the flag. (Issue 28: only when the trace is sure to pass the
/// limit: direct I/O, each queueing a bio.)
#[test]
fn a_trace_estimated_over_its_limit_is_refused_up_front() {
    let scratch = Scratch::new("hostile-trace-size");
    // 4 clones of 16384 direct reads of 4 KiB: 65536 I/Os, at least 3 MiB of text.
    let job = scratch.file(
        "t.fio",
        "[j]\nrw=read\nbs=4k\nsize=64m\nnumjobs=4\ndirect=1\n",
    );
    let trace = scratch.path("t.txt");
    let out = iosched(&["run", &job, "--trace", &trace, "--trace-limit", "1m"]);
    assert_input_error(&out, "over --trace-limit (1048576 bytes)");
    assert!(
        stderr_of(&out).contains("65536 I/Os"),
        "{}",
        stderr_of(&out)
    );
    assert!(!std::path::Path::new(&trace).exists(), "nothing written");
    let out = iosched(&["run", &job, "--trace", &trace, "--output-format", "json"]);
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("--trace {trace}: about ")) && stderr.contains("estimated"),
        "{stderr}"
    );
    let written = len_of(&trace);
    assert!(written > 0, "the trace was written");
}

/// Issue 14: `fill_device=1` (fio: write until ENOSPC; checked with fio 3.33 on a file in a
/// 16 MiB tmpfs, which it filled) was silently ignored. It is refused at its line with the
/// reason; `fill_device=0`, fio's default, is accepted.
#[test]
fn fill_device_is_refused_at_its_line_not_ignored() {
    let scratch = Scratch::new("hostile-fill-device");
    let job = scratch.file("f.fio", "[j]\nrw=write\nsize=1m\nfill_device=1\n");
    let out = iosched(&["run", &job]);
    assert_input_error(
        &out,
        &format!("{job}:4: bad value '1' for option 'fill_device'"),
    );
    assert!(stderr_of(&out).contains("ENOSPC"));
    let off = scratch.file("g.fio", "[j]\nrw=write\nsize=1m\nfill_fs=0\n");
    assert!(iosched(&["run", &off]).status.success());
}
