//! `iosched reproduce`: the seed experiments, run in simulation and set beside the seeds'
//! published figures.
//!
//! A scenario ([`scenario::Scenario`]) is data; [`run_row`] simulates one row of one table;
//! [`verdict::judge`] turns the rows into the comparisons each seed's story rests on;
//! [`render`] prints them in the seed's own layout, as JSON, and mmtests-style.

pub mod metrics;
pub mod render;
pub mod scenario;
pub mod verdict;

use std::collections::BTreeMap;

use iosched_core::NoTrace;
use iosched_workload::fio::{self, ParseContext};

use crate::device::preset;
use crate::simulation::{SimConfig, SimOutcome, Simulation};
use scenario::{Row, Scenario, Table};

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

/// The job-file variables of one run: the table's, the row's, the column's, then the short
/// overrides.
fn run_env(
    table: &Table,
    row: &Row,
    column_env: &BTreeMap<String, String>,
    length: Length,
) -> BTreeMap<String, String> {
    let mut env = table.env.clone();
    env.extend(row.env.clone());
    env.extend(column_env.clone());
    if length == Length::Short {
        env.extend(table.short_env.clone());
    }
    env
}

/// The table's columns grouped by their own job variables, in order of first appearance:
/// one simulation per group and row.
pub fn column_groups(table: &Table) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (index, column) in table.columns.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|group| table.columns[group[0]].env == column.env)
        {
            Some(group) => group.push(index),
            None => groups.push(vec![index]),
        }
    }
    groups
}

/// Simulates one row for one column group: (column index, value) for each of its columns.
/// Errors name the scenario, table and row.
pub fn run_group(
    scenario: &Scenario,
    table: &Table,
    row: &Row,
    group: &[usize],
    length: Length,
    seed: u64,
) -> Result<Vec<(usize, f64)>, String> {
    let context = |message: String| {
        format!(
            "scenario {} table '{}' row '{}': {message}",
            scenario.seed, table.id, row.label
        )
    };
    let first = *group.first().expect("a column group has a column");
    let env = run_env(table, row, &table.columns[first].env, length);
    let (outcome, job_names) =
        simulate(scenario, table, row, env, length, seed).map_err(context)?;
    group
        .iter()
        .map(|&index| {
            metrics::evaluate(&table.columns[index].metric, &outcome, &job_names)
                .map(|value| (index, value))
                .map_err(context)
        })
        .collect()
}

/// Simulates one row: one simulation per column group (see [`column_groups`]).
pub fn run_row(
    scenario: &Scenario,
    table: &Table,
    row: &Row,
    length: Length,
    seed: u64,
) -> Result<RowResult, String> {
    let mut values = vec![0.0; table.columns.len()];
    for group in column_groups(table) {
        for (index, value) in run_group(scenario, table, row, &group, length, seed)? {
            values[index] = value;
        }
    }
    Ok(RowResult {
        seed: scenario.seed.clone(),
        table: table.id.clone(),
        label: row.label.clone(),
        values,
    })
}

/// One simulation of a row's job files with these variables: the outcome and the job names.
fn simulate(
    scenario: &Scenario,
    table: &Table,
    row: &Row,
    env: BTreeMap<String, String>,
    length: Length,
    seed: u64,
) -> Result<(SimOutcome, Vec<String>), String> {
    // Writeback and file-system knobs (`flusher`, `dirty_ratio`, `mem`, `barrier`...) go to
    // the simulated kernel; everything else is a scheduler tunable.
    let mut set = row.set.clone();
    if length == Length::Short {
        set.extend(table.short_set.clone());
    }
    let (fs_knobs, tunables): (Vec<_>, Vec<_>) = set
        .into_iter()
        .partition(|(name, _)| crate::fs::FsConfig::is_knob(name));
    // `$mb_memory` and `$ncpus` in a job file describe the simulated machine of the row.
    let machine = crate::fs::FsConfig::from_knobs(&fs_knobs)
        .map_err(|e| format!("row '{}': {e}", row.label))?;
    let parse_context = ParseContext {
        env,
        pagesize: 4096,
        mb_memory: machine.writeback.mem_bytes >> 20,
        ncpus: machine.writeback.cpus,
        ..ParseContext::default()
    };
    let paths: Vec<_> = table
        .jobfiles
        .iter()
        .map(|file| scenario.dir.join(file))
        .collect();
    let jobs = fio::parse_files(&paths, &parse_context).map_err(|e| e.to_string())?;
    let device =
        preset(&table.device).ok_or_else(|| format!("no device preset '{}'", table.device))?;
    let config = SimConfig {
        scheduler: row.scheduler.clone(),
        tunables,
        fs_knobs,
        seed,
        ..SimConfig::default()
    };
    let outcome = Simulation::new(&jobs.jobs, device, config)
        .and_then(|simulation| simulation.run(&mut NoTrace, &mut |_| {}))
        .map_err(|e| e.to_string())?;
    let job_names = jobs.jobs.iter().map(|job| job.name.clone()).collect();
    Ok((outcome, job_names))
}

