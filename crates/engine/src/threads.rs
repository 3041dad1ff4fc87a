//! The engine on several CPUs: a worker thread per CPU the jobs allow, each with its own
//! io_uring ring and its own share of the clones, all sharing one scheduler behind one lock,
//! as blk-mq with one hardware queue and an elevator shares one elevator between CPUs.
//!
//! The driver (the block layer and the scheduler) and the engine's backend state (buffers,
//! wake list, gauges, the device's in-flight count) sit in one [`Mutex`], the queue lock.
//! A worker takes it for a whole turn of its loop: it puts its own ring in the backend
//! (whatever is dispatched during the turn goes into that ring, as a CPU that runs the
//! hardware queue issues to the device itself), reaps what its ring completed (a completion
//! is handled on the CPU whose ring reaped it: statistics, the scheduler's `completed`, the
//! next dispatch), runs what is due, steps its own clones that were woken (each inserts its
//! I/O into the shared scheduler and may run the dispatch), submits, takes its ring back and
//! drops the lock; then it waits on its ring alone, for a completion, a wake-up from another
//! worker, or the next deadline.
//!
//! A clone belongs to one worker, which alone steps it (a job's thread runs on its own CPU
//! in fio). When a completion reaped on one worker, or a wake-up found due there, is for
//! another worker's clone, the clone goes into the owner's mailbox and the owner is told
//! through its eventfd, whose read each worker keeps pending in its ring: the owner's wait
//! returns and its next turn steps the clone.
//!
//! The lock's cost is measured: how often it was taken, how often another worker held it,
//! the time spent waiting for it and the time it was held ([`LockSummary`]).
//!
//! With one thread none of this runs: the single loop of `engine.rs` is used unchanged.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use io_uring::{opcode, types, IoUring};
use iosched_core::{NoTrace, RequestId, Time};
use iosched_driver::RunProgress;
use iosched_workload::JobSpec;

use crate::affinity;
use crate::cgroup;
use crate::engine::{wait_in_kernel, Engine, EngineBackend, EngineDriver, EngineOutcome, Usage};
use crate::error::EngineError;
use crate::setup;

/// The `user_data` of a worker's pending eventfd read (request ids count up from 0).
pub(crate) const NOTIFY_TAG: u64 = u64::MAX;
/// The `user_data` of the cancellation of that read at the end.
const CANCEL_TAG: u64 = u64::MAX - 1;

/// The queue lock's cost over a run, all workers together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockSummary {
    /// Times a worker took the lock.
    pub acquisitions: u64,
    /// Times it was held by another worker when asked for.
    pub contended: u64,
    /// Time spent waiting for it.
    pub wait_ns: u64,
    /// Time it was held.
    pub held_ns: u64,
}

impl LockSummary {
    fn add(&mut self, other: &LockSummary) {
        self.acquisitions += other.acquisitions;
        self.contended += other.contended;
        self.wait_ns += other.wait_ns;
        self.held_ns += other.held_ns;
    }
}

/// What the kernel's scheduler did with one thread (`/proc/thread-self/schedstat`): its time
/// on a CPU, its time runnable on a run queue waiting for one, and its time slices. Zero
/// where the kernel keeps no such counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedStat {
    pub run_ns: u64,
    pub runqueue_ns: u64,
    pub slices: u64,
}

impl SchedStat {
    /// The calling thread's counts so far.
    pub fn now() -> SchedStat {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        let mut fields = text
            .split_whitespace()
            .map(|word| word.parse().unwrap_or(0));
        SchedStat {
            run_ns: fields.next().unwrap_or(0),
            runqueue_ns: fields.next().unwrap_or(0),
            slices: fields.next().unwrap_or(0),
        }
    }

    /// What was counted between `earlier` and `self`.
    pub fn since(self, earlier: SchedStat) -> SchedStat {
        SchedStat {
            run_ns: self.run_ns.saturating_sub(earlier.run_ns),
            runqueue_ns: self.runqueue_ns.saturating_sub(earlier.runqueue_ns),
            slices: self.slices.saturating_sub(earlier.slices),
        }
    }
}

