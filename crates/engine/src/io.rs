//! The engine as the driver's backend: a dispatched request becomes one submission queue
//! entry (a merged one a vectored read or write over its I/Os' buffers), a completion's
//! result is split back over the I/Os it carried, checked (errors, short transfers, verify)
//! and its buffers returned.

use io_uring::{opcode, squeue, types};
use iosched_core::{Request, RequestId, Time, Trace, SECTOR_SIZE};
use iosched_driver::stats::DDIR_READ;
use iosched_driver::{Backend, InFlight, UnitDone};
use iosched_workload::error_policy::ErrorType;
use iosched_workload::generator::{IoKind, IoUnit};
use iosched_workload::WriteData;

use crate::buffer;
use crate::engine::{EngineBackend, EngineDriver, VerifyFailure, Wake};
use crate::verify::{self, VerifyMethod};

/// One scheduler call in this many is timed.
pub(crate) const TIMING_SAMPLE: u64 = 8;

/// Index of the target in the ring's registered file table.
const TARGET_FILE: types::Fixed = types::Fixed(0);

/// What the engine keeps with each job I/O.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EngineIo {
    /// Buffer slot while in the device.
    slot: Option<usize>,
    /// A read of the verify pass (not the runner's), with the data seed its block should
    /// carry.
    verify_read: Option<u64>,
    /// A verified write: the data seed its block carries.
    seed: u64,
    /// When the kernel took its request ([`EngineBackend::submit_queued`]).
    pub(crate) sent_at: Option<Time>,
}

/// One job I/O of a request, in the request's byte order.
#[derive(Clone, Copy)]
pub(crate) struct Part {
    process: usize,
    unit: IoUnit,
    /// Byte offset on the target.
    byte: u64,
    /// Index among the request's riders, `None` for its own I/O.
    rider: Option<usize>,
}

fn what(kind: IoKind) -> &'static str {
    match kind {
        IoKind::Read => "read",
        IoKind::Write => "write",
        IoKind::Trim => "trim",
        IoKind::Fsync => "fsync",
        IoKind::Fdatasync => "fdatasync",
        IoKind::Truncate => "truncate",
    }
}

/// Requests handed to a thread with nothing else out that wake it at once.
pub(crate) const HANDOVER_BATCH: usize = 4;
/// The longest a handed request waits for a batch to form: about two of the light group's
/// releases at issue 32's rates (one per 85-280 us), well under its wait in the scheduler
/// (p50 0.7 ms).
pub(crate) const HANDOVER_WAIT_NS: Time = 200_000;

/// What a request handed to another thread does to that thread.
#[derive(Debug, PartialEq, Eq)]
enum Handover {
    /// Wake it now.
    Wake,
    /// Let it sleep until [`HANDOVER_BATCH`] requests are handed or the first of them has
    /// waited [`HANDOVER_WAIT_NS`].
    Hold,
    /// Leave it: one of its own requests is out, and that completion brings it to a turn
    /// that takes the outbox.
    Leave,
}

/// The rule for a thread with `owned_out` of its requests out, `outboxed` of them (the new
/// one among them) in its outbox and not yet in its ring.
fn handover(owned_out: u32, outboxed: usize) -> Handover {
    if owned_out as usize > outboxed {
        Handover::Leave
    } else if outboxed >= HANDOVER_BATCH {
        Handover::Wake
    } else {
        Handover::Hold
    }
}

/// The I/Os `entry` carries, in byte order, into `parts` (cleared first: the engine reuses
/// one vector, so a request costs no allocation).
fn parts_into(drv: &EngineDriver<'_>, entry: &InFlight<EngineIo>, parts: &mut Vec<Part>) {
    let byte = |process: usize, unit: &IoUnit| drv.file_start(process, unit.file) + unit.offset;
    parts.clear();
    parts.push(Part {
        process: entry.process,
        unit: entry.unit,
        byte: byte(entry.process, &entry.unit),
        rider: None,
    });
    for (index, rider) in entry.riders.iter().enumerate() {
        parts.push(Part {
            process: rider.process,
            unit: rider.unit,
            byte: byte(rider.process, &rider.unit),
            rider: Some(index),
        });
    }
    if parts.len() > 1 {
        parts.sort_by_key(|part| part.byte);
    }
}

