//! A sweep's rows as one tidy table — CSV and JSON lines with the same columns: every input
//! (job file, device, scheduler, each `set` and `env` key, seed), then what the row is
//! (`kind`, `name`), then the measures with their units in their names — and as a line chart
//! over the swept input.
//!
//! A sweep stopped by a signal has one more column, `interrupted` (as `iosched run` marks
//! its JSON only then, so a whole sweep's bytes stay as they were): `true` on the rows of
//! the points the signal cut short. Its chart leaves those points out and says it is partial.

use iosched_report::sweep_plot::{Line, LineChart};
use serde_json::{Map, Value};

use super::{AxisKind, RowKind, SweepRow, SweepSpec, Swept};

/// The measures' columns, after the inputs, `kind` and `name`.
pub const MEASURES: [&str; 7] = [
    "bw_mb_s",
    "iops",
    "clat_mean_us",
    "clat_p50_us",
    "clat_p99_us",
    "share",
    "ideal_share",
];

/// The last column, in the table of an interrupted sweep only.
pub const INTERRUPTED: &str = "interrupted";

/// Every column's name, in order (`interrupted` last when `swept` was stopped).
pub fn columns(sweep: &SweepSpec, swept: &Swept) -> Vec<String> {
    let mut names: Vec<String> = sweep.axes.iter().map(|a| a.name.clone()).collect();
    names.extend(["kind".to_string(), "name".to_string()]);
    names.extend(MEASURES.iter().map(|m| m.to_string()));
    if swept.interrupted {
        names.push(INTERRUPTED.to_string());
    }
    names
}

fn measures(row: &SweepRow) -> [Option<f64>; 7] {
    [
        Some(row.bw_mb_s),
        Some(row.iops),
        row.clat_mean_us,
        row.clat_p50_us,
        row.clat_p99_us,
        row.share,
        row.ideal_share,
    ]
}

