//! A seed experiment as data: `scenarios/<seed>/scenario.json` names the job files, the device
//! preset, the scheduler and tunables of every row, and the figures the seed published.
//!
//! Keeping the rows as data means a reader checks what we ran against the seed text without
//! reading code, and a row that needs a knob the seed did not state has to say so in the file.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One seed's experiment.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// "000".."004".
    pub seed: String,
    pub title: String,
    /// Where the seed's figures come from (file in shared/seeds and the table in it).
    pub source: String,
    pub tables: Vec<Table>,
    #[serde(default)]
    pub comparisons: Vec<Comparison>,
    /// The folder the scenario was loaded from; job files are relative to it.
    #[serde(skip)]
    pub dir: PathBuf,
}

/// One table of the seed: rows × columns of one unit.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub id: String,
    pub title: String,
    /// Device preset (see `iosched devices`).
    pub device: String,
    /// Job files, relative to the scenario folder.
    pub jobfiles: Vec<String>,
    /// `${VAR}` values for the job files.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Overrides for the short variant run by the tests.
    #[serde(default)]
    pub short_env: BTreeMap<String, String>,
    /// Knobs of the machine the seed ran on (`cpu_era`, `cpus`, `mem`), set on every row
    /// before the row's own `set`.
    #[serde(default)]
    pub machine: BTreeMap<String, String>,
    /// Knobs added to every row in the short variant (e.g. a smaller `mem`, so that a
    /// shortened buffered job still reaches the disk).
    #[serde(default)]
    pub short_set: BTreeMap<String, String>,
    pub unit: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Knobs the seed left implicit, set to the kernel default of its time, and other
    /// modelling notes, printed under the table.
    #[serde(default)]
    pub notes: Vec<String>,
    /// An A/B table (two rows): also print it mmtests-style, one line per column.
    #[serde(default)]
    pub mmtests: bool,
    /// Smaller figures are better (times): sets the sign of the mmtests percentages.
    #[serde(default)]
    pub lower_is_better: bool,
}

/// A column: a header as the seed printed it, and the metric that fills it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    pub header: String,
    /// See [`super::metrics`] for the names.
    pub metric: String,
    /// `${VAR}` values for this column only (e.g. a thread count): such a column is
    /// simulated on its own, once per row.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// A row: the seed's label, how to run it, and the seed's value per column.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub label: String,
    pub scheduler: String,
    /// Scheduler tunables (`--set`).
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Extra `${VAR}` values for this row.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// One per column; `null` where the seed gave no figure. A row of nulls is ours only
    /// (e.g. BFQ beside a seed that ran CFQ): printed with "-" for the seed, never compared.
    pub seed_values: Vec<Option<f64>>,
}

/// A ratio the seed's story rests on: (row a, column) over (row b, column).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    pub name: String,
    pub table: String,
    pub a: String,
    pub b: String,
    /// Column header of `a` (the first column if absent).
    #[serde(default)]
    pub column: Option<String>,
    /// Column header of `b` (the same as `a`'s if absent).
    #[serde(default)]
    pub b_column: Option<String>,
    /// Why this comparison is not one the seed's story rests on (its change is under 10 %,
    /// or it runs against the author's own conclusion); a headline comparison when absent.
    #[serde(default)]
    pub aside: Option<String>,
}

