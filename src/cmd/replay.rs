//! `iosched replay CAPTURE`: a recorded workload (a blktrace capture or a fio iolog) through
//! several schedulers, one comparison table.
//!
//! The capture becomes a fio job file, one job per process (its async writes as a second
//! job of the same pid, so CFQ serves them from the async queue), each replaying its share
//! with `read_iolog=` and iosched's `iosched_replay_pids=` / `iosched_replay_part=`. That job
//! file (`--jobfile`) runs as it is under `iosched run`, with every output of a run (fio
//! JSON, traces, decisions, cgroup shares). `--assign` adds fio options to the jobs of the
//! processes it matches, e.g. `--assign tar=cgroup=backup,cgroup_weight=100`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::anyhow;
use clap::Args;

use iosched_driver::spec::Outputs;
use iosched_driver::stats::JobStats;
use iosched_lab::run::{CommandLine, Hooks, RunError};
use iosched_report::text_table::TextTable;
use iosched_workload::fio::JobSource;
use iosched_workload::replay::{ReplayLog, TraceIo};
use serde_json::{json, Value};

use super::run::{run_failure, settings, OutputFormat};
use super::{CmdResult, Failure};

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A blktrace capture (`NAME` for `NAME.blktrace.N`, one CPU's file, or a `blkparse -d`
    /// merged file) or a fio iolog (version 2 or 3).
    #[arg(value_name = "CAPTURE")]
    pub capture: PathBuf,
    /// Schedulers to compare, comma-separated.
    #[arg(long, default_value = "noop,mq-deadline,cfq", value_delimiter = ',')]
    pub scheduler: Vec<String>,
    /// Simulated device preset, a model file (.toml), or a path: a real file or block device
    /// for the io_uring engine.
    #[arg(long, default_value = "hdd-7200")]
    pub device: String,
    /// Closed loop: each process issues its next I/O the recorded think time after the I/O it
    /// waited for completes (blktrace captures only). Default: open loop, recorded times.
    #[arg(long, conflicts_with = "no_stall")]
    pub closed_loop: bool,
    /// fio's replay_no_stall: every process as fast as its depth allows.
    #[arg(long)]
    pub no_stall: bool,
    /// fio's replay_time_scale: percent of the recorded speed.
    #[arg(long, default_value_t = 100, value_name = "PCT")]
    pub time_scale: u32,
    /// Most I/Os a process keeps in flight (open loop holds an I/O back only at this depth).
    #[arg(long, default_value_t = 256)]
    pub iodepth: u32,
    /// `MATCH=OPTIONS`: fio options (comma-separated) for the processes whose pid or command
    /// name is MATCH, e.g. `tar=cgroup=backup,cgroup_weight=100,prioclass=3`. Repeatable.
    #[arg(long = "assign", value_name = "MATCH=OPTIONS")]
    pub assign: Vec<String>,
    /// Scheduler tunables and knobs, as for `iosched run` (applied under every scheduler
    /// that has them).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: OutputFormat,
    /// Also write the generated job file here (`iosched run FILE` replays it alone).
    #[arg(long, value_name = "FILE")]
    pub jobfile: Option<PathBuf>,
    /// Also draw the table as `DIR/replay.png` and `DIR/replay.svg`.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Engine only: write to a device even if it carries a file system.
    #[arg(long)]
    pub force: bool,
}

/// One replayed process: its job's name, pid and the part of its I/O.
struct ProcessJob {
    name: String,
    pid: u32,
    part: &'static str,
}

