//! The line layer: comments, blanks, section headers and `include`, each line with its origin.
//!
//! Mirrors fio's ini reader (`__parse_jobs_ini()`, `strip_blank_front()`,
//! `strip_blank_end()`, `is_empty_or_comment()`):
//!
//! * a line is cut at the first `;` and then at the first `#`, wherever they are — values
//!   cannot contain them (`numjobs=4 ; 4 threads` is `numjobs=4`);
//! * leading and trailing blanks (and control characters such as `\r`) are dropped;
//!   what is left empty is skipped;
//! * `[name]` starts a section; before the first section any other line is an error;
//! * `include FILE` splices FILE's lines in place (it may name a path relative to the
//!   including file's directory when it does not exist as given); included files may
//!   include further files but may not contain section headers.
//!
//! Everything read is bounded, so a hostile job file cannot exhaust the machine: each file
//! (job file or include) at most [`MAX_FILE_BYTES`], includes only from regular files (not
//! `/dev/zero`, `/dev/urandom` or a FIFO), and at most [`MAX_TOTAL_LINES`] lines read in all,
//! includes counted each time they are spliced (an include bomb under the depth limit).
//!
//! Options stay as raw `key=value` text here: `${VAR}` and keyword expansion apply to the
//! whole line later (`expand`), as fio expands before it splits at `=`.

use std::path::Path;

use super::error::{ParseError, ParseErrorKind};
use crate::job::Origin;

/// Includes deeper than this are taken for a cycle.
pub(crate) const MAX_INCLUDE_DEPTH: usize = 16;

/// Largest job file or included file read (see [`crate::input::JOB_FILE_MAX_BYTES`]).
pub const MAX_FILE_BYTES: u64 = crate::input::JOB_FILE_MAX_BYTES;

/// Most lines read from a job file and its includes together (about 4 s of parsing).
pub const MAX_TOTAL_LINES: usize = 200_000;

/// Reads a job file or include through the one bounded reader: a regular file of at most
/// [`MAX_FILE_BYTES`]; the error says why without the path (the caller places it).
pub(crate) fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    crate::input::read_bytes(path, crate::input::InputKind::JobFile).map_err(|e| e.reason())
}

/// One meaningful line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// `[name]`.
    Section(String),
    /// An option line, comment-stripped and trimmed, before expansion.
    Option(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    pub origin: Origin,
    pub kind: LineKind,
}

/// Cut at `;` then `#`, then trim blanks and control characters at both ends.
pub(crate) fn strip_comment(raw: &str) -> &str {
    let cut = raw.split(';').next().unwrap_or("");
    let cut = cut.split('#').next().unwrap_or("");
    cut.trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// Read the lines of `text` (which came from `path`) into `out`.
pub(crate) fn read_lines(text: &str, path: &str, out: &mut Vec<Line>) -> Result<(), ParseError> {
    let mut lines_left = MAX_TOTAL_LINES;
    read_nested(text, path, out, 0, &mut lines_left)
}

fn read_nested(
    text: &str,
    path: &str,
    out: &mut Vec<Line>,
    depth: usize,
    lines_left: &mut usize,
) -> Result<(), ParseError> {
    let mut seen_section = false;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        if *lines_left == 0 {
            return Err(ParseError::new(
                path,
                line_no,
                ParseErrorKind::TooManyLines(MAX_TOTAL_LINES),
            ));
        }
        *lines_left -= 1;
        if raw.contains('\0') {
            return Err(ParseError::new(path, line_no, ParseErrorKind::Binary));
        }
        let line = strip_comment(raw);
        if line.is_empty() {
            continue;
        }
        let origin = Origin {
            path: path.to_string(),
            line: line_no,
        };
        let error = |kind| Err(ParseError::new(path, line_no, kind));
        if line.starts_with('[') {
            if depth > 0 {
                return error(ParseErrorKind::SectionInInclude(line.to_string()));
            }
            // Choice: fio drops the last character whatever it is; we insist on `]` and a
            // name, so a typo does not silently rename the job.
            let name = match line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                Some(name) if !name.is_empty() => name,
                _ => return error(ParseErrorKind::BadSection(line.to_string())),
            };
            seen_section = true;
            out.push(Line {
                origin,
                kind: LineKind::Section(name.to_string()),
            });
            continue;
        }
        if depth == 0 && !seen_section {
            return error(ParseErrorKind::OutsideSection(line.to_string()));
        }
        if let Some(file) = include_target(line) {
            include(file, path, line_no, out, depth, lines_left)?;
            continue;
        }
        out.push(Line {
            origin,
            kind: LineKind::Option(line.to_string()),
        });
    }
    Ok(())
}

