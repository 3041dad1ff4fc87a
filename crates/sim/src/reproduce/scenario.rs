//! A seed experiment as data: `scenarios/<seed>/scenario.json` names the job files, the device
//! preset, the scheduler and tunables of every row, and the figures the seed published.
//!
//! Keeping the rows as data means a reader checks what we ran against the seed text without
//! reading code, and a row that needs a knob the seed did not state has to say so in the file.

use std::collections::BTreeMap;
use std::fmt;
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
    /// See [`crate::reproduce::metrics`] for the names.
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
    /// One per column; `null` where the seed gave no figure.
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
}

/// A scenario file that cannot be used.
#[derive(Debug)]
pub struct ScenarioError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Scenario {
    /// Loads and checks `dir/scenario.json`.
    pub fn load(dir: &Path) -> Result<Scenario, ScenarioError> {
        let path = dir.join("scenario.json");
        let error = |message: String| ScenarioError {
            path: path.clone(),
            message,
        };
        let text =
            std::fs::read_to_string(&path).map_err(|e| error(format!("cannot read: {e}")))?;
        let mut scenario: Scenario =
            serde_json::from_str(&text).map_err(|e| error(format!("line {}: {e}", e.line())))?;
        scenario.dir = dir.to_path_buf();
        scenario.validate().map_err(error)?;
        Ok(scenario)
    }

    fn validate(&self) -> Result<(), String> {
        for table in &self.tables {
            for row in &table.rows {
                if row.seed_values.len() != table.columns.len() {
                    return Err(format!(
                        "table '{}', row '{}': {} seed values for {} columns",
                        table.id,
                        row.label,
                        row.seed_values.len(),
                        table.columns.len()
                    ));
                }
            }
            for jobfile in &table.jobfiles {
                if !self.dir.join(jobfile).is_file() {
                    return Err(format!("table '{}': no job file '{jobfile}'", table.id));
                }
            }
        }
        for comparison in &self.comparisons {
            let table = self.table(&comparison.table).ok_or_else(|| {
                format!(
                    "comparison '{}': no table '{}'",
                    comparison.name, comparison.table
                )
            })?;
            for label in [&comparison.a, &comparison.b] {
                if !table.rows.iter().any(|row| &row.label == label) {
                    return Err(format!(
                        "comparison '{}': no row '{label}' in table '{}'",
                        comparison.name, table.id
                    ));
                }
            }
            for header in [&comparison.column, &comparison.b_column]
                .into_iter()
                .flatten()
            {
                if !table.columns.iter().any(|c| &c.header == header) {
                    return Err(format!(
                        "comparison '{}': no column '{header}'",
                        comparison.name
                    ));
                }
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
    let entries = std::fs::read_dir(root).map_err(|e| ScenarioError {
        path: root.to_path_buf(),
        message: format!("cannot read the scenarios folder: {e}"),
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("scenario.json").is_file())
        .collect();
    dirs.sort();
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
        let error = Scenario::load(&dir).unwrap_err().to_string();
        assert!(error.contains("no row 'nosuch'"), "{error}");
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