/// The worker threads' CPUs: `threads` (0: one per CPU the jobs allow, or this process may
/// use), capped by the clones. A worker is pinned to one CPU of the jobs' `cpus_allowed`
/// (taken in turn) when they name any.
///
/// Choice: without `cpus_allowed` the workers are not pinned, as the single loop is not:
/// on a machine shared with other work, the kernel's placement serves better than a fixed
/// CPU that another process may hold.
pub(crate) fn thread_cpus(threads: u32, clones: usize, cpus: Option<&[u32]>) -> Vec<Option<u32>> {
    let available = match cpus {
        Some(cpus) => cpus.len(),
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    let wanted = match threads {
        0 => available,
        n => n as usize,
    };
    let count = wanted.min(clones).max(1);
    (0..count)
        .map(|thread| cpus.map(|cpus| cpus[thread % cpus.len()]))
        .collect()
}

/// Each clone's worker: the least loaded whose CPU the clone's job allows (any, if none
/// does), the lowest index on a tie.
pub(crate) fn assign_clones(
    jobs: &[JobSpec],
    clone_jobs: &[usize],
    thread_cpus: &[Option<u32>],
) -> Vec<usize> {
    let mut load = vec![0usize; thread_cpus.len()];
    let mut owner = Vec::with_capacity(clone_jobs.len());
    for &job in clone_jobs {
        let allows = |thread: &usize| match (&jobs[job].cpus_allowed, thread_cpus[*thread]) {
            (Some(allowed), Some(cpu)) => allowed.contains(&cpu),
            _ => true,
        };
        let pick = |candidates: &mut dyn Iterator<Item = usize>| {
            candidates.min_by_key(|&thread| (load[thread], thread))
        };
        let thread = pick(&mut (0..load.len()).filter(allows))
            .or_else(|| pick(&mut (0..load.len())))
            .unwrap_or(0);
        load[thread] += 1;
        owner.push(thread);
    }
    owner
}

/// What the queue lock protects.
struct Shared<'a> {
    drv: EngineDriver<'a>,
    back: EngineBackend,
    /// Every worker is to leave its loop (the run ended, failed, or a worker failed).
    exit: bool,
    error: Option<EngineError>,
}

// SAFETY: the backend's raw pointers (its buffer pool's memory, the vectors of merged
// requests) point into memory it owns and frees only when dropped; every access to it goes
// through the mutex around `Shared`, so no two threads touch that memory at once, and the
// kernel reads and writes it only for requests a ring owns, as with one thread.
unsafe impl Send for EngineBackend {}

/// One worker's own side: its ring while the backend does not hold it, its wake-up channel
/// and what it measured.
struct Worker {
    index: usize,
    // Field order matters for drop: the ring goes before the wake-up read's buffer.
    ring: IoUring,
    /// Entries queued in `ring` and not taken by the kernel (the backend's `unsent` while
    /// the ring is in the backend).
    unsent: Vec<RequestId>,
    /// The eventfd read is pending in the ring.
    armed: bool,
    wake_buffer: Box<[u8; 8]>,
    lock: LockSummary,
    enter_calls: u64,
    start: Instant,
    /// The target's path, for errors.
    path: String,
    /// Workers to tell after a turn, reused.
    told: Vec<usize>,
    /// Entries the kernel took from the ring since the last turn, and when the call that
    /// took the last of them returned.
    sent: usize,
    sent_at: Time,
    /// When its last wait returned.
    woke_at: Time,
}

/// What a turn under the lock leaves the worker to do.
enum Next {
    Wait(Option<Time>),
    Exit,
}

