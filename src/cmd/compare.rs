//! `iosched compare A.json B.json ...`: results of several runs side by side in one
//! mmtests-style table, the first file as the baseline.
//!
//! Any fio JSON works (the simulator's, the engine's, `iosched kernel`'s or fio's own). Per
//! job: bandwidth and IOPS (reads plus writes plus trims), and the completion-latency median
//! and 99th percentile of its busier direction; per cgroup, when the `iosched` object has
//! them, the share of bytes beside the share its weight entitles it to; and the totals. Jobs
//! are matched by name (a repeated name by its occurrence: `name#2`).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::Args;
use iosched_report::mmtests::{compare_table, CompareRow};
use serde_json::Value;

use super::{CmdResult, Failure};

const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Result files in fio JSON (`--output-format json`); the first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "RESULT.json")]
    files: Vec<PathBuf>,
    /// Column titles, comma-separated (default: the file names without `.json`).
    #[arg(long, value_delimiter = ',')]
    titles: Vec<String>,
}

/// The figures of one job in one file.
#[derive(Clone, Debug, Default, PartialEq)]
struct JobFigures {
    bw_kib: f64,
    iops: f64,
    clat_p50_us: f64,
    clat_p99_us: f64,
}

/// Everything compared from one file.
#[derive(Clone, Debug, Default, PartialEq)]
struct RunFigures {
    jobs: Vec<(String, JobFigures)>,
    /// (path, share, ideal share).
    cgroups: Vec<(String, f64, f64)>,
}

fn percentile_us(clat: &Value, key: &str) -> f64 {
    clat["percentile"][key].as_f64().unwrap_or(0.0) / 1000.0
}

fn figures(json: &Value) -> RunFigures {
    let mut run = RunFigures::default();
    for job in json["jobs"].as_array().into_iter().flatten() {
        let base = job["jobname"].as_str().unwrap_or("?").to_string();
        let seen = run
            .jobs
            .iter()
            .filter(|(n, _)| n.split('#').next() == Some(&base))
            .count();
        let name = if seen == 0 {
            base
        } else {
            format!("{base}#{}", seen + 1)
        };
        let mut figures = JobFigures::default();
        let mut busiest = (0u64, &Value::Null);
        for dir in DIRECTIONS {
            let d = &job[dir];
            figures.bw_kib += d["bw"].as_f64().unwrap_or(0.0);
            figures.iops += d["iops"].as_f64().unwrap_or(0.0);
            let ios = d["total_ios"].as_u64().unwrap_or(0);
            if ios > busiest.0 {
                busiest = (ios, &d["clat_ns"]);
            }
        }
        figures.clat_p50_us = percentile_us(busiest.1, "50.000000");
        figures.clat_p99_us = percentile_us(busiest.1, "99.000000");
        run.jobs.push((name, figures));
    }
    for group in json["iosched"]["cgroups"].as_array().into_iter().flatten() {
        run.cgroups.push((
            group["path"].as_str().unwrap_or("?").to_string(),
            group["share"].as_f64().unwrap_or(0.0),
            group["ideal_share"].as_f64().unwrap_or(0.0),
        ));
    }
    run
}

fn title_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".json").to_string())
        .unwrap_or_default()
}