/// Vectors the engine reuses for every request, so that issuing and completing one
/// allocates nothing once the run is under way.
#[derive(Default)]
pub(crate) struct Scratch {
    parts: Vec<Part>,
    ios: Vec<EngineIo>,
    slots: Vec<usize>,
}

impl EngineBackend {
    /// Takes a buffer for a read or write and fills it for a write.
    fn prepare(&mut self, drv: &EngineDriver<'_>, part: &Part, io: &mut EngineIo) -> usize {
        let slot = self
            .buffers
            .take()
            .expect("more job I/Os in the device than buffers");
        io.slot = Some(slot);
        if part.unit.kind != IoKind::Write {
            return slot;
        }
        let job = drv.life.job_of(part.process);
        let spec = &drv.jobs[job];
        self.write_seq += 1;
        let method = self.procs[part.process].verify;
        let byte = part.byte;
        let block = self.buffers.bytes_mut(slot, part.unit.len as usize);
        match (method, self.patterns[job].as_ref()) {
            // %o is the offset on the target, as fio's io_u->offset on the same file.
            (Some(VerifyMethod::Pattern), Some(pattern)) => pattern.fill(block, byte),
            (Some(method), pattern) => {
                let seed = self.config.seed.rotate_left(32) ^ self.write_seq;
                io.seed = seed;
                verify::fill(block, method, byte, seed, pattern);
            }
            (None, _) => match (&spec.buffer_pattern, spec.write_data) {
                (Some(pattern), _) => pattern.fill(block, byte),
                (None, WriteData::Zeros) => block.fill(0),
                (None, WriteData::Refilled) => buffer::refill(block, self.write_seq),
                (None, WriteData::Scrambled) => buffer::scramble(block, byte),
                (None, WriteData::AsIs) => {}
            },
        }
        slot
    }

    /// The entry for a request of one I/O.
    fn single_sqe(&mut self, part: &Part, slot: Option<usize>) -> squeue::Entry {
        let (byte, len) = (part.byte, part.unit.len as u32);
        match (part.unit.kind, slot) {
            (IoKind::Read | IoKind::Write, Some(slot)) => {
                let ptr = self.buffers.ptr(slot);
                match (part.unit.kind, self.fixed_buffers) {
                    (IoKind::Read, true) => {
                        opcode::ReadFixed::new(TARGET_FILE, ptr, len, slot as u16)
                            .offset(byte)
                            .build()
                    }
                    (IoKind::Read, false) => opcode::Read::new(TARGET_FILE, ptr, len)
                        .offset(byte)
                        .build(),
                    (_, true) => opcode::WriteFixed::new(TARGET_FILE, ptr, len, slot as u16)
                        .offset(byte)
                        .build(),
                    (_, false) => opcode::Write::new(TARGET_FILE, ptr, len)
                        .offset(byte)
                        .build(),
                }
            }
            (IoKind::Trim, _) => opcode::Fallocate::new(TARGET_FILE, part.unit.len)
                .offset(byte)
                .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                .build(),
            (IoKind::Fsync, _) => opcode::Fsync::new(TARGET_FILE).build(),
            (IoKind::Fdatasync, _) => opcode::Fsync::new(TARGET_FILE)
                .flags(types::FsyncFlags::DATASYNC)
                .build(),
            _ => unreachable!("no buffer for a read or write, or a buffered job's truncate"),
        }
    }

    /// The entry for a merged request: one vectored read or write over its I/Os' buffers.
    fn vectored_sqe(&mut self, id: RequestId, parts: &[Part], slots: &[usize]) -> squeue::Entry {
        let iovecs: Vec<libc::iovec> = parts
            .iter()
            .zip(slots)
            .map(|(part, &slot)| libc::iovec {
                iov_base: self.buffers.ptr(slot).cast(),
                iov_len: part.unit.len as usize,
            })
            .collect();
        let (ptr, count) = (iovecs.as_ptr(), iovecs.len() as u32);
        // The vector lives here until the completion is reaped (its heap block does not move).
        self.iovecs.insert(id, iovecs);
        let byte = parts[0].byte;
        match parts[0].unit.kind {
            IoKind::Read => opcode::Readv::new(TARGET_FILE, ptr, count)
                .offset(byte)
                .build(),
            _ => opcode::Writev::new(TARGET_FILE, ptr, count)
                .offset(byte)
                .build(),
        }
    }

