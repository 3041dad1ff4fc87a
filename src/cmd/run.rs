//! `iosched run JOBFILE...`: fio job files through a scheduler on a simulated device or, for a
//! path, a real file or block device. The arguments become a [`RunSpec`]; `iosched_lab::run`
//! runs it; this prints the results.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, Context};
use clap::Args;
use iosched_driver::spec::{Outputs, RunSpec, Setting, Target};
use iosched_lab::run::{BackendOutcome, CommandLine, Finished, Hooks, RunError, WallClock};
use iosched_report::output::Formats;

pub use super::output::OutputFormat;
use super::output::{Destination, SavedSpec};
use super::{CmdResult, Eta, Failure};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// fio job files; every file after the first starts with an implicit stonewall.
    #[arg(required_unless_present = "spec", value_name = "JOBFILE")]
    pub(crate) jobfiles: Vec<PathBuf>,
    /// Scheduler: noop (alias none), mq-deadline (alias deadline), kyber, bfq, cfq, adaptive (see `iosched schedulers`); the kernel's own run with `iosched kernel`.
    #[arg(long, default_value = "noop")]
    pub(crate) scheduler: String,
    /// Simulated device preset (see `iosched devices`), a model file ending in .toml, or a path (contains '/'): a regular
    /// file or block device driven for real by the io_uring engine.
    #[arg(long, default_value = "fixed")]
    pub(crate) device: String,
    /// Set a scheduler tunable by its sysfs name, e.g. `--set fifo_batch=8`, or a page-cache,
    /// writeback or file-system knob (`dirty_ratio`, `flusher=pdflush`, `dirty_throttle=writeback`,
    /// `read_ahead_kb`, `barrier=0`...; `iosched schedulers` and `iosched knobs` list them).
    /// Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Simulated memory (default 4g; the page cache gets it less the kernel's struct pages and
    /// free reserve); same as `--set mem=SIZE`.
    #[arg(long, value_name = "SIZE")]
    pub(crate) mem: Option<String>,
    /// Seed of every random stream; same inputs and seed give byte-identical results.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// fio's comma list of normal, json, json+, terse (minimal, csv), e.g. `normal,json`.
    #[arg(long, default_value = "normal", value_name = "LIST")]
    pub(crate) output_format: Formats,
    /// Write results here instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Check the scheduler's invariants after every event (slow).
    #[arg(long)]
    pub(crate) check: bool,
    /// Seconds the machine has been up when the run starts. The scheduler is created at boot
    /// and reads boot-based time, as the kernel's does; near boot some of CFQ's u64
    /// arithmetic wraps (service-tree keys, workload expiry). `--uptime 0` starts at boot.
    #[arg(long, value_name = "SECONDS", default_value_t = 1000)]
    pub(crate) uptime: u64,
    /// Write a trace: blkparse-style text, or with a `.blktrace` name the binary format
    /// (`NAME.blktrace` → `NAME.blktrace.0`, read by `blkparse -i NAME` and `btt`).
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<PathBuf>,
    /// Write one JSON line per scheduler decision (queue chosen, idle armed, preemption...).
    #[arg(long, value_name = "FILE")]
    pub(crate) decisions: Option<PathBuf>,
    /// Most bytes the trace and the decision file may each take (k, m, g, t: powers of 1024);
    /// a file is cut there, with an error after the results.
    #[arg(long, value_name = "SIZE", default_value = "1g", value_parser = parse_byte_size)]
    pub(crate) trace_limit: u64,
    /// A progress line with its ETA on stderr: simulated time of the jobs' total, or the
    /// engine's elapsed time of it (fio's `--eta`; `auto`: on a terminal).
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) eta: Eta,
    /// Engine only: write to a block device even if it is mounted, partitioned or carries a
    /// file system.
    #[arg(long)]
    pub(crate) force: bool,
    /// Write the run's description (job files' text, machine, target, scheduler, settings,
    /// seed) as JSON; `--spec` runs it again to the same result.
    #[arg(long, value_name = "FILE")]
    pub(crate) save_spec: Option<PathBuf>,
    /// Run a description written by `--save-spec` instead of job files and flags (only
    /// `--output-format` and `--output` apply).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["jobfiles", "set", "mem", "save_spec"])]
    pub(crate) spec: Option<PathBuf>,
}

