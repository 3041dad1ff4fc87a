//! The engine's event loop: the jobs' clones as tasks of one io_uring loop in one thread, one
//! scheduler, one target, the real clock.
//!
//! Each turn of the loop mirrors one simulator event: due wake-ups run (job starts, think
//! time and rate-limit sleeps, the scheduler's idle deadline), processes submit what their job
//! wants into the scheduler, free device slots (at most `queue_depth` requests in the device,
//! from `nr_requests`) are offered to the scheduler, and what it hands over becomes one
//! submission queue entry each. Then a single `io_uring_enter` submits the batch and waits for
//! the first completion or the next deadline, whichever comes first (the idle timer is that
//! wait's timeout). Completions are fed to the scheduler and the jobs with `now` read from
//! CLOCK_MONOTONIC, in nanoseconds since the run started.
//!
//! Every data request is checked against its clone's region before it is submitted, so no
//! byte outside a job's `offset`/`size` range is ever touched.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use io_uring::{opcode, types, IoUring};
use iosched_core::{
    new_elevator, CgroupId, DeviceInfo, Dispatch, Elevator, IoContextId, IoPrio, Op, ReqFlags,
    Request, RequestId, ServiceSummary, Time, TunableValue, SECTOR_SIZE,
};
use iosched_core::{RqEvent, Trace};
use iosched_report::disk::DiskAccounting;
use iosched_report::stats::{DiskStats, JobStats, DDIR_READ};
use iosched_workload::generator::{FileRegion, IoKind, IoUnit};
use iosched_workload::lifecycle::{Action, Lifecycle};
use iosched_workload::{JobSpec, RwMode, WriteData};

use crate::affinity;
use crate::buffer::{self, BufferPool};
use crate::error::EngineError;
use crate::safety;
use crate::target::{self, Target, TargetKind};
use crate::verify::{self, VerifyMethod};
use iosched_workload::cgroups::Cgroups;
use iosched_workload::layout::{lay_out_on, Layout};
use iosched_workload::pattern::Pattern;
use iosched_workload::processes::{identities, ProcessIdentity};

/// Index of the target in the ring's registered file table.
const TARGET_FILE: types::Fixed = types::Fixed(0);

/// How a run is set up besides its jobs and target.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub scheduler: String,
    /// `--set KEY=VALUE` tunables, applied in order.
    pub tunables: Vec<(String, String)>,
    /// Seed of the jobs' random streams (offsets, block sizes), as in the simulator.
    pub seed: u64,
    /// Skip the safety checks of block devices.
    pub force: bool,
    /// Run the scheduler's `check_invariants()` after every loop turn.
    pub check: bool,
    /// Overrides the in-device cap (`nr_requests`, or 32 for files).
    pub queue_depth: Option<u32>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            scheduler: "noop".to_string(),
            tunables: Vec::new(),
            seed: 1,
            force: false,
            check: false,
            queue_depth: None,
        }
    }
}

/// A block that did not read back as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyFailure {
    pub job: String,
    /// Byte offset on the target.
    pub offset: u64,
    pub len: u64,
    pub message: String,
}

/// What a finished (or interrupted) run hands back.
#[derive(Debug)]
pub struct EngineOutcome {
    /// One entry per job clone, in job order.
    pub clones: Vec<JobStats>,
    /// Each clone's job index.
    pub clone_jobs: Vec<usize>,
    /// Each clone's cgroup path.
    pub clone_cgroups: Vec<String>,
    pub disk: DiskStats,
    /// Time from the start to the last job's end.
    pub elapsed_ns: Time,
    pub tunables: Vec<TunableValue>,
    pub summary: Vec<ServiceSummary>,
    /// What the clones of jobs with `write_iolog` issued (fio's iolog).
    pub issued: iosched_workload::issue_log::IssueLog,
    pub layout: Layout,
    pub verify_failures: Vec<VerifyFailure>,
    /// I/O errors and short transfers, one line each (`job 'x': read at 4096: EIO`).
    pub io_errors: Vec<String>,
    /// SIGINT stopped the run early.
    pub interrupted: bool,
    /// Requests that went through the scheduler.
    pub requests: u64,
    /// Wall time spent inside the scheduler's calls (insert, dispatch, completed, timer),
    /// including the clock reads around each call.
    pub scheduler_ns: u64,
    /// Scheduler calls timed.
    pub scheduler_calls: u64,
    /// Cost of the pair of clock reads around one call, measured at start: subtract
    /// `scheduler_calls * clock_overhead_ns` for the scheduler's own time.
    pub clock_overhead_ns: f64,
    /// User and system CPU time of the whole process during the run.
    pub usr_cpu_ns: u64,
    pub sys_cpu_ns: u64,
    /// Whether the ring used registered (fixed) buffers.
    pub fixed_buffers: bool,
    pub queue_depth: u32,
}

