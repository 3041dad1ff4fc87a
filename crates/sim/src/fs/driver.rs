//! The file system's side of the simulator loop: buffered operations of job processes
//! (reads, writes, truncates, fsync) and the journal thread, their requests through the same
//! scheduler with their own pid and io context. Writeback threads and throttled writers are
//! in `fs/flushing.rs`. These requests are the simulator backend's own: they reach the
//! driver through [`iosched_driver::Driver::submit_own`] and come back through
//! `own_completion`, outside the jobs' request lists.

use iosched_core::{CgroupId, IoContextId, IoPrio, Op, ReqFlags, Request, Time, Trace};
use iosched_driver::{InFlight, UnitDone};
use iosched_workload::generator::{IoKind, IoUnit};
use iosched_workload::job::IoEngine;
use iosched_writeback::{FlusherId, PageRange, Probe, Throttle, PAGE_SIZE};

use crate::event::Event;
use crate::fs::journal::JournalIo;
use crate::fs::{FsEvent, FsOp, FsTag, OpPhase, JOURNAL_PID};
use crate::simulation::{SimBackend, SimDriver, SimIo};

/// Write passes an fsync makes at most (see `fs_fsync_data`).
const FSYNC_ROUNDS_MAX: u8 = 16;

/// Who a request is charged to.
#[derive(Clone, Copy)]
pub(crate) struct Who {
    pid: u32,
    ioc: IoContextId,
    cgroup: CgroupId,
    ioprio: IoPrio,
    process: usize,
}

/// Process `index` of the run.
pub(crate) fn who(drv: &SimDriver<'_>, index: usize) -> Who {
    let process = &drv.processes[index];
    Who {
        pid: process.pid,
        ioc: process.ioc,
        cgroup: process.cgroup,
        ioprio: process.ioprio,
        process: index,
    }
}

/// A kernel thread: its own io context, root cgroup, default priority.
pub(crate) fn kernel_thread(pid: u32) -> Who {
    Who {
        pid,
        ioc: IoContextId(pid),
        cgroup: CgroupId::ROOT,
        ioprio: IoPrio::none(),
        process: 0,
    }
}

impl SimBackend {
    /// Whether `unit` of process `index` goes through the page cache.
    #[inline]
    pub(crate) fn fs_takes(&self, drv: &SimDriver<'_>, index: usize, unit: &IoUnit) -> bool {
        self.fs.is_some() && !drv.processes[index].direct && unit.kind != IoKind::Trim
    }

