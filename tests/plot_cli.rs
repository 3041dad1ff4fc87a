//! `iosched plot` end to end: a simulated run's JSON in, charts out; bad input named.

mod common;

use common::{iosched, stderr_of, Scratch};

/// A cgroup run through the simulator plots throughput, latency and shares, and a file that is
/// not a result is refused with its name and exit status 2, before anything is drawn.
#[test]
fn plots_a_simulated_cgroup_run_and_names_a_bad_file() {
    let dir = Scratch::new("plot-cli");
    let job = dir.file(
        "two.fio",
        "[global]\nrw=randread\ndirect=1\nbs=4k\nsize=8m\nruntime=1\ntime_based\n\
         [heavy]\ncgroup=heavy\ncgroup_weight=1000\n[light]\ncgroup=light\ncgroup_weight=100\n",
    );
    let result = dir.path("cfq.json");
    let simulate = ["run", &job, "--scheduler", "cfq", "--device", "hdd-7200"];
    let run = iosched(
        &[
            &simulate[..],
            &["--output-format", "json", "--output", &result],
        ]
        .concat(),
    );
    assert!(run.status.success(), "{}", stderr_of(&run));
    let out = dir.0.join("plots");
    let plot = iosched(&["plot", &result, "--out", out.to_str().unwrap()]);
    assert!(plot.status.success(), "{}", stderr_of(&plot));
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

    let bogus = dir.file("bogus.json", "{\"not\": \"fio\"}");
    let again = dir.path("again");
    let refused = iosched(&["plot", &result, &bogus, "--out", &again]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = stderr_of(&refused);
    assert!(
        stderr.contains("bogus.json") && stderr.contains("jobs"),
        "{stderr}"
    );
    assert!(
        !dir.0.join("again").exists(),
        "nothing drawn for a refused set"
    );
}
