//! The simulated file system under buffered I/O: files as extents on the device, the page
//! cache and writeback policy of `iosched-writeback`, a jbd2-like journal, and the
//! writeback and journal threads as simulated processes.
//!
//! It is active for jobs with `direct=0` (any ioengine, `mmap` included: a store to a clean
//! mapped page faults and dirties it like a `write()`; a store to a page already dirty costs
//! only the copy and is never throttled); `direct=1` jobs bypass it as O_DIRECT bypasses the
//! cache. What each buffered operation becomes:
//! - read: cached pages cost CPU time only; misses become sync reads from the process (the
//!   request plus any read-ahead window); async read-ahead is issued and not waited for;
//! - write: dirties pages after `balance_dirty_pages` lets it (the writer sleeps when
//!   throttled; the time is reported per job); a write to a never-written block allocates
//!   (metadata for the journal) and updates the inode (mtime, also journalled);
//! - fsync / fdatasync (`fsync=`, `fdatasync=`, `end_fsync=`): the file's dirty pages are
//!   written as sync writes from the caller; it waits for them and for writeback already in
//!   flight; then, if the file's metadata is in an uncommitted transaction (for fdatasync,
//!   only allocation counts), it asks the journal thread to commit and waits for the commit.
//!   With nothing to commit and barriers on, it issues a cache flush itself (ext4's
//!   `blkdev_issue_flush` in `ext4_sync_file`).
//! - writeback threads write dirty pages back asynchronously (no REQ_SYNC) through the
//!   scheduler, charged to the root cgroup (the writer's group is not tracked).
//!
//! Sim options (passed with the writeback knobs): `barrier=0|1` (default 1),
//! `page_cpu_ns` (CPU time per page copied or faulted, default 1000 ns, a flat delay used
//! only while the CPU model is off), `commit_ms` (journal commit interval, default 5000),
//! `cpu_era` and `cpus` (the simulated CPUs, `crate::cpu`: with an era, operations cost that
//! era's CPU time on the machine's `cpus` CPUs instead of `page_cpu_ns`).
//!
//! Choice: `pre_read=1` fills the cache without device time, as fio does it before the
//! job's clock starts; otherwise `invalidate=1` (fio's default) drops the files' clean pages
//! when the job starts; `sync=1` (O_SYNC) makes each write sync its file before returning; `overwrite=1`, `pre_read=1`, a job that reads the file, or a device
//! path make the whole file count as written (no allocation on write); otherwise blocks
//! are unwritten until first written, and unwritten pages read as zeros without I/O.
//!
//! Choice: files keep the contiguous extents of `crate::layout` (ext4 block-group spreading
//! is not modelled); the journal is laid out after the last file (128 MiB, or what fits;
//! the first MiB if nothing fits), as a file created after the data would be.

mod driver;
mod flushing;
pub mod journal;
mod op_slab;
mod summary;

use iosched_core::{Time, NSEC_PER_MSEC, SECTOR_SIZE};
use iosched_workload::job::{FadviseHint, RwMode, Workload};
use iosched_workload::JobSpec;
use iosched_writeback::{
    Advice, FlusherId, PageRange, QueueState, Writeback, WritebackConfig, PAGE_SIZE,
};

use crate::layout::Layout;
use journal::{Journal, Tid};
pub(crate) use op_slab::OpSlab;

/// pid (and io context) of the journal thread, `jbd2/sdX-8`.
pub const JOURNAL_PID: u32 = 190;
/// 100 ms: spacing of the dirty/writeback time series.
pub const SAMPLE_INTERVAL_NS: Time = 100 * NSEC_PER_MSEC;
/// Most samples kept (10 000 × 100 ms ≈ 17 min of virtual time).
pub const SAMPLES_MAX: usize = 10_000;
/// 128 MiB: ext4's journal size on a large file system.
const JOURNAL_BYTES: u64 = 128 << 20;

/// File-system options and the writeback knobs.
#[derive(Clone, Debug)]
pub struct FsConfig {
    pub writeback: WritebackConfig,
    /// Journal commit blocks carry flush/FUA (`barrier=1`, ext4's default).
    pub barrier: bool,
    /// CPU time to copy (or fault in) one page in the page cache.
    pub page_cpu_ns: Time,
    /// Journal commit interval (`commit=`), ns.
    pub commit_interval_ns: Time,
    /// The machine era whose CPU costs the simulated CPUs charge (`cpu_era=`); `None`: the
    /// CPU model is off (see [`crate::cpu`]).
    pub cpu_era: Option<crate::cpu::Era>,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            writeback: WritebackConfig::default(),
            barrier: true,
            page_cpu_ns: 1000,
            commit_interval_ns: 5000 * NSEC_PER_MSEC,
            cpu_era: None,
        }
    }
}

