//! Printing reproduce results: the seed's table layout with our figures beside the seed's,
//! the verdicts, and the JSON document of `--output-format json`.

use std::fmt::{self, Write};
use std::path::{Path, PathBuf};

use iosched_report::text_table::TextTable;
use iosched_report::verdict_plot::VerdictBar;
use serde_json::{json, Value};

use super::scenario::Scenario;
use super::verdict::Verdict;
use super::RowResult;

fn cell(value: Option<f64>) -> String {
    match value {
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
        None => "-".to_string(),
    }
}

/// Tables with more columns than this print one line per column (seed 003's thread counts).
const WIDE_TABLE_COLUMNS: usize = 8;

/// One line per row, a "seed ours" pair per column.
///
/// Choice: padded here, not by `text_table` (comfy-table) as the verdicts are: each column's
/// header is centred over its two cells, "seed" and "ours", and comfy-table has no cell that
/// spans two columns.
fn rows_down(table: &super::scenario::Table, ours: &[Option<&RowResult>]) -> String {
    let mut out = String::new();
    let label_width = table
        .rows
        .iter()
        .map(|row| row.label.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut header = format!("  {:<label_width$}", "");
    for column in &table.columns {
        let _ = write!(header, " | {:^17}", column.header);
    }
    let _ = writeln!(out, "{header}");
    let mut sub = format!("  {:<label_width$}", "");
    for _ in &table.columns {
        let _ = write!(sub, " | {:>8} {:>8}", "seed", "ours");
    }
    let _ = writeln!(out, "{sub}");
    for (row, ours) in table.rows.iter().zip(ours) {
        let mut line = format!("  {:<label_width$}", row.label);
        for (index, seed_value) in row.seed_values.iter().enumerate() {
            let value = ours.map(|r| r.values[index]);
            let _ = write!(line, " | {:>8} {:>8}", cell(*seed_value), cell(value));
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// One line per column, a "seed ours" pair per row: the seed's own layout for a sweep.
fn columns_down(table: &super::scenario::Table, ours: &[Option<&RowResult>]) -> String {
    let mut out = String::new();
    let header_width = table
        .columns
        .iter()
        .map(|column| column.header.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let widths: Vec<usize> = table
        .rows
        .iter()
        .map(|row| row.label.chars().count().max(17))
        .collect();
    let mut header = format!("  {:<header_width$}", "");
    let mut sub = header.clone();
    for (row, &width) in table.rows.iter().zip(&widths) {
        let _ = write!(header, " | {:^width$}", row.label);
        let _ = write!(sub, " | {:>w$} {:>8}", "seed", "ours", w = width - 9);
    }
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{sub}");
    for (index, column) in table.columns.iter().enumerate() {
        let mut line = format!("  {:<header_width$}", column.header);
        for ((row, ours), &width) in table.rows.iter().zip(ours).zip(&widths) {
            let value = ours.map(|r| r.values[index]);
            let _ = write!(
                line,
                " | {:>w$} {:>8}",
                cell(row.seed_values[index]),
                cell(value),
                w = width - 9
            );
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The last line of the text report of a run a signal stopped.
pub const INTERRUPTED_NOTE: &str = "interrupted: partial results; the rows whose simulations \
     did not run whole are left out, with the comparisons on them";

/// The text report: per seed, each table with "seed" and "ours" per column, then verdicts.
pub fn text(scenarios: &[Scenario], results: &[RowResult], verdicts: &[Verdict]) -> String {
    let mut out = String::new();
    for scenario in scenarios {
        let _ = writeln!(out, "== seed {}: {}", scenario.seed, scenario.title);
        let _ = writeln!(out, "   ({})", scenario.source);
        for table in &scenario.tables {
            let _ = writeln!(
                out,
                "\n  {} [{} on {}]",
                table.title, table.unit, table.device
            );
            let ours: Vec<Option<&RowResult>> = table
                .rows
                .iter()
                .map(|row| {
                    results.iter().find(|r| {
                        r.seed == scenario.seed && r.table == table.id && r.label == row.label
                    })
                })
                .collect();
            if table.columns.len() > WIDE_TABLE_COLUMNS {
                out.push_str(&columns_down(table, &ours));
            } else {
                out.push_str(&rows_down(table, &ours));
            }
            for note in &table.notes {
                let _ = writeln!(out, "  note: {note}");
            }
            if table.mmtests && table.rows.len() == 2 {
                out.push('\n');
                out.push_str(&mmtests_table(scenario, table, results));
            }
        }
        let mine: Vec<&Verdict> = verdicts
            .iter()
            .filter(|v| v.seed == scenario.seed)
            .collect();
        if !mine.is_empty() {
            out.push_str(&verdict_table(&mine));
        }
        out.push('\n');
    }
    out.push_str(&summary(verdicts));
    out
}

/// One seed's verdicts; a comparison that is not a headline one says why under the table.
fn verdict_table(mine: &[&Verdict]) -> String {
    let starred = if mine.iter().all(|v| v.headline()) {
        ""
    } else {
        "; * not a headline comparison"
    };
    let mut out = format!("\n  verdicts (ratio a/b: seed, ours{starred}):\n");
    let mut table = TextTable::new(&["dir", "±25", "comparison", "seed", "ours"])
        .right_aligned(&[3, 4])
        .indented(2);
    let mark = |ok: bool| if ok { "✓" } else { "✗" };
    for verdict in mine {
        let star = if verdict.headline() { "" } else { " *" };
        table.row([
            mark(verdict.direction_ok).to_string(),
            mark(verdict.within_25pct).to_string(),
            format!("{}{star}", verdict.name),
            format!("{:.2}", verdict.seed_ratio),
            format!("{:.2}", verdict.ratio),
        ]);
    }
    out.push_str(&table.render());
    for verdict in mine {
        if let Some(aside) = &verdict.aside {
            let _ = writeln!(out, "  * {}: {aside}", verdict.name);
        }
    }
    out
}

/// The closing counts: the headline comparisons (those the seeds' stories rest on), then all.
pub fn summary(verdicts: &[Verdict]) -> String {
    let count = |set: &[&Verdict]| {
        let direction = set.iter().filter(|v| v.direction_ok).count();
        let within = set.iter().filter(|v| v.within_25pct).count();
        format!(
            "{} with the seed's direction, {} within ±25 % of the seed's ratio",
            direction, within
        )
    };
    let all: Vec<&Verdict> = verdicts.iter().collect();
    let headline: Vec<&Verdict> = verdicts.iter().filter(|v| v.headline()).collect();
    format!(
        "{} headline comparisons: {}\n{} comparisons in all: {}\n",
        headline.len(),
        count(&headline),
        all.len(),
        count(&all)
    )
}

/// An A/B table as mmtests' compare script prints it: one line per column, our figures for
/// the two rows side by side with the change in percent (positive = better).
fn mmtests_table(
    scenario: &Scenario,
    table: &super::scenario::Table,
    results: &[RowResult],
) -> String {
    use iosched_report::mmtests::{compare_table, CompareRow};
    let ours: Vec<Option<&RowResult>> = table
        .rows
        .iter()
        .map(|row| {
            results
                .iter()
                .find(|r| r.seed == scenario.seed && r.table == table.id && r.label == row.label)
        })
        .collect();
    if ours.iter().any(Option::is_none) {
        return String::new();
    }
    let rows: Vec<CompareRow> = table
        .columns
        .iter()
        .enumerate()
        .map(|(index, column)| CompareRow {
            stat: "Ours".to_string(),
            op: column.header.clone(),
            higher_is_better: !table.lower_is_better,
            values: ours.iter().flatten().map(|r| r.values[index]).collect(),
        })
        .collect();
    let titles: Vec<String> = table.rows.iter().map(|row| row.label.clone()).collect();
    compare_table(&titles, &rows)
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// The JSON document: `rows` (one per row and column) and `comparisons`.
pub fn json(scenarios: &[Scenario], results: &[RowResult], verdicts: &[Verdict]) -> Value {
    let mut rows = Vec::new();
    for scenario in scenarios {
        for table in &scenario.tables {
            for row in &table.rows {
                let Some(ours) = results.iter().find(|r| {
                    r.seed == scenario.seed && r.table == table.id && r.label == row.label
                }) else {
                    continue;
                };
                for (index, column) in table.columns.iter().enumerate() {
                    let label = if table.columns.len() > 1 {
                        format!("{} [{}]", row.label, column.header)
                    } else {
                        row.label.clone()
                    };
                    rows.push(json!({
                        "seed": scenario.seed,
                        "table": table.id,
                        "label": label,
                        "seed_value": row.seed_values[index],
                        "value": finite(ours.values[index]),
                        "unit": table.unit,
                    }));
                }
            }
        }
    }
    let comparisons: Vec<Value> = verdicts
        .iter()
        .map(|v| {
            json!({
                "seed": v.seed,
                "name": v.name,
                "seed_ratio": finite(v.seed_ratio),
                "ratio": finite(v.ratio),
                "direction_ok": v.direction_ok,
                "within_25pct": v.within_25pct,
                "headline": v.headline(),
                "aside": v.aside,
            })
        })
        .collect();
    json!({ "rows": rows, "comparisons": comparisons })
}

/// One plot per table, named `seed<NNN>-<table id>`, with every row that ran.
pub fn plot_tables(
    scenarios: &[Scenario],
    results: &[RowResult],
) -> Vec<(String, iosched_report::plot::PlotTable)> {
    use iosched_report::plot::{PlotColumn, PlotTable};
    let mut plots = Vec::new();
    for scenario in scenarios {
        for table in &scenario.tables {
            let ran: Vec<(&super::scenario::Row, &RowResult)> = table
                .rows
                .iter()
                .filter_map(|row| {
                    results
                        .iter()
                        .find(|r| {
                            r.seed == scenario.seed && r.table == table.id && r.label == row.label
                        })
                        .map(|result| (row, result))
                })
                .collect();
            // A sweep's x axis is the seed's setting: ours-only rows (seed 004's BFQ, which
            // has no group_idle) are no point on it, and stay in the text and JSON tables.
            let swept = row_variable(table);
            let ran: Vec<_> = ran
                .into_iter()
                .filter(|(row, _)| swept.is_none() || seeded(row))
                .collect();
            if ran.is_empty() {
                continue;
            }
            let columns = table
                .columns
                .iter()
                .enumerate()
                .map(|(index, column)| PlotColumn {
                    header: column.header.clone(),
                    seed: ran.iter().map(|(row, _)| row.seed_values[index]).collect(),
                    ours: ran.iter().map(|(_, result)| result.values[index]).collect(),
                })
                .collect();
            let wide = table.columns.len() > WIDE_TABLE_COLUMNS;
            let plot = PlotTable {
                title: format!("seed {}: {}", scenario.seed, table.title),
                unit: table.unit.clone(),
                rows: ran.iter().map(|(row, _)| row.label.clone()).collect(),
                columns,
                sweep: wide,
                x_desc: if wide { column_variable(table) } else { None },
            };
            let plot = match swept {
                Some(x_desc) if !wide => rows_as_x(plot, x_desc),
                _ => plot,
            };
            plots.push((format!("seed{}-{}", scenario.seed, table.id), plot));
        }
    }
    plots
}

/// The one job variable every column sets (seed 003's `THREADS`), as an axis title.
fn column_variable(table: &super::scenario::Table) -> Option<String> {
    let first = table.columns.first()?;
    let (name, _) = first.env.iter().next()?;
    let same = table
        .columns
        .iter()
        .all(|c| c.env.len() == 1 && c.env.contains_key(name));
    same.then(|| name.to_lowercase())
}

/// A table whose rows are the points of one setting (seed 004's `group_idle_us`): every row
/// sets that one key to its own label, a number, and there are at least three. Returns the
/// axis title, with the unit of the tunable of that name.
/// Ours-only rows (no seed figure) are left out of the sweep.
fn row_variable(table: &super::scenario::Table) -> Option<String> {
    let rows: Vec<&super::scenario::Row> = table.rows.iter().filter(|r| seeded(r)).collect();
    let first = rows.first()?;
    let (name, _) = first.set.iter().next()?;
    let swept = rows.len() >= 3
        && rows.iter().all(|row| {
            row.set.len() == 1
                && row.set.get(name) == Some(&row.label)
                && row.label.parse::<f64>().is_ok()
        });
    if !swept {
        return None;
    }
    let unit = iosched_core::schedulers()
        .iter()
        .flat_map(|s| s.tunables.iter())
        .find(|t| t.name == name)
        .map(|t| t.unit);
    Some(match unit {
        Some("us") => format!("{name} (µs)"),
        Some(unit) if !unit.is_empty() => format!("{name} ({unit})"),
        _ => name.clone(),
    })
}

/// A row with a seed figure; a row of nulls is ours only.
fn seeded(row: &super::scenario::Row) -> bool {
    row.seed_values.iter().any(Option::is_some)
}

/// The rows as the x axis of one line chart, a line per column: a sweep over a setting reads
/// as lines, not as a stack of panels.
fn rows_as_x(
    table: iosched_report::plot::PlotTable,
    x_desc: String,
) -> iosched_report::plot::PlotTable {
    use iosched_report::plot::{PlotColumn, PlotTable};
    let points = table.rows.len();
    PlotTable {
        title: table.title,
        unit: table.unit,
        rows: table.columns.iter().map(|c| c.header.clone()).collect(),
        columns: (0..points)
            .map(|point| PlotColumn {
                header: table.rows[point].clone(),
                seed: table.columns.iter().map(|c| c.seed[point]).collect(),
                ours: table.columns.iter().map(|c| c.ours[point]).collect(),
            })
            .collect(),
        sweep: true,
        x_desc: Some(x_desc),
    }
}

/// A plot that could not be written.
#[derive(Debug)]
pub enum PlotError {
    /// The plot folder cannot be created.
    Folder {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A table's PNG or SVG cannot be drawn or written.
    Write(String),
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlotError::Folder { path, error } => write!(f, "{}: {error}", path.display()),
            PlotError::Write(message) => write!(f, "{message}"),
        }
    }
}

// Display already carries the inner error's message: no `source()`, so that a chain
// printed with `{:#}` does not say it twice.
impl std::error::Error for PlotError {}

/// Writes [`plot_tables`] into `dir` (created if missing): `NAME.png` and `NAME.svg` each,
/// and per seed with comparisons `seed<NNN>-verdicts`: each comparison's ratio, seed's and
/// ours, with its verdicts.
pub fn write_plots(
    dir: &Path,
    scenarios: &[Scenario],
    results: &[RowResult],
    verdicts: &[Verdict],
) -> Result<(), PlotError> {
    std::fs::create_dir_all(dir).map_err(|error| PlotError::Folder {
        path: dir.to_path_buf(),
        error,
    })?;
    for (name, table) in plot_tables(scenarios, results) {
        iosched_report::plot::write_table(&dir.join(name), &table).map_err(PlotError::Write)?;
    }
    for scenario in scenarios {
        let bars: Vec<VerdictBar> = verdicts
            .iter()
            .filter(|v| v.seed == scenario.seed)
            .map(|v| VerdictBar {
                name: v.name.clone(),
                seed_ratio: v.seed_ratio,
                ratio: v.ratio,
                direction_ok: v.direction_ok,
                within_25pct: v.within_25pct,
            })
            .collect();
        if bars.is_empty() {
            continue;
        }
        let title = format!(
            "seed {}: verdicts, our ratio beside the seed's",
            scenario.seed
        );
        let base = dir.join(format!("seed{}-verdicts", scenario.seed));
        iosched_report::verdict_plot::write_verdicts(&base, &title, &bars)
            .map_err(PlotError::Write)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 004's group_idle sweep plots as one line chart over group_idle_us with its
    /// unit, a line per group (not eleven panels); seed 003's thread sweep is titled threads.
    #[test]
    fn setting_and_variable_sweeps_are_line_charts_with_titled_x_axes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let scenarios = crate::reproduce::load(&root, &["003".into(), "004".into()]).unwrap();
        let results: Vec<RowResult> = scenarios
            .iter()
            .flat_map(|s| {
                s.tables.iter().flat_map(move |t| {
                    t.rows.iter().map(move |r| RowResult {
                        seed: s.seed.clone(),
                        table: t.id.clone(),
                        label: r.label.clone(),
                        values: vec![1.0; t.columns.len()],
                    })
                })
            })
            .collect();
        let plots = plot_tables(&scenarios, &results);
        let find = |name: &str| &plots.iter().find(|(n, _)| n == name).unwrap().1;
        let sweep = find("seed004-group-idle-sweep");
        assert!(sweep.sweep);
        assert_eq!(sweep.x_desc.as_deref(), Some("group_idle_us (µs)"));
        assert_eq!(
            sweep.rows,
            ["total", "top-app", "foreground", "normal", "background"]
        );
        assert_eq!(sweep.columns.len(), 11);
        assert_eq!(find("seed003-sysbench").x_desc.as_deref(), Some("threads"));
        let four = find("seed004-four-groups");
        assert!(!four.sweep && four.x_desc.is_none(), "one row is no sweep");
    }
    use crate::reproduce::scenario::{Column, Row, Table};

    fn table(columns: usize) -> Table {
        Table {
            id: "t".into(),
            title: "T".into(),
            device: "fixed".into(),
            jobfiles: vec![],
            env: Default::default(),
            short_env: Default::default(),
            machine: Default::default(),
            short_set: Default::default(),
            unit: "ops/s".into(),
            columns: (1..=columns)
                .map(|n| Column {
                    header: format!("c{n}"),
                    metric: "total_mb_s".into(),
                    env: Default::default(),
                })
                .collect(),
            rows: ["with", "without"]
                .iter()
                .map(|label| Row {
                    label: label.to_string(),
                    scheduler: "cfq".into(),
                    set: Default::default(),
                    env: Default::default(),
                    seed_values: vec![Some(1.0); columns],
                })
                .collect(),
            notes: vec![],
            mmtests: false,
            lower_is_better: false,
        }
    }

    /// A sweep of many columns prints one line per column, as the seed's table does; a
    /// narrow table one line per row.
    #[test]
    fn wide_tables_print_one_line_per_column() {
        let result = |label: &str, columns: usize| RowResult {
            seed: "9".into(),
            table: "t".into(),
            label: label.into(),
            values: (0..columns).map(|i| i as f64).collect(),
        };
        let wide = table(16);
        let (a, b) = (result("with", 16), result("without", 16));
        let text = columns_down(&wide, &[Some(&a), Some(&b)]);
        assert_eq!(text.lines().count(), 2 + 16, "{text}");
        assert!(text.lines().nth(2).unwrap().trim_start().starts_with("c1 "));
        let narrow = table(3);
        let (a, b) = (result("with", 3), result("without", 3));
        let text = rows_down(&narrow, &[Some(&a), Some(&b)]);
        assert_eq!(text.lines().count(), 2 + 2, "{text}");
        assert!(text
            .lines()
            .nth(2)
            .unwrap()
            .trim_start()
            .starts_with("with "));
    }

    fn verdict(name: &str, direction_ok: bool, aside: Option<&str>) -> Verdict {
        Verdict {
            seed: "003".to_string(),
            name: name.to_string(),
            seed_ratio: 1.5,
            ratio: if direction_ok { 1.4 } else { 0.5 },
            direction_ok,
            within_25pct: direction_ok,
            aside: aside.map(str::to_string),
        }
    }

    /// Issue 33: the closing lines count the headline comparisons apart from all of them, and
    /// an aside is starred in its seed's table with its reason underneath.
    #[test]
    fn headline_and_all_comparisons_are_counted_apart() {
        let verdicts = [
            verdict("kept", true, None),
            verdict("small", false, Some("under 10 % in the seed (+0.98 %)")),
        ];
        assert_eq!(
            summary(&verdicts),
            "1 headline comparisons: 1 with the seed's direction, 1 within ±25 % of the \
             seed's ratio\n2 comparisons in all: 1 with the seed's direction, 1 within ±25 % \
             of the seed's ratio\n"
        );
        let table = verdict_table(&verdicts.iter().collect::<Vec<_>>());
        assert!(table.contains("small *"), "{table}");
        assert!(!table.contains("kept *"), "{table}");
        assert!(
            table.contains("* small: under 10 % in the seed (+0.98 %)"),
            "{table}"
        );
    }
}
