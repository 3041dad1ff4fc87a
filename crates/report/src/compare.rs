//! `iosched compare`'s reading of fio JSON result files (the simulator's, the engine's,
//! `iosched kernel`'s or fio's own) into the figures it sets side by side, and the rows of
//! the table. Any text is accepted without a panic: a file that is not fio JSON is an error,
//! missing or mistyped fields read as zero (`fuzz/` runs this on arbitrary bytes).

use serde_json::Value;

use crate::mmtests::CompareRow;

const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// Reads one result file's text: fio may print notes before its JSON, so parsing starts at
/// the first `{`; the object must hold a `jobs` array.
pub fn read_run(text: &str) -> Result<RunFigures, String> {
    let start = text.find('{').unwrap_or(0);
    let json: Value =
        serde_json::from_str(&text[start..]).map_err(|e| format!("not fio JSON: {e}"))?;
    if !json["jobs"].is_array() {
        return Err("no \"jobs\" array: not fio JSON output".to_string());
    }
    Ok(figures(&json))
}

/// The figures of one job in one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobFigures {
    pub bw_kib: f64,
    /// Bytes per second (fio's `bw_bytes`), reads, writes and trims together.
    pub bw_bytes: f64,
    pub iops: f64,
    /// Completion latency of the busier direction; `None` where the file gives none (no
    /// I/O, or percentiles off).
    pub clat_mean_us: Option<f64>,
    pub clat_p50_us: Option<f64>,
    pub clat_p99_us: Option<f64>,
}

/// Everything compared from one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFigures {
    pub jobs: Vec<(String, JobFigures)>,
    /// (path, share, ideal share).
    pub cgroups: Vec<(String, f64, f64)>,
}

fn percentile_us(clat: &Value, key: &str) -> Option<f64> {
    clat["percentile"][key].as_f64().map(|ns| ns / 1000.0)
}

/// The figures of every job and cgroup in one parsed result.
pub fn figures(json: &Value) -> RunFigures {
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
            figures.bw_bytes += d["bw_bytes"].as_f64().unwrap_or(0.0);
            figures.iops += d["iops"].as_f64().unwrap_or(0.0);
            let ios = d["total_ios"].as_u64().unwrap_or(0);
            if ios > busiest.0 {
                busiest = (ios, &d["clat_ns"]);
            }
        }
        figures.clat_mean_us = busiest.1["mean"].as_f64().map(|ns| ns / 1000.0);
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

/// The rows of the table, in the baseline's job order then any job only later files have.
pub fn rows(runs: &[RunFigures]) -> Vec<CompareRow> {
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
        ("clat-p50-us", false, |f| f.clat_p50_us.unwrap_or(0.0)),
        ("clat-p99-us", false, |f| f.clat_p99_us.unwrap_or(0.0)),
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
