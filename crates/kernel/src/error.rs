//! What can stop a kernel run, each printed as one line that names the flag, file or
//! directory at fault. [`KernelError::is_input`] splits bad input (exit 2) from a run that
//! failed (exit 1); [`KernelError::Interrupted`] is Ctrl-C (exit 130).

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use iosched_engine::EngineError;
use iosched_workload::fio::ParseError;
use iosched_workload::layout::LayoutError;

/// When a SIGINT stopped the run without results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interruption {
    /// Before fio was started: nothing ran.
    BeforeFio,
    /// fio ran but wrote nothing before it exited or was killed.
    NothingReported,
}

/// Why a kernel run refused to start, failed, or was interrupted. The device is put back
/// in every case before the error reaches the caller.
#[derive(Debug)]
#[non_exhaustive]
pub enum KernelError {
    /// Not one of the kernel's blk-mq schedulers (nor an alias of one).
    UnknownScheduler { name: String },
    /// The fio binary does not run (`fio --version` fails).
    FioMissing { fio: String },
    /// A job file does not parse.
    Jobs(ParseError),
    /// The device path names nothing usable.
    Target(EngineError),
    /// The spec's target is a simulated device (a preset or a model file).
    Simulated { target: String },
    /// A knob of the simulated machine (page cache, file system): the run uses this one's.
    Knob { name: String, value: String },
    /// The spec asks for a decision log, which only iosched's own driver writes.
    Outputs,
    /// `--trace NAME.blktrace`: the kernel's trace is ftrace's text, not blktrace's binary.
    BinaryTrace { path: String },
    /// Capturing the kernel's trace (tracefs, the `blk` tracer) failed.
    Trace { what: String },
    /// The path is a regular file: the kernel's schedulers sit on block devices.
    NotBlockDevice { path: String },
    /// Writing would destroy something (mounted, partitioned, a file-system signature).
    Refused { path: String, reason: String },
    /// The jobs do not fit on the device.
    Layout(LayoutError),
    /// `queue/scheduler` refused the scheduler.
    SelectScheduler {
        queue: PathBuf,
        scheduler: &'static str,
        error: io::Error,
    },
    /// A `--set` value was refused by sysfs (`file` is relative to the queue directory).
    Tunable {
        name: String,
        value: String,
        file: String,
        error: io::Error,
    },
    /// A `--set` name that is not one of the scheduler's tunables (nor a name at all).
    UnknownTunable {
        name: String,
        scheduler: &'static str,
        /// What the scheduler lists under `queue/iosched/`; empty when the name was refused
        /// before the device was touched.
        known: Vec<String>,
        why: Option<String>,
    },
    /// A job file's log path (fio writes it) escapes the current folder or is refused by
    /// the output gate.
    Output {
        option: &'static str,
        error: iosched_gate::GateError,
    },
    /// The jobs name cgroups but no block I/O controller is mounted.
    NoCgroupHierarchy,
    /// A cgroup directory could not be made.
    Cgroup { dir: PathBuf, error: io::Error },
    /// The scratch directory or the generated job file could not be written.
    Scratch {
        what: &'static str,
        error: io::Error,
    },
    /// fio could not be started or waited for.
    Fio {
        what: &'static str,
        error: io::Error,
    },
    /// fio exited with an error of its own.
    FioFailed { status: ExitStatus, stderr: String },
    /// fio's JSON output does not parse.
    FioJson(serde_json::Error),
    /// fio ran past its limit (`planned`: the jobs' planned time, when they have one;
    /// `given`: the limit is `--timeout`'s) and was killed with its job processes.
    TimedOut {
        limit: Duration,
        planned: Option<Duration>,
        given: bool,
    },
    /// SIGINT stopped the run before anything was measured; `killed_after` is set when fio
    /// ignored the SIGINT and the watchdog killed it that long after.
    Interrupted {
        when: Interruption,
        killed_after: Option<Duration>,
    },
}

impl KernelError {
    /// Whether the input (a flag, a job file, the device) is at fault: exit status 2.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            KernelError::UnknownScheduler { .. }
                | KernelError::Jobs(_)
                | KernelError::Simulated { .. }
                | KernelError::Knob { .. }
                | KernelError::Outputs
                | KernelError::BinaryTrace { .. }
                | KernelError::Target(_)
                | KernelError::NotBlockDevice { .. }
                | KernelError::Refused { .. }
                | KernelError::Layout(_)
                | KernelError::Tunable { .. }
                | KernelError::UnknownTunable { .. }
                | KernelError::Output { .. }
        )
    }
}

