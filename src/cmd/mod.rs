//! The subcommands.

pub mod calibrate;
pub mod compare;
pub mod conformance;
pub mod docs;
pub mod kernel;
pub mod list;
pub mod output;
pub mod plot;
pub mod replay;
pub mod reproduce;
pub mod run;
pub mod stop;
pub mod sweep;

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

/// The job files' texts, read as the fio parser will name them in errors.
pub fn read_jobs(
    paths: &[std::path::PathBuf],
) -> Result<Vec<iosched_workload::fio::JobSource>, Failure> {
    paths
        .iter()
        .map(|path| iosched_workload::fio::JobSource::read(path))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::input)
}

/// Writes `text` to standard output. A reader that went away (`| head`) ends the output
/// quietly, as for any Unix filter; any other failure (`> /dev/full`) is an error, never a
/// panic as in `print!`.
pub fn print_out(text: &str) -> CmdResult {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::run(
            anyhow::anyhow!("writing to standard output: {error}"),
        )),
        _ => Ok(()),
    }
}

/// When to show a progress line with its ETA on stderr (fio's `--eta`). There is no
/// `always`: the bar draws only on a terminal, so off one it would promise what it cannot do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Eta {
    /// On a terminal only.
    Auto,
    Never,
}

impl Eta {
    /// Whether to draw at all.
    pub fn shown(self) -> bool {
        match self {
            Eta::Never => false,
            Eta::Auto => std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }
}