/// A scenario file or folder that cannot be used; every variant names the path.
#[derive(Debug)]
pub enum ScenarioError {
    /// `scenario.json` cannot be read (missing, no regular file, too large).
    Read {
        path: PathBuf,
        error: iosched_workload::input::InputError,
    },
    /// `scenario.json` is not a scenario (bad JSON, an unknown or missing field).
    Syntax {
        path: PathBuf,
        error: serde_json::Error,
    },
    /// `scenario.json` parses but does not hold together.
    Invalid { path: PathBuf, problem: Problem },
    /// The folder of scenarios cannot be listed.
    Folder { path: PathBuf, error: io::Error },
    /// The folder holds no scenario: nothing would be reproduced.
    Empty { path: PathBuf },
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioError::Read { path, error } => {
                write!(f, "{}: cannot read: {}", path.display(), error.reason())
            }
            ScenarioError::Syntax { path, error } => {
                write!(f, "{}: line {}: {error}", path.display(), error.line())
            }
            ScenarioError::Invalid { path, problem } => write!(f, "{}: {problem}", path.display()),
            ScenarioError::Folder { path, error } => write!(
                f,
                "{}: cannot read the scenarios folder: {error}",
                path.display()
            ),
            ScenarioError::Empty { path } => write!(
                f,
                "{}: no scenario here (no folder holding a scenario.json)",
                path.display()
            ),
        }
    }
}

// Display already carries the inner error's message: no `source()`, so that a chain
// printed with `{:#}` does not say it twice.
impl std::error::Error for ScenarioError {}

/// What does not hold together in a scenario that parses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A row has a different number of seed values than its table has columns.
    SeedValues {
        table: String,
        row: String,
        values: usize,
        columns: usize,
    },
    /// A table names a job file the folder does not hold.
    NoJobFile { table: String, jobfile: String },
    /// A comparison names a table the scenario does not have.
    NoTable { comparison: String, table: String },
    /// A comparison names a row its table does not have.
    NoRow {
        comparison: String,
        row: String,
        table: String,
    },
    /// A comparison names a column its table does not have.
    NoColumn { comparison: String, column: String },
    /// A comparison names a cell the seed gave no figure for: without this it would be left
    /// out of the verdicts silently, and the counts would change without saying why.
    NoSeedFigure {
        comparison: String,
        row: String,
        column: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::SeedValues {
                table,
                row,
                values,
                columns,
            } => write!(
                f,
                "table '{table}', row '{row}': {values} seed values for {columns} columns"
            ),
            Problem::NoJobFile { table, jobfile } => {
                write!(f, "table '{table}': no job file '{jobfile}'")
            }
            Problem::NoTable { comparison, table } => {
                write!(f, "comparison '{comparison}': no table '{table}'")
            }
            Problem::NoRow {
                comparison,
                row,
                table,
            } => write!(
                f,
                "comparison '{comparison}': no row '{row}' in table '{table}'"
            ),
            Problem::NoColumn { comparison, column } => {
                write!(f, "comparison '{comparison}': no column '{column}'")
            }
            Problem::NoSeedFigure {
                comparison,
                row,
                column,
            } => write!(
                f,
                "comparison '{comparison}': row '{row}' has no seed figure in column '{column}' \
                 (a row of nulls is ours only and cannot be compared)"
            ),
        }
    }
}

impl std::error::Error for Problem {}

impl Scenario {
    /// Loads and checks `dir/scenario.json`.
    pub fn load(dir: &Path) -> Result<Scenario, ScenarioError> {
        let path = dir.join("scenario.json");
        let kind = iosched_workload::input::InputKind::Scenario;
        let text = match iosched_workload::input::read_text(&path, kind) {
            Ok(text) => text,
            Err(error) => return Err(ScenarioError::Read { path, error }),
        };
        let mut scenario: Scenario = match serde_json::from_str(&text) {
            Ok(scenario) => scenario,
            Err(error) => return Err(ScenarioError::Syntax { path, error }),
        };
        scenario.dir = dir.to_path_buf();
        match scenario.validate() {
            Ok(()) => Ok(scenario),
            Err(problem) => Err(ScenarioError::Invalid { path, problem }),
        }
    }

