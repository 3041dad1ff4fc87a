//! Where results go: standard output, or `--output FILE` through the output gate
//! ([`iosched_gate`]): written whole or not at all. The file is created (as `FILE.partial`
//! beside it) before the run, so a bad or refused path fails before any work, and renamed
//! over `FILE` only once everything is written. A FIFO or `/dev/null` is written in place;
//! a block device or a file holding a file system is refused without `--force`.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::ValueEnum;
use iosched_driver::stats::RunResult;
use iosched_gate::OutFile;
use iosched_report::output::Formats;

use super::{CmdResult, Failure};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Normal,
    Json,
    Terse,
}

/// An open destination for results.
pub(crate) struct Destination {
    out: Out,
}

enum Out {
    Stdout(BufWriter<io::StdoutLock<'static>>),
    File(OutFile),
}

impl Destination {
    /// Standard output, or `path` through the gate (`force`: the command line's `--force`).
    pub(crate) fn open(path: Option<&Path>, force: bool) -> Result<Destination, Failure> {
        let out = match path {
            None => Out::Stdout(BufWriter::new(io::stdout().lock())),
            Some(path) => Out::File(
                OutFile::create(path, force)
                    .map_err(|e| Failure::input(anyhow!("--output {e}")))?,
            ),
        };
        Ok(Destination { out })
    }

    /// Writes `run` in `format` (`appendix` follows the normal output's disk stats) and, for
    /// a file, puts it in place.
    pub(crate) fn write(self, run: &RunResult, formats: Formats, appendix: &str) -> CmdResult {
        self.write_with(|mut out| formats.write(run, appendix, &mut out))
    }

    /// Writes `text` (a report made elsewhere: fio's, in `iosched kernel`) and, for a file,
    /// puts it in place.
    pub(crate) fn write_text(self, text: &str) -> CmdResult {
        self.write_with(|out| out.write_all(text.as_bytes()))
    }

    fn write_with(self, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> CmdResult {
        match self.out {
            Out::Stdout(mut out) => match body(&mut out).and_then(|()| out.flush()) {
                Ok(()) => Ok(()),
                // A reader that went away (`| head`) ends the output quietly, as `print_out`
                // does.
                Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                Err(error) => Err(Failure::run(anyhow!(
                    "writing results to standard output: {error}"
                ))),
            },
            Out::File(mut out) => {
                // A file not committed goes on drop: nothing truncated is left.
                let path: PathBuf = out.path().to_path_buf();
                body(&mut out)
                    .map_err(|e| Failure::run(anyhow!("--output {}: {e}", path.display())))?;
                out.commit()
                    .map_err(|e| Failure::run(anyhow!("--output {e}")))
            }
        }
    }
}

/// `--save-spec FILE`: written beside `FILE` before the run, put in place by
/// [`SavedSpec::keep`] once the run has got past its checks, so a run refused by write
/// safety (or any bad input) leaves no spec behind.
pub(crate) struct SavedSpec(Option<OutFile>);

impl SavedSpec {
    pub(crate) fn write(
        path: Option<&Path>,
        spec: &iosched_driver::spec::RunSpec,
        force: bool,
    ) -> Result<SavedSpec, Failure> {
        let Some(path) = path else {
            return Ok(SavedSpec(None));
        };
        let flag = |e: &dyn std::fmt::Display| anyhow!("--save-spec {e}");
        let mut out = OutFile::create(path, force).map_err(|e| Failure::input(flag(&e)))?;
        out.write_all((spec.to_json() + "\n").as_bytes())
            .map_err(|e| Failure::run(flag(&format!("{}: {e}", path.display()))))?;
        Ok(SavedSpec(Some(out)))
    }

    /// Puts the spec in place.
    pub(crate) fn keep(self) -> CmdResult {
        match self.0 {
            Some(out) => out
                .commit()
                .map_err(|e| Failure::run(anyhow!("--save-spec {e}"))),
            None => Ok(()),
        }
    }
}