impl FsConfig {
    /// Whether `name` is a file-system or writeback knob (the CLI splits `--set` with it).
    /// The defaults with `knobs` applied in order (`--set` and `--mem`).
    pub fn from_knobs(knobs: &[(String, String)]) -> Result<FsConfig, String> {
        let mut config = FsConfig::default();
        for (name, value) in knobs {
            config.set(name, value)?;
        }
        Ok(config)
    }

    pub fn is_knob(name: &str) -> bool {
        matches!(
            name,
            "barrier" | "page_cpu_ns" | "commit_ms" | "cpu_era" | "cpus"
        ) || WritebackConfig::is_knob(name)
    }

    /// Sets one knob.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let number = || {
            value
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("{name}={value}: expected a whole number"))
        };
        match name {
            "barrier" => {
                self.barrier = match value.trim() {
                    "0" => false,
                    "1" => true,
                    _ => return Err(format!("{name}={value}: expected 0 or 1")),
                }
            }
            "page_cpu_ns" => self.page_cpu_ns = number()?,
            "commit_ms" => self.commit_interval_ns = number()?.max(1) * NSEC_PER_MSEC,
            "cpus" => {
                self.writeback.cpus = number()
                    .ok()
                    .filter(|n| (1..=4096).contains(n))
                    .ok_or_else(|| format!("{name}={value}: expected CPUs 1..=4096"))?
            }
            "cpu_era" => {
                self.cpu_era = match value.trim() {
                    "" | "off" => None,
                    name => Some(crate::cpu::era(name).ok_or_else(|| {
                        let known: Vec<_> = crate::cpu::ERAS.iter().map(|e| e.name).collect();
                        format!(
                            "{name}={value}: unknown machine era (known: off, {})",
                            known.join(", ")
                        )
                    })?),
                }
            }
            _ => return self.writeback.set(name, value).map_err(|e| e.to_string()),
        }
        Ok(())
    }

    /// Every knob with its meaning, in the order of [`FsConfig::knobs`].
    pub fn meanings() -> Vec<(&'static str, &'static str)> {
        let mut meanings: Vec<(&str, &str)> = iosched_writeback::config::KNOBS
            .iter()
            .copied()
            .zip(iosched_writeback::config::KNOB_MEANINGS.iter().copied())
            .collect();
        meanings.push((
            "barrier",
            "1: journal commits carry a cache flush and FUA (ext4's barrier=1)",
        ));
        meanings.push((
            "page_cpu_ns",
            "CPU time to copy, fault in or dirty one page",
        ));
        meanings.push(("commit_ms", "journal commit interval (ext4's commit=)"));
        meanings.push((
            "cpus",
            "CPUs of the simulated machine ($ncpus; the dirty ratelimit; with cpu_era, the run queue)",
        ));
        meanings.push((
            "cpu_era",
            "CPU costs of a machine era (server-2009, desktop-2016, phone-2022; off: no CPU model)",
        ));
        meanings
    }

    /// Every knob and its value, for the JSON echo.
    pub fn knobs(&self) -> Vec<(String, String)> {
        let mut knobs: Vec<(String, String)> = self
            .writeback
            .knobs()
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect();
        knobs.push(("barrier".into(), u8::from(self.barrier).to_string()));
        knobs.push(("page_cpu_ns".into(), self.page_cpu_ns.to_string()));
        knobs.push((
            "commit_ms".into(),
            (self.commit_interval_ns / NSEC_PER_MSEC).to_string(),
        ));
        if let Some(era) = self.cpu_era {
            // Echoed only when set: a run without the CPU model reads as before it existed.
            knobs.push(("cpu_era".into(), era.name.to_string()));
            knobs.push(("cpus".into(), self.writeback.cpus.to_string()));
        }
        knobs
    }
}

/// A file's place on the device: one extent per contiguous run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMap {
    /// (first byte in the file, first sector, bytes).
    pub extents: Vec<(u64, u64, u64)>,
    /// A device path: no journal, no allocation.
    pub is_device: bool,
}

