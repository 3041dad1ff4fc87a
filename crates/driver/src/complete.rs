//! A completion fans out: the scheduler, the disk counters, the request list (and the
//! process sleeping on it), then each job I/O the request carried: its statistics, its job's
//! state machine, a wake-up. Kernel: blk_finish_request() → elv_completed_request(),
//! blk_put_request() → freed_request(); the bio's end_io.

use iosched_core::{CgroupId, Op, RequestId, RqEvent, Time, Trace};
use iosched_workload::generator::IoUnit;

use crate::{Backend, Driver, InFlight, Standing};

/// How one job I/O of a completed request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitDone {
    /// It failed (an I/O error, a short transfer): no statistics, no data written.
    pub failed: bool,
    /// Count it in this direction instead of its own (a verify pass's reads of a write job).
    pub ddir: Option<usize>,
    /// The data tag its block now carries (for a later read-back), if it wrote one.
    pub tag: Option<u64>,
    /// Its job ends here (an error, a bad block under `verify_fatal`).
    pub fail_job: bool,
    /// It failed with an error the job's `continue_on_error` survives.
    pub survived: bool,
    /// When the device was handed it (fio's `issue_time`: the submitting `io_uring_enter`
    /// returned), if the backend knows: its submission latency runs from the job's
    /// generating it to here, its completion latency from here. `None` (the simulator, whose
    /// submit costs no time): both start when the job generated it, slat is 0.
    pub sent_at: Option<Time>,
}

impl UnitDone {
    /// Done, as asked, writing `tag`.
    pub fn ok(tag: u64) -> UnitDone {
        UnitDone {
            failed: false,
            ddir: None,
            tag: Some(tag),
            fail_job: false,
            survived: false,
            sent_at: None,
        }
    }
}

impl<X: Copy> Driver<'_, X> {
    /// The device completed request `id` with `result`. Processes a freed request list slot
    /// wakes are retried by [`Driver::retry_sleepers`] once a batch of completions is in.
    pub fn complete<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        id: RequestId,
        result: B::Result,
        trace: &mut dyn Trace,
    ) {
        let Some(entry) = self.in_flight.remove(id) else {
            panic!("device completed a request twice or one never issued");
        };
        assert!(entry.issued_at().is_some(), "completed before issue");
        let request = entry.request;
        let now = self.now;
        self.trace_request(trace, RqEvent::Complete, &request);
        if request.op != Op::Flush {
            let elevator = &mut self.elevator;
            if !self.completion_settles {
                self.standing = Standing::No;
            }
            b.in_scheduler(|| elevator.completed(&request, now, trace));
        }
        self.disk.done(now);
        let single = if entry.riders.is_empty() {
            b.unit_result(self, &entry, result)
        } else {
            None
        };
        let own = match single {
            Some(own) => own,
            None => self.complete_riders(b, &entry, result, trace),
        };
        if b.own_completion(self, &entry, trace) {
            return;
        }
        if let Some(sleeper) = self.pool.put(request.cgroup, request.is_sync()) {
            self.freed_for.push(sleeper as usize);
        }
        if entry.unit.kind.ddir().is_some() {
            self.disk.data_completed(
                request.op.data_dir(),
                request.nr_sectors,
                entry.submitted_at,
                now,
            );
        }
        self.complete_unit(b, entry.process, &entry.unit, entry.submitted_at, own);
        b.unit_completed(self, entry.process, false, trace);
    }

    /// The results of every I/O `entry` carried: its riders complete (in their order), and
    /// its own unit's result is answered.
    fn complete_riders<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        entry: &InFlight<X>,
        result: B::Result,
        trace: &mut dyn Trace,
    ) -> UnitDone {
        let mut done = std::mem::take(&mut self.unit_scratch);
        done.clear();
        b.unit_results(self, entry, result, &mut done);
        assert_eq!(done.len(), entry.riders.len() + 1, "one result per I/O");
        for (rider, outcome) in entry.riders.iter().zip(&done) {
            self.complete_unit(b, rider.process, &rider.unit, rider.submitted_at, *outcome);
            b.unit_completed(self, rider.process, true, trace);
        }
        let own = done[entry.riders.len()];
        self.unit_scratch = done;
        own
    }

    /// One job I/O is done: its statistics, then [`Driver::unit_finished`].
    #[inline(always)]
    fn complete_unit<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        process: usize,
        unit: &IoUnit,
        submitted_at: Time,
        outcome: UnitDone,
    ) {
        let now = self.now;
        if unit.kind.ddir().is_some() {
            self.units_done += 1;
        }
        match unit.kind.ddir() {
            Some(ddir) if !outcome.failed && self.life.counts_at(process, now) => {
                let ddir = outcome.ddir.unwrap_or(ddir);
                let sent = outcome
                    .sent_at
                    .map_or(submitted_at, |sent| sent.clamp(submitted_at, now));
                self.stats[process].record_io(ddir, unit.len, submitted_at, sent, now);
                self.owe_backlogged(process, unit.len);
            }
            Some(_) => {}
            None if !outcome.failed => self.stats[process].record_sync(now - submitted_at),
            None => {}
        }
        self.unit_finished(b, process, unit, outcome);
    }

    /// `bytes` of `process` completed: owed to every cgroup with an I/O outstanding (the
    /// completing one still counts as outstanding here), by weight ([`crate::backlog`]).
    fn owe_backlogged(&mut self, process: usize, bytes: u64) {
        let cgroups = &self.cgroups;
        let weights = self.backlog.weights.get_or_insert_with(|| {
            // Fixed once the run is under way: what each group's tasks run at.
            let weight = |spec: &iosched_core::CgroupSpec| match spec.id {
                CgroupId::ROOT => spec.leaf_weight,
                _ => spec.weight,
            };
            cgroups.specs().map(weight).collect()
        });
        if weights.len() < 2 {
            return;
        }
        if !self.backlog.has_members() {
            let groups = self.processes.iter().map(|proc_| proc_.cgroup);
            self.backlog.set_members(groups);
        }
        let life = &self.life;
        let own = self.processes[process].cgroup;
        self.backlog
            .completed_by(bytes, own, |p| life.in_flight(p) > 0);
    }

    /// A job I/O's end reaches its job: the state machine (a steady-state criterion met stops
    /// the clones it watches; they drain and finish), the completion batch, a wake-up.
    pub fn unit_finished<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        process: usize,
        unit: &IoUnit,
        outcome: UnitDone,
    ) {
        let now = self.now;
        let tag = if outcome.failed { None } else { outcome.tag };
        // fio's `iodepth_complete` counts events per reap: with `iodepth_batch_complete_min`
        // above 1 the job reaps them in groups (the runner's depth drops by the group).
        let grouped = self.grouped_reaps
            && self.jobs[self.life.job_of(process)].iodepth_batch_complete_min > 1;
        let before = if grouped {
            self.life.in_flight(process)
        } else {
            0
        };
        for other in self.life.complete(self.jobs, process, now, unit, tag) {
            b.wake(other, now);
        }
        if outcome.fail_job {
            self.life.fail(process);
        }
        if !grouped {
            self.stats[process].record_complete_batch(1);
        } else {
            let reaped = before.saturating_sub(self.life.in_flight(process));
            if reaped > 0 {
                self.stats[process].record_complete_batch(reaped);
            }
        }
        b.wake(process, now);
    }
}
