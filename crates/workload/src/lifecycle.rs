//! The life of every job clone, the same under both drivers: which jobs may start
//! (`stonewall`, `wait_for`) and when (`startdelay`), what a clone does next
//! ([`Lifecycle::next_action`]: its runner, its verify read-back, its flow), the start of its
//! statistics window (`ramp_time`), and who stops when (`exitall`, steady state, a stop
//! signal). The drivers keep only what moving I/O needs.

use iosched_core::Time;

use crate::generator::IoUnit;
use crate::issue_log::IssueLog;
use crate::job::{ExitWhat, JobSpec};
use crate::layout::Layout;
use crate::processes::{prerequisites, WaitForError, Waits};
use crate::rng::Rng;
use crate::runner::JobRunner;
use crate::runner::Step;
use crate::steady_state::SteadyState;
use crate::verify_pass::{VerifyPass, VerifyStep};

/// One clone from its job's start to its end.
///
/// Laid out in declaration order (`repr(C)`) from a cache-line boundary: what every I/O
/// reads (its job, statistics start, flags, armed wake-up) beside the start of its runner
/// (issue 34: the wake-up, asked at every wake, lay past the runner, a line of its own).
#[derive(Debug)]
#[repr(C, align(64))]
struct CloneState {
    /// Its job's index (read through [`CloneState::job`]).
    job: u32,
    /// No read-back and no flow: its runner alone decides what it does next.
    runner_only: bool,
    finished: bool,
    /// Told to stop (exitall, steady state, a signal, an I/O error): it drains and ends,
    /// without a read-back.
    stopped: bool,
    /// The driver holds a timed wake-up for this clone, at `wake_at` (the earliest).
    wake_armed: bool,
    stats_from: Time,
    wake_at: Time,
    runner: Option<JobRunner>,
    started_at: Time,
    /// Iterations counted in its flow (`flow=`).
    flow_count: u64,
    /// fio's verify read-back of what the clone writes.
    verify: Option<VerifyPass>,
}

impl CloneState {
    fn job(&self) -> usize {
        self.job as usize
    }
}

/// What a clone does next, for its driver to carry out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Issue this I/O; a read-back read carries the tag its block should hold. `woken` are
    /// clones of its flow, held back until this one moved.
    Submit {
        unit: IoUnit,
        verify_tag: Option<u64>,
        woken: Vec<usize>,
    },
    /// The writes are done and the read-back begins (`true`), or a time-based verify job
    /// writes again (`false`): the driver marks its statistics and asks again.
    Phase { read_back: bool },
    /// Nothing before this time: the driver arms a wake-up.
    Sleep(Time),
    /// Nothing until a completion or a wake-up already armed.
    Wait,
    /// The clone is done: the driver calls [`Lifecycle::finish`].
    Finish,
}

/// fio's token flow (`flow=`, `flow_id=`): the jobs sharing an id keep their activity in
/// proportion to their weights.
#[derive(Debug, Default)]
struct Flow {
    /// Iterations counted by the flow's clones (fio's counter, less its starting 1).
    count: u64,
    total_weight: u64,
    /// Clones held back, woken when another one of the flow moves.
    waiting: Vec<usize>,
}

/// What [`Lifecycle::finish`] tells the driver.
#[derive(Debug, PartialEq, Eq)]
pub struct Finished {
    /// Start of the clone's statistics window (after `ramp_time`), never after the end.
    pub stats_from: Time,
    /// Running clones that `exitall` just told to stop: they finish when their I/O drains.
    pub stopped: Vec<usize>,
    /// Clones that never started and now never will (`exit_what=all`): finished at once.
    pub never_started: Vec<usize>,
    /// Clones its flow held back, free to go on now: the caller wakes them.
    pub woken: Vec<usize>,
}

/// Whose rate a steady-state criterion watches: a reporting group's (`group_reporting`) or
/// one clone's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Watched {
    Group(u32),
    Clone(usize),
}

/// Every clone's state and the order jobs run in.
#[derive(Debug)]
pub struct Lifecycle {
    seed: u64,
    clones: Vec<CloneState>,
    /// Clone indices of each job.
    job_clones: Vec<Vec<usize>>,
    /// Jobs each job waits for.
    prerequisites: Vec<Waits>,
    /// Jobs released to start (their start may still lie ahead, after `startdelay`).
    job_released: Vec<bool>,
    /// The jobs before this one are all released: where [`Lifecycle::release_ready`] starts
    /// looking, so that a run of N jobs does not look at every job after each one ends.
    first_unreleased: usize,
    /// The jobs before this one have all finished: what a `stonewall` waits for.
    finished_prefix: usize,
    /// Clones not finished: [`Lifecycle::all_finished`] without a walk over every clone.
    unfinished: usize,
    last_finish: Time,
    /// Some job says `exitall`: fio 3.33 keeps one run-wide flag (options.c's `exitall`
    /// callback sets `exitall_on_terminate`), so then every job that ends stops the jobs its
    /// own `exit_what` names, whether or not it said `exitall` itself.
    exitall_run: bool,
    /// Steady-state trackers (`ss_dur=`), created as their jobs start.
    steady: std::collections::BTreeMap<Watched, SteadyState>,
    flows: std::collections::BTreeMap<u32, Flow>,
    /// `write_iolog`: what each logging clone issued.
    issues: IssueLog,
}