/// Runs `engine` on its worker threads: this thread is worker 0 (its ring was made here, as
/// `SINGLE_ISSUER` requires), the others are spawned and make their own.
pub(crate) fn run(
    engine: Engine<'_>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(RunProgress),
) -> Result<EngineOutcome, EngineError> {
    let Engine { drv, mut back } = engine;
    let threads = back.thread_cpus.len();
    let path = back.target.path.clone();
    let parked = IoUring::new(1).map_err(|e| EngineError::io(&path, "io_uring", e))?;
    let ring0 = std::mem::replace(&mut back.ring, parked);
    let entries = ring0.params().sq_entries();
    let events = (0..threads)
        .map(|_| eventfd().map_err(|e| EngineError::io(&path, "eventfd", e)))
        .collect::<Result<Vec<_>, _>>()?;
    let usage_at_start = Usage::now();
    back.start = Instant::now();
    let shared = Mutex::new(Shared {
        drv,
        back,
        exit: false,
        error: None,
    });
    {
        let mut guard = shared.lock().expect("no worker yet");
        let Shared { drv, back, .. } = &mut *guard;
        back.set_now(drv, 0);
        drv.start_ready_jobs(back);
    }
    let mut worker0 = Worker::new(0, ring0, &shared);
    let mut lock = LockSummary::default();
    let mut enter_calls = 0;
    let mut sched = vec![SchedStat::default(); threads];
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads)
            .map(|index| {
                let (shared, events) = (&shared, &events);
                scope.spawn(move || spawned(index, entries, shared, events, stop))
            })
            .collect();
        pin(&shared, 0, &events);
        place(&shared, 0, &events);
        let at_start = SchedStat::now();
        work(&shared, &mut worker0, &events, stop, Some(progress));
        sched[0] = SchedStat::now().since(at_start);
        worker0.release();
        go_home(&shared);
        lock.add(&worker0.lock);
        enter_calls += worker0.enter_calls;
        for handle in handles {
            match handle.join() {
                Ok((index, worker_lock, calls, worker_sched)) => {
                    lock.add(&worker_lock);
                    enter_calls += calls;
                    sched[index] = worker_sched;
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    let usage = usage_at_start.until(Usage::now());
    let shared = shared
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner());
    let Shared {
        drv,
        mut back,
        error,
        ..
    } = shared;
    back.ring = worker0.ring;
    back.enter_calls += enter_calls;
    if let Some(error) = error {
        return Err(error);
    }
    let mut outcome = Engine { drv, back }.finish(usage, lock)?;
    outcome.workers = sched;
    Ok(outcome)
}

/// A spawned worker: its ring, its loop, its ring's release; its index, the lock's cost, its
/// `io_uring_enter` calls and its scheduling back to worker 0.
fn spawned(
    index: usize,
    entries: u32,
    shared: &Mutex<Shared<'_>>,
    events: &[File],
    stop: &AtomicBool,
) -> (usize, LockSummary, u64, SchedStat) {
    // Into its cgroup before its ring exists, so that any worker the ring makes in the
    // kernel (io-wq's, created from this thread) is there too.
    place(shared, index, events);
    let ring = match worker_ring(shared, entries) {
        Ok(ring) => ring,
        Err(error) => {
            fail(shared, error, events, index);
            return (index, LockSummary::default(), 0, SchedStat::default());
        }
    };
    let _alarm = PanicAlarm {
        shared,
        events,
        index,
    };
    let mut worker = Worker::new(index, ring, shared);
    pin(shared, index, events);
    let at_start = SchedStat::now();
    work(shared, &mut worker, events, stop, None);
    let sched = SchedStat::now().since(at_start);
    worker.release();
    let _ = worker.ring.submitter().unregister_files();
    let _ = worker.ring.submitter().unregister_buffers();
    (index, worker.lock, worker.enter_calls, sched)
}

/// Ends the run if a spawned worker panics: the others are told (a worker asleep on its
/// ring would otherwise wait for ever), and the panic is raised again when it is joined.
struct PanicAlarm<'s, 'a> {
    shared: &'s Mutex<Shared<'a>>,
    events: &'s [File],
    index: usize,
}

impl Drop for PanicAlarm<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut guard = self.shared.lock().unwrap_or_else(|p| p.into_inner());
            guard.exit = true;
            drop(guard);
            tell_all(self.events, self.index);
        }
    }
}

