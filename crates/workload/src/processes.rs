//! Who runs each job clone, the same way under both drivers: its pid and I/O context, its
//! cgroup (with the job's weight) and its ioprio; and which earlier jobs each job waits for.

use std::fmt;

use iosched_core::{CgroupId, IoContextId, IoPrio, IoPrioClass};

use crate::cgroups::Cgroups;
use crate::job::JobSpec;
use crate::layout::Layout;

/// First pid handed to a clone (as if the system had been up a while).
pub const FIRST_PID: u32 = 1000;

/// The identity of one clone's process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessIdentity {
    /// Index of the clone's job.
    pub job: usize,
    pub pid: u32,
    /// Each clone is its own process (fio forks, and its threads do not share an io
    /// context), so each has its own I/O context.
    pub ioc: IoContextId,
    pub cgroup: CgroupId,
    pub ioprio: IoPrio,
}

/// One identity per clone of `layout`, in clone order, and the cgroups they named.
pub fn identities(jobs: &[JobSpec], layout: &Layout) -> (Vec<ProcessIdentity>, Cgroups) {
    let mut cgroups = Cgroups::new();
    let identities = layout
        .clones
        .iter()
        .enumerate()
        .map(|(index, plan)| {
            let spec = &jobs[plan.job];
            let cgroup = match &spec.cgroup {
                Some(path) => {
                    let id = cgroups.intern(path);
                    if let Some(weight) = spec.cgroup_weight {
                        cgroups.set_weight(id, weight);
                    }
                    id
                }
                None => CgroupId::ROOT,
            };
            let mut ioprio = spec.ioprio;
            if ioprio.class == IoPrioClass::None {
                // The kernel derives the level from nice when no ioprio was set.
                ioprio.level = ((spec.nice + 20) / 5).clamp(0, 7) as u8;
            }
            // A replayed process keeps its capture's pid (its sync and async parts share it).
            let pid = spec
                .replay
                .as_ref()
                .and_then(|replay| replay.process_pid())
                .unwrap_or(FIRST_PID + index as u32);
            ProcessIdentity {
                job: plan.job,
                pid,
                ioc: IoContextId(pid),
                cgroup,
                ioprio,
            }
        })
        .collect();
    (identities, cgroups)
}

/// `wait_for=` names no earlier job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitForError {
    pub job: String,
    pub target: String,
}

impl fmt::Display for WaitForError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "job '{}': wait_for={} names no earlier job",
            self.job, self.target
        )
    }
}

impl std::error::Error for WaitForError {}

/// What one job waits for before it starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Waits {
    /// `stonewall`: every earlier job. Kept as a flag, not a list of the earlier jobs, so
    /// that N stonewalled sections cost N, not N² / 2.
    pub all_earlier: bool,
    /// `wait_for`: the first earlier job of that name.
    pub job: Option<usize>,
}

/// For each job, the jobs that must finish before it starts: every earlier job with
/// `stonewall`, the named one with `wait_for`.
pub fn prerequisites(jobs: &[JobSpec]) -> Result<Vec<Waits>, WaitForError> {
    let mut first_of: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut waits = Vec::with_capacity(jobs.len());
    for (index, spec) in jobs.iter().enumerate() {
        let job = match &spec.wait_for {
            Some(target) => Some(*first_of.get(target.as_str()).ok_or_else(|| WaitForError {
                job: spec.name.clone(),
                target: target.clone(),
            })?),
            None => None,
        };
        waits.push(Waits {
            all_earlier: spec.stonewall,
            job,
        });
        first_of.entry(spec.name.as_str()).or_insert(index);
    }
    Ok(waits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::lay_out;

    fn job(name: &str) -> JobSpec {
        JobSpec::sized(name, 1 << 20)
    }

    #[test]
    fn clones_get_own_pids_and_share_their_jobs_cgroup() {
        let mut spec = job("a");
        spec.numjobs = 2;
        spec.cgroup = Some("x/y".into());
        spec.cgroup_weight = Some(800);
        spec.nice = 19;
        let layout = lay_out(std::slice::from_ref(&spec), Some(1 << 30), 1).unwrap();
        let (ids, cgroups) = identities(&[spec], &layout);
        assert_eq!(ids[0].pid, FIRST_PID);
        assert_eq!(ids[1].ioc, IoContextId(FIRST_PID + 1));
        assert_eq!(ids[0].cgroup, ids[1].cgroup);
        assert_eq!(cgroups.path(ids[0].cgroup), "/x/y");
        // nice 19 → level (19 + 20) / 5 = 7.
        assert_eq!(ids[0].ioprio.level, 7);
    }

    /// `cgroup=/` with `cgroup_weight` sets the root group's weight; without `cgroup=` the
    /// weight goes nowhere.
    #[test]
    fn cgroup_slash_weights_the_root() {
        for (cgroup, expect) in [
            (Some(String::new()), 300),
            (None, crate::cgroups::ROOT_WEIGHT),
        ] {
            let mut spec = job("j");
            spec.cgroup = cgroup;
            spec.cgroup_weight = Some(300);
            let layout = lay_out(std::slice::from_ref(&spec), Some(1 << 30), 1).unwrap();
            let (ids, cgroups) = identities(std::slice::from_ref(&spec), &layout);
            assert_eq!(ids[0].cgroup, CgroupId::ROOT);
            let root = cgroups.specs().find(|g| g.id == CgroupId::ROOT).unwrap();
            assert_eq!(root.weight, expect);
        }
    }

    #[test]
    fn stonewall_and_wait_for_order_jobs() {
        let a = job("a");
        let b = job("b");
        let mut c = job("c");
        c.stonewall = true;
        let mut d = job("d");
        d.wait_for = Some("b".into());
        let none = Waits::default();
        let stonewall = Waits {
            all_earlier: true,
            job: None,
        };
        let on_b = Waits {
            all_earlier: false,
            job: Some(1),
        };
        assert_eq!(
            prerequisites(&[a, b, c, d]).unwrap(),
            [none, none, stonewall, on_b]
        );
        let mut e = job("e");
        e.wait_for = Some("nosuch".into());
        assert!(prerequisites(&[e]).is_err());
    }
}
