//! `iosched run JOBFILE --device PATH`: the same jobs and schedulers as the simulator, on a
//! real regular file or block device through the io_uring engine. Results come out in the
//! simulator's formats, with `"driver": "engine"` in the `iosched` object.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::anyhow;
use iosched_engine::{signal, Engine, EngineConfig, EngineError};
use iosched_report::blktrace::TraceLabels;
use iosched_report::decisions::TraceFanout;
use iosched_report::shares::CgroupShares;
use iosched_workload::fio::{self, ParseContext};
use serde_json::json;

use super::run::{parse_set, service_json, take_nr_requests, tunables_json, write_output, RunArgs};
use super::sinks::Sinks;
use super::{CmdResult, Failure};

/// 128 + SIGINT, as shells report a command ended by Ctrl-C.
const EXIT_INTERRUPTED: u8 = 130;

fn engine_failure(error: EngineError) -> Failure {
    match error {
        EngineError::Io { .. } => Failure::run(error),
        _ => Failure::input(error),
    }
}

/// Trace labels for a real run: the block device's own numbers, so blkparse output names it
/// (files show as 8,0), and each clone's pid and job name.
fn trace_labels(engine: &Engine<'_>) -> TraceLabels {
    let (major, minor) = engine.target().dev.map_or((8, 0), |dev| {
        (
            (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32,
            ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32,
        )
    });
    let mut labels = TraceLabels::new(major, minor);
    for (pid, name) in engine.process_names() {
        labels.set_comm(pid, &name);
    }
    for (id, path) in engine.cgroup_paths() {
        labels.set_cgroup_path(id, &path);
    }
    labels
}

pub fn run(args: RunArgs) -> CmdResult {
    let mut tunables = parse_set(&args.set)?;
    // The request lists' size, as in the simulator (the device's own depth is its disk's
    // queue/nr_requests, probed).
    let nr_requests = take_nr_requests(&mut tunables)
        .map(|value| {
            value
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=65_536).contains(n))
                .ok_or_else(|| {
                    Failure::input(anyhow!(
                        "--set nr_requests={value}: expected requests 1..=65536"
                    ))
                })
        })
        .transpose()?;
    let jobs = fio::parse_files(&args.jobfiles, &ParseContext::from_process_env())
        .map_err(Failure::input)?;
    for warning in &jobs.warnings {
        eprintln!("iosched: warning: {warning}");
    }
    if !jobs.ignored_options.is_empty() {
        eprintln!(
            "iosched: note: ignored by the engine: {}",
            jobs.ignored_options.join(", ")
        );
    }
    let config = EngineConfig {
        scheduler: args.scheduler.clone(),
        tunables,
        seed: args.seed,
        force: args.force,
        check: args.check,
        queue_depth: None,
        nr_requests: nr_requests.unwrap_or(128),
    };
    let stop = signal::install_sigint();
    let engine = Engine::new(&jobs.jobs, &args.device, config).map_err(engine_failure)?;
    for warning in engine.warnings() {
        eprintln!("iosched: warning: {warning}");
    }
    let target = engine.target();
    let device_json = json!({
        "path": target.path,
        "kind": match target.kind {
            iosched_engine::TargetKind::RegularFile => "file",
            iosched_engine::TargetKind::BlockDevice => "block",
        },
        "rotational": target.rotational,
        "queue_depth": engine.queue_depth(),
        "nr_requests": engine.nr_requests(),
        "capacity_bytes": target.capacity_bytes,
        "kernel_scheduler": target.kernel_scheduler,
    });

    let started_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let wall_start = Instant::now();
    let mut sinks = Sinks::open(
        args.trace.as_deref(),
        args.decisions.as_deref(),
        trace_labels(&engine),
    )?;
    let outcome = {
        let mut fanout = TraceFanout::new();
        for sink in sinks.iter_mut() {
            fanout.push(sink);
        }
        engine.run_traced(stop, &mut fanout)
    }
    .map_err(engine_failure)?;
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
    let service = service_json(&outcome.summary);
    let requests = outcome.requests.max(1);
    let shares = CgroupShares::of_clones(
        &outcome.clones,
        &outcome.clone_jobs,
        &outcome.clone_cgroups,
        &jobs,
    );
    run.iosched = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "driver": "engine",
        "scheduler": args.scheduler,
        "tunables": tunables,
        "device": device_json,
        "seed": args.seed,
        "elapsed_ns": outcome.elapsed_ns,
        "requests": outcome.requests,
        "cgroups": shares.to_json(),
        "service": service,
        "interrupted": outcome.interrupted,
        "verify_failures": outcome.verify_failures.len(),
        "io_errors": outcome.io_errors.len(),
        "fixed_buffers": outcome.fixed_buffers,
        "wall_clock": {
            "started_epoch_s": started_epoch.as_secs(),
            "elapsed_s": wall.as_secs_f64(),
            "scheduler_ns_per_request": (outcome.scheduler_ns as f64
                - outcome.scheduler_calls as f64 * outcome.clock_overhead_ns)
                .max(0.0)
                / requests as f64,
            "scheduler_ns_per_request_with_clock": outcome.scheduler_ns as f64 / requests as f64,
            "scheduler_calls_per_request": outcome.scheduler_calls as f64 / requests as f64,
            "clock_overhead_ns": outcome.clock_overhead_ns,
            "cpu_ns_per_request": (outcome.usr_cpu_ns + outcome.sys_cpu_ns) as f64 / requests as f64,
            "usr_cpu_s": outcome.usr_cpu_ns as f64 / 1e9,
            "sys_cpu_s": outcome.sys_cpu_ns as f64 / 1e9,
        },
    });
    write_output(
        &run,
        args.output_format,
        args.output.as_deref(),
        &shares.text(),
    )?;

    for failure in &outcome.verify_failures {
        eprintln!(
            "iosched: verify: job '{}': block of {} bytes at offset {}: {}",
            failure.job, failure.len, failure.offset, failure.message
        );
    }
    for error in &outcome.io_errors {
        eprintln!("iosched: I/O error: {error}");
    }
    if outcome.interrupted {
        return Err(Failure {
            error: anyhow!("interrupted: the results above are partial"),
            code: EXIT_INTERRUPTED,
        });
    }
    if !outcome.verify_failures.is_empty() {
        return Err(Failure::run(anyhow!(
            "verify found {} bad block(s)",
            outcome.verify_failures.len()
        )));
    }
    if !outcome.io_errors.is_empty() {
        return Err(Failure::run(anyhow!(
            "{} I/O error(s)",
            outcome.io_errors.len()
        )));
    }
    Ok(())
}
