//! Page cache, dirty limits and flusher policy: pure, shared by both drivers.
//!
//! [`Writeback`] answers the questions a driver asks on behalf of buffered I/O:
//! - a buffered read: which pages are cached, which must be read now (the request plus any
//!   synchronous read-ahead window) and which read ahead in the background
//!   ([`Writeback::read`]), with the read-ahead state of the *open file* the read goes
//!   through ([`Writeback::open`]), as the kernel keeps it in `struct file`;
//! - a buffered write: may the writer dirty pages now, and how long must it sleep
//!   ([`Writeback::balance_dirty_pages`], [`Writeback::write`]);
//! - fsync: which pages to write back now, synchronously, from the caller
//!   ([`Writeback::fsync_start`]);
//! - the writeback threads: "write back these pages now, as flusher X (pid)", "wake me at
//!   t" ([`Writeback::flusher_step`], [`Writeback::take_notices`], [`Writeback::timer_at`]).
//!
//! Nothing here reads a clock, performs I/O or spawns a thread; time is passed in as `u64`
//! nanoseconds and the driver turns page ranges into requests.
//!
//! ```
//! use iosched_writeback::{Throttle, Writeback, WritebackConfig, PAGE_SIZE};
//! let mut wb = Writeback::new(WritebackConfig::default(), 1);
//! let file = wb.add_file(0, 1 << 20);
//! assert_eq!(wb.balance_dirty_pages(1, 0), Throttle::None);
//! wb.write(file, 0, 8 * PAGE_SIZE, 0);
//! assert_eq!(wb.cache().nr_dirty(), 8);
//! // fsync writes the eight pages back as one run.
//! let runs = wb.fsync_start(file);
//! assert_eq!(runs.len(), 1);
//! ```
#![forbid(unsafe_code)]

pub mod config;
pub mod dirty_limits;
pub mod flusher;
mod lru;
pub mod page_cache;
mod page_map;
pub mod readahead;
pub mod sweep;

use iosched_core::Time;

pub use config::{
    CongestionList, DirtyThrottle, FlusherMode, KnobError, WritebackConfig, Writepages,
};
pub use dirty_limits::{ratelimit_pages, sync_writeback_pages};
pub use dirty_limits::{Bandwidth, DirtyThresholds, Throttle};
pub use flusher::{FlusherId, FlusherStep, Flushers, Notice, QueueState};
pub use page_cache::{BdiId, FileId, PageCache, PageRange, Probe};
pub use readahead::{Advice, Readahead};
pub use sweep::Sweep;

/// One open file description: the read-ahead state a `read()` through it uses.
/// Kernel: the `f_ra` of a `struct file`.
pub type OpenId = u32;

/// 4 KiB: the page size.
pub const PAGE_SIZE: u64 = 4096;

/// What a buffered read needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadPlan {
    /// Pages to read now; the reader waits for them.
    pub sync: Vec<PageRange>,
    /// Read-ahead to start now; nobody waits for it.
    pub async_ahead: Vec<PageRange>,
    /// Some requested pages are being read by someone else: wait for a read of this file
    /// to complete, then ask again.
    pub wait_others: bool,
    /// Requested pages that were cached.
    pub hit_pages: u64,
}

impl ReadPlan {
    /// Nothing to wait for: the read is served from the cache.
    pub fn is_hit(&self) -> bool {
        self.sync.is_empty() && !self.wait_others
    }
}

/// The policy object a driver owns: one per simulated machine.
#[derive(Clone, Debug)]
pub struct Writeback {
    config: WritebackConfig,
    thresholds: DirtyThresholds,
    cache: PageCache,
    flushers: Flushers,
    bandwidth: Vec<Bandwidth>,
    /// Read-ahead state per open file, with the file it opens and the advice it was given.
    readahead: Vec<(FileId, Readahead, Advice)>,
    file_pages: Vec<u64>,
    /// The file the last throttled writer's pass started on (the dirty-list rotation).
    writer_cursor: Option<FileId>,
    /// Files each throttled writer's current pass has given their turn.
    writer_passes: Vec<(u64, Vec<FileId>)>,
}