impl Lifecycle {
    /// The clones of `layout`, none started. `seed` feeds each clone's and job's stream.
    pub fn new(jobs: &[JobSpec], layout: &Layout, seed: u64) -> Result<Lifecycle, WaitForError> {
        let mut job_clones = vec![Vec::new(); jobs.len()];
        let clones = layout
            .clones
            .iter()
            .enumerate()
            .map(|(index, plan)| {
                job_clones[plan.job].push(index);
                let spec = &jobs[plan.job];
                let verify = VerifyPass::for_job(spec);
                CloneState {
                    runner_only: verify.is_none() && spec.flow_weight == 0,
                    job: u32::try_from(plan.job).expect("fewer than 2^32 jobs"),
                    runner: None,
                    started_at: 0,
                    stats_from: 0,
                    finished: false,
                    wake_armed: false,
                    wake_at: 0,
                    flow_count: 0,
                    verify,
                    stopped: false,
                }
            })
            .collect();
        Ok(Lifecycle {
            seed,
            clones,
            job_clones,
            prerequisites: prerequisites(jobs)?,
            job_released: vec![false; jobs.len()],
            first_unreleased: 0,
            finished_prefix: 0,
            unfinished: layout.clones.len(),
            last_finish: 0,
            exitall_run: jobs.iter().any(|spec| spec.exitall),
            steady: std::collections::BTreeMap::new(),
            flows: std::collections::BTreeMap::new(),
            issues: IssueLog::new(jobs, layout),
        })
    }

    /// Releases every job whose prerequisites have all finished, each with the time its
    /// clones start: `now` plus its `startdelay` (a range draws from the job's own stream).
    /// As fio 3.33's start loop, it goes through the jobs in order and stops at a `stonewall`
    /// job it cannot release yet: no later job starts before it, whatever it waits for
    /// (a `wait_for` job behind a stonewall starts with the stonewall, not with its waitee).
    pub fn release_ready(&mut self, jobs: &[JobSpec], now: Time) -> Vec<(Time, usize)> {
        let mut released = Vec::new();
        while self.job_released.get(self.first_unreleased) == Some(&true) {
            self.first_unreleased += 1;
        }
        for (job, spec) in jobs.iter().enumerate().skip(self.first_unreleased) {
            if self.job_released[job] {
                continue;
            }
            let ready = self.prerequisites_done(job);
            if !ready && spec.stonewall {
                break;
            }
            if ready {
                self.job_released[job] = true;
                let (lo, hi) = spec.startdelay_ns;
                let delay = if hi > lo {
                    Rng::for_stream(self.seed, job as u64 | 1 << 40).range_inclusive(lo, hi)
                } else {
                    lo
                };
                released.push((now + delay, job));
            }
        }
        released
    }

    /// Whether what `job` waits for has finished: every earlier job for a `stonewall` (the
    /// finished prefix moves on as jobs finish, each job looked at once), its `wait_for` job.
    fn prerequisites_done(&mut self, job: usize) -> bool {
        let waits = self.prerequisites[job];
        if waits.all_earlier {
            while self.finished_prefix < job && self.job_finished(self.finished_prefix) {
                self.finished_prefix += 1;
            }
            if self.finished_prefix < job {
                return false;
            }
        }
        waits.job.is_none_or(|before| self.job_finished(before))
    }

    fn job_finished(&self, job: usize) -> bool {
        self.job_released[job]
            && self.job_clones[job]
                .iter()
                .all(|&clone| self.clones[clone].finished)
    }

    /// Gives each clone of `job` its runner, starting now; returns the clones started (none
    /// when an `exit_what=all` ended the run while the job waited out its `startdelay`).
    pub fn start_job(
        &mut self,
        jobs: &[JobSpec],
        layout: &Layout,
        job: usize,
        now: Time,
    ) -> Vec<usize> {
        let spec = &jobs[job];
        let mut started = Vec::new();
        for &index in &self.job_clones[job] {
            if self.clones[index].finished {
                continue;
            }
            started.push(index);
            if spec.flow_weight > 0 {
                self.flows.entry(spec.flow_id).or_default().total_weight += spec.flow_weight;
            }
            if spec.steady_state.window_s > 0 {
                self.steady
                    .entry(Self::watched(spec, index))
                    .or_insert_with(|| SteadyState::new(spec.steady_state, now));
            }
            let regions = layout.clones[index].regions.clone();
            let rng = Rng::for_stream(self.seed, index as u64);
            let clone = &mut self.clones[index];
            assert!(clone.runner.is_none(), "job started twice");
            let mut runner = JobRunner::new(spec, regions, now, rng);
            let plan = &layout.clones[index];
            runner.set_file_bytes(plan.files.iter().map(|&f| layout.files[f].bytes).collect());
            let clone = &mut self.clones[index];
            clone.runner = Some(runner);
            clone.started_at = now;
            clone.stats_from = now + spec.ramp_time_ns;
            self.issues.start(index, now);
        }
        started
    }

