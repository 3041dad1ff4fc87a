//! A finished run in fio's shape: fio's per-job results and disk stats, with one `iosched`
//! object saying what ran (driver, scheduler, tunables, device, seed), how the scheduler
//! served each queue and cgroup, what only the backend knows, and the wall clock.

use iosched_core::{ServiceSummary, TunableValue};
use iosched_driver::spec::RunSpec;
use iosched_driver::stats::{JobStats, RunResult};
use iosched_engine::EngineOutcome;
use iosched_report::results::{run_result, FIRST_PID};
use iosched_report::shares::CgroupShares;
use iosched_sim::SimOutcome;
use serde_json::{json, Map, Value};

use super::{BackendOutcome, Finished, WallClock};

/// What the binary prints: fio's results, and the text the normal output appends (cgroup
/// shares, the simulated file system's summary).
pub struct Results {
    pub run: RunResult,
    pub appendix: String,
}

impl Finished {
    /// The run's results as fio's output formats take them.
    pub fn results(&self, spec: &RunSpec, wall: WallClock) -> Results {
        self.results_of(self.outcome().clones.clone(), spec, wall)
    }

    /// [`Finished::results`], each clone's figures moved into them rather than copied
    /// (4096 clones' histograms: about 1.7 K instructions each): what is left of `self`
    /// has none.
    pub fn take_results(&mut self, spec: &RunSpec, wall: WallClock) -> Results {
        let clones = self.take_clones();
        self.results_of(clones, spec, wall)
    }

    /// The results of `clones`, the run's clone figures.
    fn results_of(&self, clones: Vec<JobStats>, spec: &RunSpec, wall: WallClock) -> Results {
        let outcome = self.outcome();
        let mut shares = CgroupShares::of_clones(
            &clones,
            &outcome.clone_jobs,
            &outcome.clone_cgroups,
            &self.jobs,
        );
        shares.set_backlog_owed(&outcome.backlog_owed);
        let mut run = run_result(clones, &outcome.clone_jobs, &self.jobs, &outcome.disk);
        let mut iosched = Map::new();
        iosched.insert("version".into(), env!("CARGO_PKG_VERSION").into());
        let mut appendix = shares.text();
        match &self.backend {
            BackendOutcome::Simulated { outcome, device } => {
                iosched.insert("driver".into(), "sim".into());
                identify(&mut iosched, spec, &outcome.tunables, device);
                simulated_fields(&mut iosched, outcome);
                shared_fields(&mut iosched, &outcome.summary, &shares);
                iosched.insert("wall_clock".into(), sim_wall_clock(wall, outcome));
                if let Some(fs) = &outcome.fs {
                    let clones = self.clone_names();
                    iosched.insert("writeback".into(), fs.to_json(&clones));
                    appendix.push_str(&fs.text(&clones));
                }
                if let Some(cpu) = &outcome.cpu {
                    iosched.insert("cpu".into(), cpu_json(cpu));
                }
            }
            BackendOutcome::Real { outcome, device } => {
                iosched.insert("driver".into(), "engine".into());
                identify(&mut iosched, spec, &outcome.tunables, device);
                iosched.insert("elapsed_ns".into(), outcome.elapsed_ns.into());
                iosched.insert("requests".into(), outcome.requests.into());
                shared_fields(&mut iosched, &outcome.summary, &shares);
                real_fields(&mut iosched, outcome);
                iosched.insert("inflight".into(), inflight_json(outcome, &self.jobs.jobs));
                iosched.insert("wall_clock".into(), real_wall_clock(wall, outcome));
            }
        }
        run.iosched = Value::Object(iosched);
        stamp(&mut run, &self.backend, wall);
        Results { run, appendix }
    }

    /// Each clone's figures, taken out.
    fn take_clones(&mut self) -> Vec<JobStats> {
        match &mut self.backend {
            BackendOutcome::Simulated { outcome, .. } => std::mem::take(&mut outcome.run.clones),
            BackendOutcome::Real { outcome, .. } => std::mem::take(&mut outcome.run.clones),
        }
    }

    /// Each clone's job name and pid, as the file system's summary names them.
    fn clone_names(&self) -> Vec<(String, u32)> {
        self.outcome()
            .clone_jobs
            .iter()
            .enumerate()
            .map(|(clone, &job)| (self.jobs.jobs[job].name.clone(), FIRST_PID + clone as u32))
            .collect()
    }
}

