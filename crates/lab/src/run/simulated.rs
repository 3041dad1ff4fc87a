//! A spec whose target is a preset or a model file, run by the simulator.

use iosched_core::{NoTrace, Trace};
use iosched_driver::spec::{Machine, RunSpec, Setting, Target};
use iosched_report::blktrace::TraceLabels;
use iosched_sim::device::file::load_device_file;
use iosched_sim::device::{preset, presets, Device};
use iosched_sim::fs::FsConfig;
use iosched_sim::{SimConfig, Simulation};
use iosched_workload::fio::{JobSource, ParseContext};
use iosched_workload::JobSet;
use serde_json::json;

use super::sinks::{check_trace_size, planned_ios_in, trace_labels, Sinks};
use super::{BackendOutcome, Hooks, Progress, RunError};

/// The simulated machine the job files see: `$mb_memory` and `$ncpus` from the knobs
/// (`mem`, `cpus`), the environment from `host`.
pub(super) fn machine(
    knobs: &[Setting],
    host: &ParseContext,
    jobs: &[JobSource],
) -> Result<Machine, RunError> {
    let pairs: Vec<_> = knobs
        .iter()
        .map(|s| (s.name.clone(), s.value.clone()))
        .collect();
    let simulated = FsConfig::from_knobs(&pairs).map_err(RunError::Knob)?;
    let context = ParseContext {
        mb_memory: simulated.writeback.mem_bytes >> 20,
        ncpus: simulated.writeback.cpus,
        ..host.clone()
    };
    Ok(Machine::capture(&context, jobs))
}

/// The device model the target names.
pub(super) fn device(target: &Target) -> Result<Box<dyn Device>, RunError> {
    match target {
        Target::Preset(name) => preset(name).ok_or_else(|| RunError::UnknownPreset {
            name: name.clone(),
            known: presets().iter().map(|p| p.name.to_string()).collect(),
        }),
        Target::ModelFile(path) => load_device_file(path).map_err(RunError::DeviceFile),
        Target::Real(path) => unreachable!("{} is not simulated", path.display()),
    }
}

pub(super) fn run(
    spec: &RunSpec,
    jobs: &JobSet,
    uptime_ns: u64,
    hooks: &mut Hooks<'_>,
) -> Result<(BackendOutcome, Option<RunError>), RunError> {
    let mut ignored = jobs.ignored_options.clone();
    if jobs.jobs.iter().any(|job| job.cpus_allowed.is_some()) {
        // The simulator has no CPUs to pin to; the engine honours it.
        ignored.push("cpus_allowed".to_string());
    }
    if !ignored.is_empty() {
        (hooks.notify)(&format!(
            "note: ignored in simulation: {}",
            ignored.join(", ")
        ));
    }
    let device = device(&spec.target)?;
    let capacity = Some(device.capacity_sectors() * 512);
    check_trace_size(
        &spec.outputs,
        &jobs.jobs,
        capacity,
        spec.seed,
        &spec.scheduler,
        hooks.notify,
    )?;
    let device_json = json!({
        "name": device.name(),
        "rotational": device.rotational(),
        "queue_depth": device.queue_depth(),
        "capacity_bytes": device.capacity_sectors() * 512,
    });
    let config = SimConfig {
        scheduler: spec.scheduler.clone(),
        tunables: spec.tunable_pairs(),
        seed: spec.seed,
        check: spec.check,
        fs_knobs: spec.knob_pairs(),
        uptime_ns,
        ..SimConfig::default()
    };
    let simulation = Simulation::new(&jobs.jobs, device, config).map_err(RunError::SimSetup)?;
    let mut sinks = Sinks::open(&spec.outputs, || labels(&simulation), spec.force)?;
    let planned = planned_ios_in(&jobs.jobs, simulation.layout());
    let progress = &mut *hooks.progress;
    let mut fanout = sinks.fanout();
    // No --trace or --decisions: the scheduler's and the driver's trace calls (a dozen per
    // request) go to the no-op sink instead of asking an empty fan-out each time (issue 34:
    // 3 % of a CFQ run's instructions).
    let trace: &mut dyn Trace = if fanout.is_empty() {
        &mut NoTrace
    } else {
        &mut fanout
    };
    let outcome = simulation
        .run_until_stopped(
            trace,
            &mut |point| progress(Progress::of(point, planned)),
            hooks.stop,
        )
        .map_err(RunError::Sim)?;
    let trace_error = sinks.finish().err();
    Ok((
        BackendOutcome::Simulated {
            outcome,
            device: device_json,
        },
        trace_error,
    ))
}

/// Trace labels for a simulated run: device 8,0, each clone's pid and job name, each
/// cgroup's path.
fn labels(simulation: &Simulation<'_>) -> TraceLabels {
    trace_labels(
        (8, 0),
        simulation.process_names(),
        simulation.cgroup_paths(),
    )
}
