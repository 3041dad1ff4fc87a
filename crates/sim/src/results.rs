//! Turns a finished simulation into fio-shaped results: one entry per job clone, or per
//! reporting group when its jobs asked for `group_reporting`.

use iosched_report::stats::{JobStats, RunResult};
use iosched_workload::JobSet;

use crate::simulation::SimOutcome;

/// The per-job entries fio would print for `jobs`, from a simulation's clones.
pub fn job_entries(outcome: &SimOutcome, jobs: &JobSet) -> Vec<JobStats> {
    let mut entries: Vec<JobStats> = Vec::new();
    // Index of the merged entry of each reporting group that uses group_reporting.
    let mut group_entry: Vec<(u32, usize)> = Vec::new();
    for (clone, stats) in outcome.clones.iter().enumerate() {
        let spec = &jobs.jobs[outcome.clone_jobs[clone]];
        let mut stats = stats.clone();
        stats.options = spec.options.clone();
        stats.pid = 1000 + clone as u32;
        if spec.group_reporting {
            if let Some(&(_, index)) = group_entry.iter().find(|(g, _)| *g == spec.group_id) {
                entries[index].merge(&stats);
                continue;
            }
            group_entry.push((spec.group_id, entries.len()));
        }
        entries.push(stats);
    }
    entries
}

/// A [`RunResult`] with everything but the caller's `iosched` object filled in.
pub fn run_result(outcome: &SimOutcome, jobs: &JobSet) -> RunResult {
    RunResult {
        global_options: jobs.global_options.clone(),
        jobs: job_entries(outcome, jobs),
        disks: vec![outcome.disk.clone()],
        ..RunResult::default()
    }
}
