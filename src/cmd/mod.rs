//! The subcommands.

pub mod calibrate;
pub mod compare;
pub mod conformance;
pub mod kernel;
pub mod list;
pub mod output;
pub mod plot;
pub mod replay;
pub mod reproduce;
pub mod run;

/// An error with the exit status it deserves: 2 for bad input or usage, 1 for a run that
/// failed.
pub struct Failure {
    pub error: anyhow::Error,
    pub code: u8,
}

impl Failure {
    /// Bad input: a flag, a job file, a device name.
    pub fn input(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            error: error.into(),
            code: 2,
        }
    }

    /// The run itself failed.
    pub fn run(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            error: error.into(),
            code: 1,
        }
    }
}

pub type CmdResult = Result<(), Failure>;