    /// Queues `sqe` for request `id`, handing queued entries to the kernel first if the ring
    /// is full.
    ///
    /// Choice: hand-overs are delivered in batches ([`handover`]). Issue 32's light group,
    /// released one request at a time at the heavy job's completions and mostly with
    /// nothing else out, woke its thread 1.6 times per request (the hand-over, then the
    /// completion), each wake-up a context switch on the 2 CPUs and a turn under the queue
    /// lock: adaptive's engine CPU per request was 1.3x engine BFQ's, which serves the
    /// light queue in bursts on its own thread. The scheduler's decision and its charge
    /// are made as before; only the submission waits, at most [`HANDOVER_WAIT_NS`].
    fn push(&mut self, drv: &mut EngineDriver<'_>, id: RequestId, sqe: &squeue::Entry) {
        if self.placement.is_some() {
            let process = drv.in_flight[&id].process;
            let owner = self.owner[process];
            if owner != self.thread {
                // Its cgroup's thread submits it, so the kernel charges it there.
                self.outbox[owner].push((id, sqe.clone()));
                self.handed_over += 1;
                self.stages[process].handed += 1;
                match handover(self.owned_out[owner], self.outbox[owner].len()) {
                    Handover::Wake => self.wake_for_handover(owner),
                    Handover::Hold => {
                        self.handed_since[owner].get_or_insert(self.now);
                    }
                    Handover::Leave => {}
                }
                return;
            }
        }
        self.push_here(drv, id, sqe);
    }

    /// Queues `sqe` in this thread's ring (see [`EngineBackend::push`]).
    pub(crate) fn push_here(
        &mut self,
        drv: &mut EngineDriver<'_>,
        id: RequestId,
        sqe: &squeue::Entry,
    ) {
        loop {
            // SAFETY: the entry points into buffer slots now owned by this request (and, for a
            // merged request, into its vector kept in `self.iovecs`), or no memory at all; none
            // is touched or freed until its completion is reaped, and the pool outlives the
            // ring (field order of `EngineBackend`).
            let pushed = unsafe { self.ring.submission().push(sqe) };
            if pushed.is_ok() {
                self.unsent.push(id);
                return;
            }
            // Queue full: hand what is queued to the kernel and retry. The ring has at least
            // as many entries as the device cap, so this is rare.
            self.submit_queued(drv);
            if let Some(error) = &self.ring_error {
                panic!("io_uring submit failed: {error}");
            }
        }
    }

    /// How one I/O of a completed request ended: `done` bytes of it moved (`Err`: the
    /// request's error). Checks a verified read and gives its buffer back.
    fn part_result(
        &mut self,
        drv: &mut EngineDriver<'_>,
        part: &Part,
        io: &EngineIo,
        done: Result<u64, i32>,
    ) -> UnitDone {
        let (index, unit, byte) = (part.process, part.unit, part.byte);
        let job = drv.life.job_of(index);
        let jobs = drv.jobs;
        let job_name = &jobs[job].name;
        let what = what(unit.kind);
        let moves = matches!(unit.kind, IoKind::Read | IoKind::Write);
        let mut outcome = UnitDone::ok(io.seed);
        match done {
            Err(errno) => {
                drv.stats[index].record_error(unit.kind.ddir(), errno);
                outcome.failed = true;
                // fio's error types: reads are reads, everything else (writes, trims,
                // syncs) writes.
                let kind = match unit.kind {
                    IoKind::Read => ErrorType::Read,
                    _ => ErrorType::Write,
                };
                if drv.jobs[job].errors.survives(kind, errno) {
                    outcome.survived = true;
                } else {
                    let error = std::io::Error::from_raw_os_error(errno);
                    self.io_errors.push(format!(
                        "job '{job_name}': {what} of {} bytes at offset {byte}: {error}",
                        unit.len
                    ));
                }
            }
            // fallocate (trim) answers 0 on success, reads and writes the bytes moved.
            Ok(moved) if moves && moved < unit.len => {
                self.io_errors.push(format!(
                    "job '{job_name}': short {what} at offset {byte}: {moved} of {} bytes",
                    unit.len
                ));
                if let Some(ddir) = unit.kind.ddir() {
                    drv.stats[index].record_short(ddir);
                }
                outcome.failed = true;
            }
            Ok(_) => {}
        }
        if io.verify_read.is_some() {
            outcome.ddir = Some(DDIR_READ);
        }
        if let Some(slot) = io.slot {
            let process = &self.procs[index];
            let check =
                (io.verify_read.is_some() || process.check_reads) && unit.kind == IoKind::Read;
            if let (true, false, Some(method)) = (check, outcome.failed, process.verify) {
                let block = self.buffers.bytes_mut(slot, unit.len as usize);
                let result = match (method, self.patterns[job].as_ref()) {
                    (VerifyMethod::Pattern, Some(pattern)) => pattern.check(block, byte),
                    (method, pattern) => {
                        verify::check(block, method, byte, io.verify_read, pattern)
                    }
                };
                if let Err(message) = result {
                    // fio 3.33: a bad block is EILSEQ of the verify type (`td_error_type()`).
                    // A job that continues on it (`continue_on_error=verify|all`, EILSEQ on
                    // the verify list) counts it and goes on, unless verify_fatal ends it at
                    // once; any other job ends at its first bad block.
                    let survived = drv.jobs[job]
                        .errors
                        .survives(ErrorType::Verify, libc::EILSEQ);
                    drv.stats[index].record_verify_error(libc::EILSEQ, survived);
                    self.verify_failures.push(VerifyFailure {
                        job: job_name.clone(),
                        offset: byte,
                        len: unit.len,
                        message,
                        survived,
                    });
                    outcome.fail_job = !survived || drv.jobs[job].verify_fatal;
                }
            }
            self.buffers.give_back(slot);
        }
        outcome.fail_job |= outcome.failed && !outcome.survived;
        outcome
    }
}

