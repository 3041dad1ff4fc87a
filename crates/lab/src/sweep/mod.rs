//! `iosched sweep SPEC.toml`: the cartesian product of job files × devices × schedulers ×
//! `--set` values × job-file variables × seeds, each point one [`RunSpec`] run by
//! [`crate::run::execute`] exactly as `iosched run` runs it, spread over the local work queue
//! ([`crate::pool`]), and folded into one tidy table ([`table`]): a row per run and job, per
//! run and cgroup where the jobs name cgroups, and per run for the total, every input a
//! column.
//!
//! The figures do not depend on the number of workers: each point is seeded by its own
//! `seed` input and the rows keep the order of the points (the last input varying fastest).

pub mod estimate;
pub mod spec;
pub mod table;
pub mod wire;

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use iosched_driver::spec::{RunSpec, Setting, Target};
use iosched_workload::fio::JobSource;
use serde_json::Value;

use crate::run::{self, CommandLine, Hooks, RunError, WallClock};
pub use spec::{Axis, AxisKind, SpecError, SweepSpec};

/// What a row describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// One entry of fio's `jobs` (a clone, or a reporting group).
    Job,
    /// One cgroup's processes together.
    Cgroup,
    /// Every process of the run.
    Total,
}

impl RowKind {
    pub fn name(self) -> &'static str {
        match self {
            RowKind::Job => "job",
            RowKind::Cgroup => "cgroup",
            RowKind::Total => "total",
        }
    }
}

/// One row of the table: a run (its point) and one job, cgroup or the total.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    /// The point's index ([`SweepSpec::point`] gives its inputs).
    pub point: usize,
    pub kind: RowKind,
    /// The job's name (`name#2` for a repeated one), the cgroup's path, or `total`.
    pub name: String,
    /// Decimal megabytes per second, as fio's "MB/s": a job's over its runtime, a cgroup's
    /// and the total over the run's time (to the last job's end).
    pub bw_mb_s: f64,
    pub iops: f64,
    /// Completion latency of a job's busier direction, in microseconds.
    pub clat_mean_us: Option<f64>,
    pub clat_p50_us: Option<f64>,
    pub clat_p99_us: Option<f64>,
    /// A cgroup's share of the run's bytes (a fraction of 1).
    pub share: Option<f64>,
    /// The share its weight entitles it to, for schedulers that aim at weights (cfq, bfq).
    pub ideal_share: Option<f64>,
    /// A signal stopped the row's run: its figures cover the run up to there.
    pub interrupted: bool,
}

/// What a sweep measured: the rows of every point that ran, in point order.
#[derive(Clone, Debug, PartialEq)]
pub struct Swept {
    pub rows: Vec<SweepRow>,
    /// A signal stopped the sweep: the points running then are cut short (their rows say
    /// so) and the points not yet started have no rows.
    pub interrupted: bool,
}

/// A point that could not run: its inputs and why.
#[derive(Debug)]
pub struct SweepError {
    /// `device=ufs31 scheduler=cfq ...`.
    pub point: String,
    pub error: Box<RunError>,
}

impl fmt::Display for SweepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "run {}: {}", self.point, self.error)
    }
}

// Display already carries the inner error's message: no `source()`.
impl std::error::Error for SweepError {}

impl SweepError {
    /// Bad input (a job file, a device, a tunable) rather than a failed run.
    pub fn is_input(&self) -> bool {
        self.error.is_input()
    }
}