impl Writeback {
    /// A machine with `bdis` backing devices and an empty cache.
    pub fn new(config: WritebackConfig, bdis: u32) -> Writeback {
        Writeback {
            thresholds: DirtyThresholds::from_config(&config),
            cache: {
                let mut cache = PageCache::new(config.cache_pages());
                cache.set_writepages(config.writepages);
                cache
            },
            flushers: Flushers::new(&config, bdis),
            bandwidth: vec![Bandwidth::default(); bdis.max(1) as usize],
            readahead: Vec::new(),
            file_pages: Vec::new(),
            writer_cursor: None,
            writer_passes: Vec::new(),
            config,
        }
    }

    pub fn config(&self) -> &WritebackConfig {
        &self.config
    }
    pub fn thresholds(&self) -> DirtyThresholds {
        self.thresholds
    }
    pub fn cache(&self) -> &PageCache {
        &self.cache
    }
    pub fn flushers(&self) -> &Flushers {
        &self.flushers
    }

    /// Registers a file of `bytes` on device `bdi`.
    pub fn add_file(&mut self, bdi: BdiId, bytes: u64) -> FileId {
        self.file_pages.push(bytes.div_ceil(PAGE_SIZE));
        self.cache.add_file(bdi)
    }

    fn pages_of(offset: u64, len: u64) -> (u64, u64) {
        let first = offset / PAGE_SIZE;
        let end = (offset + len.max(1)).div_ceil(PAGE_SIZE);
        (first, end - first)
    }

    /// Opens `file`: a new open file description with read-ahead state of its own, so two
    /// readers of one file (fio clones, jobs naming the same file) keep separate windows.
    /// Kernel: `file_ra_state_init()` at open.
    pub fn open(&mut self, file: FileId) -> OpenId {
        self.open_advised(file, Advice::Normal)
    }

    /// Opens `file` and gives the new open file `advice`, as fio's `posix_fadvise()` right
    /// after `open()`. Kernel: `file_ra_state_init()`, then `generic_fadvise()`.
    pub fn open_advised(&mut self, file: FileId, advice: Advice) -> OpenId {
        assert!(
            (file as usize) < self.file_pages.len(),
            "open of an unknown file"
        );
        self.readahead.push((file, Readahead::default(), advice));
        (self.readahead.len() - 1) as OpenId
    }

    /// Puts `offset..offset+len` in the cache as clean pages without I/O (fio's `pre_read`).
    pub fn pre_read(&mut self, file: FileId, offset: u64, len: u64) {
        let (first, count) = Self::pages_of(offset, len);
        self.cache.insert_clean(PageRange { file, first, count });
    }

    /// Drops the clean, idle pages of `file` (`POSIX_FADV_DONTNEED`, fio's `invalidate`).
    pub fn invalidate(&mut self, file: FileId) {
        self.cache.invalidate(file);
    }

