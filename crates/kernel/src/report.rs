//! fio's JSON with iosched's `iosched` object added: what the run had (scheduler, the
//! tunables and `nr_requests` as the kernel took them, the device, fio's version) and each
//! cgroup's share of the bytes beside its weight-ideal share, so `iosched compare` sets a
//! kernel run beside an engine or simulator run.

use iosched_engine::Target;
use iosched_report::shares::CgroupShares;
use iosched_workload::JobSet;
use serde_json::{json, Value};

use crate::error::KernelError;

/// What the `iosched` object says about a run.
pub(crate) struct RunFacts<'a> {
    pub scheduler: &'static str,
    pub device: &'a str,
    pub target: &'a Target,
    pub previous_scheduler: Option<String>,
    /// `queue/nr_requests` during the run.
    pub nr_requests: Option<u64>,
    /// The scheduler's tunables during the run.
    pub tunables: Vec<(String, String)>,
    pub fio_version: &'a str,
    pub weights: Vec<String>,
    pub weights_applied: bool,
    pub interrupted: bool,
}

/// Parses fio's JSON (after any lines fio printed before it) and adds the `iosched` object.
/// `clone_jobs[i]` is the job of fio's `i`-th job entry (one section per clone).
pub(crate) fn with_iosched(
    raw: &str,
    jobs: &JobSet,
    clone_jobs: &[usize],
    facts: RunFacts,
) -> Result<Value, KernelError> {
    let start = raw.find('{').unwrap_or(0);
    let mut value: Value = serde_json::from_str(&raw[start..]).map_err(KernelError::FioJson)?;
    let shares = cgroup_shares(&value, jobs, clone_jobs);
    let tunables: serde_json::Map<String, Value> = facts
        .tunables
        .into_iter()
        .map(|(k, v)| (k, Value::from(v)))
        .collect();
    value["iosched"] = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "driver": "kernel",
        "scheduler": facts.scheduler,
        "tunables": tunables,
        "device": {
            "path": facts.device,
            "kind": "block",
            "rotational": facts.target.rotational,
            "queue_depth": facts.target.queue_depth,
            "nr_requests": facts.nr_requests,
            "capacity_bytes": facts.target.capacity_bytes,
            "previous_scheduler": facts.previous_scheduler,
        },
        "fio": facts.fio_version,
        "cgroups": shares,
        "cgroup_weights": facts.weights,
        "weights_applied": facts.weights_applied,
        "interrupted": facts.interrupted,
    });
    Ok(value)
}

/// Share of bytes per cgroup in fio's results, beside the weight-ideal share; `null` when
/// fio's entries are not one per clone (`group_reporting` merged them).
fn cgroup_shares(fio_json: &Value, jobs: &JobSet, clone_jobs: &[usize]) -> Value {
    let Some(entries) = fio_json["jobs"].as_array() else {
        return Value::Null;
    };
    if entries.len() != clone_jobs.len() {
        return Value::Null;
    }
    let mut shares = CgroupShares::new();
    for (entry, &job) in entries.iter().zip(clone_jobs) {
        let spec = &jobs.jobs[job];
        let path = format!("/{}", spec.cgroup.clone().unwrap_or_default());
        let bytes: u64 = ["read", "write", "trim"]
            .iter()
            .map(|d| entry[d]["io_bytes"].as_u64().unwrap_or(0))
            .sum();
        shares.add(&path, spec.cgroup_weight, bytes);
    }
    shares.to_json()
}
