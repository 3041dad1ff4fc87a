//! `iosched run JOBFILE...`: fio job files through a scheduler on a simulated device.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use iosched_core::{ServiceSummary, TunableValue};
use iosched_report::blktrace::TraceLabels;
use iosched_report::decisions::TraceFanout;
use iosched_report::output::Formats;
use iosched_report::stats::RunResult;
use iosched_sim::device::file::load_device_file;
use iosched_sim::device::{preset, presets};
use iosched_sim::{SimConfig, Simulation};
use iosched_workload::fio::{self, ParseContext};
use serde_json::{json, Map, Value};

use super::sinks::Sinks;
use super::{CmdResult, Failure};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Normal,
    Json,
    Terse,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// fio job files; every file after the first starts with an implicit stonewall.
    #[arg(required = true, value_name = "JOBFILE")]
    pub(crate) jobfiles: Vec<PathBuf>,
    /// Scheduler: noop (alias none), deadline (alias mq-deadline), cfq (see `iosched schedulers`); the kernel's bfq and kyber run with `iosched kernel`.
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
    /// Engine only: write to a block device even if it is mounted, partitioned or carries a
    /// file system.
    #[arg(long)]
    pub(crate) force: bool,
}

pub(crate) fn parse_set(items: &[String]) -> Result<Vec<(String, String)>, Failure> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                Ok((key.trim().to_string(), value.trim().to_string()))
            }
            _ => Err(Failure::input(anyhow!(
                "--set '{item}': expected KEY=VALUE (e.g. --set slice_idle=0)"
            ))),
        })
        .collect()
}

/// `--uptime SECONDS` in ns.
pub(crate) fn uptime_ns(seconds: u64) -> Result<u64, Failure> {
    seconds
        .checked_mul(iosched_core::NSEC_PER_SEC)
        .ok_or_else(|| Failure::input(anyhow!("--uptime {seconds}: too large")))
}

/// Takes the queue's `nr_requests` out of `--set` settings: on a real device it is the
/// queue's (`queue/nr_requests`), not the scheduler's.
pub(crate) fn take_nr_requests(settings: &mut Vec<(String, String)>) -> Option<String> {
    let at = settings
        .iter()
        .position(|(name, _)| name == "nr_requests")?;
    Some(settings.remove(at).1)
}

/// A spinner on stderr, shown only on a terminal and only once a run has taken a second.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
}

impl Progress {
    fn new() -> Progress {
        Progress {
            bar: None,
            started: Instant::now(),
        }
    }

    fn tick(&mut self, sim_time_ns: u64) {
        if self.bar.is_none() {
            if !io::stderr().is_terminal() || self.started.elapsed() < Duration::from_secs(1) {
                return;
            }
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(120));
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_message(format!("simulated {:.3} s", sim_time_ns as f64 / 1e9));
        }
    }

    fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