    /// A buffered read of `offset..offset+len` through the open file `open`. `on_disk(page)`
    /// says whether a page has data on the device (a never-written page is zero-filled
    /// without I/O). Kernel: do_generic_file_read() with page_cache_sync/async_readahead().
    pub fn read(
        &mut self,
        open: OpenId,
        offset: u64,
        len: u64,
        on_disk: &dyn Fn(u64) -> bool,
    ) -> ReadPlan {
        let (file, _, advice) = self.readahead[open as usize];
        let (first, count) = Self::pages_of(offset, len);
        let max = advice.ra_pages(self.config.ra_pages());
        let mut plan = ReadPlan::default();
        let mut miss = None;
        for index in first..first + count {
            match self.cache.probe_touch(file, index) {
                Probe::Absent => {
                    miss.get_or_insert(index);
                }
                Probe::Reading => plan.wait_others = true,
                Probe::Cached => plan.hit_pages += 1,
            }
        }
        let limit = self.file_pages[file as usize].max(first + count);
        let ra = &mut self.readahead[open as usize].1;
        let (window, sync) = match miss {
            // FMODE_RANDOM: the pages asked for from the first missing one, nothing ahead.
            Some(miss) if advice == Advice::Random => (
                Some(readahead::Window {
                    first: miss,
                    count: first + count - miss,
                }),
                true,
            ),
            Some(miss) => (Some(ra.on_miss(miss, first, count, max)), true),
            None if advice == Advice::Random => (None, false),
            None => (ra.on_hit(first, count, max), false),
        };
        if let Some(window) = window {
            let end = (window.first + window.count).min(limit);
            for index in window.first..end {
                if self.cache.probe(file, index) != Probe::Absent {
                    continue;
                }
                if on_disk(index) {
                    if self.cache.start_read_page(file, index) {
                        let target = if sync {
                            &mut plan.sync
                        } else {
                            &mut plan.async_ahead
                        };
                        let run = PageRange {
                            file,
                            first: index,
                            count: 1,
                        };
                        append_run(target, run, self.config.max_request_pages());
                    }
                } else {
                    self.cache.insert_clean(PageRange {
                        file,
                        first: index,
                        count: 1,
                    });
                }
            }
        }
        plan
    }

    /// A read started by [`Writeback::read`] completed.
    pub fn read_done(&mut self, range: PageRange) {
        self.cache.read_done(range);
    }

    /// May a writer dirty `pages` pages now? Also starts background writeback when dirty
    /// memory is above the background threshold. Kernel: balance_dirty_pages_ratelimited().
    pub fn balance_dirty_pages(&mut self, pages: u64, now: Time) -> Throttle {
        let nr = self.cache.nr_dirty() + self.cache.nr_writeback();
        if self.cache.nr_dirty() > self.thresholds.background {
            self.flushers.kick_background(&self.cache, now);
        }
        if self.config.dirty_throttle == DirtyThrottle::Writeback {
            if dirty_limits::over_limit_legacy(self.thresholds, nr) {
                let chunk =
                    dirty_limits::sync_writeback_pages(self.config.mem_pages(), self.config.cpus);
                return Throttle::WriteBack { chunk };
            }
            return Throttle::None;
        }
        // Choice: one device's bandwidth stands for the machine's (the simulator has one).
        dirty_limits::balance_dirty_pages(self.thresholds, nr, pages, &self.bandwidth[0])
    }

    /// Whether dirty plus writeback pages are still over the limit for a throttled writer
    /// (`dirty_throttle=writeback`): it keeps writing back until not, or its chunk is done.
    pub fn over_dirty_limit(&self) -> bool {
        let nr = self.cache.nr_dirty() + self.cache.nr_writeback();
        dirty_limits::over_limit_legacy(self.thresholds, nr)
    }

    /// A throttled writer (`owner`, any id unique among writers) writes back up to `want`
    /// dirty pages of device `bdi` itself: the runs to submit as async writes in its own
    /// name. Each call carries on the writer's pass (`writeback_inodes()` in one iteration of
    /// ≤ 3.1 `balance_dirty_pages()`), which gives each dirty file one turn, a file held by a
    /// flusher or another writer (`I_SYNC`) being passed over (`requeue_io()`). Empty when
    /// the pass is over: the writer then `congestion_wait()`s unless its chunk is done, and
    /// its next call begins a new pass. The writer keeps its file until the next call or
    /// [`Writeback::writer_done`], and flushers skip it meanwhile. WB_SYNC_NONE, blocking.
    pub fn writer_writeback(&mut self, owner: u64, bdi: BdiId, want: u64) -> Vec<PageRange> {
        let max_run = self.config.max_request_pages();
        // A pass starts at the file after the one the last pass started on, as an inode
        // written back goes to the tail of the dirty list (`redirty_tail()`) and the next
        // `queue_io()` takes the next one.
        let mut dirty: Vec<FileId> = self
            .cache
            .dirty_files(bdi)
            .into_iter()
            .map(|(_, f)| f)
            .collect();
        dirty.sort_unstable();
        let start = match self.writer_cursor {
            Some(last) => dirty.partition_point(|&f| f <= last),
            None => 0,
        };
        dirty.rotate_left(start);
        let slot = match self.writer_passes.iter().position(|(o, _)| *o == owner) {
            Some(slot) => slot,
            None => {
                self.writer_passes.push((owner, Vec::new()));
                self.writer_passes.len() - 1
            }
        };
        let first_turn = self.writer_passes[slot].1.is_empty();
        for file in dirty {
            if self.writer_passes[slot].1.contains(&file) {
                continue;
            }
            self.writer_passes[slot].1.push(file);
            if self.flushers.file_held(file, owner) {
                continue;
            }
            let runs = self
                .cache
                .start_writeback(file, want, max_run, Sweep::Cyclic);
            if !runs.is_empty() {
                if first_turn {
                    self.writer_cursor = Some(file);
                }
                self.flushers.set_writer_file(owner, Some(file));
                return runs;
            }
        }
        self.writer_passes[slot].1.clear();
        self.flushers.set_writer_file(owner, None);
        Vec::new()
    }