fn sim_wall_clock(wall: WallClock, outcome: &SimOutcome) -> Value {
    json!({
        "started_epoch_s": wall.started.as_secs(),
        "elapsed_s": wall.elapsed.as_secs_f64(),
        "events_per_s": outcome.events as f64 / wall.elapsed.as_secs_f64().max(1e-9),
    })
}

fn real_wall_clock(wall: WallClock, outcome: &EngineOutcome) -> Value {
    let requests = outcome.requests.max(1) as f64;
    let calls = outcome.scheduler_calls as f64;
    let scheduler_ns = outcome.scheduler_ns as f64;
    json!({
        "started_epoch_s": wall.started.as_secs(),
        "elapsed_s": wall.elapsed.as_secs_f64(),
        "scheduler_ns_per_request":
            (scheduler_ns - calls * outcome.clock_overhead_ns).max(0.0) / requests,
        "scheduler_ns_per_request_with_clock": scheduler_ns / requests,
        "scheduler_calls_per_request": calls / requests,
        "clock_overhead_ns": outcome.clock_overhead_ns,
        "cpu_ns_per_request": (outcome.usr_cpu_ns + outcome.sys_cpu_ns) as f64 / requests,
        "usr_cpu_s": outcome.usr_cpu_ns as f64 / 1e9,
        "sys_cpu_s": outcome.sys_cpu_ns as f64 / 1e9,
        "engine_threads": outcome.threads,
        "lock_held_ns_per_request": outcome.lock.held_ns as f64 / requests,
        "lock_wait_ns_per_request": outcome.lock.wait_ns as f64 / requests,
        "lock_contended_per_request": outcome.lock.contended as f64 / requests,
        "lock_acquisitions_per_request": outcome.lock.acquisitions as f64 / requests,
        "cross_thread_wakes": outcome.cross_thread_wakes,
        "handed_over": outcome.handed_over,
        "handover_wakes": outcome.handover_wakes,
        "workers": outcome
            .workers
            .iter()
            .map(|w| json!({"run_ns": w.run_ns, "runqueue_ns": w.runqueue_ns, "slices": w.slices}))
            .collect::<Vec<_>>(),
        "engine_cgroups": outcome
            .kernel_cgroup_ios
            .iter()
            .map(|(path, ios)| json!({"path": path, "kernel_ios": ios}))
            .collect::<Vec<_>>(),
    })
}

/// What ran: scheduler, its tunables, device, seed.
fn identify(
    iosched: &mut Map<String, Value>,
    spec: &RunSpec,
    tunables: &[TunableValue],
    device: &Value,
) {
    iosched.insert("scheduler".into(), spec.scheduler.clone().into());
    iosched.insert("tunables".into(), tunables_json(tunables));
    iosched.insert("device".into(), device.clone());
    iosched.insert("seed".into(), spec.seed.into());
}

fn simulated_fields(iosched: &mut Map<String, Value>, outcome: &SimOutcome) {
    iosched.insert("simulated_time_ns".into(), outcome.sim_time_ns.into());
    iosched.insert("events".into(), outcome.events.into());
    if outcome.interrupted {
        // Only when set, so an uninterrupted run's bytes stay as they always were.
        iosched.insert("interrupted".into(), true.into());
    }
}

fn shared_fields(
    iosched: &mut Map<String, Value>,
    summary: &[ServiceSummary],
    shares: &CgroupShares,
) {
    iosched.insert("service".into(), service_json(summary));
    iosched.insert("cgroups".into(), shares.to_json());
}

fn real_fields(iosched: &mut Map<String, Value>, outcome: &EngineOutcome) {
    iosched.insert("interrupted".into(), outcome.interrupted.into());
    iosched.insert(
        "verify_failures".into(),
        outcome.verify_failures.len().into(),
    );
    iosched.insert("io_errors".into(), outcome.io_errors.len().into());
    iosched.insert("fixed_buffers".into(), outcome.fixed_buffers.into());
}

/// The engine's in-flight gauges: requests in the device and each clone's depth, mean and
/// percent of the time in each of fio's depth buckets (`"4"`: 4–7), weighted by real time.
/// A clone's requests by stage (`iosched_engine::StageSums`): each stage's mean count over
/// the run (Little's law: its summed time over the run's) and mean time per request.
fn stages_json(stages: &iosched_engine::StageSums, elapsed_ns: u64) -> Value {
    let run = elapsed_ns.max(1) as f64;
    let each = stages.requests.max(1) as f64;
    let stage = |ns: u64| json!({"mean_count": ns as f64 / run, "mean_ns": ns as f64 / each});
    json!({
        "requests": stages.requests,
        "handed": stages.handed,
        "scheduler": stage(stages.queued_ns),
        "engine": stage(stages.engine_ns),
        "device": stage(stages.device_ns),
        "reap": stage(stages.reap_ns),
    })
}