impl FileMap {
    /// Device runs (sector, sectors) covering `pages` of the file, split at extent ends.
    pub fn sectors(&self, range: PageRange) -> Vec<(u64, u64, PageRange)> {
        let mut out = Vec::new();
        self.sectors_into(range, &mut out);
        out
    }

    /// [`FileMap::sectors`] into `out` (cleared first): a caller's buffer, reused.
    pub fn sectors_into(&self, range: PageRange, out: &mut Vec<(u64, u64, PageRange)>) {
        out.clear();
        let mut page = range.first;
        let end = range.end();
        while page < end {
            let byte = page * PAGE_SIZE;
            let Some(&(start, sector, len)) = self
                .extents
                .iter()
                .find(|&&(s, _, l)| byte >= s && byte < s + l)
                .or(self.extents.last())
            else {
                break;
            };
            let extent_end_page = ((start + len).div_ceil(PAGE_SIZE)).max(page + 1);
            let count = (end.min(extent_end_page)) - page;
            let first_sector = sector + (byte - start) / SECTOR_SIZE;
            out.push((
                first_sector,
                count * PAGE_SIZE / SECTOR_SIZE,
                PageRange {
                    file: range.file,
                    first: page,
                    count,
                },
            ));
            page += count;
        }
    }
}

/// Whether `page` holds data on the device, given a file's allocation bitmap (`None`: all).
pub(crate) fn page_written(allocated: &Option<Vec<u64>>, page: u64) -> bool {
    match allocated {
        None => true,
        Some(bits) => bits
            .get((page / 64) as usize)
            .is_some_and(|word| word & (1 << (page % 64)) != 0),
    }
}

/// Where the journal goes: (start sector, sectors).
pub fn journal_area(layout: &Layout, capacity_sectors: u64) -> (u64, u64) {
    let mib = (1u64 << 20) / SECTOR_SIZE;
    let end = layout
        .files
        .iter()
        .filter(|f| !f.name.starts_with("/dev/"))
        .map(|f| f.start_sector() + f.bytes.div_ceil(SECTOR_SIZE))
        .max()
        .unwrap_or(mib);
    let start = end.div_ceil(mib) * mib;
    let room = capacity_sectors.saturating_sub(start);
    if room >= mib {
        (start, room.min(JOURNAL_BYTES / SECTOR_SIZE))
    } else {
        // The first MiB is never given to files.
        (8, mib - 8)
    }
}

/// One point of the writeback time series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WbSample {
    pub time_ns: Time,
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
    pub flushers: u32,
}

/// What the file-system layer adds to a simulation's outcome.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FsOutcome {
    /// Time each clone spent throttled in `balance_dirty_pages`, ns (index = clone).
    pub throttled_ns: Vec<Time>,
    /// Dirty and writeback bytes and live writeback threads every 100 ms.
    pub series: Vec<WbSample>,
    /// Knobs in force.
    pub knobs: Vec<(String, String)>,
    pub flusher_mode: String,
    /// Most writeback threads alive at once.
    pub flushers_peak: u32,
    /// Pages written back by writeback threads and by fsync.
    pub pages_written_back: u64,
    /// Pages dirtied (clean → dirty transitions); equals `pages_written_back` plus
    /// `pages_cancelled` when everything was synced.
    pub pages_dirtied: u64,
    /// Dirty pages dropped unwritten by truncation or unlink.
    pub pages_cancelled: u64,
    /// Dirty pages left when the run ended.
    pub dirty_pages_at_end: u64,
    /// Bytes read from the device by buffered reads (misses and read-ahead).
    pub read_bytes: u64,
    pub cache_hit_pages: u64,
    pub journal_commits: u64,
    pub evicted_pages: u64,
    /// Dirty + writeback pages at their highest, and the hard limit, in pages.
    pub dirty_peak_pages: u64,
    pub dirty_limit_pages: u64,
    pub dirty_background_pages: u64,
}

/// Who is waiting for a request the file system issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsTag {
    /// Part of a process's buffered operation (a read miss, an fsync write or flush).
    Op {
        token: u64,
        range: Option<PageRange>,
        read: bool,
    },
    /// Async read-ahead nobody waits for.
    ReadAhead(PageRange),
    /// A writeback thread's write.
    Flusher {
        id: FlusherId,
        range: PageRange,
    },
    /// A throttled writer's own async writeback (`dirty_throttle=writeback`).
    WriterWriteback(PageRange),
    Journal,
}