impl Backend for EngineBackend {
    type Io = EngineIo;
    type Result = i32;

    fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    fn in_device(&self) -> u32 {
        self.in_device
    }

    fn issue(&mut self, drv: &mut EngineDriver<'_>, request: &Request, _trace: &mut dyn Trace) {
        let id = request.id;
        let entry = &drv.in_flight[&id];
        let Scratch {
            mut parts,
            mut ios,
            mut slots,
        } = std::mem::take(&mut self.scratch);
        parts_into(drv, entry, &mut parts);
        ios.clear();
        ios.extend(parts.iter().map(|part| match part.rider {
            Some(rider) => entry.riders[rider].io,
            None => entry.io,
        }));
        let moves = matches!(parts[0].unit.kind, IoKind::Read | IoKind::Write);
        slots.clear();
        if moves {
            for (part, io) in parts.iter().zip(&mut ios) {
                slots.push(self.prepare(drv, part, io));
            }
        }
        let sqe = if parts.len() == 1 {
            self.single_sqe(&parts[0], slots.first().copied())
        } else {
            self.vectored_sqe(id, &parts, &slots)
        };
        let entry = drv.in_flight.get_mut(id).expect("issued request in flight");
        for (part, &io) in parts.iter().zip(&ios) {
            match part.rider {
                Some(rider) => entry.riders[rider].io = io,
                None => entry.io = io,
            }
        }
        self.scratch = Scratch { parts, ios, slots };
        self.in_device += 1;
        self.owned_out[self.owner[entry.process]] += 1;
        self.push(drv, id, &sqe.user_data(id.0));
    }

    /// fio's commit of a batch of `iodepth_batch_submit` I/Os: to the kernel now.
    fn batch_submitted(
        &mut self,
        drv: &mut EngineDriver<'_>,
        _process: usize,
        trace: &mut dyn Trace,
    ) {
        self.commit(drv, trace);
    }

    fn wake(&mut self, process: usize, at: Time) {
        if at <= self.now {
            self.woken.push(process);
        } else {
            self.push_wake(at, Wake::Process(process));
        }
    }

    fn start_job_at(&mut self, job: usize, at: Time) {
        self.push_wake(at, Wake::StartJob(job));
    }

    /// The loop's wait has the idle deadline as its timeout (`drv.timer_at`).
    fn arm_idle_timer(&mut self, _at: Time) {}

    fn job_io(&mut self, verify_tag: Option<u64>) -> EngineIo {
        EngineIo {
            verify_read: verify_tag,
            ..EngineIo::default()
        }
    }

    /// The promise to the user: nothing outside the job's range is ever touched.
    fn admit(
        &mut self,
        _drv: &mut EngineDriver<'_>,
        process: usize,
        unit: &IoUnit,
        _trace: &mut dyn Trace,
    ) -> bool {
        if !matches!(unit.kind, IoKind::Fsync | IoKind::Fdatasync) {
            let region = self.procs[process].regions[unit.file];
            assert!(unit.offset >= region.start, "I/O before the job's region");
            assert!(
                unit.offset + unit.len <= region.start + region.len,
                "I/O past the job's region"
            );
        }
        false
    }