fn inflight_json(outcome: &EngineOutcome, jobs: &[iosched_workload::JobSpec]) -> Value {
    let gauge = |summary: &iosched_engine::DepthSummary| {
        let percent: Map<String, Value> = summary
            .percent
            .iter()
            .map(|&(low, pct)| (low.to_string(), Value::from(pct)))
            .collect();
        json!({
            "mean": summary.mean,
            "cap": summary.cap,
            "span_ns": summary.span_ns,
            "percent": percent,
        })
    };
    let jobs: Vec<Value> = outcome
        .inflight
        .clones
        .iter()
        .enumerate()
        .map(|(clone, summary)| {
            let mut value = gauge(summary);
            value["jobname"] = jobs[outcome.clone_jobs[clone]].name.clone().into();
            value["clone"] = clone.into();
            if let Some(stages) = outcome.inflight.stages.get(clone) {
                value["stages"] = stages_json(stages, outcome.elapsed_ns);
            }
            value
        })
        .collect();
    json!({
        "device": gauge(&outcome.inflight.device),
        "jobs": jobs,
        "io_uring_enter_calls": outcome.enter_calls,
    })
}

/// The scheduler's tunables as `{name: value}` in sysfs units.
pub fn tunables_json(tunables: &[TunableValue]) -> Value {
    let map: Map<String, Value> = tunables
        .iter()
        .map(|t| (t.spec.name.to_string(), Value::from(t.value)))
        .collect();
    Value::Object(map)
}

/// Per queue and per group service, when the scheduler keeps it (CFQ).
pub fn service_json(summary: &[ServiceSummary]) -> Value {
    summary
        .iter()
        .map(|entry| {
            // Sized up front: one of these per queue (4096 with as many clones).
            let mut queue = Map::with_capacity(6);
            queue.insert("name".into(), entry.name.as_str().into());
            queue.insert("served_ns".into(), entry.served_ns.into());
            queue.insert("idled_ns".into(), entry.idled_ns.into());
            queue.insert("idle_wasted_ns".into(), entry.idle_wasted_ns.into());
            queue.insert("slices".into(), entry.slices.into());
            queue.insert("preemptions".into(), entry.preemptions.into());
            Value::Object(queue)
        })
        .collect()
}

/// The simulated CPUs' side of a run (each clone's use is in its job's `usr_cpu`/`sys_cpu`):
/// the era, the CPU count, the kernel threads' time and the time threads waited for a CPU.
fn cpu_json(cpu: &iosched_sim::CpuOutcome) -> Value {
    let per_process: Vec<Value> = cpu
        .per_process
        .iter()
        .map(|used| json!({"usr_ns": used.usr_ns, "sys_ns": used.sys_ns, "ctx": used.ctx}))
        .collect();
    json!({
        "era": cpu.era,
        "ncpus": cpu.ncpus,
        "kernel_threads_sys_ns": cpu.kernel.sys_ns,
        "waited_ns": cpu.waited_ns,
        "clones": per_process,
    })
}

/// fio's `timestamp`, `timestamp_ms` and `time` (and the normal job header's date): when the
/// report was made, in local time as `ctime(3)` writes it.
/// Choice: a simulated run is stamped at the Unix epoch in UTC, not with the wall clock, so
/// the same inputs and seed keep giving the same bytes; an engine run is stamped when it ended.
fn stamp(run: &mut RunResult, backend: &BackendOutcome, wall: WallClock) {
    let format = "%a %b %e %H:%M:%S %Y";
    match backend {
        BackendOutcome::Simulated { .. } => {
            run.time = chrono::DateTime::UNIX_EPOCH.format(format).to_string();
        }
        BackendOutcome::Real { .. } => {
            let ended = wall.started + wall.elapsed;
            run.timestamp_s = ended.as_secs();
            run.timestamp_ms = ended.as_millis() as u64;
            let local = chrono::DateTime::from_timestamp_millis(run.timestamp_ms as i64)
                .unwrap_or_default()
                .with_timezone(&chrono::Local);
            run.time = local.format(format).to_string();
        }
    }
}
