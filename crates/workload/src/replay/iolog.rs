//! Reading fio's iologs, versions 2 and 3 (fio 3.33's `write_iolog` writes version 3).
//!
//! A log starts with `fio version 2 iolog` or `fio version 3 iolog`. Then one action a line,
//! fields separated by blanks:
//!
//! | version 2 | version 3 | meaning |
//! |---|---|---|
//! | `FILE add\|open\|close` | `USEC FILE add\|open\|close` | a file action |
//! | `FILE read\|write\|trim\|sync\|datasync OFFSET LEN` | `USEC FILE ... OFFSET LEN` | an I/O |
//! | `FILE wait USEC 0` | — | a pause (version 2 only) |
//!
//! Version 3's first field is the time in microseconds since the log began. fio replays each
//! line that long after the previous one (`delay_since_ttime()`), so a line's time counts from
//! the log's first line. In version 2 only `wait` lines space the I/Os out; this reader adds
//! their pauses up.
//!
//! Choice: fio prints a message and skips a line it cannot read; iosched stops at it with
//! `file:line` (a replay that silently drops I/O would compare schedulers on a different
//! workload). An I/O on a file the log never added is refused the same way.

use std::fmt;
use std::path::Path;

use iosched_core::Time;

use super::TraceIo;
use crate::generator::IoKind;

/// A line of an iolog that cannot be replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IologError {
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for IologError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for IologError {}

/// A parsed iolog: its version, its files in order of `add`, and its I/Os in log order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iolog {
    pub version: u32,
    pub files: Vec<String>,
    pub ios: Vec<TraceIo>,
}

/// Parses the iolog `text` read from `file`.
pub fn parse(file: &Path, text: &str) -> Result<Iolog, IologError> {
    let name = file.display().to_string();
    let error = |line: usize, message: String| IologError {
        file: name.clone(),
        line,
        message,
    };
    let mut lines = text.lines().enumerate();
    let version = match lines.next().map(|(_, l)| l.trim_end()) {
        Some("fio version 2 iolog") => 2,
        Some("fio version 3 iolog") => 3,
        _ => {
            return Err(error(
                1,
                "neither a blktrace capture (no record magic) nor a fio iolog (no \
                 `fio version 2 iolog` or `fio version 3 iolog` first line): a version 1 \
                 iolog or a log without its header, which fio 3.33 refuses too ('iolog \
                 version 1 is no longer supported')"
                    .to_string(),
            ))
        }
    };
    let mut log = Iolog {
        version,
        files: Vec::new(),
        ios: Vec::new(),
    };
    let mut first_usec: Option<u64> = None;
    let mut clock: Time = 0;
    for (index, line) in lines {
        let number = index + 1;
        let mut fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if version == 3 {
            let usec: u64 = fields[0]
                .parse()
                .map_err(|_| error(number, format!("bad time `{}` (microseconds)", fields[0])))?;
            let first = *first_usec.get_or_insert(usec);
            clock = usec.saturating_sub(first).saturating_mul(1000);
            fields.remove(0);
        }
        parse_action(&mut log, &fields, &mut clock).map_err(|message| error(number, message))?;
    }
    Ok(log)
}

fn number(field: &str, what: &str) -> Result<u64, String> {
    field
        .parse()
        .map_err(|_| format!("bad {what} `{field}`: not a number"))
}