    fn unit_results(
        &mut self,
        drv: &mut EngineDriver<'_>,
        entry: &InFlight<EngineIo>,
        result: i32,
        out: &mut Vec<UnitDone>,
    ) {
        assert!(self.in_device > 0, "device in-flight count went negative");
        self.in_device -= 1;
        let owner = self.owner[entry.process];
        assert!(
            self.owned_out[owner] > 0,
            "thread {owner}'s count went negative"
        );
        self.owned_out[owner] -= 1;
        if !entry.riders.is_empty() {
            self.iovecs.remove(&entry.request.id);
        }
        let issued = entry.issued_at().unwrap_or(entry.submitted_at);
        let sent = entry.io.sent_at.unwrap_or(issued);
        self.stages[entry.process].add(entry.submitted_at, issued, sent, self.woke_at, self.now);
        let start = entry.request.sector * SECTOR_SIZE;
        let mut parts = std::mem::take(&mut self.scratch.parts);
        parts_into(drv, entry, &mut parts);
        let base = out.len();
        out.resize(base + parts.len(), UnitDone::ok(0));
        for part in &parts {
            self.touched.push(part.process);
            let io = match part.rider {
                Some(rider) => entry.riders[rider].io,
                None => entry.io,
            };
            // A merged request moves its I/Os in byte order: each got what reached it.
            let done = match result {
                error if error < 0 => Err(-error),
                moved => Ok((moved as u64).saturating_sub(part.byte.saturating_sub(start))),
            };
            let mut outcome = self.part_result(drv, part, &io, done);
            outcome.sent_at = io.sent_at;
            out[base + part.rider.unwrap_or(entry.riders.len())] = outcome;
        }
        self.scratch.parts = parts;
    }

    /// Each I/O a completion carried counts toward its job's `iodepth_batch_complete_max`;
    /// a job whose group is in runs before the next I/O of a merged request is handed over
    /// (fio sees a merged request's I/Os as separate events and refills after each group of
    /// them, so its next submissions go out one group at a time, not the whole request
    /// again, which would be merged again).
    fn unit_completed(
        &mut self,
        drv: &mut EngineDriver<'_>,
        process: usize,
        more: bool,
        trace: &mut dyn Trace,
    ) {
        self.reaped[process] += 1;
        // Another worker thread's clone runs on its own thread, woken through its mailbox.
        let own = self.owner[process] == self.thread;
        if more && own && self.reaped[process] >= self.complete_max[process] {
            self.reaped[process] = 0;
            drv.wake_process(self, process, trace);
            self.commit(drv, trace);
            self.gauge_clone(drv, process);
        }
    }

    /// Times one call in [`TIMING_SAMPLE`], drawn at random (the calls come in cycles, so a
    /// fixed stride would time one kind only): two clock reads around every call cost more
    /// than noop's own work.
    fn in_scheduler<R>(&mut self, call: impl FnOnce() -> R) -> R {
        self.scheduler_calls += 1;
        // xorshift64: uniform enough to pick the calls to time.
        let mut draw = self.timing_draw;
        draw ^= draw << 13;
        draw ^= draw >> 7;
        draw ^= draw << 17;
        self.timing_draw = draw;
        if !draw.is_multiple_of(TIMING_SAMPLE) {
            return call();
        }
        let t0 = std::time::Instant::now();
        let result = call();
        self.scheduler_ns += t0.elapsed().as_nanos() as u64;
        self.timed_calls += 1;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::{handover, Handover, HANDOVER_BATCH};

    /// A thread with one of its own requests out is left to take the hand-over at that
    /// request's completion; one with only handed requests is held until a batch is in,
    /// then woken.
    #[test]
    fn hand_overs_wake_a_thread_by_the_batch() {
        assert_eq!(handover(2, 1), Handover::Leave);
        assert_eq!(handover(9, 8), Handover::Leave);
        assert_eq!(handover(1, 1), Handover::Hold);
        assert_eq!(handover(3, 3), Handover::Hold);
        let batch = HANDOVER_BATCH as u32;
        assert_eq!(handover(batch, HANDOVER_BATCH), Handover::Wake);
    }
}
