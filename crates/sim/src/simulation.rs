//! The simulator's main loop: jobs as simulated processes, one scheduler, one device, one
//! virtual clock.
//!
//! Every event runs to completion at its instant: a process submits what its job wants, the
//! device reports completions, the scheduler's idle deadline fires. After each event the
//! device's free slots are offered to the scheduler (the kernel's dispatch loop) until it
//! answers "nothing now" or "idle until t".
//!
//! The block layer between the processes and the device (merges, request lists, plugging,
//! dispatch, completions) is [`iosched_driver::Driver`]; this file is the simulator's
//! [`Backend`]: a device model, a virtual clock and its event queue, and the simulated file
//! system (`crate::fs`). Choice: the file system's own requests (buffered reads, writeback,
//! journal) keep the writeback module's accounting (the flusher's congestion and request
//! waits use the same `nr_requests` and thresholds) and do not draw on the jobs' request
//! lists.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use iosched_core::{
    configured_elevator, CgroupId, DeviceInfo, ElevatorError, Request, RequestId, Time, Trace,
    TunableError, DEFAULT_UPTIME_NS, SECTOR_SIZE,
};
use iosched_driver::{Backend, Driver, InFlight, Outcome, RunProgress, UnitDone};
use iosched_workload::generator::IoUnit;
use iosched_workload::job::IoEngine;
use iosched_workload::rng::Rng;
use iosched_workload::JobSpec;

use crate::cpu::{CpuUse, Cpus};
use crate::device::{Command, Device};
use crate::event::{Event, EventQueue};
use crate::fs::FsTag;
use crate::layout::{lay_out, Layout, LayoutError};

/// 1,024 events: how often the loop reads the stop flag. At a few million events a second
/// that is well under a millisecond of simulation after a signal.
pub const STOP_POLL_EVENTS: u64 = 1024;

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
    /// How long the machine has been up when the run starts: the scheduler, created at boot,
    /// sees `uptime_ns + now` (see [`iosched_core::Uptime`]). 0 starts the run at boot.
    pub uptime_ns: Time,
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
            uptime_ns: DEFAULT_UPTIME_NS,
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

/// What a finished simulation hands back: the driver's [`Outcome`] (its fields read through
/// `Deref`) and what only a simulation knows.
#[derive(Debug)]
pub struct SimOutcome {
    pub run: Outcome,
    /// Virtual time at which the last job finished (`run.end_ns`).
    pub sim_time_ns: Time,
    pub events: u64,
    /// Page cache, writeback and journal results, when a job was buffered.
    pub fs: Option<crate::fs::FsOutcome>,
    /// What the simulated CPUs did, when the CPU model was on.
    pub cpu: Option<CpuOutcome>,
    /// A signal stopped the jobs early: the results are partial.
    pub interrupted: bool,
}

impl std::ops::Deref for SimOutcome {
    type Target = Outcome;

    fn deref(&self) -> &Outcome {
        &self.run
    }
}

/// The CPU model's side of an outcome (each clone's use is in its fio `usr_cpu`/`sys_cpu`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuOutcome {
    pub era: &'static str,
    pub ncpus: usize,
    /// Per job clone.
    pub per_process: Vec<CpuUse>,
    /// Kernel threads (writeback flushers).
    pub kernel: CpuUse,
    /// Time threads spent waiting for a CPU.
    pub waited_ns: Time,
}

/// What the simulator keeps with a request: for the file system's own requests, where
/// their tag waits in [`crate::fs::FsState::tags`] (a slot, not the 48-byte tag: the
/// driver's in-flight entry stays two cache lines, issue 34).
pub(crate) type SimIo = Option<u32>;

// The driver's in-flight entry as the simulator keeps it: two cache lines.
const _: () = assert!(std::mem::size_of::<InFlight<SimIo>>() == 128);

/// The driver as the simulator runs it.
pub(crate) type SimDriver<'a> = Driver<'a, SimIo>;

/// The simulator's side of a run: device model, event queue, file system.
pub(crate) struct SimBackend {
    pub(crate) config: SimConfig,
    pub(crate) device: Box<dyn Device>,
    /// `device.queue_depth()`, a device parameter, read once (the pump asks it each time).
    queue_depth: u32,
    /// `device.in_flight()`, counted here (a submit adds one, each completion `advance`
    /// reports takes one: the trait's meaning): the pump asks it twice a request, and the
    /// device is behind a virtual call (issue 34).
    in_device: u32,
    pub(crate) events: EventQueue,
    device_generation: u64,
    device_event_at: Option<Time>,
    /// The device was submitted to or advanced since its next event was last asked for:
    /// only then can the answer differ (`Device::next_event` reads the device alone).
    device_changed: bool,
    timer_generation: u64,
    device_rng: Rng,
    completed_scratch: Vec<RequestId>,
    /// The simulated file system, when a job is buffered.
    pub(crate) fs: Option<Box<crate::fs::FsState>>,
    /// The machine's CPUs, when a `cpu_era` is set (see `crate::cpu`).
    pub(crate) cpu: Option<Box<Cpus>>,
    /// The jobs were stopped by a signal.
    interrupted: bool,
}