/// The row's inputs' values, in column order.
fn inputs(sweep: &SweepSpec, row: &SweepRow) -> Vec<String> {
    sweep
        .axes
        .iter()
        .zip(sweep.point(row.point))
        .map(|(axis, pick)| axis.values[pick].clone())
        .collect()
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The table as CSV with a header line. Numbers are written in full (the shortest text that
/// reads back to the same value); a measure a row does not have is an empty field.
pub fn csv(sweep: &SweepSpec, swept: &Swept) -> String {
    let mut out = columns(sweep, swept)
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for row in &swept.rows {
        let mut fields: Vec<String> = inputs(sweep, row).iter().map(|v| csv_field(v)).collect();
        fields.push(row.kind.name().to_string());
        fields.push(csv_field(&row.name));
        fields.extend(
            measures(row)
                .iter()
                .map(|m| m.map(|v| v.to_string()).unwrap_or_default()),
        );
        if swept.interrupted {
            fields.push(row.interrupted.to_string());
        }
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// An input's value in JSON: a number where a setting, variable or seed reads as one.
fn input_value(kind: AxisKind, text: &str) -> Value {
    if matches!(kind, AxisKind::Set | AxisKind::Env | AxisKind::Seed) {
        if let Ok(n) = text.parse::<i64>() {
            return n.into();
        }
        if let Some(x) = text.parse::<f64>().ok().filter(|x| x.is_finite()) {
            return x.into();
        }
    }
    text.into()
}

/// The table as JSON lines: one object per row, keys as the CSV's columns, `null` for a
/// measure the row does not have.
pub fn json_lines(sweep: &SweepSpec, swept: &Swept) -> String {
    let mut out = String::new();
    for row in &swept.rows {
        let mut object = Map::new();
        for (axis, value) in sweep.axes.iter().zip(inputs(sweep, row)) {
            object.insert(axis.name.clone(), input_value(axis.kind, &value));
        }
        object.insert("kind".into(), row.kind.name().into());
        object.insert("name".into(), row.name.clone().into());
        for (name, value) in MEASURES.iter().zip(measures(row)) {
            object.insert(name.to_string(), value.map_or(Value::Null, Value::from));
        }
        if swept.interrupted {
            object.insert(INTERRUPTED.into(), row.interrupted.into());
        }
        out.push_str(&Value::Object(object).to_string());
        out.push('\n');
    }
    out
}

/// The x axis's title: the input's name and, for a scheduler tunable, its unit.
fn x_title(sweep: &SweepSpec) -> String {
    let axis = &sweep.axes[sweep.x];
    let unit = (axis.kind == AxisKind::Set)
        .then(|| {
            iosched_core::schedulers()
                .iter()
                .flat_map(|s| s.tunables.iter())
                .find(|t| t.name == axis.name)
                .map(|t| t.unit)
        })
        .flatten();
    match unit {
        Some("us") => format!("{} (µs)", axis.name),
        Some("bool") => format!("{} (0 or 1)", axis.name),
        Some(unit) if !unit.is_empty() => format!("{} ({unit})", axis.name),
        _ => axis.name.clone(),
    }
}

/// The line chart of throughput over the swept input: a line per cgroup where the jobs name
/// cgroups, else per job, and the total when there are several; each line also named by the
/// other inputs that vary (`top-app, scheduler=cfq`). The points a signal cut short are
/// left out: their figures cover part of a run.
pub fn chart(sweep: &SweepSpec, swept: &Swept) -> LineChart {
    let whole: Vec<&SweepRow> = swept.rows.iter().filter(|r| !r.interrupted).collect();
    let rows = &whole[..];
    let has_groups = rows.iter().any(|r| r.kind == RowKind::Cgroup);
    let first = rows.first().map(|r| r.point);
    let per_point = |kind| {
        let mut names: Vec<&str> = rows
            .iter()
            .filter(|r| r.kind == kind && Some(r.point) == first)
            .map(|r| r.name.as_str())
            .collect();
        names.dedup();
        names.len()
    };
    let wanted = |row: &SweepRow| match row.kind {
        RowKind::Cgroup => true,
        RowKind::Job => !has_groups,
        RowKind::Total => {
            per_point(if has_groups {
                RowKind::Cgroup
            } else {
                RowKind::Job
            }) > 1
        }
    };
    let x_axis = &sweep.axes[sweep.x];
    let numeric = x_axis.values.iter().all(|v| v.parse::<f64>().is_ok());
    let mut lines: Vec<Line> = Vec::new();
    for row in rows.iter().copied().filter(|r| wanted(r)) {
        let picks = sweep.point(row.point);
        let x = if numeric {
            x_axis.values[picks[sweep.x]].parse::<f64>().unwrap_or(0.0)
        } else {
            picks[sweep.x] as f64
        };
        let mut label = match row.name.as_str() {
            "/" => "/ (root)".to_string(),
            name => name.to_string(),
        };
        for (slot, axis) in sweep.axes.iter().enumerate() {
            if slot != sweep.x && axis.values.len() > 1 {
                label.push_str(&format!(", {}={}", axis.name, axis.values[picks[slot]]));
            }
        }
        match lines.iter_mut().find(|line| line.label == label) {
            Some(line) => line.points.push((x, row.bw_mb_s)),
            None => lines.push(Line::new(label, vec![(x, row.bw_mb_s)])),
        }
    }
    let title = if swept.interrupted {
        format!("{} (interrupted: partial)", sweep.title)
    } else {
        sweep.title.clone()
    };
    LineChart {
        title,
        x_desc: x_title(sweep),
        y_desc: "throughput (MB/s)".to_string(),
        categories: (!numeric).then(|| x_axis.values.clone()),
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn sweep() -> SweepSpec {
        let text =
            "jobs = 'j.fio'\nschedulers = ['noop', 'cfq']\n[set]\ngroup_idle_us = [0, 1000]\n";
        SweepSpec::parse(Path::new("s.toml"), text).unwrap()
    }

    fn row(point: usize, kind: RowKind, name: &str, bw: f64) -> SweepRow {
        SweepRow {
            point,
            kind,
            name: name.to_string(),
            bw_mb_s: bw,
            iops: 2.0,
            clat_mean_us: None,
            clat_p50_us: Some(1.5),
            clat_p99_us: None,
            share: None,
            ideal_share: None,
            interrupted: false,
        }
    }

    fn whole(rows: Vec<SweepRow>) -> Swept {
        Swept {
            rows,
            interrupted: false,
        }
    }

    /// CSV and JSON lines carry every input and measure, a missing measure empty or null, a
    /// name with a comma quoted, a numeric setting a JSON number.
    #[test]
    fn csv_and_json_lines_have_the_same_columns() {
        let sweep = sweep();
        let rows = whole(vec![row(3, RowKind::Job, "a,b", 12.5)]);
        let csv = csv(&sweep, &rows);
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "jobfile,device,scheduler,group_idle_us,seed,kind,name,\
             bw_mb_s,iops,clat_mean_us,clat_p50_us,clat_p99_us,share,ideal_share"
        );
        assert_eq!(
            lines.next().unwrap(),
            "j.fio,fixed,cfq,1000,1,job,\"a,b\",12.5,2,,1.5,,,"
        );
        let json: Value = serde_json::from_str(json_lines(&sweep, &rows).trim()).unwrap();
        assert_eq!(json["group_idle_us"], 1000);
        assert_eq!(json["scheduler"], "cfq");
        assert_eq!(json["clat_mean_us"], Value::Null);
        assert_eq!(json["bw_mb_s"], 12.5);
        let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, columns(&sweep, &rows));
    }

    /// One line per job and varying other input, x in the tunable's own values and unit.
    #[test]
    fn the_chart_draws_a_line_per_job_over_the_swept_input() {
        let sweep = sweep();
        let rows: Vec<SweepRow> = (0..4)
            .flat_map(|p| {
                [
                    row(p, RowKind::Job, "a", p as f64),
                    row(p, RowKind::Job, "b", 1.0),
                    row(p, RowKind::Total, "total", 9.0),
                ]
            })
            .collect();
        let chart = chart(&sweep, &whole(rows));
        assert_eq!(chart.x_desc, "group_idle_us (µs)");
        let labels: Vec<_> = chart.lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "a, scheduler=noop",
                "b, scheduler=noop",
                "total, scheduler=noop",
                "a, scheduler=cfq",
                "b, scheduler=cfq",
                "total, scheduler=cfq"
            ]
        );
        assert_eq!(chart.lines[3].points, [(0.0, 2.0), (1000.0, 3.0)]);
        assert_eq!(chart.categories, None);
    }

    /// Issue 28: an interrupted sweep's table ends with `interrupted`, true on the rows of the
    /// point the signal cut short; its chart leaves that point out and says it is partial.
    #[test]
    fn an_interrupted_sweep_marks_its_table_and_chart() {
        let sweep = sweep();
        let mut cut = row(1, RowKind::Job, "a", 5.0);
        cut.interrupted = true;
        let swept = Swept {
            rows: vec![row(0, RowKind::Job, "a", 4.0), cut],
            interrupted: true,
        };
        let csv = csv(&sweep, &swept);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].ends_with(",ideal_share,interrupted"), "{csv}");
        assert!(lines[1].ends_with(",false"), "{csv}");
        assert!(lines[2].ends_with(",true"), "{csv}");
        let json: Vec<Value> = json_lines(&sweep, &swept)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(json[0]["interrupted"], false);
        assert_eq!(json[1]["interrupted"], true);
        let chart = chart(&sweep, &swept);
        assert!(
            chart.title.ends_with("(interrupted: partial)"),
            "{}",
            chart.title
        );
        let points: usize = chart.lines.iter().map(|l| l.points.len()).sum();
        assert_eq!(points, 1, "the cut point is not drawn");
    }
}
