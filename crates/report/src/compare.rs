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
    crate::result_check::check_result(&json)?;
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
    /// The `iosched` object's scheduler (`cfq`, `bfq`, `none`...), if the file names one.
    pub scheduler: Option<String>,
}

impl RunFigures {
    /// Whether the run's scheduler shares by weight, so that an ideal share means something:
    /// CFQ and BFQ do; noop, deadline, kyber and none do not look at weights.
    pub fn aims_for_weights(&self) -> bool {
        self.scheduler
            .as_deref()
            .is_some_and(crate::shares::aims_for_weights)
    }

    /// Whether any job ran in a cgroup of its own (not only the root).
    pub fn has_cgroups(&self) -> bool {
        self.cgroups.iter().any(|(path, _, _)| path != "/")
    }
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
    run.scheduler = json["iosched"]["scheduler"].as_str().map(str::to_string);
    for group in json["iosched"]["cgroups"].as_array().into_iter().flatten() {
        run.cgroups.push((
            group["path"].as_str().unwrap_or("?").to_string(),
            group["share"].as_f64().unwrap_or(0.0),
            group["ideal_share"].as_f64().unwrap_or(0.0),
        ));
    }
    run
}

/// What the signs and n/a of the table mean, printed under it.
pub const LEGEND: &str = "\
(%): change against the first column, positive is better: more bandwidth, IOPS or share,
     less latency (a clat-* that fell shows as +).
n/a: the run has no such figure (a job it did not run, an ideal share for a scheduler
     that ignores weights).
";

/// A figure in CSV or JSON: the number, or nothing where it is n/a.
fn present(value: f64) -> Option<f64> {
    (!value.is_nan()).then_some(value)
}

/// The change of `value` against the row's baseline in percent (positive is better), when
/// both exist.
fn change(row: &CompareRow, value: f64) -> Option<f64> {
    let base = present(*row.values.first()?)?;
    present(value).map(|v| crate::mmtests::percent_change(base, v, row.higher_is_better))
}

/// The table as tidy CSV: `stat,op,run,value,change_pct`, a line per row and run; n/a is
/// an empty field.
pub fn csv(titles: &[String], rows: &[CompareRow]) -> String {
    let field = |text: &str| {
        if text.contains([',', '"', '\n']) {
            format!("\"{}\"", text.replace('"', "\"\""))
        } else {
            text.to_string()
        }
    };
    let number = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_default();
    let mut out = String::from("stat,op,run,value,change_pct\n");
    for row in rows {
        for (title, &value) in titles.iter().zip(&row.values) {
            out.push_str(&format!(
                "{},{},{},{},{}\n",
                field(&row.stat),
                field(&row.op),
                field(title),
                number(present(value)),
                number(change(row, value))
            ));
        }
    }
    out
}

/// The table as JSON: `{"runs": [...], "rows": [{stat, op, higher_is_better, values,
/// change_pct}]}`, `null` for n/a.
pub fn json(titles: &[String], rows: &[CompareRow]) -> Value {
    let rows: Vec<Value> = rows
        .iter()
        .map(|row| {
            serde_json::json!({
                "stat": row.stat,
                "op": row.op,
                "higher_is_better": row.higher_is_better,
                "values": row.values.iter().map(|&v| present(v)).collect::<Vec<_>>(),
                "change_pct": row.values.iter().map(|&v| change(row, v)).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "runs": titles, "rows": rows })
}

/// The rows of the table, in the baseline's job order then any job only later files have.
/// A figure a run does not have (a job missing from it, a latency it did not report, an
/// ideal share for a scheduler that ignores weights) is NaN, which the table prints as n/a.
/// Share rows appear only when some run has cgroups, ideal rows only when some run's
/// scheduler aims at weights.
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
    type Pick = fn(&JobFigures) -> Option<f64>;
    let metrics: [(&str, bool, Pick); 4] = [
        ("BW-KiB/s", true, |f| Some(f.bw_kib)),
        ("IOPS", true, |f| Some(f.iops)),
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
                        .and_then(|(_, f)| pick(f))
                        .unwrap_or(f64::NAN)
                })
                .collect();
            out.push(row(stat, name, higher, values));
        }
    }
    out.extend(share_rows(runs));
    type Total = fn(&JobFigures) -> f64;
    let totals: [(&str, Total); 2] = [("BW-KiB/s", |f| f.bw_kib), ("IOPS", |f| f.iops)];
    for (stat, pick) in totals {
        out.push(row(
            stat,
            "total",
            true,
            runs.iter()
                .map(|r| r.jobs.iter().map(|(_, f)| pick(f)).sum())
                .collect(),
        ));
    }
    out
}

