//! Replaying a recorded workload: blktrace captures ([`blktrace`]) and fio iologs ([`iolog`])
//! read into one list of I/Os ([`ReplayLog`]), replayed by a [`source::ReplaySource`] inside
//! a job clone, so both drivers and every scheduler see the recorded requests.
//!
//! A job replays a log when it names one with fio's `read_iolog=`; fio's `replay_*` options
//! shape it ([`ReplaySpec`]). `iosched replay CAPTURE` builds one job per process of a capture
//! instead (see the `src/cmd/replay.rs` command).

pub mod blktrace;
pub mod iolog;
pub mod source;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use iosched_core::Time;

use crate::generator::IoKind;
use crate::job::{JobSpec, RwMode};

/// One recorded I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceIo {
    /// When it was queued, in ns from the log's start.
    pub time: Time,
    /// The submitting process (0 in an iolog, which records one job).
    pub pid: u32,
    /// Read, write, trim, or a flush (`Fsync`; `Fdatasync` from an iolog's `datasync`).
    pub kind: IoKind,
    /// Index into [`ReplayLog::files`].
    pub file: usize,
    /// Byte offset in the file (a capture's sector × 512, on the whole device).
    pub offset: u64,
    pub len: u64,
    /// The request was synchronous (every read; writes flagged `S`).
    pub sync: bool,
    /// Flagged metadata (`M`).
    pub meta: bool,
    /// When the capture saw it complete, in ns from the log's start (captures only).
    pub completed: Option<Time>,
}

impl TraceIo {
    /// An asynchronous write (write-back): replayed at its recorded time in every mode.
    pub fn is_async_write(&self) -> bool {
        self.kind == IoKind::Write && !self.sync
    }
}

/// Which reader produced a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Blktrace,
    Iolog2,
    Iolog3,
}

/// A recorded workload, ready to replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayLog {
    /// The path it was read from.
    pub path: String,
    pub format: LogFormat,
    /// The files its I/Os name: an iolog's `add`ed files, or a capture's one device.
    pub files: Vec<String>,
    /// In queue order.
    pub ios: Vec<TraceIo>,
    /// Command names by pid (a capture's process notes).
    pub comms: BTreeMap<u32, String>,
}

/// One past the last byte a recorded I/O may touch: 2^63, the largest file offset Linux
/// (a signed `loff_t`) and fio address. An I/O ending later is refused when the log is read,
/// so an offset cannot wrap round to the start of the target.
pub const MAX_IO_END: u64 = 1 << 63;

/// The file name a capture's I/Os use: a device path, so the layout gives it the whole target.
pub const CAPTURE_DEVICE: &str = "/dev/replay";

