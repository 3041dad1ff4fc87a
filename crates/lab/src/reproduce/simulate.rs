//! One seed table's simulations: the job-file variables and knobs of a row, the column
//! groups that share one simulation, and the list of every simulation to run.
//!
//! A row's columns that read the same job variables share one simulation; a column with its
//! own (seed 003's thread counts) is simulated on its own. Each simulation is described as a
//! [`RunSpec`] ([`spec`]) and run by [`crate::run::execute`], the path `iosched run --device
//! PRESET` takes, so a row's spec written as JSON is a run `iosched run --spec` repeats.
//! [`runs`] lists every (scenario, table, row, column group) in print order: the unit of
//! parallel work.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::AtomicBool;

use iosched_core::{DEFAULT_UPTIME_NS, NSEC_PER_SEC};
use iosched_driver::spec::{Machine, RunSpec, Setting, Target, RUN_SPEC_VERSION};
use iosched_driver::Outcome;
use iosched_sim::device::presets;
use iosched_sim::fs::FsConfig;
use iosched_workload::fio::{JobSource, ParseContext, ParseError};

use super::metrics::{self, MetricError};
use super::scenario::{Row, Scenario, Table};
use super::{Length, RowResult};
use crate::run::{self, BackendOutcome, Hooks};

/// Why one simulation of a row gave no figures.
#[derive(Debug)]
pub enum SimulateError {
    /// The row's machine knobs (`mem`, `cpus`, `flusher`...) are not valid.
    Machine(String),
    /// A job file of the table cannot be read.
    JobFile(Box<ParseError>),
    /// The table names a device preset that does not exist.
    NoDevice(String),
    /// The run refused the row (job files, scheduler, tunable) or never finished.
    Run(Box<run::RunError>),
    /// A column's metric cannot be computed on the outcome.
    Metric(MetricError),
    /// A signal stopped the simulation, or came before it started: no figure.
    Interrupted,
}

impl fmt::Display for SimulateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimulateError::Machine(message) => write!(f, "{message}"),
            SimulateError::JobFile(error) => write!(f, "{error}"),
            SimulateError::NoDevice(name) => write!(f, "no device preset '{name}'"),
            SimulateError::Run(error) => write!(f, "{error}"),
            SimulateError::Metric(error) => write!(f, "{error}"),
            SimulateError::Interrupted => write!(f, "interrupted"),
        }
    }
}

// Display already carries the inner error's message: no `source()`, so that a chain
// printed with `{:#}` does not say it twice.
impl std::error::Error for SimulateError {}

/// A [`SimulateError`] with the scenario, table and row it happened in.
#[derive(Debug)]
pub struct RowError {
    pub seed: String,
    pub table: String,
    pub row: String,
    pub error: Box<SimulateError>,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "scenario {} table '{}' row '{}': {}",
            self.seed, self.table, self.row, self.error
        )
    }
}

// Display already carries the inner error's message: no `source()`, so that a chain
// printed with `{:#}` does not say it twice.
impl std::error::Error for RowError {}

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

/// How [`run_group`] runs its simulation.
#[derive(Clone, Copy)]
pub struct GroupOptions<'a> {
    pub length: Length,
    pub seed: u64,
    /// Set by a signal: the simulation stops at its next events, with no figures.
    pub stop: &'a AtomicBool,
}

