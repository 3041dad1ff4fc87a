//! Reading what a run recorded: the decision log (`iosched run --decisions`, JSON lines) and a
//! block trace in any of the three forms a run or a kernel leaves: blkparse text (`iosched run
//! --trace FILE`, or `blkparse -i` of a kernel capture), a blktrace binary (`--trace
//! NAME.blktrace` → `NAME.blktrace.0`, or `blktrace` itself), and the kernel's ftrace block
//! events as `trace_pipe` prints them (`block_rq_insert`, `block_rq_issue`,
//! `block_rq_complete`, `block_bio_queue`; kernel: `include/trace/events/block.h`).
//!
//! Only what a timeline draws is kept: request events with time, pid, sector, size and
//! direction, command names, and the cgroup path CFQ's notes frame a queue with
//! (`cfq1000S /top-app ...`). Anything malformed is refused with its file and line.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::blktrace::{action, category, tc_act, Record, MAGIC_V7};

/// A line of a decision log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionRecord {
    pub t_ns: u64,
    pub kind: String,
    /// Queue creator pid.
    pub queue: Option<u32>,
    pub group: Option<u32>,
    pub reason: String,
    pub value_ns: Option<u64>,
}

/// The request events a timeline draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `Q`: the submitter queued a bio.
    Queue,
    /// `F`: a bio was front-merged; the request now starts at this event's sector.
    FrontMerge,
    /// `I`: the request entered the scheduler (what CFQ's idling waits for).
    Insert,
    /// `D`: issued to the device.
    Issue,
    /// `C`: completed.
    Complete,
}

/// One request event of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    pub t_ns: u64,
    pub action: Action,
    pub pid: u32,
    pub sector: u64,
    pub sectors: u32,
    pub write: bool,
}

/// How a trace's clock reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The recorder's own clock (blktrace binary, ftrace): the run's `now` for iosched's
    /// binary, so it lines up with the decision log as is.
    Absolute,
    /// Time since the trace's first event, as blkparse prints it.
    SinceFirstEvent,
}

/// A trace as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceInput {
    pub events: Vec<TraceEvent>,
    /// Command name of each pid that queued or inserted a request.
    pub comms: BTreeMap<u32, String>,
    /// The cgroup path CFQ's notes give a queue's pid.
    pub cgroups: BTreeMap<u32, String>,
    pub clock: Option<Clock>,
    /// BFQ's idle timer in a kernel capture: (time, `true` armed / `false` fired).
    /// Kernel: `bfq_idle_slice_timer`, started by bfq_arm_slice_timer().
    pub idle_timer: Vec<(u64, bool)>,
}

/// Bad input: the file, the line (1-based; the record's byte offset for a binary) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub path: PathBuf,
    pub line: Option<u64>,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for InputError {}

fn error(path: &Path, line: Option<u64>, message: impl Into<String>) -> InputError {
    InputError {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Reads a decision log; blank lines are skipped, anything else must be a decision object.
/// An empty log is a log: noop and deadline decide nothing worth a line.
pub fn read_decisions(path: &Path, text: &str) -> Result<Vec<DecisionRecord>, InputError> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = Some(index as u64 + 1);
        let value: Value = serde_json::from_str(line)
            .map_err(|e| error(path, number, format!("not a JSON decision: {e}")))?;
        out.push(decision(&value).map_err(|m| error(path, number, m))?);
    }
    if out.windows(2).any(|w| w[1].t_ns < w[0].t_ns) {
        let at = out
            .windows(2)
            .position(|w| w[1].t_ns < w[0].t_ns)
            .unwrap_or(0);
        return Err(error(
            path,
            None,
            format!("time runs backwards after decision {}", at + 1),
        ));
    }
    Ok(out)
}

fn decision(value: &Value) -> Result<DecisionRecord, String> {
    let object = value.as_object().ok_or("a decision is a JSON object")?;
    let number = |key: &str| -> Result<Option<u64>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| format!("'{key}' is not a whole number")),
        }
    };
    let small = |key: &str| -> Result<Option<u32>, String> {
        number(key)?
            .map(|n| u32::try_from(n).map_err(|_| format!("'{key}' {n} is out of range")))
            .transpose()
    };
    let text = |key: &str| -> Result<String, String> {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("'{key}' is missing or not a string"))
    };
    Ok(DecisionRecord {
        t_ns: number("t_ns")?.ok_or("'t_ns' is missing")?,
        kind: text("kind")?,
        queue: small("queue")?,
        group: small("group")?,
        reason: text("reason")?,
        value_ns: number("value_ns")?,
    })
}

