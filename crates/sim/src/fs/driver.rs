//! The file system's side of the simulator loop: buffered operations of job processes
//! (reads, writes, truncates, fsync) and the journal thread, their requests through the same
//! scheduler with their own pid and io context. Writeback threads and throttled writers are
//! in `fs/flushing.rs`.
//!
//! This file is a child module of `simulation` (declared there with `#[path]`) so that it
//! can work on the loop's state without widening its visibility.

use iosched_core::{
    CgroupId, IoContextId, IoPrio, Op, ReqFlags, Request, RequestId, RqEvent, Time, Trace,
};
use iosched_workload::generator::{IoKind, IoUnit};
use iosched_workload::job::IoEngine;
use iosched_writeback::{FlusherId, PageRange, Throttle, PAGE_SIZE};

use super::{InFlight, Simulation};
use crate::event::Event;
use crate::fs::journal::JournalIo;
use crate::fs::{FsEvent, FsOp, FsTag, OpPhase, JOURNAL_PID};

/// Write passes an fsync makes at most (see `fs_fsync_data`).
const FSYNC_ROUNDS_MAX: u8 = 16;

/// Who a request is charged to.
#[derive(Clone, Copy)]
pub(super) struct Who {
    pid: u32,
    ioc: IoContextId,
    cgroup: CgroupId,
    ioprio: IoPrio,
    process: usize,
}

/// A kernel thread: its own io context, root cgroup, default priority.
pub(super) fn kernel_thread(pid: u32) -> Who {
    Who {
        pid,
        ioc: IoContextId(pid),
        cgroup: CgroupId::ROOT,
        ioprio: IoPrio::none(),
        process: 0,
    }
}