/// A command name as a job-file section name.
fn section_name(comm: &str) -> String {
    comm.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The processes of `log`: one job per pid, and one more for a pid's async writes.
fn process_jobs(log: &ReplayLog) -> Vec<ProcessJob> {
    let mut jobs = Vec::new();
    for pid in log.pids() {
        let comm = log.comms.get(&pid).map_or("pid", String::as_str);
        let base = format!("{}.{pid}", section_name(comm));
        let mine = |f: fn(&TraceIo) -> bool| log.ios.iter().any(|io| io.pid == pid && f(io));
        if log.format != iosched_workload::replay::LogFormat::Blktrace {
            jobs.push(ProcessJob {
                name: base,
                pid,
                part: "all",
            });
            continue;
        }
        if mine(|io| !io.is_async_write()) {
            jobs.push(ProcessJob {
                name: base.clone(),
                pid,
                part: "sync",
            });
        }
        if mine(TraceIo::is_async_write) {
            jobs.push(ProcessJob {
                name: format!("{base}.async"),
                pid,
                part: "async",
            });
        }
    }
    jobs
}

/// The `--assign` options for the process `pid` named `comm`.
fn assigned(args: &ReplayArgs, pid: u32, comm: &str) -> Result<Vec<String>, Failure> {
    let mut out = Vec::new();
    for item in &args.assign {
        let (matcher, options) = item.split_once('=').ok_or_else(|| {
            Failure::input(anyhow!(
                "--assign '{item}': expected MATCH=OPTIONS (e.g. tar=cgroup=backup,cgroup_weight=100)"
            ))
        })?;
        if matcher == comm || matcher.parse::<u32>().is_ok_and(|p| p == pid) {
            out.extend(options.split(',').map(|o| o.trim().to_string()));
        }
    }
    Ok(out)
}

/// Refuses an `--assign` that would silently do nothing or something else: an empty MATCH
/// or OPTIONS, a line break in OPTIONS (it would start a new line of the job file), or a
/// MATCH naming no process of the log (a typo would otherwise replay unassigned).
fn check_assign(args: &ReplayArgs, log: &ReplayLog) -> Result<(), Failure> {
    let pids = log.pids();
    for item in &args.assign {
        let bad = |why: String| Failure::input(anyhow!("--assign '{item}': {why}"));
        let Some((matcher, options)) = item.split_once('=') else {
            continue; // assigned() says what the form is.
        };
        if matcher.trim().is_empty() {
            return Err(bad("empty MATCH: give a pid or a command name".into()));
        }
        if options.split(',').all(|o| o.trim().is_empty()) {
            return Err(bad("no OPTIONS after the '='".into()));
        }
        if options.chars().any(char::is_control) {
            return Err(bad("OPTIONS hold a control character".into()));
        }
        let known = pids.iter().any(|&pid| {
            matcher.parse::<u32>() == Ok(pid) || log.comms.get(&pid).is_some_and(|c| c == matcher)
        });
        if !known {
            let names: Vec<String> = pids
                .iter()
                .map(|pid| match log.comms.get(pid) {
                    Some(comm) => format!("{pid} ({comm})"),
                    None => pid.to_string(),
                })
                .collect();
            let names = names.join(", ");
            return Err(bad(format!(
                "no process of the log matches (have: {names})"
            )));
        }
    }
    Ok(())
}

/// The job file replaying `log` as `args` ask.
fn job_file(args: &ReplayArgs, log: &ReplayLog, capture: &Path) -> Result<String, Failure> {
    check_assign(args, log)?;
    let mut text = String::new();
    let _ = writeln!(text, "; iosched replay of {}", log.path);
    let _ = writeln!(text, "[global]\nread_iolog={}", capture.display());
    let _ = writeln!(text, "direct=1\nioengine=libaio\niodepth={}", args.iodepth);
    let mode = if args.closed_loop { "closed" } else { "open" };
    let _ = writeln!(text, "iosched_replay={mode}");
    let _ = writeln!(text, "replay_no_stall={}", u8::from(args.no_stall));
    let _ = writeln!(text, "replay_time_scale={}", args.time_scale);
    for job in process_jobs(log) {
        let _ = writeln!(text, "\n[{}]", job.name);
        if log.format == iosched_workload::replay::LogFormat::Blktrace {
            let _ = writeln!(text, "iosched_replay_pids={}", job.pid);
            let _ = writeln!(text, "iosched_replay_part={}", job.part);
        }
        let comm = log.comms.get(&job.pid).map_or("", String::as_str);
        for option in assigned(args, job.pid, comm)? {
            let _ = writeln!(text, "{option}");
        }
    }
    Ok(text)
}

/// What one scheduler made of the replay.
struct Outcome {
    scheduler: String,
    elapsed_ns: u64,
    jobs: Vec<(String, JobStats)>,
    /// A signal stopped this run: its figures cover the replay up to there.
    interrupted: bool,
}

impl Outcome {
    /// The scheduler's name as a column or bar is headed: marked when the run was cut.
    fn label(&self) -> String {
        if self.interrupted {
            format!("{} (interrupted)", self.scheduler)
        } else {
            self.scheduler.clone()
        }
    }

    fn bytes(&self) -> u64 {
        self.jobs.iter().map(|(_, s)| job_bytes(s)).sum()
    }

    fn aggregate_mb_s(&self) -> f64 {
        self.bytes() as f64 / 1e6 / (self.elapsed_ns.max(1) as f64 / 1e9)
    }
}

fn job_bytes(stats: &JobStats) -> u64 {
    stats.dirs.iter().map(|d| d.io_bytes).sum()
}

fn job_clat_ms(stats: &JobStats) -> f64 {
    let (sum, count) = stats.dirs.iter().fold((0.0, 0u64), |(s, n), d| {
        (
            s + d.clat.mean() * d.clat.count() as f64,
            n + d.clat.count(),
        )
    });
    sum / count.max(1) as f64 / 1e6
}

/// Runs the replay's job file under `scheduler`, simulated or on the real target, until the
/// end or `stop` (a signal).
fn run_one(
    args: &ReplayArgs,
    text: &str,
    scheduler: &str,
    stop: &AtomicBool,
) -> Result<Outcome, Failure> {
    let spec = iosched_lab::run::spec_from(CommandLine {
        jobs: vec![JobSource {
            origin: "<replay>".to_string(),
            text: text.to_string(),
        }],
        device: args.device.clone(),
        scheduler: scheduler.to_string(),
        settings: settings(&args.set)?,
        mem: None,
        seed: args.seed,
        uptime_s: iosched_core::DEFAULT_UPTIME_NS / iosched_core::NSEC_PER_SEC,
        check: false,
        force: args.force,
        outputs: Outputs::default(),
    })
    .map_err(run_failure)?;
    let finished = iosched_lab::run::execute(
        &spec,
        &mut Hooks {
            notify: &mut |line| eprintln!("iosched: {line}"),
            progress: &mut |_| {},
            stop,
        },
    )
    .map_err(|error| match error {
        RunError::Parse(e) => Failure::input(anyhow!("{e} (from --assign or the capture)")),
        other => run_failure(other),
    })?;
    let outcome = finished.outcome();
    Ok(Outcome {
        scheduler: scheduler.to_string(),
        elapsed_ns: outcome.end_ns,
        jobs: outcome
            .clone_jobs
            .iter()
            .zip(&outcome.clones)
            .map(|(&job, stats)| (finished.jobs.jobs[job].name.clone(), stats.clone()))
            .collect(),
        interrupted: finished.interrupted(),
    })
}

pub fn run(args: ReplayArgs) -> CmdResult {
    let stop = super::stop::install();
    let log = ReplayLog::load_shared(&args.capture).map_err(Failure::input)?;
    if log.ios.is_empty() {
        return Err(Failure::input(anyhow!(
            "{}: no I/O to replay (no queue events, or an empty iolog)",
            args.capture.display()
        )));
    }
    let capture = std::path::absolute(&args.capture).unwrap_or(args.capture.clone());
    let text = job_file(&args, &log, &capture)?;
    if let Some(path) = &args.jobfile {
        iosched_gate::write_file(path, text.as_bytes(), args.force)
            .map_err(|e| Failure::input(anyhow!("--jobfile {e}")))?;
    }
    // A signal ends the scheduler it comes in; the ones after it do not run.
    let mut outcomes = Vec::new();
    for scheduler in &args.scheduler {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        outcomes.push(run_one(&args, &text, scheduler, stop)?);
    }
    let partial = outcomes.len() < args.scheduler.len() || outcomes.iter().any(|o| o.interrupted);
    let mode = match (args.closed_loop, args.no_stall) {
        (true, _) => "closed loop",
        (_, true) => "as fast as possible",
        _ => "open loop",
    };
    let out = match args.output_format {
        OutputFormat::Json => {
            let mut json = to_json(&args, &log, mode, &outcomes);
            if partial {
                // Only when set, as `iosched run` marks its results.
                json["interrupted"] = true.into();
            }
            serde_json::to_string_pretty(&json).unwrap_or_default() + "\n"
        }
        _ if partial => table(&args, &log, mode, &outcomes) + INTERRUPTED_NOTE,
        _ => table(&args, &log, mode, &outcomes),
    };
    super::print_out(&out)?;
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::input(anyhow!("--plot {}: {e}", dir.display())))?;
        let mut table = plot_table(&args, &log, mode, &outcomes);
        if partial {
            table.title.push_str(" (interrupted: partial)");
        }
        iosched_report::plot::write_table(&dir.join("replay"), &table)
            .map_err(|e| Failure::run(anyhow!("--plot: {e}")))?;
    }
    super::stop::status(partial)
}

