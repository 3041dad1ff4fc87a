//! A [`RunSpec`] read as a kernel run: what fio on the kernel's scheduler can honour, and a
//! clear error for what it cannot.
//!
//! - `target` must be a real path (a preset or a model file is a simulated device);
//! - `scheduler` is a kernel scheduler or one of `iosched run`'s aliases of one;
//! - `tunables` go to `queue/iosched/` as given, for the kernel to validate;
//! - of the `knobs`, only `nr_requests` has a meaning here (`queue/nr_requests`); the page
//!   cache and file-system knobs belong to the simulated machine, the run uses this one's;
//! - `outputs` (trace, decisions) are iosched's driver's records: fio runs this I/O, so a
//!   spec asking for them is refused;
//! - the job files are parsed against the spec's machine, as for any run.
//!
//! Choice: `uptime_s` and `check` are ignored rather than refused. The kernel's clock is the
//! machine's own and no iosched scheduler runs whose invariants could be checked; a spec
//! saved by `iosched run` for a real path carries both with their defaults.

use iosched_driver::spec::{RunSpec, Target};
use iosched_workload::fio;

use crate::error::KernelError;
use crate::{FioBinary, FioFormat, KernelRun, KernelScheduler};

impl KernelRun {
    /// The kernel run `spec` describes, fio's output in `format`.
    pub(crate) fn from_spec(
        spec: &RunSpec,
        fio: &FioBinary,
        format: FioFormat,
    ) -> Result<KernelRun, KernelError> {
        let scheduler = KernelScheduler::from_name(&spec.scheduler)?;
        let Target::Real(path) = &spec.target else {
            return Err(KernelError::Simulated {
                target: spec.target.to_string(),
            });
        };
        if spec.outputs.decisions.is_some() {
            return Err(KernelError::Outputs);
        }
        if let Some(trace) = &spec.outputs.trace {
            if trace.extension().is_some_and(|e| e == "blktrace") {
                return Err(KernelError::BinaryTrace {
                    path: trace.display().to_string(),
                });
            }
        }
        let mut nr_requests = None;
        for knob in &spec.knobs {
            if knob.name != "nr_requests" {
                return Err(KernelError::Knob {
                    name: knob.name.clone(),
                    value: knob.value.clone(),
                });
            }
            nr_requests = Some(knob.value.clone());
        }
        let context = spec
            .machine
            .parse_context(iosched_engine::host::clone_limit());
        let jobs = fio::parse_sources(&spec.jobs, &context).map_err(KernelError::Jobs)?;
        Ok(KernelRun {
            jobs,
            device: path.to_string_lossy().into_owned(),
            scheduler,
            tunables: spec.tunable_pairs(),
            nr_requests,
            seed: spec.seed,
            force: spec.force,
            trace: spec.outputs.trace.clone(),
            fio: fio.clone(),
            format,
            timeout: crate::Timeout::Planned,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_driver::spec::{Machine, Outputs, Setting, RUN_SPEC_VERSION};
    use iosched_workload::fio::{JobSource, ParseContext};

    fn spec(device: &str, knobs: &[&str]) -> RunSpec {
        let jobs = vec![JobSource {
            origin: "a.fio".into(),
            text: "[a]\nrw=randread\nsize=1m\nnumjobs=2\n".into(),
        }];
        RunSpec {
            version: RUN_SPEC_VERSION,
            machine: Machine::capture(&ParseContext::default(), &jobs),
            jobs,
            target: Target::from_device_arg(device),
            scheduler: "deadline".into(),
            tunables: vec![Setting::parse("fifo_batch=8").unwrap()],
            knobs: knobs.iter().map(|k| Setting::parse(k).unwrap()).collect(),
            seed: 3,
            uptime_s: 1000,
            check: false,
            force: true,
            outputs: Outputs::default(),
        }
    }

    fn fio() -> FioBinary {
        FioBinary {
            path: "fio".into(),
            version: "fio-3.33".into(),
        }
    }

    #[test]
    fn a_spec_for_a_real_path_becomes_a_kernel_run() {
        // Through JSON and back, as a saved spec would come.
        let text = spec("/dev/loop9", &["nr_requests=32"]).to_json();
        let spec = RunSpec::from_json(&text).unwrap();
        let run = KernelRun::from_spec(&spec, &fio(), FioFormat::Json).unwrap();
        assert_eq!(run.device, "/dev/loop9");
        assert_eq!(run.scheduler, KernelScheduler::MqDeadline);
        assert_eq!(run.nr_requests.as_deref(), Some("32"));
        assert_eq!(run.tunables, vec![("fifo_batch".into(), "8".into())]);
        // Issue 28: a spec cannot grant --force; only the command line can.
        assert_eq!((run.seed, run.force), (3, false));
        assert_eq!(run.jobs.jobs[0].numjobs, 2);
    }

    #[test]
    fn what_a_kernel_run_cannot_honour_is_refused() {
        let refused = |spec: RunSpec| {
            let error = KernelRun::from_spec(&spec, &fio(), FioFormat::Json).unwrap_err();
            assert!(error.is_input(), "{error}");
            error.to_string()
        };
        assert!(refused(spec("hdd", &[])).contains("hdd: a simulated device"));
        let knob = refused(spec("/dev/loop9", &["dirty_ratio=10"]));
        assert!(knob.starts_with("--set dirty_ratio=10"), "{knob}");
        let mut traced = spec("/dev/loop9", &[]);
        traced.outputs.trace = Some("t.blktrace".into());
        assert!(refused(traced).contains("ftrace's text"));
        let mut decided = spec("/dev/loop9", &[]);
        decided.outputs.decisions = Some("d.jsonl".into());
        assert!(refused(decided).contains("decision log"));
        let mut cfq = spec("/dev/loop9", &[]);
        cfq.scheduler = "cfq".into();
        assert!(refused(cfq).contains("iosched run"));
    }
}