impl Simulation<'_> {
    /// Whether `unit` of process `index` goes through the page cache.
    pub(super) fn fs_takes(&self, index: usize, unit: &IoUnit) -> bool {
        self.fs.is_some() && !self.processes[index].direct && unit.kind != IoKind::Trim
    }

    pub(super) fn who(&self, index: usize) -> Who {
        let process = &self.processes[index];
        Who {
            pid: process.pid,
            ioc: process.ioc,
            cgroup: process.cgroup,
            ioprio: process.ioprio,
            process: index,
        }
    }

    /// A job clone started: fio's `pre_read` fills the cache before the clock runs.
    pub(super) fn fs_job_started(&mut self, index: usize) {
        let spec = &self.jobs[self.life.job_of(index)];
        let Some(fs) = self.fs.as_mut() else { return };
        if spec.direct {
            return;
        }
        let plan = &self.layout.clones[index];
        for (&file, region) in plan.files.iter().zip(&plan.regions) {
            if spec.pre_read {
                fs.wb.pre_read(file as u32, region.start, region.len);
            } else if spec.invalidate {
                // fio's default invalidate=1: POSIX_FADV_DONTNEED drops the clean pages.
                fs.wb.invalidate(file as u32);
            }
        }
    }

    /// A job process finished; once all have, writeback threads stop being stepped.
    pub(super) fn fs_process_finished(&mut self) {
        if self.life.all_finished() {
            if let Some(fs) = self.fs.as_mut() {
                fs.sample(self.now);
                fs.shutting_down = true;
            }
        }
    }

    /// Records time-series samples up to now.
    pub(super) fn fs_sample(&mut self) {
        if let Some(fs) = self.fs.as_mut() {
            fs.sample(self.now);
        }
    }

    /// A job's buffered read, write or sync.
    pub(super) fn fs_submit(&mut self, index: usize, unit: IoUnit, trace: &mut dyn Trace) {
        let depth = self.life.in_flight(index);
        self.stats[index].record_depth(depth);
        let fs = self
            .fs
            .as_mut()
            .expect("buffered I/O without a file system");
        let token = fs.next_token;
        fs.next_token += 1;
        let phase = match unit.kind {
            IoKind::Read => OpPhase::Read,
            IoKind::Write => OpPhase::Throttled,
            IoKind::Truncate => OpPhase::Finishing,
            _ => OpPhase::FsyncData,
        };
        fs.ops.insert(
            token,
            FsOp {
                process: index,
                unit,
                submitted_at: self.now,
                outstanding: 0,
                phase,
                round: 0,
                balanced: false,
            },
        );
        match unit.kind {
            IoKind::Read => self.fs_read(token, trace),
            IoKind::Write => self.fs_write(token, trace),
            IoKind::Truncate => self.fs_truncate(token),
            _ => self.fs_fsync_data(token, trace),
        }
        self.fs_notices();
    }

    fn cpu_ns(&self, len: u64) -> Time {
        let fs = self.fs.as_ref().expect("file system");
        len.div_ceil(PAGE_SIZE).max(1) * fs.config.page_cpu_ns
    }

    /// Issues one request on behalf of the file system.
    #[allow(clippy::too_many_arguments)]
    fn fs_request(
        &mut self,
        op: Op,
        sector: u64,
        nr_sectors: u64,
        flags: ReqFlags,
        who: Who,
        tag: FsTag,
        trace: &mut dyn Trace,
    ) {
        let request = Request {
            id: RequestId(self.next_request),
            sector,
            nr_sectors: nr_sectors as u32,
            op,
            flags,
            pid: who.pid,
            ioc: who.ioc,
            cgroup: who.cgroup,
            ioprio: who.ioprio,
        };
        self.next_request += 1;
        let kind = match op {
            Op::Read => IoKind::Read,
            Op::Flush => IoKind::Fsync,
            _ => IoKind::Write,
        };
        self.in_flight.insert(
            request.id,
            InFlight {
                process: who.process,
                unit: IoUnit {
                    kind,
                    file: 0,
                    offset: 0,
                    len: nr_sectors * iosched_core::SECTOR_SIZE,
                },
                request,
                submitted_at: self.now,
                issued_at: None,
                fs: Some(tag),
                riders: Vec::new(),
            },
        );
        self.disk.start(self.now);
        trace.request(self.now, RqEvent::Queue, &request);
        trace.request(self.now, RqEvent::GetRq, &request);
        if op == Op::Flush {
            self.bypass.push_back(request.id);
        } else {
            trace.request(self.now, RqEvent::Insert, &request);
            self.elevator.insert(request, self.now, trace);
        }
    }

    /// Submits `range` of `file` as requests (split at extent ends); returns how many.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fs_pages_io(
        &mut self,
        op: Op,
        range: PageRange,
        flags: ReqFlags,
        who: Who,
        tag: impl Fn(PageRange) -> FsTag,
        trace: &mut dyn Trace,
    ) -> u32 {
        let fs = self.fs.as_ref().expect("file system");
        let pieces = fs.files[range.file as usize].sectors(range);
        for &(sector, sectors, piece) in &pieces {
            self.fs_request(op, sector, sectors, flags, who, tag(piece), trace);
        }
        pieces.len() as u32
    }

    fn fs_read(&mut self, token: u64, trace: &mut dyn Trace) {
        let fs = self.fs.as_mut().expect("file system");
        let op = fs.ops[&token].clone();
        let file = self.layout.clones[op.process].files[op.unit.file];
        let crate::fs::FsState {
            wb, meta, opens, ..
        } = &mut **fs;
        let allocated = &meta[file].allocated;
        let on_disk = |page: u64| crate::fs::page_written(allocated, page);
        let open = opens[op.process][op.unit.file];
        let plan = wb.read(open, op.unit.offset, op.unit.len, &on_disk);
        fs.hit_pages += plan.hit_pages;
        let read_pages: u64 = plan
            .sync
            .iter()
            .chain(&plan.async_ahead)
            .map(|r| r.count)
            .sum();
        fs.read_bytes += read_pages * PAGE_SIZE;
        let who = self.who(op.process);
        let sync_read = ReqFlags {
            sync: true,
            ..ReqFlags::default()
        };
        for &range in &plan.async_ahead {
            self.fs_pages_io(Op::Read, range, sync_read, who, FsTag::ReadAhead, trace);
        }
        let mut outstanding = 0;
        for &range in &plan.sync {
            outstanding += self.fs_pages_io(
                Op::Read,
                range,
                sync_read,
                who,
                |piece| FsTag::Op {
                    token,
                    range: Some(piece),
                    read: true,
                },
                trace,
            );
        }
        let cpu = self.cpu_ns(op.unit.len);
        let fs = self.fs.as_mut().expect("file system");
        let entry = fs.ops.get_mut(&token).expect("op");
        entry.outstanding += outstanding;
        if outstanding == 0 {
            if plan.wait_others {
                fs.read_waiters.push(token);
            } else {
                entry.phase = OpPhase::Finishing;
                self.events
                    .push(self.now + cpu, Event::Fs(FsEvent::Op(token)));
            }
        }
    }

    pub(super) fn fs_write(&mut self, token: u64, trace: &mut dyn Trace) {
        let now = self.now;
        let process = self.fs.as_ref().expect("file system").ops[&token].process;
        let mmap = self.jobs[self.life.job_of(process)].ioengine == IoEngine::Mmap;
        let fs = self.fs.as_mut().expect("file system");
        let op = fs.ops[&token].clone();
        let file = self.layout.clones[op.process].files[op.unit.file];
        let first = op.unit.offset / PAGE_SIZE;
        let count = (op.unit.offset + op.unit.len.max(1)).div_ceil(PAGE_SIZE) - first;
        let mut cpu = count * fs.config.page_cpu_ns;
        if mmap && (first..first + count).all(|page| fs.wb.cache().is_dirty(file as u32, page)) {
            // A store to a page that is already dirty and writable takes no fault: no
            // page_mkwrite, no balance_dirty_pages, just the copy (a quarter of the cost).
            let entry = fs.ops.get_mut(&token).expect("op");
            entry.phase = OpPhase::Finishing;
            cpu = (cpu / 4).max(1);
            self.events.push(now + cpu, Event::Fs(FsEvent::Op(token)));
            return;
        }
        let throttle = if op.balanced {
            Throttle::None
        } else {
            fs.wb.balance_dirty_pages(count, now)
        };
        let pause = match throttle {
            Throttle::WriteBack { chunk } => {
                let entry = fs.ops.get_mut(&token).expect("op");
                entry.phase = OpPhase::WriterWriteback {
                    written: 0,
                    chunk,
                    since: now,
                };
                return self.fs_writer_writeback(token, trace);
            }
            Throttle::Block(pause) => {
                fs.throttled_ns[op.process] += pause;
                self.events.push(now + pause, Event::Fs(FsEvent::Op(token)));
                return;
            }
            Throttle::Pause(pause) => pause,
            Throttle::None => 0,
        };
        fs.throttled_ns[op.process] += pause;
        if !fs.files[file].is_device {
            let allocating = fs.allocate(file, first, count);
            let running = fs.journal.running();
            let meta = &mut fs.meta[file];
            let mut blocks = 0;
            if meta.inode_tid != running {
                meta.inode_tid = running;
                blocks += 1;
            }
            if allocating && meta.alloc_tid != running {
                meta.alloc_tid = running;
                blocks += 2;
            }
            self.fs_journal_blocks(blocks);
        }
        let fs = self.fs.as_mut().expect("file system");
        fs.wb.write(file as u32, op.unit.offset, op.unit.len, now);
        let entry = fs.ops.get_mut(&token).expect("op");
        if self.jobs[self.life.job_of(op.process)].sync_writes {
            // O_SYNC: generic_write_sync() syncs before write() returns (data and metadata,
            // as fsync; the commit decision keys on the unit not being an fdatasync).
            entry.phase = OpPhase::FsyncData;
            return self.fs_fsync_data(token, trace);
        }
        entry.phase = OpPhase::Finishing;
        self.events
            .push(now + cpu + pause, Event::Fs(FsEvent::Op(token)));
    }

    /// Metadata blocks join the running transaction; the first ones arm its commit timer.
    fn fs_journal_blocks(&mut self, blocks: u64) {
        if blocks == 0 {
            return;
        }
        let fs = self.fs.as_mut().expect("file system");
        let running = fs.journal.running();
        if fs.journal.running_blocks() == 0 {
            let at = self.now + fs.config.commit_interval_ns;
            self.events
                .push(at, Event::Fs(FsEvent::JournalTimer { tid: running }));
        }
        fs.journal.add_blocks(blocks);
    }

    /// Truncate (O_TRUNC or unlink): the file's pages go unwritten, its blocks are freed (so
    /// later writes allocate again), and the inode and bitmap updates join the running
    /// transaction. Costs CPU per page dropped.
    fn fs_truncate(&mut self, token: u64) {
        let now = self.now;
        let fs = self.fs.as_mut().expect("file system");
        let op = &fs.ops[&token];
        let file = self.layout.clones[op.process].files[op.unit.file];
        let dropped = fs.wb.truncate(file as u32);
        if !fs.files[file].is_device {
            let running = fs.journal.running();
            let meta = &mut fs.meta[file];
            meta.allocated = Some(Vec::new());
            meta.inode_tid = running;
            meta.alloc_tid = running;
            self.fs_journal_blocks(2);
        }
        let fs = self.fs.as_ref().expect("file system");
        let cpu = fs.config.page_cpu_ns * (dropped + 1);
        self.events.push(now + cpu, Event::Fs(FsEvent::Op(token)));
    }

    /// fsync step: write the clone's dirty pages, wait for writeback in flight, commit.
    fn fs_fsync_data(&mut self, token: u64, trace: &mut dyn Trace) {
        let op = self.fs.as_ref().expect("file system").ops[&token].clone();
        // A sync names one file of the clone (the runner turns end_fsync into one per file).
        let files = vec![self.layout.clones[op.process].files[op.unit.file]];
        let who = self.who(op.process);
        let fs = self.fs.as_mut().expect("file system");
        // The first pass writes the dirty pages not under writeback; then
        // the fsync waits until no page of its files is under writeback, and a further pass
        // writes what is dirty again (pages redirtied while the flusher had them), as
        // WB_SYNC_ALL waits on them. The pass bound stands in for the kernel's
        // tag-then-write livelock avoidance against writers dirtying the files meanwhile.
        let busy = files
            .iter()
            .any(|&file| fs.wb.cache().file_writeback(file as u32) > 0);
        let mut outstanding = 0;
        if op.round == 0 || (!busy && op.round < FSYNC_ROUNDS_MAX) {
            let mut runs = Vec::new();
            for &file in &files {
                runs.extend(fs.wb.fsync_start(file as u32));
            }
            let sync_write = ReqFlags {
                sync: true,
                ..ReqFlags::default()
            };
            for range in runs {
                outstanding += self.fs_pages_io(
                    Op::Write,
                    range,
                    sync_write,
                    who,
                    |piece| FsTag::Op {
                        token,
                        range: Some(piece),
                        read: false,
                    },
                    trace,
                );
            }
        }
        let fs = self.fs.as_mut().expect("file system");
        let entry = fs.ops.get_mut(&token).expect("op");
        if outstanding > 0 {
            entry.round += 1;
            entry.outstanding += outstanding;
            return;
        }
        if busy {
            fs.writeback_waiters.push(token);
            return;
        }
        let cache = fs.wb.cache();
        let dirty_left = files.iter().any(|&file| cache.file_dirty(file as u32) > 0);
        if dirty_left && op.round < FSYNC_ROUNDS_MAX {
            // Pages whose writeback ended while this fsync waited, dirty again: write them.
            return self.fs_fsync_data(token, trace);
        }
        self.fs_fsync_commit(token, &files, trace);
    }

    fn fs_fsync_commit(&mut self, token: u64, files: &[usize], trace: &mut dyn Trace) {
        let fs = self.fs.as_mut().expect("file system");
        let op = fs.ops[&token].clone();
        let datasync = op.unit.kind == IoKind::Fdatasync;
        let need = files
            .iter()
            .filter(|&&file| !fs.files[file].is_device)
            .map(|&file| {
                let meta = &fs.meta[file];
                if datasync {
                    meta.alloc_tid
                } else {
                    meta.inode_tid.max(meta.alloc_tid)
                }
            })
            .max()
            .unwrap_or(0);
        if need > fs.journal.committed() {
            let ios = fs.journal.request_commit(need);
            fs.journal_waiters.push(token);
            fs.ops.get_mut(&token).expect("op").phase = OpPhase::FsyncCommit(need);
            self.fs_journal_submit(ios, trace);
        } else if fs.config.barrier {
            fs.ops.get_mut(&token).expect("op").phase = OpPhase::FsyncFlush;
            fs.ops.get_mut(&token).expect("op").outstanding += 1;
            let who = self.who(op.process);
            let flags = ReqFlags {
                sync: true,
                ..ReqFlags::default()
            };
            let tag = FsTag::Op {
                token,
                range: None,
                read: false,
            };
            self.fs_request(Op::Flush, 0, 0, flags, who, tag, trace);
        } else {
            self.fs_complete(token);
        }
    }

    fn fs_journal_submit(&mut self, ios: Vec<JournalIo>, trace: &mut dyn Trace) {
        let who = kernel_thread(JOURNAL_PID);
        // WRITE_SYNC without REQ_IDLE: CFQ's sync-noidle tree.
        let flags = ReqFlags {
            sync: true,
            ..ReqFlags::default()
        };
        for io in ios {
            match io {
                JournalIo::Log { sector, nr_sectors } => self.fs_request(
                    Op::Write,
                    sector,
                    u64::from(nr_sectors),
                    flags,
                    who,
                    FsTag::Journal,
                    trace,
                ),
                JournalIo::Flush => {
                    self.fs_request(Op::Flush, 0, 0, flags, who, FsTag::Journal, trace)
                }
                // Choice: the FUA commit block goes through the scheduler (the kernel's flush
                // machinery would bypass it); its preflush above does bypass it.
                JournalIo::Commit { sector, fua } => self.fs_request(
                    Op::Write,
                    sector,
                    crate::fs::journal::BLOCK_SECTORS,
                    ReqFlags { fua, ..flags },
                    who,
                    FsTag::Journal,
                    trace,
                ),
            }
        }
    }

    /// A buffered operation is over: report it to the job.
    fn fs_complete(&mut self, token: u64) {
        let fs = self.fs.as_mut().expect("file system");
        let op = fs.ops.remove(&token).expect("op completed twice");
        let index = op.process;
        match op.unit.kind.ddir() {
            Some(ddir) => {
                if self.life.counts_at(index, self.now) {
                    self.stats[index].record_io(
                        ddir,
                        op.unit.len,
                        op.submitted_at,
                        op.submitted_at,
                        self.now,
                    );
                }
            }
            None if op.unit.kind == IoKind::Truncate => {}
            None => self.stats[index].record_sync(self.now - op.submitted_at),
        }
        self.job_io_done(index, &op.unit);
        self.stats[index].record_complete_batch(1);
        self.events.push(self.now, Event::Wake(index));
    }

    /// A file-system event from the queue.
    pub(super) fn fs_event(&mut self, event: FsEvent, trace: &mut dyn Trace) {
        match event {
            FsEvent::Op(token) => {
                let fs = self.fs.as_ref().expect("file system");
                match fs.ops.get(&token).map(|op| op.phase.clone()) {
                    Some(OpPhase::Throttled) => self.fs_write(token, trace),
                    Some(OpPhase::WriterWriteback { .. }) => self.fs_writer_timer(token, trace),
                    Some(OpPhase::Finishing) => self.fs_complete(token),
                    _ => {}
                }
            }
            FsEvent::Flusher { id, generation } => {
                self.fs_flusher(FlusherId(id), generation, trace)
            }
            FsEvent::WbTimer => {
                let fs = self.fs.as_mut().expect("file system");
                if fs.shutting_down {
                    return;
                }
                if fs.wb.timer_at().is_some_and(|at| at <= self.now) {
                    fs.wb.timer(self.now);
                }
                fs.wb_timer_at = None;
            }
            FsEvent::JournalTimer { tid } => {
                let fs = self.fs.as_mut().expect("file system");
                if fs.shutting_down || fs.journal.running() != tid {
                    return;
                }
                let ios = fs.journal.request_commit(tid);
                self.fs_journal_submit(ios, trace);
            }
        }
        self.fs_notices();
    }

    /// A request the file system issued completed (scheduler and disk counters already
    /// updated by the caller, except per-direction disk counts).
    pub(super) fn fs_completed(&mut self, tag: FsTag, entry: &InFlight, trace: &mut dyn Trace) {
        let request = entry.request;
        if request.op != Op::Flush {
            let dir = request.op.data_dir();
            self.disk
                .data_completed(dir, request.nr_sectors, entry.submitted_at, self.now);
        }
        let now = self.now;
        let fs = self.fs.as_mut().expect("file system");
        match tag {
            FsTag::ReadAhead(range) => {
                fs.wb.read_done(range);
                self.fs_retry_reads(trace);
            }
            FsTag::Op { token, range, read } => {
                match (range, read) {
                    (Some(range), true) => fs.wb.read_done(range),
                    (Some(range), false) => fs.wb.writeback_done(range, now),
                    (None, _) => {}
                }
                let op = fs.ops.get_mut(&token).expect("request of a finished op");
                assert!(op.outstanding > 0, "op outstanding count went negative");
                op.outstanding -= 1;
                let last = op.outstanding == 0;
                let phase = op.phase.clone();
                if read {
                    self.fs_retry_reads(trace);
                } else if range.is_some() {
                    self.fs_wake_flushers();
                    self.fs_retry_fsyncs(trace);
                }
                if last {
                    match phase {
                        OpPhase::Read => self.fs_read(token, trace),
                        OpPhase::FsyncData => self.fs_fsync_data(token, trace),
                        OpPhase::FsyncFlush => self.fs_complete(token),
                        _ => {}
                    }
                }
            }
            FsTag::Flusher { range, .. } | FsTag::WriterWriteback(range) => {
                fs.wb.writeback_done(range, now);
                assert!(fs.async_requests > 0, "async request count went negative");
                fs.async_requests -= 1;
                self.fs_wake_flushers();
                self.fs_wake_writers(trace);
                self.fs_retry_fsyncs(trace);
            }
            FsTag::Journal => {
                let (ios, committed) = fs.journal.io_done();
                if let Some(tid) = committed {
                    let waiters = std::mem::take(&mut fs.journal_waiters);
                    let mut still = Vec::new();
                    let mut done = Vec::new();
                    for token in waiters {
                        match fs.ops.get(&token).map(|op| op.phase.clone()) {
                            Some(OpPhase::FsyncCommit(need)) if need <= tid => done.push(token),
                            Some(_) => still.push(token),
                            None => {}
                        }
                    }
                    fs.journal_waiters = still;
                    for token in done {
                        self.fs_complete(token);
                    }
                }
                self.fs_journal_submit(ios, trace);
            }
        }
        self.fs_notices();
    }

    fn fs_retry_reads(&mut self, trace: &mut dyn Trace) {
        let fs = self.fs.as_mut().expect("file system");
        for token in std::mem::take(&mut fs.read_waiters) {
            self.fs_read(token, trace);
        }
    }

    pub(super) fn fs_retry_fsyncs(&mut self, trace: &mut dyn Trace) {
        let fs = self.fs.as_mut().expect("file system");
        for token in std::mem::take(&mut fs.writeback_waiters) {
            self.fs_fsync_data(token, trace);
        }
    }
}