/// The text table's last line when a signal stopped the replay.
const INTERRUPTED_NOTE: &str = "interrupted: partial results; a scheduler marked interrupted \
     covers the replay up to the signal, the schedulers after it did not run\n";

/// The plot: a panel for the aggregate and one per process, a bar per scheduler (MB/s over
/// the whole replay).
fn plot_table(
    args: &ReplayArgs,
    log: &ReplayLog,
    mode: &str,
    outcomes: &[Outcome],
) -> iosched_report::plot::PlotTable {
    use iosched_report::plot::{PlotColumn, PlotTable};
    let column = |header: String, value: &dyn Fn(&Outcome) -> f64| PlotColumn {
        header,
        seed: vec![None; outcomes.len()],
        ours: outcomes.iter().map(value).collect(),
    };
    let mut columns = vec![column("aggregate".into(), &|o| o.aggregate_mb_s())];
    let names: Vec<String> = outcomes
        .first()
        .map(|o| o.jobs.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    for (index, name) in names.iter().enumerate() {
        columns.push(column(name.clone(), &|o| {
            job_bytes(&o.jobs[index].1) as f64 / 1e6 / (o.elapsed_ns.max(1) as f64 / 1e9)
        }));
    }
    PlotTable {
        title: format!("replay of {}, {mode}, on {}", log.path, args.device),
        unit: "MB/s".into(),
        rows: outcomes.iter().map(Outcome::label).collect(),
        columns,
        sweep: false,
        x_desc: Some("scheduler".into()),
    }
}

fn to_json(args: &ReplayArgs, log: &ReplayLog, mode: &str, outcomes: &[Outcome]) -> Value {
    let runs: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let processes: Vec<Value> = o
                .jobs
                .iter()
                .map(|(name, s)| {
                    json!({
                        "name": name,
                        "pid": s.pid,
                        "read_bytes": s.dirs[0].io_bytes,
                        "write_bytes": s.dirs[1].io_bytes,
                        "trim_bytes": s.dirs[2].io_bytes,
                        "clat_mean_ms": job_clat_ms(s),
                        "runtime_ns": s.end_ns - s.start_ns,
                    })
                })
                .collect();
            let mut run = json!({
                "scheduler": o.scheduler,
                "elapsed_ns": o.elapsed_ns,
                "bytes": o.bytes(),
                "aggregate_mb_s": o.aggregate_mb_s(),
                "processes": processes,
            });
            if o.interrupted {
                run["interrupted"] = true.into();
            }
            run
        })
        .collect();
    json!({
        "capture": log.path,
        "ios": log.ios.len(),
        "device": args.device,
        "mode": mode,
        "runs": runs,
    })
}