/// Simulates one row for one column group: (column index, value) for each of its columns.
/// Errors name the scenario, table and row. Once `stop` is set (a signal) the simulation
/// stops and the group has no figures ([`SimulateError::Interrupted`]).
pub fn run_group(
    scenario: &Scenario,
    table: &Table,
    row: &Row,
    group: &[usize],
    options: &GroupOptions<'_>,
) -> Result<Vec<(usize, f64)>, RowError> {
    let GroupOptions { length, seed, stop } = *options;
    let context = |error: SimulateError| RowError {
        seed: scenario.seed.clone(),
        table: table.id.clone(),
        row: row.label.clone(),
        error: Box::new(error),
    };
    let first = *group.first().expect("a column group has a column");
    let env = run_env(table, row, &table.columns[first].env, length);
    let (outcome, job_names) = spec(scenario, table, row, env, length, seed)
        .and_then(|spec| simulate(&spec, stop))
        .map_err(context)?;
    group
        .iter()
        .map(|&index| {
            metrics::evaluate(&table.columns[index].metric, &outcome, &job_names)
                .map(|value| (index, value))
                .map_err(|error| context(SimulateError::Metric(error)))
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
) -> Result<RowResult, RowError> {
    let mut values = vec![0.0; table.columns.len()];
    let never = AtomicBool::new(false);
    let options = GroupOptions {
        length,
        seed,
        stop: &never,
    };
    for group in column_groups(table) {
        for (index, value) in run_group(scenario, table, row, &group, &options)? {
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

/// The run description of one simulation of a row's job files with these variables.
pub fn spec(
    scenario: &Scenario,
    table: &Table,
    row: &Row,
    env: BTreeMap<String, String>,
    length: Length,
    seed: u64,
) -> Result<RunSpec, SimulateError> {
    // Writeback and file-system knobs (`flusher`, `dirty_ratio`, `mem`, `barrier`...) go to
    // the simulated kernel; everything else is a scheduler tunable.
    let mut set = table.machine.clone();
    set.extend(row.set.clone());
    if length == Length::Short {
        set.extend(table.short_set.clone());
    }
    let (knobs, tunables): (Vec<_>, Vec<_>) = set
        .into_iter()
        .map(|(name, value)| Setting { name, value })
        .partition(|setting| FsConfig::is_knob(&setting.name));
    // `$mb_memory` and `$ncpus` in a job file describe the simulated machine of the row.
    let pairs: Vec<_> = knobs
        .iter()
        .map(|s| (s.name.clone(), s.value.clone()))
        .collect();
    let machine = FsConfig::from_knobs(&pairs).map_err(SimulateError::Machine)?;
    let context = ParseContext {
        env,
        pagesize: 4096,
        mb_memory: machine.writeback.mem_bytes >> 20,
        ncpus: machine.writeback.cpus,
        ..ParseContext::default()
    };
    let jobs = table
        .jobfiles
        .iter()
        .map(|file| JobSource::read(&scenario.dir.join(file)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| SimulateError::JobFile(Box::new(error)))?;
    if !presets().iter().any(|preset| preset.name == table.device) {
        return Err(SimulateError::NoDevice(table.device.clone()));
    }
    Ok(RunSpec {
        version: RUN_SPEC_VERSION,
        machine: Machine::capture(&context, &jobs),
        jobs,
        target: Target::Preset(table.device.clone()),
        scheduler: row.scheduler.clone(),
        tunables,
        knobs,
        seed,
        // The simulator's own default, as `iosched run` starts one.
        uptime_s: DEFAULT_UPTIME_NS / NSEC_PER_SEC,
        check: false,
        force: false,
        outputs: Default::default(),
    })
}

/// Runs `spec` as `iosched run` does, quietly: the outcome and the job names. A run cut
/// short by `stop` gives no outcome: its figures would cover part of the experiment.
fn simulate(spec: &RunSpec, stop: &AtomicBool) -> Result<(Outcome, Vec<String>), SimulateError> {
    let mut hooks = Hooks {
        notify: &mut |_| {},
        progress: &mut |_| {},
        stop,
    };
    let finished =
        run::execute(spec, &mut hooks).map_err(|error| SimulateError::Run(Box::new(error)))?;
    if finished.interrupted() {
        return Err(SimulateError::Interrupted);
    }
    let job_names = finished
        .jobs
        .jobs
        .iter()
        .map(|job| job.name.clone())
        .collect();
    match finished.backend {
        BackendOutcome::Simulated { outcome, .. } => Ok((outcome.run, job_names)),
        BackendOutcome::Real { .. } => unreachable!("a preset is simulated"),
    }
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
            "[j]\nrw=read\nbs=4k\ndirect=1\nsize=${SIZE}\nnumjobs=2\n",
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

    /// A one-table scenario of a 1 MiB read job on `device`, filled by `metric`.
    fn one_column(
        name: &str,
        device: &str,
        metric: &str,
    ) -> (iosched_workload::scratch::ScratchDir, Scenario) {
        let dir = iosched_workload::scratch::ScratchDir::new(name);
        std::fs::write(dir.join("job.fio"), "[j]\nrw=read\nbs=64k\nsize=1m\n").unwrap();
        let json = r#"{ "seed": "9", "title": "x", "source": "y", "tables": [{ "id": "t",
            "title": "T", "device": "DEVICE", "jobfiles": ["job.fio"], "unit": "MB/s",
            "columns": [ { "header": "c", "metric": "METRIC" } ],
            "rows": [{ "label": "r", "scheduler": "cfq", "seed_values": [null] }] }] }"#;
        let json = json.replace("DEVICE", device).replace("METRIC", metric);
        std::fs::write(dir.join("scenario.json"), json).unwrap();
        let scenario = Scenario::load(&dir).unwrap();
        (dir, scenario)
    }

    /// A failed row says which scenario, table and row, and why, in a typed error.
    #[test]
    fn failures_name_their_row_and_kind() {
        type IsKind = fn(&SimulateError) -> bool;
        let cases: [(&str, &str, IsKind, &str); 4] = [
            (
                "fixed",
                "no_such_metric",
                |e| matches!(e, SimulateError::Metric(MetricError::Unknown(_))),
                "unknown metric 'no_such_metric'",
            ),
            (
                "fixed",
                "job_mb_s:other",
                |e| matches!(e, SimulateError::Metric(MetricError::NoJob { .. })),
                "metric 'job_mb_s:other': no job named other",
            ),
            (
                "fixed",
                "group_mb_s:/nowhere",
                |e| matches!(e, SimulateError::Metric(MetricError::NoCgroup { .. })),
                "metric 'group_mb_s:/nowhere': no process runs in cgroup /nowhere",
            ),
            (
                "floppy",
                "total_mb_s",
                |e| matches!(e, SimulateError::NoDevice(_)),
                "no device preset 'floppy'",
            ),
        ];
        for (device, metric, kind, message) in cases {
            let (_dir, scenario) = one_column("rowerr", device, metric);
            let table = &scenario.tables[0];
            let error = run_row(&scenario, table, &table.rows[0], Length::Full, 1).unwrap_err();
            assert!(kind(&error.error), "{metric}: {error:?}");
            assert_eq!(
                error.to_string(),
                format!("scenario 9 table 't' row 'r': {message}")
            );
        }
    }

    /// The metric a column names is the one computed: all bytes over the run's time for
    /// `total_mb_s` equals the one job's bytes over its span for `job_mb_s:j`, as the job
    /// runs from time 0 to the end.
    #[test]
    fn a_single_jobs_rate_is_the_total_rate() {
        let (_dir, total) = one_column("mtotal", "fixed", "total_mb_s");
        let (_dir2, job) = one_column("mjob", "fixed", "job_mb_s:j");
        let rate = |scenario: &Scenario| {
            let table = &scenario.tables[0];
            run_row(scenario, table, &table.rows[0], Length::Full, 1)
                .unwrap()
                .values[0]
        };
        let (total, job) = (rate(&total), rate(&job));
        assert!(total > 0.0);
        assert!((job / total - 1.0).abs() < 0.01, "{job} vs {total}");
    }

    /// A row's simulation is a [`RunSpec`] like any other: written as JSON and read back it
    /// runs to the same figure, and it carries the row's machine (`mem`), its tunables and
    /// only the job variables the files use.
    #[test]
    fn a_rows_spec_round_trips_to_the_same_figure() {
        let dir = iosched_workload::scratch::ScratchDir::new("rowspec");
        std::fs::write(
            dir.join("job.fio"),
            "[j]\nrw=randread\nbs=4k\nsize=${SIZE}\nnumjobs=2\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("scenario.json"),
            r#"{ "seed": "9", "title": "x", "source": "y", "tables": [{ "id": "t",
                "title": "T", "device": "hdd-7200", "jobfiles": ["job.fio"], "unit": "MB/s",
                "env": { "SIZE": "2m", "UNUSED": "x" },
                "columns": [ { "header": "c", "metric": "total_mb_s" } ],
                "rows": [{ "label": "r", "scheduler": "cfq",
                           "set": { "mem": "256m", "slice_idle": "0" },
                           "seed_values": [null] }] }] }"#,
        )
        .unwrap();
        let scenario = Scenario::load(&dir).unwrap();
        let (table, row) = (&scenario.tables[0], &scenario.tables[0].rows[0]);
        let env = run_env(table, row, &table.columns[0].env, Length::Full);
        let spec = spec(&scenario, table, row, env, Length::Full, 3).unwrap();
        assert_eq!(spec.machine.mb_memory, 256);
        assert_eq!(spec.machine.env.keys().collect::<Vec<_>>(), ["SIZE"]);
        assert_eq!(spec.tunable_pairs(), [("slice_idle".into(), "0".into())]);
        assert_eq!(spec.knob_pairs(), [("mem".into(), "256m".into())]);
        let again = RunSpec::from_json(&spec.to_json()).unwrap();
        assert_eq!(again, spec);
        let (outcome, names) = simulate(&again, &AtomicBool::new(false)).unwrap();
        let figure = metrics::evaluate("total_mb_s", &outcome, &names).unwrap();
        let row_figure = run_row(&scenario, table, row, Length::Full, 3)
            .unwrap()
            .values[0];
        assert!(figure > 0.0);
        assert_eq!(
            figure.to_bits(),
            row_figure.to_bits(),
            "{figure} vs {row_figure}"
        );
    }
}
