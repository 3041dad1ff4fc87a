//! blktrace's binary format: version-7 records that `blkparse`, `btt` and `fio --read_iolog`
//! read as if a kernel had written them.
//!
//! A trace is a concatenation of records with no file header: a 48-byte header (magic and
//! version `0x65617407`, per-CPU sequence, time in ns, sector, bytes, action, pid, device,
//! CPU, error, payload length) followed by the payload. The action's low 16 bits name the
//! event (`__BLK_TA_QUEUE` ...), the high 16 bits carry category bits: the event's own
//! (queue, issue, complete, requeue, notify) ORed with the request's (read/write, sync, meta,
//! flush, FUA, discard), from which blkparse rebuilds the RWBS column. Kernel:
//! `__blk_add_trace()` and `trace_note()` in `kernel/trace/blktrace.c`.
//!
//! What this writer adds to the bare events, so the tools print what they print for a kernel
//! trace:
//! * a `BLK_TN_PROCESS` note carrying the command name before a pid's first event (otherwise
//!   blkparse shows `[(null)]`);
//! * CFQ's messages as `BLK_TN_MESSAGE` notes, text framed as CFQ frames it
//!   ([`TraceLabels::note_text`]: `cfq<pid><S|A><N| > [<cgroup>] <message>`) and cut to 127
//!   bytes (the kernel's `BLK_TN_MAX_MSG` buffer);
//! * the request count of a plug as the big-endian payload of the unplug event.
//!
//! Every record is written little-endian (readers accept either byte order by testing the
//! magic), so files are byte-identical across hosts. All events are logged on one emulated CPU;
//! notes carry sequence 0 and pid 0, as blkparse 1.2.0 prints them.

use iosched_core::{CgroupId, MessageSubject, Op, Request, RqEvent, Time, Trace};
use iosched_gate::{GateError, OutFile};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// `BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION`: magic 0x654174 and version 7.
pub const MAGIC_V7: u32 = 0x6561_7407;
/// Size of a record header in bytes.
pub const RECORD_HEADER_LEN: usize = 48;
/// `BLK_TN_MAX_MSG`: the kernel formats notes into a 128-byte buffer, 127 characters + NUL.
pub const NOTE_MAX_LEN: usize = 127;
/// `TASK_COMM_LEN`: the process note carries a 16-byte, NUL-padded command name.
pub const COMM_LEN: usize = 16;

/// Category bits (`enum blktrace_cat`), before shifting into the action's high half.
pub mod category {
    pub const READ: u32 = 1 << 0;
    pub const WRITE: u32 = 1 << 1;
    pub const FLUSH: u32 = 1 << 2;
    pub const SYNC: u32 = 1 << 3;
    pub const QUEUE: u32 = 1 << 4;
    pub const REQUEUE: u32 = 1 << 5;
    pub const ISSUE: u32 = 1 << 6;
    pub const COMPLETE: u32 = 1 << 7;
    pub const FS: u32 = 1 << 8;
    pub const PC: u32 = 1 << 9;
    pub const NOTIFY: u32 = 1 << 10;
    pub const AHEAD: u32 = 1 << 11;
    pub const META: u32 = 1 << 12;
    pub const DISCARD: u32 = 1 << 13;
    pub const DRV_DATA: u32 = 1 << 14;
    pub const FUA: u32 = 1 << 15;
}

/// Action codes (`enum blktrace_act`, low 16 bits).
pub mod action {
    pub const QUEUE: u32 = 1;
    pub const BACKMERGE: u32 = 2;
    pub const FRONTMERGE: u32 = 3;
    pub const GETRQ: u32 = 4;
    pub const SLEEPRQ: u32 = 5;
    pub const REQUEUE: u32 = 6;
    pub const ISSUE: u32 = 7;
    pub const COMPLETE: u32 = 8;
    pub const PLUG: u32 = 9;
    pub const UNPLUG_IO: u32 = 10;
    pub const UNPLUG_TIMER: u32 = 11;
    pub const INSERT: u32 = 12;
    /// Notify codes (`enum blktrace_notify`), used with the NOTIFY category.
    pub const NOTE_PROCESS: u32 = 0;
    pub const NOTE_TIMESTAMP: u32 = 1;
    pub const NOTE_MESSAGE: u32 = 2;
}

/// `BLK_TC_ACT(c)`: a category bit moved into the action's high half.
pub const fn tc_act(cat: u32) -> u32 {
    cat << 16
}

