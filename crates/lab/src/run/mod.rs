//! One run from its [`RunSpec`]: the job files parsed against the spec's machine, the
//! target chosen by the spec's [`Target`] (the simulator for a preset or model file, the
//! io_uring engine for a real path), the trace files opened before the first I/O, fio's logs
//! written after the last, and the results assembled in fio's shape with one `iosched`
//! object whatever the backend.
//!
//! `iosched run`, `iosched replay` and `iosched reproduce` come through here; the binary only
//! turns arguments into a spec and prints what comes back.

mod error;
mod real;
mod results;
mod simulated;
mod sinks;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use iosched_driver::spec::{Machine, Outputs, RunSpec, Setting, Target, RUN_SPEC_VERSION};
use iosched_driver::{Outcome, RunProgress};
use iosched_engine::EngineOutcome;
use iosched_sim::SimOutcome;
use iosched_workload::fio::{self, JobSource};
use iosched_workload::{extent, JobSet};
use serde_json::Value;

pub use error::RunError;
pub use results::Results;

/// What the caller hears while a run goes on.
pub struct Hooks<'a> {
    /// Warnings and notes about the jobs (ignored options, surprising values), before the run.
    pub notify: &'a mut dyn FnMut(&str),
    /// Where the run stands, now and then.
    pub progress: &'a mut dyn FnMut(Progress),
    /// Set (by a SIGINT or SIGTERM handler) to stop the run early, with partial results.
    pub stop: &'a AtomicBool,
}

/// Where a run stands: its clock (the simulator's virtual time, or the engine's time since
/// the jobs started), the job I/Os done, and how many the run is expected to do when that
/// is known before it starts (jobs bounded by size, count or rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub now_ns: u64,
    pub ios_done: u64,
    pub ios_planned: Option<u64>,
}

impl Progress {
    fn of(point: RunProgress, ios_planned: Option<u64>) -> Progress {
        Progress {
            now_ns: point.now,
            ios_done: point.ios_done,
            ios_planned,
        }
    }
}

/// A finished run: its jobs and what the backend handed back.
pub struct Finished {
    pub jobs: JobSet,
    pub backend: BackendOutcome,
    /// Trace, decision and fio log files (`write_bw_log`, `write_iolog`...) that could not be
    /// written whole: the run's results stand, the caller reports these after them.
    pub log_errors: Vec<RunError>,
}

/// When a run started and how long it took, measured by the caller: the only wall-clock facts
/// in a result (`iosched.wall_clock`, and an engine run's fio timestamps), so a simulated
/// result is otherwise byte-stable for a given seed.
#[derive(Clone, Copy, Debug, Default)]
pub struct WallClock {
    /// Since the Unix epoch.
    pub started: Duration,
    pub elapsed: Duration,
}

/// What each backend handed back, with the device as the `iosched` object describes it.
pub enum BackendOutcome {
    Simulated {
        outcome: SimOutcome,
        device: Value,
    },
    Real {
        outcome: EngineOutcome,
        device: Value,
    },
}

impl Finished {
    /// Whether a signal stopped the run: its results are partial.
    pub fn interrupted(&self) -> bool {
        match &self.backend {
            BackendOutcome::Simulated { outcome, .. } => outcome.interrupted,
            BackendOutcome::Real { outcome, .. } => outcome.interrupted,
        }
    }

    /// What every backend reports.
    pub fn outcome(&self) -> &Outcome {
        match &self.backend {
            BackendOutcome::Simulated { outcome, .. } => outcome,
            BackendOutcome::Real { outcome, .. } => outcome,
        }
    }
}

/// What a command line says about a run, before it becomes a [`RunSpec`].
pub struct CommandLine {
    pub jobs: Vec<JobSource>,
    /// `--device`: a preset, a model file (`.toml`) or a real path ([`Target::from_device_arg`]).
    pub device: String,
    pub scheduler: String,
    /// `--set` in order: scheduler tunables and block-layer/file-system knobs mixed.
    pub settings: Vec<Setting>,
    /// `--mem` of a simulated machine, the same as a leading `--set mem=`.
    pub mem: Option<String>,
    pub seed: u64,
    pub uptime_s: u64,
    pub check: bool,
    pub force: bool,
    pub outputs: Outputs,
}

