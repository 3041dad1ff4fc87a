//! The jobs' cgroups as real blkio cgroups for the engine's worker threads
//! (`engine_threads=cgroups`).
//!
//! fio runs a job with `cgroup=` inside that cgroup, so the kernel charges the job's I/O to it
//! and a loop device serves it with that cgroup's own worker (`drivers/block/loop.c`,
//! `loop_queue_work()`: one work item per blkcg, the root cgroup's apart). A bio is charged to
//! the cgroup of the thread that submits it (`bio_associate_blkg()` reads `current`'s), and
//! the engine submits with `io_uring_enter` from its own threads, so each job cgroup gets a
//! worker thread of its own, placed in a cgroup of the same path under `iosched-engine-PID`
//! in the cgroup v1 `blkio` hierarchy, and every request goes to the kernel from its
//! cgroup's thread ([`crate::threads`]). Jobs without a cgroup stay where the process is.
//!
//! No weight is written: the policy is iosched's scheduler, above the device. What the
//! kernel charged to each group is read back before the groups are removed (BFQ's
//! `blkio.bfq.io_serviced`, counted when the device itself runs BFQ), so a run can show that
//! each request reached the kernel from its own cgroup.
//!
//! Cgroup v1 only: its `tasks` file moves one thread, while cgroup v2's io controller is not
//! threaded, so the threads of one process cannot sit in different v2 io groups.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::EngineError;
use crate::target::dev_name;

/// How long the removal of a group waits for its exiting threads to leave it (the kernel
/// takes a thread out of its cgroup late in its exit, after a join has returned).
const REMOVE_TRIES: u32 = 200;
const REMOVE_PAUSE_MS: u64 = 5;

/// The run's cgroups: made by [`Placement::new`], removed on drop, children first.
#[derive(Debug)]
pub(crate) struct Placement {
    /// Per worker thread: the directory it joins (`None`: the jobs without a cgroup, which
    /// stay in the process's own).
    dirs: Vec<Option<PathBuf>>,
    /// Each worker's group as the jobs name it (`/`, `/heavy`).
    paths: Vec<String>,
    /// Directories made, parents first.
    created: Vec<PathBuf>,
    /// The process's own blkio cgroup, where a worker goes back to after the run.
    home: PathBuf,
}

/// The mount point of the cgroup v1 hierarchy with the `blkio` controller.
pub fn blkio_v1_mount() -> Option<PathBuf> {
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let blkio = fields.len() >= 4
            && fields[2] == "cgroup"
            && fields[3].split(',').any(|option| option == "blkio");
        blkio.then(|| PathBuf::from(fields[1]))
    })
}

/// The calling thread's cgroup in the blkio hierarchy (`7:blkio:/a` → `/a`).
fn own_blkio_cgroup() -> Option<String> {
    let text = fs::read_to_string("/proc/thread-self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == "blkio")
            .then(|| path.to_string())
    })
}

impl Placement {
    /// Makes a cgroup for each worker's group (`paths`, one per worker; `/` stays home)
    /// under `iosched-engine-PID` in the process's own blkio cgroup.
    pub(crate) fn new(paths: &[String]) -> Result<Placement, EngineError> {
        let refuse = |reason: &str| EngineError::Unsupported {
            job: "engine_threads=cgroups".to_string(),
            message: reason.to_string(),
        };
        let mount = blkio_v1_mount().ok_or_else(|| {
            refuse(
                "needs the cgroup v1 blkio hierarchy (cgroup v2's io controller cannot hold \
                 the threads of one process in different groups)",
            )
        })?;
        let own = own_blkio_cgroup()
            .ok_or_else(|| refuse("no blkio line in /proc/thread-self/cgroup"))?;
        let home = mount.join(own.trim_start_matches('/'));
        let base = home.join(format!("iosched-engine-{}", std::process::id()));
        let mut placement = Placement {
            dirs: Vec::with_capacity(paths.len()),
            paths: paths.to_vec(),
            created: Vec::new(),
            home,
        };
        for path in paths {
            let dir = match path.trim_matches('/') {
                "" => None,
                relative => Some(placement.make(&base, relative)?),
            };
            placement.dirs.push(dir);
        }
        Ok(placement)
    }

    /// Makes `base/relative` and each missing parent, remembering what it made.
    fn make(&mut self, base: &Path, relative: &str) -> Result<PathBuf, EngineError> {
        let mut dir = base.to_path_buf();
        for part in std::iter::once("").chain(relative.split('/')) {
            dir.push(part);
            if self.created.contains(&dir) {
                continue;
            }
            fs::create_dir(&dir).map_err(|error| {
                EngineError::io(
                    &dir.to_string_lossy(),
                    "cannot make the job's cgroup",
                    error,
                )
            })?;
            self.created.push(dir.clone());
        }
        Ok(dir)
    }

    /// The directory worker `index` joins, if any.
    pub(crate) fn dir(&self, index: usize) -> Option<&Path> {
        self.dirs.get(index)?.as_deref()
    }

    /// The process's own blkio cgroup, where worker 0 goes back to after the run.
    pub(crate) fn home(&self) -> &Path {
        &self.home
    }

    /// What the kernel's BFQ charged to each worker's group on the device `dev` (every
    /// device if `None`): its I/Os, from `blkio.bfq.io_serviced`. Zero for the groups that
    /// stayed home and where the device does not run BFQ.
    pub(crate) fn kernel_ios(&self, dev: Option<u64>) -> Vec<(String, u64)> {
        let device = dev.map(dev_name);
        self.paths
            .iter()
            .zip(&self.dirs)
            .map(|(path, dir)| {
                let text = dir
                    .as_ref()
                    .and_then(|dir| fs::read_to_string(dir.join("blkio.bfq.io_serviced")).ok())
                    .unwrap_or_default();
                (path.clone(), serviced(&text, device.as_deref()))
            })
            .collect()
    }
}

/// The `MAJ:MIN Total N` counts of a `blkio.*.io_serviced` file, for one device or all.
fn serviced(text: &str, device: Option<&str>) -> u64 {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields[..] {
                [dev, "Total", n] if device.is_none_or(|want| want == dev) => n.parse::<u64>().ok(),
                _ => None,
            }
        })
        .sum()
}

/// Moves the calling thread into `dir` (cgroup v1: `0` in `tasks` names the writer).
pub(crate) fn join(dir: &Path) -> std::io::Result<()> {
    fs::write(dir.join("tasks"), "0")
}

impl Drop for Placement {
    fn drop(&mut self) {
        for dir in self.created.iter().rev() {
            for _ in 0..REMOVE_TRIES {
                match fs::remove_dir(dir) {
                    Err(error) if error.raw_os_error() == Some(libc::EBUSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(REMOVE_PAUSE_MS));
                    }
                    _ => break,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One device's total, or every device's; the file's own last `Total` line (no device)
    /// is not counted twice.
    #[test]
    fn serviced_counts_the_devices_totals() {
        let text = "7:0 Read 10\n7:0 Total 10\n7:1 Read 3\n7:1 Total 3\nTotal 13\n";
        assert_eq!(serviced(text, Some("7:0")), 10);
        assert_eq!(serviced(text, None), 13);
        assert_eq!(serviced("", None), 0);
    }
}
