//! Where results go: standard output, or `--output FILE` written whole or not at all. The file
//! is created (as `FILE.partial` beside it) before the run, so a bad path fails before any
//! work, and renamed over `FILE` only once everything is written. A path that exists and is
//! not a regular file (`/dev/null`, a FIFO) is written in place: renaming over it would
//! replace the device node with a file (as root, `-o /dev/null` once did).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::ValueEnum;
use iosched_driver::stats::RunResult;
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
    out: Box<dyn Write>,
    /// `(partial, final)` paths of a file destination.
    rename: Option<(PathBuf, PathBuf)>,
}

impl Destination {
    /// Standard output, or a partial file beside `path`.
    pub(crate) fn open(path: Option<&Path>) -> Result<Destination, Failure> {
        let Some(path) = path else {
            return Ok(Destination {
                out: Box::new(BufWriter::new(io::stdout().lock())),
                rename: None,
            });
        };
        if std::fs::metadata(path).is_ok_and(|meta| !meta.is_file()) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("--output {}", path.display()))
                .map_err(Failure::input)?;
            return Ok(Destination {
                out: Box::new(BufWriter::new(file)),
                rename: None,
            });
        }
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file = File::create(&partial)
            .with_context(|| format!("--output {}", path.display()))
            .map_err(Failure::input)?;
        Ok(Destination {
            out: Box::new(BufWriter::new(file)),
            rename: Some((partial, path.to_path_buf())),
        })
    }

    /// Writes `run` in `format` (`appendix` follows the normal output's disk stats) and, for
    /// a file, puts it in place.
    pub(crate) fn write(mut self, run: &RunResult, formats: Formats, appendix: &str) -> CmdResult {
        let out = &mut self.out;
        formats
            .write(run, appendix, out)
            .and_then(|()| out.flush())
            .context("writing results")
            .map_err(Failure::run)?;
        if let Some((partial, path)) = self.rename.take() {
            std::fs::rename(&partial, &path)
                .map_err(|e| Failure::run(anyhow!("--output {}: {e}", path.display())))?;
        }
        Ok(())
    }
}

impl Drop for Destination {
    /// A run that failed leaves no partial file behind.
    fn drop(&mut self) {
        if let Some((partial, _)) = &self.rename {
            let _ = std::fs::remove_file(partial);
        }
    }
}