    /// The steady-state report of the criterion clone `clone` of `jobs` was under (its
    /// group's with `group_reporting`), if its job set `ss_dur`.
    pub fn steady_state(
        &self,
        jobs: &[JobSpec],
        clone: usize,
    ) -> Option<crate::steady_state::SteadyStateReport> {
        let spec = &jobs[self.clones[clone].job()];
        let watched = Self::watched(spec, clone);
        self.steady.get(&watched).map(SteadyState::report)
    }

    fn watched(spec: &JobSpec, clone: usize) -> Watched {
        if spec.group_reporting {
            Watched::Group(spec.group_id)
        } else {
            Watched::Clone(clone)
        }
    }

    /// What the clone does next at `now`: a read-back step while one is under way, else
    /// (when its flow lets it go) its runner's step; a finished runner starts the read-back of
    /// a job that verifies, unless it was told to stop.
    #[inline]
    pub fn next_action(&mut self, jobs: &[JobSpec], clone: usize, now: Time) -> Action {
        let state = &mut self.clones[clone];
        if let Some(runner) = state
            .runner
            .as_mut()
            .filter(|_| state.runner_only && !state.finished)
        {
            // What the rest comes to without a read-back or a flow, inlined into the driver's
            // step (issue 34: one call level less per I/O).
            return match runner.next(now) {
                Step::Submit(unit) => {
                    self.issues.issued(clone, now, &unit);
                    Action::Submit {
                        unit,
                        verify_tag: None,
                        woken: Vec::new(),
                    }
                }
                Step::SleepUntil(at) => self.sleep_until(clone, at, true),
                Step::Wait => Action::Wait,
                Step::Done => Action::Finish,
            };
        }
        self.next_action_of(jobs, clone, now)
    }

    /// [`Lifecycle::next_action`] of a clone with a read-back or a flow (or none to run).
    fn next_action_of(&mut self, jobs: &[JobSpec], clone: usize, now: Time) -> Action {
        let state = &mut self.clones[clone];
        let Some(runner) = state.runner.as_mut().filter(|_| !state.finished) else {
            return Action::Wait;
        };
        if let Some(pass) = state.verify.as_mut().filter(|pass| pass.is_active()) {
            return match pass.step(runner, now) {
                VerifyStep::Read(unit, tag) => {
                    self.issues.issued(clone, now, &unit);
                    Action::Submit {
                        unit,
                        verify_tag: Some(tag),
                        woken: Vec::new(),
                    }
                }
                VerifyStep::Wait => Action::Wait,
                VerifyStep::NextPass => Action::Phase { read_back: false },
                VerifyStep::Done => Action::Finish,
            };
        }
        if !self.flow_permits(jobs, clone) {
            // Held by its flow: woken when another clone of the flow moves, or after
            // `flow_sleep`.
            let sleep = jobs[self.clones[clone].job()].flow_sleep_ns;
            return self.sleep_until(clone, now + sleep, sleep > 0);
        }
        let state = &mut self.clones[clone];
        let runner = state.runner.as_mut().expect("checked above");
        match runner.next(now) {
            Step::Submit(unit) => {
                self.issues.issued(clone, now, &unit);
                Action::Submit {
                    unit,
                    verify_tag: None,
                    woken: self.flow_moved(jobs, clone),
                }
            }
            Step::SleepUntil(at) => self.sleep_until(clone, at, true),
            Step::Wait => Action::Wait,
            Step::Done => {
                let stopped = state.stopped;
                let reads_back = state
                    .verify
                    .as_mut()
                    .is_some_and(|pass| !stopped && pass.start());
                if reads_back {
                    Action::Phase { read_back: true }
                } else {
                    Action::Finish
                }
            }
        }
    }

    /// Whether [`Lifecycle::next_action`] at `now` would answer [`Action::Wait`] and change
    /// nothing: the clone's runner waits ([`JobRunner::waits`]) with no read-back under way
    /// and no flow to consult. Asked after a submission instead of stepping again.
    #[inline]
    pub fn waits(&self, jobs: &[JobSpec], clone: usize, now: Time) -> bool {
        let state = &self.clones[clone];
        let Some(runner) = state.runner.as_ref().filter(|_| !state.finished) else {
            return true;
        };
        if state.runner_only {
            return runner.waits(now);
        }
        state.verify.as_ref().is_none_or(|pass| !pass.is_active())
            && jobs[state.job()].flow_weight == 0
            && runner.waits(now)
    }

