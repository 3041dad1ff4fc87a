//! # iosched-kernel
//!
//! `iosched kernel`'s driver: the jobs iosched runs, run instead by fio against one of the
//! kernel's own blk-mq schedulers (`bfq`, `mq-deadline`, `kyber`, `none`) on a real block
//! device, so that the engine and the simulator can be set beside the real thing.
//!
//! [`run`] takes a [`RunSpec`] (what a kernel run can honour of it: [`spec`]), checks the
//! device (a block device, not in use unless forced), switches its
//! scheduler, `nr_requests` and tunables ([`sysfs`]), makes the jobs' cgroups with their
//! weights ([`cgroups`]), writes fio a job file with every clone on the bytes the engine
//! would use ([`jobfile`]), runs fio under two watchdogs ([`supervise`]: one for a fio deaf
//! to SIGINT, one for a fio running past its jobs' planned time, [`deadline`]), puts the
//! device back, and only then returns: fio's report (its JSON with an `iosched` object
//! added, or its normal or terse text), what was put back, and whether the run was
//! interrupted. Whatever happens — success, an error, Ctrl-C, a fio deaf to Ctrl-C, a hung
//! fio — the scheduler, its tunables and the cgroups are as they were when `run` returns.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use iosched_driver::spec::{Machine, RunSpec, Setting, Target, RUN_SPEC_VERSION};
//! use iosched_kernel::{FioBinary, FioFormat, FioReport};
//! use iosched_workload::fio::{JobSource, ParseContext};
//!
//! let jobs = vec![JobSource::read(std::path::Path::new("jobs.fio"))?];
//! let spec = RunSpec {
//!     version: RUN_SPEC_VERSION,
//!     machine: Machine::capture(&ParseContext::default(), &jobs),
//!     jobs,
//!     target: Target::from_device_arg("/dev/loop0"),
//!     scheduler: "bfq".to_string(),
//!     tunables: vec![Setting::parse("slice_idle=0").unwrap()],
//!     knobs: vec![Setting::parse("nr_requests=32").unwrap()],
//!     seed: 1,
//!     uptime_s: 0,
//!     check: false,
//!     force: false,
//!     outputs: Default::default(),
//! };
//! let fio = FioBinary::find("fio")?;
//! let outcome = iosched_kernel::run(&spec, &fio, FioFormat::Json, &AtomicBool::new(false))?;
//! if let FioReport::Json(json) = &outcome.report {
//!     println!("{}", json["iosched"]["cgroups"]);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

pub mod cgroups;
pub mod deadline;
mod error;
mod family;
pub mod ftrace;
pub mod jobfile;
mod report;
pub mod spec;
pub mod supervise;
pub mod sysfs;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use iosched_driver::spec::RunSpec;
use iosched_engine::{safety, target, Target, TargetKind};
use iosched_workload::layout::{lay_out, Layout};
use iosched_workload::JobSet;

pub use cgroups::CgroupGuard;
pub use deadline::Timeout;
pub use error::{killed_note, Interruption, KernelError};
pub use ftrace::{TraceCapture, TraceSummary};
use iosched_gate::OutFile;
pub use supervise::{FioBinary, FIO_EXIT_GRACE};
pub use sysfs::{KernelScheduler, QueueGuard};

/// fio's output formats, as `--output-format` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FioFormat {
    Json,
    Normal,
    Terse,
    /// fio's comma list (`normal,json`, `json+`), handed to fio as it is: a list of json or
    /// json+ alone is read as JSON, any other is fio's text.
    List(iosched_report::output::Formats),
}

impl FioFormat {
    fn fio_name(self) -> String {
        match self {
            FioFormat::Json => "json".to_string(),
            FioFormat::Normal => "normal".to_string(),
            FioFormat::Terse => "terse".to_string(),
            FioFormat::List(formats) => formats.to_string(),
        }
    }

    /// fio answers with one JSON document.
    fn is_json(self) -> bool {
        match self {
            FioFormat::Json => true,
            FioFormat::List(f) => f.json && !f.normal && !f.terse,
            FioFormat::Normal | FioFormat::Terse => false,
        }
    }
}

/// One kernel run, resolved from its [`RunSpec`]: the jobs, where and under which scheduler
/// fio runs them.
#[derive(Clone, Debug)]
pub(crate) struct KernelRun {
    pub jobs: JobSet,
    /// The block device (`/dev/loop0`); writing jobs overwrite their ranges of it.
    pub device: String,
    pub scheduler: KernelScheduler,
    /// Tunables under `queue/iosched/`, by their sysfs names, written as given.
    pub tunables: Vec<(String, String)>,
    /// `queue/nr_requests`, written after the scheduler (selecting one resets it).
    pub nr_requests: Option<String>,
    /// Seed of the layout, as `iosched run --seed`: the engine's bytes for the same seed.
    pub seed: u64,
    /// Write even to a device that is mounted, partitioned or carries a file system.
    pub force: bool,
    /// Capture the kernel's blk events and scheduler messages here ([`ftrace`]).
    pub trace: Option<PathBuf>,
    pub fio: FioBinary,
    pub format: FioFormat,
    /// When fio is taken for hung and killed.
    pub timeout: Timeout,
}

