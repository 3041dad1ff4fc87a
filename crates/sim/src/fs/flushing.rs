//! The writeback side of the simulator loop: flusher threads stepped as processes (spawn,
//! wake, sleep, congestion waits) and, under `dirty_throttle=writeback`, writers over the
//! dirty limit writing back themselves. Like `fs/driver.rs`, part of the simulator backend.

use iosched_core::{Op, ReqFlags, Time, Trace};
use iosched_writeback::flusher::CONGESTION_WAIT_NS;
use iosched_writeback::{FlusherId, FlusherStep, Notice};

use super::driver::{kernel_thread, who};
use crate::event::Event;
use crate::fs::{FlusherProc, FlusherWait, FsEvent, FsTag, OpPhase};
use crate::simulation::{SimBackend, SimDriver};

impl SimBackend {
    /// A writer throttled with `dirty_throttle=writeback` writes back its chunk: async
    /// writes in its own name, blocking while the request pool is full and
    /// `congestion_wait()`ing when it finds nothing it may write; then its write goes on.
    /// Kernel: the loop of ≤ 3.1 `balance_dirty_pages()`.
    pub(crate) fn fs_writer_writeback(
        &mut self,
        drv: &mut SimDriver<'_>,
        token: u64,
        trace: &mut dyn Trace,
    ) {
        let who = {
            let fs = self.fs.as_ref().expect("file system");
            who(drv, fs.ops[token].process)
        };
        // Bounded: every round moves pages into writeback or returns.
        loop {
            let now = drv.now;
            let fs = self.fs.as_mut().expect("file system");
            let op = &fs.ops[token];
            let OpPhase::WriterWriteback {
                written,
                chunk,
                since,
            } = op.phase
            else {
                unreachable!("writer writeback outside its phase")
            };
            let process = op.process;
            let file = drv.layout.clones[process].files[op.unit.file];
            if written >= chunk || !fs.wb.over_dirty_limit() {
                fs.wb.writer_done(token);
                fs.throttled_ns[process] += now - since;
                let entry = fs.ops.get_mut(token).expect("op");
                entry.balanced = true;
                entry.phase = OpPhase::Throttled;
                return self.fs_write(drv, token, trace);
            }
            if fs.queue_state().full() {
                fs.writer_waiters.push((token, None));
                return;
            }
            let bdi = fs.wb.cache().file_bdi(file as u32);
            let runs = fs.wb.writer_writeback(token, bdi, chunk - written);
            if runs.is_empty() {
                let deadline = now + CONGESTION_WAIT_NS;
                fs.writer_waiters.push((token, Some(deadline)));
                self.events.push(deadline, Event::Fs(FsEvent::Op(token)));
                return;
            }
            let pages: u64 = runs.iter().map(|range| range.count).sum();
            if let Some(OpPhase::WriterWriteback { written, .. }) =
                fs.ops.get_mut(token).map(|op| &mut op.phase)
            {
                *written += pages;
            }
            for range in runs {
                let n = self.fs_pages_io(
                    drv,
                    Op::Write,
                    range,
                    ReqFlags::default(),
                    who,
                    FsTag::WriterWriteback,
                    trace,
                );
                self.fs.as_mut().expect("file system").async_requests += n;
            }
            // The walk over these pages is the writer's own CPU time: it writes back the
            // rest of its chunk when that is done.
            if let Some(cpus) = self.cpu.as_mut() {
                let sys = pages * cpus.era.writeback_ns;
                let then = (Event::Fs(FsEvent::WriterCpu(token)), 0);
                match cpus.run_process(process, now, (0, sys), then, &mut self.events) {
                    Some(at) if at > now => {
                        self.events.push(at, then.0);
                        return;
                    }
                    Some(_) => {}
                    // Waiting for a CPU: the run queue pushes `WriterCpu` when it is done.
                    None => return,
                }
            }
        }
    }

    /// A throttled writer's `congestion_wait()` timed out (stale timers are ignored).
    pub(crate) fn fs_writer_timer(
        &mut self,
        drv: &mut SimDriver<'_>,
        token: u64,
        trace: &mut dyn Trace,
    ) {
        let now = drv.now;
        let fs = self.fs.as_mut().expect("file system");
        let Some(at) = fs
            .writer_waiters
            .iter()
            .position(|&(t, deadline)| t == token && deadline.is_some_and(|d| d <= now))
        else {
            return;
        };
        fs.writer_waiters.remove(at);
        self.fs_writer_writeback(drv, token, trace);
    }

