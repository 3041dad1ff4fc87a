//! The jobs' cgroups (`cgroup=`, `cgroup_weight=`), made for fio under one directory of the
//! run's own (`iosched-PID`) in the hierarchy that has the block I/O controller — cgroup v1
//! `blkio` or v2 `io` — with each group's weight written where this kernel has a file for it
//! (BFQ's `*.bfq.weight` first, then the controller's own `*.weight`), and removed after the
//! run, children first.
//!
//! fio is told `cgroup_nodelete=1` so that it leaves the groups to us: they are ours to
//! remove whether fio finished, failed or was killed.

use std::fs;
use std::path::{Path, PathBuf};

use iosched_workload::JobSet;

use crate::error::KernelError;
use crate::Restored;

/// fio's default `cgroup_weight`, used when a job names a group but no weight.
const DEFAULT_WEIGHT: u32 = 500;

/// Where the jobs' cgroups go and how weights are written there.
#[derive(Debug)]
struct CgroupFs {
    /// Mount point of the hierarchy with the block I/O controller.
    mount: PathBuf,
    v2: bool,
}

/// The v1 hierarchy with `blkio`, else the first v2 hierarchy offering `io`.
fn find_cgroup_fs() -> Option<CgroupFs> {
    if let Some(mount) = iosched_engine::blkio_v1_mount() {
        return Some(CgroupFs { mount, v2: false });
    }
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 4 || fields[2] != "cgroup2" {
            return None;
        }
        let controllers =
            fs::read_to_string(Path::new(fields[1]).join("cgroup.controllers")).unwrap_or_default();
        controllers
            .split_whitespace()
            .any(|c| c == "io")
            .then(|| CgroupFs {
                mount: PathBuf::from(fields[1]),
                v2: true,
            })
    })
}

/// Each cgroup the jobs name, once, with the weight of the first job naming it.
pub fn job_cgroups(jobs: &JobSet) -> Vec<(&str, Option<u32>)> {
    let mut seen: Vec<(&str, Option<u32>)> = Vec::new();
    for spec in &jobs.jobs {
        if let Some(path) = spec.cgroup.as_deref() {
            if !seen.iter().any(|(p, _)| *p == path) {
                seen.push((path, spec.cgroup_weight));
            }
        }
    }
    seen
}

/// The run's cgroups; removes them when restored or dropped.
#[derive(Debug)]
pub struct CgroupGuard {
    /// Directories created, parents first.
    created: Vec<PathBuf>,
    /// `/path: file=weight` for each weight written.
    pub weights: Vec<String>,
    /// False when some group got no weight (no writable weight file on this kernel).
    pub weights_applied: bool,
    /// Why a group runs without its weight.
    pub warnings: Vec<String>,
}

impl CgroupGuard {
    /// Makes `root` (a name, e.g. `iosched-PID`) and each of the jobs' groups under it, with
    /// their weights. Nothing is made when no job names a cgroup. On error whatever was made
    /// is already removed.
    pub fn set_up(jobs: &JobSet, root: &str) -> Result<CgroupGuard, KernelError> {
        let mut guard = CgroupGuard {
            created: Vec::new(),
            weights: Vec::new(),
            weights_applied: true,
            warnings: Vec::new(),
        };
        let groups = job_cgroups(jobs);
        if groups.is_empty() {
            return Ok(guard);
        }
        let cgfs = find_cgroup_fs().ok_or(KernelError::NoCgroupHierarchy)?;
        if cgfs.v2 {
            let _ = fs::write(cgfs.mount.join("cgroup.subtree_control"), "+io");
        }
        let root_dir = cgfs.mount.join(root);
        guard.make(&root_dir)?;
        for (path, weight) in groups {
            let dir = guard.make_path(&cgfs, &root_dir, path)?;
            guard.write_weight(&cgfs, &dir, path, weight.unwrap_or(DEFAULT_WEIGHT));
        }
        Ok(guard)
    }

    fn make(&mut self, dir: &Path) -> Result<(), KernelError> {
        fs::create_dir(dir).map_err(|error| KernelError::Cgroup {
            dir: dir.to_path_buf(),
            error,
        })?;
        self.created.push(dir.to_path_buf());
        Ok(())
    }

    /// Makes each missing component of `path` under `root_dir`; on v2 a parent must pass
    /// the `io` controller down to its children.
    fn make_path(
        &mut self,
        cgfs: &CgroupFs,
        root_dir: &Path,
        path: &str,
    ) -> Result<PathBuf, KernelError> {
        let mut dir = root_dir.to_path_buf();
        for component in path.split('/').filter(|c| !c.is_empty()) {
            if cgfs.v2 {
                let _ = fs::write(dir.join("cgroup.subtree_control"), "+io");
            }
            dir = dir.join(component);
            if !dir.exists() {
                self.make(&dir)?;
            }
        }
        Ok(dir)
    }

    fn write_weight(&mut self, cgfs: &CgroupFs, dir: &Path, path: &str, weight: u32) {
        let files: &[&str] = if cgfs.v2 {
            &["io.bfq.weight", "io.weight"]
        } else {
            &["blkio.bfq.weight", "blkio.weight"]
        };
        let written = files
            .iter()
            .find(|name| fs::write(dir.join(name), weight.to_string()).is_ok());
        match written {
            Some(name) => self.weights.push(format!("/{path}: {name}={weight}")),
            None => {
                self.weights_applied = false;
                self.warnings.push(format!(
                    "cgroup /{path}: no writable weight file ({}) on this kernel; running without weights",
                    files.join(", ")
                ));
            }
        }
    }

    /// Removes the groups, children first, noting how many and any failure in `restored`.
    pub fn restore(&mut self, restored: &mut Restored) {
        while let Some(dir) = self.created.pop() {
            match fs::remove_dir(&dir) {
                Ok(()) => restored.cgroups_removed += 1,
                Err(error) => restored
                    .warnings
                    .push(format!("cannot remove cgroup {}: {error}", dir.display())),
            }
        }
    }
}

impl Drop for CgroupGuard {
    /// Reached with groups or warnings left only on an error or a panic: the warnings go
    /// to stderr, there being no outcome to carry them.
    fn drop(&mut self) {
        let mut restored = Restored::default();
        self.restore(&mut restored);
        crate::warn(&self.warnings);
        crate::warn(&restored.warnings);
    }
}
