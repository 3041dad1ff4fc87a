//! Reading blktrace captures: the per-CPU files `blktrace -o NAME` writes (`NAME.blktrace.N`)
//! or one stream `blkparse -d` merged, decoded and merged across CPUs by time.
//!
//! A file is a run of records without a header: 48 bytes (magic and version, sequence, time
//! in ns, sector, bytes, action, pid, device, CPU, error, payload length) and then the
//! payload. blktrace stores them in the capturing machine's byte order; the first record's
//! magic says which, and every later record must agree. Each malformed input stops decoding
//! with one [`DecodeError`] naming the file and the byte offset of the record at fault.
//!
//! Of the events, replay keeps the queue events (`Q`: a bio entering the block layer, with
//! its submitter's pid), the completions (`C`, to measure each process's think time) and the
//! process notes (command names). See [`Capture::ios`] for what a `Q` becomes.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};

use iosched_core::{Time, SECTOR_SIZE};

use super::TraceIo;
use crate::generator::IoKind;

/// `BLK_IO_TRACE_MAGIC` (upper 24 bits of the first word).
const MAGIC: u32 = 0x6561_7400;
/// The record version this decoder reads (every CFQ-era kernel writes 7).
const VERSION: u32 = 7;
/// Bytes of a record header.
pub const HEADER_LEN: usize = 48;

// Action codes (low 16 bits) and categories (high 16 bits), `blktrace_api.h`.
const ACT_QUEUE: u32 = 1;
const ACT_COMPLETE: u32 = 8;
const NOTE_PROCESS: u32 = 0;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_SYNC: u32 = 1 << 3;
const TC_PC: u32 = 1 << 9;
const TC_NOTIFY: u32 = 1 << 10;
const TC_META: u32 = 1 << 12;
const TC_DISCARD: u32 = 1 << 13;

/// Why a capture cannot be read: which file, which byte, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub file: PathBuf,
    /// Byte offset of the record at fault (0 for a file that cannot be opened).
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: byte {}: {}",
            self.file.display(),
            self.offset,
            self.message
        )
    }
}

impl std::error::Error for DecodeError {}

/// One decoded record header and its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRecord {
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

impl RawRecord {
    fn category(&self, cat: u32) -> bool {
        self.action & (cat << 16) != 0
    }

    fn code(&self) -> u32 {
        self.action & 0xffff
    }
}

/// Byte order of a capture, from its first record's magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u16(self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        match self {
            Order::Little => u16::from_le_bytes(a),
            Order::Big => u16::from_be_bytes(a),
        }
    }

    fn u32(self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        match self {
            Order::Little => u32::from_le_bytes(a),
            Order::Big => u32::from_be_bytes(a),
        }
    }

    fn u64(self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        match self {
            Order::Little => u64::from_le_bytes(a),
            Order::Big => u64::from_be_bytes(a),
        }
    }

    fn other(self) -> Order {
        match self {
            Order::Little => Order::Big,
            Order::Big => Order::Little,
        }
    }
}

fn is_magic(word: u32) -> bool {
    word & 0xffff_ff00 == MAGIC
}

/// Whether `bytes` start with a blktrace record's magic, in either byte order (fio's
/// `is_blktrace()` check).
pub fn starts_with_magic(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && (is_magic(Order::Little.u32(bytes)) || is_magic(Order::Big.u32(bytes)))
}

