//! fio under supervision: started in a process group of its own, waited for by polling,
//! sent our SIGINT when one arrives (fio prints what it has measured when interrupted; a
//! terminal's Ctrl-C reaches it directly, a `kill -INT` of iosched does not), and killed
//! with its job processes if it has not exited [`FIO_EXIT_GRACE`] after that, or once it has
//! run longer than its limit (the jobs' planned time and a margin, [`crate::deadline`]).
//!
//! Two watchdogs, because fio 3.33 can hang in its own signal handler when SIGINT lands
//! while it sets its jobs up, and its job processes were seen stuck on a futex when two test
//! suites ran at once; iosched would otherwise wait for ever with the device switched.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iosched_engine::signal;

use crate::error::KernelError;
use crate::family;

/// 5 s: how long fio may take to exit after our SIGINT before it is killed. fio stops its
/// jobs and writes its report well within a second when it is not stuck.
pub const FIO_EXIT_GRACE: Duration = Duration::from_secs(5);

/// 50 ms between looks at fio and at the SIGINT flag.
const POLL: Duration = Duration::from_millis(50);

/// A fio binary that answered `--version`.
#[derive(Clone, Debug)]
pub struct FioBinary {
    pub path: String,
    /// What it answered, e.g. `fio-3.33`.
    pub version: String,
}

impl FioBinary {
    /// Runs `path --version`: a missing or broken fio is found before anything is changed.
    pub fn find(path: &str) -> Result<FioBinary, KernelError> {
        Command::new(path)
            .arg("--version")
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| FioBinary {
                path: path.to_string(),
                version: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            })
            .ok_or_else(|| KernelError::FioMissing {
                fio: path.to_string(),
            })
    }
}

/// How fio ended.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    /// Set when fio ignored our SIGINT and was killed: the grace it had.
    pub killed_after: Option<Duration>,
    /// Set when fio outran its limit and was killed with its job processes: the limit.
    pub timed_out: Option<Duration>,
}

/// When the supervisor gives up on fio, and how it finds fio's job processes.
#[derive(Clone, Debug)]
pub struct Limits {
    /// After our SIGINT.
    pub grace: Duration,
    /// From the start; `None`: no limit.
    pub run: Option<Duration>,
    /// Text on the command line of every process of this run (the generated job file's
    /// path), so that job processes fio left behind are found ([`crate::family`]).
    pub marker: Option<String>,
}

/// Runs fio on `job_file` with `args` before it (its stderr to `stderr_file`), supervised
/// until it exits or is killed after `limit` (`None`: no limit).
pub fn run_fio(
    fio: &FioBinary,
    args: &[OsString],
    job_file: &Path,
    stderr_file: &Path,
    stop: &AtomicBool,
    limit: Option<Duration>,
) -> Result<Finished, KernelError> {
    let stderr = File::create(stderr_file).map_err(|error| KernelError::Scratch {
        what: "create fio's stderr file",
        error,
    })?;
    let mut child = Command::new(&fio.path)
        .args(args)
        .arg(job_file)
        .stdin(Stdio::null())
        // To a file, not a pipe: a pipe read only after exit fills up and blocks a fio
        // that writes many warnings.
        .stderr(stderr)
        // Its own process group, so the watchdog can end fio with whatever stays in it (our
        // SIGINT is forwarded to it either way); fio's job processes leave it (`family`).
        .process_group(0)
        .spawn()
        .map_err(|error| KernelError::Fio {
            what: "cannot start fio",
            error,
        })?;
    let limits = Limits {
        grace: FIO_EXIT_GRACE,
        run: limit,
        marker: Some(job_file.to_string_lossy().into_owned()),
    };
    supervise(&mut child, stop, limits).map_err(|error| KernelError::Fio {
        what: "waiting for fio",
        error,
    })
}

