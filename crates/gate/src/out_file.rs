//! A file written whole or not at all: created as `FILE.partial` beside its destination
//! (never truncating anything already there) and renamed over `FILE` once written and
//! synced, so a full disk or a failed run leaves no 0-byte or truncated file.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::check::{check, Destination, GateError};

/// Partial names tried beside a destination (`FILE.partial`, `FILE.partial1`...) before
/// giving up: others are another run's, or files of the user's, never truncated.
const PARTIAL_NAMES: u32 = 64;

/// An output being written; [`OutFile::commit`] puts it in place, dropping it removes it.
pub struct OutFile {
    out: BufWriter<File>,
    /// `(partial, destination)` of a file that is renamed into place.
    rename: Option<(PathBuf, PathBuf)>,
    /// The path as given, for messages.
    path: PathBuf,
}

impl OutFile {
    /// Opens `path` for writing through the gate ([`check`]); `force` is the command
    /// line's `--force`.
    pub fn create(path: &Path, force: bool) -> Result<OutFile, GateError> {
        let destination = check(path, force)?;
        OutFile::open(path, destination)
    }

    fn open(path: &Path, destination: Destination) -> Result<OutFile, GateError> {
        let target = match destination {
            Destination::InPlace => {
                let file = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|error| GateError::io(path, error))?;
                return Ok(OutFile {
                    out: BufWriter::new(file),
                    rename: None,
                    path: path.to_path_buf(),
                });
            }
            Destination::New => path.to_path_buf(),
            Destination::Replace(real) => real,
        };
        let (partial, file) = reserve(&target).map_err(|error| GateError::io(path, error))?;
        if let Ok(meta) = fs::metadata(&target) {
            // A replaced file keeps its mode.
            let _ = fs::set_permissions(&partial, meta.permissions());
        }
        Ok(OutFile {
            out: BufWriter::new(file),
            rename: Some((partial, target)),
            path: path.to_path_buf(),
        })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The partial file being written, if the output is renamed into place.
    pub fn partial(&self) -> Option<&Path> {
        self.rename.as_ref().map(|(partial, _)| partial.as_path())
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> Result<(), GateError> {
        let path = self.path.clone();
        let io = |error| GateError::io(&path, error);
        self.out.flush().map_err(io)?;
        if let Some((partial, target)) = self.rename.take() {
            let synced = self.out.get_ref().sync_all();
            let renamed = synced.and_then(|()| fs::rename(&partial, &target));
            if let Err(error) = renamed {
                let _ = fs::remove_file(&partial);
                return Err(io(error));
            }
        }
        Ok(())
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Drop for OutFile {
    /// An output not committed leaves nothing behind.
    fn drop(&mut self) {
        if let Some((partial, _)) = &self.rename {
            let _ = fs::remove_file(partial);
        }
    }
}

/// A new file beside `target` that nothing else holds: `FILE.partial`, or the first free
/// `FILE.partialN`.
fn reserve(target: &Path) -> io::Result<(PathBuf, File)> {
    for n in 0..PARTIAL_NAMES {
        let mut name = OsString::from(target.as_os_str());
        name.push(".partial");
        if n > 0 {
            name.push(n.to_string());
        }
        let partial = PathBuf::from(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
        {
            Ok(file) => return Ok((partial, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{PARTIAL_NAMES} partial files already lie beside it"),
    ))
}

/// Writes `bytes` to `path` whole, through the gate.
pub fn write_file(path: &Path, bytes: &[u8], force: bool) -> Result<(), GateError> {
    let mut out = OutFile::create(path, force)?;
    out.write_all(bytes)
        .map_err(|error| GateError::io(path, error))?;
    out.commit()
}

/// Appends `bytes` to what `path` holds (fio appends its iologs), through the gate: the
/// old contents and the new are written beside it and renamed into place (a FIFO or sink
/// is simply written).
pub fn append_file(path: &Path, bytes: &[u8], force: bool) -> Result<(), GateError> {
    let destination = check(path, force)?;
    let old = match &destination {
        Destination::Replace(real) => Some(real.clone()),
        _ => None,
    };
    let mut out = OutFile::open(path, destination)?;
    let io = |error| GateError::io(path, error);
    if let Some(old) = old {
        io::copy(&mut File::open(old).map_err(io)?, &mut out).map_err(io)?;
    }
    out.write_all(bytes).map_err(io)?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gate-out-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_dropped_file_leaves_nothing_and_the_old_file_stays() {
        let dir = scratch("drop");
        let path = dir.join("out");
        fs::write(&path, "old").unwrap();
        let mut out = OutFile::create(&path, false).unwrap();
        out.write_all(b"new").unwrap();
        drop(out);
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_existing_partial_is_never_truncated() {
        let dir = scratch("partial");
        let path = dir.join("out");
        fs::write(dir.join("out.partial"), "someone's").unwrap();
        write_file(&path, b"result", false).unwrap();
        assert_eq!(
            fs::read_to_string(dir.join("out.partial")).unwrap(),
            "someone's"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "result");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn append_keeps_what_was_there() {
        let dir = scratch("append");
        let path = dir.join("log");
        append_file(&path, b"a\n", false).unwrap();
        append_file(&path, b"b\n", false).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "a\nb\n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlink_stays_a_link_to_the_replaced_file() {
        let dir = scratch("link");
        fs::write(dir.join("real"), "old").unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        write_file(&dir.join("link"), b"new", false).unwrap();
        assert!(fs::symlink_metadata(dir.join("link")).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(dir.join("real")).unwrap(), "new");
        fs::remove_dir_all(&dir).unwrap();
    }
}