    fn validate(&self) -> Result<(), Problem> {
        for table in &self.tables {
            for row in &table.rows {
                if row.seed_values.len() != table.columns.len() {
                    return Err(Problem::SeedValues {
                        table: table.id.clone(),
                        row: row.label.clone(),
                        values: row.seed_values.len(),
                        columns: table.columns.len(),
                    });
                }
            }
            for jobfile in &table.jobfiles {
                if !self.dir.join(jobfile).is_file() {
                    return Err(Problem::NoJobFile {
                        table: table.id.clone(),
                        jobfile: jobfile.clone(),
                    });
                }
            }
        }
        self.comparisons
            .iter()
            .try_for_each(|comparison| self.validate_comparison(comparison))
    }

    fn validate_comparison(&self, comparison: &Comparison) -> Result<(), Problem> {
        let table = self
            .table(&comparison.table)
            .ok_or_else(|| Problem::NoTable {
                comparison: comparison.name.clone(),
                table: comparison.table.clone(),
            })?;
        for label in [&comparison.a, &comparison.b] {
            if !table.rows.iter().any(|row| &row.label == label) {
                return Err(Problem::NoRow {
                    comparison: comparison.name.clone(),
                    row: label.clone(),
                    table: table.id.clone(),
                });
            }
        }
        for header in [&comparison.column, &comparison.b_column]
            .into_iter()
            .flatten()
        {
            if !table.columns.iter().any(|c| &c.header == header) {
                return Err(Problem::NoColumn {
                    comparison: comparison.name.clone(),
                    column: header.clone(),
                });
            }
        }
        let b_column = comparison.b_column.as_ref().or(comparison.column.as_ref());
        for (label, header) in [
            (&comparison.a, comparison.column.as_ref()),
            (&comparison.b, b_column),
        ] {
            let index = header.map_or(0, |header| {
                table
                    .columns
                    .iter()
                    .position(|c| &c.header == header)
                    .unwrap_or(0)
            });
            let row = table.rows.iter().find(|row| &row.label == label);
            if row.is_some_and(|row| row.seed_values[index].is_none()) {
                return Err(Problem::NoSeedFigure {
                    comparison: comparison.name.clone(),
                    row: label.clone(),
                    column: table.columns[index].header.clone(),
                });
            }
        }
        Ok(())
    }

    pub fn table(&self, id: &str) -> Option<&Table> {
        self.tables.iter().find(|table| table.id == id)
    }
}

