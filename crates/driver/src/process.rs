//! Processes running their jobs: job starts, a process's submission batch (plugged), its
//! sleeps and wake-ups, its end (and `exitall`'s).

use iosched_core::{RqEvent, Time, Trace};
use iosched_workload::lifecycle::Action;

use crate::{Backend, Driver, Plug, Standing};

impl<X: Copy> Driver<'_, X> {
    /// Schedules the start of every job whose turn has come (`startdelay`, `wait_for`,
    /// stonewalls).
    pub fn start_ready_jobs<B: Backend<Io = X>>(&mut self, b: &mut B) {
        for (at, job) in self.life.release_ready(self.jobs, self.now) {
            b.start_job_at(job, at);
        }
    }

    /// Job `job`'s clones start now: each runs as soon as this step ends.
    pub fn start_job<B: Backend<Io = X>>(&mut self, b: &mut B, job: usize) {
        let clones = self.life.start_job(self.jobs, &self.layout, job, self.now);
        for &index in &clones {
            self.stats[index].set_sample_origin(self.life.stats_from(index));
            b.wake(index, self.now);
        }
        for index in clones {
            b.clone_started(self, index);
        }
    }

    /// A process woke (from think time, a rate-limit sleep, an I/O completing): it runs.
    pub fn wake_process<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        index: usize,
        trace: &mut dyn Trace,
    ) {
        self.life.woken(index, self.now);
        self.step_process(b, index, trace);
    }

    /// Lets a process submit what its job wants now. Like a kernel submitter, it plugs its
    /// queue around the batch: `P` after the first request, `U` after the last.
    pub fn step_process<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        index: usize,
        trace: &mut dyn Trace,
    ) {
        let mut submitted = 0;
        self.plug = Plug::Armed;
        self.run_process(b, index, trace, &mut submitted);
        self.mark_depth(index);
        if let Plug::Plugged(last) = std::mem::replace(&mut self.plug, Plug::Off) {
            self.trace_request(trace, RqEvent::Unplug, &last);
        }
        if submitted > 0 {
            self.stats[index].record_submit_batch(submitted);
        }
    }

    fn run_process<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        index: usize,
        trace: &mut dyn Trace,
        submitted: &mut u32,
    ) {
        // fio commits every `iodepth_batch_submit` I/Os (one submit call).
        let batch = if self.batched_submits {
            self.jobs[self.life.job_of(index)]
                .iodepth_batch_submit
                .max(1)
        } else {
            1
        };
        loop {
            // Asleep in the block layer: it submits nothing until its request is allocated.
            if self.held.is_asleep(index) {
                return;
            }
            let now = self.now;
            match self.life.next_action(self.jobs, index, now) {
                Action::Submit {
                    unit,
                    woken,
                    verify_tag,
                } => {
                    *submitted += 1;
                    for other in woken {
                        b.wake(other, now);
                    }
                    let io = b.job_io(verify_tag);
                    self.submit(b, index, unit, io, trace);
                    if *submitted >= batch {
                        self.mark_depth(index);
                        self.stats[index].record_submit_batch(std::mem::take(submitted));
                        b.batch_submitted(self, index, trace);
                    }
                    // A full queue is the usual end of a batch: known without another step.
                    if self.life.waits(self.jobs, index, self.now) {
                        return;
                    }
                }
                Action::Phase { read_back: true } => self.stats[index].set_verify_start(now),
                Action::Phase { read_back: false } => self.stats[index].set_write_start(now),
                Action::Sleep(at) => {
                    b.wake(index, at);
                    return;
                }
                Action::Wait => return,
                Action::Finish => {
                    self.finish_process(b, index, trace);
                    return;
                }
            }
        }
    }

    /// The I/Os submitted since the last commit count in `iodepth_level` at the depth the
    /// batch reached, as fio counts them when it commits.
    #[inline]
    fn mark_depth(&mut self, index: usize) {
        if self.unmarked == 0 {
            return;
        }
        let depth = self.life.in_flight(index);
        self.stats[index].record_depths(depth, std::mem::take(&mut self.unmarked));
    }

    /// Ends the plug of the submission batch in progress (`U`) and arms the next one, for a
    /// backend that hands each batch to its device as it is made
    /// ([`Backend::batch_submitted`]). Outside a process's step nothing is plugged.
    pub fn unplug(&mut self, trace: &mut dyn Trace) {
        if let Plug::Plugged(last) = self.plug {
            self.trace_request(trace, RqEvent::Unplug, &last);
            self.plug = Plug::Armed;
        }
    }

    fn finish_process<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        index: usize,
        trace: &mut dyn Trace,
    ) {
        let now = self.now;
        // The job's process exits once its last I/O is done: the kernel drops its I/O
        // context, and CFQ its queues (cfq_exit_icq()), ending the slice if it was being
        // served or idled on rather than idling on a process that will never ask again.
        let ioc = self.processes[index].ioc;
        let elevator = &mut self.elevator;
        self.standing = Standing::No;
        b.in_scheduler(|| elevator.exit_ioc(ioc, now, trace));
        let finished = self.life.finish(self.jobs, index, now);
        self.stats[index].set_runtime(finished.stats_from, now);
        for &other in &finished.never_started {
            self.stats[other].set_runtime(now, now);
        }
        for &other in &finished.woken {
            b.wake(other, now);
        }
        if self.jobs[self.life.job_of(index)].exitall {
            // Stopped runners finish when their in-flight I/O drains; wake the idle ones.
            for other in self.life.running().collect::<Vec<_>>() {
                b.wake(other, now);
            }
        }
        b.process_finished(self);
        self.start_ready_jobs(b);
    }

    /// Stops every job (a signal): running clones drain and finish, clones not started
    /// finish at once with nothing done. Answers the clones to wake.
    pub fn stop_all(&mut self, now: Time) -> Vec<usize> {
        let (stopped, never_started) = self.life.stop_all(now);
        for index in never_started {
            self.stats[index].set_runtime(now, now);
        }
        stopped
    }
}
