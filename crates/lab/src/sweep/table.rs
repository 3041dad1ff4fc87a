//! A sweep's rows as one tidy table — CSV and JSON lines with the same columns: every input
//! (job file, device, scheduler, each `set` and `env` key, seed), then what the row is
//! (`kind`, `name`), then the measures with their units in their names — and as a line chart
//! over the swept input.

use iosched_report::sweep_plot::{Line, LineChart};
use serde_json::{Map, Value};

use super::{AxisKind, RowKind, SweepRow, SweepSpec};

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

/// Every column's name, in order.
pub fn columns(sweep: &SweepSpec) -> Vec<String> {
    let mut names: Vec<String> = sweep.axes.iter().map(|a| a.name.clone()).collect();
    names.extend(["kind".to_string(), "name".to_string()]);
    names.extend(MEASURES.iter().map(|m| m.to_string()));
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
pub fn csv(sweep: &SweepSpec, rows: &[SweepRow]) -> String {
    let mut out = columns(sweep)
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for row in rows {
        let mut fields: Vec<String> = inputs(sweep, row).iter().map(|v| csv_field(v)).collect();
        fields.push(row.kind.name().to_string());
        fields.push(csv_field(&row.name));
        fields.extend(
            measures(row)
                .iter()
                .map(|m| m.map(|v| v.to_string()).unwrap_or_default()),
        );
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
pub fn json_lines(sweep: &SweepSpec, rows: &[SweepRow]) -> String {
    let mut out = String::new();
    for row in rows {
        let mut object = Map::new();
        for (axis, value) in sweep.axes.iter().zip(inputs(sweep, row)) {
            object.insert(axis.name.clone(), input_value(axis.kind, &value));
        }
        object.insert("kind".into(), row.kind.name().into());
        object.insert("name".into(), row.name.clone().into());
        for (name, value) in MEASURES.iter().zip(measures(row)) {
            object.insert(name.to_string(), value.map_or(Value::Null, Value::from));
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
/// other inputs that vary (`top-app, scheduler=cfq`).
pub fn chart(sweep: &SweepSpec, rows: &[SweepRow]) -> LineChart {
    let has_groups = rows.iter().any(|r| r.kind == RowKind::Cgroup);
    let per_point = |kind| {
        let mut names: Vec<&str> = rows
            .iter()
            .filter(|r| r.kind == kind && r.point == 0)
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
    for row in rows.iter().filter(|r| wanted(r)) {
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
    LineChart {
        title: sweep.title.clone(),
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
        }
    }

    /// CSV and JSON lines carry every input and measure, a missing measure empty or null, a
    /// name with a comma quoted, a numeric setting a JSON number.
    #[test]
    fn csv_and_json_lines_have_the_same_columns() {
        let sweep = sweep();
        let rows = [row(3, RowKind::Job, "a,b", 12.5)];
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
        assert_eq!(keys, columns(&sweep));
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
        let chart = chart(&sweep, &rows);
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
}
