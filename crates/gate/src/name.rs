//! Names are names: a path read from a file stays below the current directory, and a name
//! that becomes part of a path (a tunable, a job's log prefix, a cgroup component) is one
//! path component.

use std::path::{Component, Path};

use crate::check::GateError;

/// A path read from a file (a job file's `write_iolog`, a spec's `outputs.trace`) may not
/// be absolute nor climb out with `..`: whoever wrote the file did not type it on this
/// command line. `force` is the command line's `--force`.
pub fn confined(path: &Path, force: bool) -> Result<(), GateError> {
    let why = if path.as_os_str().as_encoded_bytes().contains(&0) {
        "a file name may not contain a NUL byte"
    } else if force {
        return Ok(());
    } else if path.is_absolute() {
        "an absolute path read from a file is refused: such a file may name only files below the current directory (pass --force if you really mean it)"
    } else if path.components().any(|c| c == Component::ParentDir) {
        "a path read from a file may not climb out of the current directory with '..' (pass --force if you really mean it)"
    } else {
        return Ok(());
    };
    Err(GateError::Escapes {
        path: path.to_path_buf(),
        why: why.to_string(),
    })
}

/// `name` (what it names: "tunable", "job name"...) is a single path component: not
/// empty, not `.` or `..`, no `/`, no NUL.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        "is empty"
    } else if name == "." || name == ".." {
        "is not a name"
    } else if name.contains('/') {
        "may not contain '/'"
    } else if name.contains('\0') {
        "may not contain a NUL byte"
    } else {
        return Ok(());
    };
    Err(format!("{what} '{}' {why}", name.escape_debug()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_from_files_stay_below_the_current_directory() {
        assert!(confined(Path::new("logs/a.log"), false).is_ok());
        assert!(confined(Path::new("a..b.log"), false).is_ok());
        assert!(confined(Path::new("../../etc/passwd"), false).is_err());
        assert!(confined(Path::new("logs/../../x"), false).is_err());
        assert!(confined(Path::new("/dev/loop0"), false).is_err());
        assert!(confined(Path::new("/tmp/x"), true).is_ok());
    }

    #[test]
    fn names_are_single_components() {
        assert!(check_name("tunable", "fifo_batch").is_ok());
        for bad in ["", ".", "..", "../x", "a/b", "a\0b"] {
            assert!(check_name("tunable", bad).is_err(), "{bad:?}");
        }
    }
}
