//! [`RunSpec`]: everything that decides a run's result, in one serialisable value.
//!
//! `iosched run`, `replay`, `reproduce` and `kernel` each build one from their arguments and
//! hand it to a crate; written as JSON (`iosched run --save-spec`) and read back
//! (`iosched run --spec`), it runs to the same result. It carries the job files' text, not
//! their paths, and the machine context their `${NAME}`, `$mb_memory` and `$ncpus` expanded
//! against, so a saved run does not depend on the files or the environment of the machine
//! that repeats it. Wall-clock facts (when, how long) are never part of it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use iosched_workload::fio::{JobSource, ParseContext};
use serde::{Deserialize, Serialize};

/// The format's version: a reader refuses any other.
pub const RUN_SPEC_VERSION: u32 = 1;

/// One run's description.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub version: u32,
    /// The job files, in command-line order (each after the first stonewalls, as in fio).
    pub jobs: Vec<JobSource>,
    pub machine: Machine,
    pub target: Target,
    /// The scheduler's name as the user gave it (`noop`, `none`, `cfq`...).
    pub scheduler: String,
    /// Scheduler tunables by their sysfs names, applied in order.
    pub tunables: Vec<Setting>,
    /// Block-layer, page-cache, writeback and file-system knobs (`nr_requests`, `mem`,
    /// `dirty_ratio`, `flusher`...), applied in order.
    pub knobs: Vec<Setting>,
    /// Seed of every random stream.
    pub seed: u64,
    /// Seconds the machine has been up when the run starts (the scheduler's clock origin).
    pub uptime_s: u64,
    /// Check the scheduler's invariants after every step.
    #[serde(default)]
    pub check: bool,
    /// `--force` on this command line: lets the engine write to a device or file that holds
    /// data, and any output go where the gate refuses. Never saved nor read: a spec is a file
    /// anyone may have written, and only the command line may grant it (a saved spec's
    /// `"force"` key is read and ignored).
    #[serde(skip_serializing, default, deserialize_with = "ignored_force")]
    pub force: bool,
    /// Files the run writes besides its results.
    #[serde(default)]
    pub outputs: Outputs,
}

/// Reads a spec's `"force"` and drops it: a spec cannot grant `--force`.
fn ignored_force<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    <bool as Deserialize>::deserialize(deserializer)?;
    Ok(false)
}

/// A `KEY=VALUE` setting (`--set`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    pub name: String,
    pub value: String,
}

impl Setting {
    /// Parses `KEY=VALUE`; the key may not be empty.
    pub fn parse(item: &str) -> Option<Setting> {
        let (name, value) = item.split_once('=')?;
        let name = name.trim();
        (!name.is_empty()).then(|| Setting {
            name: name.to_string(),
            value: value.trim().to_string(),
        })
    }
}

/// What the job files' `${NAME}`, `$pagesize`, `$mb_memory` and `$ncpus` expand to: the
/// simulated machine for a simulation, the real one for the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    /// Only the variables the job files refer to, so a saved spec carries no one's secrets.
    pub env: BTreeMap<String, String>,
    pub pagesize: u64,
    pub mb_memory: u64,
    pub ncpus: u64,
}

impl Machine {
    /// `context`'s figures, keeping of its environment only what `jobs` refer to.
    pub fn capture(context: &ParseContext, jobs: &[JobSource]) -> Machine {
        let env = jobs
            .iter()
            .flat_map(|source| iosched_workload::fio::env_references(&source.text))
            .filter_map(|name| Some((name.clone(), context.env.get(&name)?.clone())))
            .collect();
        Machine {
            env,
            pagesize: context.pagesize,
            mb_memory: context.mb_memory,
            ncpus: context.ncpus,
        }
    }

    /// Refuses figures no machine has: a spec is edited by hand, and `$ncpus` of 0 would
    /// reach CPU masks and divisions.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_NCPUS).contains(&self.ncpus) {
            return Err(format!(
                "machine.ncpus = {}: must be 1 to {MAX_NCPUS}",
                self.ncpus
            ));
        }
        if !self.pagesize.is_power_of_two() || !(512..=1 << 30).contains(&self.pagesize) {
            return Err(format!(
                "machine.pagesize = {}: must be a power of two from 512 bytes to 1 GiB",
                self.pagesize
            ));
        }
        Ok(())
    }

    /// The parse context, with the clone limit of the machine that runs it (`(available
    /// MiB, clones)`): a limit protects that machine, it is no part of the result.
    pub fn parse_context(&self, clone_limit: (u64, u64)) -> ParseContext {
        ParseContext {
            env: self.env.clone(),
            pagesize: self.pagesize,
            mb_memory: self.mb_memory,
            ncpus: self.ncpus,
            available_mib: clone_limit.0,
            clone_limit: clone_limit.1,
        }
    }
}

/// What the jobs run on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Target {
    /// A simulated device preset by name (`hdd`, `nvme`...).
    Preset(String),
    /// A simulated device described by a TOML model file.
    ModelFile(PathBuf),
    /// A real regular file or block device, driven by the io_uring engine.
    Real(PathBuf),
}

impl Target {
    /// The one place a `--device` argument is read: a name ending in `.toml` is a model file,
    /// one containing `/` a real path, anything else a preset's name.
    pub fn from_device_arg(arg: &str) -> Target {
        if arg.ends_with(".toml") {
            Target::ModelFile(PathBuf::from(arg))
        } else if arg.contains('/') {
            Target::Real(PathBuf::from(arg))
        } else {
            Target::Preset(arg.to_string())
        }
    }