/// The comparison table: aggregate and per-process figures, one column per scheduler.
fn table(args: &ReplayArgs, log: &ReplayLog, mode: &str, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "replay of {} ({} I/Os, {} processes), {mode}, on {}",
        log.path,
        log.ios.len(),
        log.pids().len(),
        args.device
    );
    let labels: Vec<String> = outcomes.iter().map(Outcome::label).collect();
    let mut header = vec![""];
    header.extend(labels.iter().map(String::as_str));
    let mut table = TextTable::new(&header).right_aligned(&Vec::from_iter(1..header.len()));
    let mut row = |label: String, value: &dyn Fn(&Outcome) -> String| {
        let mut cells = vec![label];
        cells.extend(outcomes.iter().map(value));
        table.row(cells);
    };
    row("aggregate MB/s".into(), &|o| {
        format!("{:.2}", o.aggregate_mb_s())
    });
    row("elapsed s".into(), &|o| {
        format!("{:.3}", o.elapsed_ns as f64 / 1e9)
    });
    let names: Vec<String> = outcomes
        .first()
        .map(|o| o.jobs.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    for (index, name) in names.iter().enumerate() {
        row(format!("{name} MiB"), &|o| {
            format!("{:.2}", job_bytes(&o.jobs[index].1) as f64 / 1048576.0)
        });
        row(format!("{name} clat ms"), &|o| {
            format!("{:.3}", job_clat_ms(&o.jobs[index].1))
        });
    }
    out.push_str(&table.render());
    out
}