/// `include FILE` → FILE. Choice: fio takes any line starting with "include" as an
/// include; we require a blank after the word, so `includes=1` stays an (unknown) option.
fn include_target(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    if rest.is_empty() {
        return Some("");
    }
    rest.starts_with([' ', '\t']).then(|| rest.trim())
}

fn include(
    file: &str,
    from: &str,
    line_no: usize,
    out: &mut Vec<Line>,
    depth: usize,
    lines_left: &mut usize,
) -> Result<(), ParseError> {
    let fail = |why: String| {
        Err(ParseError::new(
            from,
            line_no,
            ParseErrorKind::Include {
                file: file.to_string(),
                why,
            },
        ))
    };
    if file.is_empty() {
        return fail("no file name".to_string());
    }
    if depth + 1 > MAX_INCLUDE_DEPTH {
        return Err(ParseError::new(
            from,
            line_no,
            ParseErrorKind::IncludeTooDeep(file.to_string()),
        ));
    }
    // As fio: use the name as given if it exists, else relative to the including file.
    let resolved = if Path::new(file).exists() {
        file.to_string()
    } else {
        match from.rfind('/') {
            Some(slash) => format!("{}{}", &from[..=slash], file),
            None => file.to_string(),
        }
    };
    // A device never ends (`/dev/zero`) and a FIFO without a writer waits forever: the
    // reader takes only regular files.
    let bytes = match read_capped(Path::new(&resolved)) {
        Ok(bytes) => bytes,
        Err(why) => return fail(why),
    };
    let text = String::from_utf8_lossy(&bytes);
    read_nested(&text, &resolved, out, depth + 1, lines_left)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<LineKind> {
        let mut out = Vec::new();
        read_lines(text, "t.fio", &mut out).unwrap();
        out.into_iter().map(|l| l.kind).collect()
    }

    #[test]
    fn inline_comments_truncate_anywhere() {
        assert_eq!(strip_comment("numjobs=4\t; 4 threads"), "numjobs=4");
        assert_eq!(strip_comment("  bs=4k # block size\r"), "bs=4k");
        assert_eq!(strip_comment("; whole line"), "");
        assert_eq!(strip_comment("filename=a#b;c"), "filename=a");
    }

    #[test]
    fn sections_and_options_keep_their_line_numbers() {
        let mut out = Vec::new();
        read_lines("; c\n[job]\n\n  rw=read  \n", "t.fio", &mut out).unwrap();
        assert_eq!(out[0].kind, LineKind::Section("job".into()));
        assert_eq!(out[0].origin.line, 2);
        assert_eq!(out[1].kind, LineKind::Option("rw=read".into()));
        assert_eq!(out[1].origin.line, 4);
    }

    /// The line budget counts every line read, comments too, and names where it ran out.
    #[test]
    fn the_line_budget_stops_a_huge_file() {
        let text = format!("[j]\n{}", ";\n".repeat(MAX_TOTAL_LINES));
        let mut out = Vec::new();
        let err = read_lines(&text, "t.fio", &mut out).unwrap_err();
        assert_eq!(err.line, MAX_TOTAL_LINES + 1);
        assert!(matches!(err.kind, ParseErrorKind::TooManyLines(_)), "{err}");
        let fits = format!("[j]\n{}", ";\n".repeat(MAX_TOTAL_LINES - 1));
        assert!(read_lines(&fits, "t.fio", &mut Vec::new()).is_ok());
    }

    #[test]
    fn option_before_any_section_is_an_error() {
        let mut out = Vec::new();
        let err = read_lines("\nrw=read\n[job]\n", "t.fio", &mut out).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.fio:2: option 'rw=read' outside of a [job] section"
        );
    }

    #[test]
    fn header_needs_closing_bracket() {
        let mut out = Vec::new();
        let err = read_lines("[job\n", "t.fio", &mut out).unwrap_err();
        assert_eq!(err.line, 1);
        assert_eq!(kinds("[job] ; x\n"), vec![LineKind::Section("job".into())]);
    }
}
