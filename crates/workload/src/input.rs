//! One way to read every file iosched reads: job files and their includes, saved run specs,
//! sweep specs, fio JSON results, replay captures (blktrace, iolog), scenarios, device
//! models and reference traces.
//!
//! Each kind of file has a size limit, [`InputKind::limit`], set well above any real file of
//! that kind, so a wrong path (`/dev/zero`, a 50 GB disk image) ends in one clear error
//! instead of filling memory. Only regular files are read: a character device never ends, a
//! FIFO without a writer blocks forever, and a directory is no file at all; each is refused
//! for what it is. Every error names the file, and a size error names the limit.
//!
//! The size is bounded while reading (at most the limit plus one byte is read), not only from
//! the file's metadata, so a file that grows as it is read is still stopped.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a file is read as; sets its limit and names it in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputKind {
    /// A fio job file or a file it includes.
    JobFile,
    /// A saved run description (`--save-spec`, read by `--spec`).
    RunSpec,
    /// A sweep description (`iosched sweep SPEC.toml`).
    SweepSpec,
    /// fio JSON results (`plot`, `compare`).
    Results,
    /// A replay capture: one file of a blktrace capture, or a fio iolog.
    Capture,
    /// A scenario (`reproduce`, conformance).
    Scenario,
    /// A simulated device's model (`--device MODEL.toml`).
    DeviceModel,
    /// A reference decision trace (conformance's expected output).
    Reference,
}

/// 4 MiB: fio's own example job files are under 4 KiB; a generated file with thousands of
/// sections still fits.
pub const JOB_FILE_MAX_BYTES: u64 = 4 << 20;
/// 64 MiB: a spec carries its job files' text, so sixteen job files at their limit, with
/// JSON's escaping, fit.
pub const RUN_SPEC_MAX_BYTES: u64 = 64 << 20;
/// 1 MiB: a sweep spec is written by hand and names its job files rather than holding them.
pub const SWEEP_SPEC_MAX_BYTES: u64 = 1 << 20;
/// 256 MiB: fio's JSON is about 5 KiB a job with percentiles, so 20,000 jobs take ~100 MiB;
/// the parsed tree takes several times the text.
pub const RESULTS_MAX_BYTES: u64 = 256 << 20;
/// 1 GiB: a blktrace CPU file of ~20 million 48-byte records (minutes of a busy disk), or an
/// iolog of ~30 million lines; decoding keeps every I/O in memory.
pub const CAPTURE_MAX_BYTES: u64 = 1 << 30;
/// 1 MiB: scenarios are hand-written TOML naming their job files.
pub const SCENARIO_MAX_BYTES: u64 = 1 << 20;
/// 4 MiB: a model with measured tables (seek curves, zone maps) of thousands of rows.
pub const DEVICE_MODEL_MAX_BYTES: u64 = 4 << 20;
/// 256 MiB: a kernel decision trace of a long scenario, before or after decompression.
pub const REFERENCE_MAX_BYTES: u64 = 256 << 20;

impl InputKind {
    /// The largest file of this kind that is read (see each constant for its reason).
    pub const fn limit(self) -> u64 {
        match self {
            InputKind::JobFile => JOB_FILE_MAX_BYTES,
            InputKind::RunSpec => RUN_SPEC_MAX_BYTES,
            InputKind::SweepSpec => SWEEP_SPEC_MAX_BYTES,
            InputKind::Results => RESULTS_MAX_BYTES,
            InputKind::Capture => CAPTURE_MAX_BYTES,
            InputKind::Scenario => SCENARIO_MAX_BYTES,
            InputKind::DeviceModel => DEVICE_MODEL_MAX_BYTES,
            InputKind::Reference => REFERENCE_MAX_BYTES,
        }
    }

    /// The kind as errors name it: "not a job file".
    pub const fn noun(self) -> &'static str {
        match self {
            InputKind::JobFile => "job file",
            InputKind::RunSpec => "run spec",
            InputKind::SweepSpec => "sweep spec",
            InputKind::Results => "results file",
            InputKind::Capture => "capture",
            InputKind::Scenario => "scenario",
            InputKind::DeviceModel => "device model",
            InputKind::Reference => "reference trace",
        }
    }
}

/// Why a file was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputErrorKind {
    /// Opening or reading failed (missing, no permission...).
    Io(String),
    /// Not a regular file: what it is instead ("a character device").
    NotRegular(&'static str),
    /// Larger than the kind's limit (bytes).
    TooLarge(u64),
    /// Text expected, other bytes found.
    NotText,
}

/// A file that was not read: which, read as what, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub path: PathBuf,
    pub kind: InputKind,
    pub why: InputErrorKind,
}