/// Builds the spec: settings split into tunables and knobs, the machine the job files see
/// (the simulated one, or this one for a real target) captured.
pub fn spec_from(command: CommandLine) -> Result<RunSpec, RunError> {
    let target = Target::from_device_arg(&command.device);
    let (mut knobs, tunables): (Vec<_>, Vec<_>) = command
        .settings
        .into_iter()
        .partition(|setting| iosched_sim::fs::FsConfig::is_knob(&setting.name));
    if let Some(mem) = command.mem {
        knobs.insert(
            0,
            Setting {
                name: "mem".to_string(),
                value: mem,
            },
        );
    }
    if target.is_simulated() {
        if let Some(setting) = tunables.iter().find(|s| s.name == "engine_threads") {
            return Err(RunError::Knob(format!(
                "engine_threads={}: the real engine's worker threads, for a run on a device or \
                 file (--device PATH); a simulated run has one event loop",
                setting.value
            )));
        }
    }
    let host = iosched_engine::host::parse_context();
    let machine = if target.is_simulated() {
        simulated::machine(&knobs, &host, &command.jobs)?
    } else {
        Machine::capture(&host, &command.jobs)
    };
    Ok(RunSpec {
        version: RUN_SPEC_VERSION,
        jobs: command.jobs,
        machine,
        target,
        scheduler: command.scheduler,
        tunables,
        knobs,
        seed: command.seed,
        uptime_s: command.uptime_s,
        check: command.check,
        force: command.force,
        outputs: command.outputs,
    })
}

/// Runs `spec` to the end (or to `hooks.stop` on a real target).
pub fn execute(spec: &RunSpec, hooks: &mut Hooks<'_>) -> Result<Finished, RunError> {
    let context = spec
        .machine
        .parse_context(iosched_engine::host::clone_limit());
    let jobs = fio::parse_sources(&spec.jobs, &context).map_err(RunError::Parse)?;
    for warning in &jobs.warnings {
        (hooks.notify)(&format!("warning: {warning}"));
    }
    sinks::check_job_logs(&jobs.jobs, spec.force)?;
    let uptime_ns = spec
        .uptime_s
        .checked_mul(iosched_core::NSEC_PER_SEC)
        .ok_or(RunError::Uptime(spec.uptime_s))?;
    let (backend, trace_error) = if spec.target.is_simulated() {
        simulated::run(spec, &jobs, uptime_ns, hooks)?
    } else {
        real::run(spec, &jobs, uptime_ns, hooks)?
    };
    let mut finished = Finished {
        jobs,
        backend,
        log_errors: Vec::new(),
    };
    let outcome = finished.outcome();
    finished.log_errors = trace_error
        .into_iter()
        .chain(sinks::write_job_logs(&outcome.clones, spec.force))
        .chain(sinks::write_issue_logs(
            &outcome.issued,
            &finished.jobs.jobs,
            &outcome.layout,
            spec.force,
        ))
        .collect();
    Ok(finished)
}

/// The most simulated time `spec`'s jobs can take, from their `runtime`, `ramp_time` and
/// `startdelay`, the jobs started as fio starts them after `stonewall` and `wait_for`
/// ([`extent::run_length`]): a progress bar's total. `None` when a job has no `runtime` (it
/// ends when its bytes are done, which only the run tells) or the job files do not parse.
pub fn planned_ns(spec: &RunSpec) -> Option<u64> {
    let context = spec
        .machine
        .parse_context(iosched_engine::host::clone_limit());
    let jobs = fio::parse_sources(&spec.jobs, &context).ok()?;
    let clones = extent::clone_regions(&jobs.jobs, None);
    extent::run_length(&jobs.jobs, &clones, |job, _| extent::clone_time_bound(job))
        .filter(|&t| t > 0)
}
