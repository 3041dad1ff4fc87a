//! A sweep described in TOML: what varies (job files, devices, schedulers, `--set` values,
//! job-file variables, seeds) and how the chart reads it.
//!
//! ```toml
//! title = "group_idle against cgroup weights"
//! jobs = ["../scenarios/004/group-idle.fio"]   # relative to this file
//! devices = ["ufs31"]                           # presets, model files (.toml) or paths
//! schedulers = ["cfq"]                          # an entry may carry settings: "cfq slice_idle=0"
//! seeds = [1]
//! x = "group_idle_us"                           # the chart's x axis (default: the first swept input)
//!
//! [set]                                         # tunables and knobs, as `--set` takes them
//! group_idle_us = [0, 1000, 2000]
//!
//! [env]                                         # `${NAME}` in the job files
//! RUNTIME = "10s"
//! ```
//!
//! Every list is swept; a single value is a list of one. Unknown keys are refused, and every
//! error names the file and line.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    title: Option<String>,
    jobs: Spanned<OneOrMany>,
    devices: Option<Spanned<OneOrMany>>,
    schedulers: Option<Spanned<OneOrMany>>,
    seeds: Option<Spanned<Vec<u64>>>,
    x: Option<Spanned<String>>,
    /// Seconds the simulated machine has been up (as `iosched run --uptime`).
    uptime: Option<u64>,
    #[serde(default)]
    set: BTreeMap<String, Spanned<OneOrMany>>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<OneOrMany>>,
}

/// A value or a list of values; numbers and booleans become the text `--set` would take.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(Scalar),
    Many(Vec<Scalar>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Int(n) => n.to_string(),
            Scalar::Float(x) => x.to_string(),
            // sysfs switches read 0 and 1.
            Scalar::Bool(b) => u8::from(*b).to_string(),
            Scalar::Text(s) => s.clone(),
        }
    }
}

impl OneOrMany {
    fn texts(&self) -> Vec<String> {
        match self {
            OneOrMany::One(one) => vec![one.text()],
            OneOrMany::Many(many) => many.iter().map(Scalar::text).collect(),
        }
    }
}

/// One swept input: its name (a column of the table) and its values, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
    /// Where it is set: `device`, `scheduler`, `set`, `env`, `seed`, `jobfile`.
    pub kind: AxisKind,
}

/// What an [`Axis`] varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisKind {
    JobFile,
    Device,
    Scheduler,
    /// A scheduler tunable or a knob (`--set`).
    Set,
    /// A job-file variable.
    Env,
    Seed,
}

/// A sweep, read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepSpec {
    pub path: PathBuf,
    pub title: String,
    /// Every input in column order: job file, device, scheduler, each `set` key and each
    /// `env` key in file order, seed.
    pub axes: Vec<Axis>,
    /// The index in `axes` of the chart's x axis.
    pub x: usize,
    pub uptime_s: u64,
}

/// A spec that cannot be used: the file, a line where one applies, and why.
#[derive(Debug)]
pub struct SpecError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for SpecError {}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl SweepSpec {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<SweepSpec, SpecError> {
        let kind = iosched_workload::input::InputKind::SweepSpec;
        let text = iosched_workload::input::read_text(path, kind).map_err(|error| SpecError {
            path: path.to_path_buf(),
            line: None,
            message: error.reason(),
        })?;
        SweepSpec::parse(path, &text)
    }