/// `SIZE` with an optional binary suffix (`4096`, `64k`, `1g`), read as `--mem` is.
fn parse_byte_size(text: &str) -> Result<u64, String> {
    iosched_writeback::config::parse_size(text)
        .filter(|&bytes| bytes > 0)
        .ok_or_else(|| format!("'{text}': expected a size such as 64k or 1g"))
}

/// `--set KEY=VALUE` items.
pub(crate) fn settings(items: &[String]) -> Result<Vec<Setting>, Failure> {
    items
        .iter()
        .map(|item| {
            Setting::parse(item).ok_or_else(|| {
                Failure::input(anyhow!(
                    "--set '{item}': expected KEY=VALUE (e.g. --set slice_idle=0)"
                ))
            })
        })
        .collect()
}

pub(crate) fn run_failure(error: RunError) -> Failure {
    if error.is_input() {
        Failure::input(error)
    } else {
        Failure::run(error)
    }
}

/// The run the arguments describe: a saved spec, or job files and flags.
fn spec(args: &RunArgs) -> Result<RunSpec, Failure> {
    if let Some(path) = &args.spec {
        let mut spec = RunSpec::load(path)
            .with_context(|| format!("--spec {}", path.display()))
            .map_err(Failure::input)?;
        // Only this command line grants --force, and a spec's outputs are paths read from
        // a file: they stay below the current directory.
        spec.force = args.force;
        confine_outputs(&spec.outputs, args.force)
            .with_context(|| format!("--spec {}", path.display()))
            .map_err(Failure::input)?;
        return Ok(spec);
    }
    let jobs = super::read_jobs(&args.jobfiles)?;
    iosched_lab::run::spec_from(CommandLine {
        jobs,
        device: args.device.clone(),
        scheduler: args.scheduler.clone(),
        settings: settings(&args.set)?,
        mem: args.mem.clone(),
        seed: args.seed,
        uptime_s: args.uptime,
        check: args.check,
        force: args.force,
        outputs: Outputs {
            trace: args.trace.clone(),
            decisions: args.decisions.clone(),
            trace_limit: Some(args.trace_limit),
        },
    })
    .map_err(run_failure)
}

/// A spec's trace and decision paths, which came from a file, checked as a job file's are.
pub(crate) fn confine_outputs(outputs: &Outputs, force: bool) -> anyhow::Result<()> {
    let paths = [
        ("outputs.trace", &outputs.trace),
        ("outputs.decisions", &outputs.decisions),
    ];
    for (key, path) in paths {
        if let Some(path) = path {
            iosched_gate::confined(path, force).with_context(|| key.to_string())?;
        }
    }
    Ok(())
}

pub fn run(args: RunArgs) -> CmdResult {
    let spec = spec(&args)?;
    let saved = SavedSpec::write(args.save_spec.as_deref(), &spec, args.force)?;
    // Before the output exists, so that once it does a signal always finds the handler.
    let stop = super::stop::install();
    let destination = Destination::open(args.output.as_deref(), args.force)?;
    let clock = match spec.target {
        Target::Real(_) => "elapsed",
        _ => "simulated",
    };
    let mut progress = Progress::new(iosched_lab::run::planned_ns(&spec), clock, args.eta);
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let wall_start = Instant::now();
    let finished = iosched_lab::run::execute(
        &spec,
        &mut Hooks {
            notify: &mut |line| eprintln!("iosched: {line}"),
            progress: &mut |point| progress.tick(point),
            stop,
        },
    );
    // A run that failed once started is worth its spec; one refused up front is not.
    let mut finished = match finished {
        Ok(finished) => finished,
        Err(error) if error.is_input() => return Err(run_failure(error)),
        Err(error) => {
            saved.keep()?;
            return Err(run_failure(error));
        }
    };
    saved.keep()?;
    progress.finish();
    let wall = WallClock {
        started,
        elapsed: wall_start.elapsed(),
    };
    let results = finished.take_results(&spec, wall);
    destination.write(&results.run, args.output_format, &results.appendix)?;
    // The process ends after this: freeing the results (4096 clones: each one's figures and
    // the `iosched` object's per-queue entries) would cost about 4 K instructions a clone.
    std::mem::forget(results);
    run_status(&finished)
}