/// The rows of the table, in the baseline's job order then any job only later files have.
fn rows(runs: &[RunFigures]) -> Vec<CompareRow> {
    let mut names: Vec<String> = Vec::new();
    for run in runs {
        for (name, _) in &run.jobs {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let mut out = Vec::new();
    let row = |stat: &str, op: &str, higher: bool, values: Vec<f64>| CompareRow {
        stat: stat.to_string(),
        op: op.to_string(),
        higher_is_better: higher,
        values,
    };
    type Pick = fn(&JobFigures) -> f64;
    let metrics: [(&str, bool, Pick); 4] = [
        ("BW-KiB/s", true, |f| f.bw_kib),
        ("IOPS", true, |f| f.iops),
        ("clat-p50-us", false, |f| f.clat_p50_us),
        ("clat-p99-us", false, |f| f.clat_p99_us),
    ];
    for (stat, higher, pick) in metrics {
        for name in &names {
            let values = runs
                .iter()
                .map(|run| {
                    run.jobs
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or(0.0, |(_, f)| pick(f))
                })
                .collect();
            out.push(row(stat, name, higher, values));
        }
    }
    let mut groups: Vec<String> = Vec::new();
    for run in runs {
        for (path, _, _) in &run.cgroups {
            if !groups.contains(path) {
                groups.push(path.clone());
            }
        }
    }
    for path in &groups {
        let share = |run: &RunFigures, ideal: bool| {
            run.cgroups
                .iter()
                .find(|(p, _, _)| p == path)
                .map_or(0.0, |&(_, s, i)| if ideal { i } else { s })
        };
        out.push(row(
            "Share-%",
            path,
            true,
            runs.iter().map(|r| 100.0 * share(r, false)).collect(),
        ));
        out.push(row(
            "Ideal-%",
            path,
            true,
            runs.iter().map(|r| 100.0 * share(r, true)).collect(),
        ));
    }
    out.push(row(
        "BW-KiB/s",
        "total",
        true,
        runs.iter()
            .map(|r| r.jobs.iter().map(|(_, f)| f.bw_kib).sum())
            .collect(),
    ));
    out.push(row(
        "IOPS",
        "total",
        true,
        runs.iter()
            .map(|r| r.jobs.iter().map(|(_, f)| f.iops).sum())
            .collect(),
    ));
    out
}

pub fn compare(args: CompareArgs) -> CmdResult {
    let mut runs = Vec::new();
    for path in &args.files {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}", path.display()))
            .map_err(Failure::input)?;
        let start = text.find('{').unwrap_or(0);
        let json: Value = serde_json::from_str(&text[start..])
            .with_context(|| format!("{}: not fio JSON", path.display()))
            .map_err(Failure::input)?;
        if !json["jobs"].is_array() {
            return Err(Failure::input(anyhow!(
                "{}: no \"jobs\" array: not fio JSON output",
                path.display()
            )));
        }
        runs.push(figures(&json));
    }
    let titles: Vec<String> = if args.titles.is_empty() {
        args.files.iter().map(|p| title_of(p)).collect()
    } else if args.titles.len() == args.files.len() {
        args.titles.clone()
    } else {
        return Err(Failure::input(anyhow!(
            "--titles has {} names for {} files",
            args.titles.len(),
            args.files.len()
        )));
    };
    print!("{}", compare_table(&titles, &rows(&runs)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(bw: f64, p99: f64, share: f64) -> Value {
        json!({
            "jobs": [
                {"jobname": "a", "read": {"bw": bw, "iops": bw / 4.0, "total_ios": 10,
                    "clat_ns": {"percentile": {"50.000000": 1000, "99.000000": p99}}},
                 "write": {"bw": 0, "iops": 0, "total_ios": 0}},
                {"jobname": "a", "read": {"bw": 1.0, "iops": 1.0, "total_ios": 1}},
            ],
            "iosched": {"cgroups": [{"path": "/a", "share": share, "ideal_share": 0.8}]}
        })
    }

    #[test]
    fn repeated_names_are_numbered_and_rows_cover_jobs_groups_and_totals() {
        let runs = [
            figures(&result(400.0, 2000.0, 0.5)),
            figures(&result(800.0, 1000.0, 0.75)),
        ];
        assert_eq!(runs[0].jobs[1].0, "a#2");
        let rows = rows(&runs);
        let bw = rows
            .iter()
            .find(|r| r.stat == "BW-KiB/s" && r.op == "a")
            .unwrap();
        assert_eq!(bw.values, [400.0, 800.0]);
        let p99 = rows
            .iter()
            .find(|r| r.stat == "clat-p99-us" && r.op == "a")
            .unwrap();
        assert_eq!(p99.values, [2.0, 1.0]);
        assert!(!p99.higher_is_better);
        let share = rows.iter().find(|r| r.stat == "Share-%").unwrap();
        assert_eq!(share.values, [50.0, 75.0]);
        let total = rows
            .iter()
            .find(|r| r.op == "total" && r.stat == "IOPS")
            .unwrap();
        assert_eq!(total.values, [101.0, 201.0]);
    }
}