/// A log that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayError {
    Blktrace(blktrace::DecodeError),
    Iolog(iolog::IologError),
    /// The path is no file to read (a device, a FIFO, a directory) or too large.
    Input(crate::input::InputError),
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Blktrace(e) => write!(f, "{e}"),
            ReplayError::Iolog(e) => write!(f, "{e}"),
            ReplayError::Input(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReplayError {}

impl ReplayLog {
    /// [`ReplayLog::load`], read once per process while its files stay the same size and
    /// age: a capture split into one job per process is named by every job.
    pub fn load_shared(path: &Path) -> Result<Arc<ReplayLog>, ReplayError> {
        type Key = (
            std::path::PathBuf,
            Vec<(u64, Option<std::time::SystemTime>)>,
        );
        static CACHE: Mutex<BTreeMap<Key, Arc<ReplayLog>>> = Mutex::new(BTreeMap::new());
        let stamp = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| (m.len(), m.modified().ok()))
                .unwrap_or((0, None))
        };
        refuse_special(path)?;
        let files = if path.is_file() {
            vec![path.to_path_buf()]
        } else {
            blktrace::capture_files(path).map_err(ReplayError::Blktrace)?
        };
        let key: Key = (path.to_path_buf(), files.iter().map(|f| stamp(f)).collect());
        if let Some(log) = CACHE.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(log);
        }
        let log = Arc::new(ReplayLog::load(path)?);
        if let Ok(mut cache) = CACHE.lock() {
            cache.insert(key, log.clone());
        }
        Ok(log)
    }

    /// Reads `path`: a blktrace capture when it starts with a record's magic (one file, or
    /// the per-CPU files `path.blktrace.N` when `path` does not exist), otherwise an iolog.
    pub fn load(path: &Path) -> Result<ReplayLog, ReplayError> {
        use crate::input::{self, InputKind};
        refuse_special(path)?;
        if path.is_file() {
            let bytes = input::read_bytes(path, InputKind::Capture).map_err(ReplayError::Input)?;
            // As fio's init_iolog(): a file not starting with blktrace's magic is an iolog,
            // and one without a version 2 or 3 header is refused as such (a version 1 log,
            // or text without its header), not decoded as a broken capture. An empty file
            // stays a capture: a CPU that saw no event writes one.
            if !bytes.is_empty() && !blktrace::starts_with_magic(&bytes) {
                let text = String::from_utf8_lossy(&bytes);
                let log = iolog::parse(path, &text).map_err(ReplayError::Iolog)?;
                return Ok(ReplayLog::from_iolog(path, log));
            }
        }
        let capture = blktrace::Capture::open(path).map_err(ReplayError::Blktrace)?;
        Ok(ReplayLog::from_capture(path, &capture))
    }

    /// The I/Os and names of a decoded capture.
    pub fn from_capture(path: &Path, capture: &blktrace::Capture) -> ReplayLog {
        ReplayLog {
            path: path.display().to_string(),
            format: LogFormat::Blktrace,
            files: vec![CAPTURE_DEVICE.to_string()],
            ios: capture.ios(),
            comms: capture.comms(),
        }
    }

    fn from_iolog(path: &Path, log: iolog::Iolog) -> ReplayLog {
        ReplayLog {
            path: path.display().to_string(),
            format: if log.version == 2 {
                LogFormat::Iolog2
            } else {
                LogFormat::Iolog3
            },
            files: log.files,
            ios: log.ios,
            comms: BTreeMap::new(),
        }
    }

    /// Every pid with I/O, ascending.
    pub fn pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self.ios.iter().map(|io| io.pid).collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// One past the last byte any I/O touches, per file.
    pub fn file_ends(&self) -> Vec<u64> {
        let mut ends = vec![0u64; self.files.len()];
        for io in &self.ios {
            if let Some(end) = ends.get_mut(io.file) {
                *end = (*end).max(io.offset + io.len);
            }
        }
        ends
    }

    /// Whether the log holds completion times (closed loop needs them).
    pub fn has_completions(&self) -> bool {
        self.ios.iter().any(|io| io.completed.is_some())
    }
}

/// A path that exists is read as it is: `/dev/zero`, a FIFO or a folder is refused for what
/// it is, not looked for as `zero.blktrace.N`. Only a missing path names per-CPU files.
fn refuse_special(path: &Path) -> Result<(), ReplayError> {
    if std::fs::symlink_metadata(path).is_ok() {
        crate::input::check_regular(path, crate::input::InputKind::Capture)
            .map_err(ReplayError::Input)?;
    }
    Ok(())
}

/// Which of a process's I/Os a job replays: CFQ serves a process's async writes from its
/// group's shared async queue, so `iosched replay` runs them as a second clone of the same
/// process ([`ReplayPart::AsyncWrites`]), whose writes the drivers submit without `REQ_SYNC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayPart {
    /// Everything (a `read_iolog=` job, as fio replays it).
    All,
    /// All but the async writes.
    Sync,
    /// Only the async writes.
    AsyncWrites,
}

/// How a job replays a log: fio's `read_iolog=` and `replay_*` options, and iosched's own
/// timing mode and process selection.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplaySpec {
    /// `read_iolog=`: the log's path as written.
    pub path: String,
    /// The log, read when the job file is (or by the `replay` command).
    pub log: Option<Arc<ReplayLog>>,
    /// `replay_no_stall`: ignore the recorded times, issue as fast as the depth allows.
    pub no_stall: bool,
    /// `replay_redirect=`: every I/O goes to this one file.
    pub redirect: Option<String>,
    /// `replay_align=`: offsets rounded down to this power of two (0: as recorded).
    pub align: u64,
    /// `replay_scale=`: offsets divided by this (1: as recorded).
    pub scale: u64,
    /// `replay_time_scale=`: percent of the recorded speed (200 replays twice as fast).
    pub time_scale: u32,
    /// `replay_skip=`: directions left out, bits [`SKIP_READ`]...[`SKIP_SYNC`].
    pub skip: u8,
    /// `iosched_replay=closed`: each process's next I/O follows its previous one's
    /// completion by the recorded think time (see [`source`]).
    pub closed_loop: bool,
    /// Only these pids' I/O (`None`: all of it).
    pub pids: Option<Vec<u32>>,
    pub part: ReplayPart,
}