    /// Checks `text`, read from `path` (job files and model files are relative to its folder).
    pub fn parse(path: &Path, text: &str) -> Result<SweepSpec, SpecError> {
        let error = |offset: Option<usize>, message: String| SpecError {
            path: path.to_path_buf(),
            line: offset.map(|o| line_of(text, o)),
            message,
        };
        let file: SpecFile = toml::from_str(text).map_err(|e| {
            let message = e.message().trim_end().to_string();
            error(e.span().map(|s| s.start), message)
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let axes = axes_of(&file, base, &error)?;
        let x = x_axis(&file, &axes, &error)?;
        check_size(&axes).map_err(|message| error(None, message))?;
        let title = file
            .title
            .unwrap_or_else(|| format!("Sweep of {}", axes[x].name));
        Ok(SweepSpec {
            path: path.to_path_buf(),
            title,
            axes,
            x,
            uptime_s: file
                .uptime
                .unwrap_or(iosched_core::DEFAULT_UPTIME_NS / iosched_core::NSEC_PER_SEC),
        })
    }

    /// How many runs the sweep makes: the product of every axis's length.
    pub fn point_count(&self) -> usize {
        self.axes.iter().map(|axis| axis.values.len()).product()
    }

    /// The `index`-th point's value index on each axis, the last axis varying fastest.
    pub fn point(&self, mut index: usize) -> Vec<usize> {
        let mut picks = vec![0; self.axes.len()];
        for (slot, axis) in self.axes.iter().enumerate().rev() {
            picks[slot] = index % axis.values.len();
            index /= axis.values.len();
        }
        picks
    }
}

/// Most points a sweep may have. Choice: 100,000 runs is a day of one-second simulations on
/// a single CPU, and the table of every point is held in memory until the sweep ends; a
/// larger product is almost always a list typed too long.
pub const MAX_SWEEP_POINTS: usize = 100_000;

/// Refuses a sweep of more than [`MAX_SWEEP_POINTS`] points, computed from the axes'
/// lengths before anything is expanded (the product may not even fit in a `usize`).
fn check_size(axes: &[Axis]) -> Result<(), String> {
    let points = axes.iter().try_fold(1usize, |product, axis| {
        product.checked_mul(axis.values.len())
    });
    match points {
        Some(points) if points <= MAX_SWEEP_POINTS => Ok(()),
        _ => {
            let lengths: Vec<String> = axes
                .iter()
                .map(|axis| format!("{} {}", axis.values.len(), axis.name))
                .collect();
            let count: f64 = axes.iter().map(|axis| axis.values.len() as f64).product();
            Err(format!(
                "{count:.3e} points ({}): more than the {MAX_SWEEP_POINTS} a sweep may have",
                lengths.join(" × ")
            ))
        }
    }
}

/// A model file (`.toml`) is relative to the spec; a preset name or a real path is not.
fn relative_device(base: &Path, device: String) -> String {
    if device.ends_with(".toml") && Path::new(&device).is_relative() {
        tidy(&base.join(device))
    } else {
        device
    }
}

/// `examples/../scenarios/x.fio` as `scenarios/x.fio`: the table's job-file column reads as
/// a path from where the command ran. Lexical only; a `..` after a symbolic link would
/// differ, so a leading `..` is kept.
fn tidy(path: &Path) -> String {
    use std::path::Component;
    let mut parts: Vec<Component> = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts
        .iter()
        .collect::<PathBuf>()
        .to_string_lossy()
        .into_owned()
}

fn first_swept(axes: &[Axis]) -> usize {
    let swept = |axis: &&Axis| axis.values.len() > 1;
    axes.iter()
        .position(|a| swept(&a) && matches!(a.kind, AxisKind::Set | AxisKind::Env))
        .or_else(|| axes.iter().position(|a| swept(&a)))
        .unwrap_or(0)
}

/// Where an error points (a byte offset in the spec, if known) and what it says.
type ErrorAt<'a> = &'a dyn Fn(Option<usize>, String) -> SpecError;

/// Every input the sweep varies, in the file's order: job files, devices, schedulers, each
/// `set` and `env` entry, seeds.
fn axes_of(file: &SpecFile, base: &Path, error: ErrorAt) -> Result<Vec<Axis>, SpecError> {
    let mut axes = Vec::new();
    let push = |axes: &mut Vec<Axis>, name: &str, kind, values: Vec<String>, at| {
        if values.is_empty() {
            return Err(error(
                Some(at),
                format!("{name}: an empty list sweeps nothing"),
            ));
        }
        if axes.iter().any(|a: &Axis| a.name == name) {
            let message = format!("{name}: an input of that name exists");
            return Err(error(Some(at), message));
        }
        axes.push(Axis {
            name: name.to_string(),
            values,
            kind,
        });
        Ok(())
    };
    let jobs = file.jobs.get_ref().texts();
    let jobs = jobs.iter().map(|job| tidy(&base.join(job))).collect();
    push(
        &mut axes,
        "jobfile",
        AxisKind::JobFile,
        jobs,
        file.jobs.span().start,
    )?;
    let devices = file.devices.as_ref().map_or(vec!["fixed".into()], |d| {
        d.get_ref()
            .texts()
            .into_iter()
            .map(|device| relative_device(base, device))
            .collect()
    });
    let at = |s: &Option<Spanned<OneOrMany>>| s.as_ref().map_or(0, |s| s.span().start);
    push(
        &mut axes,
        "device",
        AxisKind::Device,
        devices,
        at(&file.devices),
    )?;
    let schedulers = file
        .schedulers
        .as_ref()
        .map_or(vec!["noop".into()], |s| s.get_ref().texts());
    push(
        &mut axes,
        "scheduler",
        AxisKind::Scheduler,
        schedulers,
        at(&file.schedulers),
    )?;
    for (kind, entries) in [(AxisKind::Set, &file.set), (AxisKind::Env, &file.env)] {
        // File order, which a BTreeMap loses: by where each value stands.
        let mut entries: Vec<_> = entries.iter().collect();
        entries.sort_by_key(|(_, value)| value.span().start);
        for (name, value) in entries {
            push(
                &mut axes,
                name,
                kind,
                value.get_ref().texts(),
                value.span().start,
            )?;
        }
    }
    let seeds = file.seeds.as_ref().map_or(vec![1], |s| s.get_ref().clone());
    let seeds_at = file.seeds.as_ref().map_or(0, |s| s.span().start);
    let seeds = seeds.iter().map(u64::to_string).collect();
    push(&mut axes, "seed", AxisKind::Seed, seeds, seeds_at)?;
    Ok(axes)
}

/// The input the plot's x axis follows: `x =` if given.
fn x_axis(file: &SpecFile, axes: &[Axis], error: ErrorAt) -> Result<usize, SpecError> {
    let x = match &file.x {
        Some(x) => axes
            .iter()
            .position(|axis| &axis.name == x.get_ref())
            .ok_or_else(|| {
                let names: Vec<_> = axes.iter().map(|a| a.name.as_str()).collect();
                let message = format!(
                    "x = '{}': no such input (have: {})",
                    x.get_ref(),
                    names.join(", ")
                );
                error(Some(x.span().start), message)
            })?,
        // Choice: a `set` or `env` value is what a sweep is usually about, so the first
        // swept one of those leads; else the first swept input; else the job file.
        None => first_swept(axes),
    };
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SweepSpec, SpecError> {
        SweepSpec::parse(Path::new("dir/s.toml"), text)
    }

    #[test]
    fn inputs_become_axes_in_column_order_and_x_defaults_to_the_swept_setting() {
        let spec = parse(
            "jobs = 'a.fio'\nschedulers = ['noop', 'cfq']\n\
             [set]\nslice_idle = [0, 8]\nback_seek_penalty = 2\n[env]\nSIZE = '1m'\n",
        )
        .unwrap();
        let names: Vec<_> = spec.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "jobfile",
                "device",
                "scheduler",
                "slice_idle",
                "back_seek_penalty",
                "SIZE",
                "seed"
            ]
        );
        assert_eq!(spec.axes[0].values, ["dir/a.fio"]);
        assert_eq!(tidy(Path::new("ex/../sc/./a.fio")), "sc/a.fio");
        assert_eq!(tidy(Path::new("../a.fio")), "../a.fio");
        assert_eq!(
            spec.axes[1].values,
            ["fixed"],
            "iosched run's default device"
        );
        assert_eq!(spec.axes[3].values, ["0", "8"]);
        assert_eq!(spec.axes[spec.x].name, "slice_idle");
        assert_eq!(spec.point_count(), 4);
        // The last axis varies fastest: scheduler is the outer of the two swept ones.
        assert_eq!(spec.point(1)[2..4], [0, 1]);
        assert_eq!(spec.point(2)[2..4], [1, 0]);
    }

