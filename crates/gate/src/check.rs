//! What writing to a path would do, and whether it may.

use std::fmt;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::holds;

/// Where the bytes for a path go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// Nothing is there yet: a file is created.
    New,
    /// A regular file, at this real path (symbolic links followed, so a link stays a link):
    /// replaced by rename.
    Replace(PathBuf),
    /// A FIFO, socket, terminal or null-like device, or (with `--force`) a device: written in
    /// place, since renaming over it would replace the node with a file.
    InPlace,
}

/// Why a path may not be written, or writing it failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum GateError {
    /// Writing could destroy data; `--force` on the command line lifts it.
    Refused {
        path: PathBuf,
        reason: String,
    },
    /// A path read from a file leaves the current directory, or a name is not one.
    Escapes {
        path: PathBuf,
        why: String,
    },
    Io {
        path: PathBuf,
        source: io::Error,
    },
}

impl GateError {
    pub(crate) fn io(path: &Path, source: io::Error) -> GateError {
        GateError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            GateError::Refused { path, .. }
            | GateError::Escapes { path, .. }
            | GateError::Io { path, .. } => path,
        }
    }

    /// The error without its path, for callers whose messages name the path themselves.
    pub fn into_io(self) -> io::Error {
        match self {
            GateError::Io { source, .. } => source,
            GateError::Refused { reason, .. } => io::Error::other(format!(
                "refusing to write: {reason} (pass --force if you really mean it)"
            )),
            GateError::Escapes { why, .. } => io::Error::other(why),
        }
    }

    /// Bad input (a refused or escaping path), as opposed to a write that failed.
    pub fn is_input(&self) -> bool {
        !matches!(self, GateError::Io { .. })
    }
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateError::Refused { path, reason } => write!(
                f,
                "{}: refusing to write: {reason} (pass --force if you really mean it)",
                path.display()
            ),
            GateError::Escapes { path, why } => write!(f, "{}: {why}", path.display()),
            GateError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for GateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GateError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What writing `path` would do; refused when it could destroy data and `force` (the
/// command line's `--force`, never a value read from a file) is not given.
pub fn check(path: &Path, force: bool) -> Result<Destination, GateError> {
    if path.as_os_str().is_empty() {
        let error = io::Error::new(io::ErrorKind::InvalidInput, "an empty file name");
        return Err(GateError::io(path, error));
    }
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Destination::New),
        Err(error) => return Err(GateError::io(path, error)),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        let error = io::Error::new(io::ErrorKind::IsADirectory, "is a directory");
        return Err(GateError::io(path, error));
    }
    let refusal = if kind.is_file() {
        holds::file_refusal(path)
    } else if kind.is_block_device() {
        Some("it is a block device".to_string())
    } else if kind.is_char_device() && !harmless_char_device(meta.rdev()) {
        let (major, minor) = major_minor(meta.rdev());
        Some(format!("it is a character device ({major}:{minor})"))
    } else {
        None
    };
    if let Some(reason) = refusal.filter(|_| !force) {
        return Err(GateError::Refused {
            path: path.to_path_buf(),
            reason,
        });
    }
    if kind.is_file() {
        let real = fs::canonicalize(path).map_err(|error| GateError::io(path, error))?;
        return Ok(Destination::Replace(real));
    }
    Ok(Destination::InPlace)
}

/// `/dev/null`, `/dev/zero`, `/dev/full` (major 1, minors 3, 5, 7), terminals (majors 4
/// and 5) and pseudo-terminals (136 to 143): what a user names as a sink or as standard
/// output. Other character devices (`/dev/sg0`, `/dev/mem`) do things when written.
fn harmless_char_device(rdev: u64) -> bool {
    match major_minor(rdev) {
        (1, minor) => [3, 5, 7].contains(&minor),
        (major, _) => matches!(major, 4 | 5 | 136..=143),
    }
}

/// glibc's `major()` and `minor()`.
fn major_minor(rdev: u64) -> (u64, u64) {
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gate-check-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_file_carrying_ext4_is_refused_unless_forced() {
        let dir = scratch("ext4");
        let image = dir.join("image");
        let mut bytes = vec![0u8; 4096];
        bytes[1080..1082].copy_from_slice(&[0x53, 0xEF]);
        fs::write(&image, &bytes).unwrap();
        let refused = check(&image, false).unwrap_err();
        assert!(refused.to_string().contains("ext2/3/4"), "{refused}");
        assert!(matches!(check(&image, true), Ok(Destination::Replace(_))));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn new_plain_and_null_destinations_pass() {
        let dir = scratch("plain");
        assert_eq!(check(&dir.join("new"), false).unwrap(), Destination::New);
        fs::write(dir.join("old"), "text").unwrap();
        assert!(matches!(
            check(&dir.join("old"), false),
            Ok(Destination::Replace(_))
        ));
        assert_eq!(
            check(Path::new("/dev/null"), false).unwrap(),
            Destination::InPlace
        );
        assert!(check(&dir, false).is_err(), "a directory");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn major_minor_reads_glibc_encoding() {
        // /dev/null is 1:3 everywhere.
        let rdev = fs::metadata("/dev/null").unwrap().rdev();
        assert_eq!(major_minor(rdev), (1, 3));
    }
}
