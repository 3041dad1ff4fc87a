//! The simulator's main loop: jobs as simulated processes, one scheduler, one device, one
//! virtual clock.
//!
//! Every event runs to completion at its instant: a process submits what its job wants, the
//! device reports completions, the scheduler's idle deadline fires. After each event the
//! device's free slots are offered to the scheduler (the kernel's dispatch loop) until it
//! answers "nothing now" or "idle until t".
//!
//! A job's bio that merges nowhere needs a request from its cgroup's request list
//! ([`RequestPool`]: `nr_requests` per direction, the legacy block layer's allocator under
//! CFQ); when the list is full the process sleeps there (`S` in the trace) until a
//! completion frees one. Choice: the file system's own requests (buffered reads, writeback,
//! journal) keep the writeback module's accounting (the flusher's congestion and request
//! waits use the same `nr_requests` and thresholds) and do not draw on these lists.

use std::collections::BTreeMap;
use std::fmt;

use iosched_core::request_pool::{Alloc, RequestPool};
use iosched_core::{
    new_elevator, CgroupId, DeviceInfo, Dispatch, Elevator, IoContextId, IoPrio, Op, ReqFlags,
    Request, RequestId, RqEvent, ServiceSummary, Time, Trace, TunableError, TunableValue,
    SECTOR_SIZE,
};
use iosched_report::disk::DiskAccounting;
use iosched_report::stats::{DiskStats, JobStats};
use iosched_workload::generator::{IoKind, IoUnit};
use iosched_workload::lifecycle::{Action, Lifecycle};
use iosched_workload::rng::Rng;
use iosched_workload::JobSpec;

use crate::cgroups::Cgroups;
use crate::device::{Command, Device};
use crate::event::{Event, EventQueue};
use crate::layout::{lay_out, Layout, LayoutError};
use iosched_workload::processes::identities;

// The file system's part of the loop (buffered I/O, writeback and journal threads) lives in
// `fs/driver.rs`, a child module so that it can work on the loop's private state.
#[path = "fs/driver.rs"]
mod fs_driver;
#[path = "fs/flushing.rs"]
mod fs_flushing;

/// How a simulation is set up besides its jobs and device.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub scheduler: String,
    /// `--set KEY=VALUE` scheduler tunables, applied in order.
    pub tunables: Vec<(String, String)>,
    pub seed: u64,
    /// Run `check_invariants()` after every event.
    pub check: bool,
    /// Stop with an error past this many events.
    pub events_max: u64,
    /// Stop with an error past this virtual time.
    pub time_max_ns: Time,
    /// File-system and writeback knobs (`dirty_ratio`, `flusher`, `mem`, `barrier`...; see
    /// [`crate::fs::FsConfig::is_knob`]), applied in order. Used when a job is buffered.
    pub fs_knobs: Vec<(String, String)>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            scheduler: "noop".to_string(),
            tunables: Vec::new(),
            seed: 1,
            check: false,
            events_max: 2_000_000_000,
            time_max_ns: 24 * 3600 * 1_000_000_000,
            fs_knobs: Vec::new(),
        }
    }
}

/// Why a simulation could not run or did not finish.
#[derive(Debug)]
#[non_exhaustive]
pub enum SimError {
    UnknownScheduler(String),
    Tunable(TunableError),
    Layout(LayoutError),
    /// `events_max` or `time_max_ns` was reached: something never finishes.
    Runaway {
        events: u64,
        now: Time,
        /// A job that had not finished.
        unfinished: Option<String>,
    },
    /// A file-system or writeback knob was refused.
    FsKnob(String),
    /// `wait_for=` names no earlier job.
    WaitFor {
        job: String,
        target: String,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::UnknownScheduler(message) => write!(f, "{message}"),
            SimError::Tunable(error) => write!(f, "--set: {error}"),
            SimError::Layout(error) => write!(f, "{error}"),
            SimError::Runaway {
                events,
                now,
                unfinished,
            } => {
                write!(
                    f,
                    "simulation stopped after {events} events at {now} ns without finishing"
                )?;
                match unfinished {
                    Some(job) => write!(f, " (job '{job}' still running or waiting to start)"),
                    None => Ok(()),
                }
            }
            SimError::WaitFor { job, target } => {
                write!(f, "job '{job}': wait_for={target} names no earlier job")
            }
            SimError::FsKnob(message) => write!(f, "--set: {message}"),
        }
    }
}

