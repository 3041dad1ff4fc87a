//! `write_iolog=FILE` from both drivers: the simulator and the io_uring engine, given the
//! same job file and seed, issue the same I/O, clone by clone, in fio's iolog version 3
//! format (the format itself is checked against fio 3.33 by `tests/fio_differential.rs`).

mod common;

use std::path::Path;
use std::process::Command;

use common::{skip, target_scratch};

const JOBS: &str = "\
[global]
ioengine=psync
direct=1
write_iolog=issued.log
size=2m

[uniform]
rw=randread
bs=4k

[mixed]
rw=randrw
rwmixread=70
bssplit=4k/60:16k/40

[zipf]
rw=randwrite
bs=8k
random_distribution=zipf:1.1
number_ios=200

[clones]
rw=readwrite
bs=4k,32k
numjobs=2
offset_increment=1m
fsync=5
";

/// Runs `iosched run` in `dir` and returns the iolog's I/O lines without their timestamps.
fn issued(dir: &Path, device: &str) -> Result<Vec<String>, String> {
    std::fs::write(dir.join("jobs.fio"), JOBS).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .current_dir(dir)
        .args(["run", "jobs.fio", "--seed", "7", "--device", device])
        .args(["--output-format", "terse"])
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let log = std::fs::read_to_string(dir.join("issued.log")).unwrap();
    assert!(log.starts_with("fio version 3 iolog\n"), "{log}");
    Ok(log
        .lines()
        .filter(|line| line.split_whitespace().count() == 5)
        .map(|line| line.split_once(' ').unwrap().1.to_string())
        .collect())
}

#[test]
fn the_simulator_and_the_engine_issue_the_same_io() {
    let simulated =
        issued(&target_scratch("write-iolog-sim"), "nvme-gen4").expect("the simulator runs");
    let engine_dir = target_scratch("write-iolog-engine");
    let engine = match issued(&engine_dir, engine_dir.join("target.img").to_str().unwrap()) {
        Ok(lines) => lines,
        Err(why) if why.contains("O_DIRECT") || why.contains("io_uring") => {
            return skip(
                "the_simulator_and_the_engine_issue_the_same_io",
                &format!("the engine cannot run here: {why}"),
            );
        }
        Err(why) => panic!("the engine failed: {why}"),
    };
    // Five clones, each logged as one block in clone order, so the files compare line by line.
    assert!(simulated.len() > 1000, "{} I/Os", simulated.len());
    assert!(simulated.iter().any(|line| line.contains(" sync ")));
    assert!(simulated.iter().any(|line| line.ends_with(" 16384")));
    assert_eq!(simulated, engine);
}
