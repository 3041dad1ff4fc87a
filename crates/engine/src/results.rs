//! Turns a finished run into fio-shaped results, exactly as the simulator does: one entry per
//! job clone, or per reporting group when its jobs asked for `group_reporting`.

use iosched_report::stats::{JobStats, RunResult};
use iosched_workload::JobSet;

use crate::engine::EngineOutcome;

/// The per-job entries fio would print for `jobs`.
pub fn job_entries(outcome: &EngineOutcome, jobs: &JobSet) -> Vec<JobStats> {
    let mut entries: Vec<JobStats> = Vec::new();
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
pub fn run_result(outcome: &EngineOutcome, jobs: &JobSet) -> RunResult {
    RunResult {
        global_options: jobs.global_options.clone(),
        jobs: job_entries(outcome, jobs),
        disks: vec![outcome.disk.clone()],
        ..RunResult::default()
    }
}