/// The full action word of `event` on `rq`: code, event category, request categories.
/// Kernel: the `BLK_TA_*` macros plus the `what |= ...` lines of `__blk_add_trace()`.
pub fn action_word(event: RqEvent, rq: &Request) -> u32 {
    use category as c;
    let (code, cat) = match event {
        RqEvent::Queue => (action::QUEUE, c::QUEUE),
        RqEvent::BackMerge => (action::BACKMERGE, c::QUEUE),
        RqEvent::FrontMerge => (action::FRONTMERGE, c::QUEUE),
        RqEvent::GetRq => (action::GETRQ, c::QUEUE),
        RqEvent::SleepRq => (action::SLEEPRQ, c::QUEUE),
        RqEvent::Insert => (action::INSERT, c::QUEUE),
        RqEvent::Issue => (action::ISSUE, c::ISSUE),
        RqEvent::Complete => (action::COMPLETE, c::COMPLETE),
        RqEvent::Requeue => (action::REQUEUE, c::REQUEUE),
        // Plug and unplug concern the submitter's queue, not one request: no data bits.
        RqEvent::Plug => return action::PLUG | tc_act(c::QUEUE),
        RqEvent::Unplug => return action::UNPLUG_IO | tc_act(c::QUEUE),
    };
    let mut cats = cat;
    cats |= match rq.op {
        Op::Read => c::READ,
        Op::Write => c::WRITE,
        Op::Flush => c::WRITE | c::FLUSH,
        Op::Discard => c::WRITE | c::DISCARD,
    };
    if rq.is_sync() {
        cats |= c::SYNC;
    }
    if rq.flags.meta {
        cats |= c::META;
    }
    if rq.flags.fua {
        cats |= c::FUA;
    }
    code | tc_act(cats)
}

/// blkparse's RWBS column for an action word and byte count (blkparse's `fill_rwbs()`):
/// `F` flush, then one of `D`/`W`/`R`/`N`, then `F` FUA, `A` readahead, `S` sync, `M` meta.
pub fn rwbs(action_word: u32, bytes: u32) -> String {
    use category as c;
    let has = |cat: u32| action_word & tc_act(cat) != 0;
    let mut s = String::with_capacity(5);
    if has(c::FLUSH) {
        s.push('F');
    }
    if has(c::DISCARD) {
        s.push('D');
    } else if has(c::WRITE) {
        s.push('W');
    } else if bytes > 0 {
        s.push('R');
    } else {
        s.push('N');
    }
    if has(c::FUA) {
        s.push('F');
    }
    if has(c::AHEAD) {
        s.push('A');
    }
    if has(c::SYNC) {
        s.push('S');
    }
    if has(c::META) {
        s.push('M');
    }
    s
}

/// The blkparse action letter of an event.
pub fn action_letter(event: RqEvent) -> &'static str {
    match event {
        RqEvent::Queue => "Q",
        RqEvent::GetRq => "G",
        RqEvent::SleepRq => "S",
        RqEvent::BackMerge => "M",
        RqEvent::FrontMerge => "F",
        RqEvent::Insert => "I",
        RqEvent::Issue => "D",
        RqEvent::Complete => "C",
        RqEvent::Requeue => "R",
        RqEvent::Plug => "P",
        RqEvent::Unplug => "U",
    }
}

/// Names a trace prints: command names per pid, cgroup paths per id, and the note framing.
/// Shared by [`BlktraceBinary`] and [`crate::blkparse::BlkparseText`] so both say the same.
#[derive(Clone, Debug)]
pub struct TraceLabels {
    /// Block device numbers printed as `major,minor`.
    pub major: u32,
    pub minor: u32,
    /// Command name shown for pids without a registered name.
    pub default_comm: String,
    /// Put the blkcg path in queue and group notes (kernels ≤ 4.13 with group scheduling,
    /// the form most published CFQ traces have). Without it, group notes carry the bare
    /// message, as on 4.14+.
    pub cgroup_in_notes: bool,
    comms: BTreeMap<u32, String>,
    cgroup_paths: BTreeMap<CgroupId, String>,
}

impl TraceLabels {
    /// Labels for device `major,minor`, commands shown as `iosched`, cgroup paths in notes.
    pub fn new(major: u32, minor: u32) -> TraceLabels {
        let mut cgroup_paths = BTreeMap::new();
        cgroup_paths.insert(CgroupId::ROOT, "/".to_string());
        TraceLabels {
            major,
            minor,
            default_comm: "iosched".to_string(),
            cgroup_in_notes: true,
            comms: BTreeMap::new(),
            cgroup_paths,
        }
    }