/// One line after its time: a file action, an I/O, or (version 2) a wait.
fn parse_action(log: &mut Iolog, fields: &[&str], clock: &mut Time) -> Result<(), String> {
    let [file, action, rest @ ..] = fields else {
        return Err("expected `FILE ACTION [OFFSET LENGTH]`".to_string());
    };
    match (*action, rest) {
        ("add", []) => {
            if !log.files.iter().any(|f| f == file) {
                log.files.push(file.to_string());
            }
            return Ok(());
        }
        ("open" | "close", []) => return Ok(()),
        ("wait", [usec, _]) if log.version == 2 => {
            *clock = clock.saturating_add(number(usec, "wait")?.saturating_mul(1000));
            return Ok(());
        }
        ("wait", _) if log.version == 3 => {
            return Err("`wait` is not allowed in a version 3 iolog".to_string())
        }
        (_, [_, _]) => {}
        _ => {
            return Err(format!(
                "action `{action}` with {} fields: expected `FILE add|open|close` or \
                 `FILE read|write|trim|sync|datasync OFFSET LENGTH`",
                rest.len()
            ))
        }
    }
    let kind = match *action {
        "read" => IoKind::Read,
        "write" => IoKind::Write,
        "trim" => IoKind::Trim,
        "sync" => IoKind::Fsync,
        "datasync" => IoKind::Fdatasync,
        other => return Err(format!("unknown iolog action `{other}`")),
    };
    let Some(file_index) = log.files.iter().position(|f| f == file) else {
        return Err(format!(
            "I/O on `{file}`, which no earlier `add` line named"
        ));
    };
    let offset = number(rest[0], "offset")?;
    let len = number(rest[1], "length")?;
    if offset
        .checked_add(len)
        .is_none_or(|end| end > super::MAX_IO_END)
    {
        return Err(format!(
            "offset {offset} + length {len} ends past 2^63 bytes: no file or device is that large"
        ));
    }
    log.ios.push(TraceIo {
        time: *clock,
        pid: 0,
        kind,
        file: file_index,
        offset,
        len,
        // fio replays through its job's engine: reads and its direct writes are sync.
        sync: true,
        meta: false,
        completed: None,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Iolog, IologError> {
        parse(Path::new("t.log"), text)
    }

    #[test]
    fn version_3_times_count_from_the_first_line() {
        // The shape fio 3.33 writes (checked against a write_iolog run in the CLI tests).
        let log = parse_str(
            "fio version 3 iolog\n\
             1000 /dev/loop0 add\n\
             1010 /dev/loop0 open\n\
             1500 /dev/loop0 read 0 4096\n\
             1750 /dev/loop0 write 8192 512\n\
             2000 /dev/loop0 close\n",
        )
        .unwrap();
        assert_eq!(log.files, ["/dev/loop0"]);
        let got: Vec<(Time, IoKind, u64, u64)> = log
            .ios
            .iter()
            .map(|io| (io.time, io.kind, io.offset, io.len))
            .collect();
        assert_eq!(
            got,
            [
                (500_000, IoKind::Read, 0, 4096),
                (750_000, IoKind::Write, 8192, 512)
            ]
        );
    }

    #[test]
    fn version_2_waits_add_up() {
        let log = parse_str(
            "fio version 2 iolog\n/f add\n/f read 0 4096\n/f wait 100 0\n\
             /f sync 0 0\n/f wait 50 0\n/f trim 4096 4096\n",
        )
        .unwrap();
        let times: Vec<Time> = log.ios.iter().map(|io| io.time).collect();
        assert_eq!(times, [0, 100_000, 150_000]);
        assert_eq!(log.ios[1].kind, IoKind::Fsync);
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = parse_str("fio version 1 iolog\n").unwrap_err();
        assert_eq!((e.line, e.to_string().starts_with("t.log:1: ")), (1, true));
        let e = parse_str("fio version 3 iolog\n0 /f add\n5 /f read x 4096\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("bad offset `x`"), "{e}");
        let e = parse_str("fio version 2 iolog\n/f read 0 4096\n").unwrap_err();
        assert!(e.message.contains("no earlier `add`"), "{e}");
        let e = parse_str("fio version 3 iolog\n0 /f add\n1 /f wait 10 0\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse_str("fio version 2 iolog\n/f add\n/f fly 0 1\n").unwrap_err();
        assert!(e.message.contains("unknown iolog action `fly`"), "{e}");
        let e = parse_str("fio version 3 iolog\nabc /f add\n").unwrap_err();
        assert!(e.message.contains("bad time"), "{e}");
    }

    /// Issue 28: an offset of 2^64 - 1 was accepted (and overflowed the file's end); an I/O
    /// must end by 2^63 bytes.
    #[test]
    fn an_io_ending_past_2_63_bytes_is_refused() {
        let log = |offset: u64| format!("fio version 2 iolog\n/f add\n/f read {offset} 4096\n");
        let e = parse_str(&log(u64::MAX)).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("ends past 2^63 bytes"), "{e}");
        assert!(parse_str(&log((1 << 63) - 4095)).is_err());
        assert!(parse_str(&log((1 << 63) - 4096)).is_ok());
    }
}