impl std::error::Error for SimError {}

/// What a finished simulation hands back.
#[derive(Debug)]
pub struct SimOutcome {
    /// One entry per job clone, in job order.
    pub clones: Vec<JobStats>,
    /// For each clone, its job's index.
    pub clone_jobs: Vec<usize>,
    pub disk: DiskStats,
    /// Virtual time at which the last job finished.
    pub sim_time_ns: Time,
    pub events: u64,
    pub tunables: Vec<TunableValue>,
    pub summary: Vec<ServiceSummary>,
    /// What the clones of jobs with `write_iolog` issued (fio's iolog).
    pub issued: iosched_workload::issue_log::IssueLog,
    pub layout: Layout,
    /// Cgroup path of each clone.
    pub clone_cgroups: Vec<String>,
    /// Page cache, writeback and journal results, when a job was buffered.
    pub fs: Option<crate::fs::FsOutcome>,
}

/// A simulated process: one job clone (its runner and lifecycle are in [`Lifecycle`]).
struct Process {
    pid: u32,
    ioc: IoContextId,
    cgroup: CgroupId,
    ioprio: IoPrio,
    /// Device start sector of each of the clone's files.
    file_sectors: Vec<u64>,
    direct: bool,
    /// Replays a process's async writes (`iosched_replay_part=async`): submitted without
    /// `REQ_SYNC`, as write-back submitted them.
    replay_async: bool,
}

/// A request the driver knows about, from submission to completion.
#[derive(Clone)]
struct InFlight {
    process: usize,
    unit: IoUnit,
    request: Request,
    submitted_at: Time,
    issued_at: Option<Time>,
    /// Issued by the file system (buffered I/O, writeback, journal), not by a job directly.
    fs: Option<crate::fs::FsTag>,
    /// Job I/Os back-merged into this request: they complete with it.
    riders: Vec<Rider>,
}

/// The submitting process's plug, for the trace's `P`/`U` events.
#[derive(Clone, Copy)]
enum Plug {
    /// Not inside a process's submission batch.
    Off,
    /// Inside one, nothing submitted yet.
    Armed,
    /// Plugged; the last request submitted in the batch.
    Plugged(Request),
}

/// A job I/O whose request could not be allocated: its process sleeps in the block layer
/// until a request of its list is freed.
#[derive(Clone, Copy)]
struct Held {
    unit: IoUnit,
    request: Request,
    submitted_at: Time,
}

/// A job I/O that rides on another request after a back merge.
#[derive(Clone, Copy)]
struct Rider {
    process: usize,
    unit: IoUnit,
    submitted_at: Time,
}

/// One run: build with [`Simulation::new`], then [`Simulation::run`].
pub struct Simulation<'a> {
    jobs: &'a [JobSpec],
    config: SimConfig,
    device: Box<dyn Device>,
    elevator: Box<dyn Elevator>,
    cgroups: Cgroups,
    layout: Layout,
    processes: Vec<Process>,
    life: Lifecycle,
    stats: Vec<JobStats>,
    events: EventQueue,
    in_flight: BTreeMap<RequestId, InFlight>,
    /// Flushes bypass the scheduler, as the kernel's flush machinery does.
    bypass: std::collections::VecDeque<RequestId>,
    next_request: u64,
    device_generation: u64,
    device_event_at: Option<Time>,
    timer_generation: u64,
    timer_at: Option<Time>,
    disk: DiskAccounting,
    device_rng: Rng,
    completed_scratch: Vec<RequestId>,
    now: Time,
    plug: Plug,
    /// Request lists of the jobs' own (non file-system) requests.
    pool: RequestPool,
    /// Per process: the I/O it sleeps on, waiting for a request.
    held: Vec<Option<Held>>,
    /// The simulated file system, when a job is buffered.
    fs: Option<Box<crate::fs::FsState>>,
}