    /// Names process `pid` (the job name, or `fio` to look like a fio run).
    pub fn set_comm(&mut self, pid: u32, comm: &str) {
        self.comms.insert(pid, comm.to_string());
    }

    /// The command name of `pid`.
    pub fn comm(&self, pid: u32) -> &str {
        self.comms.get(&pid).unwrap_or(&self.default_comm)
    }

    /// Names cgroup `id` by its path (`/dbench`).
    pub fn set_cgroup_path(&mut self, id: CgroupId, path: &str) {
        self.cgroup_paths.insert(id, path.to_string());
    }

    /// The path of cgroup `id`; `/cg<N>` if it was never named.
    pub fn cgroup_path(&self, id: CgroupId) -> String {
        self.cgroup_paths
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("/cg{}", id.0))
    }

    /// The kernel device number as blktrace stores it: `major << 20 | minor`.
    pub fn dev_t(&self) -> u32 {
        (self.major << 20) | (self.minor & 0xF_FFFF)
    }

    /// A CFQ note's full text, framed as the kernel's `cfq_log_cfqq()`, `cfq_log_cfqg()` and
    /// `cfq_log()` frame it, cut to [`NOTE_MAX_LEN`] bytes.
    pub fn note_text(&self, subject: MessageSubject, text: &str) -> String {
        let mut s = match subject {
            MessageSubject::Device => format!("cfq {text}"),
            MessageSubject::Text => text.to_string(),
            MessageSubject::Group(cg) => {
                if self.cgroup_in_notes {
                    format!("{} {text}", self.cgroup_path(cg))
                } else {
                    text.to_string()
                }
            }
            MessageSubject::Queue {
                pid,
                cgroup,
                sync,
                noidle,
            } => {
                let s_letter = if sync { 'S' } else { 'A' };
                let n_letter = if noidle { 'N' } else { ' ' };
                if self.cgroup_in_notes {
                    format!(
                        "cfq{pid}{s_letter}{n_letter} {} {text}",
                        self.cgroup_path(cgroup)
                    )
                } else {
                    format!("cfq{pid}{s_letter}{n_letter} {text}")
                }
            }
        };
        if s.len() > NOTE_MAX_LEN {
            let mut cut = NOTE_MAX_LEN;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
        }
        s
    }
}

/// One record, before encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub sequence: u32,
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub payload: Vec<u8>,
}

impl Record {
    /// The record as blktrace lays it out (48-byte header + payload), little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(RECORD_HEADER_LEN + self.payload.len());
        b.extend_from_slice(&MAGIC_V7.to_le_bytes());
        b.extend_from_slice(&self.sequence.to_le_bytes());
        b.extend_from_slice(&self.time.to_le_bytes());
        b.extend_from_slice(&self.sector.to_le_bytes());
        b.extend_from_slice(&self.bytes.to_le_bytes());
        b.extend_from_slice(&self.action.to_le_bytes());
        b.extend_from_slice(&self.pid.to_le_bytes());
        b.extend_from_slice(&self.device.to_le_bytes());
        b.extend_from_slice(&self.cpu.to_le_bytes());
        b.extend_from_slice(&self.error.to_le_bytes());
        let len = u16::try_from(self.payload.len()).unwrap_or(u16::MAX);
        b.extend_from_slice(&len.to_le_bytes());
        debug_assert_eq!(b.len(), RECORD_HEADER_LEN);
        b.extend_from_slice(&self.payload[..usize::from(len)]);
        b
    }

    /// Decodes one little-endian record from the front of `bytes`; returns it and its length.
    pub fn decode(bytes: &[u8]) -> Option<(Record, usize)> {
        let h = bytes.get(..RECORD_HEADER_LEN)?;
        let u32_at = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&h[o..o + 8]);
            u64::from_le_bytes(a)
        };
        if u32_at(0) != MAGIC_V7 {
            return None;
        }
        let pdu_len = usize::from(u16::from_le_bytes([h[46], h[47]]));
        let payload = bytes
            .get(RECORD_HEADER_LEN..RECORD_HEADER_LEN + pdu_len)?
            .to_vec();
        Some((
            Record {
                sequence: u32_at(4),
                time: u64_at(8),
                sector: u64_at(16),
                bytes: u32_at(24),
                action: u32_at(28),
                pid: u32_at(32),
                device: u32_at(36),
                cpu: u32_at(40),
                error: u16::from_le_bytes([h[44], h[45]]),
                payload,
            },
            RECORD_HEADER_LEN + pdu_len,
        ))
    }
}

