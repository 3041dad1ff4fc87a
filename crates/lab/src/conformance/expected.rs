//! The kernel's recorded decisions: `expected/NAME.out.xz` (or an uncompressed `NAME.out`),
//! of which the runner reads the `D` lines, and the comparison with iosched's.

use std::fmt;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use iosched_workload::input::{self, InputKind};

use super::harness::DispatchRecord;

/// Why the expected output of a scenario could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExpectedErrorKind {
    Missing,
    Io(String),
    Xz(String),
    /// A malformed `D` line (1-based line number).
    BadLine(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedError {
    pub path: PathBuf,
    pub kind: ExpectedErrorKind,
}

impl fmt::Display for ExpectedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path.display();
        match &self.kind {
            ExpectedErrorKind::Missing => write!(f, "{p}: no expected output (.out.xz or .out)"),
            ExpectedErrorKind::Io(e) => write!(f, "{p}: {e}"),
            ExpectedErrorKind::Xz(e) => write!(f, "{p}: xz: {e}"),
            ExpectedErrorKind::BadLine(n) => write!(f, "{p}:{n}: malformed D line"),
        }
    }
}

impl std::error::Error for ExpectedError {}

/// Reads the `D` lines of scenario `name`'s expected output in `dir`.
pub fn read_expected(dir: &Path, name: &str) -> Result<Vec<DispatchRecord>, ExpectedError> {
    let xz = dir.join(format!("{name}.out.xz"));
    let plain = dir.join(format!("{name}.out"));
    let err = |path: &Path, kind| ExpectedError {
        path: path.to_path_buf(),
        kind,
    };
    let read = |path: &Path| {
        input::read_bytes(path, InputKind::Reference)
            .map_err(|e| err(path, ExpectedErrorKind::Io(e.reason())))
    };
    let (path, bytes) = if xz.is_file() {
        let packed = read(&xz)?;
        // The unpacked text has the same limit as a plain file: an xz bomb stops there.
        let mut out = Capped(Vec::new());
        lzma_rs::xz_decompress(&mut BufReader::new(packed.as_slice()), &mut out)
            .map_err(|e| err(&xz, ExpectedErrorKind::Xz(e.to_string())))?;
        (xz, out.0)
    } else if plain.is_file() {
        let out = read(&plain)?;
        (plain, out)
    } else {
        return Err(err(&xz, ExpectedErrorKind::Missing));
    };
    dispatch_lines(&bytes).map_err(|line| err(&path, ExpectedErrorKind::BadLine(line)))
}

/// A buffer that refuses to grow past [`InputKind::Reference`]'s limit.
struct Capped(Vec<u8>);

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if (self.0.len() + buf.len()) as u64 > InputKind::Reference.limit() {
            return Err(std::io::Error::other(format!(
                "unpacks to more than {} MiB",
                InputKind::Reference.limit() >> 20
            )));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The `D T ID PID` lines of an output, in order; `Err(line)` names a malformed one.
pub fn dispatch_lines(bytes: &[u8]) -> Result<Vec<DispatchRecord>, usize> {
    let mut out = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let Some(rest) = line.strip_prefix(b"D ") else {
            continue;
        };
        let text = std::str::from_utf8(rest).map_err(|_| i + 1)?;
        let mut f = text.split_ascii_whitespace().map(str::parse::<u64>);
        match (f.next(), f.next(), f.next()) {
            (Some(Ok(t)), Some(Ok(id)), Some(Ok(pid))) => {
                out.push((t, id, u32::try_from(pid).map_err(|_| i + 1)?));
            }
            _ => return Err(i + 1),
        }
    }
    Ok(out)
}

/// Where two dispatch sequences first part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// 0-based index in the dispatch sequence.
    pub index: usize,
    /// The earlier of the two sides' times at that index.
    pub time_ns: u64,
    /// The kernel's dispatch there (`None`: it had already stopped).
    pub kernel: Option<DispatchRecord>,
    pub iosched: Option<DispatchRecord>,
}

/// The first index where the sequences differ, if any (a shorter sequence differs where
/// it ends).
pub fn first_divergence(
    kernel: &[DispatchRecord],
    iosched: &[DispatchRecord],
) -> Option<Divergence> {
    let n = kernel.len().min(iosched.len());
    let index = (0..n)
        .find(|&i| kernel[i] != iosched[i])
        .or((kernel.len() != iosched.len()).then_some(n))?;
    let (k, r) = (kernel.get(index).copied(), iosched.get(index).copied());
    let time_ns = match (k, r) {
        (Some(a), Some(b)) => a.0.min(b.0),
        (Some(a), None) | (None, Some(a)) => a.0,
        (None, None) => unreachable!("sequences of equal length differ somewhere"),
    };
    Some(Divergence {
        index,
        time_ns,
        kernel: k,
        iosched: r,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_dispatch_lines() {
        let text = b"Q 5 1 100 R 0 8\nD 5 1 100\nC 9 1 100\nD 9 2 101\nT 100 1 4096 4\n";
        assert_eq!(
            dispatch_lines(text).unwrap(),
            vec![(5, 1, 100), (9, 2, 101)]
        );
        assert_eq!(dispatch_lines(b"D 5 x 100\n"), Err(1));
    }

    #[test]
    fn divergence_at_first_difference_or_end() {
        let k = [(1, 1, 10), (2, 2, 11), (3, 3, 10)];
        assert_eq!(first_divergence(&k, &k), None);
        let r = [(1, 1, 10), (2, 3, 10)];
        let d = first_divergence(&k, &r).unwrap();
        assert_eq!((d.index, d.time_ns), (1, 2));
        assert_eq!((d.kernel, d.iosched), (Some((2, 2, 11)), Some((2, 3, 10))));
        let d = first_divergence(&k, &k[..2]).unwrap();
        assert_eq!((d.index, d.kernel, d.iosched), (2, Some((3, 3, 10)), None));
    }
}