impl<'a> Simulation<'a> {
    /// Prepares a run of `jobs` on `device` under `config`.
    pub fn new(
        jobs: &'a [JobSpec],
        device: Box<dyn Device>,
        config: SimConfig,
    ) -> Result<Simulation<'a>, SimError> {
        let info = DeviceInfo {
            rotational: device.rotational(),
            queue_depth: device.queue_depth(),
        };
        let mut elevator = new_elevator(&config.scheduler, info)
            .map_err(|error| SimError::UnknownScheduler(error.to_string()))?;
        for (name, value) in &config.tunables {
            elevator
                .set_tunable(name, value)
                .map_err(SimError::Tunable)?;
        }
        let layout = lay_out(
            jobs,
            Some(device.capacity_sectors() * SECTOR_SIZE),
            config.seed,
        )
        .map_err(SimError::Layout)?;

        let (identities, cgroups) = identities(jobs, &layout);
        let mut processes = Vec::new();
        let mut stats = Vec::new();
        for (plan, identity) in layout.clones.iter().zip(&identities) {
            let spec = &jobs[plan.job];
            processes.push(Process {
                pid: identity.pid,
                ioc: identity.ioc,
                cgroup: identity.cgroup,
                ioprio: identity.ioprio,
                file_sectors: plan
                    .files
                    .iter()
                    .map(|&file| layout.files[file].start_sector())
                    .collect(),
                direct: spec.direct,
                replay_async: spec.replay.as_ref().is_some_and(|replay| {
                    replay.part == iosched_workload::replay::ReplayPart::AsyncWrites
                }),
            });
            stats.push(JobStats::for_job(spec));
        }
        // Root too: `cgroup=/` with `cgroup_weight=` sets the root's (leaf) weight, as
        // Android's "normal" parent group in seed 004 does.
        for spec in cgroups.specs() {
            elevator.add_cgroup(*spec);
        }

        let life = Lifecycle::new(jobs, &layout, config.seed).map_err(|e| SimError::WaitFor {
            job: e.job,
            target: e.target,
        })?;

        // Knobs are checked even when no job is buffered, so a typo fails either way.
        let fs_config =
            crate::fs::FsConfig::from_knobs(&config.fs_knobs).map_err(SimError::FsKnob)?;
        let nr_requests = fs_config.writeback.nr_requests;
        let fs = if jobs.iter().any(|job| !job.direct) {
            Some(Box::new(crate::fs::FsState::new(
                fs_config,
                jobs,
                &layout,
                device.capacity_sectors(),
                processes.len(),
            )))
        } else {
            None
        };
        let processes_len = processes.len();