/// Reads a trace, telling the three forms apart by their first bytes.
pub fn read_trace(path: &Path, bytes: &[u8]) -> Result<TraceInput, InputError> {
    if bytes.len() >= 4 && u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == MAGIC_V7
    {
        return read_binary(path, bytes);
    }
    if bytes.len() >= 4 && u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == MAGIC_V7
    {
        return Err(error(
            path,
            None,
            "a big-endian blktrace binary; only little-endian is read",
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        error(
            path,
            None,
            format!("neither a blktrace binary nor text: {e}"),
        )
    })?;
    let mut trace = TraceInput::default();
    let mut summary = false;
    for (index, line) in text.lines().enumerate() {
        let number = Some(index as u64 + 1);
        let first = line.split_whitespace().next().unwrap_or("");
        if first.is_empty() || first.starts_with('#') || summary {
            continue;
        }
        if line.contains(": block_") {
            trace.clock = Some(Clock::Absolute);
            ftrace_line(line, &mut trace).map_err(|m| error(path, number, m))?;
        } else if let Some(read) = ftrace_blk_line(line, &mut trace) {
            trace.clock = Some(Clock::Absolute);
            read.map_err(|m| error(path, number, m))?;
        } else if is_device(first) {
            trace.clock = Some(Clock::SinceFirstEvent);
            blkparse_line(line, &mut trace).map_err(|m| error(path, number, m))?;
        } else if first.starts_with("CPU") || first == "Total" {
            // blkparse's closing per-CPU statistics: no more events.
            summary = true;
        } else {
            return Err(error(
                path,
                number,
                format!("not a trace event: '{}'", clip(line)),
            ));
        }
    }
    finish(path, trace)
}

fn finish(path: &Path, mut trace: TraceInput) -> Result<TraceInput, InputError> {
    if trace.events.is_empty() {
        return Err(error(
            path,
            None,
            "no request events (Q, I, D or C) in this trace",
        ));
    }
    // Per-CPU buffers interleave in a kernel capture; a stable sort keeps each CPU's order.
    trace.events.sort_by_key(|e| e.t_ns);
    Ok(trace)
}

fn clip(line: &str) -> &str {
    let mut end = line.len().min(60);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// `8,0`: a blkparse line's device column.
fn is_device(token: &str) -> bool {
    token.split_once(',').is_some_and(|(a, b)| {
        !a.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
    })
}

/// Seconds with a decimal fraction (`12.000345678`) as nanoseconds.
fn seconds_ns(text: &str) -> Result<u64, String> {
    let bad = || format!("'{text}' is not a time in seconds");
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 9 || !fraction.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let secs: u64 = whole.parse().map_err(|_| bad())?;
    let frac: u64 = if fraction.is_empty() {
        0
    } else {
        fraction.parse::<u64>().map_err(|_| bad())? * 10u64.pow(9 - fraction.len() as u32)
    };
    secs.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(frac))
        .ok_or_else(bad)
}

fn parse<T: std::str::FromStr>(token: Option<&str>, what: &str) -> Result<T, String> {
    let token = token.ok_or_else(|| format!("{what} is missing"))?;
    token
        .parse()
        .map_err(|_| format!("{what} '{token}' is not a number"))
}

/// `SECTOR + COUNT` at the front of `tokens`.
fn extent<'a>(tokens: &mut impl Iterator<Item = &'a str>) -> Result<(u64, u32), String> {
    let sector = parse(tokens.next(), "sector")?;
    match tokens.next() {
        Some("+") => {}
        other => return Err(format!("expected '+' after the sector, found {other:?}")),
    }
    Ok((sector, parse(tokens.next(), "sector count")?))
}

/// One line of blkparse's default output.
fn blkparse_line(line: &str, trace: &mut TraceInput) -> Result<(), String> {
    let mut tokens = line.split_whitespace();
    let _device = tokens.next();
    let _cpu = tokens.next();
    let _sequence = tokens.next();
    let t_ns = seconds_ns(tokens.next().ok_or("the time is missing")?)?;
    let pid: u32 = parse(tokens.next(), "pid")?;
    blk_event(t_ns, pid, tokens, trace)
}

