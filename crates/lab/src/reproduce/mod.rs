//! `iosched reproduce`: the seed experiments, run in simulation and set beside the seeds'
//! published figures.
//!
//! A scenario ([`scenario::Scenario`]) is data; [`simulate`] runs one row of one table in
//! the simulator (one simulation per column group); [`run`] spreads every simulation of the
//! chosen scenarios over the local work queue ([`crate::pool`]) and folds the figures back
//! into rows; [`verdict::judge`] turns the rows into the comparisons each seed's story rests
//! on; [`render`] prints them in the seed's own layout, as JSON, mmtests-style and as plots.
//!
//! The figures do not depend on the number of workers: every simulation is seeded from
//! [`Options::seed`] alone and the results are kept in print order.

pub mod metrics;
pub mod render;
pub mod scenario;
pub mod simulate;
pub mod verdict;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use scenario::{Scenario, ScenarioError};
use simulate::{column_groups, run_group, runs, GroupOptions, RowError, Run, SimulateError};
use verdict::Verdict;

pub use simulate::run_row;

/// How much of each experiment to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    /// The scenario's own settings.
    Full,
    /// The `short_env` overrides: seconds of simulated time, for tests.
    Short,
}

/// Our figures for one row, one per column.
#[derive(Clone, Debug, PartialEq)]
pub struct RowResult {
    pub seed: String,
    pub table: String,
    pub label: String,
    pub values: Vec<f64>,
}

/// How to run the chosen scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub length: Length,
    /// Seed of every simulation's random streams.
    pub seed: u64,
    /// Simulations run at once; 0 means one per available CPU.
    pub jobs: usize,
}

/// Everything `reproduce` found: our figures per row and the verdicts.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub results: Vec<RowResult>,
    pub verdicts: Vec<Verdict>,
    /// A signal stopped the simulations: the rows that did not run whole are left out, and
    /// so are the verdicts on them.
    pub interrupted: bool,
}

/// Why `reproduce` could not produce a report.
#[derive(Debug)]
pub enum ReproduceError {
    /// A scenario file or the scenarios folder cannot be used.
    Scenario(ScenarioError),
    /// A seed was asked for that no scenario in the folder has.
    NoSeed {
        seed: String,
        dir: PathBuf,
        known: Vec<String>,
    },
    /// One simulation failed.
    Row(RowError),
}

impl fmt::Display for ReproduceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReproduceError::Scenario(error) => write!(f, "{error}"),
            ReproduceError::NoSeed { seed, dir, known } => write!(
                f,
                "no scenario for seed '{seed}' in {} (have: {})",
                dir.display(),
                known.join(", ")
            ),
            ReproduceError::Row(error) => write!(f, "{error}"),
        }
    }
}

// Display already carries the inner error's message: no `source()`, so that a chain
// printed with `{:#}` does not say it twice.
impl std::error::Error for ReproduceError {}

/// The scenarios under `dir` for `seeds` (every one when `seeds` is empty), in folder order.
pub fn load(dir: &Path, seeds: &[String]) -> Result<Vec<Scenario>, ReproduceError> {
    let mut scenarios = scenario::load_all(dir).map_err(ReproduceError::Scenario)?;
    if seeds.is_empty() {
        return Ok(scenarios);
    }
    if let Some(missing) = seeds
        .iter()
        .find(|wanted| !scenarios.iter().any(|s| &s.seed == *wanted))
    {
        return Err(ReproduceError::NoSeed {
            seed: missing.clone(),
            dir: dir.to_path_buf(),
            known: scenarios.iter().map(|s| s.seed.clone()).collect(),
        });
    }
    scenarios.retain(|s| seeds.contains(&s.seed));
    Ok(scenarios)
}

/// How many simulations [`run`] will do for `scenarios` (a progress bar's length).
pub fn simulation_count(scenarios: &[Scenario]) -> usize {
    runs(scenarios).len()
}

/// Runs every row of `scenarios` on the work queue and judges the comparisons; `step()` is
/// called after each simulation. The first failed simulation, in print order, is the error.
/// Once `stop` is set (a signal) the running simulations stop and no other starts; the rows
/// they belong to are left out of the report.
pub fn run(
    scenarios: &[Scenario],
    options: &Options,
    step: &(dyn Fn() + Sync),
    stop: &AtomicBool,
) -> Result<Report, ReproduceError> {
    let work = runs(scenarios);
    let group_options = GroupOptions {
        length: options.length,
        seed: options.seed,
        stop,
    };
    let values = crate::pool::map_in_order(
        &work,
        options.jobs,
        |run| {
            let scenario = &scenarios[run.scenario];
            let table = &scenario.tables[run.table];
            let group = &column_groups(table)[run.group];
            let row = &table.rows[run.row];
            if stop.load(Ordering::Relaxed) {
                return Err(RowError {
                    seed: scenario.seed.clone(),
                    table: table.id.clone(),
                    row: row.label.clone(),
                    error: Box::new(SimulateError::Interrupted),
                });
            }
            run_group(scenario, table, row, group, &group_options)
        },
        step,
    );
    let results = fold_rows(scenarios, &work, values).map_err(ReproduceError::Row)?;
    let verdicts = scenarios
        .iter()
        .flat_map(|scenario| verdict::judge(scenario, &results))
        .collect();
    Ok(Report {
        results,
        verdicts,
        interrupted: stop.load(Ordering::Relaxed),
    })
}

/// Runs are in print order, a row's column groups together: folds their figures into rows.
/// A row with an interrupted simulation is left out.
fn fold_rows(
    scenarios: &[Scenario],
    work: &[Run],
    values: Vec<Result<Vec<(usize, f64)>, RowError>>,
) -> Result<Vec<RowResult>, RowError> {
    let mut results: Vec<(RowResult, bool)> = Vec::new();
    for (run, values) in work.iter().zip(values) {
        let scenario = &scenarios[run.scenario];
        let table = &scenario.tables[run.table];
        if run.group == 0 {
            let row = RowResult {
                seed: scenario.seed.clone(),
                table: table.id.clone(),
                label: table.rows[run.row].label.clone(),
                values: vec![0.0; table.columns.len()],
            };
            results.push((row, true));
        }
        let (row, whole) = results.last_mut().expect("group 0 comes first");
        match values {
            Err(error) if matches!(*error.error, SimulateError::Interrupted) => *whole = false,
            values => {
                for (index, value) in values? {
                    row.values[index] = value;
                }
            }
        }
    }
    Ok(results
        .into_iter()
        .filter_map(|(row, whole)| whole.then_some(row))
        .collect())
}