/// The tags of requests in flight, each in a slot its request carries; a freed slot is
/// taken again first.
#[derive(Debug, Default)]
pub(crate) struct FsTags {
    slots: Vec<Option<FsTag>>,
    free: Vec<u32>,
}

impl FsTags {
    /// Keeps `tag` and answers its slot.
    pub fn put(&mut self, tag: FsTag) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(tag);
                slot
            }
            None => {
                self.slots.push(Some(tag));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 requests in flight")
            }
        }
    }

    /// The tag kept in `slot`, which is freed.
    pub fn take(&mut self, slot: u32) -> FsTag {
        let tag = self.slots[slot as usize].take().expect("a tag kept once");
        self.free.push(slot);
        tag
    }
}

/// File-system events in the simulator's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FsEvent {
    /// A buffered operation's CPU time or throttle sleep ended.
    Op(u64),
    /// A writer writing back under `dirty_throttle=writeback` got the CPU time of its walk.
    WriterCpu(u64),
    /// Step a writeback thread (stale generations are ignored).
    Flusher { id: u32, generation: u64 },
    /// A writeback thread that waited for a CPU finished its walk.
    FlusherWalked { id: u32 },
    /// The pdflush periodic timer.
    WbTimer,
    /// The journal's commit interval for transaction `tid`.
    JournalTimer { tid: u64 },
}

/// Where a buffered operation stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OpPhase {
    /// A read waiting for its misses (outstanding) or for others' reads (parked).
    Read,
    /// Over the dirty limit: retry the write at the event.
    Throttled,
    /// Over the dirty limit with `dirty_throttle=writeback`: the writer is writing back
    /// `chunk` pages itself (`written` so far), since `since`.
    WriterWriteback {
        written: u64,
        chunk: u64,
        since: Time,
    },
    /// Done apart from CPU time / pause: completes at the event.
    Finishing,
    /// fsync: data writes outstanding, then writeback in flight, then the commit.
    FsyncData,
    FsyncCommit(Tid),
    FsyncFlush,
}

/// A buffered operation of a process in progress.
#[derive(Clone, Debug)]
pub(crate) struct FsOp {
    pub process: usize,
    pub unit: iosched_workload::generator::IoUnit,
    pub submitted_at: Time,
    pub outstanding: u32,
    pub phase: OpPhase,
    /// fsync write passes issued.
    pub round: u8,
    /// `balance_dirty_pages()` already let this write through (it wrote back its chunk).
    pub balanced: bool,
    /// Pages this read brought into the cache (allocated, with the CPU model on).
    pub cpu_pages: u64,
}

/// How a writeback thread waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FlusherWait {
    Running,
    /// Stepped again on the next completion of an async request.
    Request,
    /// Stepped when async requests drop below the congestion-off mark (or at its timer).
    Congestion,
    Timer,
    Idle,
}

#[derive(Clone, Debug)]
pub(crate) struct FlusherProc {
    pub pid: u32,
    pub generation: u64,
    pub wait: FlusherWait,
    /// Busy in the CPU (the writeback walk) until then: not stepped before.
    pub busy_until: Time,
}

/// Per-file metadata state.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileMeta {
    /// Allocated pages (bit per page); `None` = all written.
    pub allocated: Option<Vec<u64>>,
    /// Last transaction holding the inode update / an allocation.
    pub inode_tid: Tid,
    pub alloc_tid: Tid,
}

/// The file system's state inside a simulation.
pub(crate) struct FsState {
    pub config: FsConfig,
    pub wb: Writeback,
    pub files: Vec<FileMap>,
    /// Each clone's open files, by its file slot: a read goes through the clone's own
    /// read-ahead state (`struct file`), never another job's.
    pub opens: Vec<Vec<iosched_writeback::OpenId>>,
    pub meta: Vec<FileMeta>,
    pub journal: Journal,
    pub journal_waiters: Vec<u64>,
    /// Buffered operations in progress, by token: looked up, never walked (issue 34: an
    /// ordered map's removal was 4 % of a buffered run).
    pub ops: OpSlab,
    pub flushers: std::collections::BTreeMap<FlusherId, FlusherProc>,
    /// Reads parked until another read completes.
    pub read_waiters: Vec<u64>,
    /// fsyncs parked until writeback of their files completes.
    pub writeback_waiters: Vec<u64>,
    /// Throttled writers waiting for an async request to free: (op, `None` for a full
    /// request pool, or `Some(deadline)` for `congestion_wait()`).
    pub writer_waiters: Vec<(u64, Option<Time>)>,
    /// Scratch for a page range's pieces on disk ([`FileMap::sectors_into`]), kept between
    /// submissions so each does not allocate.
    pub pieces: Vec<(u64, u64, PageRange)>,
    pub wb_timer_at: Option<Time>,
    /// Async (writeback) requests allocated and not completed.
    pub async_requests: u32,
    /// Sync requests the file system issued (reads, fsync and journal writes, flushes) and
    /// not completed. Choice: a job's own O_DIRECT requests are not counted.
    pub sync_requests: u32,
    pub throttled_ns: Vec<Time>,
    /// The tags of the file system's requests in flight, by the slot each carries.
    pub tags: FsTags,
    pub series: Vec<WbSample>,
    pub next_sample: Time,
    pub shutting_down: bool,
    pub read_bytes: u64,
    pub hit_pages: u64,
    pub dirty_peak: u64,
}