/// Decodes every record of one file's bytes; `file` names it in errors.
pub fn decode(file: &Path, bytes: &[u8]) -> Result<Vec<RawRecord>, DecodeError> {
    let error = |offset: usize, message: String| DecodeError {
        file: file.to_path_buf(),
        offset: offset as u64,
        message,
    };
    let mut records = Vec::with_capacity(bytes.len() / HEADER_LEN);
    let mut order: Option<Order> = None;
    let mut at = 0usize;
    while at < bytes.len() {
        let left = bytes.len() - at;
        if left < HEADER_LEN {
            return Err(error(
                at,
                format!("truncated record: {left} of the header's {HEADER_LEN} bytes"),
            ));
        }
        let h = &bytes[at..at + HEADER_LEN];
        let order = *order.get_or_insert_with(|| {
            if is_magic(Order::Little.u32(h)) {
                Order::Little
            } else {
                Order::Big
            }
        });
        let word = order.u32(h);
        if !is_magic(word) {
            let message = if is_magic(order.other().u32(h)) {
                let name = |o: Order| match o {
                    Order::Little => "little",
                    Order::Big => "big",
                };
                format!(
                    "record in {}-endian order in a {}-endian capture",
                    name(order.other()),
                    name(order)
                )
            } else {
                format!("bad magic 0x{word:08x} (not a blktrace record)")
            };
            return Err(error(at, message));
        }
        if word & 0xff != VERSION {
            return Err(error(
                at,
                format!(
                    "blktrace record version {} (only version {VERSION} is read)",
                    word & 0xff
                ),
            ));
        }
        let pdu_len = usize::from(order.u16(&h[46..]));
        if pdu_len > left - HEADER_LEN {
            return Err(error(
                at,
                format!(
                    "payload of {pdu_len} bytes runs past the end of the file ({} bytes left)",
                    left - HEADER_LEN
                ),
            ));
        }
        let (sector, bytes_moved) = (order.u64(&h[16..]), order.u32(&h[24..]));
        // sector × 512 would wrap past 2^64 (sector 2^62 became byte 0): refuse any record
        // reaching past 2^63 bytes, which no block device has.
        if sector
            .checked_mul(SECTOR_SIZE)
            .and_then(|start| start.checked_add(u64::from(bytes_moved)))
            .is_none_or(|end| end > super::MAX_IO_END)
        {
            return Err(error(
                at,
                format!("sector {sector} (+{bytes_moved} bytes) ends past 2^63 bytes: no device is that large"),
            ));
        }
        records.push(RawRecord {
            sequence: order.u32(&h[4..]),
            time: order.u64(&h[8..]),
            sector,
            bytes: bytes_moved,
            action: order.u32(&h[28..]),
            pid: order.u32(&h[32..]),
            device: order.u32(&h[36..]),
            cpu: order.u32(&h[40..]),
            error: order.u16(&h[44..]),
            payload: bytes[at + HEADER_LEN..at + HEADER_LEN + pdu_len].to_vec(),
        });
        at += HEADER_LEN + pdu_len;
    }
    Ok(records)
}

/// The files of capture `path`: the file itself when it exists (one merged stream, or one
/// CPU's file together with its siblings `NAME.blktrace.N`), else every `path.blktrace.N`.
pub fn capture_files(path: &Path) -> Result<Vec<PathBuf>, DecodeError> {
    let not_found = |message: String| DecodeError {
        file: path.to_path_buf(),
        offset: 0,
        message,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = match cpu_suffix(&name) {
        Some(stem) => stem.to_string(),
        None if path.is_file() => return Ok(vec![path.to_path_buf()]),
        // `iosched run --trace NAME.blktrace` writes `NAME.blktrace.0`: either name opens it.
        None => name.strip_suffix(".blktrace").unwrap_or(&name).to_string(),
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| not_found(format!("cannot list {}: {e}", dir.display())))?;
    let mut files: Vec<(u32, PathBuf)> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let file = entry.file_name().to_string_lossy().into_owned();
            let cpu = file.strip_prefix(&base)?.strip_prefix(".blktrace.")?;
            Some((cpu.parse().ok()?, entry.path()))
        })
        .collect();
    if files.is_empty() {
        return Err(not_found(format!(
            "no such capture: neither the file nor {base}.blktrace.N exists"
        )));
    }
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// `NAME` of a `NAME.blktrace.N` file name.
fn cpu_suffix(name: &str) -> Option<&str> {
    let (stem, cpu) = name.rsplit_once(".blktrace.")?;
    (!cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit())).then_some(stem)
}

/// A capture's records of all CPUs, in time order.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub records: Vec<RawRecord>,
}

impl Capture {
    /// Reads and merges the files of capture `path` (see [`capture_files`]).
    pub fn open(path: &Path) -> Result<Capture, DecodeError> {
        let mut per_file = Vec::new();
        for file in capture_files(path)? {
            let bytes =
                crate::input::read_bytes(&file, crate::input::InputKind::Capture).map_err(|e| {
                    DecodeError {
                        file: file.clone(),
                        offset: 0,
                        message: format!("cannot read: {}", e.reason()),
                    }
                })?;
            per_file.push(decode(&file, &bytes)?);
        }
        Ok(Capture::merge(per_file))
    }

