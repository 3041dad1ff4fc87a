//! The pieces of `iosched.sweep`: a sweep spec (a TOML file, or a dict's TOML text) expanded
//! into its points' run descriptions, a batch of points measured into wire rows (what a Dask
//! task runs), the pilot's estimate, and the gathered rows made into the CLI's table.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use iosched_driver::spec::RunSpec;
use iosched_lab::sweep::{self, estimate, table, wire, SweepSpec, Swept};
use pyo3::prelude::*;

use crate::error::{detached, Raise};

static NEVER: AtomicBool = AtomicBool::new(false);

/// The spec at `path`, or `text` (a dict's TOML) read as if from `path`.
fn load(path: &str, text: Option<&str>) -> Result<SweepSpec, Raise> {
    let path = Path::new(path);
    match text {
        Some(text) => SweepSpec::parse(path, text),
        None => SweepSpec::load(path),
    }
    .map_err(|error| Raise::spec(&error))
}

/// TOML text of a dict given as JSON (`json.dumps` of the dict `sweep` was handed).
fn toml_of(json: &str) -> Result<String, Raise> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| Raise::new("SpecError", format!("sweep spec: {e}")))?;
    toml::to_string(&value).map_err(|e| Raise::new("SpecError", format!("sweep spec: {e}")))
}

/// The spec's path and TOML text: `json` is a dict's JSON, read as a file `path` would be.
fn source(path: String, json: Option<String>) -> Result<(String, Option<String>), Raise> {
    let text = json.as_deref().map(toml_of).transpose()?;
    Ok((path, text))
}

/// How many points the sweep has.
#[pyfunction]
#[pyo3(signature = (path, json=None))]
pub fn sweep_point_count(py: Python<'_>, path: String, json: Option<String>) -> PyResult<usize> {
    detached(py, move || {
        let (path, text) = source(path, json)?;
        Ok(load(&path, text.as_deref())?.point_count())
    })
}

/// Every point's run description (JSON), in point order.
#[pyfunction]
#[pyo3(signature = (path, json=None))]
pub fn sweep_specs(py: Python<'_>, path: String, json: Option<String>) -> PyResult<Vec<String>> {
    detached(py, move || {
        let (path, text) = source(path, json)?;
        let spec = load(&path, text.as_deref())?;
        let specs = sweep::specs(&spec).map_err(|e| Raise::sweep(&e))?;
        Ok(specs.iter().map(RunSpec::to_json).collect())
    })
}

/// Runs the pilot points (one per scheduler and device, see `estimate`): the estimate's text,
/// its figures (points, requests, core-seconds, requests per second, memory bytes or None,
/// pilots), the pilots' indices and their wire rows.
#[pyfunction]
#[pyo3(signature = (path, json=None))]
#[allow(clippy::type_complexity)]
pub fn sweep_pilot(
    py: Python<'_>,
    path: String,
    json: Option<String>,
) -> PyResult<(
    String,
    (usize, f64, f64, f64, Option<u64>, usize),
    Vec<usize>,
    Vec<String>,
)> {
    detached(py, move || {
        let (path, text) = source(path, json)?;
        let spec = load(&path, text.as_deref())?;
        let specs = sweep::specs(&spec).map_err(|e| Raise::sweep(&e))?;
        let pilot = estimate::pilot(&spec, &specs, 0, &NEVER).map_err(|e| Raise::sweep(&e))?;
        let e = &pilot.estimate;
        let figures = (
            e.points,
            e.requests,
            e.core_seconds,
            e.rate_per_s,
            e.memory_bytes,
            e.pilots,
        );
        let points = pilot.done.iter().map(|(point, _)| *point).collect();
        let rows = pilot
            .done
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(wire::encode))
            .collect();
        Ok((e.to_string(), figures, points, rows))
    })
}

/// Measures a batch of points, each `(index, run description JSON)`: their wire rows, in
/// order. What one task runs on a worker.
#[pyfunction]
pub fn sweep_measure(py: Python<'_>, points: Vec<(usize, String)>) -> PyResult<Vec<String>> {
    detached(py, move || {
        let mut rows = Vec::new();
        for (index, json) in &points {
            let spec = RunSpec::from_json(json)
                .map_err(|e| Raise::new("SpecError", format!("point {index}: {e}")))?;
            let measured = sweep::measure(*index, &spec, &NEVER)
                .map_err(|error| Raise::run(&error, &format!("point {index}: ")))?;
            rows.extend(measured.rows.iter().map(wire::encode));
        }
        Ok(rows)
    })
}

/// The gathered rows (any order) as the CLI's table: `csv` or `json` (JSON lines).
fn swept(spec: &SweepSpec, rows: &[String]) -> Result<Swept, Raise> {
    let mut decoded = rows
        .iter()
        .map(|line| wire::decode(line, spec.point_count()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| Raise::new("IoschedError", why))?;
    decoded.sort_by_key(|row| row.point);
    Ok(Swept {
        rows: decoded,
        interrupted: false,
    })
}

#[pyfunction]
#[pyo3(signature = (path, json, rows, format))]
pub fn sweep_table(
    py: Python<'_>,
    path: String,
    json: Option<String>,
    rows: Vec<String>,
    format: String,
) -> PyResult<String> {
    detached(py, move || {
        let (path, text) = source(path, json)?;
        let spec = load(&path, text.as_deref())?;
        let swept = swept(&spec, &rows)?;
        match format.as_str() {
            "csv" => Ok(table::csv(&spec, &swept)),
            "json" => Ok(table::json_lines(&spec, &swept)),
            other => Err(Raise::new(
                "IoschedError",
                format!("format '{other}': csv or json"),
            )),
        }
    })
}

/// Writes `sweep.csv`, `sweep.jsonl` and the chart into `out`, as `iosched sweep --out`.
#[pyfunction]
#[pyo3(signature = (path, json, rows, out))]
pub fn sweep_write_out(
    py: Python<'_>,
    path: String,
    json: Option<String>,
    rows: Vec<String>,
    out: PathBuf,
) -> PyResult<()> {
    detached(py, move || {
        let (path, text) = source(path, json)?;
        let spec = load(&path, text.as_deref())?;
        let swept = swept(&spec, &rows)?;
        let failed = |e: &dyn std::fmt::Display| Raise::new("IoschedError", format!("out {e}"));
        std::fs::create_dir_all(&out).map_err(|e| failed(&e))?;
        for (name, text) in [
            ("sweep.csv", table::csv(&spec, &swept)),
            ("sweep.jsonl", table::json_lines(&spec, &swept)),
        ] {
            iosched_gate::write_file(&out.join(name), text.as_bytes(), false)
                .map_err(|e| failed(&e))?;
        }
        iosched_report::sweep_plot::write_lines(&out.join("sweep"), &table::chart(&spec, &swept))
            .map_err(|e| failed(&e))?;
        Ok(())
    })
}