    /// A job clone started: fio's `pre_read` fills the cache before the clock runs.
    pub(crate) fn fs_job_started(&mut self, drv: &mut SimDriver<'_>, index: usize) {
        let spec = &drv.jobs[drv.life.job_of(index)];
        let Some(fs) = self.fs.as_mut() else { return };
        if spec.direct {
            return;
        }
        let plan = &drv.layout.clones[index];
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
    pub(crate) fn fs_process_finished(&mut self, drv: &mut SimDriver<'_>) {
        if drv.life.all_finished() {
            if let Some(fs) = self.fs.as_mut() {
                fs.sample(drv.now);
                fs.shutting_down = true;
            }
        }
    }

    /// Records time-series samples up to now.
    pub(crate) fn fs_sample(&mut self, drv: &mut SimDriver<'_>) {
        if let Some(fs) = self.fs.as_mut() {
            fs.sample(drv.now);
        }
    }

    /// A job's buffered read, write or sync.
    pub(crate) fn fs_submit(
        &mut self,
        drv: &mut SimDriver<'_>,
        index: usize,
        unit: IoUnit,
        trace: &mut dyn Trace,
    ) {
        let depth = drv.life.in_flight(index);
        drv.stats[index].record_depth(depth);
        let fs = self
            .fs
            .as_mut()
            .expect("buffered I/O without a file system");
        let phase = match unit.kind {
            IoKind::Read => OpPhase::Read,
            IoKind::Write => OpPhase::Throttled,
            IoKind::Truncate => OpPhase::Finishing,
            _ => OpPhase::FsyncData,
        };
        let token = fs.ops.insert(FsOp {
            process: index,
            unit,
            submitted_at: drv.now,
            outstanding: 0,
            phase,
            round: 0,
            balanced: false,
            cpu_pages: 0,
        });
        match unit.kind {
            IoKind::Read => self.fs_read(drv, token, trace),
            IoKind::Write => self.fs_write(drv, token, trace),
            IoKind::Truncate => self.fs_truncate(drv, token),
            _ => self.fs_fsync_data(drv, token, trace),
        }
        self.fs_notices(drv);
    }

    fn cpu_ns(&self, len: u64) -> Time {
        let fs = self.fs.as_ref().expect("file system");
        len.div_ceil(PAGE_SIZE).max(1) * fs.config.page_cpu_ns
    }

    /// Pushes `Event::Fs(Op(token))` `delay` after process `index`'s buffered operation is
    /// done with the CPU: with the CPU model on, after `usr` + `sys` ns on a simulated CPU
    /// (CFS may keep it waiting; the run queue pushes the event then); off, after the flat
    /// `legacy_ns`.
    fn op_after_cpu(
        &mut self,
        now: Time,
        (index, token): (usize, u64),
        legacy_ns: Time,
        (usr, sys): (Time, Time),
        delay: Time,
    ) {
        let event = Event::Fs(FsEvent::Op(token));
        let done = match self.cpu.as_mut() {
            Some(cpus) => {
                cpus.run_process(index, now, (usr, sys), (event, delay), &mut self.events)
            }
            None => Some(now + legacy_ns),
        };
        if let Some(at) = done {
            self.events.push(at + delay, event);
        }
    }

    /// The era's costs, when the CPU model is on.
    pub(crate) fn era(&self) -> Option<crate::cpu::Era> {
        self.cpu.as_ref().map(|cpus| cpus.era)
    }

    /// Issues one request on behalf of the file system.
    #[allow(clippy::too_many_arguments)]
    fn fs_request(
        &mut self,
        drv: &mut SimDriver<'_>,
        op: Op,
        sector: u64,
        nr_sectors: u64,
        flags: ReqFlags,
        who: Who,
        tag: FsTag,
        trace: &mut dyn Trace,
    ) {
        let request = Request {
            id: drv.next_request_id(),
            sector,
            nr_sectors: nr_sectors as u32,
            op,
            flags,
            pid: who.pid,
            ioc: who.ioc,
            cgroup: who.cgroup,
            ioprio: who.ioprio,
        };
        let kind = match op {
            Op::Read => IoKind::Read,
            Op::Flush => IoKind::Fsync,
            _ => IoKind::Write,
        };
        let unit = IoUnit {
            kind,
            file: 0,
            offset: 0,
            len: nr_sectors * iosched_core::SECTOR_SIZE,
        };
        let fs = self.fs.as_mut().expect("file system");
        let slot = fs.tags.put(tag);
        let entry = InFlight::new(who.process, unit, request, drv.now, Some(slot));
        if flags.sync {
            fs.sync_requests += 1;
        }
        drv.submit_own(self, entry, trace);
    }

    /// Submits `range` of `file` as requests (split at extent ends); returns how many.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fs_pages_io(
        &mut self,
        drv: &mut SimDriver<'_>,
        op: Op,
        range: PageRange,
        flags: ReqFlags,
        who: Who,
        tag: impl Fn(PageRange) -> FsTag,
        trace: &mut dyn Trace,
    ) -> u32 {
        let fs = self.fs.as_mut().expect("file system");
        // Taken out while requests are submitted (a nested call finds an empty one).
        let mut pieces = std::mem::take(&mut fs.pieces);
        fs.files[range.file as usize].sectors_into(range, &mut pieces);
        for &(sector, sectors, piece) in &pieces {
            self.fs_request(drv, op, sector, sectors, flags, who, tag(piece), trace);
        }
        let count = pieces.len() as u32;
        self.fs.as_mut().expect("file system").pieces = pieces;
        count
    }