/// A run's problems, after its (partial) results: verify failures, I/O errors, a signal.
fn run_status(finished: &Finished) -> CmdResult {
    let (verify_failures, io_errors) = match &finished.backend {
        BackendOutcome::Real { outcome, .. } => {
            (&outcome.verify_failures[..], &outcome.io_errors[..])
        }
        BackendOutcome::Simulated { .. } => (&[][..], &[][..]),
    };
    for failure in verify_failures {
        eprintln!(
            "iosched: verify: job '{}': block of {} bytes at offset {}: {}",
            failure.job, failure.len, failure.offset, failure.message
        );
    }
    for error in io_errors {
        eprintln!("iosched: I/O error: {error}");
    }
    for error in &finished.log_errors {
        eprintln!("iosched: {error}");
    }
    super::stop::status(finished.interrupted())?;
    // Blocks a job continued past (continue_on_error=verify) are reported, as fio prints
    // them, but do not fail the run: fio 3.33 exits 0 then.
    let fatal = verify_failures.iter().filter(|f| !f.survived).count();
    if fatal > 0 {
        return Err(Failure::run(anyhow!("verify found {fatal} bad block(s)")));
    }
    if !io_errors.is_empty() {
        return Err(Failure::run(anyhow!("{} I/O error(s)", io_errors.len())));
    }
    if !finished.log_errors.is_empty() {
        return Err(Failure::run(anyhow!(
            "the results above are complete; {} output file(s) could not be written whole",
            finished.log_errors.len()
        )));
    }
    Ok(())
}

/// Progress on stderr, shown only on a terminal and only once a run has taken a second: the
/// simulated time so far of the most the jobs can take (their `runtime`s), with an ETA from
/// the pace so far; a spinner with the simulated time when the jobs have no `runtime`.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    /// The jobs' planned time, in ns.
    planned_ns: Option<u64>,
    /// "simulated" (the simulator's clock) or "elapsed" (the engine's wall clock).
    clock: &'static str,
    shown: bool,
}

impl Progress {
    fn new(planned_ns: Option<u64>, clock: &'static str, eta: Eta) -> Progress {
        Progress {
            bar: None,
            started: Instant::now(),
            planned_ns,
            clock,
            shown: eta.shown(),
        }
    }

    /// `point.now_ns`: the run's clock, which starts at 0 with the jobs.
    fn tick(&mut self, point: iosched_lab::run::Progress) {
        if self.bar.is_none() {
            // A run over within a second draws nothing.
            if !self.shown || self.started.elapsed() < Duration::from_secs(1) {
                return;
            }
            self.bar = Some(self.start_bar(point.ios_planned));
        }
        let Some(bar) = &self.bar else { return };
        let clock = format!("{} {:.1} s", self.clock, point.now_ns as f64 / 1e9);
        match (self.planned_ns, point.ios_planned) {
            (Some(planned), _) => bar.set_position(point.now_ns.min(planned) / 1_000_000),
            (None, Some(ios)) => {
                bar.set_position(point.ios_done.min(ios));
                bar.set_message(clock);
            }
            (None, None) => bar.set_message(clock),
        }
    }

