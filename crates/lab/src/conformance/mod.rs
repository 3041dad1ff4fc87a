//! CFQ conformance: iosched's CFQ against Linux 4.20.1's own recorded decisions.
//!
//! `../shared/conformance/cfq/` holds scenarios (`scenarios/*.scn`) and what the kernel's
//! `block/cfq-iosched.c`, compiled in user space and driven by the harness loop, dispatched for
//! each (`expected/*.out.xz`). [`run_suite`] runs every scenario through [`iosched_core::cfq`]
//! with the same loop and device model ([`harness`], written anew from the harness's README
//! and reference driver) and compares the `D` lines (time, request id, pid), in order.
//! A scenario is identical when every dispatch matches, at the same time.
//!
//! Scenario time 0 lies at the scenario's `origin` (1000 s after boot by default); the
//! scheduler is created at boot (absolute 0). [`SuiteOptions::origin_ns`] overrides the origin
//! of every scenario, e.g. 0 to start at boot as iosched's simulator once did.

pub mod expected;
pub mod harness;
pub mod scenario;

use std::fmt;
use std::path::{Path, PathBuf};

use expected::{first_divergence, read_expected, Divergence, ExpectedError};
use scenario::{read_scenario, ScenarioError};

/// How to run a suite.
#[derive(Clone, Debug, Default)]
pub struct SuiteOptions {
    /// Overrides every scenario's origin (absolute time of scenario time 0).
    pub origin_ns: Option<u64>,
    /// Writes iosched's output of each scenario as `NAME.out` here (the harness's line
    /// format, for `compare.py`).
    pub out_dir: Option<PathBuf>,
    /// Only scenarios whose name contains this.
    pub filter: Option<String>,
    /// Worker threads; 0 means one per available CPU.
    pub jobs: usize,
}

/// One scenario's comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioResult {
    pub name: String,
    pub kernel_dispatches: usize,
    pub iosched_dispatches: usize,
    pub divergence: Option<Divergence>,
}

impl ScenarioResult {
    pub fn identical(&self) -> bool {
        self.divergence.is_none()
    }
}

impl fmt::Display for ScenarioResult {
    /// `NAME: first divergence at dispatch #I t=T: kernel (t, id, pid) iosched (t, id, pid)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(d) = &self.divergence else {
            return write!(
                f,
                "{}: identical ({} dispatches)",
                self.name, self.kernel_dispatches
            );
        };
        let side = |r: Option<harness::DispatchRecord>| match r {
            Some((t, id, pid)) => format!("t={t} rq={id} pid={pid}"),
            None => "nothing".to_string(),
        };
        write!(
            f,
            "{}: first divergence at dispatch #{} of {} t={}: kernel {}, iosched {}",
            self.name,
            d.index,
            self.kernel_dispatches,
            d.time_ns,
            side(d.kernel),
            side(d.iosched)
        )
    }
}

/// Why a suite could not run.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConformanceError {
    Dir {
        path: PathBuf,
        error: std::io::Error,
    },
    NoScenarios(PathBuf),
    Scenario(ScenarioError),
    Expected(ExpectedError),
    Tunable {
        path: PathBuf,
        line: usize,
        error: iosched_core::TunableError,
    },
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl fmt::Display for ConformanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConformanceError::Dir { path, error } => write!(f, "{}: {error}", path.display()),
            ConformanceError::NoScenarios(p) => write!(f, "{}: no *.scn scenarios", p.display()),
            ConformanceError::Scenario(e) => write!(f, "{e}"),
            ConformanceError::Expected(e) => write!(f, "{e}"),
            ConformanceError::Tunable { path, line, error } => {
                write!(f, "{}:{line}: {error}", path.display())
            }
            ConformanceError::Write { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for ConformanceError {}

/// The `*.scn` files of `dir` (by name), filtered.
pub fn list_scenarios(dir: &Path, filter: Option<&str>) -> Result<Vec<PathBuf>, ConformanceError> {
    let dir_err = |error| ConformanceError::Dir {
        path: dir.to_path_buf(),
        error,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(dir_err)? {
        let path = entry.map_err(dir_err)?.path();
        let is_scn = path.extension().is_some_and(|e| e == "scn");
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if is_scn && filter.is_none_or(|f| name.contains(f)) {
            out.push(path);
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(ConformanceError::NoScenarios(dir.to_path_buf()));
    }
    Ok(out)
}

/// Runs one scenario file and compares it with its expected output in `expected_dir`.
pub fn run_one(
    path: &Path,
    expected_dir: &Path,
    opts: &SuiteOptions,
) -> Result<ScenarioResult, ConformanceError> {
    let sc = read_scenario(path).map_err(ConformanceError::Scenario)?;
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    let out =
        harness::run_scenario(&sc, opts.origin_ns, opts.out_dir.is_some()).map_err(|error| {
            let line = sc
                .tunables
                .iter()
                .find(|t| error.to_string().contains(&t.0));
            ConformanceError::Tunable {
                path: path.to_path_buf(),
                line: line.map_or(0, |t| t.2),
                error,
            }
        })?;
    if let (Some(dir), Some(text)) = (&opts.out_dir, &out.text) {
        let p = dir.join(format!("{name}.out"));
        iosched_gate::write_file(&p, text.as_bytes(), false).map_err(|error| {
            ConformanceError::Write {
                path: p,
                error: error.into_io(),
            }
        })?;
    }
    let kernel = read_expected(expected_dir, &name).map_err(ConformanceError::Expected)?;
    Ok(ScenarioResult {
        kernel_dispatches: kernel.len(),
        iosched_dispatches: out.dispatches.len(),
        divergence: first_divergence(&kernel, &out.dispatches),
        name,
    })
}

/// Runs every scenario of `scenarios_dir` against `expected_dir`, results in name order.
pub fn run_suite(
    scenarios_dir: &Path,
    expected_dir: &Path,
    opts: &SuiteOptions,
) -> Result<Vec<ScenarioResult>, ConformanceError> {
    let files = list_scenarios(scenarios_dir, opts.filter.as_deref())?;
    if let Some(dir) = &opts.out_dir {
        std::fs::create_dir_all(dir).map_err(|error| ConformanceError::Write {
            path: dir.clone(),
            error,
        })?;
    }
    crate::pool::map_in_order(
        &files,
        opts.jobs,
        |path| run_one(path, expected_dir, opts),
        || {},
    )
    .into_iter()
    .collect()
}

/// The closing line: `N of M scenarios identical`.
pub fn summary_line(results: &[ScenarioResult]) -> String {
    let same = results.iter().filter(|r| r.identical()).count();
    format!("{same} of {} scenarios identical", results.len())
}