    /// A buffered read's CPU (usr, sys) past its system call: the copy out of the cache
    /// (user time under `mmap`, where the process copies from the mapping) and a page
    /// allocated per page it read into the cache.
    fn read_cpu(&self, drv: &SimDriver<'_>, index: usize, len: u64, pages: u64) -> (Time, Time) {
        let Some(era) = self.era() else {
            return (0, 0);
        };
        let copy = era.copy_ns(len);
        let alloc = pages * era.fault_ns;
        if drv.jobs[drv.life.job_of(index)].ioengine == IoEngine::Mmap {
            (copy, alloc)
        } else {
            (0, copy + alloc)
        }
    }

    fn fs_read(&mut self, drv: &mut SimDriver<'_>, token: u64, trace: &mut dyn Trace) {
        let fs = self.fs.as_mut().expect("file system");
        let op = fs.ops[token].clone();
        let file = drv.layout.clones[op.process].files[op.unit.file];
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
        fs.ops.get_mut(token).expect("op").cpu_pages += read_pages;
        let who = who(drv, op.process);
        let sync_read = ReqFlags {
            sync: true,
            ..ReqFlags::default()
        };
        for &range in &plan.async_ahead {
            self.fs_pages_io(
                drv,
                Op::Read,
                range,
                sync_read,
                who,
                FsTag::ReadAhead,
                trace,
            );
        }
        let mut outstanding = 0;
        for &range in &plan.sync {
            outstanding += self.fs_pages_io(
                drv,
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
        let entry = fs.ops.get_mut(token).expect("op");
        entry.outstanding += outstanding;
        if outstanding == 0 {
            if plan.wait_others {
                fs.read_waiters.push(token);
            } else {
                entry.phase = OpPhase::Finishing;
                let pages = entry.cpu_pages;
                let (usr, sys) = self.read_cpu(drv, op.process, op.unit.len, pages);
                self.op_after_cpu(drv.now, (op.process, token), cpu, (usr, sys), 0);
            }
        }
    }

    pub(crate) fn fs_write(&mut self, drv: &mut SimDriver<'_>, token: u64, trace: &mut dyn Trace) {
        let now = drv.now;
        let process = self.fs.as_ref().expect("file system").ops[token].process;
        let mmap = drv.jobs[drv.life.job_of(process)].ioengine == IoEngine::Mmap;
        let fs = self.fs.as_mut().expect("file system");
        let op = fs.ops[token].clone();
        let file = drv.layout.clones[op.process].files[op.unit.file];
        let first = op.unit.offset / PAGE_SIZE;
        let count = (op.unit.offset + op.unit.len.max(1)).div_ceil(PAGE_SIZE) - first;
        let mut cpu = count * fs.config.page_cpu_ns;
        if mmap && (first..first + count).all(|page| fs.wb.cache().is_dirty(file as u32, page)) {
            // A store to a page that is already dirty and writable takes no fault: no
            // page_mkwrite, no balance_dirty_pages, just the copy (a quarter of the cost).
            let entry = fs.ops.get_mut(token).expect("op");
            entry.phase = OpPhase::Finishing;
            cpu = (cpu / 4).max(1);
            let copy = self.era().map_or(0, |era| era.copy_ns(op.unit.len));
            self.op_after_cpu(now, (op.process, token), cpu, (copy, 0), 0);
            return;
        }
        let throttle = if op.balanced {
            Throttle::None
        } else {
            fs.wb.balance_dirty_pages(count, now)
        };
        let pause = match throttle {
            Throttle::WriteBack { chunk } => {
                let entry = fs.ops.get_mut(token).expect("op");
                entry.phase = OpPhase::WriterWriteback {
                    written: 0,
                    chunk,
                    since: now,
                };
                return self.fs_writer_writeback(drv, token, trace);
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
            self.fs_journal_blocks(drv, blocks);
        }
        let fs = self.fs.as_mut().expect("file system");
        let absent = (first..first + count)
            .filter(|&page| fs.wb.cache().probe(file as u32, page) == Probe::Absent)
            .count() as u64;
        let dirtied = fs.wb.write(file as u32, op.unit.offset, op.unit.len, now);
        let (usr, sys) = self.write_cpu(mmap, op.unit.len, absent, count, dirtied);
        let fs = self.fs.as_mut().expect("file system");
        let entry = fs.ops.get_mut(token).expect("op");
        if drv.jobs[drv.life.job_of(op.process)].sync_writes {
            // O_SYNC: generic_write_sync() syncs before write() returns (data and metadata,
            // as fsync; the commit decision keys on the unit not being an fdatasync).
            entry.phase = OpPhase::FsyncData;
            return self.fs_fsync_data(drv, token, trace);
        }
        entry.phase = OpPhase::Finishing;
        self.op_after_cpu(now, (op.process, token), cpu, (usr, sys), pause);
    }

    /// A buffered write's CPU (usr, sys) past its system call: the copy into the cache (user
    /// time under `mmap`, a store into the mapping), a page allocated per page not cached
    /// (under `mmap`, a write fault per page not yet dirty: `page_mkwrite`), and the
    /// dirtying of each page newly dirtied.
    fn write_cpu(
        &self,
        mmap: bool,
        len: u64,
        absent: u64,
        pages: u64,
        dirtied: u64,
    ) -> (Time, Time) {
        let Some(era) = self.era() else {
            return (0, 0);
        };
        let copy = era.copy_ns(len);
        let dirty = dirtied * era.dirty_ns;
        if mmap {
            // The shortcut above took stores to pages all dirty already: this one faults.
            (copy, pages * era.fault_ns + dirty)
        } else {
            (0, copy + absent * era.fault_ns + dirty)
        }
    }

    /// Metadata blocks join the running transaction; the first ones arm its commit timer.
    fn fs_journal_blocks(&mut self, drv: &mut SimDriver<'_>, blocks: u64) {
        if blocks == 0 {
            return;
        }
        let fs = self.fs.as_mut().expect("file system");
        let running = fs.journal.running();
        if fs.journal.running_blocks() == 0 {
            let at = drv.now + fs.config.commit_interval_ns;
            self.events
                .push(at, Event::Fs(FsEvent::JournalTimer { tid: running }));
        }
        fs.journal.add_blocks(blocks);
    }

    /// Truncate (O_TRUNC or unlink): the file's pages go unwritten, its blocks are freed (so
    /// later writes allocate again), and the inode and bitmap updates join the running
    /// transaction. Costs CPU per page dropped.
    fn fs_truncate(&mut self, drv: &mut SimDriver<'_>, token: u64) {
        let now = drv.now;
        let fs = self.fs.as_mut().expect("file system");
        let op = &fs.ops[token];
        let file = drv.layout.clones[op.process].files[op.unit.file];
        let dropped = fs.wb.truncate(file as u32);
        if !fs.files[file].is_device {
            let running = fs.journal.running();
            let meta = &mut fs.meta[file];
            meta.allocated = Some(Vec::new());
            meta.inode_tid = running;
            meta.alloc_tid = running;
            self.fs_journal_blocks(drv, 2);
        }
        let fs = self.fs.as_ref().expect("file system");
        let cpu = fs.config.page_cpu_ns * (dropped + 1);
        // Choice: freeing a page costs what dirtying one does.
        let sys = self.era().map_or(0, |era| dropped * era.dirty_ns);
        let process = fs.ops[token].process;
        self.op_after_cpu(now, (process, token), cpu, (0, sys), 0);
    }

    /// fsync step: write the clone's dirty pages, wait for writeback in flight, commit.
    fn fs_fsync_data(&mut self, drv: &mut SimDriver<'_>, token: u64, trace: &mut dyn Trace) {
        let op = self.fs.as_ref().expect("file system").ops[token].clone();
        // A sync names one file of the clone (the runner turns end_fsync into one per file).
        let files = vec![drv.layout.clones[op.process].files[op.unit.file]];
        let who = who(drv, op.process);
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
                    drv,
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
        let entry = fs.ops.get_mut(token).expect("op");
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
            return self.fs_fsync_data(drv, token, trace);
        }
        self.fs_fsync_commit(drv, token, &files, trace);
    }

    fn fs_fsync_commit(
        &mut self,
        drv: &mut SimDriver<'_>,
        token: u64,
        files: &[usize],
        trace: &mut dyn Trace,
    ) {
        let fs = self.fs.as_mut().expect("file system");
        let op = fs.ops[token].clone();
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
            fs.ops.get_mut(token).expect("op").phase = OpPhase::FsyncCommit(need);
            self.fs_journal_submit(drv, ios, trace);
        } else if fs.config.barrier {
            fs.ops.get_mut(token).expect("op").phase = OpPhase::FsyncFlush;
            fs.ops.get_mut(token).expect("op").outstanding += 1;
            let who = who(drv, op.process);
            let flags = ReqFlags {
                sync: true,
                ..ReqFlags::default()
            };
            let tag = FsTag::Op {
                token,
                range: None,
                read: false,
            };
            self.fs_request(drv, Op::Flush, 0, 0, flags, who, tag, trace);
        } else {
            self.fs_complete(drv, token);
        }
    }

    fn fs_journal_submit(
        &mut self,
        drv: &mut SimDriver<'_>,
        ios: Vec<JournalIo>,
        trace: &mut dyn Trace,
    ) {
        let who = kernel_thread(JOURNAL_PID);
        // WRITE_SYNC without REQ_IDLE: CFQ's sync-noidle tree.
        let flags = ReqFlags {
            sync: true,
            ..ReqFlags::default()
        };
        for io in ios {
            match io {
                JournalIo::Log { sector, nr_sectors } => self.fs_request(
                    drv,
                    Op::Write,
                    sector,
                    u64::from(nr_sectors),
                    flags,
                    who,
                    FsTag::Journal,
                    trace,
                ),
                JournalIo::Flush => {
                    self.fs_request(drv, Op::Flush, 0, 0, flags, who, FsTag::Journal, trace)
                }
                // Choice: the FUA commit block goes through the scheduler (the kernel's flush
                // machinery would bypass it); its preflush above does bypass it.
                JournalIo::Commit { sector, fua } => self.fs_request(
                    drv,
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
    fn fs_complete(&mut self, drv: &mut SimDriver<'_>, token: u64) {
        let fs = self.fs.as_mut().expect("file system");
        let op = fs.ops.remove(token).expect("op completed twice");
        let index = op.process;
        match op.unit.kind.ddir() {
            Some(ddir) => {
                if drv.life.counts_at(index, drv.now) {
                    drv.stats[index].record_io(
                        ddir,
                        op.unit.len,
                        op.submitted_at,
                        op.submitted_at,
                        drv.now,
                    );
                }
            }
            None if op.unit.kind == IoKind::Truncate => {}
            None => drv.stats[index].record_sync(drv.now - op.submitted_at),
        }
        drv.unit_finished(self, index, &op.unit, UnitDone::ok(0));
    }

    /// A file-system event from the queue.
    pub(crate) fn fs_event(
        &mut self,
        drv: &mut SimDriver<'_>,
        event: FsEvent,
        trace: &mut dyn Trace,
    ) {
        match event {
            FsEvent::Op(token) => {
                let fs = self.fs.as_ref().expect("file system");
                match fs.ops.get(token).map(|op| op.phase.clone()) {
                    Some(OpPhase::Throttled) => self.fs_write(drv, token, trace),
                    Some(OpPhase::WriterWriteback { .. }) => {
                        self.fs_writer_timer(drv, token, trace)
                    }
                    Some(OpPhase::Finishing) => self.fs_complete(drv, token),
                    _ => {}
                }
            }
            FsEvent::WriterCpu(token) => self.fs_writer_writeback(drv, token, trace),
            FsEvent::Flusher { id, generation } => {
                self.fs_flusher(drv, FlusherId(id), generation, trace)
            }
            FsEvent::FlusherWalked { id } => self.fs_flusher_walked(drv, FlusherId(id), trace),
            FsEvent::WbTimer => {
                let fs = self.fs.as_mut().expect("file system");
                if fs.shutting_down {
                    return;
                }
                if fs.wb.timer_at().is_some_and(|at| at <= drv.now) {
                    fs.wb.timer(drv.now);
                }
                fs.wb_timer_at = None;
            }
            FsEvent::JournalTimer { tid } => {
                let fs = self.fs.as_mut().expect("file system");
                if fs.shutting_down || fs.journal.running() != tid {
                    return;
                }
                let ios = fs.journal.request_commit(tid);
                self.fs_journal_submit(drv, ios, trace);
            }
        }
        self.fs_notices(drv);
    }

    /// A request the file system issued completed (scheduler and disk counters already
    /// updated by the caller, except per-direction disk counts).
    pub(crate) fn fs_completed(
        &mut self,
        drv: &mut SimDriver<'_>,
        tag: FsTag,
        entry: &InFlight<SimIo>,
        trace: &mut dyn Trace,
    ) {
        let request = entry.request;
        if request.op != Op::Flush {
            let dir = request.op.data_dir();
            drv.disk
                .data_completed(dir, request.nr_sectors, entry.submitted_at, drv.now);
        }
        let now = drv.now;
        let fs = self.fs.as_mut().expect("file system");
        let sync = request.flags.sync;
        if sync {
            assert!(fs.sync_requests > 0, "sync request count went negative");
            fs.sync_requests -= 1;
        }
        match tag {
            FsTag::ReadAhead(range) => {
                fs.wb.read_done(range);
                self.fs_retry_reads(drv, trace);
            }
            FsTag::Op { token, range, read } => {
                match (range, read) {
                    (Some(range), true) => fs.wb.read_done(range),
                    (Some(range), false) => fs.wb.writeback_done(range, now),
                    (None, _) => {}
                }
                let op = fs.ops.get_mut(token).expect("request of a finished op");
                assert!(op.outstanding > 0, "op outstanding count went negative");
                op.outstanding -= 1;
                let last = op.outstanding == 0;
                let phase = op.phase.clone();
                if read {
                    self.fs_retry_reads(drv, trace);
                } else if range.is_some() {
                    self.fs_wake_flushers(drv, true, sync);
                    self.fs_retry_fsyncs(drv, trace);
                }
                if last {
                    match phase {
                        OpPhase::Read => self.fs_read(drv, token, trace),
                        OpPhase::FsyncData => self.fs_fsync_data(drv, token, trace),
                        OpPhase::FsyncFlush => self.fs_complete(drv, token),
                        _ => {}
                    }
                }
            }
            FsTag::Flusher { range, .. } | FsTag::WriterWriteback(range) => {
                fs.wb.writeback_done(range, now);
                assert!(fs.async_requests > 0, "async request count went negative");
                fs.async_requests -= 1;
                self.fs_wake_flushers(drv, true, sync);
                self.fs_wake_writers(drv, sync, trace);
                self.fs_retry_fsyncs(drv, trace);
            }
            FsTag::Journal => self.fs_journal_done(drv, trace),
        }
        if sync {
            // A sync request freed: where congestion reads the sync list (2.6.30), it is
            // what ends the writeback's congestion_wait()s.
            self.fs_wake_flushers(drv, false, true);
            self.fs_wake_writers(drv, true, trace);
        }
        self.fs_notices(drv);
    }

    /// A journal request completed: the next ones go, and fsyncs waiting for the commit it
    /// ended return.
    fn fs_journal_done(&mut self, drv: &mut SimDriver<'_>, trace: &mut dyn Trace) {
        let fs = self.fs.as_mut().expect("file system");
        let (ios, committed) = fs.journal.io_done();
        if let Some(tid) = committed {
            let waiters = std::mem::take(&mut fs.journal_waiters);
            let mut still = Vec::new();
            let mut done = Vec::new();
            for token in waiters {
                match fs.ops.get(token).map(|op| op.phase.clone()) {
                    Some(OpPhase::FsyncCommit(need)) if need <= tid => done.push(token),
                    Some(_) => still.push(token),
                    None => {}
                }
            }
            fs.journal_waiters = still;
            for token in done {
                self.fs_complete(drv, token);
            }
        }
        self.fs_journal_submit(drv, ios, trace);
    }

    fn fs_retry_reads(&mut self, drv: &mut SimDriver<'_>, trace: &mut dyn Trace) {
        let fs = self.fs.as_mut().expect("file system");
        for token in std::mem::take(&mut fs.read_waiters) {
            self.fs_read(drv, token, trace);
        }
    }

    pub(crate) fn fs_retry_fsyncs(&mut self, drv: &mut SimDriver<'_>, trace: &mut dyn Trace) {
        let fs = self.fs.as_mut().expect("file system");
        for token in std::mem::take(&mut fs.writeback_waiters) {
            self.fs_fsync_data(drv, token, trace);
        }
    }
}