    /// A request of the sync (`freed_sync`) or async list freed: throttled writers waiting
    /// for the (async) pool go on after an async one, and those in `congestion_wait()` when
    /// it was of the list congestion reads and that list is below its congestion-off mark.
    pub(crate) fn fs_wake_writers(
        &mut self,
        drv: &mut SimDriver<'_>,
        freed_sync: bool,
        trace: &mut dyn Trace,
    ) {
        let fs = self.fs.as_mut().expect("file system");
        if fs.writer_waiters.is_empty() {
            return;
        }
        let wakes_waiters = fs.queue_state().wakes_congestion_waiters(freed_sync);
        let wakes = |&(_, deadline): &(u64, Option<Time>)| match deadline {
            None => !freed_sync,
            Some(_) => wakes_waiters,
        };
        // Most completions wake nobody: no lists are built then.
        if !fs.writer_waiters.iter().any(wakes) {
            return;
        }
        let (wake, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut fs.writer_waiters)
            .into_iter()
            .partition(wakes);
        fs.writer_waiters = keep;
        for (token, _) in wake {
            self.fs_writer_writeback(drv, token, trace);
        }
    }

    /// Acts on the writeback policy's notices and re-arms its timer. Inline: it runs after
    /// every buffered operation and event, and there is seldom a notice to act on.
    #[inline]
    pub(crate) fn fs_notices(&mut self, drv: &mut SimDriver<'_>) {
        let Some(fs) = self.fs.as_mut() else { return };
        if fs.wb.has_notices() {
            self.fs_take_notices(drv);
        }
        let fs = self.fs.as_mut().expect("file system");
        let timer = fs.wb.timer_at();
        if let Some(at) = timer {
            if timer != fs.wb_timer_at && !fs.shutting_down {
                fs.wb_timer_at = timer;
                self.events
                    .push(at.max(drv.now), Event::Fs(FsEvent::WbTimer));
            }
        }
    }

    /// Flushers spawned or woken: each steps at once.
    #[inline(never)]
    fn fs_take_notices(&mut self, drv: &mut SimDriver<'_>) {
        let fs = self.fs.as_mut().expect("file system");
        for notice in fs.wb.take_notices() {
            let id = match notice {
                Notice::Spawned { id, pid } => {
                    fs.flushers.insert(
                        id,
                        FlusherProc {
                            pid,
                            generation: 0,
                            wait: FlusherWait::Running,
                            busy_until: 0,
                        },
                    );
                    id
                }
                Notice::Wake { id } => id,
            };
            if let Some(proc_) = fs.flushers.get_mut(&id) {
                proc_.generation += 1;
                proc_.wait = FlusherWait::Running;
                self.events.push(
                    drv.now,
                    Event::Fs(FsEvent::Flusher {
                        id: id.0,
                        generation: proc_.generation,
                    }),
                );
            }
        }
    }