/// A job clone as a task of the loop.
struct Process {
    pid: u32,
    ioc: IoContextId,
    cgroup: CgroupId,
    ioprio: IoPrio,
    /// Target byte offset of each of the clone's files.
    file_starts: Vec<u64>,
    /// Each file's size: strided zones may lead I/O past the region, never past the file.
    file_bytes: Vec<u64>,
    regions: Vec<FileRegion>,
    verify: Option<VerifyMethod>,
    /// Reads are checked as they complete (a read-only job with `verify=`).
    check_reads: bool,
}

/// A request from submission to completion.
#[derive(Clone, Copy)]
struct InFlight {
    process: usize,
    unit: IoUnit,
    request: Request,
    submitted_at: Time,
    issued: bool,
    /// Buffer slot while in the device.
    slot: Option<usize>,
    /// A read of the verify pass (not the runner's), with the data seed its block should
    /// carry.
    verify_read: Option<u64>,
    /// A verified write: the data seed its block carries.
    seed: u64,
}

/// Something due at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wake {
    StartJob(usize),
    Process(usize),
}

/// Mean cost of one `Instant::now()` plus `elapsed()`, the timing wrapped around each
/// scheduler call.
fn clock_overhead_ns() -> f64 {
    const ROUNDS: u32 = 10_000;
    let outer = Instant::now();
    let mut sink = 0u128;
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        sink = sink.wrapping_add(t0.elapsed().as_nanos());
    }
    std::hint::black_box(sink);
    outer.elapsed().as_nanos() as f64 / f64::from(ROUNDS)
}

fn cpu_times() -> (u64, u64) {
    // SAFETY: `rusage` is plain data; getrusage fills it and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    (ns(usage.ru_utime), ns(usage.ru_stime))
}

/// One run: [`Engine::new`] checks and opens everything, [`Engine::run`] performs it.
pub struct Engine<'a> {
    // Field order matters for drop: the ring goes before the buffers it references.
    ring: IoUring,
    buffers: BufferPool,
    fixed_buffers: bool,
    jobs: &'a [JobSpec],
    config: EngineConfig,
    target: Target,
    _file: File,
    elevator: Box<dyn Elevator>,
    cgroups: Cgroups,
    layout: Layout,
    processes: Vec<Process>,
    life: Lifecycle,
    stats: Vec<JobStats>,
    wakes: BTreeMap<(Time, u64), Wake>,
    wake_seq: u64,
    in_flight: BTreeMap<RequestId, InFlight>,
    bypass: VecDeque<RequestId>,
    next_request: u64,
    in_device: u32,
    queue_depth: u32,
    timer_at: Option<Time>,
    disk: DiskAccounting,
    start: Instant,
    verify_failures: Vec<VerifyFailure>,
    io_errors: Vec<String>,
    scheduler_ns: u64,
    scheduler_calls: u64,
    requests: u64,
    write_seq: u64,
    stopping: bool,
    warnings: Vec<String>,
    /// `cpus_allowed` of the jobs together: the run's thread is pinned to these.
    cpus: Option<Vec<u32>>,
    /// Each job's `verify_pattern`: the whole block with `verify=pattern`, else the data after
    /// the checksum header.
    patterns: Vec<Option<Pattern>>,
    woken: Vec<usize>,
}

impl Drop for Engine<'_> {
    fn drop(&mut self) {
        // The ring's own teardown runs later in a kernel worker, and the registered file would
        // keep the device's exclusive claim until then: a second run right after this one would
        // find it busy. Unregistering releases both now.
        let submitter = self.ring.submitter();
        let _ = submitter.unregister_files();
        if self.fixed_buffers {
            let _ = submitter.unregister_buffers();
        }
    }
}

