//! Parse errors: where (`path:line`) and what, printed the way compilers print them.
//!
//! Every failure of the job-file parser is a [`ParseError`]; nothing panics on bad input.
//! Line numbers are 1-based; line 0 means "the file as a whole" (unreadable file, no jobs)
//! and is left out of the message.

use std::fmt;

/// A job-file error at `path:line`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub path: String,
    /// 1-based; 0 when the error concerns the whole file.
    pub line: usize,
    pub kind: ParseErrorKind,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The job file itself could not be read (the OS error text).
    Io(String),
    /// `include FILE` named a file that could not be read.
    Include { file: String, why: String },
    /// Includes nested deeper than [`MAX_INCLUDE_DEPTH`](super::lines::MAX_INCLUDE_DEPTH)
    /// (almost certainly a cycle).
    IncludeTooDeep(String),
    /// A `[section]` header inside an included file (fio forbids it).
    SectionInInclude(String),
    /// A malformed `[section]` header.
    BadSection(String),
    /// An option line before the first `[section]`.
    OutsideSection(String),
    /// No option (or alias) of that name.
    UnknownOption(String),
    /// An option of fio's engines that iosched does not drive (`cpuload` of `cpuio`):
    /// fio takes it only after `ioengine=` names such an engine.
    EngineOption { option: String, engines: String },
    /// A non-"set" option written bare (`direct` alone).
    MissingValue(String),
    /// A NUL byte: a binary file given as a job file.
    Binary,
    /// The value of `option` cannot be parsed or is out of range.
    BadValue {
        option: String,
        value: String,
        why: String,
    },
    /// Options that are fine alone but not together (reported at the job's section line).
    Invalid { option: String, why: String },
    /// The job files define no job at all.
    NoJobs,
    /// More lines than [`MAX_TOTAL_LINES`](super::lines::MAX_TOTAL_LINES) read with includes
    /// spliced in (an include bomb).
    TooManyLines(usize),
    /// More job clones than the machine's memory can hold.
    TooManyClones {
        clones: u64,
        limit: u64,
        available_mib: u64,
    },
}

impl ParseError {
    pub(crate) fn new(path: &str, line: usize, kind: ParseErrorKind) -> ParseError {
        ParseError {
            path: path.to_string(),
            line,
            kind,
        }
    }
}

/// Text from the job file as an error shows it: control characters escaped and a long line
/// cut, so a binary file given by mistake makes one readable line.
fn shown(text: &str) -> String {
    const MAX: usize = 60;
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Io(why) => write!(f, "cannot read: {why}"),
            ParseErrorKind::Include { file, why } => write!(f, "cannot include '{file}': {why}"),
            ParseErrorKind::IncludeTooDeep(file) => {
                write!(f, "include '{file}' nested too deeply (an include cycle?)")
            }
            ParseErrorKind::SectionInInclude(header) => {
                write!(
                    f,
                    "section header '{header}' is not allowed in an included file"
                )
            }
            ParseErrorKind::BadSection(header) => {
                write!(f, "malformed section header '{}'", shown(header))
            }
            ParseErrorKind::Binary => write!(f, "not a fio job file (binary data)"),
            ParseErrorKind::OutsideSection(line) => {
                write!(f, "option '{}' outside of a [job] section", shown(line))
            }
            ParseErrorKind::UnknownOption(name) => write!(f, "unknown option '{}'", shown(name)),
            ParseErrorKind::EngineOption { option, engines } => write!(
                f,
                "option '{option}' of engine {engines}, which iosched does not drive (it drives \
                 {})",
                super::options::ENGINES
                    .iter()
                    .filter(|engine| **engine != "null") // accepted, then refused
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ParseErrorKind::MissingValue(name) => {
                write!(f, "option '{name}' requires a value (write '{name}=...')")
            }
            ParseErrorKind::BadValue { option, value, why } => {
                write!(f, "bad value '{value}' for option '{option}': {why}")
            }
            ParseErrorKind::Invalid { option, why } => write!(f, "option '{option}': {why}"),
            ParseErrorKind::NoJobs => write!(f, "no jobs defined"),
            ParseErrorKind::TooManyLines(limit) => write!(
                f,
                "more than {limit} lines with includes spliced in (an include loop or bomb?)"
            ),
            ParseErrorKind::TooManyClones {
                clones,
                limit,
                available_mib,
            } => write!(
                f,
                "numjobs: {clones} job clones in all need about {} MiB, more than the \
                 {available_mib} MiB of memory available (at most {limit} clones)",
                clones.saturating_mul(super::CLONE_BYTES_ESTIMATE) >> 20
            ),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path, self.kind)
        } else {
            write!(f, "{}:{}: {}", self.path, self.line, self.kind)
        }
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_omits_line_zero() {
        let e = ParseError::new("a.fio", 0, ParseErrorKind::NoJobs);
        assert_eq!(e.to_string(), "a.fio: no jobs defined");
        let e = ParseError::new("a.fio", 12, ParseErrorKind::UnknownOption("bogus".into()));
        assert_eq!(e.to_string(), "a.fio:12: unknown option 'bogus'");
    }
}
