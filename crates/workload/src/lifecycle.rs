//! The life of every job clone, the same under both drivers: which jobs may start
//! (`stonewall`, `wait_for`) and when (`startdelay`), each clone's runner, the start of its
//! statistics window (`ramp_time`), and who stops when one finishes (`exitall`, a stop
//! signal). The drivers keep only what submitting I/O needs.

use iosched_core::Time;

use crate::generator::IoUnit;
use crate::job::{ExitWhat, JobSpec};
use crate::layout::Layout;
use crate::processes::{prerequisites, WaitForError};
use crate::rng::Rng;
use crate::runner::JobRunner;
use crate::steady_state::SteadyState;

/// One clone from its job's start to its end.
#[derive(Debug)]
struct CloneState {
    job: usize,
    runner: Option<JobRunner>,
    started_at: Time,
    stats_from: Time,
    finished: bool,
    /// The earliest timed wake-up the driver holds for this clone, if any.
    wake_armed: Option<Time>,
    /// Iterations counted in its flow (`flow=`).
    flow_count: u64,
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
    prerequisites: Vec<Vec<usize>>,
    /// Jobs released to start (their start may still lie ahead, after `startdelay`).
    job_released: Vec<bool>,
    last_finish: Time,
    /// Steady-state trackers (`ss_dur=`), created as their jobs start.
    steady: std::collections::BTreeMap<Watched, SteadyState>,
    flows: std::collections::BTreeMap<u32, Flow>,
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
                CloneState {
                    job: plan.job,
                    runner: None,
                    started_at: 0,
                    stats_from: 0,
                    finished: false,
                    wake_armed: None,
                    flow_count: 0,
                }
            })
            .collect();
        Ok(Lifecycle {
            seed,
            clones,
            job_clones,
            prerequisites: prerequisites(jobs)?,
            job_released: vec![false; jobs.len()],
            last_finish: 0,
            steady: std::collections::BTreeMap::new(),
            flows: std::collections::BTreeMap::new(),
        })
    }

    /// Releases every job whose prerequisites have all finished, each with the time its
    /// clones start: `now` plus its `startdelay` (a range draws from the job's own stream).
    pub fn release_ready(&mut self, jobs: &[JobSpec], now: Time) -> Vec<(Time, usize)> {
        let mut released = Vec::new();
        for (job, spec) in jobs.iter().enumerate() {
            if self.job_released[job] {
                continue;
            }
            let ready = self.prerequisites[job]
                .iter()
                .all(|&before| self.job_finished(before));
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
            clone.runner = Some(JobRunner::new(spec, regions, now, rng));
            clone.started_at = now;
            clone.stats_from = now + spec.ramp_time_ns;
        }
        started
    }

    fn watched(spec: &JobSpec, clone: usize) -> Watched {
        if spec.group_reporting {
            Watched::Group(spec.group_id)
        } else {
            Watched::Clone(clone)
        }
    }

    /// The clone's runner once its job started (to stop it).
    pub fn runner_mut(&mut self, clone: usize) -> Option<&mut JobRunner> {
        self.clones[clone].runner.as_mut()
    }

    /// One of the clone's I/Os completed at `now`: its runner learns of it, and a
    /// steady-state criterion (`ss=`) counts it. Returns the running clones told to stop
    /// because their rate reached steady state (the caller wakes them to drain and finish).
    pub fn complete(
        &mut self,
        jobs: &[JobSpec],
        clone: usize,
        now: Time,
        unit: &IoUnit,
    ) -> Vec<usize> {
        let Some(runner) = self.clones[clone].runner.as_mut() else {
            return Vec::new();
        };
        runner.complete(now, unit);
        let spec = &jobs[self.clones[clone].job];
        let watched = Self::watched(spec, clone);
        let Some(tracker) = self.steady.get_mut(&watched) else {
            return Vec::new();
        };
        if unit.kind.ddir().is_none() || !tracker.completed(now, unit.len) {
            return Vec::new();
        }
        let mut stopped = Vec::new();
        for (index, other) in self.clones.iter_mut().enumerate() {
            let in_scope = match watched {
                Watched::Group(group) => {
                    jobs[other.job].group_reporting && jobs[other.job].group_id == group
                }
                Watched::Clone(only) => index == only,
            };
            if other.finished || !in_scope {
                continue;
            }
            if let Some(runner) = other.runner.as_mut() {
                runner.stop();
                stopped.push(index);
            }
        }
        stopped
    }

    /// The runner of a clone that started and has not finished: the one a driver may step.
    pub fn live_runner_mut(&mut self, clone: usize) -> Option<&mut JobRunner> {
        let state = &mut self.clones[clone];
        if state.finished {
            return None;
        }
        state.runner.as_mut()
    }

    /// The runner asked to sleep until `at`: whether the driver must arm a wake-up for it.
    /// Not when one at or before `at` is armed already: stepping then asks again. Without
    /// this every completion of a rate-limited job re-armed the same wake-up, and the
    /// copies grew with the run.
    pub fn arm_wake(&mut self, clone: usize, at: Time) -> bool {
        let armed = &mut self.clones[clone].wake_armed;
        if armed.is_some_and(|armed_at| armed_at <= at) {
            return false;
        }
        *armed = Some(at);
        true
    }

    /// The driver woke the clone at `now` (for any reason): wake-ups due by now are spent.
    pub fn woken(&mut self, clone: usize, now: Time) {
        let armed = &mut self.clones[clone].wake_armed;
        if armed.is_some_and(|armed_at| armed_at <= now) {
            *armed = None;
        }
    }

    /// fio's `flow_threshold_exceeded()`: whether the clone may go on now, its share of its
    /// flow's count not above its share of the flow's weight. When it may not, it waits to be
    /// woken by another clone of the flow moving (see [`Lifecycle::flow_moved`]); with
    /// `flow_sleep` the driver also wakes it after that long.
    pub fn flow_permits(&mut self, jobs: &[JobSpec], clone: usize) -> bool {
        let spec = &jobs[self.clones[clone].job];
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
    pub fn flow_moved(&mut self, jobs: &[JobSpec], clone: usize) -> Vec<usize> {
        let spec = &jobs[self.clones[clone].job];
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
    pub fn in_flight(&self, clone: usize) -> u32 {
        self.clones[clone]
            .runner
            .as_ref()
            .map_or(0, JobRunner::in_flight)
    }

    /// Whether an I/O completing at `now` counts in the clone's statistics (past `ramp_time`).
    pub fn counts_at(&self, clone: usize, now: Time) -> bool {
        now >= self.clones[clone].stats_from
    }

    pub fn job_of(&self, clone: usize) -> usize {
        self.clones[clone].job
    }

    /// Each clone's job, in clone order.
    pub fn clone_jobs(&self) -> Vec<usize> {
        self.clones.iter().map(|clone| clone.job).collect()
    }

    pub fn all_finished(&self) -> bool {
        self.clones.iter().all(|clone| clone.finished)
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

    /// When the last clone finished.
    pub fn last_finish(&self) -> Time {
        self.last_finish
    }

    /// The clone is done. With `exitall` the running clones `exit_what` names are told to
    /// stop (the caller wakes them so they drain and finish); with `exit_what=all` no clone
    /// starts any more.
    pub fn finish(&mut self, jobs: &[JobSpec], clone: usize, now: Time) -> Finished {
        let state = &mut self.clones[clone];
        assert!(!state.finished, "a clone finished twice");
        state.finished = true;
        let stats_from = state.stats_from.min(now);
        self.last_finish = self.last_finish.max(now);
        let spec = &jobs[state.job];
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
        if !spec.exitall {
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
        let mut stopped = Vec::new();
        for (index, other) in self.clones.iter_mut().enumerate() {
            let in_scope =
                spec.exit_what == ExitWhat::Stonewall || jobs[other.job].group_id == spec.group_id;
            if other.finished || !in_scope {
                continue;
            }
            if let Some(runner) = other.runner.as_mut() {
                runner.stop();
                stopped.push(index);
            }
        }
        Finished {
            stats_from,
            stopped,
            never_started: Vec::new(),
            woken: released,
        }
    }

    /// Stops everything (a signal): running clones are told to stop and returned; clones
    /// whose job never started finish at once, with nothing done, and no job starts later.
    pub fn stop_all(&mut self, now: Time) -> (Vec<usize>, Vec<usize>) {
        let mut stopped = Vec::new();
        let mut never_started = Vec::new();
        for (index, clone) in self.clones.iter_mut().enumerate() {
            if clone.finished {
                continue;
            }
            match clone.runner.as_mut() {
                Some(runner) => {
                    runner.stop();
                    stopped.push(index);
                }
                None => {
                    clone.finished = true;
                    self.last_finish = self.last_finish.max(now);
                    never_started.push(index);
                }
            }
        }
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
        assert!(
            life.live_runner_mut(0).is_none(),
            "a finished clone has no runner to step"
        );
        assert!(life.runner_mut(0).is_some());
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
        assert_eq!(
            finished.stopped,
            [1],
            "c is in another group, d never started"
        );
        assert_eq!(life.running().collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn one_wake_up_is_armed_per_sleep_until_it_is_spent() {
        let jobs = [job("a")];
        let (mut life, _) = lifecycle(&jobs);
        assert!(life.arm_wake(0, 50));
        assert!(!life.arm_wake(0, 50), "the same sleep again: already armed");
        assert!(
            !life.arm_wake(0, 80),
            "a later sleep: the armed wake-up comes first"
        );
        assert!(life.arm_wake(0, 30), "an earlier sleep needs its own");
        life.woken(0, 20);
        assert!(
            !life.arm_wake(0, 30),
            "a wake-up before the armed time spends nothing"
        );
        life.woken(0, 30);
        assert!(
            life.arm_wake(0, 50),
            "once spent, the next sleep arms again"
        );
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
                let runner = life.runner_mut(clone).unwrap();
                assert!(matches!(runner.next(now), crate::runner::Step::Submit(_)));
                stopped = life.complete(&jobs, clone, now, &read);
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