/// What follows the device (and, from the kernel's ftrace `blk` tracer, the cgroup) in a
/// blk event: action, RWBS, `sector + count [command]`, or a scheduler note.
fn blk_event<'a>(
    t_ns: u64,
    pid: u32,
    mut tokens: impl Iterator<Item = &'a str>,
    trace: &mut TraceInput,
) -> Result<(), String> {
    let letter = tokens.next().ok_or("the action is missing")?;
    let rwbs = tokens.next().ok_or("the RWBS column is missing")?;
    if letter == "m" {
        note(tokens, trace);
        return Ok(());
    }
    let action = match letter {
        "Q" => Action::Queue,
        "F" => Action::FrontMerge,
        "I" => Action::Insert,
        "D" => Action::Issue,
        "C" => Action::Complete,
        _ => return Ok(()),
    };
    let rest: Vec<&str> = tokens.collect();
    if rest.first().is_some_and(|t| t.starts_with('[')) || rest.len() == 1 {
        return Ok(()); // No data (a flush): nothing on the disk's surface to draw.
    }
    let (sector, sectors) = extent(&mut rest.iter().copied())?;
    if matches!(action, Action::Queue | Action::Insert) {
        if let Some(comm) = rest.get(3).and_then(|c| c.strip_prefix('[')) {
            let comm = comm.strip_suffix(']').unwrap_or(comm);
            trace.comms.entry(pid).or_insert_with(|| comm.to_string());
        }
    }
    trace.events.push(TraceEvent {
        t_ns,
        action,
        pid,
        sector,
        sectors,
        write: rwbs.contains('W'),
    });
    Ok(())
}

/// A scheduler note: `cfq1000S /top-app ...` (or `bfq...`) names the cgroup of queue 1000.
fn note<'a>(mut tokens: impl Iterator<Item = &'a str>, trace: &mut TraceInput) {
    let Some(frame) = tokens.next() else {
        return;
    };
    let Some(digits) = frame
        .strip_prefix("cfq")
        .or_else(|| frame.strip_prefix("bfq"))
    else {
        return;
    };
    let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
    let (Ok(pid), Some(path)) = (digits.parse::<u32>(), tokens.next()) else {
        return;
    };
    if path.starts_with('/') {
        trace.cgroups.entry(pid).or_insert_with(|| path.to_string());
    }
}

/// A line of the kernel's ftrace `blk` tracer (`iosched kernel --trace`):
/// `dd-15014 [001] d..1. 11964.448670:   7,0    Q  RS 0 + 8 [dd]`, a cgroup pair after the
/// device for scheduler notes (`7,0   1,0  m   N bfq15014S add_request 1`). BFQ's idle
/// timer (`hrtimer_start` / `hrtimer_expire_entry` of `bfq_idle_slice_timer`) is kept, other
/// events of the capture are read as nothing; a line that is not ftrace's gives `None`.
fn ftrace_blk_line(line: &str, trace: &mut TraceInput) -> Option<Result<(), String>> {
    let (task, rest) = line.split_once(" [")?;
    let (cpu, rest) = rest.split_once(']')?;
    if !cpu.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut tokens = rest.split_whitespace().peekable();
    let _flags = tokens.next()?;
    let time = tokens.next()?.strip_suffix(':')?;
    let event = tokens.next()?;
    if !is_device(event) {
        if line.contains("function=bfq_idle_slice_timer") {
            let armed = match event {
                "hrtimer_start:" => true,
                "hrtimer_expire_entry:" => false,
                _ => return Some(Ok(())),
            };
            let t_ns = match seconds_ns(time) {
                Ok(t_ns) => t_ns,
                Err(e) => return Some(Err(e)),
            };
            trace.idle_timer.push((t_ns, armed));
        }
        return Some(Ok(())); // Another event of the capture.
    }
    if tokens.peek().is_some_and(|t| is_device(t)) {
        tokens.next(); // The cgroup's id pair.
    }
    let header = || -> Result<(u64, u32), String> {
        let (_, pid) = task
            .trim()
            .rsplit_once('-')
            .ok_or("no task-pid before the CPU")?;
        Ok((seconds_ns(time)?, parse(Some(pid), "pid")?))
    };
    Some(header().and_then(|(t_ns, pid)| blk_event(t_ns, pid, tokens, trace)))
}

