//! The writeback threads: per-bdi flushers (2.6.32+) or the pdflush pool (≤ 2.6.31).
//!
//! Both kinds run the same two kinds of work, written as in `wb_writeback()`:
//! - *background*: while dirty pages exceed the background threshold, write back files of
//!   the device oldest-dirtied first, at most `MAX_WRITEBACK_PAGES` (1024 pages, 4 MiB) per
//!   file before moving to the next (the kernel's `b_io` / `b_more_io` rotation);
//! - *periodic* (kupdate): every `dirty_writeback_centisecs`, files dirtied more than
//!   `dirty_expire_centisecs` ago, up to the number of pages dirty when the pass began
//!   (`wb_check_old_data_flush()`'s livelock bound).
//!
//! Within a file pages go in index order from where the last pass stopped
//! (`write_cache_pages()` with `range_cyclic`), contiguous pages forming one request of at
//! most `max_sectors_kb`.
//!
//! Where they differ:
//! - **per-bdi**: one thread per device (or `flushers_per_bdi`, files spread by id), created
//!   when the device first has dirty data (`bdi_forker_task`), waking every writeback
//!   interval, and exiting after [`BDI_IDLE_EXIT_NS`] (5 min, the 2.6.32 `bdi_writeback_task`
//!   rule) with nothing to do. When the device's request pool is full it *blocks* until a
//!   request frees ([`FlusherStep::WaitRequest`], `get_request_wait()`), so the queue stays
//!   full.
//! - **pdflush**: a global pool of 2..=8 threads (`mm/pdflush.c`): work is handed to the
//!   most recently idle thread; a thread finishing work spawns another when no thread has
//!   been idle for over 1 s; a thread finishing work exits when the sleepiest idle thread
//!   has slept over 1 s and more than 2 exist. Writeback is non-blocking: when the device
//!   queue is congested the thread stops and `congestion_wait(HZ/10)`s
//!   ([`FlusherStep::CongestionWait`]: until the queue is uncongested or 100 ms). Only one
//!   thread writes a device at a time (`writeback_acquire()`): a second one finds it busy and
//!   ends its work. Periodic work comes from a global timer (`wb_timer`), re-armed 1 s later
//!   when no thread is idle.
//!
//! Congestion uses the kernel's request-list thresholds ([`QueueState`]): for the default
//! `nr_requests` of 128, congested at 113 allocated async requests, uncongested below 103.
//! With `congestion=sync` (2.6.30, [`CongestionList::Sync`]) `congestion_wait(WRITE)` sleeps
//! on the sync list's wait queue: pdflush still backs off at the async list's mark, but
//! async requests freeing never end its wait, which lasts its full 100 ms unless a sync
//! request frees below the sync list's mark.

use std::collections::VecDeque;

use iosched_core::request_pool::{congestion_off, congestion_on, DEFAULT_NR_REQUESTS};
use iosched_core::{Time, NSEC_PER_MSEC, NSEC_PER_SEC};

use crate::config::{CongestionList, FlusherMode, WritebackConfig};
use crate::dirty_limits::DirtyThresholds;
use crate::page_cache::{BdiId, FileId, PageCache, PageRange};
use crate::sweep::Sweep;

/// 1024 pages (4 MiB): writeback per file before moving on (MAX_WRITEBACK_PAGES).
pub const MAX_WRITEBACK_PAGES: u64 = 1024;
/// 5 minutes: a per-bdi flusher with nothing to write exits after idling this long.
pub const BDI_IDLE_EXIT_NS: Time = 300 * NSEC_PER_SEC;
/// 100 ms: `congestion_wait(BLK_RW_ASYNC, HZ/10)`.
pub const CONGESTION_WAIT_NS: Time = 100 * NSEC_PER_MSEC;
/// pdflush pool bounds (MIN_PDFLUSH_THREADS, MAX_PDFLUSH_THREADS).
pub const MIN_PDFLUSH: usize = 2;
pub const MAX_PDFLUSH: usize = 8;
/// 1 s: pdflush's spawn and exit hysteresis.
pub const PDFLUSH_HYSTERESIS_NS: Time = NSEC_PER_SEC;
/// pid of the first writeback thread (kernel threads get low pids; jobs start at 1000).
pub const FLUSHER_PID_BASE: u32 = 200;

/// A writeback thread, stable for its lifetime (ids are not reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlusherId(pub u32);

/// The state of a device's request queue, as the driver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueState {
    /// Async (writeback) requests allocated: queued in the scheduler or in the device.
    pub async_requests: u32,
    /// Sync requests allocated (reads, fsync and journal writes).
    pub sync_requests: u32,
    /// The queue's `nr_requests`.
    pub nr_requests: u32,
    /// The list whose frees end `congestion_wait()` (2.6.30 slept on the sync one).
    pub congestion: CongestionList,
}