    /// Whether the simulator runs it.
    pub fn is_simulated(&self) -> bool {
        !matches!(self, Target::Real(_))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Preset(name) => write!(f, "{name}"),
            Target::ModelFile(path) | Target::Real(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Trace and decision files a run writes besides its results.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outputs {
    /// blkparse-style text, or the binary format for a name ending in `.blktrace`.
    pub trace: Option<PathBuf>,
    /// One JSON line per scheduler decision.
    pub decisions: Option<PathBuf>,
    /// Most bytes each of those files may take (`--trace-limit`); a file is cut there, with
    /// an error after the results. `None`: [`DEFAULT_TRACE_LIMIT`].
    #[serde(default)]
    pub trace_limit: Option<u64>,
}

/// 4096: the most the simulated machine's `cpus` knob takes (a spec's `ncpus` is what
/// `$ncpus` expands to, so it keeps the same range).
pub const MAX_NCPUS: u64 = 4096;

/// 1 GiB: the default cap on a trace or decision file.
pub const DEFAULT_TRACE_LIMIT: u64 = 1 << 30;

/// Why a spec could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum SpecError {
    /// The file is no regular file, or too large.
    Read(iosched_workload::input::InputError),
    Json(serde_json::Error),
    Version(u32),
    /// A field out of its range: which, and why.
    Invalid(String),
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Read(error) => write!(f, "{}", error.reason()),
            SpecError::Json(error) => write!(f, "not a run description: {error}"),
            SpecError::Invalid(why) => write!(f, "{why}"),
            SpecError::Version(found) => write!(
                f,
                "run description version {found}; this iosched reads version {RUN_SPEC_VERSION}"
            ),
        }
    }
}

impl std::error::Error for SpecError {}

impl RunSpec {
    /// The spec as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a run spec always serialises")
    }

    /// Reads a spec written by [`RunSpec::to_json`].
    pub fn from_json(text: &str) -> Result<RunSpec, SpecError> {
        let spec: RunSpec = serde_json::from_str(text).map_err(SpecError::Json)?;
        if spec.version != RUN_SPEC_VERSION {
            return Err(SpecError::Version(spec.version));
        }
        spec.machine.validate().map_err(SpecError::Invalid)?;
        Ok(spec)
    }

    /// Reads the spec file `path` (`--spec`): a regular file within
    /// [`iosched_workload::input::RUN_SPEC_MAX_BYTES`].
    pub fn load(path: &Path) -> Result<RunSpec, SpecError> {
        use iosched_workload::input::{read_text, InputKind};
        let text = read_text(path, InputKind::RunSpec).map_err(SpecError::Read)?;
        RunSpec::from_json(&text)
    }

    /// Tunables as `(name, value)` pairs, as the schedulers take them.
    pub fn tunable_pairs(&self) -> Vec<(String, String)> {
        pairs(&self.tunables)
    }

    /// Knobs as `(name, value)` pairs.
    pub fn knob_pairs(&self) -> Vec<(String, String)> {
        pairs(&self.knobs)
    }
}

fn pairs(settings: &[Setting]) -> Vec<(String, String)> {
    settings
        .iter()
        .map(|s| (s.name.clone(), s.value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RunSpec {
        let jobs = vec![JobSource {
            origin: "a.fio".into(),
            text: "[a]\nsize=${SIZE}\nrw=read\n".into(),
        }];
        let mut context = ParseContext::fixed(4096, 512, 2);
        context.env.insert("SIZE".into(), "1m".into());
        context.env.insert("SECRET".into(), "hunter2".into());
        RunSpec {
            version: RUN_SPEC_VERSION,
            machine: Machine::capture(&context, &jobs),
            jobs,
            target: Target::from_device_arg("hdd"),
            scheduler: "cfq".into(),
            tunables: vec![Setting::parse("slice_idle=0").unwrap()],
            knobs: vec![Setting::parse("mem=512m").unwrap()],
            seed: 7,
            uptime_s: 1000,
            check: false,
            force: false,
            outputs: Outputs::default(),
        }
    }

    #[test]
    fn json_round_trip_is_lossless_and_keeps_only_referenced_variables() {
        let spec = spec();
        let text = spec.to_json();
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(spec.machine.env.get("SIZE").map(String::as_str), Some("1m"));
        assert_eq!(RunSpec::from_json(&text).unwrap(), spec);
    }

    #[test]
    fn another_version_or_an_unknown_field_is_refused() {
        let mut value: serde_json::Value = serde_json::from_str(&spec().to_json()).unwrap();
        value["version"] = 2.into();
        assert!(matches!(
            RunSpec::from_json(&value.to_string()),
            Err(SpecError::Version(2))
        ));
        value["version"] = 1.into();
        value["sched"] = "noop".into();
        assert!(matches!(
            RunSpec::from_json(&value.to_string()),
            Err(SpecError::Json(_))
        ));
    }

    #[test]
    fn device_arguments_name_presets_model_files_and_real_paths() {
        assert_eq!(
            Target::from_device_arg("nvme"),
            Target::Preset("nvme".into())
        );
        assert_eq!(
            Target::from_device_arg("disks/my.toml"),
            Target::ModelFile("disks/my.toml".into())
        );
        assert_eq!(
            Target::from_device_arg("/dev/loop0"),
            Target::Real("/dev/loop0".into())
        );
        assert_eq!(
            Target::from_device_arg("./scratch.img"),
            Target::Real("./scratch.img".into())
        );
    }

    #[test]
    fn settings_need_a_key() {
        assert_eq!(Setting::parse("=3"), None);
        assert_eq!(Setting::parse("quantum"), None);
        assert_eq!(Setting::parse(" quantum = 4 ").unwrap().value, "4");
    }
}