/// A ring like worker 0's, made on the calling thread, with the target and (if worker 0's
/// are) the buffers registered.
fn worker_ring(shared: &Mutex<Shared<'_>>, entries: u32) -> Result<IoUring, EngineError> {
    let guard = shared.lock().unwrap_or_else(|poison| poison.into_inner());
    let back = &guard.back;
    let path = &back.target.path;
    let ring = setup::new_ring(entries)
        .map_err(|error| EngineError::io(path, "cannot set up io_uring", error))?;
    ring.submitter()
        .register_files(&[back._file.as_raw_fd()])
        .map_err(|error| EngineError::io(path, "cannot register the file with io_uring", error))?;
    if back.fixed_buffers {
        let iovecs = back.buffers.iovecs();
        // SAFETY: the iovecs describe the pool's slots, which live in the shared backend
        // until every worker has ended; this ring is dropped when its worker ends.
        unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(|error| {
            EngineError::io(path, "cannot register the buffers with io_uring", error)
        })?;
    }
    Ok(ring)
}

/// Pins worker `index` to its CPU, if it has one.
fn pin(shared: &Mutex<Shared<'_>>, index: usize, events: &[File]) {
    let cpu = {
        let guard = shared.lock().unwrap_or_else(|poison| poison.into_inner());
        guard.back.thread_cpus[index]
    };
    if let Some(cpu) = cpu {
        if let Err(error) = affinity::pin_current_thread(&[cpu]) {
            let path = shared
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .back
                .target
                .path
                .clone();
            let context = format!("cannot pin worker {index} to CPU {cpu}");
            fail(
                shared,
                EngineError::io(&path, &context, error),
                events,
                index,
            );
        }
    }
}

/// Moves worker `index` into its cgroup, if the run places its workers
/// ([`crate::cgroup`]).
fn place(shared: &Mutex<Shared<'_>>, index: usize, events: &[File]) {
    let (dir, path) = {
        let guard = shared.lock().unwrap_or_else(|poison| poison.into_inner());
        let back = &guard.back;
        let dir = back
            .placement
            .as_ref()
            .and_then(|p| p.dir(index))
            .map(Path::to_path_buf);
        (dir, back.target.path.clone())
    };
    if let Some(dir) = dir {
        if let Err(error) = cgroup::join(&dir) {
            let context = format!("cannot move worker {index} into {}", dir.display());
            fail(
                shared,
                EngineError::io(&path, &context, error),
                events,
                index,
            );
        }
    }
}

/// Worker 0 (the caller's thread) leaves its group for the process's own, so that the
/// group can go at the end of the run.
fn go_home(shared: &Mutex<Shared<'_>>) {
    let guard = shared.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(placement) = &guard.back.placement {
        if placement.dir(0).is_some() {
            // A failure leaves the group in place (its removal fails with EBUSY): nothing
            // else depends on it.
            let _ = cgroup::join(placement.home());
        }
    }
}

/// Worker `index` failed: every worker stops, the first error is the run's.
fn fail(shared: &Mutex<Shared<'_>>, error: EngineError, events: &[File], index: usize) {
    {
        let mut guard = shared.lock().unwrap_or_else(|poison| poison.into_inner());
        guard.error.get_or_insert(error);
        guard.exit = true;
    }
    tell_all(events, index);
}

/// Wakes every worker but `index`.
fn tell_all(events: &[File], index: usize) {
    for (other, event) in events.iter().enumerate() {
        if other != index {
            tell(event);
        }
    }
}

/// Adds one to a worker's eventfd: its pending read completes and its wait returns.
fn tell(mut event: &File) {
    // An eventfd write fails only if the counter would overflow, when the reader is woken
    // anyway.
    let _ = event.write(&1u64.to_ne_bytes());
}