/// One run: build with [`Simulation::new`], then [`Simulation::run`].
pub struct Simulation<'a> {
    drv: SimDriver<'a>,
    back: SimBackend,
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
        let elevator =
            configured_elevator(&config.scheduler, info, config.uptime_ns, &config.tunables)
                .map_err(|error| match error {
                    ElevatorError::Unknown(unknown) => {
                        SimError::UnknownScheduler(unknown.to_string())
                    }
                    ElevatorError::Tunable(error) => SimError::Tunable(error),
                })?;
        let layout = lay_out(
            jobs,
            Some(device.capacity_sectors() * SECTOR_SIZE),
            config.seed,
        )
        .map_err(SimError::Layout)?;
        let drv = Driver::new(jobs, layout, elevator, config.seed, 128).map_err(|e| {
            SimError::WaitFor {
                job: e.job,
                target: e.target,
            }
        })?;
        // Knobs are checked even when no job is buffered, so a typo fails either way.
        let fs_config =
            crate::fs::FsConfig::from_knobs(&config.fs_knobs).map_err(SimError::FsKnob)?;
        let drv = drv.with_nr_requests(fs_config.writeback.nr_requests);
        let cpu = fs_config.cpu_era.map(|era| {
            Box::new(Cpus::new(
                era,
                fs_config.writeback.cpus,
                drv.processes.len(),
            ))
        });
        let fs = jobs.iter().any(|job| !job.direct).then(|| {
            Box::new(crate::fs::FsState::new(
                fs_config,
                jobs,
                &drv.layout,
                device.capacity_sectors(),
                drv.processes.len(),
            ))
        });
        Ok(Simulation {
            back: SimBackend {
                fs,
                cpu,
                device_rng: Rng::for_stream(config.seed, u64::MAX - 1),
                config,
                queue_depth: device.queue_depth(),
                in_device: device.in_flight(),
                device,
                events: EventQueue::new(),
                device_generation: 0,
                device_event_at: None,
                device_changed: false,
                timer_generation: 0,
                completed_scratch: Vec::new(),
                interrupted: false,
            },
            drv,
        })
    }

    /// Where every clone's files lie on the device.
    pub fn layout(&self) -> &Layout {
        &self.drv.layout
    }

    /// Each simulated process's pid and command name (its job's name), for trace labels.
    pub fn process_names(&self) -> Vec<(u32, String)> {
        self.drv.process_names()
    }

    /// Every cgroup with its path (`/`, `/a/b`), for trace labels.
    pub fn cgroup_paths(&self) -> Vec<(CgroupId, String)> {
        self.drv.cgroup_paths()
    }

    /// Runs to the end. `progress` is called now and then with the virtual time and the
    /// I/Os done.
    pub fn run(
        self,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(RunProgress),
    ) -> Result<SimOutcome, SimError> {
        self.run_until_stopped(trace, progress, &AtomicBool::new(false))
    }

    /// [`Simulation::run`], stopping every job within [`STOP_POLL_EVENTS`] events after
    /// `stop` is set (a signal): what is in flight completes, and the outcome says it was
    /// interrupted.
    pub fn run_until_stopped(
        mut self,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(RunProgress),
        stop: &AtomicBool,
    ) -> Result<SimOutcome, SimError> {
        let (drv, back) = (&mut self.drv, &mut self.back);
        drv.trace_requests_to(trace);
        drv.start_ready_jobs(back);
        while let Some((time, event)) = back.events.pop() {
            assert!(time >= drv.now, "virtual time ran backwards");
            drv.now = time;
            // Polled every STOP_POLL_EVENTS events: a signal stops the jobs microseconds
            // later, and the loop pays for one load per batch, not per event.
            let poll = back.events.processed().is_multiple_of(STOP_POLL_EVENTS);
            if poll && !back.interrupted && stop.load(Ordering::Relaxed) {
                back.interrupted = true;
                for process in drv.stop_all(time) {
                    back.wake(process, time);
                }
            }
            back.fs_sample(drv);
            let processed = back.events.processed();
            if processed > back.config.events_max || time > back.config.time_max_ns {
                return Err(SimError::Runaway {
                    events: processed,
                    now: time,
                    unfinished: drv.unfinished_job(),
                });
            }
            back.event(drv, event, trace);
            drv.pump_dispatch(back, trace);
            back.arm_device_event(drv.now);
            if back.config.check {
                drv.elevator.check_invariants();
            }
            if back.events.processed().is_multiple_of(65_536) {
                progress(drv.progress(drv.now));
            }
        }
        self.finish()
    }

    fn finish(self) -> Result<SimOutcome, SimError> {
        let Simulation { drv, back } = self;
        if let Some((_, started_at)) = drv.life.first_unfinished() {
            // Every job must have run; one that never started waited on a job that never ended.
            return Err(SimError::Runaway {
                events: back.events.processed(),
                now: started_at,
                unfinished: drv.unfinished_job(),
            });
        }
        if let Some(fs) = back
            .fs
            .as_ref()
            .filter(|_| back.config.check || cfg!(debug_assertions))
        {
            // An O(pages) walk (4 % of a buffered run's instructions): with --check, and in
            // every debug build the tests run.
            fs.check_invariants();
        }
        let fs = back.fs.as_ref().map(|fs| fs.outcome());
        let mut outcome = drv.finish(back.device.name().to_string());
        let cpu = back.cpu.as_ref().map(|cpus| {
            report_cpu_use(&mut outcome, cpus);
            CpuOutcome {
                era: cpus.era.name,
                ncpus: cpus.ncpus(),
                per_process: cpus.per_process.clone(),
                kernel: cpus.kernel,
                waited_ns: cpus.waited_ns(),
            }
        });
        Ok(SimOutcome {
            cpu,
            interrupted: back.interrupted,
            sim_time_ns: outcome.end_ns,
            run: outcome,
            events: back.events.processed(),
            fs,
        })
    }
}