    /// Merges per-CPU record lists by time (ties: file order, then each file's order), as
    /// `blkparse` interleaves its inputs.
    pub fn merge(per_file: Vec<Vec<RawRecord>>) -> Capture {
        let mut keyed: Vec<(u64, usize, usize, RawRecord)> = per_file
            .into_iter()
            .enumerate()
            .flat_map(|(file, records)| {
                records
                    .into_iter()
                    .enumerate()
                    .map(move |(i, r)| (r.time, file, i, r))
            })
            .collect();
        keyed.sort_by_key(|k| (k.0, k.1, k.2));
        Capture {
            records: keyed.into_iter().map(|k| k.3).collect(),
        }
    }

    /// Command names from the process notes, by pid.
    pub fn comms(&self) -> BTreeMap<u32, String> {
        let mut comms = BTreeMap::new();
        for r in &self.records {
            if r.category(TC_NOTIFY) && r.code() == NOTE_PROCESS {
                let end = r.payload.iter().position(|&b| b == 0);
                let text = &r.payload[..end.unwrap_or(r.payload.len())];
                comms.insert(r.pid, String::from_utf8_lossy(text).into_owned());
            }
        }
        comms
    }

    /// The I/Os of the capture: one per `Q` event of a file-system request (SCSI
    /// pass-through `pc` events are left out), times from the first `Q`, each with the time
    /// the `C` event that covered it completed (when the capture holds one).
    ///
    /// A `C` event names the whole request (its first sector and size after merges); it
    /// completes every queued, not yet completed bio of the same direction inside that range.
    /// A flush's `C` completes the oldest pending flush.
    pub fn ios(&self) -> Vec<TraceIo> {
        let mut ios: Vec<TraceIo> = Vec::new();
        let mut pending: BTreeMap<(bool, u64), Vec<usize>> = BTreeMap::new();
        let mut flushes: VecDeque<usize> = VecDeque::new();
        let t0 = self
            .records
            .iter()
            .find(|r| is_fs_event(r, ACT_QUEUE))
            .map_or(0, |r| r.time);
        for r in &self.records {
            if is_fs_event(r, ACT_QUEUE) {
                // A data-less queue event that is no flush (an `N`) moves nothing.
                let Some(io) = queue_io(r, r.time.saturating_sub(t0)) else {
                    continue;
                };
                let index = ios.len();
                if io.kind == IoKind::Fsync {
                    flushes.push_back(index);
                } else {
                    let key = (r.category(TC_WRITE), r.sector);
                    pending.entry(key).or_default().push(index);
                }
                ios.push(io);
            } else if is_fs_event(r, ACT_COMPLETE) {
                let done = r.time.saturating_sub(t0);
                if r.bytes == 0 && (r.category(TC_FLUSH) || r.category(TC_WRITE)) {
                    if let Some(index) = flushes.pop_front() {
                        ios[index].completed = Some(done);
                    }
                    continue;
                }
                let write = r.category(TC_WRITE);
                let end = r.sector + u64::from(r.bytes).div_ceil(SECTOR_SIZE).max(1);
                let keys: Vec<(bool, u64)> = pending
                    .range((write, r.sector)..(write, end))
                    .map(|(k, _)| *k)
                    .collect();
                for key in keys {
                    for index in pending.remove(&key).unwrap_or_default() {
                        ios[index].completed = Some(done);
                    }
                }
            }
        }
        ios
    }
}

fn is_fs_event(r: &RawRecord, code: u32) -> bool {
    r.code() == code && !r.category(TC_NOTIFY) && !r.category(TC_PC)
}