/// Turns trace calls into blktrace records; shared bookkeeping of the binary and text sinks.
#[derive(Clone, Debug)]
pub(crate) struct RecordBuilder {
    pub labels: TraceLabels,
    pub cpu: u32,
    sequence: u32,
    announced: BTreeSet<u32>,
    plugged: u64,
}

impl RecordBuilder {
    pub fn new(labels: TraceLabels) -> RecordBuilder {
        RecordBuilder {
            labels,
            cpu: 0,
            sequence: 0,
            announced: BTreeSet::new(),
            plugged: 0,
        }
    }

    fn note(&self, now: Time, pid: u32, code: u32, payload: Vec<u8>) -> Record {
        Record {
            sequence: 0,
            time: now,
            sector: 0,
            bytes: 0,
            action: code | tc_act(category::NOTIFY),
            pid,
            device: self.labels.dev_t(),
            cpu: self.cpu,
            error: 0,
            payload,
        }
    }

    /// The records for one request event: a process note first if `rq.pid` is new, then
    /// the event itself.
    pub fn request(&mut self, now: Time, event: RqEvent, rq: &Request) -> Vec<Record> {
        let mut out = Vec::with_capacity(2);
        if self.announced.insert(rq.pid) {
            let mut comm = self.labels.comm(rq.pid).as_bytes().to_vec();
            comm.truncate(COMM_LEN - 1);
            comm.resize(COMM_LEN, 0);
            out.push(self.note(now, rq.pid, action::NOTE_PROCESS, comm));
        }
        let action = action_word(event, rq);
        let (sector, bytes, payload) = match event {
            RqEvent::Plug => {
                self.plugged = 0;
                (0, 0, Vec::new())
            }
            RqEvent::Unplug => {
                let depth = std::mem::take(&mut self.plugged);
                (0, 0, depth.to_be_bytes().to_vec())
            }
            _ => {
                if event == RqEvent::Insert {
                    self.plugged += 1;
                }
                let bytes = u32::try_from(rq.bytes()).unwrap_or(u32::MAX);
                (rq.sector, bytes, Vec::new())
            }
        };
        self.sequence += 1;
        out.push(Record {
            sequence: self.sequence,
            time: now,
            sector,
            bytes,
            action,
            pid: rq.pid,
            device: self.labels.dev_t(),
            cpu: self.cpu,
            error: 0,
            payload,
        });
        out
    }

    /// The record of one scheduler message.
    pub fn message(&mut self, now: Time, subject: MessageSubject, text: &str) -> Record {
        let text = self.labels.note_text(subject, text);
        self.note(now, 0, action::NOTE_MESSAGE, text.into_bytes())
    }
}

/// A [`Trace`] writing a blktrace binary (`<base>.blktrace.0`), readable by `blkparse -i
/// <base>` and, after `blkparse -d`, by `btt` and `fio --read_iolog`.
///
/// Write errors cannot travel through the [`Trace`] methods: the first one is kept, later
/// records are dropped, and [`BlktraceBinary::finish`] returns it.
pub struct BlktraceBinary<W: Write> {
    out: W,
    builder: RecordBuilder,
    error: Option<io::Error>,
}

impl BlktraceBinary<OutFile> {
    /// The file blktrace would write for CPU 0 of trace `base`: `<base>.blktrace.0`.
    pub fn path_for(base: &Path) -> PathBuf {
        let mut name = base.as_os_str().to_owned();
        name.push(".blktrace.0");
        PathBuf::from(name)
    }

    /// Creates `<base>.blktrace.0` through the output gate (`force`: the command line's
    /// `--force`); [`BlktraceBinary::finish`] returns the file to commit.
    pub fn create(base: &Path, labels: TraceLabels, force: bool) -> Result<Self, GateError> {
        let file = OutFile::create(&Self::path_for(base), force)?;
        Ok(BlktraceBinary::new(file, labels))
    }
}

impl<W: Write> BlktraceBinary<W> {
    /// A writer of records into `out`.
    pub fn new(out: W, labels: TraceLabels) -> Self {
        BlktraceBinary {
            out,
            builder: RecordBuilder::new(labels),
            error: None,
        }
    }

    /// The names this trace prints; register command names and cgroup paths here.
    pub fn labels_mut(&mut self) -> &mut TraceLabels {
        &mut self.builder.labels
    }

