//! fio under supervision: started in a process group of its own, waited for by polling,
//! sent our SIGINT when one arrives (fio prints what it has measured when interrupted; a
//! terminal's Ctrl-C reaches it directly, a `kill -INT` of iosched does not), and killed
//! with its job processes if it has not exited [`FIO_EXIT_GRACE`] after that.
//!
//! The watchdog is there because fio 3.33 can hang in its own signal handler when SIGINT
//! lands while it sets its jobs up; iosched would otherwise wait forever with the device
//! switched.

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
}

/// Runs fio with `args` (its stderr to `stderr_file`), supervised until it exits.
pub fn run_fio(
    fio: &FioBinary,
    args: &[OsString],
    stderr_file: &Path,
    stop: &AtomicBool,
) -> Result<Finished, KernelError> {
    let stderr = File::create(stderr_file).map_err(|error| KernelError::Scratch {
        what: "create fio's stderr file",
        error,
    })?;
    let mut child = Command::new(&fio.path)
        .args(args)
        .stdin(Stdio::null())
        // To a file, not a pipe: a pipe read only after exit fills up and blocks a fio
        // that writes many warnings.
        .stderr(stderr)
        // Its own process group, so the watchdog can end fio with its job processes (our
        // SIGINT is forwarded to it either way).
        .process_group(0)
        .spawn()
        .map_err(|error| KernelError::Fio {
            what: "cannot start fio",
            error,
        })?;
    supervise(&mut child, stop, FIO_EXIT_GRACE).map_err(|error| KernelError::Fio {
        what: "waiting for fio",
        error,
    })
}

/// Waits for `child` (the leader of its own process group), forwarding a SIGINT of ours
/// (`stop` set) to it; if it has not exited `grace` after that, kills its whole group.
pub fn supervise(child: &mut Child, stop: &AtomicBool, grace: Duration) -> io::Result<Finished> {
    let mut forwarded: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            // A job process that outlived fio (seen once: stuck in a futex after an early
            // SIGINT) would hold our stdout open for ever; fio's group ends with fio.
            end_stragglers(child);
            return Ok(Finished {
                status,
                killed_after: None,
            });
        }
        match forwarded {
            None if stop.load(Ordering::Relaxed) => {
                signal::interrupt(child.id());
                forwarded = Some(Instant::now());
            }
            Some(at) if at.elapsed() > grace => {
                kill_group(child);
                return Ok(Finished {
                    status: child.wait()?,
                    killed_after: Some(grace),
                });
            }
            _ => {}
        }
        std::thread::sleep(POLL);
    }
}

/// SIGKILL to whatever is left of the exited child's process group; nothing when it is
/// empty (the group id cannot be reused while a member lives, so no stranger is hit).
fn end_stragglers(child: &Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stderr(Stdio::null())
        .status();
}

/// SIGKILL to the child's process group (fio's job processes are in it), or to the child
/// alone if that fails.
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let killed = Command::new("kill").args(["-KILL", "--", &group]).status();
    if !killed.is_ok_and(|status| status.success()) {
        let _ = child.kill();
    }
}

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

    fn alive(pid: &str) -> bool {
        // A zombie waiting for its new parent to reap it is dead for our purpose.
        fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.split_whitespace().nth(2) != Some("Z"))
    }

    /// A child deaf to SIGINT is killed `grace` after the SIGINT, with the process it
    /// started (a stand-in for fio's job processes); without the watchdog `supervise`
    /// would wait the full 30 s of the `sleep`.
    #[test]
    fn a_child_deaf_to_sigint_is_killed_with_its_group() {
        let pid_file =
            std::env::temp_dir().join(format!("iosched-supervise-{}", std::process::id()));
        let script = format!(
            "trap '' INT; sleep 30 & echo $! > {}; wait",
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
        let finished = supervise(&mut child, &stop, Duration::from_millis(200)).unwrap();
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

    /// fio exiting while one of its job processes hangs on: the job process goes too, or it
    /// would hold the caller's stdout open after iosched exits.
    #[test]
    fn a_process_left_behind_in_fios_group_is_ended() {
        let pid_file =
            std::env::temp_dir().join(format!("iosched-straggler-{}", std::process::id()));
        let script = format!("sleep 30 & echo $! > {}", pid_file.display());
        let mut child = leader(&script);
        let finished = supervise(&mut child, &AtomicBool::new(false), FIO_EXIT_GRACE).unwrap();
        assert!(finished.status.success());
        let job = fs::read_to_string(&pid_file).unwrap().trim().to_string();
        fs::remove_file(&pid_file).unwrap();
        for _ in 0..100 {
            if !alive(&job) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("{job}, left in fio's group, outlived it");
    }

    /// A child that exits on SIGINT is not killed, and without a SIGINT nothing is sent.
    #[test]
    fn a_child_that_exits_on_sigint_is_not_killed() {
        let mut child = leader("exec sleep 30");
        let stop = AtomicBool::new(true);
        let finished = supervise(&mut child, &stop, Duration::from_secs(60)).unwrap();
        assert_eq!(finished.killed_after, None);
        assert!(!finished.status.success());
        let mut child = leader("exit 3");
        let finished = supervise(&mut child, &AtomicBool::new(false), FIO_EXIT_GRACE).unwrap();
        assert_eq!(finished.status.code(), Some(3));
        assert_eq!(finished.killed_after, None);
    }
}
