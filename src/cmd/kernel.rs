//! `iosched kernel JOBFILE --device PATH --scheduler NAME`: the same jobs run by `fio` against
//! the kernel's own scheduler on a real block device, for comparison with the engine and the
//! simulator. The arguments become a `RunSpec` (as `iosched run`'s do); the run itself —
//! sysfs, cgroups, the generated job file, fio under its SIGINT and run-length watchdogs,
//! putting everything back — is `iosched_kernel::run_with_timeout`; this is its arguments and
//! its printing. fio's JSON is printed with the `iosched` object added; its normal and terse
//! outputs as fio wrote them.

use std::path::PathBuf;

use anyhow::{anyhow, Context};
use clap::Args;
use iosched_driver::spec::{Outputs, RunSpec};
use iosched_engine::signal;
use iosched_kernel::{
    killed_note, FioBinary, FioFormat, FioReport, KernelError, KernelOutcome, KernelScheduler,
    Timeout,
};
use iosched_lab::run::CommandLine;

use super::output::{Destination, SavedSpec};
use super::run::{run_failure, settings};
use super::{CmdResult, Failure};
use iosched_report::output::Formats;

#[derive(Args, Debug)]
pub struct KernelArgs {
    /// fio job files (the same ones `iosched run` takes).
    #[arg(required_unless_present = "spec", value_name = "JOBFILE")]
    jobfiles: Vec<PathBuf>,
    /// Block device to run on (its data in the jobs' ranges is overwritten by writing jobs).
    #[arg(long, value_name = "PATH", required_unless_present = "spec")]
    device: Option<String>,
    /// Kernel scheduler: bfq, mq-deadline, kyber or none (noop and deadline are accepted as aliases).
    #[arg(long, required_unless_present = "spec")]
    scheduler: Option<String>,
    /// Set a tunable under queue/iosched/, e.g. `--set slice_idle=0`, or the queue's
    /// `nr_requests`. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed of the layout (as `iosched run --seed`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// fio's comma list of normal, json, json+, terse (minimal, csv), as `iosched run` takes
    /// it; fio writes them (a list of json or json+ alone carries the `iosched` object).
    #[arg(long, default_value = "json", value_name = "LIST")]
    output_format: Formats,
    /// Write results here instead of standard output.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write to a device even if it is mounted, partitioned or carries a file system.
    #[arg(long)]
    force: bool,
    /// The fio binary.
    #[arg(long, default_value = "fio")]
    fio: String,
    /// Kill fio (and its job processes) if it is still running after this many seconds, and
    /// fail; 0: never. Default: twice the jobs' planned time plus 60 s (none for a
    /// time-based job without a runtime).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Capture the kernel's own record of the run here: ftrace's `blk` tracer for the device
    /// (request events and the scheduler's messages, e.g. BFQ's) and BFQ's idle timer, as
    /// text; tracefs is mounted in a private mount namespace and every setting is put back.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Write the run's description (job files' text, machine, device, scheduler, settings,
    /// seed) as JSON, as `iosched run --save-spec` does; `--spec` runs it again.
    #[arg(long, value_name = "FILE")]
    save_spec: Option<PathBuf>,
    /// Run a description written by `--save-spec` (of `iosched kernel`, or of `iosched run`
    /// on a block device) instead of job files and flags.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["jobfiles", "device", "scheduler", "set", "seed", "save_spec", "trace"])]
    spec: Option<PathBuf>,
}

/// The exit status a kernel run's error deserves: 130 or 143 interrupted (SIGINT or SIGTERM),
/// 2 bad input, 1 failed.
fn failure(error: KernelError) -> Failure {
    let code = match error {
        KernelError::Interrupted { .. } => signal::stop_exit_status(),
        ref error if error.is_input() => 2,
        _ => 1,
    };
    Failure {
        error: anyhow!(error),
        code,
    }
}

/// The run the arguments describe. The scheduler's name and fio are checked before the job
/// files are read, so a missing fio is the first thing said.
fn describe(args: &KernelArgs) -> Result<(RunSpec, FioBinary), Failure> {
    if let Some(path) = &args.spec {
        let fio = FioBinary::find(&args.fio).map_err(failure)?;
        let mut spec = RunSpec::load(path)
            .with_context(|| format!("--spec {}", path.display()))
            .map_err(Failure::input)?;
        // Only this command line grants --force.
        spec.force = args.force;
        return Ok((spec, fio));
    }
    // Clap requires both without --spec.
    let (Some(device), Some(scheduler)) = (&args.device, &args.scheduler) else {
        return Err(Failure::input(anyhow!(
            "--device and --scheduler are required"
        )));
    };
    KernelScheduler::from_name(scheduler).map_err(failure)?;
    let settings = settings(&args.set)?;
    let fio = FioBinary::find(&args.fio).map_err(failure)?;
    let jobs = super::read_jobs(&args.jobfiles)?;
    // Choice: the kernel's clock is this machine's, so the spec's uptime is the default
    // `iosched run` records; the kernel run ignores it.
    let spec = iosched_lab::run::spec_from(CommandLine {
        jobs,
        device: device.clone(),
        scheduler: scheduler.clone(),
        settings,
        mem: None,
        seed: args.seed,
        uptime_s: iosched_core::DEFAULT_UPTIME_NS / iosched_core::NSEC_PER_SEC,
        check: false,
        force: args.force,
        outputs: Outputs {
            trace: args.trace.clone(),
            ..Outputs::default()
        },
    })
    .map_err(run_failure)?;
    Ok((spec, fio))
}

pub fn kernel(args: KernelArgs) -> CmdResult {
    // From here on SIGINT and SIGTERM only set a flag, so the device is always put back.
    let stop = super::stop::install();
    let (spec, fio) = describe(&args)?;
    let saved = SavedSpec::write(args.save_spec.as_deref(), &spec, args.force)?;
    let format = match args.output_format.to_string().as_str() {
        "json" => FioFormat::Json,
        "normal" => FioFormat::Normal,
        "terse" => FioFormat::Terse,
        _ => FioFormat::List(args.output_format),
    };
    // Opened (as FILE.partial) before the device is touched: a bad path costs no run.
    let destination = Destination::open(args.output.as_deref(), args.force)?;
    let timeout = args.timeout.map_or(Timeout::Planned, Timeout::from_secs);
    let outcome = iosched_kernel::run_with_timeout(&spec, &fio, format, stop, timeout);
    // A run refused up front (write safety, bad input) leaves no spec.
    if outcome
        .as_ref()
        .map_or_else(|error| !error.is_input(), |_| true)
    {
        saved.keep()?;
    }
    let outcome = outcome.map_err(failure)?;
    print_outcome(&outcome, destination)?;
    super::stop::status(outcome.interrupted)
}

/// fio's stderr and iosched's warnings on stderr, the report on stdout or in `--output`.
fn print_outcome(outcome: &KernelOutcome, destination: Destination) -> CmdResult {
    if let Some(after) = outcome.killed_after {
        eprintln!("iosched: {}", killed_note(after));
    }
    for warning in &outcome.warnings {
        eprintln!("iosched: warning: {warning}");
    }
    if !outcome.fio_stderr.trim().is_empty() {
        eprint!("{}", outcome.fio_stderr);
    }
    let text = match &outcome.report {
        FioReport::Json(value) => {
            let mut text = serde_json::to_string_pretty(value)
                .context("serialising results")
                .map_err(Failure::run)?;
            text.push('\n');
            text
        }
        FioReport::Text(text) => text.clone(),
    };
    destination.write_text(&text)
}
