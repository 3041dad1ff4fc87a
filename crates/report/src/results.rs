//! Per-clone statistics of a finished run (either driver) turned into fio's per-job entries:
//! one entry per job clone, or one per reporting group when its jobs asked for
//! `group_reporting`.

use iosched_workload::JobSet;

use crate::stats::{DiskStats, JobStats, RunResult};

pub use iosched_workload::processes::FIRST_PID;

/// The entries fio would print: `clones[i]` ran job `clone_jobs[i]` of `jobs`. The clones'
/// figures become the entries (copying 4096 clones' histograms cost about 1.7 K
/// instructions each).
pub fn job_entries(
    mut clones: Vec<JobStats>,
    clone_jobs: &[usize],
    jobs: &JobSet,
) -> Vec<JobStats> {
    assert_eq!(clones.len(), clone_jobs.len(), "one job index per clone");
    // Compacted in place: without `group_reporting` no record moves (issue 34: 4096
    // clones' ~2 KiB records were each copied twice into a new vector).
    let mut kept = 0;
    // Index of the merged entry of each reporting group that uses group_reporting.
    let mut group_entry: Vec<(u32, usize)> = Vec::new();
    for clone in 0..clones.len() {
        let spec = &jobs.jobs[clone_jobs[clone]];
        let stats = &mut clones[clone];
        stats.options = spec.options.clone();
        stats.pid = FIRST_PID + clone as u32;
        if spec.group_reporting {
            if let Some(&(_, index)) = group_entry.iter().find(|(g, _)| *g == spec.group_id) {
                // `index < kept <= clone`: the entry lies before this clone.
                let (entries, rest) = clones.split_at_mut(clone);
                entries[index].merge(&rest[0]);
                continue;
            }
            group_entry.push((spec.group_id, kept));
        }
        if kept != clone {
            clones.swap(kept, clone);
        }
        kept += 1;
    }
    clones.truncate(kept);
    clones
}

/// A [`RunResult`] with everything but the caller's `iosched` object filled in.
pub fn run_result(
    clones: Vec<JobStats>,
    clone_jobs: &[usize],
    jobs: &JobSet,
    disk: &DiskStats,
) -> RunResult {
    let mut run = RunResult {
        global_options: jobs.global_options.clone(),
        jobs: job_entries(clones, clone_jobs, jobs),
        disks: vec![disk.clone()],
        ..RunResult::default()
    };
    run.banner = crate::fio_banner::banner(jobs, &run.fio_version);
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_workload::JobSpec;

    #[test]
    fn group_reporting_merges_a_groups_clones_into_one_entry() {
        let mut grouped = JobSpec::new("g");
        grouped.group_reporting = true;
        let alone = JobSpec::new("alone");
        let jobs = JobSet {
            jobs: vec![grouped, alone],
            ..JobSet::default()
        };
        let mut a = JobStats::new("g", 0, &[50.0]);
        a.record_io(0, 4096, 0, 0, 10);
        let b = a.clone();
        let c = JobStats::new("alone", 0, &[50.0]);
        let entries = job_entries(vec![a, b, c], &[0, 0, 1], &jobs);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].dirs[0].io_bytes, 8192);
        assert_eq!(entries[1].pid, FIRST_PID + 2);
    }
}