/// The `index`-th point's inputs as `name=value` words.
pub fn describe(sweep: &SweepSpec, index: usize) -> String {
    let picks = sweep.point(index);
    sweep
        .axes
        .iter()
        .zip(picks)
        .map(|(axis, pick)| format!("{}={}", axis.name, axis.values[pick]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The run description of point `index`: what `iosched run` builds from the same job file,
/// `--device`, `--scheduler`, `--set`s, variables and `--seed`.
pub fn run_spec(sweep: &SweepSpec, index: usize) -> Result<RunSpec, SweepError> {
    let failed = |error| SweepError {
        point: describe(sweep, index),
        error: Box::new(error),
    };
    let picks = sweep.point(index);
    let mut settings = Vec::new();
    let mut env = Vec::new();
    let (mut jobfile, mut device, mut scheduler, mut seed) = ("", "", "", 1);
    for (axis, &pick) in sweep.axes.iter().zip(&picks) {
        let value = &axis.values[pick];
        match axis.kind {
            AxisKind::JobFile => jobfile = value,
            AxisKind::Device => device = value,
            AxisKind::Scheduler => scheduler = value,
            AxisKind::Seed => seed = value.parse().expect("seeds are read as numbers"),
            AxisKind::Set => settings.push(Setting {
                name: axis.name.clone(),
                value: value.clone(),
            }),
            AxisKind::Env => env.push((axis.name.clone(), value.clone())),
        }
    }
    // A scheduler entry may carry its own settings: "cfq slice_idle=0".
    let entry = scheduler;
    let mut words = entry.split_whitespace();
    let scheduler = words.next().unwrap_or_default();
    let mut own = Vec::new();
    for word in words {
        own.push(Setting::parse(word).ok_or_else(|| {
            failed(RunError::Knob(format!(
                "scheduler '{entry}': '{word}' is not KEY=VALUE"
            )))
        })?);
    }
    settings.splice(0..0, own);
    let jobs = JobSource::read(std::path::Path::new(jobfile))
        .map_err(|error| failed(RunError::Parse(error)))?;
    let referenced: BTreeSet<String> = iosched_workload::fio::env_references(&jobs.text)
        .into_iter()
        .collect();
    let mut spec = run::spec_from(CommandLine {
        jobs: vec![jobs],
        device: device.to_string(),
        scheduler: scheduler.to_string(),
        settings,
        mem: None,
        seed,
        uptime_s: sweep.uptime_s,
        check: false,
        force: false,
        outputs: Default::default(),
    })
    .map_err(failed)?;
    // The sweep's variables stand where `iosched run` reads the environment's.
    for (name, value) in env {
        if referenced.contains(&name) {
            spec.machine.env.insert(name, value);
        }
    }
    Ok(spec)
}

/// Runs every point on `workers` threads (0: one per CPU), `step()` after each; the rows come
/// back in point order. The first failure in point order is the error; once one point fails
/// the points not yet started are skipped. Once `stop` is set (a signal) the running points
/// stop at their next event and no other starts.
pub fn run(
    sweep: &SweepSpec,
    workers: usize,
    step: &(dyn Fn() + Sync),
    stop: &AtomicBool,
) -> Result<Swept, SweepError> {
    let specs = specs(sweep)?;
    run_rest(sweep, &specs, Vec::new(), workers, step, stop)
}

/// Every point's run description, in point order.
pub fn specs(sweep: &SweepSpec) -> Result<Vec<RunSpec>, SweepError> {
    (0..sweep.point_count())
        .map(|index| run_spec(sweep, index))
        .collect()
}

/// [`run`] of `specs` (from [`specs`]), the points in `done` already measured (the
/// [`estimate::pilot`]'s: `(point, rows)`), so that they do not run twice.
pub fn run_rest(
    sweep: &SweepSpec,
    specs: &[RunSpec],
    done: Vec<(usize, Vec<SweepRow>)>,
    workers: usize,
    step: &(dyn Fn() + Sync),
    stop: &AtomicBool,
) -> Result<Swept, SweepError> {
    let workers = workers_for(specs, workers);
    let failed = AtomicBool::new(false);
    let mut done: std::collections::BTreeMap<usize, Vec<SweepRow>> = done.into_iter().collect();
    let indexed: Vec<(usize, &RunSpec)> = specs
        .iter()
        .enumerate()
        .filter(|(index, _)| !done.contains_key(index))
        .collect();
    let results = crate::pool::map_in_order(
        &indexed,
        workers,
        |(index, spec)| {
            if failed.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
                return None;
            }
            let rows = measure(*index, spec, stop).map_err(|error| SweepError {
                point: describe(sweep, *index),
                error: Box::new(error),
            });
            if rows.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            Some(rows.map(|measured| measured.rows))
        },
        step,
    );
    let mut first_error = None;
    for ((index, _), result) in indexed.iter().zip(results) {
        match result {
            Some(Ok(point_rows)) => {
                done.insert(*index, point_rows);
            }
            Some(Err(error)) => {
                first_error.get_or_insert(error);
            }
            None => {}
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(Swept {
            rows: done.into_values().flatten().collect(),
            interrupted: stop.load(Ordering::Relaxed),
        }),
    }
}

/// `workers`, or 1 when a point runs on a real file or device: two at once would measure
/// each other.
pub(crate) fn workers_for(specs: &[RunSpec], workers: usize) -> usize {
    if specs.iter().any(|s| !s.target.is_simulated()) {
        1
    } else {
        workers
    }
}

/// One point's rows and the requests its device served (what a sweep's cost scales with).
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub rows: Vec<SweepRow>,
    pub requests: u64,
}

/// Runs point `point` (its description `spec`) quietly and reads its rows: what each worker
/// of a sweep does, here or on a remote worker (the Python package's Dask sweep).
pub fn measure(point: usize, spec: &RunSpec, stop: &AtomicBool) -> Result<Measured, RunError> {
    let mut hooks = Hooks {
        notify: &mut |_| {},
        progress: &mut |_| {},
        stop,
    };
    let mut finished = run::execute(spec, &mut hooks)?;
    if let Some(error) = std::mem::take(&mut finished.log_errors).into_iter().next() {
        return Err(error);
    }
    let disk = &finished.outcome().disk;
    let requests = disk.read_ios + disk.write_ios;
    Ok(Measured {
        rows: rows(point, spec, &finished),
        requests,
    })
}

/// A finished run's rows as point `point` of a sweep: a row per job, per cgroup where the
/// jobs name cgroups, and the total (what `iosched.Result.to_pandas()` shows too).
pub fn rows(point: usize, spec: &RunSpec, finished: &run::Finished) -> Vec<SweepRow> {
    let results = finished.results(spec, WallClock::default());
    let json = iosched_report::fio_json::to_value(&results.run);
    let mut rows = job_rows(point, &json);
    let outcome = finished.outcome();
    let aims = iosched_report::shares::aims_for_weights(&spec.scheduler);
    rows.extend(group_rows(point, outcome, &json, aims));
    let interrupted = finished.interrupted();
    for row in &mut rows {
        row.interrupted = interrupted;
    }
    rows
}

/// A row per entry of fio's `jobs`, read as `iosched compare` reads it.
fn job_rows(point: usize, json: &Value) -> Vec<SweepRow> {
    iosched_report::compare::figures(json)
        .jobs
        .into_iter()
        .map(|(name, figures)| SweepRow {
            point,
            kind: RowKind::Job,
            name,
            bw_mb_s: figures.bw_bytes / 1e6,
            iops: figures.iops,
            clat_mean_us: figures.clat_mean_us,
            clat_p50_us: figures.clat_p50_us,
            clat_p99_us: figures.clat_p99_us,
            share: None,
            ideal_share: None,
            interrupted: false,
        })
        .collect()
}

/// A row per cgroup (when any job names one) and the total, over the run's time: the figures
/// `reproduce`'s `group_mb_s:PATH` and `total_mb_s` give.
fn group_rows(
    point: usize,
    outcome: &iosched_driver::Outcome,
    json: &Value,
    aims_for_weights: bool,
) -> Vec<SweepRow> {
    let seconds = outcome.end_ns.max(1) as f64 / 1e9;
    let sum = |keep: &dyn Fn(usize) -> bool, ios: bool| -> f64 {
        (0..outcome.clones.len())
            .filter(|&clone| keep(clone))
            .map(|clone| {
                let dirs = &outcome.clones[clone].dirs;
                if ios {
                    dirs.iter().map(|d| d.total_ios).sum::<u64>() as f64
                } else {
                    dirs.iter().map(|d| d.io_bytes).sum::<u64>() as f64
                }
            })
            .sum::<f64>()
    };
    let row = |kind, name: &str, keep: &dyn Fn(usize) -> bool| SweepRow {
        point,
        kind,
        name: name.to_string(),
        bw_mb_s: sum(keep, false) / 1e6 / seconds,
        iops: sum(keep, true) / seconds,
        clat_mean_us: None,
        clat_p50_us: None,
        clat_p99_us: None,
        share: None,
        ideal_share: None,
        interrupted: false,
    };
    let mut rows = Vec::new();
    if outcome.clone_cgroups.iter().any(|path| path != "/") {
        for group in json["iosched"]["cgroups"].as_array().into_iter().flatten() {
            let path = group["path"].as_str().unwrap_or("?");
            let mut row = row(RowKind::Cgroup, path, &|c| outcome.clone_cgroups[c] == path);
            row.share = group["share"].as_f64();
            row.ideal_share = group["ideal_share"].as_f64().filter(|_| aims_for_weights);
            rows.push(row);
        }
    }
    rows.push(row(RowKind::Total, "total", &|_| true));
    rows
}

/// Whether any point runs on a real target (the progress bar says "runs", not "simulations").
pub fn has_real_target(sweep: &SweepSpec) -> bool {
    sweep
        .axes
        .iter()
        .filter(|axis| axis.kind == AxisKind::Device)
        .flat_map(|axis| &axis.values)
        .any(|device| !Target::from_device_arg(device).is_simulated())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two schedulers × two seeds of two direct readers in two cgroups: a job row per job, a
    /// cgroup row per group, a total per run, in point order; the ideal share only for cfq;
    /// the same rows whatever the number of workers.
    #[test]
    fn rows_cover_jobs_groups_and_totals_in_point_order() {
        let dir = iosched_workload::scratch::ScratchDir::new("sweep-rows");
        std::fs::write(
            dir.join("two.fio"),
            "[global]\nrw=read\nbs=64k\ndirect=1\nsize=${SIZE}\n\
             [a]\ncgroup=a\ncgroup_weight=800\n[b]\ncgroup=b\ncgroup_weight=200\n",
        )
        .unwrap();
        let text = "jobs = 'two.fio'\nschedulers = ['noop', 'cfq']\nseeds = [1, 2]\n\
                    devices = 'hdd-7200'\n[env]\nSIZE = '2m'\n";
        let spec = SweepSpec::parse(&dir.join("s.toml"), text).unwrap();
        let rows = run(&spec, 2, &|| {}, &AtomicBool::new(false)).unwrap().rows;
        assert_eq!(rows.len(), 4 * 5, "two jobs, two groups, one total per run");
        let kinds: Vec<_> = rows[..5]
            .iter()
            .map(|r| (r.kind, r.name.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (RowKind::Job, "a"),
                (RowKind::Job, "b"),
                (RowKind::Cgroup, "/a"),
                (RowKind::Cgroup, "/b"),
                (RowKind::Total, "total")
            ]
        );
        assert!(rows.iter().all(|r| r.bw_mb_s > 0.0));
        let points: Vec<_> = rows.iter().map(|r| r.point).collect();
        assert!(points.windows(2).all(|w| w[0] <= w[1]));
        let ideal = |point: usize| {
            rows.iter()
                .find(|r| r.point == point && r.kind == RowKind::Cgroup)
        };
        assert_eq!(
            ideal(0).unwrap().ideal_share,
            None,
            "noop aims at no weights"
        );
        assert_eq!(ideal(2).unwrap().ideal_share, Some(0.8));
        // Each group's bytes are its job's: 2 MiB each, so equal shares.
        assert_eq!(ideal(2).unwrap().share, Some(0.5));
        assert_eq!(
            run(&spec, 1, &|| {}, &AtomicBool::new(false)).unwrap().rows,
            rows
        );
    }

    /// A scheduler entry's own settings reach its run: two sequential readers on a disk are
    /// far faster with CFQ's idling than with `slice_idle=0`; a word that is not KEY=VALUE
    /// is refused.
    #[test]
    fn a_scheduler_entry_carries_its_settings() {
        let dir = iosched_workload::scratch::ScratchDir::new("sweep-entry");
        std::fs::write(
            dir.join("two.fio"),
            "[global]\nrw=read\nbs=64k\ndirect=1\nruntime=1\ntime_based\nsize=64m\n[a]\n[b]\n",
        )
        .unwrap();
        let text = "jobs = 'two.fio'\ndevices = 'hdd-7200'\n\
                    schedulers = ['cfq', 'cfq slice_idle=0']\n";
        let spec = SweepSpec::parse(&dir.join("s.toml"), text).unwrap();
        let rows = run(&spec, 0, &|| {}, &AtomicBool::new(false)).unwrap().rows;
        let total = |point| {
            rows.iter()
                .find(|r| r.point == point && r.kind == RowKind::Total)
                .unwrap()
                .bw_mb_s
        };
        assert!(total(0) > 3.0 * total(1), "{} vs {}", total(0), total(1));
        let bad = text.replace("slice_idle=0", "slice_idle");
        let spec = SweepSpec::parse(&dir.join("s.toml"), &bad).unwrap();
        let error = run(&spec, 0, &|| {}, &AtomicBool::new(false))
            .unwrap_err()
            .to_string();
        assert!(error.contains("'slice_idle' is not KEY=VALUE"), "{error}");
    }

    /// A point that cannot run names its inputs and the reason.
    #[test]
    fn a_bad_point_names_its_inputs() {
        let dir = iosched_workload::scratch::ScratchDir::new("sweep-bad");
        std::fs::write(dir.join("j.fio"), "[j]\nrw=read\nsize=1m\n").unwrap();
        let text = "jobs = 'j.fio'\nschedulers = 'cfq'\n[set]\nslice_idel = [0, 8]\n";
        let spec = SweepSpec::parse(&dir.join("s.toml"), text).unwrap();
        let error = run(&spec, 1, &|| {}, &AtomicBool::new(false)).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("scheduler=cfq slice_idel=0"), "{message}");
        assert!(message.contains("slice_idel"), "{message}");
        assert!(error.is_input(), "{message}");
    }
}
