//! The numbers a seed table reports, computed from a run's outcome (the driver's, whichever
//! backend ran it).
//!
//! Names used in scenario files:
//! * `aggregate_mb_s` — the sum over processes of each one's bytes / its own run time
//!   (what adding up aio-stress's per-process "MB/s" lines gives);
//! * `total_mb_s` — all bytes / the run's time (to the last job's end);
//! * `group_mb_s:PATH` — bytes of the processes in cgroup `PATH` (e.g. `/top-app`) / run time;
//! * `job_mb_s:NAME` — bytes of job `NAME`'s clones / the time from the first clone's start
//!   to the last one's end (jobs run one after another under `stonewall` are timed alone);
//! * `job_kib_s:NAME` — the same in KiB/s, as iozone prints it;
//! * `job_ops_s:NAME` — I/Os (reads, writes, trims, syncs) of the job per second of its span;
//! * `job_seconds_min:NAME`, `job_seconds_mean:NAME`, `job_seconds_max:NAME` — the time each
//!   of job `NAME`'s clones took from its start to its end, in seconds: the shortest, the
//!   mean, the longest (a completion-time test such as seed 003's gitk);
//! * `util_pct` — device utilisation;
//! * `usr_cpu_pct`, `sys_cpu_pct` — fio's `usr_cpu`/`sys_cpu` of all clones as one
//!   `group_reporting` group (CPU time over the summed runtimes; 0 without a `cpu_era`).
//!
//! MB is 10^6 bytes, as the seeds' tools (dd, dbench) and fio's "MB/s" count it; KiB is
//! 1024 bytes (iozone's "KB").

use std::fmt;

use iosched_driver::Outcome;

/// A decimal megabyte, as fio's and dd's "MB/s" count it.
const MB: f64 = 1e6;

/// A metric that cannot be computed on this outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricError {
    /// Not one of the names above.
    Unknown(String),
    /// `group_mb_s:PATH` where no process runs in cgroup `PATH`.
    NoCgroup { metric: String, cgroup: String },
    /// `job_…:NAME` where the job files have no job `NAME`.
    NoJob { metric: String, job: String },
}

impl fmt::Display for MetricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricError::Unknown(metric) => write!(f, "unknown metric '{metric}'"),
            MetricError::NoCgroup { metric, cgroup } => {
                write!(f, "metric '{metric}': no process runs in cgroup {cgroup}")
            }
            MetricError::NoJob { metric, job } => {
                write!(f, "metric '{metric}': no job named {job}")
            }
        }
    }
}

impl std::error::Error for MetricError {}

fn clone_bytes(outcome: &Outcome, clone: usize) -> u64 {
    outcome.clones[clone]
        .dirs
        .iter()
        .map(|dir| dir.io_bytes)
        .sum()
}

/// Evaluates `metric` on `outcome`; `job_names[i]` is the name of job `i`.
pub fn evaluate(metric: &str, outcome: &Outcome, job_names: &[String]) -> Result<f64, MetricError> {
    let seconds = outcome.end_ns.max(1) as f64 / 1e9;
    let sum_where = |keep: &dyn Fn(usize) -> bool| -> f64 {
        (0..outcome.clones.len())
            .filter(|&clone| keep(clone))
            .map(|clone| clone_bytes(outcome, clone) as f64)
            .sum::<f64>()
    };
    if metric == "aggregate_mb_s" {
        return Ok((0..outcome.clones.len())
            .map(|clone| {
                let stats = &outcome.clones[clone];
                let runtime = (stats.end_ns - stats.start_ns).max(1) as f64 / 1e9;
                clone_bytes(outcome, clone) as f64 / MB / runtime
            })
            .sum());
    }
    if metric == "total_mb_s" {
        return Ok(sum_where(&|_| true) / MB / seconds);
    }
    if metric == "util_pct" {
        return Ok(outcome.disk.util_pct);
    }
    if metric == "usr_cpu_pct" || metric == "sys_cpu_pct" {
        let (mut weighted, mut runtime) = (0.0, 0.0);
        for stats in &outcome.clones {
            let own = (stats.end_ns - stats.start_ns) as f64;
            let pct = match metric {
                "usr_cpu_pct" => stats.usr_cpu,
                _ => stats.sys_cpu,
            };
            weighted += pct * own;
            runtime += own;
        }
        return Ok(if runtime > 0.0 {
            weighted / runtime
        } else {
            0.0
        });
    }
    if let Some(path) = metric.strip_prefix("group_mb_s:") {
        if !outcome.clone_cgroups.iter().any(|cgroup| cgroup == path) {
            return Err(MetricError::NoCgroup {
                metric: metric.to_string(),
                cgroup: path.to_string(),
            });
        }
        return Ok(sum_where(&|clone| outcome.clone_cgroups[clone] == path) / MB / seconds);
    }
    for (prefix, fold) in [
        ("job_seconds_min:", Fold::Min),
        ("job_seconds_mean:", Fold::Mean),
        ("job_seconds_max:", Fold::Max),
    ] {
        let Some(name) = metric.strip_prefix(prefix) else {
            continue;
        };
        let seconds: Vec<f64> = job_clones(metric, name, outcome, job_names)?
            .into_iter()
            .map(|clone| {
                let stats = &outcome.clones[clone];
                (stats.end_ns - stats.start_ns) as f64 / 1e9
            })
            .collect();
        return Ok(fold.apply(&seconds));
    }
    for (prefix, scale) in [
        ("job_mb_s:", MB),
        ("job_kib_s:", 1024.0),
        ("job_ops_s:", 0.0),
    ] {
        let Some(name) = metric.strip_prefix(prefix) else {
            continue;
        };
        let clones = job_clones(metric, name, outcome, job_names)?;
        let start = clones.iter().map(|&c| outcome.clones[c].start_ns).min();
        let end = clones.iter().map(|&c| outcome.clones[c].end_ns).max();
        let span = (end.unwrap_or(0) - start.unwrap_or(0)).max(1) as f64 / 1e9;
        if scale == 0.0 {
            let ops: u64 = clones
                .iter()
                .map(|&c| {
                    let stats = &outcome.clones[c];
                    stats.dirs.iter().map(|d| d.total_ios).sum::<u64>() + stats.sync.count()
                })
                .sum();
            return Ok(ops as f64 / span);
        }
        return Ok(clones
            .iter()
            .map(|&c| clone_bytes(outcome, c) as f64)
            .sum::<f64>()
            / scale
            / span);
    }
    Err(MetricError::Unknown(metric.to_string()))
}

/// The clones of job `name`.
fn job_clones(
    metric: &str,
    name: &str,
    outcome: &Outcome,
    job_names: &[String],
) -> Result<Vec<usize>, MetricError> {
    let Some(job) = job_names.iter().position(|job| job == name) else {
        return Err(MetricError::NoJob {
            metric: metric.to_string(),
            job: name.to_string(),
        });
    };
    Ok((0..outcome.clones.len())
        .filter(|&clone| outcome.clone_jobs[clone] == job)
        .collect())
}

/// How per-clone figures become one.
#[derive(Clone, Copy)]
enum Fold {
    Min,
    Mean,
    Max,
}

impl Fold {
    fn apply(self, values: &[f64]) -> f64 {
        match self {
            Fold::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
            Fold::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Fold::Mean => values.iter().sum::<f64>() / values.len().max(1) as f64,
        }
    }
}