impl Default for QueueState {
    fn default() -> Self {
        QueueState {
            async_requests: 0,
            sync_requests: 0,
            nr_requests: DEFAULT_NR_REQUESTS,
            congestion: CongestionList::Async,
        }
    }
}

impl QueueState {
    /// No async request can be allocated: a writer of async requests sleeps for one
    /// (`get_request_wait()` on the async list, whatever list congestion reads).
    pub fn full(&self) -> bool {
        self.async_requests >= self.nr_requests
    }

    /// Requests allocated on the list whose frees end `congestion_wait()`.
    fn waited(&self) -> u32 {
        match self.congestion {
            CongestionList::Async => self.async_requests,
            CongestionList::Sync => self.sync_requests,
        }
    }

    /// Non-blocking writeback backs off from here: the async list's congestion mark
    /// (`bdi_write_congested()` reads `BDI_async_congested`, in 2.6.30 as after).
    pub fn congested(&self) -> bool {
        self.async_requests >= congestion_on(self.nr_requests)
    }

    /// `congestion_wait()`ers wake below this mark of the list they wait on.
    pub fn uncongested(&self) -> bool {
        self.waited() < congestion_off(self.nr_requests)
    }

    /// Whether a request of the sync (`true`) or async list, just freed, wakes the
    /// `congestion_wait()`ers: only one of the list they wait on, and only below its
    /// congestion-off mark. Kernel: `__freed_request()` → `blk_clear_queue_congested()` →
    /// `clear_bdi_congested()` → `wake_up(&congestion_wqh[sync])`.
    pub fn wakes_congestion_waiters(&self, freed_sync: bool) -> bool {
        let waited_sync = self.congestion == CongestionList::Sync;
        freed_sync == waited_sync && self.uncongested()
    }
}

/// What a flusher does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlusherStep {
    /// Write these pages now, as an async write from this flusher; then step again.
    Submit(PageRange),
    /// The request pool is full: step again after one of this device's requests completes.
    WaitRequest,
    /// Congested: step again when the queue is uncongested ([`QueueState::uncongested`]) or at
    /// this time.
    CongestionWait(Time),
    /// Nothing to do until this time (or a wake-up notice).
    SleepUntil(Time),
    /// Nothing to do until a wake-up notice.
    Idle,
    /// The thread is gone.
    Exit,
}

/// Something the driver must act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A thread exists from now on; step it.
    Spawned { id: FlusherId, pid: u32 },
    /// A sleeping thread was given work: step it now.
    Wake { id: FlusherId },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WorkKind {
    Background,
    /// Files dirtied at or before this time (`None`: nothing is old enough yet).
    Kupdate {
        older_than: Option<Time>,
    },
}

#[derive(Clone, Debug)]
struct Work {
    kind: WorkKind,
    /// Pages this work may still write (kupdate's bound).
    budget: u64,
    file: Option<FileId>,
    file_pages: u64,
    /// Files finished in this rotation (so a rotation ends).
    done_files: Vec<FileId>,
    /// Device being written (pdflush walks devices in order).
    bdi: BdiId,
    /// A dirty file was skipped because a throttled writer was writing it (`I_SYNC`):
    /// the kernel's `wbc.more_io`.
    more_io: bool,
}

#[derive(Clone, Debug)]
struct Flusher {
    pid: u32,
    alive: bool,
    /// per-bdi: the device and the slot (files with `id % flushers_per_bdi == slot`).
    bdi: Option<(BdiId, u32)>,
    work: Option<Work>,
    pending: VecDeque<PageRange>,
    last_active: Time,
    next_kupdate: Time,
    /// pdflush: when it last went idle (`when_i_went_to_sleep`).
    idle_since: Time,
    /// A wake notice is outstanding.
    notified: bool,
}

/// All writeback threads and their policy.
#[derive(Clone, Debug)]
pub struct Flushers {
    mode: FlusherMode,
    per_bdi: u32,
    interval_ns: Time,
    expire_ns: Time,
    max_run: u64,
    threads: Vec<Flusher>,
    /// pdflush: idle threads, most recently idle first.
    idle: Vec<FlusherId>,
    /// pdflush: when the idle list last became empty.
    last_empty: Time,
    /// pdflush: the global periodic timer.
    timer_at: Option<Time>,
    /// pdflush: which thread holds each device (`writeback_acquire`).
    bdi_owner: Vec<Option<FlusherId>>,
    notices: Vec<Notice>,
    bdis: u32,
    /// Peak live threads, for reports.
    peak: usize,
    /// Files a throttled writer is writing back (≤ 3.1 `balance_dirty_pages()`), by writer:
    /// flushers skip them, as `writeback_single_inode()` skips an inode under `I_SYNC`.
    writer_files: Vec<(u64, FileId)>,
}