impl<'a> Engine<'a> {
    /// Checks the jobs and the target, opens it, lays the jobs out and builds the scheduler.
    /// Nothing is written before [`Engine::run`].
    pub fn new(
        jobs: &'a [JobSpec],
        path: &str,
        config: EngineConfig,
    ) -> Result<Engine<'a>, EngineError> {
        let mut methods = Vec::with_capacity(jobs.len());
        let mut patterns = Vec::with_capacity(jobs.len());
        for spec in jobs {
            if !spec.direct {
                return Err(EngineError::Unsupported {
                    job: spec.name.clone(),
                    message: "buffered I/O (direct=0) is not supported by the engine: it has no page cache yet; add direct=1".to_string(),
                });
            }
            let method = match &spec.verify {
                Some(name) => {
                    VerifyMethod::parse(name).map_err(|message| EngineError::Unsupported {
                        job: spec.name.clone(),
                        message,
                    })?
                }
                None => None,
            };
            if method == Some(VerifyMethod::Pattern) && spec.verify_pattern.is_none() {
                return Err(EngineError::Unsupported {
                    job: spec.name.clone(),
                    message: "verify=pattern needs verify_pattern=".to_string(),
                });
            }
            // With a checksum method the pattern fills the data after the header.
            patterns.push(spec.verify_pattern.clone());
            if method.is_some_and(|method| method != VerifyMethod::Pattern) {
                let min = spec.bs.iter().map(|bs| bs.min()).min().unwrap_or(4096);
                if min < verify::HEADER_BYTES as u64 {
                    return Err(EngineError::Unsupported {
                        job: spec.name.clone(),
                        message: format!(
                            "verify needs blocks of at least {} bytes",
                            verify::HEADER_BYTES
                        ),
                    });
                }
            }
            methods.push(method);
        }
        let (cpus, cpus_warning) = affinity::engine_cpus(jobs)?;
        let target = target::probe(path)?;
        let mut warnings: Vec<String> = cpus_warning.into_iter().collect();
        // Reading harms nothing: only runs that write, trim or grow the file are checked.
        // verify_only jobs read where they would have written.
        let writes = jobs
            .iter()
            .any(|spec| !spec.verify_only && !matches!(spec.rw, RwMode::Read | RwMode::RandRead));
        if target.kind == TargetKind::BlockDevice {
            if let Some(kernel) = target.kernel_scheduler.as_deref().filter(|s| *s != "none") {
                warnings.push(format!(
                    "{path}: the kernel's own scheduler is '{kernel}', which reorders after ours; set it to none: echo none > /sys/block/{}/queue/scheduler",
                    target.disk.as_deref().unwrap_or("?")
                ));
            }
        }
        // A job file naming the target file itself (fio's `filename=` of the file the
        // engine runs on) means all of it, from byte 0, at its present size.
        let names_target = |name: &str| {
            target.kind == TargetKind::RegularFile
                && target.capacity_bytes.is_some()
                && same_file(name, path)
        };
        let names_it = jobs
            .iter()
            .any(|spec| spec.filenames.iter().any(|name| names_target(name)));
        let capacity = match target.kind {
            TargetKind::BlockDevice => target.capacity_bytes,
            TargetKind::RegularFile if names_it => target.capacity_bytes,
            // Files grow to fit; only `/dev/` names need their present size.
            TargetKind::RegularFile => None,
        };
        let mut layout = lay_out_on(jobs, capacity, config.seed, &names_target)?;
        if target.kind == TargetKind::RegularFile {
            let size = target.capacity_bytes.unwrap_or(0).max(layout.end_bytes);
            for file in layout
                .files
                .iter_mut()
                .filter(|f| f.name.starts_with("/dev/"))
            {
                file.bytes = size;
            }
        }
        // A missing or short file must be created or grown even for a reading job, and laid
        // out with data when any job reads (fio's "Laying out IO file").
        let grows = target.kind == TargetKind::RegularFile
            && target
                .capacity_bytes
                .is_none_or(|size| size < layout.end_bytes);
        let reads = jobs.iter().any(|spec| {
            !matches!(spec.rw, RwMode::Write | RwMode::RandWrite) || spec.verify.is_some()
        });
        if grows {
            if let Some(spec) = jobs.iter().find(|spec| spec.verify_only) {
                return Err(EngineError::Unsupported {
                    job: spec.name.clone(),
                    message: format!(
                        "verify_only: {path} ends before the jobs' blocks ({} bytes): nothing was written there to check",
                        layout.end_bytes
                    ),
                });
            }
        }
        // Growing a file writes to it too (layout data or allocation): the same checks as a
        // writing job, so a reading job never appends to a disk image or a loop's backing file.
        if (writes || grows) && !config.force {
            safety::check_writable(&target, writes, layout.end_bytes)?;
        }
        if grows && reads {
            warnings.push(format!(
                "{path}: laying out {} bytes with data for the reading jobs",
                layout.end_bytes - target.capacity_bytes.unwrap_or(0)
            ));
        }
        let file = target.open(layout.end_bytes, writes || grows, grows && reads)?;