/// One simulation to run: scenario, table, row and column group (indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub scenario: usize,
    pub table: usize,
    pub row: usize,
    pub group: usize,
}

/// Every simulation, in print order: the unit of parallel work.
pub fn runs(scenarios: &[Scenario]) -> Vec<Run> {
    let mut runs = Vec::new();
    for (s, scenario) in scenarios.iter().enumerate() {
        for (t, table) in scenario.tables.iter().enumerate() {
            let groups = column_groups(table).len();
            for r in 0..table.rows.len() {
                for g in 0..groups {
                    runs.push(Run {
                        scenario: s,
                        table: t,
                        row: r,
                        group: g,
                    });
                }
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves a column's own job variables reach its simulation: the same job reading four
    /// times the data takes about four times as long.
    #[test]
    fn columns_with_their_own_variables_run_their_own_simulation() {
        let dir = iosched_workload::scratch::ScratchDir::new("colenv");
        std::fs::write(
            dir.join("job.fio"),
            "[j]\nrw=read\nbs=4k\nsize=${SIZE}\nnumjobs=2\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("scenario.json"),
            r#"{ "seed": "9", "title": "x", "source": "y", "tables": [{ "id": "t",
                "title": "T", "device": "fixed", "jobfiles": ["job.fio"], "unit": "s",
                "columns": [
                    { "header": "1m", "metric": "job_seconds_max:j", "env": { "SIZE": "1m" } },
                    { "header": "4m", "metric": "job_seconds_mean:j", "env": { "SIZE": "4m" } },
                    { "header": "4m-min", "metric": "job_seconds_min:j", "env": { "SIZE": "4m" } }
                ],
                "rows": [{ "label": "r", "scheduler": "noop",
                           "seed_values": [null, null, null] }] }] }"#,
        )
        .unwrap();
        let scenario = Scenario::load(&dir).unwrap();
        let table = &scenario.tables[0];
        let result = run_row(&scenario, table, &table.rows[0], Length::Full, 1).unwrap();
        let [small, large, large_min] = result.values[..] else {
            panic!("three columns")
        };
        assert!(small > 0.0);
        let ratio = large / small;
        assert!((3.5..4.5).contains(&ratio), "{large} / {small}");
        assert!(large_min <= large, "{large_min} > {large}");
    }

    /// `$mb_memory` in a scenario's job file is the row's simulated memory (`mem`), not a
    /// fixed figure: a job sized in proportion to memory takes twice as long at twice it.
    #[test]
    fn mb_memory_follows_the_rows_mem() {
        let dir = iosched_workload::scratch::ScratchDir::new("mbmem");
        std::fs::write(
            dir.join("job.fio"),
            "[j]\nrw=read\nbs=64k\ndirect=1\nsize=$mb_memory*65536\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("scenario.json"),
            r#"{ "seed": "9", "title": "x", "source": "y", "tables": [{ "id": "t",
                "title": "T", "device": "fixed", "jobfiles": ["job.fio"], "unit": "s",
                "columns": [ { "header": "s", "metric": "job_seconds_max:j" } ],
                "rows": [
                    { "label": "64m", "scheduler": "noop", "set": { "mem": "64m" },
                      "seed_values": [null] },
                    { "label": "128m", "scheduler": "noop", "set": { "mem": "128m" },
                      "seed_values": [null] }
                ] }] }"#,
        )
        .unwrap();
        let scenario = Scenario::load(&dir).unwrap();
        let table = &scenario.tables[0];
        let small = run_row(&scenario, table, &table.rows[0], Length::Full, 1).unwrap();
        let large = run_row(&scenario, table, &table.rows[1], Length::Full, 1).unwrap();
        let ratio = large.values[0] / small.values[0];
        assert!((1.8..2.2).contains(&ratio), "{ratio}");
    }
}