impl InputError {
    /// What is wrong, without the path (for errors that put the path elsewhere).
    pub fn reason(&self) -> String {
        let noun = self.kind.noun();
        match &self.why {
            InputErrorKind::Io(why) => why.clone(),
            InputErrorKind::NotRegular(what) => {
                format!("{what}, not a regular file: not read as a {noun}")
            }
            InputErrorKind::TooLarge(limit) => format!(
                "larger than {}, the limit for a {noun}",
                human_bytes(*limit)
            ),
            InputErrorKind::NotText => format!("not UTF-8 text, not a {noun}"),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason())
    }
}

impl std::error::Error for InputError {}

/// `4 MiB`, `1 GiB`: the limits are whole powers of two.
fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// What a file that is not regular is, for the error.
fn file_type_name(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Refuses `path` unless it is a regular file (symbolic links followed); checked before
/// opening, since opening a FIFO without a writer blocks.
pub fn check_regular(path: &Path, kind: InputKind) -> Result<std::fs::Metadata, InputError> {
    let error = |why| InputError {
        path: path.to_path_buf(),
        kind,
        why,
    };
    let meta = std::fs::metadata(path).map_err(|e| error(InputErrorKind::Io(e.to_string())))?;
    if !meta.is_file() {
        return Err(error(InputErrorKind::NotRegular(file_type_name(&meta))));
    }
    Ok(meta)
}

/// Reads `path` whole, as `kind`: a regular file of at most `kind.limit()` bytes.
pub fn read_bytes(path: &Path, kind: InputKind) -> Result<Vec<u8>, InputError> {
    let error = |why| InputError {
        path: path.to_path_buf(),
        kind,
        why,
    };
    let meta = check_regular(path, kind)?;
    let limit = kind.limit();
    if meta.len() > limit {
        return Err(error(InputErrorKind::TooLarge(limit)));
    }
    let file = std::fs::File::open(path).map_err(|e| error(InputErrorKind::Io(e.to_string())))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(InputErrorKind::Io(e.to_string())))?;
    if bytes.len() as u64 > limit {
        return Err(error(InputErrorKind::TooLarge(limit)));
    }
    Ok(bytes)
}

/// [`read_bytes`] for text: the bytes must be UTF-8.
pub fn read_text(path: &Path, kind: InputKind) -> Result<String, InputError> {
    let bytes = read_bytes(path, kind)?;
    String::from_utf8(bytes).map_err(|_| InputError {
        path: path.to_path_buf(),
        kind,
        why: InputErrorKind::NotText,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in a folder of its own, removed with the folder when dropped (tests run in
    /// parallel, so each gets its own folder).
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    fn scratch(name: &str, bytes: &[u8]) -> Scratch {
        let dir = std::env::temp_dir().join(format!("iosched-input-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        Scratch(path)
    }

    #[test]
    fn dev_zero_is_refused_as_a_character_device() {
        let e = read_bytes(Path::new("/dev/zero"), InputKind::Results).unwrap_err();
        assert_eq!(e.why, InputErrorKind::NotRegular("a character device"));
        assert_eq!(
            e.to_string(),
            "/dev/zero: a character device, not a regular file: not read as a results file"
        );
    }

    #[test]
    fn a_directory_is_refused_as_one() {
        let e = read_text(Path::new("/"), InputKind::SweepSpec).unwrap_err();
        assert_eq!(e.why, InputErrorKind::NotRegular("a directory"));
    }

    #[test]
    fn a_file_over_the_limit_names_the_limit() {
        let big = scratch("big.toml", &vec![b'#'; (SWEEP_SPEC_MAX_BYTES + 1) as usize]);
        let e = read_text(&big.0, InputKind::SweepSpec).unwrap_err();
        assert_eq!(e.why, InputErrorKind::TooLarge(SWEEP_SPEC_MAX_BYTES));
        assert!(e
            .to_string()
            .ends_with("larger than 1 MiB, the limit for a sweep spec"));
        // At the limit exactly, it is read.
        let edge = scratch("edge.toml", &vec![b'#'; SWEEP_SPEC_MAX_BYTES as usize]);
        assert_eq!(
            read_text(&edge.0, InputKind::SweepSpec).unwrap().len(),
            1 << 20
        );
    }

    #[test]
    fn text_must_be_utf8_but_bytes_need_not_be() {
        let bin = scratch("bin.json", &[0xff, 0xfe, 0]);
        assert_eq!(
            read_text(&bin.0, InputKind::Results).unwrap_err().why,
            InputErrorKind::NotText
        );
        assert_eq!(read_bytes(&bin.0, InputKind::Capture).unwrap().len(), 3);
    }

    #[test]
    fn a_missing_file_says_so() {
        let e = read_bytes(Path::new("/nonexistent/x.fio"), InputKind::JobFile).unwrap_err();
        assert!(matches!(e.why, InputErrorKind::Io(_)), "{e}");
        assert!(e.to_string().starts_with("/nonexistent/x.fio: "), "{e}");
    }
}