        let queue_depth = config.queue_depth.unwrap_or(target.queue_depth).max(1);
        let info = DeviceInfo {
            rotational: target.rotational,
            queue_depth,
        };
        let mut elevator = new_elevator(&config.scheduler, info)
            .map_err(|error| EngineError::UnknownScheduler(error.to_string()))?;
        for (name, value) in &config.tunables {
            elevator
                .set_tunable(name, value)
                .map_err(|error| EngineError::Tunable(error.to_string()))?;
        }

        let entries = queue_depth.next_power_of_two().clamp(8, 4096);
        let ring = IoUring::new(entries)
            .map_err(|error| EngineError::io(path, "cannot set up io_uring", error))?;
        ring.submitter()
            .register_files(&[file.as_raw_fd()])
            .map_err(|error| {
                EngineError::io(path, "cannot register the file with io_uring", error)
            })?;
        let max_bs = jobs
            .iter()
            .flat_map(|spec| spec.bs.iter().map(|bs| bs.max()))
            .max()
            .unwrap_or(4096);
        // The jobs can never have more I/O in flight than the sum of their clones' depths:
        // no more buffers than that, however deep the device (nr_requests x bs adds up).
        let total_depth: u64 = layout
            .clones
            .iter()
            .map(|plan| u64::from(jobs[plan.job].effective_depth()))
            .sum();
        let slots = total_depth.clamp(1, u64::from(queue_depth)) as usize;
        let buffers = BufferPool::new(slots, max_bs as usize);
        let iovecs = buffers.iovecs();
        // SAFETY: the iovecs describe the pool's slots, which live as long as `buffers`;
        // `buffers` is a field of the engine declared after `ring`, so the ring (and with it the
        // registration) is dropped first.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();