/// Each clone's CPU use as fio reports it: percent of the clone's runtime (fio 3.33
/// `stat.c`: `usr_time * 100 / total_run_time`, both from the thread's rusage and clock), and
/// its context switches.
fn report_cpu_use(outcome: &mut Outcome, cpus: &Cpus) {
    for (stats, used) in outcome.clones.iter_mut().zip(&cpus.per_process) {
        let runtime = stats.end_ns.saturating_sub(stats.start_ns);
        if runtime > 0 {
            stats.usr_cpu = used.usr_ns as f64 * 100.0 / runtime as f64;
            stats.sys_cpu = used.sys_ns as f64 * 100.0 / runtime as f64;
        }
        stats.ctx = used.ctx;
    }
}

impl SimBackend {
    /// A process woke: with the CPU model on it first needs a CPU for its system call (fio's
    /// own user time per I/O, the call's fixed kernel cost; the `mmap` engine makes no call),
    /// and runs when it is done. A process already waiting for its CPU is not charged twice.
    fn wake_event(&mut self, drv: &mut SimDriver<'_>, process: usize, trace: &mut dyn Trace) {
        let Some(cpus) = self.cpu.as_mut() else {
            return drv.wake_process(self, process, trace);
        };
        if cpus.booked[process] {
            return;
        }
        let mmap = drv.jobs[drv.life.job_of(process)].ioengine == IoEngine::Mmap;
        let sys = if mmap { 0 } else { cpus.era.syscall_ns };
        let usr = cpus.era.usr_per_io_ns;
        let then = (Event::Run(process), 0);
        match cpus.run_process(process, drv.now, (usr, sys), then, &mut self.events) {
            Some(at) if at == drv.now => drv.wake_process(self, process, trace),
            Some(at) => {
                cpus.booked[process] = true;
                self.events.push(at, Event::Run(process));
            }
            // Waiting for a CPU: the run queue pushes `Event::Run` when it is done.
            None => cpus.booked[process] = true,
        }
    }

    /// One event of the queue.
    fn event(&mut self, drv: &mut SimDriver<'_>, event: Event, trace: &mut dyn Trace) {
        match event {
            Event::StartJob(job) => drv.start_job(self, job),
            Event::Wake(process) => self.wake_event(drv, process, trace),
            Event::Run(process) => {
                if let Some(cpus) = self.cpu.as_mut() {
                    cpus.booked[process] = false;
                }
                drv.wake_process(self, process, trace);
            }
            Event::CpuCheck => {
                if let Some(cpus) = self.cpu.as_mut() {
                    cpus.check(drv.now, &mut self.events);
                }
            }
            Event::Device { generation } => {
                if generation == self.device_generation {
                    self.device_event_at = None;
                    self.device_completions(drv, trace);
                }
            }
            Event::IdleTimer { generation } => {
                if generation == self.timer_generation {
                    drv.fire_idle_timer(self, trace);
                }
            }
            Event::Fs(event) => self.fs_event(drv, event, trace),
        }
    }