/// Every scenario under `root` (folders holding a `scenario.json`), in folder-name order.
pub fn load_all(root: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let entries = std::fs::read_dir(root).map_err(|error| ScenarioError::Folder {
        path: root.to_path_buf(),
        error,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("scenario.json").is_file())
        .collect();
    dirs.sort();
    // An empty folder (or a wrong one) reproduces nothing: that is an error, not a pass.
    if dirs.is_empty() {
        return Err(ScenarioError::Empty {
            path: root.to_path_buf(),
        });
    }
    dirs.iter().map(|dir| Scenario::load(dir)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario_dir(name: &str, json: &str) -> iosched_workload::scratch::ScratchDir {
        let dir = iosched_workload::scratch::ScratchDir::new(&format!("scn-{name}"));
        std::fs::write(dir.join("scenario.json"), json).unwrap();
        std::fs::write(dir.join("job.fio"), "[j]\nsize=1m\n").unwrap();
        dir
    }

    const TABLE: &str = r#""tables": [{ "id": "t", "title": "T", "device": "fixed",
        "jobfiles": ["job.fio"], "unit": "MB/s",
        "columns": [{ "header": "a", "metric": "total_mb_s" }],
        "rows": [{ "label": "r", "scheduler": "noop", "seed_values": SEEDS }] }]"#;

    fn json(seeds: &str, comparisons: &str) -> String {
        format!(
            r#"{{ "seed": "9", "title": "x", "source": "y", {}, "comparisons": {comparisons} }}"#,
            TABLE.replace("SEEDS", seeds)
        )
    }

    #[test]
    fn a_valid_scenario_loads() {
        let dir = scenario_dir("ok", &json("[1.0]", "[]"));
        assert_eq!(Scenario::load(&dir).unwrap().tables[0].rows.len(), 1);
    }

    #[test]
    fn seed_values_must_match_columns() {
        let dir = scenario_dir("cols", &json("[1.0, 2.0]", "[]"));
        let error = Scenario::load(&dir).unwrap_err().to_string();
        assert!(
            error.contains("scenario.json") && error.contains("2 seed values for 1 columns"),
            "{error}"
        );
    }

    #[test]
    fn comparisons_must_name_existing_rows() {
        let dir = scenario_dir(
            "cmp",
            &json(
                "[1.0]",
                r#"[{ "name": "c", "table": "t", "a": "r", "b": "nosuch" }]"#,
            ),
        );
        let error = Scenario::load(&dir).unwrap_err();
        assert!(
            matches!(&error, ScenarioError::Invalid { problem: Problem::NoRow { row, .. }, .. }
                if row == "nosuch"),
            "{error:?}"
        );
        let error = error.to_string();
        assert!(error.contains("no row 'nosuch'"), "{error}");
    }

    /// An ours-only row (no seed figure) loads, but a comparison on it is refused: it could
    /// only be dropped from the verdicts, changing their counts unsaid.
    #[test]
    fn ours_only_rows_load_but_cannot_be_compared() {
        let dir = scenario_dir("ours", &json("[null]", "[]"));
        assert!(Scenario::load(&dir).unwrap().tables[0].rows[0].seed_values[0].is_none());
        let dir = scenario_dir(
            "oursc",
            &json(
                "[null]",
                r#"[{ "name": "c", "table": "t", "a": "r", "b": "r" }]"#,
            ),
        );
        let error = Scenario::load(&dir).unwrap_err();
        assert!(
            matches!(&error, ScenarioError::Invalid { problem: Problem::NoSeedFigure { row, column, .. }, .. }
                if row == "r" && column == "a"),
            "{error:?}"
        );
        assert!(error.to_string().contains("has no seed figure"), "{error}");
    }

    /// Seed 004's BFQ rows are ours only and named by no comparison (issue 29).
    #[test]
    fn seed_004_bfq_rows_are_ours_only() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/004");
        let scenario = Scenario::load(&dir).unwrap();
        let mut bfq_rows = 0;
        for table in &scenario.tables {
            for row in table.rows.iter().filter(|row| row.scheduler == "bfq") {
                bfq_rows += 1;
                assert!(row.seed_values.iter().all(Option::is_none), "{}", row.label);
                assert!(!scenario
                    .comparisons
                    .iter()
                    .any(|c| c.table == table.id && (c.a == row.label || c.b == row.label)));
            }
        }
        assert!(bfq_rows >= 3, "one bfq row per table at least: {bfq_rows}");
    }

    #[test]
    fn job_files_must_exist() {
        let dir = scenario_dir("nojob", &json("[1.0]", "[]").replace("job.fio", "gone.fio"));
        let error = Scenario::load(&dir).unwrap_err().to_string();
        assert!(
            error.contains("scenario.json") && error.contains("table 't': no job file 'gone.fio'"),
            "{error}"
        );
    }

    /// A folder that cannot be listed is named, once, with the reason.
    #[test]
    fn a_missing_scenarios_folder_is_named() {
        let dir = iosched_workload::scratch::ScratchDir::new("scn-none");
        let missing = dir.join("nothing-here");
        let error = load_all(&missing).unwrap_err();
        assert!(matches!(error, ScenarioError::Folder { .. }), "{error:?}");
        let error = error.to_string();
        assert!(
            error.starts_with(&format!(
                "{}: cannot read the scenarios folder",
                missing.display()
            )),
            "{error}"
        );
    }

    #[test]
    fn unknown_fields_are_refused_with_a_line() {
        let dir = scenario_dir("field", r#"{ "seed": "9", "bogus": 1 }"#);
        let error = Scenario::load(&dir).unwrap_err().to_string();
        assert!(
            error.contains("line 1") && error.contains("bogus"),
            "{error}"
        );
    }
}