    /// A sleep until `at`, with a wake-up to arm unless one at or before `at` is armed
    /// already (stepping then asks again): without this every completion of a rate-limited
    /// job re-armed the same wake-up, and the copies grew with the run.
    fn sleep_until(&mut self, clone: usize, at: Time, timed: bool) -> Action {
        let state = &mut self.clones[clone];
        if !timed || (state.wake_armed && state.wake_at <= at) {
            return Action::Wait;
        }
        state.wake_armed = true;
        state.wake_at = at;
        Action::Sleep(at)
    }

    /// One of the clone's I/Os completed at `now`: a read-back read, or one its runner
    /// issued, which a read-back will check (`written_tag`: what the block now holds; `None`
    /// when it failed) and a steady-state criterion (`ss=`) counts. Returns the running
    /// clones told to stop because their rate reached steady state (the caller wakes them to
    /// drain and finish).
    #[inline]
    pub fn complete(
        &mut self,
        jobs: &[JobSpec],
        clone: usize,
        now: Time,
        unit: &IoUnit,
        written_tag: Option<u64>,
    ) -> Vec<usize> {
        let state = &mut self.clones[clone];
        if state.runner_only && self.steady.is_empty() {
            // What the rest comes to without a read-back or a steady-state tracker, inlined
            // into the driver's completion (issue 34: one call level less per I/O).
            if let Some(runner) = state.runner.as_mut() {
                runner.complete(now, unit);
            }
            return Vec::new();
        }
        self.complete_general(jobs, clone, now, unit, written_tag)
    }

    /// [`Lifecycle::complete`] of a clone with a read-back, or with steady state watched.
    fn complete_general(
        &mut self,
        jobs: &[JobSpec],
        clone: usize,
        now: Time,
        unit: &IoUnit,
        written_tag: Option<u64>,
    ) -> Vec<usize> {
        let state = &mut self.clones[clone];
        // A runner-only clone has no read-back: its `verify` (out of the way of every I/O)
        // need not be read.
        let pass = match state.runner_only {
            true => None,
            false => state.verify.as_mut(),
        };
        if let Some(pass) = pass {
            if pass.is_active() {
                pass.read_done();
                return Vec::new();
            }
            if let Some(tag) = written_tag {
                pass.wrote(unit, tag);
            }
        }
        let Some(runner) = state.runner.as_mut() else {
            return Vec::new();
        };
        runner.complete(now, unit);
        if self.steady.is_empty() {
            // No job watches for steady state (the common case): nothing to look up.
            return Vec::new();
        }
        let spec = &jobs[state.job()];
        let watched = Self::watched(spec, clone);
        let Some(tracker) = self.steady.get_mut(&watched) else {
            return Vec::new();
        };
        if unit.kind.ddir().is_none() || !tracker.completed(now, unit.len) {
            return Vec::new();
        }
        self.stop_where(|index, other_job| match watched {
            Watched::Group(group) => {
                jobs[other_job].group_reporting && jobs[other_job].group_id == group
            }
            Watched::Clone(only) => index == only,
        })
    }

    /// An I/O of the clone failed: fio stops a job at its first error
    /// (`continue_on_error=none`).
    pub fn fail(&mut self, clone: usize) {
        self.stop_where(|index, _| index == clone);
    }

    /// Tells every running clone `in_scope(index, job)` picks to stop (its read-back too);
    /// returns them.
    fn stop_where(&mut self, in_scope: impl Fn(usize, usize) -> bool) -> Vec<usize> {
        let mut stopped = Vec::new();
        for (index, state) in self.clones.iter_mut().enumerate() {
            if state.finished || !in_scope(index, state.job()) {
                continue;
            }
            if let Some(runner) = state.runner.as_mut() {
                runner.stop();
                state.stopped = true;
                if let Some(pass) = state.verify.as_mut() {
                    pass.abandon();
                }
                stopped.push(index);
            }
        }
        stopped
    }

    /// The driver woke the clone at `now` (for any reason): wake-ups due by now are spent.
    #[inline]
    pub fn woken(&mut self, clone: usize, now: Time) {
        let state = &mut self.clones[clone];
        if state.wake_armed && state.wake_at <= now {
            state.wake_armed = false;
        }
    }

    /// fio's `flow_threshold_exceeded()`: whether the clone may go on now, its share of its
    /// flow's count not above its share of the flow's weight. When it may not, it waits to be
    /// woken by another clone of the flow moving (see [`Lifecycle::flow_moved`]).
    fn flow_permits(&mut self, jobs: &[JobSpec], clone: usize) -> bool {
        let spec = &jobs[self.clones[clone].job()];
        if spec.flow_weight == 0 {
            return true;
        }
        let own = self.clones[clone].flow_count;
        let flow = self
            .flows
            .get_mut(&spec.flow_id)
            .expect("a started clone's flow");
        // fio's shared counter starts at 1, each job's at 0.
        let count_share = own as f64 / (flow.count + 1) as f64;
        let weight_share = spec.flow_weight as f64 / flow.total_weight.max(1) as f64;
        if count_share > weight_share {
            if !flow.waiting.contains(&clone) {
                flow.waiting.push(clone);
            }
            return false;
        }
        true
    }