/// The line the watchdog's kill adds to a report.
pub fn killed_note(after: Duration) -> String {
    format!(
        "fio had not exited {} s after SIGINT: killed",
        after.as_secs()
    )
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::UnknownScheduler { name } => {
                let hint = match name.as_str() {
                    "cfq" => " (CFQ left the kernel in 5.0: iosched runs it with `iosched run --device PATH --scheduler cfq`)",
                    "adaptive" => " (adaptive is iosched's own policy: `iosched run --device PATH --scheduler adaptive`)",
                    _ => "",
                };
                write!(
                    f,
                    "--scheduler '{name}': the kernel's schedulers are none, mq-deadline, kyber, bfq \
                     (noop and deadline are accepted as aliases of none and mq-deadline){hint}"
                )
            }
            KernelError::FioMissing { fio } => write!(
                f,
                "'{fio}' not found or not working: install fio (Debian: apt-get install fio) or pass --fio PATH"
            ),
            KernelError::Jobs(error) => write!(f, "{error}"),
            KernelError::Simulated { target } => write!(
                f,
                "{target}: a simulated device; the kernel's schedulers need a block device path"
            ),
            KernelError::Knob { name, value } => write!(
                f,
                "--set {name}={value}: a knob of the simulated machine; a kernel run uses this \
                 machine's page cache and file system (its one knob is nr_requests)"
            ),
            KernelError::Outputs => write!(
                f,
                "a kernel run writes no decision log: the kernel's scheduler decides, not iosched's \
                 (--trace captures the kernel's own messages)"
            ),
            KernelError::BinaryTrace { path } => write!(
                f,
                "--trace {path}: a kernel run's trace is ftrace's text (request events and the \
                 scheduler's messages); name it without .blktrace"
            ),
            KernelError::Trace { what } => write!(f, "kernel trace: {what}"),
            KernelError::Target(error) => write!(f, "{error}"),
            KernelError::NotBlockDevice { path } => write!(
                f,
                "{path}: the kernel's schedulers need a block device (try a loop device: losetup -f --show FILE)"
            ),
            KernelError::Refused { path, reason } => write!(
                f,
                "{path}: refusing to write: {reason} (pass --force if you really mean it)"
            ),
            KernelError::Layout(error) => write!(f, "{error}"),
            _ => self.fmt_run(f),
        }
    }
}

impl KernelError {
    /// Display of the errors of a run under way.
    fn fmt_run(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::SelectScheduler {
                queue,
                scheduler,
                error,
            } => write!(
                f,
                "{}: cannot select scheduler '{scheduler}': {error}",
                queue.display()
            ),
            KernelError::Output { option, error } => write!(f, "{option} {error}"),
            KernelError::UnknownTunable {
                name,
                why: Some(why),
                ..
            } => write!(f, "--set {}: {why}", name.escape_debug()),
            KernelError::UnknownTunable {
                name,
                scheduler,
                known,
                why: None,
            } => write!(
                f,
                "--set {}: {scheduler} has no tunable of that name (its tunables: {}; and the queue's nr_requests)",
                name.escape_debug(),
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ),
            KernelError::Tunable {
                name,
                value,
                file,
                error,
            } => write!(
                f,
                "--set {name}={value}: cannot write queue/{file}: {error}"
            ),
            KernelError::NoCgroupHierarchy => write!(
                f,
                "the jobs name cgroups but no blkio (v1) or io (v2) cgroup hierarchy is mounted"
            ),
            KernelError::Cgroup { dir, error } => {
                write!(f, "cannot create cgroup {}: {error}", dir.display())
            }
            KernelError::Scratch { what, error } => write!(f, "cannot {what}: {error}"),
            KernelError::Fio { what, error } => write!(f, "{what}: {error}"),
            KernelError::FioFailed { status, stderr } => {
                write!(f, "fio failed ({status}): {}", stderr.trim())
            }
            KernelError::FioJson(error) => write!(f, "fio's JSON output does not parse: {error}"),
            KernelError::TimedOut {
                limit,
                planned,
                given,
            } => {
                let secs = limit.as_secs_f64();
                match planned {
                    _ if *given => write!(f, "fio was still running at --timeout {secs} s")?,
                    Some(planned) => write!(
                        f,
                        "fio was still running after {secs} s, twice the jobs' planned {:.0} s \
                         and a margin (--timeout SECONDS sets another limit)",
                        planned.as_secs_f64()
                    )?,
                    None => write!(f, "fio was still running after {secs} s")?,
                }
                write!(
                    f,
                    ": killed fio and its job processes, no results; the device's scheduler, \
                     tunables and cgroups are put back"
                )
            }
            KernelError::Interrupted { when, killed_after } => {
                if let Some(after) = killed_after {
                    write!(f, "{}; ", killed_note(*after))?;
                }
                match when {
                    Interruption::BeforeFio => {
                        write!(f, "interrupted before fio started; the device is as it was")
                    }
                    Interruption::NothingReported => write!(
                        f,
                        "interrupted: fio stopped before it reported anything; the device is as it was"
                    ),
                }
            }
            // Input errors: displayed by `fmt` before it gets here.
            _ => write!(f, "{self:?}"),
        }
    }
}

/// The cause is part of each message (io errors, the parser's and the layout's errors), so
/// no `source()`: a `{:#}` chain would print it twice.
impl std::error::Error for KernelError {}
