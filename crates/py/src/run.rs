//! `iosched.run` and `iosched.run_spec`: the [`RunSpec`] `iosched run` builds from the same
//! job files and flags, run by the same function, its results written by the same fio JSON
//! writer, so the dict Python gets is the CLI's `--output-format json` but for the wall clock.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use iosched_driver::spec::{Outputs, RunSpec, Setting, DEFAULT_TRACE_LIMIT};
use iosched_lab::run::{BackendOutcome, CommandLine, Finished, Hooks, WallClock};
use iosched_workload::fio::JobSource;
use pyo3::prelude::*;

use crate::error::{detached, Raise};

/// Nothing stops a run started from Python but its end.
static NEVER: AtomicBool = AtomicBool::new(false);

/// The run description of `jobs` (each `(is_path, path or text)`) and the CLI's flags, as
/// `--save-spec` writes it.
#[pyfunction]
#[pyo3(signature = (jobs, device, scheduler, settings, seed, mem, uptime))]
#[allow(clippy::too_many_arguments)]
pub fn spec_from(
    py: Python<'_>,
    jobs: Vec<(bool, String)>,
    device: String,
    scheduler: String,
    settings: Vec<String>,
    seed: u64,
    mem: Option<String>,
    uptime: u64,
) -> PyResult<String> {
    detached(py, move || {
        let jobs = jobs
            .iter()
            .map(|(is_path, value)| match is_path {
                true => JobSource::read(Path::new(value)),
                false => Ok(JobSource {
                    origin: "<text>".to_string(),
                    text: value.clone(),
                }),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| Raise::run(&iosched_lab::run::RunError::Parse(error), ""))?;
        let settings = settings
            .iter()
            .map(|item| {
                Setting::parse(item).ok_or_else(|| {
                    Raise::new(
                        "SettingError",
                        format!("--set '{item}': expected KEY=VALUE (e.g. slice_idle=0)"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let spec = iosched_lab::run::spec_from(CommandLine {
            jobs,
            device,
            scheduler,
            settings,
            mem,
            seed,
            uptime_s: uptime,
            check: false,
            force: false,
            // As `iosched run` sets it, so the two write the same spec.
            outputs: Outputs {
                trace_limit: Some(DEFAULT_TRACE_LIMIT),
                ..Outputs::default()
            },
        })
        .map_err(|error| Raise::run(&error, ""))?;
        Ok(spec.to_json())
    })
}

/// Runs a spec (JSON as `--save-spec` writes it; `origin` names it in errors): fio's JSON
/// text, the warnings the CLI prints before the run, and its rows as a sweep's.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn run_spec(
    py: Python<'_>,
    spec: String,
    origin: String,
) -> PyResult<(String, Vec<String>, Vec<String>)> {
    detached(py, move || {
        let spec = RunSpec::from_json(&spec).map_err(|error| Raise {
            class: "SpecError",
            message: format!("{origin}: {error}"),
            file: Some(origin.clone()),
            line: None,
        })?;
        for path in [&spec.outputs.trace, &spec.outputs.decisions]
            .into_iter()
            .flatten()
        {
            // A spec's output paths came from a file: checked as `iosched run --spec` does.
            iosched_gate::confined(path, false)
                .map_err(|e| Raise::new("IoschedError", format!("{origin}: {e}")))?;
        }
        execute(&spec)
    })
}

/// fio's JSON text, the warnings, and the run's rows as a sweep's (wire lines).
fn execute(spec: &RunSpec) -> Result<(String, Vec<String>, Vec<String>), Raise> {
    let mut warnings = Vec::new();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let wall_start = Instant::now();
    let finished = iosched_lab::run::execute(
        spec,
        &mut Hooks {
            notify: &mut |line| warnings.push(line.to_string()),
            progress: &mut |_| {},
            stop: &NEVER,
        },
    )
    .map_err(|error| Raise::run(&error, ""))?;
    let wall = WallClock {
        started,
        elapsed: wall_start.elapsed(),
    };
    check(&finished)?;
    let results = finished.results(spec, wall);
    let formats: iosched_report::output::Formats = "json".parse().expect("json is a format");
    let mut text = Vec::new();
    formats
        .write(&results.run, &results.appendix, &mut text)
        .map_err(|e| Raise::new("RunFailed", format!("writing results: {e}")))?;
    let text = String::from_utf8(text).expect("fio JSON is UTF-8");
    let rows = iosched_lab::sweep::rows(0, spec, &finished)
        .iter()
        .map(iosched_lab::sweep::wire::encode)
        .collect();
    Ok((text, warnings, rows))
}

/// A run the CLI would end with exit status 1 (verify failures, I/O errors, output files
/// not written whole) raises `RunFailed` with the CLI's messages.
fn check(finished: &Finished) -> Result<(), Raise> {
    let mut problems: Vec<String> = finished.log_errors.iter().map(|e| e.to_string()).collect();
    if let BackendOutcome::Real { outcome, .. } = &finished.backend {
        problems.extend(outcome.io_errors.iter().map(|e| format!("I/O error: {e}")));
        problems.extend(
            outcome
                .verify_failures
                .iter()
                .filter(|f| !f.survived)
                .map(|f| {
                    format!(
                        "verify: job '{}': block of {} bytes at offset {}: {}",
                        f.job, f.len, f.offset, f.message
                    )
                }),
        );
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(Raise::new("RunFailed", problems.join("; "))),
    }
}