    /// The clone went on (issued an I/O): it counts in its flow, and the clones the flow held
    /// back are returned for the driver to wake.
    fn flow_moved(&mut self, jobs: &[JobSpec], clone: usize) -> Vec<usize> {
        let spec = &jobs[self.clones[clone].job()];
        if spec.flow_weight == 0 {
            return Vec::new();
        }
        self.clones[clone].flow_count += 1;
        let flow = self
            .flows
            .get_mut(&spec.flow_id)
            .expect("a started clone's flow");
        flow.count += 1;
        std::mem::take(&mut flow.waiting)
    }

    /// I/Os the clone has in flight (0 before it starts).
    #[inline]
    pub fn in_flight(&self, clone: usize) -> u32 {
        self.clones[clone]
            .runner
            .as_ref()
            .map_or(0, JobRunner::in_flight)
    }

    /// Completions the clone waits for before its job reaps the next group (see
    /// [`JobRunner::completions_wanted`]); 0 if it waits for none.
    pub fn completions_wanted(&self, clone: usize) -> u32 {
        self.clones[clone]
            .runner
            .as_ref()
            .map_or(0, JobRunner::completions_wanted)
    }

    /// When the clone's statistics start (its start plus `ramp_time`); the start handed to
    /// `JobStats::set_runtime` unless it finishes before.
    pub fn stats_from(&self, clone: usize) -> Time {
        self.clones[clone].stats_from
    }

    /// Whether an I/O completing at `now` counts in the clone's statistics (past `ramp_time`).
    pub fn counts_at(&self, clone: usize, now: Time) -> bool {
        now >= self.clones[clone].stats_from
    }

    #[inline]
    pub fn job_of(&self, clone: usize) -> usize {
        self.clones[clone].job()
    }

    /// Each clone's job, in clone order.
    pub fn clone_jobs(&self) -> Vec<usize> {
        self.clones.iter().map(CloneState::job).collect()
    }

    pub fn all_finished(&self) -> bool {
        self.unfinished == 0
    }