/// One line of the kernel's ftrace output:
/// `fio-1234 [001] d..1. 5.123456: block_rq_issue: 8,0 R 131072 () 2048 + 256 [fio]`.
fn ftrace_line(line: &str, trace: &mut TraceInput) -> Result<(), String> {
    let (head, tail) = line.split_once(": block_").ok_or("no block event")?;
    let (event, args) = tail.split_once(": ").unwrap_or((tail, ""));
    let action = match event {
        "bio_queue" => Action::Queue,
        "bio_frontmerge" => Action::FrontMerge,
        "rq_insert" => Action::Insert,
        "rq_issue" => Action::Issue,
        "rq_complete" => Action::Complete,
        _ => return Ok(()),
    };
    let time = head
        .split_whitespace()
        .last()
        .ok_or("the time is missing")?;
    let t_ns = seconds_ns(time)?;
    let task = head.split(" [").next().unwrap_or("").trim();
    let (comm, pid) = task.rsplit_once('-').ok_or("no task-pid before the CPU")?;
    let pid: u32 = parse(Some(pid), "pid")?;
    let tokens: Vec<&str> = args.split_whitespace().collect();
    let rwbs = tokens.get(1).copied().unwrap_or("");
    let Some(plus) = tokens.iter().position(|t| *t == "+") else {
        return Ok(()); // No data (a flush).
    };
    let sector = parse(
        plus.checked_sub(1).and_then(|i| tokens.get(i).copied()),
        "sector",
    )?;
    let sectors = parse(tokens.get(plus + 1).copied(), "sector count")?;
    if matches!(action, Action::Queue | Action::Insert) {
        trace.comms.entry(pid).or_insert_with(|| comm.to_string());
    }
    trace.events.push(TraceEvent {
        t_ns,
        action,
        pid,
        sector,
        sectors,
        write: rwbs.contains('W'),
    });
    Ok(())
}

/// A blktrace binary (one per-CPU file): records back to back.
fn read_binary(path: &Path, bytes: &[u8]) -> Result<TraceInput, InputError> {
    let mut trace = TraceInput {
        clock: Some(Clock::Absolute),
        ..TraceInput::default()
    };
    let mut offset = 0usize;
    while offset < bytes.len() {
        let Some((record, len)) = Record::decode(&bytes[offset..]) else {
            let why = "not a whole version-7 blktrace record (byte offset given as the line)";
            return Err(error(path, Some(offset as u64), why));
        };
        binary_record(&record, &mut trace);
        offset += len;
    }
    finish(path, trace)
}