    fn start_bar(&self, ios_planned: Option<u64>) -> indicatif::ProgressBar {
        let target = indicatif::ProgressDrawTarget::stderr();
        let Some(planned) = self.planned_ns else {
            return match ios_planned {
                Some(ios) => Self::io_bar(ios, target),
                None => {
                    let bar = indicatif::ProgressBar::with_draw_target(None, target);
                    bar.enable_steady_tick(Duration::from_millis(120));
                    bar
                }
            };
        };
        // Positions in milliseconds of the run's clock.
        let bar = indicatif::ProgressBar::with_draw_target(Some(planned / 1_000_000), target);
        // indicatif's own {eta} smooths a rate that a run of I/O moves in jumps (it read 0 s
        // at 2 s of 3); the run's pace so far is the estimate fio's eta line gives too.
        let template = format!("{{bar:30}} {} {{msg}}", self.clock);
        let style = indicatif::ProgressStyle::with_template(&template)
            .expect("a valid template")
            .with_key(
                "msg",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let (done, total) = (state.pos(), state.len().unwrap_or(0));
                    let eta = eta_from_pace(state);
                    let _ = write!(
                        w,
                        "{:.1} s of {:.1} s, ETA {}",
                        done as f64 / 1e3,
                        total as f64 / 1e3,
                        minutes_seconds(eta)
                    );
                },
            );
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    }

    /// A run that ends when its I/O is done (sizes, counts, rates): the clock, the I/Os done
    /// of the expected count and an ETA from the pace so far, as fio's eta line estimates a
    /// size-bound job from its bytes.
    fn io_bar(ios: u64, target: indicatif::ProgressDrawTarget) -> indicatif::ProgressBar {
        let bar = indicatif::ProgressBar::with_draw_target(Some(ios), target);
        let style = indicatif::ProgressStyle::with_template("{bar:30} {msg}, {ios}")
            .expect("a valid template")
            .with_key(
                "ios",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let (done, total) = (state.pos(), state.len().unwrap_or(0));
                    let eta = eta_from_pace(state);
                    let _ = write!(w, "{done} of ~{total} I/Os, ETA {}", minutes_seconds(eta));
                },
            );
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    }

    fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The time left at the pace so far: the wall time taken per unit done, times the units left
/// (what fio's eta line estimates too; indicatif's own {eta} smooths a rate that moves in
/// jumps).
fn eta_from_pace(state: &indicatif::ProgressState) -> f64 {
    let (done, total) = (state.pos(), state.len().unwrap_or(0));
    state.elapsed().as_secs_f64() * total.saturating_sub(done) as f64 / done.max(1) as f64
}

/// `12m:05s`, as fio's eta line writes it.
fn minutes_seconds(seconds: f64) -> String {
    let whole = seconds.round().clamp(0.0, 99.0 * 3600.0) as u64;
    format!("{:02}m:{:02}s", whole / 60, whole % 60)
}

#[cfg(test)]
mod tests {
    /// The run spec of `job` on the simulated `fixed` device under noop.
    fn fixed_noop_spec(job: &std::path::Path) -> iosched_driver::spec::RunSpec {
        iosched_lab::run::spec_from(iosched_lab::run::CommandLine {
            jobs: vec![iosched_workload::fio::JobSource::read(job).unwrap()],
            device: "fixed".into(),
            scheduler: "noop".into(),
            settings: vec![],
            mem: None,
            seed: 1,
            uptime_s: 1000,
            check: false,
            force: false,
            outputs: Default::default(),
        })
        .unwrap()
    }

    /// The planned time adds stonewalled phases and takes the longest job of each.
    #[test]
    fn planned_time_adds_phases() {
        let dir = iosched_workload::scratch::ScratchDir::new("planned");
        let job = dir.join("j.fio");
        std::fs::write(
            &job,
            "[a]\nruntime=2\ntime_based\n[b]\nruntime=3\nstartdelay=1\n\
             [c]\nstonewall\nruntime=4\nramp_time=1\n",
        )
        .unwrap();
        let spec = fixed_noop_spec(&job);
        assert_eq!(iosched_lab::run::planned_ns(&spec), Some(9_000_000_000));
        std::fs::write(&job, "[a]\nsize=1m\n").unwrap();
        let spec = iosched_driver::spec::RunSpec {
            jobs: vec![iosched_workload::fio::JobSource::read(&job).unwrap()],
            ..spec
        };
        assert_eq!(
            iosched_lab::run::planned_ns(&spec),
            None,
            "no runtime: unknown"
        );
    }

    /// fio 3.33 starts a `wait_for` job once the named job is done (measured: see
    /// `extent::run_length`): c after a's 2 s, the run 3 s. The bar ignored wait_for (2 s).
    #[test]
    fn planned_time_waits_for_wait_for() {
        let dir = iosched_workload::scratch::ScratchDir::new("planned-wait-for");
        let job = dir.join("j.fio");
        std::fs::write(
            &job,
            "[a]\nruntime=2\ntime_based\n[b]\nruntime=1\n[c]\nwait_for=a\nruntime=1\n",
        )
        .unwrap();
        let spec = fixed_noop_spec(&job);
        assert_eq!(iosched_lab::run::planned_ns(&spec), Some(3_000_000_000));
    }
}