    fn emit(&mut self, record: &Record) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(&record.encode()) {
                self.error = Some(e);
            }
        }
    }

    /// Flushes and returns the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Trace for BlktraceBinary<W> {
    fn enabled(&self) -> bool {
        true
    }

    fn request(&mut self, now: Time, event: RqEvent, rq: &Request) {
        for record in self.builder.request(now, event, rq) {
            self.emit(&record);
        }
    }

    fn message(&mut self, now: Time, subject: MessageSubject, text: &str) {
        let record = self.builder.message(now, subject, text);
        self.emit(&record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_core::testing;

    #[test]
    fn record_header_is_48_bytes_with_fields_at_their_offsets() {
        let r = Record {
            sequence: 3,
            time: 0x0102_0304_0506_0708,
            sector: 2048,
            bytes: 4096,
            action: 0x0011_0001,
            pid: 5122,
            device: (8 << 20) | 16,
            cpu: 1,
            error: 0,
            payload: b"xy".to_vec(),
        };
        let b = r.encode();
        assert_eq!(b.len(), 50);
        assert_eq!(&b[0..4], &0x6561_7407u32.to_le_bytes());
        assert_eq!(&b[8..16], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(&b[36..40], &((8u32 << 20) | 16).to_le_bytes());
        assert_eq!(&b[46..48], &2u16.to_le_bytes());
        assert_eq!(Record::decode(&b), Some((r, 50)));
    }

    #[test]
    fn sync_read_queue_is_queue_read_sync() {
        let rq = testing::read(1, 2048, 8);
        let a = action_word(RqEvent::Queue, &rq);
        assert_eq!(a & 0xffff, action::QUEUE);
        assert_eq!(a >> 16, category::QUEUE | category::READ | category::SYNC);
        assert_eq!(rwbs(a, 4096), "RS");
    }

    #[test]
    fn rwbs_orders_flush_data_fua_sync() {
        use category as c;
        let a = tc_act(c::FLUSH | c::WRITE | c::FUA | c::SYNC);
        assert_eq!(rwbs(a, 4096), "FWFS");
        assert_eq!(rwbs(tc_act(c::DISCARD | c::WRITE), 4096), "D");
        assert_eq!(rwbs(tc_act(c::QUEUE), 0), "N");
        assert_eq!(rwbs(tc_act(c::READ | c::META), 512), "RM");
    }

    #[test]
    fn notes_are_framed_as_cfq_frames_them() {
        let mut l = TraceLabels::new(8, 16);
        l.set_cgroup_path(CgroupId(3), "/dbench");
        let q = |sync, noidle| MessageSubject::Queue {
            pid: 5122,
            cgroup: CgroupId::ROOT,
            sync,
            noidle,
        };
        assert_eq!(
            l.note_text(q(true, true), "insert_request"),
            "cfq5122SN / insert_request"
        );
        assert_eq!(
            l.note_text(q(false, false), "put_queue"),
            "cfq5122A  / put_queue"
        );
        assert_eq!(
            l.note_text(MessageSubject::Group(CgroupId(3)), "served: vt=1 min_vt=0"),
            "/dbench served: vt=1 min_vt=0"
        );
        assert_eq!(
            l.note_text(MessageSubject::Device, "idle timer fired"),
            "cfq idle timer fired"
        );
        l.cgroup_in_notes = false;
        assert_eq!(l.note_text(q(true, false), "preempt"), "cfq5122S  preempt");
        let long = "x".repeat(300);
        assert_eq!(
            l.note_text(MessageSubject::Device, &long).len(),
            NOTE_MAX_LEN
        );
    }

    #[test]
    fn first_event_of_a_pid_is_preceded_by_its_process_note() {
        let mut labels = TraceLabels::new(8, 0);
        labels.set_comm(7, "fio");
        let mut t = BlktraceBinary::new(Vec::new(), labels);
        let rq = testing::read(1, 0, 8);
        let rq = Request { pid: 7, ..rq };
        t.request(10, RqEvent::Queue, &rq);
        t.request(20, RqEvent::Issue, &rq);
        let bytes = t.finish().unwrap();
        let (note, n1) = Record::decode(&bytes).unwrap();
        assert_eq!(note.action, tc_act(category::NOTIFY));
        assert_eq!(&note.payload[..4], b"fio\0");
        assert_eq!(note.payload.len(), COMM_LEN);
        let (q, n2) = Record::decode(&bytes[n1..]).unwrap();
        assert_eq!((q.sequence, q.action & 0xffff), (1, action::QUEUE));
        let (d, n3) = Record::decode(&bytes[n1 + n2..]).unwrap();
        assert_eq!((d.sequence, d.time, d.bytes), (2, 20, 4096));
        assert_eq!(n1 + n2 + n3, bytes.len());
    }
}
