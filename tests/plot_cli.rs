//! `iosched plot` end to end: a simulated run's JSON in, charts out; bad input named.

use std::process::Command;

fn iosched() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iosched"))
}

/// A cgroup run through the simulator plots throughput, latency and shares, and a file that is
/// not a result is refused with its name and exit status 2, before anything is drawn.
#[test]
fn plots_a_simulated_cgroup_run_and_names_a_bad_file() {
    let dir = std::env::temp_dir().join(format!("iosched-plot-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let job = dir.join("two.fio");
    std::fs::write(
        &job,
        "[global]\nrw=randread\ndirect=1\nbs=4k\nsize=8m\nruntime=1\ntime_based\n\
         [heavy]\ncgroup=heavy\ncgroup_weight=1000\n[light]\ncgroup=light\ncgroup_weight=100\n",
    )
    .unwrap();
    let result = dir.join("cfq.json");
    let run = iosched()
        .args([
            "run",
            job.to_str().unwrap(),
            "--scheduler",
            "cfq",
            "--device",
            "hdd-7200",
        ])
        .args([
            "--output-format",
            "json",
            "--output",
            result.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(run.success());
    let out = dir.join("plots");
    let plot = iosched()
        .args([
            "plot",
            result.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        plot.status.success(),
        "{}",
        String::from_utf8_lossy(&plot.stderr)
    );
    for chart in ["throughput", "latency", "shares"] {
        assert!(
            out.join(format!("{chart}.png")).exists(),
            "{chart}.png missing"
        );
    }
    assert!(
        !out.join("writeback.png").exists(),
        "a direct run has no page cache"
    );

    let bogus = dir.join("bogus.json");
    std::fs::write(&bogus, "{\"not\": \"fio\"}").unwrap();
    let refused = iosched()
        .args(["plot", result.to_str().unwrap(), bogus.to_str().unwrap()])
        .args(["--out", dir.join("again").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("bogus.json") && stderr.contains("jobs"),
        "{stderr}"
    );
    assert!(
        !dir.join("again").exists(),
        "nothing drawn for a refused set"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
