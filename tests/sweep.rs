//! `iosched sweep` end to end: the shipped seed-004 example reproduces `reproduce`'s rows,
//! `--out` writes the table and one chart, and a bad spec is refused with file:line.

mod common;

use common::{assert_input_error, iosched, stderr_of, Scratch};
use serde_json::Value;

/// JSON lines on stdout, one object per row.
fn json_lines(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", stderr_of(out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// `examples/group-idle.toml` is seed 004's sweep: for every group_idle value, the total and
/// each cgroup's MB/s equal what `iosched reproduce 004` prints for the same row (the same
/// RunSpec through the same run path, so to the last bit), and the chart is one line chart.
#[test]
fn the_group_idle_example_reproduces_seed_004s_sweep_rows() {
    let dir = Scratch::new("sweep-004");
    let out = dir.path("out");
    let sweep = iosched(&[
        "sweep",
        "examples/group-idle.toml",
        "--output-format",
        "json",
        "--out",
        &out,
    ]);
    let rows = json_lines(&sweep);
    let reproduce = iosched(&["reproduce", "004", "--output-format", "json"]);
    assert!(reproduce.status.success(), "{}", stderr_of(&reproduce));
    let doc: Value = serde_json::from_slice(&reproduce.stdout).unwrap();
    let seed_rows: Vec<&Value> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["table"] == "group-idle-sweep")
        // The BFQ rows beside the sweep (labels "bfq ...") are not group_idle values.
        .filter(|r| !r["label"].as_str().unwrap_or("").starts_with("bfq"))
        .collect();
    assert_eq!(seed_rows.len(), 11 * 5, "eleven values, five columns");
    let columns = [
        ("total", "total", "total"),
        ("top-app", "cgroup", "/top-app"),
        ("foreground", "cgroup", "/foreground"),
        ("normal", "cgroup", "/"),
        ("background", "cgroup", "/background"),
    ];
    for seed_row in seed_rows {
        let label = seed_row["label"].as_str().unwrap();
        let (value, column) = label.split_once(" [").unwrap();
        let column = column.trim_end_matches(']');
        let (_, kind, name) = columns.iter().find(|c| c.0 == column).unwrap();
        let group_idle: i64 = value.parse().unwrap();
        let ours = rows
            .iter()
            .find(|r| r["group_idle_us"] == group_idle && r["kind"] == *kind && r["name"] == *name)
            .unwrap_or_else(|| panic!("no sweep row for {label}"));
        assert_eq!(ours["device"], "ufs31");
        assert_eq!(ours["scheduler"], "cfq");
        assert_eq!(
            ours["bw_mb_s"].as_f64(),
            seed_row["value"].as_f64(),
            "{label}"
        );
        assert_eq!(seed_row["unit"], "MB/s");
    }
    for file in ["sweep.csv", "sweep.jsonl", "sweep.png", "sweep.svg"] {
        assert!(dir.0.join("out").join(file).is_file(), "{file} missing");
    }
    let svg = std::fs::read_to_string(dir.0.join("out/sweep.svg")).unwrap();
    for needle in [
        "group_idle_us (µs)",
        "throughput (MB/s)",
        "/top-app",
        "/background",
        "total",
    ] {
        assert!(
            svg.lines().any(|l| l.trim().starts_with(needle)),
            "the chart lacks {needle:?}"
        );
    }
    let csv = std::fs::read_to_string(dir.0.join("out/sweep.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        1 + rows.len(),
        "a header and the same rows"
    );
}

/// A spec with an unknown key is refused with the file and the line, before any run.
#[test]
fn a_bad_spec_names_file_and_line() {
    let dir = Scratch::new("sweep-bad");
    let spec = dir.file(
        "bad.toml",
        "jobs = ['j.fio']\nschedulers = ['cfq']\nschedulars = ['noop']\n",
    );
    let out = iosched(&["sweep", &spec]);
    assert_input_error(&out, &format!("{spec}:3:"));
    assert!(
        stderr_of(&out).contains("schedulars"),
        "{}",
        stderr_of(&out)
    );
}

/// On a terminal a sweep draws its runs done of the total with an ETA; `--eta never` draws
/// nothing. Run under `script` (util-linux), which gives the command a pseudo-terminal.
#[test]
fn a_sweep_on_a_terminal_shows_runs_done_of_total_with_eta() {
    if !common::tool_available("script") {
        return common::skip("sweep progress", "no `script` (util-linux) for a terminal");
    }
    let dir = Scratch::new("sweep-progress");
    let drawn = |extra: &str| {
        let command = format!(
            "{} sweep examples/group-idle.toml --output-format json > {} {extra}",
            env!("CARGO_BIN_EXE_iosched"),
            dir.path("rows.jsonl"),
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .output()
            .expect("script runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = drawn("");
    assert!(shown.contains("/11 simulations, "), "{shown:?}");
    assert!(shown.contains(" elapsed, ETA "), "{shown:?}");
    let hidden = drawn("--eta never");
    assert!(!hidden.contains("ETA"), "{hidden:?}");
}