pub const SKIP_READ: u8 = 1 << 0;
pub const SKIP_WRITE: u8 = 1 << 1;
pub const SKIP_TRIM: u8 = 1 << 2;
pub const SKIP_SYNC: u8 = 1 << 3;

impl ReplaySpec {
    /// fio's defaults for a log at `path`.
    pub fn new(path: &str) -> ReplaySpec {
        ReplaySpec {
            path: path.to_string(),
            log: None,
            no_stall: false,
            redirect: None,
            align: 0,
            scale: 1,
            time_scale: 100,
            skip: 0,
            closed_loop: false,
            pids: None,
            part: ReplayPart::All,
        }
    }

    /// Whether the job replays `io` (its pid, its part, and `replay_skip`).
    pub fn selects(&self, io: &TraceIo) -> bool {
        let skipped = match io.kind {
            IoKind::Read => self.skip & SKIP_READ != 0,
            IoKind::Write => self.skip & SKIP_WRITE != 0,
            IoKind::Trim => self.skip & SKIP_TRIM != 0,
            IoKind::Fsync => self.skip & SKIP_SYNC != 0,
            IoKind::Fdatasync | IoKind::Truncate => false,
        };
        let part = match self.part {
            ReplayPart::All => true,
            ReplayPart::Sync => !io.is_async_write(),
            ReplayPart::AsyncWrites => io.is_async_write(),
        };
        !skipped && part && self.pids.as_ref().is_none_or(|p| p.contains(&io.pid))
    }

    /// Where `io` goes in the job's file list, and at which offset: `replay_redirect` sends
    /// everything to file 0, `replay_scale` divides and `replay_align` rounds down.
    pub fn place(&self, io: &TraceIo) -> (usize, u64) {
        let file = if self.redirect.is_some() { 0 } else { io.file };
        let mut offset = io.offset / self.scale.max(1);
        if self.align > 1 {
            offset &= !(self.align - 1);
        }
        (file, offset)
    }

    /// A recorded time in ns as replay time, with `replay_time_scale`.
    pub fn scale_time(&self, ns: Time) -> Time {
        if self.time_scale == 100 || self.time_scale == 0 {
            ns
        } else {
            (u128::from(ns) * 100 / u128::from(self.time_scale)) as Time
        }
    }

    /// The pid the job's process takes: the capture's, when the job replays one process.
    pub fn process_pid(&self) -> Option<u32> {
        match self.pids.as_deref() {
            Some([pid]) => Some(*pid),
            _ => None,
        }
    }

    /// The files the job opens: the redirect target, or the log's files.
    pub fn files(&self) -> Vec<String> {
        match (&self.redirect, &self.log) {
            (Some(target), _) => vec![target.clone()],
            (None, Some(log)) => log.files.clone(),
            (None, None) => Vec::new(),
        }
    }
}