impl Flushers {
    /// The threads for `bdis` devices, at time 0 (pdflush's two threads exist from boot).
    pub fn new(config: &WritebackConfig, bdis: u32) -> Flushers {
        let interval_ns = u64::from(config.dirty_writeback_centisecs) * 10 * NSEC_PER_MSEC;
        let mut flushers = Flushers {
            mode: config.flusher,
            per_bdi: config.flushers_per_bdi.max(1),
            interval_ns,
            expire_ns: u64::from(config.dirty_expire_centisecs) * 10 * NSEC_PER_MSEC,
            max_run: config.max_request_pages(),
            threads: Vec::new(),
            idle: Vec::new(),
            last_empty: 0,
            timer_at: (config.flusher == FlusherMode::Pdflush && interval_ns > 0)
                .then_some(interval_ns),
            bdi_owner: vec![None; bdis as usize],
            notices: Vec::new(),
            bdis,
            peak: 0,
            writer_files: Vec::new(),
        };
        if flushers.mode == FlusherMode::Pdflush {
            for _ in 0..MIN_PDFLUSH {
                let id = flushers.spawn(None, 0);
                flushers.idle.insert(0, id);
            }
        }
        flushers
    }

    fn spawn(&mut self, bdi: Option<(BdiId, u32)>, now: Time) -> FlusherId {
        let id = FlusherId(self.threads.len() as u32);
        let pid = FLUSHER_PID_BASE + id.0;
        self.threads.push(Flusher {
            pid,
            alive: true,
            bdi,
            work: None,
            pending: VecDeque::new(),
            last_active: now,
            next_kupdate: now.saturating_add(self.interval_ns.max(1)),
            idle_since: now,
            notified: true,
        });
        self.notices.push(Notice::Spawned { id, pid });
        self.peak = self.peak.max(self.live());
        id
    }

    fn wake(&mut self, id: FlusherId) {
        let thread = &mut self.threads[id.0 as usize];
        if thread.alive && !thread.notified {
            thread.notified = true;
            self.notices.push(Notice::Wake { id });
        }
    }

    /// Threads alive now.
    pub fn live(&self) -> usize {
        self.threads.iter().filter(|t| t.alive).count()
    }