/// For each file of `layout`, whether some clone reads or overwrites it (so its blocks
/// count as written before the run): one pass over the clones, where a pass per file made N
/// single-file jobs cost N².
fn read_or_overwritten(jobs: &[JobSpec], layout: &Layout) -> Vec<bool> {
    let mut marked = vec![false; layout.files.len()];
    for clone in &layout.clones {
        let spec = &jobs[clone.job];
        if spec.overwrite || spec.pre_read || !matches!(spec.rw, RwMode::Write | RwMode::RandWrite)
        {
            for &file in &clone.files {
                marked[file] = true;
            }
        }
    }
    marked
}

impl FsState {
    /// The device queue's async side as writeback sees it.
    pub fn queue_state(&self) -> QueueState {
        QueueState {
            async_requests: self.async_requests,
            sync_requests: self.sync_requests,
            nr_requests: self.config.writeback.nr_requests,
            congestion: self.config.writeback.congestion,
        }
    }

    /// The file system for `layout`, given the jobs that use it.
    pub fn new(
        config: FsConfig,
        jobs: &[JobSpec],
        layout: &Layout,
        capacity_sectors: u64,
        processes: usize,
    ) -> FsState {
        let mut wb = Writeback::new(config.writeback.clone(), 1);
        let mut files = Vec::new();
        let mut meta = Vec::new();
        let read_or_overwritten = read_or_overwritten(jobs, layout);
        for (index, file) in layout.files.iter().enumerate() {
            let id = wb.add_file(0, file.bytes);
            assert_eq!(id as usize, index, "file ids follow the layout");
            let is_device = file.name.starts_with("/dev/");
            files.push(FileMap {
                extents: vec![(0, file.start_sector(), file.bytes.max(PAGE_SIZE))],
                is_device,
            });
            let written = is_device || read_or_overwritten[index];
            meta.push(FileMeta {
                allocated: (!written)
                    .then(|| vec![0; file.bytes.div_ceil(PAGE_SIZE).div_ceil(64) as usize]),
                ..FileMeta::default()
            });
        }
        let opens = layout
            .clones
            .iter()
            .map(|clone| {
                let advice = advice_of(&jobs[clone.job]);
                clone
                    .files
                    .iter()
                    .map(|&file| wb.open_advised(file as u32, advice))
                    .collect()
            })
            .collect();
        let (start, sectors) = journal_area(layout, capacity_sectors);
        let journal = Journal::new(
            start,
            sectors,
            config.barrier,
            config.writeback.max_request_pages(),
        );
        FsState {
            wb,
            files,
            opens,
            meta,
            journal,
            journal_waiters: Vec::new(),
            ops: OpSlab::default(),
            flushers: Default::default(),
            read_waiters: Vec::new(),
            writeback_waiters: Vec::new(),
            writer_waiters: Vec::new(),
            pieces: Vec::new(),
            wb_timer_at: None,
            async_requests: 0,
            sync_requests: 0,
            throttled_ns: vec![0; processes],
            tags: FsTags::default(),
            series: Vec::new(),
            next_sample: 0,
            shutting_down: false,
            read_bytes: 0,
            hit_pages: 0,
            dirty_peak: 0,
            config,
        }
    }

    /// Marks pages written; true if any was newly allocated.
    pub fn allocate(&mut self, file: usize, first: u64, count: u64) -> bool {
        let Some(bits) = self.meta[file].allocated.as_mut() else {
            return false;
        };
        let mut newly = false;
        for page in first..first + count {
            let word = (page / 64) as usize;
            if word >= bits.len() {
                bits.resize(word + 1, 0);
            }
            if bits[word] & (1 << (page % 64)) == 0 {
                bits[word] |= 1 << (page % 64);
                newly = true;
            }
        }
        newly
    }

