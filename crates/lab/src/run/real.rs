//! A spec whose target is a real file or block device, run by the io_uring engine.

use iosched_driver::spec::{RunSpec, Target};
use iosched_engine::{Engine, EngineConfig, TargetKind};
use iosched_report::blktrace::TraceLabels;
use iosched_workload::JobSet;
use serde_json::json;

use super::sinks::{check_trace_size, planned_ios, trace_labels, Sinks};
use super::{BackendOutcome, Hooks, Progress, RunError};

/// Request-list size when no `nr_requests` knob is set: the kernel's default.
const DEFAULT_NR_REQUESTS: u32 = 128;

/// The engine's only knob is the request lists' size (`nr_requests`, the same meaning as in
/// the simulator); the page cache and file system knobs belong to the simulated machine.
fn nr_requests(spec: &RunSpec) -> Result<u32, RunError> {
    let mut nr_requests = DEFAULT_NR_REQUESTS;
    for knob in &spec.knobs {
        if knob.name != "nr_requests" {
            return Err(RunError::Knob(format!(
                "{}={}: a knob of the simulated machine; a real target runs on this machine's \
                 page cache and file system",
                knob.name, knob.value
            )));
        }
        nr_requests = knob
            .value
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=65_536).contains(n))
            .ok_or_else(|| {
                RunError::Knob(format!(
                    "nr_requests={}: expected requests 1..=65536",
                    knob.value
                ))
            })?;
    }
    Ok(nr_requests)
}

/// The engine's worker threads as `--set engine_threads` asks: a count (0: `auto`), or
/// one per job cgroup (`cgroups`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Threads {
    Count(u32),
    Cgroups,
}

/// `--set engine_threads=N|auto|cgroups`, taken out of the scheduler's tunables: the
/// engine's worker threads sharing the scheduler (1, the default, is the single loop; `auto`
/// one per CPU the jobs allow; `cgroups` one per job cgroup, each in a blkio cgroup of that
/// path, as fio runs each job in its cgroup). A trace is one thread's, so a traced run
/// keeps one thread.
fn engine_threads(
    spec: &RunSpec,
    tunables: &mut Vec<(String, String)>,
) -> Result<Threads, RunError> {
    let mut threads = Threads::Count(1);
    for (_, value) in tunables.iter().filter(|(name, _)| name == "engine_threads") {
        threads = match value.as_str() {
            "auto" => Threads::Count(0),
            "cgroups" => Threads::Cgroups,
            text => text
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=1024).contains(n))
                .map(Threads::Count)
                .ok_or_else(|| {
                    RunError::Knob(format!(
                        "engine_threads={value}: expected 1..=1024, auto or cgroups"
                    ))
                })?,
        };
    }
    tunables.retain(|(name, _)| name != "engine_threads");
    let traced = spec.outputs.trace.is_some() || spec.outputs.decisions.is_some();
    if threads != Threads::Count(1) && traced {
        return Err(RunError::Knob(
            "engine_threads: a trace or decision log needs the single thread (engine_threads=1)"
                .to_string(),
        ));
    }
    Ok(threads)
}

pub(super) fn run(
    spec: &RunSpec,
    jobs: &JobSet,
    uptime_ns: u64,
    hooks: &mut Hooks<'_>,
) -> Result<(BackendOutcome, Option<RunError>), RunError> {
    let Target::Real(path) = &spec.target else {
        unreachable!("{} is simulated", spec.target)
    };
    if !jobs.ignored_options.is_empty() {
        (hooks.notify)(&format!(
            "note: ignored by the engine: {}",
            jobs.ignored_options.join(", ")
        ));
    }
    let capacity = block_device_bytes(path);
    check_trace_size(
        &spec.outputs,
        &jobs.jobs,
        capacity,
        spec.seed,
        &spec.scheduler,
        hooks.notify,
    )?;
    let mut tunables = spec.tunable_pairs();
    let threads = engine_threads(spec, &mut tunables)?;
    let config = EngineConfig {
        scheduler: spec.scheduler.clone(),
        tunables,
        seed: spec.seed,
        force: spec.force,
        check: spec.check,
        queue_depth: None,
        nr_requests: nr_requests(spec)?,
        uptime_ns,
        threads: match threads {
            Threads::Count(n) => n,
            Threads::Cgroups => 1,
        },
        cgroup_threads: threads == Threads::Cgroups,
    };
    let engine =
        Engine::new(&jobs.jobs, &path.to_string_lossy(), config).map_err(RunError::Engine)?;
    for warning in engine.warnings() {
        (hooks.notify)(&format!("warning: {warning}"));
    }
    let device = device_json(&engine);
    let mut sinks = Sinks::open(&spec.outputs, || labels(&engine), spec.force)?;
    let planned = planned_ios(&jobs.jobs, capacity, spec.seed);
    let progress = &mut *hooks.progress;
    let outcome = engine
        .run_observed(hooks.stop, &mut sinks.fanout(), &mut |point| {
            progress(Progress::of(point, planned))
        })
        .map_err(RunError::Engine)?;
    let trace_error = sinks.finish().err();
    Ok((BackendOutcome::Real { outcome, device }, trace_error))
}

/// The size of `path` when it is a block device (a regular file is grown to fit the jobs).
fn block_device_bytes(path: &std::path::Path) -> Option<u64> {
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::FileTypeExt;
    // Only a block device is opened: opening a FIFO would wait for a writer.
    if !std::fs::metadata(path).ok()?.file_type().is_block_device() {
        return None;
    }
    std::fs::File::open(path).ok()?.seek(SeekFrom::End(0)).ok()
}

fn device_json(engine: &Engine<'_>) -> serde_json::Value {
    let target = engine.target();
    json!({
        "path": target.path,
        "kind": match target.kind {
            TargetKind::RegularFile => "file",
            TargetKind::BlockDevice => "block",
        },
        "rotational": target.rotational,
        "queue_depth": engine.queue_depth(),
        "nr_requests": engine.nr_requests(),
        "capacity_bytes": target.capacity_bytes,
        "kernel_scheduler": target.kernel_scheduler,
    })
}

/// Trace labels for a real run: the block device's own numbers, so blkparse output names it
/// (files show as 8,0), and each clone's pid and job name.
fn labels(engine: &Engine<'_>) -> TraceLabels {
    let numbers = engine.target().dev.map_or((8, 0), |dev| {
        (
            (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32,
            ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32,
        )
    });
    trace_labels(numbers, engine.process_names(), engine.cgroup_paths())
}