/// Waits for `child` (the leader of its own process group), forwarding a SIGINT of ours
/// (`stop` set) to it; if it has not exited `limits.grace` after that, or is still running
/// `limits.run` after the start, kills it with its group, its descendants and the processes
/// naming `limits.marker`.
pub fn supervise(child: &mut Child, stop: &AtomicBool, limits: Limits) -> io::Result<Finished> {
    let started = Instant::now();
    let mut forwarded: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            // A job process that outlived fio (seen once: stuck in a futex after an early
            // SIGINT) would hold our stdout open for ever: it ends with fio.
            end_stragglers(child, &limits);
            return Ok(Finished {
                status,
                killed_after: None,
                timed_out: None,
            });
        }
        if let Some(limit) = limits.run.filter(|&limit| started.elapsed() > limit) {
            kill_family(child, &limits);
            return Ok(Finished {
                status: child.wait()?,
                killed_after: None,
                timed_out: Some(limit),
            });
        }
        match forwarded {
            None if stop.load(Ordering::Relaxed) => {
                signal::interrupt(child.id());
                forwarded = Some(Instant::now());
            }
            Some(at) if at.elapsed() > limits.grace => {
                kill_family(child, &limits);
                return Ok(Finished {
                    status: child.wait()?,
                    killed_after: Some(limits.grace),
                    timed_out: None,
                });
            }
            _ => {}
        }
        std::thread::sleep(POLL);
    }
}

/// SIGKILL to whatever is left of the exited child's process group, and to the processes
/// naming the marker (fio's job processes, orphaned); nothing when none is left (the group
/// id cannot be reused while a member lives, so no stranger is hit).
fn end_stragglers(child: &Child, limits: &Limits) {
    sweep(|| {
        let left = limits
            .marker
            .as_deref()
            .map(family::naming)
            .unwrap_or_default();
        family::kill_all(child.id(), &left);
    });
}

/// SIGKILL to the child, its process group, its descendants (fio's job processes, each in a
/// session of its own) and the processes naming the marker; to the child alone if that
/// fails.
fn kill_family(child: &mut Child, limits: &Limits) {
    let id = child.id();
    sweep(|| {
        let mut family = family::descendants(id);
        if let Some(marker) = &limits.marker {
            family.extend(family::naming(marker));
        }
        family.insert(id);
        family::kill_all(id, &family);
    });
    let _ = child.kill();
}

/// Runs `kill` twice, [`SWEEP_GAP`] apart: a process caught mid-exec has no command line to
/// read for that instant (seen under load: a `setsid` child still turning into its marked
/// command was missed and outlived fio), and one mid-fork is not yet in the process table;
/// the second sweep finds either.
fn sweep(mut kill: impl FnMut()) {
    kill();
    std::thread::sleep(SWEEP_GAP);
    kill();
}