    /// Most threads alive at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    pub fn pid(&self, id: FlusherId) -> u32 {
        self.threads[id.0 as usize].pid
    }

    pub fn mode(&self) -> FlusherMode {
        self.mode
    }

    /// Takes what the driver must act on.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// Whether [`Flushers::take_notices`] has any to give.
    #[inline]
    pub fn has_notices(&self) -> bool {
        !self.notices.is_empty()
    }

    /// The pdflush periodic timer, if armed.
    pub fn timer_at(&self) -> Option<Time> {
        self.timer_at
    }

    fn slot_of(&self, file: FileId) -> u32 {
        file % self.per_bdi
    }

    /// A file of `bdi` got dirty pages at `now`: per-bdi mode creates its flusher if missing
    /// (`bdi_forker_task`).
    pub fn on_dirty(&mut self, bdi: BdiId, file: FileId, now: Time) {
        if self.mode != FlusherMode::PerBdi {
            return;
        }
        let slot = self.slot_of(file);
        let exists = self
            .threads
            .iter()
            .any(|t| t.alive && t.bdi == Some((bdi, slot)));
        if !exists {
            self.spawn(Some((bdi, slot)), now);
        }
    }

    /// Dirty memory crossed the background threshold: start background writeback.
    /// Kernel: bdi_start_background_writeback() / pdflush_operation(background_writeout).
    pub fn kick_background(&mut self, cache: &PageCache, now: Time) {
        match self.mode {
            FlusherMode::PerBdi => {
                let sleeping: Vec<FlusherId> = (0..self.threads.len())
                    .map(|i| FlusherId(i as u32))
                    .filter(|id| {
                        let t = &self.threads[id.0 as usize];
                        t.alive
                            && t.work.is_none()
                            && t.bdi.is_some_and(|(bdi, _)| cache.bdi_dirty(bdi) > 0)
                    })
                    .collect();
                for id in sleeping {
                    self.wake(id);
                }
            }
            FlusherMode::Pdflush => {
                let in_progress = self.bdi_owner.iter().any(Option::is_some)
                    || self.threads.iter().any(|t| {
                        t.alive
                            && t.work
                                .as_ref()
                                .is_some_and(|w| w.kind == WorkKind::Background)
                    });
                if !in_progress {
                    self.pdflush_operation(WorkKind::Background, u64::MAX, now);
                }
            }
        }
    }

    /// Whether `file` is being written back by a flusher or by a throttled writer other
    /// than `owner` (its `I_SYNC`): a throttled writer skips it.
    pub fn file_held(&self, file: FileId, owner: u64) -> bool {
        let by_flusher = self
            .threads
            .iter()
            .filter(|thread| thread.alive)
            .any(|thread| thread.work.as_ref().and_then(|work| work.file) == Some(file));
        by_flusher
            || self
                .writer_files
                .iter()
                .any(|&(other, held)| other != owner && held == file)
    }

    /// Writer `owner` now writes `file` back (replacing its previous file), or nothing.
    pub fn set_writer_file(&mut self, owner: u64, file: Option<FileId>) {
        self.writer_files.retain(|&(o, _)| o != owner);
        if let Some(file) = file {
            self.writer_files.push((owner, file));
        }
    }

    /// The file writer `owner` is writing back, if any.
    pub fn writer_file(&self, owner: u64) -> Option<FileId> {
        self.writer_files
            .iter()
            .find(|&&(o, _)| o == owner)
            .map(|&(_, file)| file)
    }

    /// Hands work to the most recently idle pdflush thread; false when none is idle.
    /// Kernel: pdflush_operation().
    fn pdflush_operation(&mut self, kind: WorkKind, budget: u64, now: Time) -> bool {
        if self.idle.is_empty() {
            return false;
        }
        let id = self.idle.remove(0);
        if self.idle.is_empty() {
            self.last_empty = now;
        }
        self.threads[id.0 as usize].work = Some(Work {
            kind,
            budget,
            file: None,
            file_pages: 0,
            done_files: Vec::new(),
            bdi: 0,
            more_io: false,
        });
        self.wake(id);
        true
    }

    /// The pdflush periodic timer fired. Kernel: wb_timer_fn().
    pub fn timer(&mut self, cache: &PageCache, now: Time) {
        let Some(at) = self.timer_at else {
            return;
        };
        if now < at {
            return;
        }
        let older_than = now.checked_sub(self.expire_ns);
        let budget = cache.nr_dirty();
        self.timer_at = if self.pdflush_operation(WorkKind::Kupdate { older_than }, budget, now) {
            Some(now + self.interval_ns)
        } else {
            Some(now + NSEC_PER_SEC)
        };
    }

    /// One step of thread `id` at `now`.
    pub fn step(
        &mut self,
        id: FlusherId,
        now: Time,
        queue: QueueState,
        cache: &mut PageCache,
        thresholds: DirtyThresholds,
    ) -> FlusherStep {
        let index = id.0 as usize;
        if !self.threads[index].alive {
            return FlusherStep::Exit;
        }
        self.threads[index].notified = false;
        match self.mode {
            FlusherMode::PerBdi => self.step_bdi(index, now, queue, cache, thresholds),
            FlusherMode::Pdflush => self.step_pdflush(index, now, queue, cache, thresholds),
        }
    }

    fn step_bdi(
        &mut self,
        index: usize,
        now: Time,
        queue: QueueState,
        cache: &mut PageCache,
        thresholds: DirtyThresholds,
    ) -> FlusherStep {
        let (bdi, slot) = self.threads[index]
            .bdi
            .expect("per-bdi flusher without a device");
        // Bounded: each pass starts work, produces a step, or ends work (at most twice).
        for _ in 0..4 {
            if self.threads[index].work.is_none() && self.threads[index].pending.is_empty() {
                let thread = &mut self.threads[index];
                if cache.nr_dirty() > thresholds.background && cache.bdi_dirty(bdi) > 0 {
                    thread.work = Some(Work {
                        kind: WorkKind::Background,
                        budget: u64::MAX,
                        file: None,
                        file_pages: 0,
                        done_files: Vec::new(),
                        bdi,
                        more_io: false,
                    });
                } else if self.interval_ns > 0 && now >= thread.next_kupdate {
                    thread.next_kupdate = now + self.interval_ns;
                    thread.work = Some(Work {
                        kind: WorkKind::Kupdate {
                            older_than: now.checked_sub(self.expire_ns),
                        },
                        budget: cache.nr_dirty(),
                        file: None,
                        file_pages: 0,
                        done_files: Vec::new(),
                        bdi,
                        more_io: false,
                    });
                } else {
                    let has_dirty = cache.bdi_dirty(bdi) > 0;
                    let exit_at = thread.last_active + BDI_IDLE_EXIT_NS;
                    if !has_dirty && cache.bdi_writeback(bdi) == 0 && now >= exit_at {
                        thread.alive = false;
                        return FlusherStep::Exit;
                    }
                    let mut until = if self.interval_ns > 0 {
                        thread.next_kupdate
                    } else {
                        Time::MAX
                    };
                    if !has_dirty {
                        until = until.min(exit_at);
                    }
                    return FlusherStep::SleepUntil(until);
                }
            }
            if queue.full() {
                return FlusherStep::WaitRequest;
            }
            if let Some(range) = self.next_range(index, cache, thresholds, Some(slot)) {
                self.threads[index].last_active = now;
                return FlusherStep::Submit(range);
            }
            self.threads[index].work = None;
        }
        FlusherStep::SleepUntil(now + self.interval_ns.max(1))
    }

    fn step_pdflush(
        &mut self,
        index: usize,
        now: Time,
        queue: QueueState,
        cache: &mut PageCache,
        thresholds: DirtyThresholds,
    ) -> FlusherStep {
        let id = FlusherId(index as u32);
        if self.threads[index].work.is_none() && self.threads[index].pending.is_empty() {
            return FlusherStep::Idle;
        }
        // Bounded: one pass per device plus one to finish.
        for _ in 0..=self.bdis + 1 {
            let Some(bdi) = self.threads[index].work.as_ref().map(|w| w.bdi) else {
                break;
            };
            if bdi >= self.bdis {
                break;
            }
            match self.bdi_owner[bdi as usize] {
                Some(owner) if owner != id => {
                    // writeback_acquire() failed: someone else writes this device.
                    self.advance_bdi(index);
                    continue;
                }
                _ => {}
            }
            if queue.congested() {
                // Non-blocking writeback met congestion: release the device and the file
                // (its I_SYNC ends with writeback_single_inode()) and back off.
                self.bdi_owner[bdi as usize] = None;
                if let Some(work) = self.threads[index].work.as_mut() {
                    work.file = None;
                    work.file_pages = 0;
                }
                return FlusherStep::CongestionWait(now + CONGESTION_WAIT_NS);
            }
            if queue.full() {
                // Congestion unseen (2.6.30 read the sync list): the submission itself
                // sleeps in get_request_wait(), holding the device and its file.
                return FlusherStep::WaitRequest;
            }
            if let Some(range) = self.next_range(index, cache, thresholds, None) {
                self.bdi_owner[bdi as usize] = Some(id);
                self.threads[index].last_active = now;
                return FlusherStep::Submit(range);
            }
            self.bdi_owner[bdi as usize] = None;
            let work = self.threads[index].work.as_mut().expect("pdflush work");
            if std::mem::take(&mut work.more_io) {
                // Wrote less than asked because a writer holds a file: background_writeout()
                // congestion_wait()s and tries again rather than ending its work.
                work.file = None;
                work.done_files.clear();
                return FlusherStep::CongestionWait(now + CONGESTION_WAIT_NS);
            }
            self.advance_bdi(index);
        }
        self.finish_pdflush_work(index, now)
    }

    fn advance_bdi(&mut self, index: usize) {
        if let Some(work) = self.threads[index].work.as_mut() {
            work.bdi += 1;
            work.file = None;
            work.file_pages = 0;
            work.done_files.clear();
        }
    }

    /// Work done: spawn, exit or go idle. Kernel: the tail of __pdflush().
    fn finish_pdflush_work(&mut self, index: usize, now: Time) -> FlusherStep {
        let id = FlusherId(index as u32);
        self.threads[index].work = None;
        for owner in &mut self.bdi_owner {
            if *owner == Some(id) {
                *owner = None;
            }
        }
        let live = self.live();
        if now > self.last_empty + PDFLUSH_HYSTERESIS_NS
            && self.idle.is_empty()
            && live < MAX_PDFLUSH
        {
            let new = self.spawn(None, now);
            self.idle.insert(0, new);
        }
        if self.live() > MIN_PDFLUSH {
            if let Some(&sleepiest) = self.idle.last() {
                let thread = &mut self.threads[sleepiest.0 as usize];
                if now > thread.idle_since + PDFLUSH_HYSTERESIS_NS {
                    thread.idle_since = now;
                    self.threads[index].alive = false;
                    return FlusherStep::Exit;
                }
            }
        }
        self.threads[index].idle_since = now;
        self.idle.insert(0, id);
        FlusherStep::Idle
    }

    /// The next request-sized run of pages for thread `index`'s work, or `None` when the
    /// work (on its current device) is done.
    fn next_range(
        &mut self,
        index: usize,
        cache: &mut PageCache,
        thresholds: DirtyThresholds,
        slot: Option<u32>,
    ) -> Option<PageRange> {
        if let Some(range) = self.threads[index].pending.pop_front() {
            return Some(range);
        }
        let per_bdi = self.per_bdi;
        let max_run = self.max_run;
        let thread = &mut self.threads[index];
        let work = thread.work.as_mut()?;
        // Bounded by the number of files: each pass either yields pages or retires a file.
        for _ in 0..=cache.files() {
            match work.kind {
                WorkKind::Background if cache.nr_dirty() <= thresholds.background => return None,
                _ if work.budget == 0 => return None,
                _ => {}
            }
            let file = match work.file {
                Some(file)
                    if work.file_pages < MAX_WRITEBACK_PAGES && cache.file_dirty(file) > 0 =>
                {
                    file
                }
                current => {
                    if let Some(done) = current {
                        work.done_files.push(done);
                    }
                    let writer_files = &self.writer_files;
                    let next = cache
                        .dirty_files(work.bdi)
                        .into_iter()
                        .filter(|&(_, f)| slot.is_none_or(|s| f % per_bdi == s))
                        .filter(|&(_, f)| {
                            let busy = writer_files.iter().any(|&(_, w)| w == f);
                            work.more_io |= busy;
                            !busy
                        })
                        .filter(|&(when, _)| match work.kind {
                            WorkKind::Kupdate { older_than } => {
                                older_than.is_some_and(|o| when <= o)
                            }
                            WorkKind::Background => true,
                        })
                        .map(|(_, f)| f)
                        .find(|f| !work.done_files.contains(f));
                    let next = match next {
                        Some(file) => file,
                        None if !work.done_files.is_empty() => {
                            // A rotation ended with dirty files left: start another.
                            work.done_files.clear();
                            work.file = None;
                            continue;
                        }
                        None => return None,
                    };
                    work.file = Some(next);
                    work.file_pages = 0;
                    next
                }
            };
            let want = max_run
                .min(MAX_WRITEBACK_PAGES - work.file_pages)
                .min(work.budget);
            // The file's turn is one `writepages` call, taken a request at a time.
            let sweep = if work.file_pages > 0 {
                Sweep::Continue
            } else {
                Sweep::Cyclic
            };
            let runs = cache.start_writeback(file, want, max_run, sweep);
            let pages: u64 = runs.iter().map(|r| r.count).sum();
            if pages == 0 {
                // Everything left is under writeback already, or out of the call's range.
                work.file_pages = MAX_WRITEBACK_PAGES;
                continue;
            }
            // A call that gave fewer pages than asked has ended: the next file's turn.
            work.file_pages = if pages < want {
                MAX_WRITEBACK_PAGES
            } else {
                work.file_pages + pages
            };
            work.budget = work.budget.saturating_sub(pages);
            thread.pending.extend(runs);
            return thread.pending.pop_front();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Throttle, Writeback, PAGE_SIZE};

    fn config(mode: FlusherMode) -> WritebackConfig {
        WritebackConfig {
            flusher: mode,
            ..WritebackConfig::default()
        }
    }

    /// Steps `id` until it stops submitting, completing every submission at once.
    fn drain(wb: &mut Writeback, id: FlusherId, now: Time) -> (u64, FlusherStep) {
        let mut pages = 0;
        loop {
            match wb.flusher_step(id, now, QueueState::default()) {
                FlusherStep::Submit(range) => {
                    pages += range.count;
                    wb.writeback_done(range, now);
                }
                other => return (pages, other),
            }
        }
    }

    /// Per-bdi: no thread before dirty data; one appears on the first dirty page, writes
    /// expired data at its periodic wake-up, and exits after 5 minutes of idling.
    #[test]
    fn per_bdi_flusher_appears_on_dirty_data_and_exits_after_idling() {
        let mut wb = Writeback::new(config(FlusherMode::PerBdi), 1);
        assert_eq!(wb.flushers().live(), 0);
        let file = wb.add_file(0, 1 << 20);
        wb.write(file, 0, 4 * PAGE_SIZE, 0);
        let notices = wb.take_notices();
        let Some(Notice::Spawned { id, pid }) = notices.first().copied() else {
            panic!("no flusher spawned: {notices:?}")
        };
        assert_eq!(pid, FLUSHER_PID_BASE);
        // At creation nothing has expired: sleep until the 5 s periodic wake-up.
        assert_eq!(
            drain(&mut wb, id, 0),
            (0, FlusherStep::SleepUntil(5 * NSEC_PER_SEC))
        );
        // At 5 s the data is 5 s old, younger than 30 s: still nothing.
        assert_eq!(drain(&mut wb, id, 5 * NSEC_PER_SEC).0, 0);
        // At 30 s it has expired and goes.
        let (pages, _) = drain(&mut wb, id, 30 * NSEC_PER_SEC);
        assert_eq!(pages, 4);
        // Idle from 30 s: sleeps until 5 minutes later, then exits.
        let (_, step) = drain(&mut wb, id, 31 * NSEC_PER_SEC);
        assert_eq!(step, FlusherStep::SleepUntil(35 * NSEC_PER_SEC));
        let (_, step) = drain(&mut wb, id, 329 * NSEC_PER_SEC);
        assert!(matches!(step, FlusherStep::SleepUntil(t) if t == 330 * NSEC_PER_SEC));
        assert_eq!(drain(&mut wb, id, 330 * NSEC_PER_SEC).1, FlusherStep::Exit);
        assert_eq!(wb.flushers().live(), 0);
        // New dirty data brings a new thread with a new pid.
        wb.write(file, 0, PAGE_SIZE, 400 * NSEC_PER_SEC);
        assert!(matches!(
            wb.take_notices().as_slice(),
            [Notice::Spawned { pid, .. }] if *pid == FLUSHER_PID_BASE + 1
        ));
    }

    #[test]
    fn several_flushers_per_bdi_split_files() {
        let mut config = config(FlusherMode::PerBdi);
        config.flushers_per_bdi = 2;
        let mut wb = Writeback::new(config, 1);
        let a = wb.add_file(0, 1 << 20);
        let b = wb.add_file(0, 1 << 20);
        wb.write(a, 0, PAGE_SIZE, 0);
        wb.write(b, 0, PAGE_SIZE, 0);
        wb.write(a, PAGE_SIZE, PAGE_SIZE, 0);
        assert_eq!(wb.take_notices().len(), 2);
        assert_eq!(wb.flushers().live(), 2);
        let (pages, _) = drain(&mut wb, FlusherId(0), 40 * NSEC_PER_SEC);
        assert_eq!(pages, 2, "thread 0 writes only file a");
    }

    /// Per-bdi blocks on a full request pool; pdflush backs off on congestion.
    #[test]
    fn full_queue_blocks_per_bdi_and_congestion_backs_pdflush_off() {
        for (mode, queued, expect) in [
            (
                FlusherMode::PerBdi,
                DEFAULT_NR_REQUESTS,
                FlusherStep::WaitRequest,
            ),
            (
                FlusherMode::Pdflush,
                congestion_on(DEFAULT_NR_REQUESTS),
                FlusherStep::CongestionWait(CONGESTION_WAIT_NS),
            ),
        ] {
            let mut config = config(mode);
            config.set("dirty_background_bytes", "8192").unwrap();
            let mut wb = Writeback::new(config, 1);
            for notice in wb.take_notices() {
                if let Notice::Spawned { id, .. } = notice {
                    assert_eq!(
                        wb.flusher_step(id, 0, QueueState::default()),
                        FlusherStep::Idle
                    );
                }
            }
            let file = wb.add_file(0, 1 << 20);
            wb.write(file, 0, 16 * PAGE_SIZE, 0);
            wb.balance_dirty_pages(1, 0);
            let id = match mode {
                FlusherMode::PerBdi => FlusherId(0),
                FlusherMode::Pdflush => match wb.take_notices().last() {
                    Some(Notice::Wake { id }) => *id,
                    other => panic!("no pdflush woken: {other:?}"),
                },
            };
            let queue = QueueState {
                async_requests: queued,
                ..QueueState::default()
            };
            assert_eq!(wb.flusher_step(id, 0, queue), expect, "{mode:?}");
        }
    }

    /// Both lists: pdflush backs off at the async list's congestion mark (113 of 128), as
    /// 2.6.30's `bdi_write_congested()` reads `BDI_async_congested` (checked in the 2.6.30
    /// source: the sync/async split of 1faa16d22877 indexed the bits right; only
    /// `congestion_wait(WRITE)` took the wrong wait queue); sync requests past their mark do
    /// not make it back off.
    #[test]
    fn pdflush_backs_off_on_async_congestion_whichever_list_it_waits_on() {
        let on = congestion_on(DEFAULT_NR_REQUESTS);
        for (list, async_requests, sync_requests, expect_submit) in [
            (CongestionList::Async, on, 0, false),
            (CongestionList::Sync, on, 0, false),
            (CongestionList::Sync, 0, on, true),
            (CongestionList::Async, 0, on, true),
        ] {
            let mut config = config(FlusherMode::Pdflush);
            config.set("dirty_background_bytes", "8192").unwrap();
            config.congestion = list;
            let mut wb = Writeback::new(config, 1);
            for notice in wb.take_notices() {
                if let Notice::Spawned { id, .. } = notice {
                    wb.flusher_step(id, 0, QueueState::default());
                }
            }
            let file = wb.add_file(0, 1 << 20);
            wb.write(file, 0, 16 * PAGE_SIZE, 0);
            wb.balance_dirty_pages(1, 0);
            let Some(Notice::Wake { id }) = wb.take_notices().last().copied() else {
                panic!("no pdflush woken")
            };
            let queue = QueueState {
                async_requests,
                sync_requests,
                congestion: list,
                ..QueueState::default()
            };
            let step = wb.flusher_step(id, 0, queue);
            let case = format!("{list:?} async {async_requests} sync {sync_requests}");
            if expect_submit {
                assert!(matches!(step, FlusherStep::Submit(_)), "{case}: {step:?}");
            } else {
                assert_eq!(
                    step,
                    FlusherStep::CongestionWait(CONGESTION_WAIT_NS),
                    "{case}"
                );
            }
        }
    }

    /// A freed request wakes `congestion_wait()`ers only when it is of the list congestion
    /// reads and that list is below its congestion-off mark: in 2.6.30 async writeback
    /// completing never ends the wait (its WRITE == sync wait queue), a sync request does.
    #[test]
    fn only_the_watched_list_freeing_ends_a_congestion_wait() {
        let off = congestion_off(DEFAULT_NR_REQUESTS);
        let queue = |congestion, async_requests, sync_requests| QueueState {
            async_requests,
            sync_requests,
            congestion,
            ..QueueState::default()
        };
        let async_list = queue(CongestionList::Async, off - 1, 0);
        assert!(async_list.wakes_congestion_waiters(false));
        assert!(!async_list.wakes_congestion_waiters(true));
        assert!(!queue(CongestionList::Async, off, 0).wakes_congestion_waiters(false));
        let sync_list = queue(CongestionList::Sync, 0, 0);
        assert!(!sync_list.wakes_congestion_waiters(false));
        assert!(sync_list.wakes_congestion_waiters(true));
        assert!(!queue(CongestionList::Sync, 0, off).wakes_congestion_waiters(true));
    }

    /// ≤ 3.1 throttling: a writer over the limit is told to write back a chunk; it takes a
    /// file no flusher holds, pdflush then skips that file (`I_SYNC`) and, having written
    /// the rest, `congestion_wait()`s instead of ending its work (`more_io`); the next
    /// writer chunk starts on the following file.
    #[test]
    fn throttled_writer_and_pdflush_share_files_by_i_sync() {
        let mut config = config(FlusherMode::Pdflush);
        config.set("dirty_throttle", "writeback").unwrap();
        config.set("dirty_bytes", "65536").unwrap();
        config.set("dirty_background_bytes", "8192").unwrap();
        let mut wb = Writeback::new(config, 1);
        for notice in wb.take_notices() {
            if let Notice::Spawned { id, .. } = notice {
                wb.flusher_step(id, 0, QueueState::default());
            }
        }
        let a = wb.add_file(0, 1 << 20);
        let b = wb.add_file(0, 1 << 20);
        wb.write(a, 0, 12 * PAGE_SIZE, 0);
        wb.write(b, 0, 12 * PAGE_SIZE, 0);
        let Throttle::WriteBack { chunk } = wb.balance_dirty_pages(1, 0) else {
            panic!("24 dirty pages over a 16-page limit: the writer must write back")
        };
        // Mid-chunk: four pages of `a` submitted, eight still dirty and held.
        let runs = wb.writer_writeback(7, 0, 4);
        assert_eq!(
            runs.iter().map(|r| (r.file, r.count)).collect::<Vec<_>>(),
            [(a, 4)]
        );
        let id = match wb.take_notices().last() {
            Some(Notice::Wake { id }) => *id,
            other => panic!("no pdflush woken: {other:?}"),
        };
        let mut flusher_files = Vec::new();
        let step = loop {
            match wb.flusher_step(id, 0, QueueState::default()) {
                FlusherStep::Submit(range) => flusher_files.push(range.file),
                other => break other,
            }
        };
        assert_eq!(flusher_files, [b]);
        assert_eq!(step, FlusherStep::CongestionWait(CONGESTION_WAIT_NS));
        wb.writer_done(7);
        // Both files dirty again: a new writer chunk starts after `a`, on `b`.
        wb.write(a, 0, 4 * PAGE_SIZE, 1);
        wb.write(b, 64 * PAGE_SIZE, 4 * PAGE_SIZE, 1);
        let runs = wb.writer_writeback(8, 0, chunk);
        assert_eq!(runs[0].file, b);
    }

    /// pdflush: two threads from boot; a thread that finishes work while none has been idle
    /// for over a second spawns another; threads idle over a second are retired down to two.
    #[test]
    fn pdflush_pool_grows_when_busy_and_shrinks_when_idle() {
        let mut wb = Writeback::new(config(FlusherMode::Pdflush), 1);
        assert_eq!(wb.flushers().live(), 2);
        wb.take_notices();
        let s = NSEC_PER_SEC;
        // Both threads taken at 1 s (idle list empty from then on).
        let mut flushers = wb.flushers.clone();
        assert!(flushers.pdflush_operation(WorkKind::Background, u64::MAX, s));
        assert!(flushers.pdflush_operation(WorkKind::Background, u64::MAX, s));
        assert!(!flushers.pdflush_operation(WorkKind::Background, u64::MAX, s));
        // Thread 1 finishes at 3 s: no idle thread for 2 s, so a third is spawned.
        assert_eq!(flushers.finish_pdflush_work(1, 3 * s), FlusherStep::Idle);
        assert_eq!(flushers.live(), 3);
        // Thread 0 finishes at 6 s: the sleepiest idle thread (the new one, idle since 3 s)
        // has slept over 1 s and there are more than two: thread 0 exits.
        assert_eq!(flushers.finish_pdflush_work(0, 6 * s), FlusherStep::Exit);
        assert_eq!(flushers.live(), 2);
        assert_eq!(flushers.peak(), 3);
    }

    /// The periodic timer re-arms a second later when no pdflush thread is idle.
    #[test]
    fn pdflush_timer_retries_when_pool_is_busy() {
        let mut wb = Writeback::new(config(FlusherMode::Pdflush), 1);
        let s = NSEC_PER_SEC;
        assert_eq!(wb.timer_at(), Some(5 * s));
        wb.flushers
            .pdflush_operation(WorkKind::Background, u64::MAX, 0);
        wb.flushers
            .pdflush_operation(WorkKind::Background, u64::MAX, 0);
        wb.timer(5 * s);
        assert_eq!(wb.timer_at(), Some(6 * s));
    }
}
