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

/// `compare` beside its table: `--plot DIR` draws the runs' charts, `--output-format json`
/// gives the rows as data with a job one run lacks as null (n/a in the table, with the
/// legend under it), and ideal shares only for cfq.
#[test]
fn compare_plots_and_writes_data_with_n_a_for_a_missing_job() {
    let dir = Scratch::new("compare-cli");
    let two = "[global]\nrw=randread\ndirect=1\nbs=4k\nsize=8m\nruntime=1\ntime_based\n\
               [heavy]\ncgroup=heavy\ncgroup_weight=1000\n[light]\ncgroup=light\ncgroup_weight=100\n";
    let a = dir.file("a.fio", two);
    let b = dir.file("b.fio", &format!("{two}[extra]\nrw=read\nsize=1m\n"));
    let mut results = Vec::new();
    for (job, scheduler) in [(&a, "noop"), (&b, "cfq")] {
        let out = dir.path(&format!("{scheduler}.json"));
        let run = iosched(&[
            "run",
            job,
            "--scheduler",
            scheduler,
            "--device",
            "hdd-7200",
            "--output-format",
            "json",
            "--output",
            &out,
        ]);
        assert!(run.status.success(), "{}", stderr_of(&run));
        results.push(out);
    }
    let plots = dir.path("plots");
    let table = iosched(&["compare", &results[0], &results[1], "--plot", &plots]);
    assert!(table.status.success(), "{}", stderr_of(&table));
    let text = String::from_utf8_lossy(&table.stdout);
    let extra = text
        .lines()
        .find(|l| l.starts_with("IOPS") && l.contains("extra"))
        .unwrap();
    assert!(extra.contains("n/a (    n/a)"), "{extra}");
    assert!(!text.contains("(100.00%)") && text.contains("n/a: the run has no such figure"));
    for chart in ["throughput", "latency", "shares"] {
        assert!(
            dir.0.join("plots").join(format!("{chart}.svg")).is_file(),
            "{chart}"
        );
    }
    let json = iosched(&[
        "compare",
        &results[0],
        &results[1],
        "--output-format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let row = |stat: &str, op: &str| {
        doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["stat"] == stat && r["op"] == op)
            .cloned()
            .unwrap()
    };
    assert_eq!(row("IOPS", "extra")["values"][0], serde_json::Value::Null);
    assert_eq!(
        row("Ideal-%", "/heavy")["values"][0],
        serde_json::Value::Null,
        "noop"
    );
    assert!(row("Ideal-%", "/heavy")["values"][1].as_f64().unwrap() > 40.0);
}