/// Each cgroup's share of the bytes in percent and, where the scheduler aims at weights, the
/// share its weight entitles it to; nothing when no run has cgroups.
fn share_rows(runs: &[RunFigures]) -> Vec<CompareRow> {
    if !runs.iter().any(RunFigures::has_cgroups) {
        return Vec::new();
    }
    let mut groups: Vec<String> = Vec::new();
    for run in runs {
        for (path, _, _) in &run.cgroups {
            if !groups.contains(path) {
                groups.push(path.clone());
            }
        }
    }
    let any_ideal = runs.iter().any(RunFigures::aims_for_weights);
    let mut out = Vec::new();
    for path in &groups {
        let share = |run: &RunFigures, ideal: bool| {
            let found = run.cgroups.iter().find(|(p, _, _)| p == path);
            match found {
                Some(&(_, _, i)) if ideal && run.aims_for_weights() => 100.0 * i,
                Some(&(_, s, _)) if !ideal => 100.0 * s,
                _ => f64::NAN,
            }
        };
        out.push(CompareRow {
            stat: "Share-%".to_string(),
            op: path.clone(),
            higher_is_better: true,
            values: runs.iter().map(|r| share(r, false)).collect(),
        });
        if any_ideal {
            out.push(CompareRow {
                stat: "Ideal-%".to_string(),
                op: path.clone(),
                higher_is_better: true,
                values: runs.iter().map(|r| share(r, true)).collect(),
            });
        }
    }
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
            "iosched": {"scheduler": "cfq",
                        "cgroups": [{"path": "/a", "share": share, "ideal_share": 0.8}]}
        })
    }

    /// CSV and JSON carry the same figures, n/a as an empty field or null, and the change
    /// against the baseline with the table's sign.
    #[test]
    fn csv_and_json_carry_values_changes_and_n_a() {
        let rows = [CompareRow {
            stat: "clat-p99-us".into(),
            op: "a,b".into(),
            higher_is_better: false,
            values: vec![10.0, 5.0, f64::NAN],
        }];
        let titles = ["x".to_string(), "y".to_string(), "z".to_string()];
        let csv = csv(&titles, &rows);
        assert_eq!(
            csv,
            "stat,op,run,value,change_pct\nclat-p99-us,\"a,b\",x,10,0\n\
             clat-p99-us,\"a,b\",y,5,50\nclat-p99-us,\"a,b\",z,,\n"
        );
        let json = json(&titles, &rows);
        assert_eq!(
            json["rows"][0]["values"],
            serde_json::json!([10.0, 5.0, null])
        );
        assert_eq!(
            json["rows"][0]["change_pct"],
            serde_json::json!([0.0, 50.0, null])
        );
    }

    /// A job only one run has is n/a in the other (not 0.00, not +100 %); share rows only
    /// with cgroups; ideal shares only for a scheduler that aims at weights.
    #[test]
    fn missing_figures_are_nan_and_shares_follow_cgroups_and_schedulers() {
        let mut noop = result(400.0, 2000.0, 0.5);
        noop["iosched"]["scheduler"] = json!("noop");
        noop["jobs"][1]["jobname"] = json!("only-here");
        let runs = [figures(&result(800.0, 1000.0, 0.75)), figures(&noop)];
        let rows = rows(&runs);
        let find = |stat: &str, op: &str| rows.iter().find(|r| r.stat == stat && r.op == op);
        let late = find("BW-KiB/s", "only-here").unwrap();
        assert!(late.values[0].is_nan() && late.values[1] == 1.0, "{late:?}");
        let gone = find("IOPS", "a#2").unwrap();
        assert!(gone.values[1].is_nan(), "{gone:?}");
        let ideal = find("Ideal-%", "/a").unwrap();
        assert_eq!(ideal.values[0], 80.0);
        assert!(
            ideal.values[1].is_nan(),
            "noop aims at no weights: {ideal:?}"
        );
        // Only the root group: no share rows at all.
        let mut plain = result(400.0, 2000.0, 1.0);
        plain["iosched"]["cgroups"][0]["path"] = json!("/");
        let rows = super::rows(&[figures(&plain), figures(&plain)]);
        assert!(!rows.iter().any(|r| r.stat.ends_with("-%")), "{rows:?}");
        // Two noop runs with cgroups: shares, no ideals.
        let rows = super::rows(&[figures(&noop), figures(&noop)]);
        assert!(rows.iter().any(|r| r.stat == "Share-%"));
        assert!(!rows.iter().any(|r| r.stat == "Ideal-%"));
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
