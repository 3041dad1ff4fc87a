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
    /// `--output`'s path; `None` for standard output.
    path: Option<PathBuf>,
}

impl Destination {
    /// Standard output, or a partial file beside `path`.
    pub(crate) fn open(path: Option<&Path>) -> Result<Destination, Failure> {
        let Some(path) = path else {
            return Ok(Destination {
                out: Box::new(BufWriter::new(io::stdout().lock())),
                rename: None,
                path: None,
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
                path: Some(path.to_path_buf()),
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
            path: Some(path.to_path_buf()),
        })
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

    fn write_with(mut self, body: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> CmdResult {
        let out = self.out.as_mut();
        let written = body(&mut *out).and_then(|()| out.flush());
        match (written, &self.path) {
            (Ok(()), _) => {}
            // A reader that went away (`| head`) ends the output quietly, as `print_out` does.
            (Err(error), None) if error.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            (Err(error), None) => {
                return Err(Failure::run(anyhow!(
                    "writing results to standard output: {error}"
                )))
            }
            // A renamed file's partial copy goes on drop: nothing truncated is left.
            (Err(error), Some(path)) => {
                return Err(Failure::run(anyhow!(
                    "--output {}: {error}",
                    path.display()
                )))
            }
        }
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