/// fio's report of the run.
#[derive(Clone, Debug)]
pub enum FioReport {
    /// fio's JSON with the `iosched` object added.
    Json(serde_json::Value),
    /// fio's normal or terse output, as fio wrote it.
    Text(String),
}

/// What was put back after the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// The scheduler selected again.
    pub scheduler: Option<String>,
    /// How many of its tunables were written back.
    pub tunables: usize,
    /// `queue/nr_requests` written back.
    pub nr_requests: Option<String>,
    /// Cgroup directories removed.
    pub cgroups_removed: usize,
    /// What could not be put back.
    pub warnings: Vec<String>,
}

/// A finished (or interrupted but reported) kernel run.
#[derive(Clone, Debug)]
pub struct KernelOutcome {
    pub report: FioReport,
    /// What fio wrote to stderr.
    pub fio_stderr: String,
    /// Ctrl-C stopped fio: the report is partial.
    pub interrupted: bool,
    /// Set when fio ignored the SIGINT and the watchdog killed it that long after.
    pub killed_after: Option<Duration>,
    pub restored: Restored,
    /// Set-up warnings (a cgroup without a writable weight file) and restore failures.
    pub warnings: Vec<String>,
}

/// Runs `spec`'s jobs with `fio` on its device under the kernel's scheduler, fio's report in
/// `format`, then puts the device back. `stop` is the SIGINT flag: when it is set fio is
/// interrupted (and killed if it has not exited [`FIO_EXIT_GRACE`] later) and the run
/// reports what fio measured. fio running past its jobs' planned time with a margin
/// ([`Timeout::Planned`]) is killed, and the run fails.
pub fn run(
    spec: &RunSpec,
    fio: &FioBinary,
    format: FioFormat,
    stop: &AtomicBool,
) -> Result<KernelOutcome, KernelError> {
    run_with_timeout(spec, fio, format, stop, Timeout::Planned)
}

/// [`run`], with fio's run-length limit given (`iosched kernel --timeout`).
pub fn run_with_timeout(
    spec: &RunSpec,
    fio: &FioBinary,
    format: FioFormat,
    stop: &AtomicBool,
    timeout: Timeout,
) -> Result<KernelOutcome, KernelError> {
    let mut run = KernelRun::from_spec(spec, fio, format)?;
    run.timeout = timeout;
    run_resolved(&run, stop)
}

fn run_resolved(run: &KernelRun, stop: &AtomicBool) -> Result<KernelOutcome, KernelError> {
    // A Ctrl-C while the spec was read: the device is not touched at all.
    interrupted_before_fio(stop)?;
    // fio writes the jobs' logs itself, in place: each path passes the gate first.
    iosched_driver::io_log::check_job_logs(&run.jobs.jobs, run.force)
        .map_err(|(option, error)| KernelError::Output { option, error })?;
    let target = block_device(&run.device, run.force)?;
    // Opened before the device is touched: a refused path costs no run.
    let trace_out = open_trace(run)?;
    let layout =
        lay_out(&run.jobs.jobs, target.capacity_bytes, run.seed).map_err(KernelError::Layout)?;
    let disk = target.disk.clone().unwrap_or_default();
    let queue_dir = PathBuf::from(format!("/sys/block/{disk}/queue"));
    let mut queue = QueueGuard::switch(
        &queue_dir,
        run.scheduler,
        run.nr_requests.as_deref(),
        &run.tunables,
    )?;
    let (nr_requests, tunables) = queue.applied();
    let cgroup_root = format!("iosched-{}", std::process::id());
    let mut cgroups = CgroupGuard::set_up(&run.jobs, &cgroup_root)?;
    let capture = trace_out
        .map(|out| TraceCapture::start(&disk, out))
        .transpose()?;
    let fio = run_fio(run, &layout, &cgroup_root, stop)?;
    // Read once: a SIGINT arriving while the report is put together changes nothing.
    let interrupted = stop.load(Ordering::Relaxed);
    let mut restored = Restored::default();
    let trace = capture
        .map(|capture| capture.finish(&mut restored))
        .transpose()?;
    cgroups.restore(&mut restored);
    queue.restore(&mut restored);
    let facts = report::RunFacts {
        scheduler: run.scheduler.sysfs_name(),
        device: &run.device,
        target: &target,
        previous_scheduler: queue.previous_scheduler().map(str::to_string),
        nr_requests,
        tunables,
        fio_version: &run.fio.version,
        weights: std::mem::take(&mut cgroups.weights),
        weights_applied: cgroups.weights_applied,
        interrupted,
    };
    let mut warnings = std::mem::take(&mut cgroups.warnings);
    warnings.extend(restored.warnings.iter().cloned());
    let clone_jobs: Vec<usize> = layout.clones.iter().map(|c| c.job).collect();
    let report = match fio_report(run, &fio, &clone_jobs, facts) {
        Ok(FioReport::Json(mut value)) => {
            if let (Some(summary), Some(path)) = (&trace, &run.trace) {
                value["iosched"]["trace"] = summary.to_json(&path.display().to_string());
            }
            FioReport::Json(value)
        }
        Ok(report) => report,
        Err(error) => {
            // No outcome to carry them.
            warn(&warnings);
            return Err(error);
        }
    };
    Ok(KernelOutcome {
        report,
        fio_stderr: fio.stderr,
        interrupted,
        killed_after: fio.finished.killed_after,
        restored,
        warnings,
    })
}