        Ok(Simulation {
            fs,
            jobs,
            device_rng: Rng::for_stream(config.seed, u64::MAX - 1),
            config,
            device,
            elevator,
            cgroups,
            layout,
            processes,
            life,
            stats,
            events: EventQueue::new(),
            in_flight: BTreeMap::new(),
            bypass: std::collections::VecDeque::new(),
            next_request: 0,
            device_generation: 0,
            device_event_at: None,
            timer_generation: 0,
            timer_at: None,
            disk: DiskAccounting::default(),
            completed_scratch: Vec::new(),
            now: 0,
            plug: Plug::Off,
            pool: RequestPool::new(nr_requests),
            held: vec![None; processes_len],
        })
    }

    /// The name of the first job with a clone not finished.
    fn unfinished_job(&self) -> Option<String> {
        let (clone, _) = self.life.first_unfinished()?;
        Some(self.jobs[self.life.job_of(clone)].name.clone())
    }

    /// Each simulated process's pid and command name (its job's name), for trace labels.
    pub fn process_names(&self) -> Vec<(u32, String)> {
        self.processes
            .iter()
            .enumerate()
            .map(|(index, process)| {
                let job = self.life.job_of(index);
                (process.pid, self.jobs[job].name.clone())
            })
            .collect()
    }

    /// Every cgroup with its path (`/`, `/a/b`), for trace labels.
    pub fn cgroup_paths(&self) -> Vec<(CgroupId, String)> {
        self.cgroups
            .specs()
            .map(|spec| (spec.id, self.cgroups.path(spec.id)))
            .collect()
    }

    /// Runs to the end. `progress` is called now and then with the virtual time.
    pub fn run(
        mut self,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(Time),
    ) -> Result<SimOutcome, SimError> {
        self.start_ready_jobs();
        while let Some((time, event)) = self.events.pop() {
            assert!(time >= self.now, "virtual time ran backwards");
            self.now = time;
            self.fs_sample();
            if self.events.processed() > self.config.events_max || time > self.config.time_max_ns {
                return Err(SimError::Runaway {
                    events: self.events.processed(),
                    now: time,
                    unfinished: self.unfinished_job(),
                });
            }
            match event {
                Event::StartJob(job) => self.start_job(job),
                Event::Wake(process) => {
                    self.life.woken(process, self.now);
                    self.step_process(process, trace);
                }
                Event::Device { generation } => {
                    if generation == self.device_generation {
                        self.device_event_at = None;
                        self.device_completions(trace);
                    }
                }
                Event::IdleTimer { generation } => {
                    if generation == self.timer_generation {
                        self.timer_at = None;
                        self.elevator.timer(self.now, trace);
                    }
                }
                Event::Fs(event) => self.fs_event(event, trace),
            }
            self.pump_dispatch(trace);
            self.arm_device_event();
            if self.config.check {
                self.elevator.check_invariants();
            }
            if self.events.processed().is_multiple_of(65_536) {
                progress(self.now);
            }
        }
        self.finish()
    }

    fn finish(mut self) -> Result<SimOutcome, SimError> {
        assert!(
            self.in_flight.is_empty(),
            "requests left in flight at the end"
        );
        assert_eq!(self.elevator.queued(), 0, "requests left in the scheduler");
        assert_eq!(
            self.pool.sleepers(),
            0,
            "a process left asleep on a request list"
        );
        if let Some((_, started_at)) = self.life.first_unfinished() {
            // Every job must have run; one that never started waited on a job that never ended.
            return Err(SimError::Runaway {
                events: self.events.processed(),
                now: started_at,
                unfinished: self.unfinished_job(),
            });
        }
        let disk = self
            .disk
            .stats(self.device.name().to_string(), self.life.last_finish());
        Ok(SimOutcome {
            clone_jobs: self.life.clone_jobs(),
            clone_cgroups: self
                .processes
                .iter()
                .map(|p| self.cgroups.path(p.cgroup))
                .collect(),
            clones: self.stats,
            disk,
            sim_time_ns: self.life.last_finish(),
            events: self.events.processed(),
            tunables: self.elevator.tunables(),
            summary: self.elevator.summary(),
            fs: self.fs.as_ref().map(|fs| fs.outcome()),
            issued: self.life.take_issue_log(),
            layout: self.layout,
        })
    }

    fn start_ready_jobs(&mut self) {
        for (at, job) in self.life.release_ready(self.jobs, self.now) {
            self.events.push(at, Event::StartJob(job));
        }
    }

    fn start_job(&mut self, job: usize) {
        let clones = self.life.start_job(self.jobs, &self.layout, job, self.now);
        for &index in &clones {
            self.stats[index].set_sample_origin(self.life.stats_from(index));
            self.events.push(self.now, Event::Wake(index));
        }
        for index in clones {
            self.fs_job_started(index);
        }
    }

    /// Lets a process submit what its job wants now. Like a kernel submitter, it plugs its
    /// queue around the batch: `P` after the first request, `U` after the last.
    fn step_process(&mut self, index: usize, trace: &mut dyn Trace) {
        let mut submitted = 0;
        self.plug = Plug::Armed;
        self.step_process_inner(index, trace, &mut submitted);
        if let Plug::Plugged(last) = std::mem::replace(&mut self.plug, Plug::Off) {
            trace.request(self.now, RqEvent::Unplug, &last);
        }
        if submitted > 0 {
            self.stats[index].record_submit_batch(submitted);
        }
    }

    fn step_process_inner(&mut self, index: usize, trace: &mut dyn Trace, submitted: &mut u32) {
        loop {
            // Asleep in the block layer: it submits nothing until its request is allocated.
            if self.held[index].is_some() {
                return;
            }
            let now = self.now;
            match self.life.next_action(self.jobs, index, now) {
                Action::Submit { unit, woken, .. } => {
                    *submitted += 1;
                    for other in woken {
                        self.events.push(now, Event::Wake(other));
                    }
                    self.submit(index, unit, trace);
                }
                Action::Phase { read_back: true } => self.stats[index].set_verify_start(now),
                Action::Phase { read_back: false } => self.stats[index].set_write_start(now),
                Action::Sleep(at) => {
                    self.events.push(at, Event::Wake(index));
                    return;
                }
                Action::Wait => return,
                Action::Finish => {
                    self.finish_process(index);
                    return;
                }
            }
        }
    }

    fn finish_process(&mut self, index: usize) {
        let now = self.now;
        let finished = self.life.finish(self.jobs, index, now);
        self.stats[index].set_runtime(finished.stats_from, now);
        for &other in &finished.never_started {
            self.stats[other].set_runtime(now, now);
        }
        for &other in &finished.woken {
            self.events.push(now, Event::Wake(other));
        }
        if self.jobs[self.life.job_of(index)].exitall {
            // Stopped runners finish when their in-flight I/O drains; wake the idle ones.
            for other in self.life.running().collect::<Vec<_>>() {
                self.events.push(now, Event::Wake(other));
            }
        }
        self.fs_process_finished();
        self.start_ready_jobs();
    }

    fn submit(&mut self, index: usize, unit: IoUnit, trace: &mut dyn Trace) {
        if self.fs_takes(index, &unit) {
            return self.fs_submit(index, unit, trace);
        }
        let process = &self.processes[index];
        let (op, sync) = match unit.kind {
            IoKind::Read => (Op::Read, true),
            // O_DIRECT writes are REQ_SYNC; buffered writes would come from writeback.
            IoKind::Write => (Op::Write, process.direct && !process.replay_async),
            IoKind::Trim => (Op::Discard, false),
            IoKind::Fsync | IoKind::Fdatasync => (Op::Flush, true),
            // The parser refuses iosched_workload=dbench4 with direct=1, its only source.
            IoKind::Truncate => unreachable!("truncate outside the file system"),
        };
        let sector = process.file_sectors[unit.file] + unit.offset / SECTOR_SIZE;
        let request = Request {
            id: RequestId(self.next_request),
            sector: if op == Op::Flush { 0 } else { sector },
            nr_sectors: (unit.len / SECTOR_SIZE) as u32,
            op,
            flags: ReqFlags {
                sync,
                idle: sync && op == Op::Write,
                ..ReqFlags::default()
            },
            pid: process.pid,
            ioc: process.ioc,
            cgroup: process.cgroup,
            ioprio: process.ioprio,
        };
        self.next_request += 1;
        let depth = self.life.in_flight(index);
        self.stats[index].record_depth(depth);
        if op != Op::Flush {
            let merged = match self.elevator.try_back_merge(&request, self.now) {
                Some(target) => Some((target, RqEvent::BackMerge)),
                None => self
                    .elevator
                    .try_front_merge(&request, self.now)
                    .map(|target| (target, RqEvent::FrontMerge)),
            };
            if let Some((target, event)) = merged {
                // The bio joins a queued request: no request of its own, no insert.
                trace.request(self.now, RqEvent::Queue, &request);
                trace.request(self.now, event, &request);
                self.disk.merged(op.data_dir());
                self.in_flight
                    .get_mut(&target)
                    .expect("merged into a request the driver never saw")
                    .riders
                    .push(Rider {
                        process: index,
                        unit,
                        submitted_at: self.now,
                    });
                return;
            }
        }
        trace.request(self.now, RqEvent::Queue, &request);
        if !self.allocate(index, &request, trace) {
            self.held[index] = Some(Held {
                unit,
                request,
                submitted_at: self.now,
            });
            return;
        }
        self.start_request(index, unit, request, self.now, trace);
    }

    /// Takes a slot on `request`'s request list for process `index`, or puts the process to
    /// sleep on the list (`S`) and answers false. Kernel: __get_request(), with the
    /// scheduler's elv_may_queue() asked first.
    fn allocate(&mut self, index: usize, request: &Request, trace: &mut dyn Trace) -> bool {
        let may_queue = self.elevator.may_queue(request);
        let sync = request.is_sync();
        let alloc = self
            .pool
            .get(request.cgroup, sync, request.ioc, may_queue, self.now);
        if alloc == Alloc::Sleep {
            trace.request(self.now, RqEvent::SleepRq, request);
            self.pool.sleep(request.cgroup, sync, index as u64);
            return false;
        }
        true
    }

    /// A job request has its request-list slot: it exists from now on (`G`) and goes to the
    /// scheduler, or past it for a flush.
    fn start_request(
        &mut self,
        index: usize,
        unit: IoUnit,
        request: Request,
        submitted_at: Time,
        trace: &mut dyn Trace,
    ) {
        let op = request.op;
        self.in_flight.insert(
            request.id,
            InFlight {
                process: index,
                unit,
                request,
                submitted_at,
                issued_at: None,
                fs: None,
                riders: Vec::new(),
            },
        );
        self.disk.start(self.now);
        trace.request(self.now, RqEvent::GetRq, &request);
        match self.plug {
            Plug::Armed => {
                trace.request(self.now, RqEvent::Plug, &request);
                self.plug = Plug::Plugged(request);
            }
            Plug::Plugged(_) => self.plug = Plug::Plugged(request),
            Plug::Off => {}
        }
        if op == Op::Flush {
            self.bypass.push_back(request.id);
        } else {
            trace.request(self.now, RqEvent::Insert, &request);
            self.elevator.insert(request, self.now, trace);
        }
    }

    /// Offers free device slots to the scheduler until it has nothing for now.
    fn pump_dispatch(&mut self, trace: &mut dyn Trace) {
        let depth = self.device.queue_depth();
        // Bounded: each pass either hands over a request or stops.
        while self.device.in_flight() < depth {
            if let Some(id) = self.bypass.pop_front() {
                let request = self.in_flight[&id].request;
                self.issue(request, trace);
                continue;
            }
            match self.elevator.dispatch(self.now, trace) {
                Dispatch::Request(request) => self.issue(request, trace),
                Dispatch::IdleUntil(until) => {
                    assert!(until > self.now, "idle deadline not in the future");
                    if self.timer_at != Some(until) {
                        self.timer_generation += 1;
                        self.timer_at = Some(until);
                        self.events.push(
                            until,
                            Event::IdleTimer {
                                generation: self.timer_generation,
                            },
                        );
                    }
                    break;
                }
                Dispatch::Empty => break,
            }
        }
    }

    fn issue(&mut self, request: Request, trace: &mut dyn Trace) {
        let entry = self
            .in_flight
            .get_mut(&request.id)
            .expect("dispatched request was never submitted");
        assert!(entry.issued_at.is_none(), "request dispatched twice");
        entry.issued_at = Some(self.now);
        // The scheduler's copy may have grown by merges (a front merge moves its start).
        assert!(
            request.sector <= entry.request.sector
                && entry.request.end_sector() <= request.end_sector(),
            "merges only grow a request"
        );
        entry.request = request;
        trace.request(self.now, RqEvent::Issue, &request);
        self.device.submit(
            self.now,
            Command {
                id: request.id,
                op: request.op,
                sector: request.sector,
                nr_sectors: request.nr_sectors,
                fua: request.flags.fua,
            },
            self.device_rng.pcg(),
        );
    }

    fn arm_device_event(&mut self) {
        let next = self.device.next_event();
        if next != self.device_event_at {
            self.device_generation += 1;
            self.device_event_at = next;
            if let Some(time) = next {
                self.events.push(
                    time.max(self.now),
                    Event::Device {
                        generation: self.device_generation,
                    },
                );
            }
        }
    }

    fn device_completions(&mut self, trace: &mut dyn Trace) {
        let mut completed = std::mem::take(&mut self.completed_scratch);
        completed.clear();
        let mut woken = Vec::new();
        self.device
            .advance(self.now, self.device_rng.pcg(), &mut completed);
        for &id in &completed {
            let entry = self
                .in_flight
                .remove(&id)
                .expect("device completed a request twice or one never issued");
            let request = entry.request;
            trace.request(self.now, RqEvent::Complete, &request);
            if request.op != Op::Flush {
                self.elevator.completed(&request, self.now, trace);
            }
            self.disk.done(self.now);
            for rider in &entry.riders {
                self.complete_job_io(rider.process, &rider.unit, rider.submitted_at);
            }
            if let Some(tag) = entry.fs {
                assert!(entry.issued_at.is_some(), "completed before issue");
                self.fs_completed(tag, &entry, trace);
                continue;
            }
            if let Some(sleeper) = self.pool.put(request.cgroup, request.is_sync()) {
                woken.push(sleeper as usize);
            }
            assert!(entry.issued_at.is_some(), "completed before issue");
            if entry.unit.kind.ddir().is_some() {
                self.disk.data_completed(
                    request.op.data_dir(),
                    request.nr_sectors,
                    entry.submitted_at,
                    self.now,
                );
            }
            self.complete_job_io(entry.process, &entry.unit, entry.submitted_at);
        }
        self.completed_scratch = completed;
        for index in woken {
            self.retry_held(index, trace);
        }
    }

    /// A process asleep on a request list was woken by a freed request: it retries as a
    /// batcher; allocated, its I/O goes on and so does the process, else it sleeps again.
    /// Kernel: get_request() after io_schedule().
    fn retry_held(&mut self, index: usize, trace: &mut dyn Trace) {
        let held = self.held[index].expect("woke a process that was not asleep");
        let request = held.request;
        self.pool.woke(request.ioc, self.now);
        if !self.allocate(index, &request, trace) {
            return;
        }
        self.held[index] = None;
        self.start_request(index, held.unit, request, held.submitted_at, trace);
        self.events.push(self.now, Event::Wake(index));
    }

    /// A job I/O completed. The simulator moves no data: written blocks carry no tag.
    fn job_io_done(&mut self, process: usize, unit: &IoUnit) {
        // A steady-state criterion met stops the clones it watches; they drain and finish.
        for other in self
            .life
            .complete(self.jobs, process, self.now, unit, Some(0))
        {
            self.events.push(self.now, Event::Wake(other));
        }
    }

    /// One job I/O is done: its statistics, its job's state machine, a wake-up.
    fn complete_job_io(&mut self, process: usize, unit: &IoUnit, submitted_at: Time) {
        match unit.kind.ddir() {
            Some(ddir) => {
                if self.life.counts_at(process, self.now) {
                    self.stats[process].record_io(
                        ddir,
                        unit.len,
                        submitted_at,
                        submitted_at,
                        self.now,
                    );
                }
            }
            None => self.stats[process].record_sync(self.now - submitted_at),
        }
        self.job_io_done(process, unit);
        self.stats[process].record_complete_batch(1);
        self.events.push(self.now, Event::Wake(process));
    }
}