        let (identities, cgroups) = identities(jobs, &layout);
        let mut processes = Vec::new();
        let mut stats = Vec::new();
        for (plan, identity) in layout.clones.iter().zip(&identities) {
            let spec = &jobs[plan.job];
            let ProcessIdentity {
                pid,
                ioc,
                cgroup,
                ioprio,
                ..
            } = *identity;
            let method = methods[plan.job];
            let read_only = matches!(spec.rw, RwMode::Read | RwMode::RandRead) || spec.verify_only;
            processes.push(Process {
                pid,
                ioc,
                cgroup,
                ioprio,
                file_starts: plan.files.iter().map(|&f| layout.files[f].start).collect(),
                file_bytes: plan.files.iter().map(|&f| layout.files[f].bytes).collect(),
                regions: plan.regions.clone(),
                verify: method,
                check_reads: method.is_some() && read_only,
            });
            stats.push(JobStats::for_job(spec));
        }
        // Root too, as the simulator does: `cgroup=/` with a weight sets the root's.
        for spec in cgroups.specs() {
            elevator.add_cgroup(*spec);
        }
        let life =
            Lifecycle::new(jobs, &layout, config.seed).map_err(|e| EngineError::WaitFor {
                job: e.job,
                target: e.target,
            })?;
        Ok(Engine {
            ring,
            buffers,
            fixed_buffers,
            jobs,
            config,
            target,
            _file: file,
            elevator,
            cgroups,
            layout,
            processes,
            life,
            stats,
            wakes: BTreeMap::new(),
            wake_seq: 0,
            in_flight: BTreeMap::new(),
            bypass: VecDeque::new(),
            next_request: 0,
            in_device: 0,
            queue_depth,
            timer_at: None,
            disk: DiskAccounting::default(),
            start: Instant::now(),
            verify_failures: Vec::new(),
            io_errors: Vec::new(),
            scheduler_ns: 0,
            scheduler_calls: 0,
            requests: 0,
            write_seq: 0,
            stopping: false,
            warnings,
            cpus,
            patterns,
            woken: Vec::new(),
        })
    }

    /// Things the caller should tell the user before the run (the kernel's scheduler is not
    /// `none`).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The probed target.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Pid and job name of every clone, for trace labels.
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

    /// The in-device cap in use.
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    /// Nanoseconds since the run started (CLOCK_MONOTONIC: `Instant` on Linux).
    fn now(&self) -> Time {
        self.start.elapsed().as_nanos() as Time
    }

    /// Calls the scheduler, timing the call.
    fn in_scheduler<R>(&mut self, call: impl FnOnce(&mut dyn Elevator) -> R) -> R {
        let t0 = Instant::now();
        let result = call(self.elevator.as_mut());
        self.scheduler_ns += t0.elapsed().as_nanos() as u64;
        self.scheduler_calls += 1;
        result
    }

    fn push_wake(&mut self, at: Time, wake: Wake) {
        self.wake_seq += 1;
        self.wakes.insert((at, self.wake_seq), wake);
    }

    /// Runs to the end, or until `stop` becomes true (then in-flight I/O drains and the
    /// outcome says `interrupted`).
    pub fn run(self, stop: &AtomicBool) -> Result<EngineOutcome, EngineError> {
        self.run_traced(stop, &mut iosched_core::NoTrace)
    }

    /// [`Engine::run`], with every request event (queue, insert, issue, complete) and every
    /// scheduler decision sent to `trace`, timed by the real clock.
    pub fn run_traced(
        mut self,
        stop: &AtomicBool,
        trace: &mut dyn Trace,
    ) -> Result<EngineOutcome, EngineError> {
        if let Some(cpus) = &self.cpus {
            affinity::pin_current_thread(cpus).map_err(|error| {
                EngineError::io(
                    &self.target.path,
                    "cannot pin to the jobs' cpus_allowed",
                    error,
                )
            })?;
        }
        let (usr0, sys0) = cpu_times();
        self.start = Instant::now();
        self.start_ready_jobs(0);
        let mut completions: Vec<(u64, i32)> = Vec::with_capacity(self.queue_depth as usize * 2);
        loop {
            let now = self.now();
            if stop.load(Ordering::Relaxed) && !self.stopping {
                self.begin_stop(now, trace);
            }
            self.run_due(now, trace);
            // Processes woken outside a completion batch (exitall stops them) step now.
            let mut woken = std::mem::take(&mut self.woken);
            for &index in &woken {
                self.step_process(index, now, trace);
            }
            woken.clear();
            if self.woken.is_empty() {
                self.woken = woken;
            }
            self.pump_dispatch(now, trace);
            if self.config.check {
                self.elevator.check_invariants();
            }
            if self.life.all_finished() && self.in_flight.is_empty() {
                break;
            }
            let deadline = self
                .wakes
                .keys()
                .next()
                .map(|&(at, _)| at)
                .into_iter()
                .chain(self.timer_at)
                .min();
            if self.in_device == 0 && deadline.is_none() && self.ring.submission().is_empty() {
                return Err(EngineError::Io {
                    path: self.target.path.clone(),
                    context: "event loop stalled".to_string(),
                    error: std::io::Error::other(format!(
                        "{} requests queued in the scheduler, none in the device, nothing due",
                        self.elevator.queued()
                    )),
                });
            }
            self.wait(deadline)?;
            completions.clear();
            completions.extend(
                self.ring
                    .completion()
                    .map(|cqe| (cqe.user_data(), cqe.result())),
            );
            if !completions.is_empty() {
                let now = self.now();
                for &(id, result) in &completions {
                    self.complete(RequestId(id), result, now, trace);
                }
                let mut woken = std::mem::take(&mut self.woken);
                woken.sort_unstable();
                woken.dedup();
                for &index in &woken {
                    self.step_process(index, now, trace);
                }
                woken.clear();
                self.woken = woken;
            }
        }
        let (usr1, sys1) = cpu_times();
        self.finish(usr1.saturating_sub(usr0), sys1.saturating_sub(sys0))
    }

    /// One `io_uring_enter`: submits the queued entries and waits for a completion or the
    /// deadline.
    fn wait(&mut self, deadline: Option<Time>) -> Result<(), EngineError> {
        let result = match deadline {
            Some(at) => {
                let now = self.now();
                if at <= now {
                    self.ring.submit()
                } else {
                    let wait = at - now;
                    let timespec = types::Timespec::new()
                        .sec(wait / 1_000_000_000)
                        .nsec((wait % 1_000_000_000) as u32);
                    let args = types::SubmitArgs::new().timespec(&timespec);
                    self.ring.submitter().submit_with_args(1, &args)
                }
            }
            None if self.in_device > 0 => self.ring.submit_and_wait(1),
            None => self.ring.submit(),
        };
        match result {
            Ok(_) => Ok(()),
            Err(error) => match error.raw_os_error() {
                // Timeout expired, a signal arrived, or the completion queue is busy: all
                // mean "look again".
                Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN) => {
                    Ok(())
                }
                _ => Err(EngineError::io(&self.target.path, "io_uring_enter", error)),
            },
        }
    }

    fn begin_stop(&mut self, now: Time, trace: &mut dyn Trace) {
        self.stopping = true;
        let (stopped, never_started) = self.life.stop_all(now);
        for index in never_started {
            // Finishes with nothing done.
            self.stats[index].set_runtime(now, now);
        }
        self.woken.extend(stopped);
        self.wakes
            .retain(|_, wake| matches!(wake, Wake::Process(_)));
        let woken = std::mem::take(&mut self.woken);
        for &index in &woken {
            self.step_process(index, now, trace);
        }
    }

    fn run_due(&mut self, now: Time, trace: &mut dyn Trace) {
        if self.timer_at.is_some_and(|at| at <= now) {
            self.timer_at = None;
            self.in_scheduler(|elevator| elevator.timer(now, trace));
        }
        while let Some(entry) = self.wakes.first_entry() {
            if entry.key().0 > now {
                break;
            }
            match entry.remove() {
                Wake::StartJob(job) => self.start_job(job, now, trace),
                Wake::Process(index) => {
                    self.life.woken(index, now);
                    self.step_process(index, now, trace);
                }
            }
        }
    }

    fn start_ready_jobs(&mut self, now: Time) {
        for (at, job) in self.life.release_ready(self.jobs, now) {
            self.push_wake(at, Wake::StartJob(job));
        }
    }

    fn start_job(&mut self, job: usize, now: Time, trace: &mut dyn Trace) {
        let clones = self.life.start_job(self.jobs, &self.layout, job, now);
        for index in clones {
            self.stats[index].set_sample_origin(self.life.stats_from(index));
            self.step_process(index, now, trace);
        }
    }

    fn step_process(&mut self, index: usize, now: Time, trace: &mut dyn Trace) {
        loop {
            match self.life.next_action(self.jobs, index, now) {
                Action::Submit {
                    unit,
                    verify_tag,
                    woken,
                } => {
                    self.woken.extend(woken);
                    self.submit(index, unit, verify_tag, now, trace);
                }
                Action::Phase { read_back: true } => self.stats[index].set_verify_start(now),
                Action::Phase { read_back: false } => self.stats[index].set_write_start(now),
                Action::Sleep(at) => {
                    self.push_wake(at, Wake::Process(index));
                    return;
                }
                Action::Wait => return,
                Action::Finish => {
                    self.finish_process(index, now);
                    return;
                }
            }
        }
    }

    fn finish_process(&mut self, index: usize, now: Time) {
        let finished = self.life.finish(self.jobs, index, now);
        self.stats[index].set_runtime(finished.stats_from, now);
        for &other in &finished.never_started {
            self.stats[other].set_runtime(now, now);
        }
        self.woken.extend(finished.woken);
        self.woken.extend(finished.stopped);
        self.start_ready_jobs(now);
    }

    fn submit(
        &mut self,
        index: usize,
        unit: IoUnit,
        verify_read: Option<u64>,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let process = &self.processes[index];
        let jobs_zoned = self.jobs[self.life.job_of(index)].zones.is_some();
        let (op, sync) = match unit.kind {
            IoKind::Read => (Op::Read, true),
            // O_DIRECT writes are REQ_SYNC.
            IoKind::Write => (Op::Write, true),
            IoKind::Trim => (Op::Discard, false),
            IoKind::Fsync | IoKind::Fdatasync => (Op::Flush, true),
            // Only iosched_workload=dbench4 truncates, and it is buffered: refused at start.
            IoKind::Truncate => unreachable!("buffered jobs are refused"),
        };
        if op != Op::Flush {
            // The promise to the user: nothing outside the job's range (its region, or with
            // strided zones its files) is ever touched.
            let region = process.regions[unit.file];
            let end = if jobs_zoned {
                process.file_bytes[unit.file]
            } else {
                region.start + region.len
            };
            assert!(unit.offset >= region.start, "I/O before the job's region");
            assert!(unit.offset + unit.len <= end, "I/O past the job's region");
        }
        let byte = process.file_starts[unit.file] + unit.offset;
        let request = Request {
            id: RequestId(self.next_request),
            sector: if op == Op::Flush {
                0
            } else {
                byte / SECTOR_SIZE
            },
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
        self.in_flight.insert(
            request.id,
            InFlight {
                process: index,
                unit,
                request,
                submitted_at: now,
                issued: false,
                slot: None,
                verify_read,
                seed: 0,
            },
        );
        self.disk.start(now);
        trace.request(now, RqEvent::Queue, &request);
        trace.request(now, RqEvent::GetRq, &request);
        if op == Op::Flush {
            self.bypass.push_back(request.id);
        } else {
            trace.request(now, RqEvent::Insert, &request);
            self.requests += 1;
            self.in_scheduler(|elevator| elevator.insert(request, now, trace));
        }
    }

    /// Offers free device slots to the scheduler until it has nothing for now.
    fn pump_dispatch(&mut self, now: Time, trace: &mut dyn Trace) {
        while self.in_device < self.queue_depth {
            if let Some(id) = self.bypass.pop_front() {
                self.issue(id, now, trace);
                continue;
            }
            let dispatched = self.in_scheduler(|elevator| elevator.dispatch(now, trace));
            match dispatched {
                Dispatch::Request(request) => self.issue(request.id, now, trace),
                Dispatch::IdleUntil(until) => {
                    assert!(until > now, "idle deadline not in the future");
                    self.timer_at = Some(until);
                    break;
                }
                Dispatch::Empty => break,
            }
        }
    }

    /// Hands one request to the device: one submission queue entry.
    fn issue(&mut self, id: RequestId, now: Time, trace: &mut dyn Trace) {
        let entry = self
            .in_flight
            .get_mut(&id)
            .expect("dispatched request was never submitted");
        assert!(!entry.issued, "request dispatched twice");
        entry.issued = true;
        trace.request(now, RqEvent::Issue, &entry.request);
        let unit = entry.unit;
        let process = &self.processes[entry.process];
        let byte = process.file_starts[unit.file] + unit.offset;
        let method = process.verify;
        let len = unit.len as u32;
        let sqe = match unit.kind {
            IoKind::Read | IoKind::Write => {
                let slot = self
                    .buffers
                    .take()
                    .expect("more requests in the device than buffers");
                entry.slot = Some(slot);
                if unit.kind == IoKind::Write {
                    let job = self.life.job_of(entry.process);
                    let spec = &self.jobs[job];
                    self.write_seq += 1;
                    let block = self.buffers.bytes_mut(slot, unit.len as usize);
                    match (method, self.patterns[job].as_ref()) {
                        // %o is the offset on the target, as fio's io_u->offset on the same file.
                        (Some(VerifyMethod::Pattern), Some(pattern)) => pattern.fill(block, byte),
                        (Some(method), pattern) => {
                            let seed = self.config.seed.rotate_left(32) ^ self.write_seq;
                            entry.seed = seed;
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
                }
                let ptr = self.buffers.ptr(slot);
                match (unit.kind, self.fixed_buffers) {
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
            IoKind::Trim => opcode::Fallocate::new(TARGET_FILE, unit.len)
                .offset(byte)
                .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                .build(),
            IoKind::Fsync => opcode::Fsync::new(TARGET_FILE).build(),
            IoKind::Fdatasync => opcode::Fsync::new(TARGET_FILE)
                .flags(types::FsyncFlags::DATASYNC)
                .build(),
            IoKind::Truncate => unreachable!("buffered jobs are refused"),
        };
        let sqe = sqe.user_data(id.0);
        self.in_device += 1;
        loop {
            // SAFETY: the entry points into the buffer slot now owned by this request (or no
            // memory at all); the slot is not touched again until its completion is reaped, and
            // the pool outlives the ring (field order of `Engine`).
            let pushed = unsafe { self.ring.submission().push(&sqe) };
            if pushed.is_ok() {
                break;
            }
            // Queue full: hand what is queued to the kernel and retry. The ring has at least
            // as many entries as the device cap, so this is rare.
            if let Err(error) = self.ring.submit() {
                assert!(
                    matches!(
                        error.raw_os_error(),
                        Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                    ),
                    "io_uring submit failed: {error}"
                );
            }
        }
    }

    fn complete(&mut self, id: RequestId, result: i32, now: Time, trace: &mut dyn Trace) {
        let Some(entry) = self.in_flight.remove(&id) else {
            panic!("completion for unknown request {}", id.0);
        };
        assert!(entry.issued, "completed before issue");
        assert!(self.in_device > 0, "device in-flight count went negative");
        self.in_device -= 1;
        let request = entry.request;
        trace.request(now, RqEvent::Complete, &request);
        if request.op != Op::Flush {
            self.in_scheduler(|elevator| elevator.completed(&request, now, trace));
        }
        self.disk.done(now);
        let index = entry.process;
        let unit = entry.unit;
        let process = &self.processes[index];
        let byte = process.file_starts[unit.file] + unit.offset;
        let job_name = &self.jobs[self.life.job_of(index)].name;
        let what = match unit.kind {
            IoKind::Read => "read",
            IoKind::Write => "write",
            IoKind::Trim => "trim",
            IoKind::Fsync => "fsync",
            IoKind::Fdatasync => "fdatasync",
            IoKind::Truncate => "truncate",
        };
        let mut failed = false;
        if result < 0 {
            let error = std::io::Error::from_raw_os_error(-result);
            self.io_errors.push(format!(
                "job '{job_name}': {what} of {} bytes at offset {byte}: {error}",
                unit.len
            ));
            self.stats[index].error = -result;
            failed = true;
        } else if let (Some(ddir), true) = (
            unit.kind.ddir(),
            // fallocate (trim) answers 0 on success, reads and writes the bytes moved.
            matches!(unit.kind, IoKind::Read | IoKind::Write),
        ) {
            if (result as u64) < unit.len {
                self.io_errors.push(format!(
                    "job '{job_name}': short {what} at offset {byte}: {result} of {} bytes",
                    unit.len
                ));
                self.stats[index].record_short(ddir);
                failed = true;
            }
        }
        let mut bad_block = false;
        if let Some(slot) = entry.slot {
            let check =
                (entry.verify_read.is_some() || process.check_reads) && unit.kind == IoKind::Read;
            if let (true, false, Some(method)) = (check, failed, process.verify) {
                let block = self.buffers.bytes_mut(slot, unit.len as usize);
                let pattern = self.patterns[self.life.job_of(index)].as_ref();
                let result = match (method, pattern) {
                    (VerifyMethod::Pattern, Some(pattern)) => pattern.check(block, byte),
                    (method, pattern) => {
                        verify::check(block, method, byte, entry.verify_read, pattern)
                    }
                };
                if let Err(message) = result {
                    self.verify_failures.push(VerifyFailure {
                        job: job_name.clone(),
                        offset: byte,
                        len: unit.len,
                        message,
                    });
                    // verify_fatal: the job ends at its first bad block, as at an I/O error.
                    bad_block = true;
                }
            }
            self.buffers.give_back(slot);
        }
        if let Some(ddir) = unit.kind.ddir() {
            self.disk.data_completed(
                request.op.data_dir(),
                request.nr_sectors,
                entry.submitted_at,
                now,
            );
            if self.life.counts_at(index, now) && !failed {
                let ddir = if entry.verify_read.is_some() {
                    DDIR_READ
                } else {
                    ddir
                };
                self.stats[index].record_io(
                    ddir,
                    unit.len,
                    entry.submitted_at,
                    entry.submitted_at,
                    now,
                );
            }
        } else if !failed {
            self.stats[index].record_sync(now - entry.submitted_at);
        }
        // A failed write holds nothing to read back; a steady-state criterion met stops the
        // clones it watches, which drain and finish.
        let written_tag = (!failed).then_some(entry.seed);
        let stopped = self
            .life
            .complete(self.jobs, index, now, &unit, written_tag);
        self.woken.extend(stopped);
        if failed || (bad_block && self.jobs[self.life.job_of(index)].verify_fatal) {
            self.life.fail(index);
        }
        self.woken.push(index);
    }

    fn finish(mut self, usr_cpu_ns: u64, sys_cpu_ns: u64) -> Result<EngineOutcome, EngineError> {
        assert!(
            self.in_flight.is_empty(),
            "requests left in flight at the end"
        );
        assert_eq!(self.elevator.queued(), 0, "requests left in the scheduler");
        let name = self
            .target
            .partition
            .clone()
            .or_else(|| self.target.disk.clone())
            .unwrap_or_else(|| {
                std::path::Path::new(&self.target.path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        let disk = self.disk.stats(name, self.life.last_finish());
        let mut clones = std::mem::take(&mut self.stats);
        let run_s = self.life.last_finish().max(1) as f64 / 1e9;
        for stats in &mut clones {
            // One thread serves every job: each reports the process's CPU share.
            stats.usr_cpu = usr_cpu_ns as f64 / 1e9 * 100.0 / run_s;
            stats.sys_cpu = sys_cpu_ns as f64 / 1e9 * 100.0 / run_s;
        }
        Ok(EngineOutcome {
            clone_jobs: self.life.clone_jobs(),
            clone_cgroups: self
                .processes
                .iter()
                .map(|p| self.cgroups.path(p.cgroup))
                .collect(),
            clones,
            disk,
            elapsed_ns: self.life.last_finish(),
            tunables: self.elevator.tunables(),
            summary: self.elevator.summary(),
            issued: self.life.take_issue_log(),
            layout: std::mem::take(&mut self.layout),
            verify_failures: std::mem::take(&mut self.verify_failures),
            io_errors: std::mem::take(&mut self.io_errors),
            interrupted: self.stopping,
            requests: self.requests,
            scheduler_ns: self.scheduler_ns,
            scheduler_calls: self.scheduler_calls,
            clock_overhead_ns: clock_overhead_ns(),
            usr_cpu_ns,
            sys_cpu_ns,
            fixed_buffers: self.fixed_buffers,
            queue_depth: self.queue_depth,
        })
    }
}

/// Whether a job's `filename=` and the engine's target path are one file.
fn same_file(name: &str, target: &str) -> bool {
    match (std::fs::canonicalize(name), std::fs::canonicalize(target)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