/// The trace file, created (as `FILE.partial`) through the gate.
fn open_trace(run: &KernelRun) -> Result<Option<OutFile>, KernelError> {
    let Some(path) = &run.trace else {
        return Ok(None);
    };
    OutFile::create(path, run.force)
        .map(Some)
        .map_err(|error| KernelError::Output {
            option: "--trace",
            error,
        })
}

/// Prints warnings that no outcome will carry (the run ended in an error): the device's
/// state must not go unmentioned.
pub(crate) fn warn(warnings: &[String]) {
    for warning in warnings {
        eprintln!("iosched: warning: {warning}");
    }
}

/// The device, probed: a block device that may be written (or `force`).
fn block_device(device: &str, force: bool) -> Result<Target, KernelError> {
    let target = target::probe(device).map_err(KernelError::Target)?;
    if target.kind != TargetKind::BlockDevice {
        return Err(KernelError::NotBlockDevice {
            path: device.to_string(),
        });
    }
    if !force {
        if let Some(reason) = safety::refusal(&target) {
            return Err(KernelError::Refused {
                path: device.to_string(),
                reason,
            });
        }
    }
    Ok(target)
}

/// A scratch directory for fio's files, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, KernelError> {
        let dir = std::env::temp_dir().join(format!("iosched-kernel-{}", std::process::id()));
        fs::create_dir_all(&dir).map_err(|error| KernelError::Scratch {
            what: "create a scratch directory",
            error,
        })?;
        Ok(Scratch(dir))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn interrupted_before_fio(stop: &AtomicBool) -> Result<(), KernelError> {
    if stop.load(Ordering::Relaxed) {
        return Err(KernelError::Interrupted {
            when: Interruption::BeforeFio,
            killed_after: None,
        });
    }
    Ok(())
}

/// What fio left: how it ended, its report file and its stderr.
struct FioRun {
    finished: supervise::Finished,
    raw: String,
    stderr: String,
}

/// Writes the job file and runs fio on it, unless a SIGINT came first. fio killed for
/// running past its limit is an error (the caller's guards put the device back).
fn run_fio(
    run: &KernelRun,
    layout: &Layout,
    cgroup_root: &str,
    stop: &AtomicBool,
) -> Result<FioRun, KernelError> {
    let scratch = Scratch::new()?;
    let job_path = scratch.path("jobs.fio");
    let text = jobfile::job_file(&run.jobs, layout, &run.device, cgroup_root);
    fs::write(&job_path, text).map_err(|error| KernelError::Scratch {
        what: "write the generated job file",
        error,
    })?;
    interrupted_before_fio(stop)?;
    let output = scratch.path("fio.out");
    let args = fio_args(run.format, &output);
    let stderr_path = scratch.path("fio.err");
    let planned = deadline::planned(&run.jobs, layout);
    let limit = run.timeout.limit(planned);
    let finished = supervise::run_fio(&run.fio, &args, &job_path, &stderr_path, stop, limit)?;
    if let Some(limit) = finished.timed_out {
        return Err(KernelError::TimedOut {
            limit,
            planned,
            given: matches!(run.timeout, Timeout::After(_)),
        });
    }
    Ok(FioRun {
        finished,
        raw: fs::read_to_string(&output).unwrap_or_default(),
        stderr: fs::read_to_string(&stderr_path).unwrap_or_default(),
    })
}

/// fio's options before the job file.
fn fio_args(format: FioFormat, output: &Path) -> Vec<OsString> {
    let mut output_arg = OsString::from("--output=");
    output_arg.push(output);
    vec![
        format!("--output-format={}", format.fio_name()).into(),
        output_arg,
    ]
}

/// fio's report, or why there is none: fio failed, or was interrupted before it reported.
fn fio_report(
    run: &KernelRun,
    fio: &FioRun,
    clone_jobs: &[usize],
    facts: report::RunFacts,
) -> Result<FioReport, KernelError> {
    let interrupted = facts.interrupted;
    if !fio.finished.status.success() && !interrupted {
        return Err(KernelError::FioFailed {
            status: fio.finished.status,
            stderr: fio.stderr.clone(),
        });
    }
    let raw = &fio.raw;
    let nothing = raw.trim().is_empty() || (run.format.is_json() && !raw.contains('{'));
    if interrupted && nothing {
        return Err(KernelError::Interrupted {
            when: Interruption::NothingReported,
            killed_after: fio.finished.killed_after,
        });
    }
    if run.format.is_json() {
        report::with_iosched(raw, &run.jobs, clone_jobs, facts).map(FioReport::Json)
    } else {
        Ok(FioReport::Text(raw.clone()))
    }
}
