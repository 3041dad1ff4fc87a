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

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_engine::TargetKind;
    use iosched_workload::fio::{parse_str, ParseContext};
    use std::process::Command;

    /// Two 64 KiB writers, one section each (as the generated job file has).
    const TWO_WRITERS: &str = "[global]\nioengine=psync\nsize=64k\nbs=4k\nrw=write\n\n[a]\n\n[b]\n";

    fn facts(target: &Target) -> RunFacts<'_> {
        RunFacts {
            scheduler: "bfq",
            device: "/dev/loop9",
            target,
            previous_scheduler: Some("none".into()),
            nr_requests: Some(32),
            tunables: vec![("slice_idle".into(), "0".into())],
            fio_version: "fio-3.33",
            weights: Vec::new(),
            weights_applied: true,
            interrupted: false,
        }
    }

    /// fio 3.33's own JSON for `extra` options, or `None` (printed SKIPPED) without fio.
    fn fio_json(name: &str, extra: &str) -> Option<String> {
        let dir =
            std::env::temp_dir().join(format!("iosched-report-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let job = dir.join("w.fio");
        let text = TWO_WRITERS.replace(
            "[global]\n",
            &format!(
                "[global]\nfilename={}\n{extra}",
                dir.join("t.img").display()
            ),
        );
        std::fs::write(&job, text).unwrap();
        let out = Command::new("fio")
            .arg("--output-format=json")
            .arg(&job)
            .output();
        std::fs::remove_dir_all(&dir).unwrap();
        match out {
            Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into()),
            _ => {
                eprintln!("SKIPPED: report::tests::{name}: fio not installed or failed");
                None
            }
        }
    }

    /// The cgroup shares come from fio's own per-job byte counts (fio 3.33 on a scratch
    /// file): each clone's entry is matched to its job's cgroup and weight; with
    /// `group_reporting` fio merges the entries and no per-cgroup figure is claimed.
    #[test]
    fn shares_follow_fio_entries_and_group_reporting_gives_none() {
        let Some(raw) = fio_json("shares", "") else {
            return;
        };
        let ours = TWO_WRITERS
            .replace("[a]\n", "[a]\ncgroup=a\ncgroup_weight=800\n")
            .replace("[b]\n", "[b]\ncgroup=b\ncgroup_weight=200\n");
        let jobs = parse_str(&ours, "w.fio", &ParseContext::default()).unwrap();
        let target = Target {
            path: "/dev/loop9".into(),
            kind: TargetKind::BlockDevice,
            exists: true,
            capacity_bytes: Some(64 << 20),
            disk: Some("loop9".into()),
            partition: None,
            dev: None,
            rotational: false,
            queue_depth: 128,
            kernel_scheduler: None,
        };
        // A note fio prints before its JSON is skipped.
        let noisy = format!("note: a line before the JSON\n{raw}");
        let value = with_iosched(&noisy, &jobs, &[0, 1], facts(&target)).unwrap();
        let iosched = &value["iosched"];
        assert_eq!(iosched["driver"], "kernel");
        assert_eq!(iosched["device"]["nr_requests"], 32);
        assert_eq!(iosched["tunables"]["slice_idle"], "0");
        let groups = iosched["cgroups"].as_array().expect("one entry per cgroup");
        for (group, (path, weight)) in groups.iter().zip([("/a", 800), ("/b", 200)]) {
            assert_eq!(group["path"], path, "{group}");
            assert_eq!(group["weight"], weight, "{group}");
            assert_eq!(group["io_bytes"], 65536, "{group}");
        }
        let Some(merged) = fio_json("shares-merged", "group_reporting\n") else {
            return;
        };
        let value = with_iosched(&merged, &jobs, &[0, 1], facts(&target)).unwrap();
        assert!(
            value["iosched"]["cgroups"].is_null(),
            "{}",
            value["iosched"]
        );
    }
}