/// A non-blocking eventfd.
fn eventfd() -> std::io::Result<File> {
    // SAFETY: eventfd(2) takes no pointers; it returns a new descriptor or -1.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// The worker's loop: a turn under the lock, then a wait on its own ring, until a turn
/// says the run is over. Worker 0 reports progress between turns.
fn work(
    shared: &Mutex<Shared<'_>>,
    worker: &mut Worker,
    events: &[File],
    stop: &AtomicBool,
    mut progress: Option<&mut dyn FnMut(RunProgress)>,
) {
    let mut next_progress_ns = 0;
    loop {
        let (mut guard, since) = worker.lock(shared);
        let state = &mut *guard;
        worker.swap(&mut state.back);
        let next = turn(state, worker, events, stop);
        worker.swap(&mut state.back);
        let ios_done = state.drv.ios_done();
        let mut told = std::mem::take(&mut worker.told);
        take_told(&mut state.back, &mut told);
        drop(guard);
        worker.lock.held_ns += since.elapsed().as_nanos() as u64;
        // What the turn queued goes to the kernel first, in a call of its own; only then are
        // other workers woken and does this one wait (`Worker::submit_and_wait`).
        if let Err(error) = worker.submit() {
            fail(shared, error, events, worker.index);
            return;
        }
        for &other in &told {
            tell(&events[other]);
        }
        worker.told = told;
        let deadline = match next {
            Next::Exit => return,
            Next::Wait(deadline) => deadline,
        };
        let now = worker.clock();
        if let Some(progress) = progress.as_deref_mut() {
            if now >= next_progress_ns {
                progress(RunProgress { now, ios_done });
                next_progress_ns = now + crate::engine::PROGRESS_EVERY_NS;
            }
        }
        if let Err(error) = worker.submit_and_wait(deadline) {
            fail(shared, error, events, worker.index);
            return;
        }
        worker.woke_at = worker.clock();
    }
}

/// What other workers dispatched for worker `index` to submit goes into its ring, in the
/// order it was dispatched.
fn take_handed(back: &mut EngineBackend, drv: &mut EngineDriver<'_>, index: usize) {
    back.handed_since[index] = None;
    let mut handed = std::mem::take(&mut back.outbox[index]);
    for (id, sqe) in handed.drain(..) {
        back.push_here(drv, id, &sqe);
    }
    back.outbox[index] = handed;
}

/// The workers whose mailboxes got something into `told`, their flags cleared.
fn take_told(back: &mut EngineBackend, told: &mut Vec<usize>) {
    told.clear();
    for (thread, flag) in back.notify.iter_mut().enumerate() {
        if std::mem::take(flag) {
            told.push(thread);
        }
    }
}

/// One turn of a worker under the lock, its ring in the backend: what its ring completed,
/// what is due, its woken clones, the dispatch, the submission.
///
/// Choice: the scheduler's idle timer (CFQ's `slice_idle`) is not one worker's: every
/// worker's wait ends at the earliest deadline it sees before it waits (the wake list's
/// and the idle timer's together), and the first worker to take the lock after the
/// deadline fires it. The worker that armed it holds the lock at that moment, so at least
/// it waits with that deadline, and a busy worker finds it due at its next turn, the way
/// the kernel's timer fires on whichever CPU is free.
fn turn(state: &mut Shared<'_>, worker: &mut Worker, events: &[File], stop: &AtomicBool) -> Next {
    if state.exit {
        return Next::Exit;
    }
    let (drv, back) = (&mut state.drv, &mut state.back);
    let trace = &mut NoTrace;
    back.defer_submit = true;
    let now = back.clock();
    back.set_now(drv, now);
    back.woke_at = worker.woke_at;
    let sent = std::mem::take(&mut worker.sent);
    back.stamp_sent_at(drv, sent, worker.sent_at);
    if sent > 0 {
        // The worker's own submit ran outside the lock: the device gauge learns now that
        // those requests reached the kernel when that call returned.
        back.gauge_device(worker.sent_at);
    }
    if back.ring.submission().is_empty() && !back.unsent.is_empty() {
        // A wait's own `io_uring_enter` took entries a busy ring had left queued.
        let left = back.unsent.len();
        back.stamp_sent(drv, left);
    }
    if stop.load(Ordering::Relaxed) && !back.stopping {
        back.begin_stop(drv);
    }
    let mine = std::mem::take(&mut back.mail[worker.index]);
    back.woken.extend_from_slice(&mine);
    take_handed(back, drv, worker.index);
    back.reap(drv, trace);
    if std::mem::take(&mut back.notified) {
        worker.armed = false;
    }
    if !worker.armed {
        worker.arm(back, events[worker.index].as_raw_fd());
    }
    if back.run_turn(drv, trace) {
        state.exit = true;
        tell_all(events, worker.index);
        return Next::Exit;
    }
    back.wake_overdue_handovers(back.clock());
    let deadline = back.deadline(drv);
    // Everything that could still set a clone going is shared: requests in the device
    // (counted from their issue), the wake list and idle timer, the mailboxes.
    let mail = back.mail.iter().any(|mail| !mail.is_empty());
    if back.in_device == 0 && deadline.is_none() && !mail {
        state.error = Some(back.stalled(drv));
        state.exit = true;
        tell_all(events, worker.index);
        return Next::Exit;
    }
    back.submit_queued(drv);
    if let Some(error) = back.ring_error.take() {
        let path = back.target.path.clone();
        state.error = Some(EngineError::io(&path, "io_uring_enter", error));
        state.exit = true;
        tell_all(events, worker.index);
        return Next::Exit;
    }
    Next::Wait(deadline)
}

impl Worker {
    fn new(index: usize, ring: IoUring, shared: &Mutex<Shared<'_>>) -> Worker {
        let (start, path) = {
            let guard = shared.lock().unwrap_or_else(|poison| poison.into_inner());
            (guard.back.start, guard.back.target.path.clone())
        };
        Worker {
            index,
            ring,
            unsent: Vec::new(),
            armed: false,
            wake_buffer: Box::new([0; 8]),
            lock: LockSummary::default(),
            enter_calls: 0,
            start,
            path,
            told: Vec::new(),
            sent: 0,
            sent_at: 0,
            woke_at: 0,
        }
    }

    /// Nanoseconds since the run started.
    fn clock(&self) -> Time {
        self.start.elapsed().as_nanos() as Time
    }

    /// Takes the queue lock, counting what it cost; a worker that panicked holding it
    /// leaves the run to end (its panic is re-raised when the workers are joined).
    fn lock<'m, 'a>(
        &mut self,
        shared: &'m Mutex<Shared<'a>>,
    ) -> (MutexGuard<'m, Shared<'a>>, Instant) {
        self.lock.acquisitions += 1;
        let mut guard = match shared.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(poison)) => poison.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                self.lock.contended += 1;
                let asked = Instant::now();
                let guard = shared.lock().unwrap_or_else(|poison| poison.into_inner());
                self.lock.wait_ns += asked.elapsed().as_nanos() as u64;
                guard
            }
        };
        if shared.is_poisoned() {
            guard.exit = true;
        }
        (guard, Instant::now())
    }

    /// Exchanges the worker's ring (and its queued entries) with the one in the backend:
    /// the worker's goes in at the start of a turn and comes back out at its end.
    fn swap(&mut self, back: &mut EngineBackend) {
        std::mem::swap(&mut self.ring, &mut back.ring);
        std::mem::swap(&mut self.unsent, &mut back.unsent);
        back.thread = self.index;
    }

    /// Queues the read of this worker's eventfd in its ring (in the backend now).
    fn arm(&mut self, back: &mut EngineBackend, event: i32) {
        let read = opcode::Read::new(types::Fd(event), self.wake_buffer.as_mut_ptr(), 8)
            .build()
            .user_data(NOTIFY_TAG);
        // SAFETY: the read writes 8 bytes into `wake_buffer`, which lives in the worker
        // until `release` has cancelled the read and reaped it (or the ring is gone).
        if unsafe { back.ring.submission().push(&read) }.is_ok() {
            back.unsent.push(RequestId(NOTIFY_TAG));
            self.armed = true;
        }
    }

    /// Hands what the turn queued to the kernel, outside the lock (the entries' time, the
    /// call's start, is stamped at the next turn), without waiting.
    fn submit(&mut self) -> Result<(), EngineError> {
        if self.ring.submission().is_empty() {
            return Ok(());
        }
        self.enter_calls += 1;
        let now = self.clock();
        match crate::engine::commit_entries(&mut self.ring) {
            Ok(taken) => {
                self.sent += taken;
                self.sent_at = now;
                Ok(())
            }
            Err(error) => match error.raw_os_error() {
                Some(libc::EINTR | libc::EBUSY | libc::EAGAIN) => Ok(()),
                _ => Err(EngineError::io(&self.path, "io_uring_enter", error)),
            },
        }
    }

    /// Waits on the worker's ring for one completion (an I/O or a wake-up) or `deadline`;
    /// a deadline already past only submits. The turn's entries went in before, with
    /// [`Worker::submit`]; anything queued since (nothing, as the loop runs) goes in with
    /// the wait.
    ///
    /// Choice: the submission and the wait are two calls, not one. Session 20 (`lightwake`)
    /// joined them, to save a system call per turn; on issue 32's pair under CPU load the
    /// heavy job's worker then spent 79-87 % of the run runnable and not running, about
    /// 1 ms per time slice, and the kernel held about 1 of the engine's 9 requests; with the
    /// submit first, about half the run and 0.05-0.08 ms, 4.4-4.7 requests, 3-5x the MB/s
    /// in the same rounds and 0.84x the CPU per request (issue 32, `heavyqd`,
    /// docs/tasks/adaptive.md). A thread that goes to sleep in the call that hands the
    /// device its work is woken late on a loaded machine; one that returns first is not.
    fn submit_and_wait(&mut self, deadline: Option<Time>) -> Result<(), EngineError> {
        let now = self.clock();
        if deadline.is_some_and(|at| at <= now) {
            return self.submit();
        }
        let queued = !self.ring.submission().is_empty();
        let taken = wait_in_kernel(&self.ring, 1, || now, deadline, &mut self.enter_calls)
            .map_err(|error| EngineError::io(&self.path, "io_uring_enter", error))?;
        if queued && taken > 0 {
            self.sent += taken;
            self.sent_at = now;
        }
        Ok(())
    }

    /// Cancels the pending eventfd read and reaps it, so that its buffer may go.
    fn release(&mut self) {
        if !self.armed {
            return;
        }
        let cancel = opcode::AsyncCancel::new(NOTIFY_TAG)
            .build()
            .user_data(CANCEL_TAG);
        // SAFETY: a cancellation points at no memory.
        if unsafe { self.ring.submission().push(&cancel) }.is_err() {
            return;
        }
        while self.armed {
            if self.ring.submit_and_wait(1).is_err() {
                return;
            }
            for cqe in self.ring.completion() {
                if cqe.user_data() == NOTIFY_TAG {
                    self.armed = false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `0` asks for a thread per CPU the jobs allow; any count is capped by the clones, and
    /// threads take the jobs' CPUs in turn.
    #[test]
    fn threads_follow_the_cpus_and_the_clones() {
        assert_eq!(thread_cpus(0, 8, Some(&[2, 5])), vec![Some(2), Some(5)]);
        assert_eq!(
            thread_cpus(3, 8, Some(&[2, 5])),
            vec![Some(2), Some(5), Some(2)]
        );
        assert_eq!(thread_cpus(4, 2, None), vec![None, None]);
        assert_eq!(thread_cpus(1, 0, None), vec![None]);
    }

    /// A thread's schedstat counts its own CPU time: a busy loop shows in `run_ns` within a
    /// few seconds however loaded the machine (unless the kernel keeps no schedstat, when
    /// everything reads 0), and `since` never goes below 0.
    #[test]
    fn schedstat_counts_the_thread_s_own_time() {
        let before = SchedStat::now();
        if before == SchedStat::default() {
            return;
        }
        let spin = Instant::now();
        let mut sink = 0u64;
        let mut used = SchedStat::default();
        while used.run_ns < 2_000_000 && spin.elapsed().as_secs() < 10 {
            for _ in 0..10_000 {
                sink = std::hint::black_box(sink.wrapping_add(1));
            }
            used = SchedStat::now().since(before);
        }
        assert!(used.run_ns >= 2_000_000, "{used:?}");
        assert_eq!(before.since(SchedStat::now()), SchedStat::default());
    }

    /// A clone goes to a thread on a CPU its job allows, else to the least loaded.
    #[test]
    fn clones_go_to_threads_on_their_cpus() {
        let mut jobs = vec![JobSpec::new("a"), JobSpec::new("b"), JobSpec::new("c")];
        jobs[0].cpus_allowed = Some(vec![5]);
        jobs[1].cpus_allowed = Some(vec![5]);
        let cpus = [Some(2), Some(5)];
        assert_eq!(assign_clones(&jobs, &[0, 1, 2, 2], &cpus), vec![1, 1, 0, 0]);
        assert_eq!(
            assign_clones(&jobs, &[2, 2, 2], &[None, None]),
            vec![0, 1, 0]
        );
    }
}
