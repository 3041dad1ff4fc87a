//! Why a run could not start or did not finish, and whether that was the input's fault (exit
//! status 2) or the run's (1).

use std::fmt;
use std::io;
use std::path::PathBuf;

use iosched_engine::EngineError;
use iosched_sim::device::file::DeviceFileError;
use iosched_sim::SimError;
use iosched_workload::fio::ParseError;

#[derive(Debug)]
pub enum RunError {
    /// A job file.
    Parse(ParseError),
    /// `--device` names no preset.
    UnknownPreset {
        name: String,
        known: Vec<String>,
    },
    /// A device model file.
    DeviceFile(DeviceFileError),
    /// A `--set` knob the backend has no use for, or refuses.
    Knob(String),
    /// `--uptime` too large to count in nanoseconds.
    Uptime(u64),
    /// The simulation could not be set up (scheduler, tunables, layout).
    SimSetup(SimError),
    /// The simulation did not finish.
    Sim(SimError),
    Engine(EngineError),
    /// An output file could not be created.
    Open {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The trace or decision file would outgrow `--trace-limit`.
    TraceTooLarge {
        flag: &'static str,
        path: PathBuf,
        estimate: u64,
        limit: u64,
    },
    /// An output path refused by the gate, or an output that could not be written whole
    /// (`what`: the flag or option that named it).
    Gate {
        what: String,
        error: iosched_gate::GateError,
    },
    /// An output could not be written.
    Write {
        what: String,
        source: io::Error,
    },
}

impl RunError {
    /// Bad input (a flag, a job file, a device name, a path) rather than a failed run.
    pub fn is_input(&self) -> bool {
        match self {
            RunError::Sim(_) | RunError::Write { .. } => false,
            RunError::Engine(error) => !matches!(error, EngineError::Io { .. }),
            RunError::Gate { error, .. } => error.is_input(),
            _ => true,
        }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Parse(error) => write!(f, "{error}"),
            RunError::UnknownPreset { name, known } => write!(
                f,
                "--device '{name}': no such device preset (known: {}; a model file ends in \
                 .toml, a real file or device is a path)",
                known.join(", ")
            ),
            RunError::DeviceFile(error) => write!(f, "--device: {error}"),
            RunError::Knob(message) => write!(f, "--set {message}"),
            RunError::Uptime(seconds) => write!(f, "--uptime {seconds}: too large"),
            RunError::SimSetup(error) | RunError::Sim(error) => write!(f, "{error}"),
            RunError::Engine(error) => write!(f, "{error}"),
            RunError::Open { what, path, source } => {
                write!(f, "{what} {}: {source}", path.display())
            }
            RunError::Write { what, source } => write!(f, "writing {what}: {source}"),
            RunError::Gate { what, error } => write!(f, "{what} {error}"),
            RunError::TraceTooLarge {
                flag,
                path,
                estimate,
                limit,
            } => write!(
                f,
                "{flag} {}: the run would write at least {estimate} bytes, over --trace-limit \
                 ({limit} bytes); raise --trace-limit, or shorten the run",
                path.display()
            ),
        }
    }
}

/// Each message includes its cause's, so no cause is chained (`{:#}` would repeat it).
impl std::error::Error for RunError {}