pub fn run(args: RunArgs) -> CmdResult {
    // A model file is simulated; any other path is a real file or device for the engine.
    let model_file = args.device.ends_with(".toml");
    if args.device.contains('/') && !model_file {
        return super::engine_run::run(args);
    }
    // Writeback and file-system knobs go to the simulated file system, the rest to the scheduler.
    let (mut fs_knobs, tunables): (Vec<_>, Vec<_>) = parse_set(&args.set)?
        .into_iter()
        .partition(|(name, _)| iosched_sim::fs::FsConfig::is_knob(name));
    if let Some(mem) = &args.mem {
        fs_knobs.insert(0, ("mem".to_string(), mem.clone()));
    }
    // `$mb_memory` and `$ncpus` in a job file describe the simulated machine, not this one.
    let machine = iosched_sim::fs::FsConfig::from_knobs(&fs_knobs)
        .map_err(|e| Failure::input(anyhow!("--set: {e}")))?;
    let parse_context = ParseContext {
        mb_memory: machine.writeback.mem_bytes >> 20,
        ncpus: machine.writeback.cpus,
        ..ParseContext::from_process_env()
    };
    let jobs = fio::parse_files(&args.jobfiles, &parse_context).map_err(Failure::input)?;
    for warning in &jobs.warnings {
        eprintln!("iosched: warning: {warning}");
    }
    let mut ignored = jobs.ignored_options.clone();
    if jobs.jobs.iter().any(|job| job.cpus_allowed.is_some()) {
        // The simulator has no CPUs to pin to; the engine honours it.
        ignored.push("cpus_allowed".to_string());
    }
    if !ignored.is_empty() {
        eprintln!(
            "iosched: note: ignored in simulation: {}",
            ignored.join(", ")
        );
    }
    let device = if model_file {
        load_device_file(&args.device)
            .with_context(|| "--device")
            .map_err(Failure::input)?
    } else {
        preset(&args.device).ok_or_else(|| {
            let known: Vec<&str> = presets().iter().map(|p| p.name).collect();
            Failure::input(anyhow!(
                "--device '{}': no such device preset (known: {}; a model file ends in .toml, \
                 a real file or device is a path)",
                args.device,
                known.join(", ")
            ))
        })?
    };
    let device_json = json!({
        "name": device.name(),
        "rotational": device.rotational(),
        "queue_depth": device.queue_depth(),
        "capacity_bytes": device.capacity_sectors() * 512,
    });
    let config = SimConfig {
        scheduler: args.scheduler.clone(),
        tunables,
        seed: args.seed,
        check: args.check,
        fs_knobs,
        uptime_ns: uptime_ns(args.uptime)?,
        ..SimConfig::default()
    };
    let simulation = Simulation::new(&jobs.jobs, device, config).map_err(Failure::input)?;

    // Wall-clock figures go only into `iosched.wall_clock`; fio's own `timestamp` fields stay
    // 0 so that everything else is byte-stable for a given seed.
    let started_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let wall_start = Instant::now();
    let mut sinks = Sinks::open(
        args.trace.as_deref(),
        args.decisions.as_deref(),
        trace_labels(&simulation),
    )?;
    let mut progress = Progress::new();
    let outcome = {
        let mut fanout = TraceFanout::new();
        for sink in sinks.iter_mut() {
            fanout.push(sink);
        }
        simulation.run(&mut fanout, &mut |now| progress.tick(now))
    }
    .map_err(Failure::run)?;
    progress.finish();
    sinks.finish()?;
    let wall = wall_start.elapsed();
    super::sinks::write_job_logs(&outcome.clones)?;
    super::sinks::write_issue_logs(&outcome.issued, &jobs.jobs, &outcome.layout)?;

    let mut run = iosched_report::results::run_result(
        &outcome.clones,
        &outcome.clone_jobs,
        &jobs,
        &outcome.disk,
    );
    let tunables = tunables_json(&outcome.tunables);
    let shares = iosched_report::shares::CgroupShares::of_clones(
        &outcome.clones,
        &outcome.clone_jobs,
        &outcome.clone_cgroups,
        &jobs,
    );
    run.iosched = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "driver": "sim",
        "scheduler": args.scheduler,
        "tunables": tunables,
        "device": device_json,
        "seed": args.seed,
        "simulated_time_ns": outcome.sim_time_ns,
        "events": outcome.events,
        "service": service_json(&outcome.summary),
        "cgroups": shares.to_json(),
        "wall_clock": {
            "started_epoch_s": started_epoch.as_secs(),
            "elapsed_s": wall.as_secs_f64(),
            "events_per_s": outcome.events as f64 / wall.as_secs_f64().max(1e-9),
        },
    });
    let mut appendix = shares.text();
    if let Some(fs) = &outcome.fs {
        let clones: Vec<(String, u32)> = outcome
            .clone_jobs
            .iter()
            .enumerate()
            .map(|(clone, &job)| {
                let pid = iosched_report::results::FIRST_PID + clone as u32;
                (jobs.jobs[job].name.clone(), pid)
            })
            .collect();
        run.iosched["writeback"] = fs.to_json(&clones);
        appendix.push_str(&fs.text(&clones));
    }
    write_output(&run, args.output_format, args.output.as_deref(), &appendix)
}

/// The scheduler's tunables as `{name: value}` in sysfs units, for the `iosched` object.
pub(crate) fn tunables_json(tunables: &[TunableValue]) -> Value {
    let map: Map<String, Value> = tunables
        .iter()
        .map(|t| (t.spec.name.to_string(), Value::from(t.value)))
        .collect();
    Value::Object(map)
}

/// Per queue and per group service, when the scheduler keeps it (CFQ).
pub(crate) fn service_json(summary: &[ServiceSummary]) -> Value {
    summary
        .iter()
        .map(|entry| {
            json!({
                "name": entry.name,
                "served_ns": entry.served_ns,
                "idled_ns": entry.idled_ns,
                "idle_wasted_ns": entry.idle_wasted_ns,
                "slices": entry.slices,
                "preemptions": entry.preemptions,
            })
        })
        .collect()
}

/// Trace labels for a simulated run: each clone's pid and job name, each cgroup's path.
fn trace_labels(simulation: &Simulation<'_>) -> TraceLabels {
    let mut labels = TraceLabels::new(8, 0);
    for (pid, name) in simulation.process_names() {
        labels.set_comm(pid, &name);
    }
    for (id, path) in simulation.cgroup_paths() {
        labels.set_cgroup_path(id, &path);
    }
    labels
}

/// Writes the run in `format`; `appendix` (the simulated file system's summary) follows the
/// normal output's disk stats.
pub(crate) fn write_output(
    run: &RunResult,
    formats: Formats,
    path: Option<&std::path::Path>,
    appendix: &str,
) -> CmdResult {
    let mut out: Box<dyn Write> = match path {
        Some(path) => Box::new(BufWriter::new(
            File::create(path)
                .with_context(|| format!("--output {}", path.display()))
                .map_err(Failure::input)?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    formats
        .write(run, appendix, &mut out)
        .and_then(|()| out.flush())
        .context("writing results")
        .map_err(Failure::run)
}