    /// Clones started and not finished.
    pub fn running(&self) -> impl Iterator<Item = usize> + '_ {
        self.clones
            .iter()
            .enumerate()
            .filter(|(_, clone)| clone.runner.is_some() && !clone.finished)
            .map(|(index, _)| index)
    }

    /// The first clone not finished, with the time it started (0 if it never did).
    pub fn first_unfinished(&self) -> Option<(usize, Time)> {
        self.clones
            .iter()
            .position(|clone| !clone.finished)
            .map(|index| (index, self.clones[index].started_at))
    }

    /// What the clones of jobs with `write_iolog` issued, for the driver to hand on.
    pub fn take_issue_log(&mut self) -> IssueLog {
        std::mem::take(&mut self.issues)
    }

    /// When the last clone finished.
    pub fn last_finish(&self) -> Time {
        self.last_finish
    }

    /// The clone is done. When any job says `exitall` ([`Lifecycle::exitall_run`]), the
    /// clones its job's `exit_what` names are stopped: running ones are told to stop (the
    /// caller wakes them so they drain and finish) and, for its group or `all`, those not
    /// started never start (fio's `fio_terminate_threads` marks them, and its start loop
    /// skips a marked job).
    pub fn finish(&mut self, jobs: &[JobSpec], clone: usize, now: Time) -> Finished {
        let state = &mut self.clones[clone];
        assert!(!state.finished, "a clone finished twice");
        state.finished = true;
        self.unfinished -= 1;
        let stats_from = state.stats_from.min(now);
        self.issues.finished(clone, now);
        self.last_finish = self.last_finish.max(now);
        let spec = &jobs[state.job()];
        // fio's flow_exit_job(): the others of its flow are no longer held to it.
        let mut released = Vec::new();
        if spec.flow_weight > 0 {
            let flow = self
                .flows
                .get_mut(&spec.flow_id)
                .expect("a started clone's flow");
            flow.total_weight -= spec.flow_weight;
            flow.count -= state.flow_count;
            released = std::mem::take(&mut flow.waiting);
        }
        if !self.exitall_run {
            return Finished {
                stats_from,
                stopped: Vec::new(),
                never_started: Vec::new(),
                woken: released,
            };
        }
        if spec.exit_what == ExitWhat::All {
            let (stopped, never_started) = self.stop_all(now);
            return Finished {
                stats_from,
                stopped,
                never_started,
                woken: released,
            };
        }
        if spec.exit_what == ExitWhat::Stonewall {
            // TERMINATE_STONEWALL: the jobs running now, of any group.
            return Finished {
                stats_from,
                stopped: self.stop_where(|_, _| true),
                never_started: Vec::new(),
                woken: released,
            };
        }
        let group = spec.group_id;
        let stopped = self.stop_where(|_, job| jobs[job].group_id == group);
        let never_started = self.never_start_where(now, |job| jobs[job].group_id == group);
        Finished {
            stats_from,
            stopped,
            never_started,
            woken: released,
        }
    }

    /// Clones not started whose job `in_scope` accepts finish now with nothing done, and
    /// their jobs count as released so that none waits to start them.
    fn never_start_where(&mut self, now: Time, in_scope: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut never_started = Vec::new();
        for (index, clone) in self.clones.iter_mut().enumerate() {
            if !clone.finished && clone.runner.is_none() && in_scope(clone.job()) {
                clone.finished = true;
                self.unfinished -= 1;
                self.last_finish = self.last_finish.max(now);
                self.job_released[clone.job()] = true;
                never_started.push(index);
            }
        }
        never_started
    }

    /// Stops everything (a signal): running clones are told to stop and returned; clones
    /// whose job never started finish at once, with nothing done, and no job starts later.
    pub fn stop_all(&mut self, now: Time) -> (Vec<usize>, Vec<usize>) {
        let stopped = self.stop_where(|_, _| true);
        let never_started = self.never_start_where(now, |_| true);
        self.job_released.fill(true);
        (stopped, never_started)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::lay_out;

    fn job(name: &str) -> JobSpec {
        JobSpec::sized(name, 1 << 20)
    }

    fn lifecycle(jobs: &[JobSpec]) -> (Lifecycle, Layout) {
        let layout = lay_out(jobs, Some(1 << 30), 1).unwrap();
        (Lifecycle::new(jobs, &layout, 7).unwrap(), layout)
    }

    #[test]
    fn a_stonewalled_job_starts_when_every_earlier_clone_finished() {
        let mut a = job("a");
        a.numjobs = 2;
        let mut b = job("b");
        b.stonewall = true;
        let jobs = [a, b];
        let (mut life, layout) = lifecycle(&jobs);
        assert_eq!(life.release_ready(&jobs, 0), [(0, 0)]);
        assert_eq!(life.start_job(&jobs, &layout, 0, 0), [0, 1]);
        life.finish(&jobs, 0, 5);
        assert!(
            life.release_ready(&jobs, 5).is_empty(),
            "one clone of a still runs"
        );
        life.finish(&jobs, 1, 9);
        assert_eq!(life.release_ready(&jobs, 9), [(9, 1)]);
        assert_eq!(life.last_finish(), 9);
    }

    /// fio 3.33 here, null engine: `a` 2 s, `b` 1 s, `c` stonewall 1 s, `d` wait_for=b 3 s
    /// took 5.5 s: `d` did not start when `b` ended at 1 s but with `c` at 2 s.
    #[test]
    fn no_job_starts_before_an_earlier_stonewall_job() {
        let mut c = job("c");
        c.stonewall = true;
        let mut d = job("d");
        d.wait_for = Some("b".into());
        let jobs = [job("a"), job("b"), c, d];
        let (mut life, layout) = lifecycle(&jobs);
        assert_eq!(life.release_ready(&jobs, 0), [(0, 0), (0, 1)]);
        life.start_job(&jobs, &layout, 0, 0);
        life.start_job(&jobs, &layout, 1, 0);
        life.finish(&jobs, 1, 1);
        assert!(life.release_ready(&jobs, 1).is_empty(), "d waits for c");
        life.finish(&jobs, 0, 2);
        assert_eq!(life.release_ready(&jobs, 2), [(2, 2), (2, 3)]);
    }

    #[test]
    fn startdelay_ranges_draw_within_bounds_and_repeat_with_the_seed() {
        let mut a = job("a");
        a.startdelay_ns = (10, 50);
        let jobs = [a];
        let (mut first, _) = lifecycle(&jobs);
        let (mut second, _) = lifecycle(&jobs);
        let [(at, 0)] = first.release_ready(&jobs, 100)[..] else {
            panic!("job not released");
        };
        assert!((110..=150).contains(&at), "{at}");
        assert_eq!(second.release_ready(&jobs, 100), [(at, 0)]);
    }

    #[test]
    fn ramp_time_opens_the_statistics_window_late() {
        let mut a = job("a");
        a.ramp_time_ns = 30;
        let jobs = [a];
        let (mut life, layout) = lifecycle(&jobs);
        life.start_job(&jobs, &layout, 0, 10);
        assert!(!life.counts_at(0, 39));
        assert!(life.counts_at(0, 40));
        // A clone that ends inside its ramp reports from its end, not a window that never began.
        assert_eq!(life.finish(&jobs, 0, 20).stats_from, 20);
        assert_eq!(
            life.next_action(&jobs, 0, 20),
            Action::Wait,
            "a finished clone has nothing to do"
        );
    }

    #[test]
    fn exitall_stops_running_clones_of_its_group_only() {
        let mut a = job("a");
        a.exitall = true;
        let b = job("b");
        let mut c = job("c");
        c.group_id = 1;
        let d = job("d");
        let jobs = [a, b, c, d];
        let (mut life, layout) = lifecycle(&jobs);
        for job in [0, 1, 2] {
            life.start_job(&jobs, &layout, job, 0);
        }
        let finished = life.finish(&jobs, 0, 3);
        assert_eq!(finished.stopped, [1], "c is in another group");
        assert_eq!(
            finished.never_started,
            [3],
            "d, of a's group and not started, never starts (fio marks it terminated)"
        );
        assert_eq!(life.running().collect::<Vec<_>>(), [1, 2]);
        let released = life.release_ready(&jobs, 3);
        assert!(!released.iter().any(|&(_, job)| job == 3), "{released:?}");
    }

    /// fio 3.33's `exitall` is one run-wide flag: once any job sets it, a job without it
    /// that ends stops its group too (seen with fio itself: `exitall` only on `[a]`, a
    /// 600 ms job, stopped at 101 ms when `[b]` ended).
    #[test]
    fn exitall_on_one_job_makes_every_job_end_stop_its_group() {
        let mut a = job("a");
        a.exitall = true;
        let b = job("b");
        let jobs = [a, b];
        let (mut life, layout) = lifecycle(&jobs);
        for job in [0, 1] {
            life.start_job(&jobs, &layout, job, 0);
        }
        let finished = life.finish(&jobs, 1, 4);
        assert_eq!(finished.stopped, [0], "b ended: a, of its group, stops");
        let without = [job("a"), job("b")];
        let (mut life, layout) = lifecycle(&without);
        for job in [0, 1] {
            life.start_job(&without, &layout, job, 0);
        }
        assert!(life.finish(&without, 1, 4).stopped.is_empty());
    }

    #[test]
    fn one_wake_up_is_armed_per_sleep_until_it_is_spent() {
        let jobs = [job("a")];
        let (mut life, _) = lifecycle(&jobs);
        let sleep = |life: &mut Lifecycle, at| life.sleep_until(0, at, true);
        assert_eq!(sleep(&mut life, 50), Action::Sleep(50));
        assert_eq!(sleep(&mut life, 50), Action::Wait, "the same sleep: armed");
        assert_eq!(
            sleep(&mut life, 80),
            Action::Wait,
            "the armed one comes first"
        );
        assert_eq!(
            sleep(&mut life, 30),
            Action::Sleep(30),
            "an earlier one arms"
        );
        life.woken(0, 20);
        assert_eq!(
            sleep(&mut life, 30),
            Action::Wait,
            "not spent before its time"
        );
        life.woken(0, 30);
        assert_eq!(sleep(&mut life, 50), Action::Sleep(50), "spent: arms again");
        assert_eq!(
            life.sleep_until(0, 10, false),
            Action::Wait,
            "untimed: no wake-up"
        );
    }

    /// A write job with `verify=` writes, then reads back each block with the tag it wrote;
    /// one told to stop by `exitall` ends without a read-back.
    #[test]
    fn a_verify_job_reads_back_unless_it_was_stopped() {
        let mut writer = job("w");
        writer.rw = crate::job::RwMode::Write;
        writer.size = Some(crate::job::SizeOrPercent::Bytes(8192));
        writer.verify = Some("crc32c".into());
        let mut quitter = job("q");
        quitter.exitall = true;
        let jobs = [writer, quitter];
        for stopped in [false, true] {
            let (mut life, layout) = lifecycle(&jobs);
            life.start_job(&jobs, &layout, 0, 0);
            life.start_job(&jobs, &layout, 1, 0);
            for tag in [7, 8] {
                let Action::Submit { unit, .. } = life.next_action(&jobs, 0, 1) else {
                    panic!("a write expected");
                };
                life.complete(&jobs, 0, 1, &unit, Some(tag));
            }
            if stopped {
                life.finish(&jobs, 1, 1);
                assert_eq!(life.next_action(&jobs, 0, 2), Action::Finish);
                continue;
            }
            assert_eq!(
                life.next_action(&jobs, 0, 2),
                Action::Phase { read_back: true }
            );
            for tag in [7, 8] {
                let Action::Submit {
                    unit, verify_tag, ..
                } = life.next_action(&jobs, 0, 3)
                else {
                    panic!("a read-back expected");
                };
                assert_eq!(verify_tag, Some(tag));
                life.complete(&jobs, 0, 4, &unit, None);
            }
            assert_eq!(life.next_action(&jobs, 0, 5), Action::Finish);
        }
    }

    /// `exit_what=stonewall` stops every running job, of any group, and later stonewalled
    /// jobs still run; `exit_what=all` also keeps any job from starting.
    #[test]
    fn exit_what_widens_what_exitall_stops() {
        for (exit_what, stopped, later_starts) in [
            (ExitWhat::Group, vec![], true),
            (ExitWhat::Stonewall, vec![1], true),
            (ExitWhat::All, vec![1], false),
        ] {
            let mut a = job("a");
            a.exitall = true;
            a.exit_what = exit_what;
            let mut b = job("b");
            b.group_id = 1;
            let mut c = job("c");
            c.stonewall = true;
            c.group_id = 2;
            let jobs = [a, b, c];
            let (mut life, layout) = lifecycle(&jobs);
            assert_eq!(life.release_ready(&jobs, 0), [(0, 0), (0, 1)]);
            life.start_job(&jobs, &layout, 0, 0);
            life.start_job(&jobs, &layout, 1, 0);
            let finished = life.finish(&jobs, 0, 5);
            assert_eq!(finished.stopped, stopped, "{exit_what:?}");
            assert_eq!(finished.never_started.is_empty(), later_starts);
            life.finish(&jobs, 1, 6);
            let released = life.release_ready(&jobs, 6);
            assert_eq!(!released.is_empty(), later_starts, "{exit_what:?}");
            assert!(later_starts || life.all_finished());
        }
    }

    /// With `group_reporting`, steady state is the group's: the group's rate is sampled and
    /// every running clone of the group stops when it settles; another job runs on.
    #[test]
    fn steady_state_stops_the_whole_reporting_group() {
        let mut steady = job("steady");
        steady.numjobs = 2;
        steady.group_reporting = true;
        steady.time_based = true;
        steady.runtime_ns = Some(60_000_000_000);
        steady.steady_state.parse_criterion("iops:10%").unwrap();
        steady.steady_state.window_s = 2;
        let other = job("other");
        let jobs = [steady, other];
        let (mut life, layout) = lifecycle(&jobs);
        for job in [0, 1] {
            life.start_job(&jobs, &layout, job, 0);
        }
        let read = IoUnit {
            kind: crate::generator::IoKind::Read,
            file: 0,
            offset: 0,
            len: 4096,
        };
        let mut stopped = Vec::new();
        'feed: for ms in 0..5_000u64 {
            for clone in [0, 1] {
                let now = ms * 1_000_000;
                // Each completion needs an I/O in flight.
                let action = life.next_action(&jobs, clone, now);
                assert!(matches!(action, Action::Submit { .. }), "{action:?}");
                stopped = life.complete(&jobs, clone, now, &read, Some(0));
                if !stopped.is_empty() {
                    break 'feed;
                }
            }
        }
        // Samples at 1 s and 2 s fill the window; the first completion at 2 s sees it.
        assert_eq!(stopped, [0, 1]);
        assert_eq!(life.running().count(), 3, "stopped clones still drain");
    }

    /// fio's flow: jobs sharing a `flow_id` go in proportion to their weights (3:1 here);
    /// a job held back is woken when another moves, and freed when the other finishes.
    #[test]
    fn flow_weights_set_the_proportion_of_iterations() {
        let mut fast = job("fast");
        fast.flow_weight = 3;
        let mut slow = job("slow");
        slow.flow_weight = 1;
        let jobs = [fast, slow];
        let (mut life, layout) = lifecycle(&jobs);
        life.start_job(&jobs, &layout, 0, 0);
        life.start_job(&jobs, &layout, 1, 0);
        let mut moves = [0u32; 2];
        let mut woken_slow = false;
        for _ in 0..400 {
            for clone in [0, 1] {
                if life.flow_permits(&jobs, clone) {
                    moves[clone] += 1;
                    woken_slow |= life.flow_moved(&jobs, clone).contains(&1);
                }
            }
        }
        let ratio = f64::from(moves[0]) / f64::from(moves[1]);
        assert!((2.9..3.1).contains(&ratio), "{moves:?}");
        assert!(woken_slow, "a held job is handed back to its driver");
        // Once `fast` finishes, `slow` is no longer held to it.
        let finished = life.finish(&jobs, 0, 1);
        assert!(life.flow_permits(&jobs, 1) || finished.woken.contains(&1));
        for _ in 0..10 {
            assert!(life.flow_permits(&jobs, 1));
            life.flow_moved(&jobs, 1);
        }
    }

    #[test]
    fn a_stop_finishes_clones_that_never_started_and_releases_nothing_more() {
        let a = job("a");
        let mut b = job("b");
        b.stonewall = true;
        let jobs = [a, b];
        let (mut life, layout) = lifecycle(&jobs);
        life.release_ready(&jobs, 0);
        life.start_job(&jobs, &layout, 0, 0);
        assert_eq!(life.stop_all(4), (vec![0], vec![1]));
        assert_eq!(life.first_unfinished(), Some((0, 0)));
        life.finish(&jobs, 0, 6);
        assert!(life.all_finished());
        assert!(life.release_ready(&jobs, 6).is_empty());
    }
}