    /// Records samples up to `now`.
    pub fn sample(&mut self, now: Time) {
        let cache = self.wb.cache();
        let nr = cache.nr_dirty() + cache.nr_writeback();
        self.dirty_peak = self.dirty_peak.max(nr);
        while self.next_sample <= now && self.series.len() < SAMPLES_MAX && !self.shutting_down {
            self.series.push(WbSample {
                time_ns: self.next_sample,
                dirty_bytes: cache.nr_dirty() * PAGE_SIZE,
                writeback_bytes: cache.nr_writeback() * PAGE_SIZE,
                flushers: self.wb.flushers().live() as u32,
            });
            self.next_sample += SAMPLE_INTERVAL_NS;
        }
    }

    /// The cache's counts agree with its pages (an O(pages) walk; panics where not).
    pub fn check_invariants(&self) {
        self.wb.check_invariants();
    }

    pub fn outcome(&self) -> FsOutcome {
        let cache = self.wb.cache();
        FsOutcome {
            throttled_ns: self.throttled_ns.clone(),
            series: self.series.clone(),
            knobs: self.config.knobs(),
            flusher_mode: self.config.writeback.flusher.name().to_string(),
            flushers_peak: self.wb.flushers().peak() as u32,
            pages_written_back: cache.written_back(),
            pages_dirtied: cache.dirtied(),
            pages_cancelled: cache.cancelled(),
            dirty_pages_at_end: cache.nr_dirty(),
            read_bytes: self.read_bytes,
            cache_hit_pages: self.hit_pages,
            journal_commits: self.journal.commits(),
            evicted_pages: cache.evicted(),
            dirty_peak_pages: self.dirty_peak,
            dirty_limit_pages: self.wb.thresholds().limit,
            dirty_background_pages: self.wb.thresholds().background,
        }
    }
}

/// The advice fio gives each file a job opens (`fadvise_hint`, fio 3.33's
/// `td_io_open_file()`): by default random jobs advise `POSIX_FADV_RANDOM` and the others
/// `POSIX_FADV_SEQUENTIAL`. Choice: a dbench4 client is not fio and gives none, as dbench
/// does not call `posix_fadvise()`.
fn advice_of(spec: &JobSpec) -> Advice {
    if spec.workload != Workload::Fio {
        return Advice::Normal;
    }
    match spec.fadvise_hint {
        FadviseHint::None | FadviseHint::NoReuse => Advice::Normal,
        FadviseHint::ByPattern if spec.rw.is_random() => Advice::Random,
        FadviseHint::ByPattern | FadviseHint::Sequential => Advice::Sequential,
        FadviseHint::Random => Advice::Random,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_split_at_extent_ends() {
        let map = FileMap {
            extents: vec![(0, 1000, 8192), (8192, 5000, 8192)],
            is_device: false,
        };
        let runs = map.sectors(PageRange {
            file: 0,
            first: 1,
            count: 2,
        });
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].0, runs[0].1), (1008, 8));
        assert_eq!((runs[1].0, runs[1].1), (5000, 8));
    }

    #[test]
    fn knobs_split_between_file_system_and_writeback() {
        let mut config = FsConfig::default();
        config.set("barrier", "0").unwrap();
        config.set("dirty_ratio", "40").unwrap();
        assert!(!config.barrier);
        assert_eq!(config.writeback.dirty_ratio, 40);
        assert!(config.set("barrier", "2").is_err());
        assert!(FsConfig::is_knob("flusher") && !FsConfig::is_knob("slice_idle"));
    }

    /// Each request's slot gives back its own tag, and a freed slot is the next one taken
    /// (the in-flight entry carries the slot, not the tag).
    #[test]
    fn tags_come_back_by_slot_and_freed_slots_are_reused() {
        let mut tags = FsTags::default();
        let first = tags.put(FsTag::Journal);
        let second = tags.put(FsTag::Op {
            token: 7,
            range: None,
            read: true,
        });
        assert_ne!(first, second);
        assert_eq!(tags.take(first), FsTag::Journal);
        assert_eq!(tags.put(FsTag::Journal), first, "the slot just freed");
        assert_eq!(
            tags.take(second),
            FsTag::Op {
                token: 7,
                range: None,
                read: true
            }
        );
    }
}