const SWEEP_GAP: Duration = Duration::from_millis(20);

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// `sh` as a group leader, running `script`.
    fn leader(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .unwrap()
    }

    /// A SIGINT grace and no run limit.
    fn grace(grace: Duration) -> Limits {
        Limits {
            grace,
            run: None,
            marker: None,
        }
    }

    /// Whether this process ignores SIGINT (`SigIgn` in /proc/self/status, bit 1): a shell
    /// without job control starts its background jobs so, and children keep it across exec.
    fn sigint_ignored_here() -> bool {
        // Signal n is bit n - 1 of the mask; SIGINT is 2 on Linux.
        const SIGINT_BIT: u64 = 1 << 1;
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("SigIgn:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & SIGINT_BIT != 0)
    }

    fn alive(pid: &str) -> bool {
        // A zombie waiting for its new parent to reap it is dead for our purpose.
        fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.split_whitespace().nth(2) != Some("Z"))
    }

    /// A child deaf to SIGINT is killed `grace` after the SIGINT, with the process it
    /// started (a stand-in for fio's job processes); without the watchdog `supervise`
    /// would wait the full 30 s of the `sleep`.
    #[test]
    fn a_child_deaf_to_sigint_is_killed_with_its_job_processes() {
        let pid_file =
            std::env::temp_dir().join(format!("iosched-supervise-{}", std::process::id()));
        // setsid: fio's job processes each lead a session of their own (`family`).
        let script = format!(
            "trap '' INT; setsid sleep 30 & echo $! > {}; wait",
            pid_file.display()
        );
        let mut child = leader(&script);
        while fs::read_to_string(&pid_file).map_or(true, |s| s.trim().is_empty()) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let job = fs::read_to_string(&pid_file).unwrap().trim().to_string();
        fs::remove_file(&pid_file).unwrap();
        let stop = AtomicBool::new(true);
        let started = Instant::now();
        let finished = supervise(&mut child, &stop, grace(Duration::from_millis(200))).unwrap();
        assert_eq!(finished.killed_after, Some(Duration::from_millis(200)));
        assert!(!finished.status.success());
        assert!(started.elapsed() < Duration::from_secs(20));
        for _ in 0..100 {
            if !alive(&job) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the group's other process {job} survived the kill");
    }

    /// A child that runs past its limit (a stand-in for fio with its job processes stuck,
    /// each in a session of its own) is killed with its descendants, and the limit is
    /// reported; without the run-length watchdog `supervise` would wait the full 30 s of the
    /// `sleep`, and a kill of fio's process group alone leaves the `sleep` running.
    #[test]
    fn a_child_past_its_run_limit_is_killed_with_its_job_processes() {
        let pid_file = std::env::temp_dir().join(format!("iosched-timeout-{}", std::process::id()));
        let script = format!("setsid sleep 30 & echo $! > {}; wait", pid_file.display());
        let mut child = leader(&script);
        while fs::read_to_string(&pid_file).map_or(true, |s| s.trim().is_empty()) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let job = fs::read_to_string(&pid_file).unwrap().trim().to_string();
        fs::remove_file(&pid_file).unwrap();
        let limits = Limits {
            grace: FIO_EXIT_GRACE,
            run: Some(Duration::from_millis(300)),
            marker: None,
        };
        let finished = supervise(&mut child, &AtomicBool::new(false), limits).unwrap();
        assert_eq!(finished.timed_out, Some(Duration::from_millis(300)));
        assert_eq!(finished.killed_after, None);
        assert!(!finished.status.success());
        for _ in 0..100 {
            if !alive(&job) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the group's other process {job} survived the kill");
    }

    /// fio exiting while one of its job processes hangs on: the job process goes too, or it
    /// would hold the caller's stdout open after iosched exits. One stays in fio's group, one
    /// leads a session of its own as fio's job processes do, found by the marker on its
    /// command line (`exec -a` puts it there, as fio's forks carry the job file's path).
    #[test]
    fn processes_left_behind_by_fio_are_ended() {
        let pid_file =
            std::env::temp_dir().join(format!("iosched-straggler-{}", std::process::id()));
        let marker = format!("iosched-marker-{}", std::process::id());
        let script = format!(
            "sleep 30 & echo $! > {file}; setsid bash -c 'exec -a {marker} sleep 30' & \
             echo $! >> {file}",
            file = pid_file.display()
        );
        let mut child = leader(&script);
        let limits = Limits {
            grace: FIO_EXIT_GRACE,
            run: None,
            marker: Some(marker),
        };
        let finished = supervise(&mut child, &AtomicBool::new(false), limits).unwrap();
        assert!(finished.status.success());
        let jobs = fs::read_to_string(&pid_file).unwrap();
        fs::remove_file(&pid_file).unwrap();
        for job in jobs.split_whitespace() {
            let mut gone = false;
            for _ in 0..100 {
                if !alive(job) {
                    gone = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            assert!(gone, "{job}, left behind by fio, outlived it");
        }
    }

    /// A child that exits on SIGINT is not killed, and without a SIGINT nothing is sent.
    #[test]
    fn a_child_that_exits_on_sigint_is_not_killed() {
        if sigint_ignored_here() {
            // Inherited by `sh` and `sleep`, which cannot undo it: the case cannot be made.
            eprintln!("SKIPPED: SIGINT is ignored in this process (a background job of a shell without job control)");
            return;
        }
        let mut child = leader("exec sleep 30");
        let stop = AtomicBool::new(true);
        let finished = supervise(&mut child, &stop, grace(Duration::from_secs(60))).unwrap();
        assert_eq!(finished.killed_after, None);
        assert!(!finished.status.success());
        let mut child = leader("exit 3");
        let finished =
            supervise(&mut child, &AtomicBool::new(false), grace(FIO_EXIT_GRACE)).unwrap();
        assert_eq!(finished.status.code(), Some(3));
        assert_eq!(finished.killed_after, None);
    }
}