    pub(crate) fn fs_flusher(
        &mut self,
        drv: &mut SimDriver<'_>,
        id: FlusherId,
        generation: u64,
        trace: &mut dyn Trace,
    ) {
        let fs = self.fs.as_mut().expect("file system");
        if fs.shutting_down
            || fs
                .flushers
                .get(&id)
                .is_none_or(|p| p.generation != generation)
        {
            return;
        }
        let (pid, busy_until) = (fs.flushers[&id].pid, fs.flushers[&id].busy_until);
        if busy_until == Time::MAX {
            // Waiting for a CPU for its walk: `FlusherWalked` steps it.
            return;
        }
        if drv.now < busy_until {
            // Still in the CPU with its last walk: it goes on when that is done.
            let event = FsEvent::Flusher {
                id: id.0,
                generation,
            };
            self.events.push(busy_until, Event::Fs(event));
            return;
        }
        let who = kernel_thread(pid);
        // Bounded: every Submit moves pages into writeback; the pool limit stops the rest.
        loop {
            let fs = self.fs.as_mut().expect("file system");
            let queue = fs.queue_state();
            let step = fs.wb.flusher_step(id, drv.now, queue);
            if let FlusherStep::Submit(range) = step {
                let n = self.fs_pages_io(
                    drv,
                    Op::Write,
                    range,
                    ReqFlags::default(),
                    who,
                    |piece| FsTag::Flusher { id, range: piece },
                    trace,
                );
                self.fs.as_mut().expect("file system").async_requests += n;
                if let Some(at) = self.flusher_walk(drv.now, id, range.count) {
                    if at != Time::MAX {
                        let event = FsEvent::Flusher {
                            id: id.0,
                            generation,
                        };
                        self.events.push(at, Event::Fs(event));
                    }
                    break;
                }
                continue;
            }
            if step == FlusherStep::Exit {
                fs.flushers.remove(&id);
                break;
            }
            let proc_ = fs.flushers.get_mut(&id).expect("flusher");
            proc_.wait = match step {
                FlusherStep::WaitRequest => FlusherWait::Request,
                FlusherStep::CongestionWait(_) => FlusherWait::Congestion,
                FlusherStep::SleepUntil(_) => FlusherWait::Timer,
                _ => FlusherWait::Idle,
            };
            if let FlusherStep::CongestionWait(at) | FlusherStep::SleepUntil(at) = step {
                proc_.generation += 1;
                if at != Time::MAX {
                    let event = FsEvent::Flusher {
                        id: id.0,
                        generation: proc_.generation,
                    };
                    self.events.push(at.max(drv.now), Event::Fs(event));
                }
            }
            break;
        }
    }

    /// A flusher's CPU time walking `pages` it just submitted, with the CPU model on: when
    /// the walk is done, if later than now (the flusher is busy until then).
    /// While it waits for a CPU (CFS), it is busy until `FlusherWalked` says the walk is
    /// done; wakes meanwhile are not lost, the walk's end steps it.
    fn flusher_walk(&mut self, now: Time, id: FlusherId, pages: u64) -> Option<Time> {
        let cpus = self.cpu.as_mut()?;
        let then = (Event::Fs(FsEvent::FlusherWalked { id: id.0 }), 0);
        let sys = pages * cpus.era.writeback_ns;
        let busy_until = match cpus.run_kernel(id.0, now, sys, then, &mut self.events) {
            Some(at) if at == now => return None,
            Some(at) => at,
            None => Time::MAX,
        };
        let fs = self.fs.as_mut().expect("file system");
        fs.flushers.get_mut(&id).expect("flusher").busy_until = busy_until;
        Some(busy_until)
    }

    /// `FlusherWalked`: a flusher that waited for a CPU finished its walk; it steps on.
    pub(crate) fn fs_flusher_walked(
        &mut self,
        drv: &mut SimDriver<'_>,
        id: FlusherId,
        trace: &mut dyn Trace,
    ) {
        let fs = self.fs.as_mut().expect("file system");
        let Some(proc_) = fs.flushers.get_mut(&id) else {
            return;
        };
        proc_.busy_until = 0;
        let generation = proc_.generation;
        self.fs_flusher(drv, id, generation, trace);
    }

    /// Wakes flushers blocked on requests (`request`: a data write completed) or in
    /// `congestion_wait()` (a request of the list congestion reads freed below its
    /// congestion-off mark; `freed_sync` says which list).
    pub(crate) fn fs_wake_flushers(
        &mut self,
        drv: &mut SimDriver<'_>,
        request: bool,
        freed_sync: bool,
    ) {
        let fs = self.fs.as_mut().expect("file system");
        if fs.shutting_down {
            return;
        }
        let wakes_waiters = fs.queue_state().wakes_congestion_waiters(freed_sync);
        for (id, proc_) in fs.flushers.iter_mut() {
            let wake = match proc_.wait {
                FlusherWait::Request => request,
                FlusherWait::Congestion => wakes_waiters,
                _ => false,
            };
            if wake {
                proc_.wait = FlusherWait::Running;
                proc_.generation += 1;
                let event = FsEvent::Flusher {
                    id: id.0,
                    generation: proc_.generation,
                };
                self.events.push(drv.now, Event::Fs(event));
            }
        }
    }
}
