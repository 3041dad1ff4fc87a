//! One scheduler vocabulary across `run` and `kernel`: each accepts the other's names for the
//! same policy, and refuses the other's own schedulers with a pointer to the right command.

mod common;

use common::{iosched, Scratch};

/// A one-job file in `scratch`.
fn job(scratch: &Scratch) -> String {
    scratch.file("r.fio", "[r]\nrw=read\ndirect=1\nbs=64k\nsize=1m\n")
}

#[test]
fn run_takes_the_kernels_names() {
    let scratch = Scratch::new("run-names");
    let job = &job(&scratch);
    for alias in ["none", "mq-deadline", "deadline", "kyber", "bfq"] {
        let out = iosched(&["run", job, "--scheduler", alias, "--output-format", "terse"]);
        assert!(
            out.status.success(),
            "{alias}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_file(job).unwrap();
}

/// The scheduler is checked before the device, so these need no root or device.
#[test]
fn kernel_takes_run_names_and_points_cfq_to_run() {
    let scratch = Scratch::new("kernel-names");
    let job = &job(&scratch);
    let missing = "/dev/iosched-no-such-device";
    let out = iosched(&[
        "kernel",
        job,
        "--scheduler",
        "deadline",
        "--device",
        missing,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("--scheduler"),
        "deadline is an alias: {stderr}"
    );
    assert!(stderr.contains(missing), "{stderr}");
    let out = iosched(&["kernel", job, "--scheduler", "cfq", "--device", missing]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("iosched run"));
    std::fs::remove_file(job).unwrap();
}

/// `iosched schedulers` names each scheduler's aliases, and every alias it names runs; the
/// kernel's own schedulers are named with the command that runs them.
#[test]
fn schedulers_lists_the_aliases_run_accepts() {
    let out = iosched(&["schedulers"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut aliases = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with(' ')) {
        if let Some((_, rest)) = line.split_once(" (alias ") {
            aliases.push(rest.split(')').next().unwrap().to_string());
        }
    }
    assert_eq!(aliases, ["none", "deadline"], "{text}");
    let scratch = Scratch::new("listed-names");
    let job = &job(&scratch);
    for alias in &aliases {
        let out = iosched(&["run", job, "--scheduler", alias, "--output-format", "terse"]);
        assert!(out.status.success(), "{alias}");
    }
    let kernel_line = text
        .lines()
        .find(|l| l.starts_with("The kernel's own"))
        .unwrap_or_else(|| panic!("no line for the kernel's schedulers in {text}"));
    assert!(kernel_line.contains("iosched kernel"), "{kernel_line}");
    std::fs::remove_file(job).unwrap();
}

/// mq-deadline is listed under its kernel name with `deadline` as the alias, and kyber is
/// listed as iosched's own with its two tunables and the kernel's defaults (2 ms reads,
/// 10 ms writes: kyber_latency_targets[] of block/kyber-iosched.c).
#[test]
fn schedulers_lists_mq_deadline_and_kyber_with_its_targets() {
    let out = iosched(&["schedulers"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("\nmq-deadline (alias deadline): "), "{text}");
    let kyber = text
        .split("\n\n")
        .find(|block| block.starts_with("kyber: "))
        .unwrap_or_else(|| panic!("no kyber entry in {text}"));
    let row = |name: &str| {
        kyber
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>())
    };
    assert_eq!(
        row("read_lat_nsec"),
        Some(vec!["read_lat_nsec", "2000000", "ns"])
    );
    assert_eq!(
        row("write_lat_nsec"),
        Some(vec!["write_lat_nsec", "10000000", "ns"])
    );
}