/// A job's replay settings made whole when its section ends: `replay_*` options without a
/// log are dropped (with a warning, where fio ignores them silently); a replaying job opens
/// the log's files (or the redirect target), sized to the I/Os when no size was given, and
/// its direction is what the log does, as fio sets it from the log's reads and writes.
pub fn finalize_job(spec: &mut JobSpec, warnings: &mut Vec<String>) -> Result<(), String> {
    let Some(replay) = &spec.replay else {
        return Ok(());
    };
    let Some(log) = replay.log.clone() else {
        warnings.push("replay_* options without read_iolog have no effect".to_string());
        spec.replay = None;
        return Ok(());
    };
    if replay.closed_loop && !log.has_completions() {
        return Err(format!(
            "iosched_replay=closed needs the completion events of a blktrace capture; {} has none",
            log.path
        ));
    }
    spec.filenames = replay.files();
    let end = log.file_ends().into_iter().max().unwrap_or(0);
    // Device names too: a regular file as the engine's target has no size of its own.
    if spec.size.is_none() && spec.filesize.is_none() {
        let bytes = end.div_ceil(4096).max(1) * 4096;
        spec.filesize = Some((bytes, bytes));
    }
    let (reads, writes) = log
        .ios
        .iter()
        .filter(|io| replay.selects(io))
        .fold((false, false), |(r, w), io| {
            (r || io.kind == IoKind::Read, w || io.kind == IoKind::Write)
        });
    spec.rw = match (reads, writes) {
        (true, true) => RwMode::ReadWrite,
        (false, true) => RwMode::Write,
        _ => RwMode::Read,
    };
    // Blocks as large as the log's largest I/O, so the layout's one-block check holds.
    let largest = log
        .ios
        .iter()
        .map(|io| io.len)
        .max()
        .unwrap_or(4096)
        .max(512);
    spec.bs = std::array::from_fn(|_| crate::job::BlockSizes::Fixed(largest));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(kind: IoKind, sync: bool, pid: u32) -> TraceIo {
        TraceIo {
            time: 0,
            pid,
            kind,
            file: 1,
            offset: 12_345,
            len: 4096,
            sync,
            meta: false,
            completed: None,
        }
    }

    #[test]
    fn selection_follows_pid_part_and_skip() {
        let mut spec = ReplaySpec::new("x");
        spec.pids = Some(vec![7]);
        spec.part = ReplayPart::Sync;
        assert!(spec.selects(&io(IoKind::Read, true, 7)));
        assert!(!spec.selects(&io(IoKind::Read, true, 8)));
        assert!(!spec.selects(&io(IoKind::Write, false, 7)));
        assert!(spec.selects(&io(IoKind::Write, true, 7)));
        spec.part = ReplayPart::AsyncWrites;
        assert!(spec.selects(&io(IoKind::Write, false, 7)));
        spec.part = ReplayPart::All;
        spec.skip = SKIP_READ | SKIP_SYNC;
        assert!(!spec.selects(&io(IoKind::Read, true, 7)));
        assert!(!spec.selects(&io(IoKind::Fsync, true, 7)));
        assert!(spec.selects(&io(IoKind::Fdatasync, true, 7)));
    }

    #[test]
    fn placement_redirects_scales_and_aligns() {
        let mut spec = ReplaySpec::new("x");
        assert_eq!(spec.place(&io(IoKind::Read, true, 1)), (1, 12_345));
        spec.redirect = Some("/dev/sdz".into());
        spec.scale = 2;
        spec.align = 4096;
        // 12345 / 2 = 6172, rounded down to 4096.
        assert_eq!(spec.place(&io(IoKind::Read, true, 1)), (0, 4096));
        spec.time_scale = 200;
        assert_eq!(spec.scale_time(1_000), 500);
    }

    #[test]
    fn fio_job_files_read_iolog_and_the_replay_options() {
        use crate::fio::{parse_str, ParseContext};
        let dir = crate::scratch::ScratchDir::new("iolog");
        let log = dir.join("a.log");
        std::fs::write(
            &log,
            "fio version 3 iolog\n0 /tmp/f add\n5 /tmp/f write 8192 4096\n9 /tmp/f read 0 512\n",
        )
        .unwrap();
        let text = format!(
            "[r]\nread_iolog={}\nreplay_no_stall=1\nreplay_skip=trim,sync\nreplay_align=4k\n\
             replay_time_scale=50\nreplay_redirect=/dev/sdq\n",
            log.display()
        );
        let ctx = ParseContext::fixed(4096, 2048, 8);
        let set = parse_str(&text, "t.fio", &ctx).unwrap();
        let job = &set.jobs[0];
        let replay = job.replay.as_ref().unwrap();
        assert!(replay.no_stall);
        assert_eq!(
            (replay.skip, replay.align, replay.time_scale),
            (SKIP_TRIM | SKIP_SYNC, 4096, 50)
        );
        assert_eq!(job.filenames, ["/dev/sdq"]);
        assert_eq!(job.rw, RwMode::ReadWrite);
        assert_eq!(replay.log.as_ref().unwrap().ios.len(), 2);
        // A bad log stops the job file at the read_iolog line, naming the log's line too.
        std::fs::write(
            &log,
            "fio version 3 iolog\n0 /tmp/f add\n5 /tmp/f write x 4096\n",
        )
        .unwrap();
        let e = parse_str(&text, "t.fio", &ctx).unwrap_err().to_string();
        assert!(e.starts_with("t.fio:2:"), "{e}");
        assert!(e.contains("a.log:3: bad offset"), "{e}");
        // Closed loop needs a capture's completions.
        std::fs::write(&log, "fio version 3 iolog\n0 /tmp/f add\n").unwrap();
        let closed = format!("[r]\nread_iolog={}\niosched_replay=closed\n", log.display());
        let e = parse_str(&closed, "t.fio", &ctx).unwrap_err().to_string();
        assert!(e.contains("needs the completion events"), "{e}");
        let e = parse_str("[r]\nreplay_align=3000\n", "t.fio", &ctx)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a power of 2"), "{e}");
    }
}