/// A `Q` record as an I/O: discard, flush (no data), write or read; sync and meta from the
/// categories.
fn queue_io(r: &RawRecord, time: Time) -> Option<TraceIo> {
    let kind = if r.category(TC_DISCARD) {
        IoKind::Trim
    } else if r.bytes == 0 && (r.category(TC_FLUSH) || r.category(TC_WRITE)) {
        // A flush; kernels before 4.8 mark an empty flush only as a write.
        IoKind::Fsync
    } else if r.bytes == 0 {
        return None;
    } else if r.category(TC_WRITE) {
        IoKind::Write
    } else {
        // A read carries TC_READ, or no direction bit at all on 2.6 kernels.
        IoKind::Read
    };
    Some(TraceIo {
        time,
        pid: r.pid,
        kind,
        file: 0,
        offset: r.sector * SECTOR_SIZE,
        len: u64::from(r.bytes),
        sync: r.category(TC_SYNC) || kind == IoKind::Read,
        meta: r.category(TC_META),
        completed: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TC_READ: u32 = 1 << 0;

    /// One record in `order` (the layout `blktrace_api.h` gives `struct blk_io_trace`).
    pub(crate) fn encode(r: &RawRecord, big: bool) -> Vec<u8> {
        let mut b = Vec::new();
        let mut put = |bytes: &[u8]| {
            if big {
                b.extend(bytes.iter().rev());
            } else {
                b.extend_from_slice(bytes);
            }
        };
        put(&(MAGIC | VERSION).to_le_bytes());
        put(&r.sequence.to_le_bytes());
        put(&r.time.to_le_bytes());
        put(&r.sector.to_le_bytes());
        put(&r.bytes.to_le_bytes());
        put(&r.action.to_le_bytes());
        put(&r.pid.to_le_bytes());
        put(&r.device.to_le_bytes());
        put(&r.cpu.to_le_bytes());
        put(&r.error.to_le_bytes());
        put(&(r.payload.len() as u16).to_le_bytes());
        b.extend_from_slice(&r.payload);
        b
    }

    fn record(time: u64, action: u32, sector: u64, bytes: u32, pid: u32) -> RawRecord {
        RawRecord {
            sequence: 1,
            time,
            sector,
            bytes,
            action,
            pid,
            device: 8 << 20,
            cpu: 0,
            error: 0,
            payload: Vec::new(),
        }
    }

    const Q_READ_SYNC: u32 = ACT_QUEUE | ((TC_READ | TC_SYNC | (1 << 4)) << 16);
    const Q_WRITE: u32 = ACT_QUEUE | ((TC_WRITE | (1 << 4)) << 16);
    const C_READ: u32 = ACT_COMPLETE | ((TC_READ | (1 << 7)) << 16);

    #[test]
    fn both_byte_orders_decode_to_the_same_records() {
        let r = RawRecord {
            payload: b"fio\0".to_vec(),
            ..record(5, Q_READ_SYNC, 2048, 4096, 77)
        };
        for big in [false, true] {
            let bytes = encode(&r, big);
            assert_eq!(decode(Path::new("t"), &bytes).unwrap(), vec![r.clone()]);
        }
    }

    #[test]
    fn malformed_captures_name_the_file_and_byte() {
        let good = encode(&record(1, Q_READ_SYNC, 0, 4096, 1), false);
        let two = [good.clone(), good.clone()].concat();
        let err = |bytes: &[u8]| decode(Path::new("cap.blktrace.0"), bytes).unwrap_err();
        // Truncated header.
        let e = err(&two[..48 + 20]);
        assert_eq!(e.offset, 48);
        assert!(e.message.contains("truncated"), "{e}");
        assert!(e.to_string().starts_with("cap.blktrace.0: byte 48: "));
        // Bad magic in the second record.
        let mut bad = two.clone();
        bad[48] ^= 0xff;
        bad[51] = 0;
        let e = err(&bad);
        assert_eq!(
            (e.offset, e.message.contains("bad magic")),
            (48, true),
            "{e}"
        );
        // The second record in the other byte order.
        let swapped = [good.clone(), encode(&record(2, Q_WRITE, 8, 512, 1), true)].concat();
        let e = err(&swapped);
        assert_eq!(e.offset, 48);
        assert!(e.message.contains("big-endian order"), "{e}");
        // A payload longer than what is left.
        let mut long = good.clone();
        long[46] = 200;
        let e = err(&long);
        assert_eq!(e.offset, 0);
        assert!(e.message.contains("payload of 200 bytes"), "{e}");
        // Another version.
        let mut v8 = good;
        v8[0] = 8;
        assert!(err(&v8).message.contains("version 8"));
    }

    #[test]
    fn completions_cover_the_bios_a_request_merged() {
        // Two 4 KiB bios of pid 9 at sectors 0 and 8 merged into one 8 KiB request.
        let records = vec![
            record(100, Q_READ_SYNC, 0, 4096, 9),
            record(110, Q_READ_SYNC, 8, 4096, 9),
            record(120, Q_WRITE, 8, 4096, 4),
            record(500, C_READ, 0, 8192, 0),
            record(600, ACT_QUEUE | (1 << 20), 0, 0, 3),
            record(700, Q_WRITE, 0, 0, 3),
        ];
        let ios = Capture { records }.ios();
        assert_eq!(ios.len(), 4, "the empty non-write queue event is no I/O");
        assert_eq!((ios[3].kind, ios[3].len), (IoKind::Fsync, 0));
        assert_eq!((ios[0].time, ios[1].time), (0, 10));
        assert_eq!(ios[0].completed, Some(400));
        assert_eq!(ios[1].completed, Some(400));
        assert_eq!(
            ios[2].completed, None,
            "a write is not completed by a read's C"
        );
        assert_eq!((ios[2].kind, ios[2].sync), (IoKind::Write, false));
        assert_eq!((ios[1].offset, ios[1].len), (4096, 4096));
    }

    #[test]
    fn per_cpu_files_merge_by_time() {
        let a = vec![
            record(10, Q_WRITE, 0, 512, 1),
            record(30, Q_WRITE, 2, 512, 1),
        ];
        let b = vec![record(20, Q_WRITE, 1, 512, 2)];
        let c = Capture::merge(vec![a, b]);
        let times: Vec<u64> = c.records.iter().map(|r| r.time).collect();
        assert_eq!(times, [10, 20, 30]);
    }

    #[test]
    fn capture_files_finds_every_cpu() {
        let dir = crate::scratch::ScratchDir::new("cap");
        for cpu in [1, 0, 10] {
            std::fs::write(dir.join(format!("sdb.blktrace.{cpu}")), b"").unwrap();
        }
        let found = capture_files(&dir.join("sdb")).unwrap();
        let names: Vec<String> = found
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["sdb.blktrace.0", "sdb.blktrace.1", "sdb.blktrace.10"]
        );
        assert_eq!(capture_files(&dir.join("sdb.blktrace.1")).unwrap().len(), 3);
        assert_eq!(capture_files(&dir.join("sdb.blktrace")).unwrap().len(), 3);
        assert!(capture_files(&dir.join("sdc")).is_err());
    }

    fn arb_record() -> impl Strategy<Value = RawRecord> {
        (
            any::<u32>(),
            any::<u64>(),
            // A valid record ends by 2^63 bytes whatever its size.
            0..(1u64 << 54) - (1 << 24),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            proptest::collection::vec(any::<u8>(), 0..40),
        )
            .prop_map(
                |(sequence, time, sector, bytes, action, pid, payload)| RawRecord {
                    sequence,
                    time,
                    sector,
                    bytes,
                    action,
                    pid,
                    device: 8 << 20 | 16,
                    cpu: sequence % 4,
                    error: 0,
                    payload,
                },
            )
    }

    proptest! {
        /// Any valid run of records decodes to itself in either byte order; cut anywhere
        /// inside a record, it fails at that record's offset and never panics.
        #[test]
        fn records_round_trip_and_cuts_are_located(
            records in proptest::collection::vec(arb_record(), 1..8),
            big in any::<bool>(),
            cut in any::<prop::sample::Index>(),
        ) {
            let encoded: Vec<Vec<u8>> = records.iter().map(|r| encode(r, big)).collect();
            let bytes = encoded.concat();
            prop_assert_eq!(decode(Path::new("f"), &bytes).unwrap(), records.clone());
            let at = cut.index(bytes.len());
            let mut start = 0;
            let mut record_start = 0;
            for e in &encoded {
                if start + e.len() > at {
                    record_start = start;
                    break;
                }
                start += e.len();
                record_start = start;
            }
            match decode(Path::new("f"), &bytes[..at]) {
                Ok(decoded) => {
                    prop_assert_eq!(record_start, at, "only a cut between records decodes");
                    prop_assert!(decoded.len() < records.len() || at == bytes.len());
                }
                Err(e) => prop_assert_eq!(e.offset, record_start as u64),
            }
        }

        /// Arbitrary bytes give records or one located error, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Err(e) = decode(Path::new("f"), &bytes) {
                prop_assert!(e.offset < bytes.len() as u64);
            }
        }
    }

    /// Issue 28: sector 2^62 times 512 wrapped to byte 0; a record reaching past 2^63 bytes
    /// is refused at its offset.
    #[test]
    fn a_record_past_2_63_bytes_is_refused() {
        let good = encode(&record(1, Q_READ_SYNC, 0, 4096, 1), false);
        let far = encode(&record(2, Q_READ_SYNC, 1 << 62, 4096, 1), false);
        let e = decode(Path::new("c"), &[good.clone(), far].concat()).unwrap_err();
        assert_eq!(e.offset, 48);
        assert!(e.message.contains("ends past 2^63 bytes"), "{e}");
        let last = (1u64 << 63) / SECTOR_SIZE - 8;
        let edge = encode(&record(2, Q_READ_SYNC, last, 4096, 1), false);
        assert!(decode(Path::new("c"), &[good, edge].concat()).is_ok());
    }
}