    /// The throttled writer `owner` left `balance_dirty_pages()`: flushers may take its file,
    /// and its next throttling begins a new pass.
    pub fn writer_done(&mut self, owner: u64) {
        self.flushers.set_writer_file(owner, None);
        self.writer_passes.retain(|(o, _)| *o != owner);
    }

    /// A buffered write dirties `offset..offset+len`; returns the pages newly dirtied.
    pub fn write(&mut self, file: FileId, offset: u64, len: u64, now: Time) -> u64 {
        let (first, count) = Self::pages_of(offset, len);
        let newly = self.cache.dirty(file, first, count, now);
        if newly > 0 {
            self.flushers.on_dirty(self.cache.file_bdi(file), file, now);
        }
        newly
    }

    /// `file` is emptied (`O_TRUNC`, unlink): its pages go without being written; returns
    /// the dirty pages dropped. Read-ahead state of every open of it starts over (Choice:
    /// the kernel keeps it; a window past the new end would only read holes).
    pub fn truncate(&mut self, file: FileId) -> u64 {
        for (_, ra, _) in self.readahead.iter_mut().filter(|(f, _, _)| *f == file) {
            *ra = Readahead::default();
        }
        self.cache.truncate(file)
    }

    /// fsync/fdatasync: moves every dirty page of `file` not already under writeback into
    /// writeback; the caller writes the runs synchronously, waits for them and for
    /// [`PageCache::file_writeback`] to reach 0, and asks again until this returns nothing.
    /// Kernel: filemap_write_and_wait_range() with WB_SYNC_ALL.
    pub fn fsync_start(&mut self, file: FileId) -> Vec<PageRange> {
        let max_run = self.config.max_request_pages();
        self.cache
            .start_writeback(file, u64::MAX, max_run, Sweep::Whole)
    }

    /// Writeback of `range` completed at `now` (flusher or fsync).
    pub fn writeback_done(&mut self, range: PageRange, now: Time) {
        let bdi = self.cache.file_bdi(range.file);
        self.cache.end_writeback(range);
        if let Some(bandwidth) = self.bandwidth.get_mut(bdi as usize) {
            bandwidth.completed(range.count, now);
        }
    }

    /// One step of a writeback thread.
    pub fn flusher_step(&mut self, id: FlusherId, now: Time, queue: QueueState) -> FlusherStep {
        let step = self
            .flushers
            .step(id, now, queue, &mut self.cache, self.thresholds);
        if let FlusherStep::SleepUntil(_) = step {
            // Background work found only pages already under writeback: wait for them
            // rather than sleep a whole interval above the threshold.
            if self.cache.nr_dirty() > self.thresholds.background && self.cache.nr_writeback() > 0 {
                return FlusherStep::WaitRequest;
            }
        }
        step
    }

    /// The pid of a writeback thread.
    pub fn flusher_pid(&self, id: FlusherId) -> u32 {
        self.flushers.pid(id)
    }