fn binary_record(r: &Record, trace: &mut TraceInput) {
    let code = r.action & 0xffff;
    if r.action & tc_act(category::NOTIFY) != 0 {
        let text = String::from_utf8_lossy(&r.payload);
        let text = text.trim_end_matches('\0');
        match code {
            action::NOTE_PROCESS => {
                trace.comms.insert(r.pid, text.to_string());
            }
            action::NOTE_MESSAGE => note(text.split_whitespace(), trace),
            _ => {}
        }
        return;
    }
    let action = match code {
        action::QUEUE => Action::Queue,
        action::FRONTMERGE => Action::FrontMerge,
        action::INSERT => Action::Insert,
        action::ISSUE => Action::Issue,
        action::COMPLETE => Action::Complete,
        _ => return,
    };
    if r.bytes == 0 {
        return;
    }
    trace.events.push(TraceEvent {
        t_ns: r.time,
        action,
        pid: r.pid,
        sector: r.sector,
        sectors: r.bytes >> 9,
        write: r.action & tc_act(category::WRITE) != 0,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path() -> &'static Path {
        Path::new("run.dec")
    }

    /// A bad line is refused with the file and its line number, not skipped.
    #[test]
    fn a_bad_decision_names_its_file_and_line() {
        let text = "{\"t_ns\":1,\"kind\":\"arm_idle\",\"queue\":7,\"group\":0,\"reason\":\"queue idle\",\"value_ns\":8}\n\n\
                    {\"t_ns\":\"soon\",\"kind\":\"idle_end\",\"queue\":7,\"group\":0,\"reason\":\"x\",\"value_ns\":null}\n";
        let e = read_decisions(path(), text).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("run.dec:3: 't_ns'"), "{e}");
        let e = read_decisions(path(), "{\"t_ns\":1}\nnot json\n").unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
    }

    /// blkparse text: events with pid, extent and direction; the cgroup from CFQ's note; the
    /// closing statistics ignored; a garbled line refused with its number.
    #[test]
    fn reads_blkparse_text_and_its_notes() {
        let text = "  8,0    0        1     0.000000000  1000  Q  RS 2048 + 256 [r1]\n\
                    \x20 8,0    0        0     0.000000000     0  m   N cfq1000S /top-app alloced\n\
                    \x20 8,0    0        6     0.000001000  1000  D  WS 2048 + 256 [r1]\n\
                    \x20 8,0    0       12     0.005572489  1000  C  WS 2048 + 256 [0]\n\
                    CPU0 (8,0):\n Reads Queued: 1\n";
        let t = read_trace(Path::new("t.txt"), text.as_bytes()).unwrap();
        assert_eq!(t.events.len(), 3);
        assert_eq!(t.events[2].t_ns, 5_572_489);
        assert!(t.events[1].write && t.events[1].action == Action::Issue);
        assert_eq!(t.cgroups[&1000], "/top-app");
        assert_eq!(t.comms[&1000], "r1");
        let bad = "  8,0 0 1 0.000000000 1000 D RS 2048 - 256 [r1]\n";
        let e = read_trace(Path::new("t.txt"), format!("\n{bad}").as_bytes()).unwrap_err();
        assert!(e.to_string().starts_with("t.txt:2: expected '+'"), "{e}");
    }

    /// The kernel's ftrace `blk` tracer as `iosched kernel --trace` writes it (lines of a
    /// 6.18 kernel under BFQ, with a timer event of the capture between them).
    #[test]
    fn reads_the_kernels_blk_tracer() {
        let text = "\
              dd-15014   [001] d..1. 11964.448670:   7,0    Q  RS 0 + 8 [dd]
              dd-15014   [001] dN.1. 11964.448779:   7,0   1,0  m   N bfq15014S add_request 1
              dd-15014   [001] d..1. 11964.448800: hrtimer_start: hrtimer=00000000b2 function=bfq_idle_slice_timer expires=1 softexpires=1 mode=REL
              dd-15014   [001] dN.1. 11964.448810:   7,0    D  RS 0 + 8 [dd]
          <idle>-0       [000] d.h1. 11964.449500:   7,0    C  RS 0 + 8 [0]
";
        let t = read_trace(Path::new("kernel.txt"), text.as_bytes()).unwrap();
        assert_eq!(t.clock, Some(Clock::Absolute));
        assert_eq!(t.idle_timer, [(11_964_448_800_000, true)]);
        let got: Vec<(u64, Action, u32)> =
            t.events.iter().map(|e| (e.t_ns, e.action, e.pid)).collect();
        assert_eq!(
            got,
            [
                (11_964_448_670_000, Action::Queue, 15014),
                (11_964_448_810_000, Action::Issue, 15014),
                (11_964_449_500_000, Action::Complete, 0)
            ]
        );
        assert_eq!(t.comms[&15014], "dd");
        let bad = "  dd-15014 [001] d..1. 11964.448670:   7,0    Q  RS 0 - 8 [dd]\n";
        let e = read_trace(Path::new("kernel.txt"), bad.as_bytes()).unwrap_err();
        assert!(
            e.to_string().starts_with("kernel.txt:1: expected '+'"),
            "{e}"
        );
    }

    /// The kernel's ftrace block events, as `trace_pipe` prints them.
    #[test]
    fn reads_ftrace_block_events() {
        let text = "# tracer: nop\n\
             \x20          fio-4242    [001] d..1.  5123.000100: block_rq_insert: 8,16 R 131072 () 2048 + 256 [fio]\n\
             \x20 kworker/1:1H-90      [001] d..1.  5123.000200: block_rq_issue: 8,16 R 131072 () 2048 + 256 [kworker/1:1H]\n\
             \x20       <idle>-0       [000] d.h1.  5123.004200: block_rq_complete: 8,16 R () 2048 + 256 [0]\n";
        let t = read_trace(Path::new("k.txt"), text.as_bytes()).unwrap();
        assert_eq!(t.clock, Some(Clock::Absolute));
        let times: Vec<u64> = t.events.iter().map(|e| e.t_ns).collect();
        assert_eq!(
            times,
            [5_123_000_100_000, 5_123_000_200_000, 5_123_004_200_000]
        );
        assert_eq!(t.events[0].pid, 4242);
        assert_eq!(t.comms[&4242], "fio");
    }
}