    /// Unknown keys, wrong types and empty lists are refused with the file and line.
    #[test]
    fn errors_name_file_and_line() {
        let cases = [
            ("jobs = 'a.fio'\n\nbogus = 1\n", "dir/s.toml:3:", "bogus"),
            ("jobs = 'a.fio'\nseeds = ['x']\n", "dir/s.toml:2:", ""),
            (
                "jobs = 'a.fio'\n[set]\nslice_idle = []\n",
                "dir/s.toml:3:",
                "empty list",
            ),
            (
                "jobs = 'a.fio'\nx = 'nope'\n",
                "dir/s.toml:2:",
                "no such input",
            ),
            ("devices = ['hdd']\n", "dir/s.toml:1:", "jobs"),
        ];
        for (text, place, words) in cases {
            let error = parse(text).unwrap_err().to_string();
            assert!(error.starts_with(place), "{text:?}: {error}");
            assert!(error.contains(words), "{text:?}: {error}");
        }
    }

    /// Issue 28: a sweep's size is its lists' product, refused past [`MAX_SWEEP_POINTS`]
    /// before any point exists; a product past `usize` is refused too, not wrapped.
    #[test]
    fn a_sweep_past_the_point_limit_is_refused_before_expanding() {
        let list = |n: usize| {
            format!(
                "[{}]",
                (0..n).map(|v| v.to_string()).collect::<Vec<_>>().join(",")
            )
        };
        let at_limit = format!(
            "jobs = 'a.fio'\n[env]\nA = {}\nB = {}\n",
            list(1000),
            list(100)
        );
        assert_eq!(parse(&at_limit).unwrap().point_count(), MAX_SWEEP_POINTS);
        let over = format!(
            "jobs = 'a.fio'\n[env]\nA = {}\nB = {}\n",
            list(1000),
            list(101)
        );
        let error = parse(&over).unwrap_err().to_string();
        assert!(error.starts_with("dir/s.toml: 1.010e5 points"), "{error}");
        assert!(error.contains("1000 A × 101 B"), "{error}");
        let env: String = (0..12).map(|i| format!("V{i} = {}\n", list(100))).collect();
        let error = parse(&format!("jobs = 'a.fio'\n[env]\n{env}")).unwrap_err();
        assert!(error.to_string().contains("1.000e24 points"), "{error}");
    }
}