    /// Spawn and wake-up notices since the last call.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        self.flushers.take_notices()
    }

    /// Whether [`Writeback::take_notices`] has any to give (most calls have none).
    #[inline]
    pub fn has_notices(&self) -> bool {
        self.flushers.has_notices()
    }

    /// When the pdflush periodic timer wants [`Writeback::timer`] called.
    pub fn timer_at(&self) -> Option<Time> {
        self.flushers.timer_at()
    }

    pub fn timer(&mut self, now: Time) {
        self.flushers.timer(&self.cache, now);
    }

    /// O(pages) consistency checks.
    pub fn check_invariants(&self) {
        self.cache.check_invariants();
    }
}

fn append_run(runs: &mut Vec<PageRange>, run: PageRange, max_run: u64) {
    if let Some(last) = runs.last_mut() {
        if last.file == run.file && last.end() == run.first && last.count + run.count <= max_run {
            last.count += run.count;
            return;
        }
    }
    runs.push(run);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads one page through `open` and completes its I/O at once; whether the reader had
    /// to wait for the device (a synchronous miss).
    fn read_page(wb: &mut Writeback, open: OpenId, page: u64) -> bool {
        let plan = wb.read(open, page * PAGE_SIZE, PAGE_SIZE, &|_| true);
        for range in plan.sync.iter().chain(&plan.async_ahead) {
            wb.read_done(*range);
        }
        !plan.sync.is_empty()
    }

    /// Two readers of one file, each sequential from its own offset, interleaving their 4 KiB
    /// reads (fio clones sharing a file name). The kernel keeps read-ahead in each `struct
    /// file`, so each stream keeps its own window and, once it is open, reads only hit:
    /// async read-ahead stays ahead. With one
    /// state per file the two streams reset each other's window (each read of one looks
    /// like a jump to the other's state), and reads keep missing (the interference issue 15
    /// traced).
    /// Seed 001 (issue 33): a throttled writer's pass gives each dirty file one turn, as
    /// ≤ 3.1 `balance_dirty_pages()` calls `writeback_inodes()` once per loop; a file
    /// dirtied again after its turn waits for the next pass, and the writer, short of its
    /// chunk, gets nothing (it then `congestion_wait()`s) until that pass begins.
    #[test]
    fn throttled_writer_gives_each_file_one_turn_per_pass() {
        let mut config = WritebackConfig::default();
        config.set("dirty_throttle", "writeback").unwrap();
        let mut wb = Writeback::new(config, 1);
        let a = wb.add_file(0, 1 << 20);
        let b = wb.add_file(0, 1 << 20);
        wb.write(a, 0, 4 * PAGE_SIZE, 0);
        wb.write(b, 0, 4 * PAGE_SIZE, 0);
        let files =
            |runs: Vec<PageRange>| runs.iter().map(|r| (r.file, r.count)).collect::<Vec<_>>();
        assert_eq!(files(wb.writer_writeback(1, 0, 100)), [(a, 4)]);
        wb.write(a, 64 * PAGE_SIZE, 4 * PAGE_SIZE, 1);
        assert_eq!(files(wb.writer_writeback(1, 0, 100)), [(b, 4)]);
        assert!(wb.writer_writeback(1, 0, 100).is_empty(), "a had its turn");
        // The next pass takes a again.
        assert_eq!(files(wb.writer_writeback(1, 0, 100)), [(a, 4)]);
        // Leaving balance_dirty_pages() ends the pass: the next throttling starts anew.
        wb.writer_done(1);
        wb.write(a, 128 * PAGE_SIZE, PAGE_SIZE, 2);
        assert_eq!(files(wb.writer_writeback(1, 0, 100)), [(a, 1)]);
    }

    #[test]
    fn read_ahead_is_kept_per_open_file() {
        let mut wb = Writeback::new(WritebackConfig::default(), 1);
        let file = wb.add_file(0, 64 << 20);
        let a = wb.open(file);
        let b = wb.open(file);
        let mut misses = 0;
        for page in 0..512 {
            misses += usize::from(read_page(&mut wb, a, page));
            misses += usize::from(read_page(&mut wb, b, 8192 + page));
        }
        // a misses at page 0; b's first read (not at page 0, no history) is a standalone
        // read and its second a sequential miss that opens its window.
        assert_eq!(misses, 3);
    }

    /// The largest window a sequential 4 KiB reader reaches: what one async read-ahead asks.
    fn widest_window(advice: Advice) -> u64 {
        let mut wb = Writeback::new(WritebackConfig::default(), 1);
        let file = wb.add_file(0, 64 << 20);
        let open = wb.open_advised(file, advice);
        let mut widest = 0;
        for page in 0..1024 {
            let plan = wb.read(open, page * PAGE_SIZE, PAGE_SIZE, &|_| true);
            let pages: u64 = plan.async_ahead.iter().map(|r| r.count).sum();
            widest = widest.max(pages);
            for range in plan.sync.iter().chain(&plan.async_ahead) {
                wb.read_done(*range);
            }
        }
        widest
    }

    /// Linux 4.20's generic_fadvise(): POSIX_FADV_SEQUENTIAL sets the open file's ra_pages to
    /// twice the device's (read_ahead_kb 128 → 256 KiB windows); POSIX_FADV_RANDOM sets
    /// FMODE_RANDOM, under which even a sequential reader gets no read-ahead: every 4 KiB read
    /// misses and reads its one page (force_page_cache_readahead of the request).
    #[test]
    fn fadvise_sets_the_open_files_read_ahead() {
        assert_eq!(widest_window(Advice::Normal), 32);
        assert_eq!(widest_window(Advice::Sequential), 64);
        assert_eq!(widest_window(Advice::Random), 0);
        let mut wb = Writeback::new(WritebackConfig::default(), 1);
        let file = wb.add_file(0, 64 << 20);
        let open = wb.open_advised(file, Advice::Random);
        for page in 0..64 {
            let plan = wb.read(open, page * PAGE_SIZE, PAGE_SIZE, &|_| true);
            assert_eq!(plan.sync.len(), 1, "page {page} misses");
            assert_eq!(plan.sync[0].count, 1, "page {page} reads only itself");
            wb.read_done(plan.sync[0]);
        }
    }

    /// A reader that consumes at once, 4 KiB at a time, on a device that completes reads in
    /// the order they were started, one whenever the reader must wait. Linux 4.20's
    /// generic_file_buffered_read() calls page_cache_async_readahead() on a marked page
    /// before waiting for it to be read, and a steady-state window carries its mark on its
    /// first page; so when the reader wakes on a completed window it touches the window still
    /// in flight and starts the next one: two windows are in the device at every completion
    /// (the drive is never left with only the other readers' requests). Returns the number of
    /// reads in flight just before each completion, from the 10th on.
    fn in_flight_at_completions(advice: Advice) -> Vec<usize> {
        let mut wb = Writeback::new(WritebackConfig::default(), 1);
        let file = wb.add_file(0, 256 << 20);
        let open = wb.open_advised(file, advice);
        let mut device: std::collections::VecDeque<PageRange> = Default::default();
        let mut seen = Vec::new();
        for page in 0..8192 {
            loop {
                let plan = wb.read(open, page * PAGE_SIZE, PAGE_SIZE, &|_| true);
                device.extend(plan.sync.iter().chain(&plan.async_ahead));
                if plan.is_hit() {
                    break;
                }
                seen.push(device.len());
                wb.read_done(device.pop_front().expect("a read to wait for"));
            }
        }
        seen.split_off(10)
    }

    #[test]
    fn sequential_reader_keeps_two_windows_in_flight() {
        for advice in [Advice::Normal, Advice::Sequential] {
            let seen = in_flight_at_completions(advice);
            assert!(seen.len() > 100, "{advice:?}: {} completions", seen.len());
            assert!(seen.iter().all(|&n| n == 2), "{advice:?}: {seen:?}");
        }
    }
}
