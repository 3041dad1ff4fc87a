//! The numbers a seed table reports, computed from a simulation's outcome.
//!
//! Names used in scenario files:
//! * `aggregate_mb_s` — the sum over processes of each one's bytes / its own run time
//!   (what adding up aio-stress's per-process "MB/s" lines gives), MB = 2^20 bytes;
//! * `total_mb_s` — all bytes / the run's simulated time;
//! * `group_mb_s:PATH` — bytes of the processes in cgroup `PATH` (e.g. `/top-app`) / run time;
//! * `job_mb_s:NAME` — bytes of job `NAME`'s clones / run time;
//! * `util_pct` — device utilisation.

use crate::simulation::SimOutcome;

const MB: f64 = (1u64 << 20) as f64;

fn clone_bytes(outcome: &SimOutcome, clone: usize) -> u64 {
    outcome.clones[clone]
        .dirs
        .iter()
        .map(|dir| dir.io_bytes)
        .sum()
}

/// Evaluates `metric` on `outcome`; `job_names[i]` is the name of job `i`.
pub fn evaluate(metric: &str, outcome: &SimOutcome, job_names: &[String]) -> Result<f64, String> {
    let seconds = outcome.sim_time_ns.max(1) as f64 / 1e9;
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
    if let Some(path) = metric.strip_prefix("group_mb_s:") {
        if !outcome.clone_cgroups.iter().any(|cgroup| cgroup == path) {
            return Err(format!(
                "metric '{metric}': no process runs in cgroup {path}"
            ));
        }
        return Ok(sum_where(&|clone| outcome.clone_cgroups[clone] == path) / MB / seconds);
    }
    if let Some(name) = metric.strip_prefix("job_mb_s:") {
        let Some(job) = job_names.iter().position(|job| job == name) else {
            return Err(format!("metric '{metric}': no job named {name}"));
        };
        return Ok(sum_where(&|clone| outcome.clone_jobs[clone] == job) / MB / seconds);
    }
    Err(format!("unknown metric '{metric}'"))
}