    fn arm_device_event(&mut self, now: Time) {
        // Most events leave the device alone: its next event is the one already armed.
        if !self.device_changed {
            return;
        }
        self.device_changed = false;
        let next = self.device.next_event();
        if next != self.device_event_at {
            self.device_generation += 1;
            self.device_event_at = next;
            if let Some(time) = next {
                self.events.push_armed(
                    time.max(now),
                    Event::Device {
                        generation: self.device_generation,
                    },
                );
            }
        }
    }

    #[inline(never)]
    fn fs_own_completion(
        &mut self,
        drv: &mut SimDriver<'_>,
        tag: FsTag,
        entry: &InFlight<SimIo>,
        trace: &mut dyn Trace,
    ) {
        self.fs_completed(drv, tag, entry, trace);
    }

    fn device_completions(&mut self, drv: &mut SimDriver<'_>, trace: &mut dyn Trace) {
        self.completed_scratch.clear();
        self.device_changed = true;
        self.device
            .advance(drv.now, self.device_rng.pcg(), &mut self.completed_scratch);
        self.in_device -= self.completed_scratch.len() as u32;
        debug_assert_eq!(self.in_device, self.device.in_flight());
        // Read in place, by index: only this event fills the scratch list (taking it out and
        // back cost some 20 instructions a request, issue 34).
        let mut next = 0;
        while let Some(&id) = self.completed_scratch.get(next) {
            drv.complete(self, id, (), trace);
            next += 1;
        }
        drv.retry_sleepers(self, trace);
    }
}

impl Backend for SimBackend {
    type Io = SimIo;
    type Result = ();

    fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    fn in_device(&self) -> u32 {
        debug_assert_eq!(self.in_device, self.device.in_flight());
        self.in_device
    }

    fn issue(&mut self, drv: &mut SimDriver<'_>, request: &Request, _trace: &mut dyn Trace) {
        self.in_device += 1;
        // An unmoved next event is the one armed (or the device changed earlier this event).
        self.device_changed |= self.device.submit_moves_next(
            drv.now,
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

    fn wake(&mut self, process: usize, at: Time) {
        self.events.push(at, Event::Wake(process));
    }

    fn start_job_at(&mut self, job: usize, at: Time) {
        self.events.push(at, Event::StartJob(job));
    }

    fn arm_idle_timer(&mut self, at: Time) {
        self.timer_generation += 1;
        self.events.push(
            at,
            Event::IdleTimer {
                generation: self.timer_generation,
            },
        );
    }

    fn job_io(&mut self, _verify_tag: Option<u64>) -> SimIo {
        None
    }

    #[inline]
    fn admit(
        &mut self,
        drv: &mut SimDriver<'_>,
        process: usize,
        unit: &IoUnit,
        trace: &mut dyn Trace,
    ) -> bool {
        if !self.fs_takes(drv, process, unit) {
            return false;
        }
        self.fs_submit(drv, process, *unit, trace);
        true
    }

    fn clone_started(&mut self, drv: &mut SimDriver<'_>, process: usize) {
        self.fs_job_started(drv, process);
    }

    fn process_finished(&mut self, drv: &mut SimDriver<'_>) {
        self.fs_process_finished(drv);
    }

    /// The simulator moves no data: every I/O succeeds and written blocks carry no tag.
    fn unit_results(
        &mut self,
        _drv: &mut SimDriver<'_>,
        entry: &InFlight<SimIo>,
        _result: (),
        out: &mut Vec<UnitDone>,
    ) {
        out.extend(std::iter::repeat_n(UnitDone::ok(0), entry.riders.len() + 1));
    }

    #[inline]
    fn unit_result(
        &mut self,
        _drv: &mut SimDriver<'_>,
        _entry: &InFlight<SimIo>,
        _result: (),
    ) -> Option<UnitDone> {
        Some(UnitDone::ok(0))
    }

    /// Inline: a job's request (no tag) answers at once; the file system's own requests go
    /// out of line.
    #[inline]
    fn own_completion(
        &mut self,
        drv: &mut SimDriver<'_>,
        entry: &InFlight<SimIo>,
        trace: &mut dyn Trace,
    ) -> bool {
        let Some(slot) = entry.io else {
            return false;
        };
        let tag = self.fs.as_mut().expect("file system").tags.take(slot);
        self.fs_own_completion(drv, tag, entry, trace);
        true
    }
}
