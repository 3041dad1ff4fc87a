//! The engine's event loop: the jobs' clones as tasks of one io_uring loop in one thread, one
//! scheduler, one target, the real clock.
//!
//! The block layer between the jobs and the target (merges, request lists of `nr_requests`,
//! plugging, dispatch, completions) is [`iosched_driver::Driver`], the same as the
//! simulator's; this crate is its io_uring [`iosched_driver::Backend`] (`io.rs`) and the loop
//! that feeds it time and completions.
//!
//! Each turn of the loop mirrors one simulator event: due wake-ups run (job starts, think
//! time and rate-limit sleeps, the scheduler's idle deadline), processes submit what their job
//! wants, free device slots (at most `queue_depth` requests in the device: the disk's own
//! `queue/nr_requests`, 32 for a file) are offered to the scheduler, and what it hands over
//! becomes one submission queue entry each (a merged request one vectored entry). Then one
//! `io_uring_enter` submits what is left and waits for the first completion or the next
//! deadline, whichever comes first (the idle timer is that wait's timeout).
//!
//! Refilling is fio's (`do_io()` with an async engine): completions are reaped one at a time,
//! each with `now` read from CLOCK_MONOTONIC (nanoseconds since the run started); a job whose
//! `iodepth_batch_complete_max` completions are reaped (or the last one available) runs at
//! once, and every `iodepth_batch_submit` I/Os it submits are dispatched and handed to the
//! kernel with one `io_uring_enter`, before the next completion is looked at. The device never
//! waits for the loop to finish a whole round of completions before it gets work again (the
//! old loop reaped every completion first and refilled after, so a fast device drained).
//! `iodepth_batch_complete_min` and `iodepth_low` are the job runner's: it does not submit
//! until that many completions are in, or until its queue drained to the low mark; the
//! loop's wait asks the kernel for that many completions at once (fio's
//! `io_getevents(min, max)`) when no single completion could set anything else going. The
//! I/Os of a merged request reach their jobs one at a time, each job running again once its
//! `iodepth_batch_complete_max` are in, as fio reaps the separate events of I/Os the kernel
//! merged: a merged batch is refilled as its I/Os come back, not as one batch again.
//!
//! Every data request is checked against its clone's region before it is submitted, so no
//! byte outside a job's `offset`/`size` range is ever touched.
//!
//! With [`EngineConfig::threads`] above 1 the same steps run on several worker threads, each
//! with its own ring and clones, sharing the driver behind one lock ([`crate::threads`]);
//! the loop below is the one-thread case, unchanged by them.

use std::collections::BTreeMap;
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use io_uring::{squeue, types, IoUring};
use iosched_core::{
    configured_elevator, CgroupId, DeviceInfo, Elevator, ElevatorError, RequestId, Time, Trace,
    DEFAULT_UPTIME_NS,
};
use iosched_driver::{Driver, Outcome, RunProgress};
use iosched_workload::generator::FileRegion;
use iosched_workload::layout::Layout;
use iosched_workload::pattern::Pattern;
use iosched_workload::{JobSpec, RwMode};

use crate::affinity;
use crate::buffer::BufferPool;
use crate::cgroup::Placement;
use crate::error::EngineError;
use crate::gauge::{DepthGauge, InFlightSummary, StageSums};
use crate::io::{self, EngineIo, Scratch};
use crate::setup;
use crate::target::Target;
use crate::threads::{self, LockSummary, SchedStat};
use crate::verify::VerifyMethod;

/// How often a run reports its progress: often enough for a terminal, rarely enough to cost
/// nothing beside the I/O.
pub const PROGRESS_EVERY_NS: u64 = 100_000_000;

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
    /// Overrides the in-device cap (the disk's `queue/nr_requests`, or 32 for files).
    pub queue_depth: Option<u32>,
    /// Requests per cgroup and direction on the request lists (`--set nr_requests`), as in
    /// the simulator.
    pub nr_requests: u32,
    /// How long the machine has been up when the run starts, for the scheduler (created at
    /// boot): it sees `uptime_ns` + the run's clock (see [`iosched_core::Uptime`]). 0 starts
    /// the run at boot.
    pub uptime_ns: u64,
    /// Worker threads, each with its own ring and clones, sharing the scheduler
    /// ([`crate::threads`]): 1 is the single loop, 0 one per CPU the jobs allow. Capped by
    /// the number of clones.
    pub threads: u32,
    /// One worker thread per job cgroup instead, each placed in a blkio cgroup of its
    /// group's path, every request submitted by its cgroup's thread ([`crate::cgroup`]);
    /// `threads` is then unused.
    pub cgroup_threads: bool,
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
            nr_requests: 128,
            uptime_ns: DEFAULT_UPTIME_NS,
            threads: 1,
            cgroup_threads: false,
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
    /// The job continued past it (`continue_on_error=verify`): counted, not fatal.
    pub survived: bool,
}

/// What a finished (or interrupted) run hands back: the driver's [`Outcome`] (its fields
/// read through `Deref`) and what only a real run knows.
#[derive(Debug)]
pub struct EngineOutcome {
    pub run: Outcome,
    /// Time from the start to the last job's end (`run.end_ns`).
    pub elapsed_ns: Time,
    pub verify_failures: Vec<VerifyFailure>,
    /// I/O errors and short transfers, one line each (`job 'x': read at 4096: EIO`).
    pub io_errors: Vec<String>,
    /// SIGINT stopped the run early.
    pub interrupted: bool,
    /// Requests that went through the scheduler.
    pub requests: u64,
    /// Wall time spent inside the scheduler's calls (insert, dispatch, completed, timer),
    /// including the clock reads around each call: estimated from one call in eight, drawn
    /// at random, scaled to all of them.
    pub scheduler_ns: u64,
    /// Scheduler calls made.
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
    /// Time-weighted in-flight gauges: the device's and each clone's depth.
    pub inflight: InFlightSummary,
    /// `io_uring_enter` calls made.
    pub enter_calls: u64,
    /// Worker threads the run used.
    pub threads: u32,
    /// The shared scheduler's lock, all threads together (zero with one thread: no lock).
    pub lock: LockSummary,
    /// Processes woken by a thread other than their own (a completion reaped, or a wake-up
    /// found due, on another thread's ring), each delivered through the owner's mailbox.
    pub cross_thread_wakes: u64,
    /// With [`EngineConfig::cgroup_threads`]: each worker's group (`/`, `/heavy`) and the I/Os
    /// the kernel's BFQ charged to the cgroup it sat in (`blkio.bfq.io_serviced` on the
    /// target; 0 unless the device runs BFQ, and for `/`, which stays in the process's own).
    pub kernel_cgroup_ios: Vec<(String, u64)>,
    /// Requests dispatched on one thread and handed to their cgroup's thread to submit.
    pub handed_over: u64,
    /// Wake-ups sent for them: a thread with nothing of its own out is woken once a batch
    /// is handed or the first of it has waited long enough (`io.rs`, `handover`).
    pub handover_wakes: u64,
    /// Each worker thread's time on a CPU and waiting on a run queue, in worker order (empty
    /// with the single loop).
    pub workers: Vec<SchedStat>,
}

/// [`EngineConfig::cgroup_threads`]: the workers' groups (the root first when a clone is in
/// it, then in the order the clones name them) and each clone's worker.
///
/// Choice: a job's `cpus_allowed` is refused here rather than half kept: a worker serves
/// every clone of its cgroup, and fio pins each job's process on its own.
fn cgroup_workers(
    jobs: &[JobSpec],
    drv: &EngineDriver<'_>,
) -> Result<(Vec<String>, Vec<usize>), EngineError> {
    if let Some(job) = jobs.iter().find(|job| job.cpus_allowed.is_some()) {
        return Err(EngineError::Unsupported {
            job: job.name.clone(),
            message: "cpus_allowed with engine_threads=cgroups (one thread serves a whole \
                      cgroup)"
                .to_string(),
        });
    }
    let paths: Vec<String> = drv
        .processes
        .iter()
        .map(|process| drv.cgroups.path(process.cgroup))
        .collect();
    let mut groups: Vec<String> = Vec::new();
    if paths.iter().any(|path| path == "/") {
        groups.push("/".to_string());
    }
    for path in &paths {
        if !groups.contains(path) {
            groups.push(path.clone());
        }
    }
    let owner = paths
        .iter()
        .map(|path| groups.iter().position(|group| group == path).unwrap_or(0))
        .collect();
    Ok((groups, owner))
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

/// The process's resource usage, as fio reads it for a job's `cpu` line.
#[derive(Clone, Copy, Default)]
pub(crate) struct Usage {
    usr_ns: u64,
    sys_ns: u64,
    /// Voluntary plus involuntary context switches (fio's `ctx`).
    ctx: u64,
    majf: u64,
    minf: u64,
}

impl Usage {
    pub(crate) fn now() -> Usage {
        // SAFETY: `rusage` is plain data; getrusage fills it and reads nothing else.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
        Usage {
            usr_ns: ns(usage.ru_utime),
            sys_ns: ns(usage.ru_stime),
            ctx: (usage.ru_nvcsw + usage.ru_nivcsw) as u64,
            majf: usage.ru_majflt as u64,
            minf: usage.ru_minflt as u64,
        }
    }

    /// What was used between `self` and `later`.
    pub(crate) fn until(self, later: Usage) -> Usage {
        Usage {
            usr_ns: later.usr_ns.saturating_sub(self.usr_ns),
            sys_ns: later.sys_ns.saturating_sub(self.sys_ns),
            ctx: later.ctx.saturating_sub(self.ctx),
            majf: later.majf.saturating_sub(self.majf),
            minf: later.minf.saturating_sub(self.minf),
        }
    }
}

/// What the engine keeps of each clone besides its block-layer identity.
pub(crate) struct IoProcess {
    pub regions: Vec<FileRegion>,
    pub verify: Option<VerifyMethod>,
    /// Reads are checked as they complete (a read-only job with `verify=`).
    pub check_reads: bool,
}

/// Something due at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Wake {
    StartJob(usize),
    Process(usize),
}

/// The driver as the engine runs it.
pub(crate) type EngineDriver<'a> = Driver<'a, EngineIo>;

/// The engine's side of a run: the ring, its buffers, the target, the real clock.
pub(crate) struct EngineBackend {
    // Field order matters for drop: the ring goes before the buffers it references.
    pub ring: IoUring,
    pub buffers: BufferPool,
    pub fixed_buffers: bool,
    pub config: EngineConfig,
    pub target: Target,
    pub _file: File,
    pub procs: Vec<IoProcess>,
    /// Each job's `verify_pattern`: the whole block with `verify=pattern`, else the data after
    /// the checksum header.
    pub patterns: Vec<Option<Pattern>>,
    pub wakes: BTreeMap<(Time, u64), Wake>,
    pub wake_seq: u64,
    /// Processes to step before the loop waits again.
    pub woken: Vec<usize>,
    /// The time of the step in progress (as the driver's `now`).
    pub now: Time,
    pub in_device: u32,
    pub queue_depth: u32,
    pub start: Instant,
    pub verify_failures: Vec<VerifyFailure>,
    pub io_errors: Vec<String>,
    /// Time inside the timed scheduler calls.
    pub scheduler_ns: u64,
    pub scheduler_calls: u64,
    /// Scheduler calls timed, and the draw choosing them.
    pub timed_calls: u64,
    pub timing_draw: u64,
    pub write_seq: u64,
    /// The vectors of merged requests in the device, by request.
    pub iovecs: BTreeMap<RequestId, Vec<libc::iovec>>,
    pub stopping: bool,
    pub warnings: Vec<String>,
    /// `cpus_allowed` of the jobs together: the run's thread is pinned to these.
    pub cpus: Option<Vec<u32>>,
    /// Completions taken from the ring in one look, reused.
    pub completions: Vec<(u64, i32)>,
    /// The other half of `woken` while it is worked through (no allocation per turn).
    pub woken_spare: Vec<usize>,
    /// Per clone: completions reaped since it last ran.
    pub reaped: Vec<u32>,
    /// Per clone: its job's `iodepth_batch_complete_max`.
    pub complete_max: Vec<u32>,
    /// Clones whose I/O the completion being handled carried.
    pub touched: Vec<usize>,
    /// Requests handed to the kernel and not reaped.
    pub device_gauge: DepthGauge,
    /// Per clone: its depth (fio's `cur_depth`).
    pub job_gauges: Vec<DepthGauge>,
    pub enter_calls: u64,
    /// Requests pushed to the submission queue and not yet taken by the kernel, in order.
    pub unsent: Vec<RequestId>,
    /// An `io_uring_enter` that failed inside a step, returned by the loop.
    pub ring_error: Option<std::io::Error>,
    pub scratch: Scratch,
    /// Per clone: the worker thread that runs it (all 0 with one thread).
    pub owner: Vec<usize>,
    /// The worker thread holding the backend now.
    pub thread: usize,
    /// Per thread: the CPU it is pinned to, if the jobs ask for CPUs.
    pub thread_cpus: Vec<Option<u32>>,
    /// Per thread: its clones woken by other threads, not yet taken.
    pub mail: Vec<Vec<usize>>,
    /// Per thread: its mailbox got something since it was last told.
    pub notify: Vec<bool>,
    pub cross_thread_wakes: u64,
    /// The current thread's ring delivered its wake-up read: it is to be armed again.
    pub notified: bool,
    /// Entries stay queued until the worker has dropped the lock and submits them itself
    /// (several threads), unless the submission queue is full.
    pub defer_submit: bool,
    /// The workers' cgroups ([`EngineConfig::cgroup_threads`]); while there are any, a
    /// dispatched request goes to the kernel from its clone's own thread (its cgroup's), not
    /// from the thread that dispatched it.
    pub placement: Option<Placement>,
    /// Per thread: entries other threads dispatched for it to submit.
    pub outbox: Vec<Vec<(RequestId, squeue::Entry)>>,
    /// Per thread: its clones' requests dispatched and not completed (in its outbox, its
    /// ring or the device; a completion still in its ring counts until it is reaped).
    pub owned_out: Vec<u32>,
    /// Per thread: when the first request waiting in its outbox for a batch was handed.
    pub handed_since: Vec<Option<Time>>,
    pub handed_over: u64,
    pub handover_wakes: u64,
    /// Per clone: its completed requests' time by stage.
    pub stages: Vec<StageSums>,
    /// When the thread holding the backend returned from its last wait (the start of the
    /// stage a completion spends in the turn that reaps it).
    pub woke_at: Time,
}

/// One run: [`Engine::new`] checks and opens everything, [`Engine::run`] performs it.
pub struct Engine<'a> {
    pub(crate) drv: EngineDriver<'a>,
    pub(crate) back: EngineBackend,
}

impl Drop for EngineBackend {
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

/// The scheduler named in `config`, behind the uptime clock, with its tunables set.
fn build_elevator(
    config: &EngineConfig,
    info: DeviceInfo,
) -> Result<Box<dyn Elevator>, EngineError> {
    configured_elevator(&config.scheduler, info, config.uptime_ns, &config.tunables).map_err(
        |error| match error {
            ElevatorError::Unknown(unknown) => EngineError::UnknownScheduler(unknown.to_string()),
            ElevatorError::Tunable(error) => EngineError::Tunable(error.to_string()),
        },
    )
}

/// Each clone's regions and verification, in layout order.
fn io_processes(
    jobs: &[JobSpec],
    layout: &Layout,
    methods: &[Option<VerifyMethod>],
) -> Vec<IoProcess> {
    layout
        .clones
        .iter()
        .map(|plan| {
            let spec = &jobs[plan.job];
            let method = methods[plan.job];
            let read_only = matches!(spec.rw, RwMode::Read | RwMode::RandRead) || spec.verify_only;
            // Strided zones may lead I/O past the region, never past the file.
            let regions = plan
                .regions
                .iter()
                .zip(&plan.files)
                .map(|(region, &file)| match spec.zones {
                    Some(_) => FileRegion {
                        start: region.start,
                        len: layout.files[file].bytes - region.start,
                    },
                    None => *region,
                })
                .collect();
            IoProcess {
                regions,
                verify: method,
                check_reads: method.is_some() && read_only,
            }
        })
        .collect()
}

/// The engine's worker threads: each one's CPU (if pinned), each clone's worker, and the
/// cgroup placement of the workers when they are one per cgroup.
struct WorkerPlan {
    thread_cpus: Vec<Option<u32>>,
    owner: Vec<usize>,
    placement: Option<Placement>,
}

fn plan_workers(
    jobs: &[JobSpec],
    clone_jobs: &[usize],
    cpus: Option<&[u32]>,
    config: &EngineConfig,
    drv: &EngineDriver<'_>,
) -> Result<WorkerPlan, EngineError> {
    if !config.cgroup_threads {
        let thread_cpus = threads::thread_cpus(config.threads, clone_jobs.len(), cpus);
        let owner = threads::assign_clones(jobs, clone_jobs, &thread_cpus);
        return Ok(WorkerPlan {
            thread_cpus,
            owner,
            placement: None,
        });
    }
    let (groups, owner) = cgroup_workers(jobs, drv)?;
    // Jobs that name no cgroup run as they would without the setting: one thread.
    let placement = if groups.iter().any(|group| group != "/") {
        Some(Placement::new(&groups)?)
    } else {
        None
    };
    Ok(WorkerPlan {
        thread_cpus: vec![None; groups.len()],
        owner,
        placement,
    })
}

impl<'a> Engine<'a> {
    /// Checks the jobs and the target, opens it, lays the jobs out and builds the scheduler.
    /// Nothing is written before [`Engine::run`].
    pub fn new(
        jobs: &'a [JobSpec],
        path: &str,
        config: EngineConfig,
    ) -> Result<Engine<'a>, EngineError> {
        let checks = setup::check_jobs(jobs)?;
        let (cpus, cpus_warning) = affinity::engine_cpus(jobs)?;
        let mut warnings: Vec<String> = cpus_warning.into_iter().collect();
        let opened = setup::open_target(jobs, path, config.force, config.seed, &mut warnings)?;
        let target = opened.target;
        let queue_depth = config.queue_depth.unwrap_or(target.queue_depth).max(1);
        let info = DeviceInfo {
            rotational: target.rotational,
            queue_depth,
        };
        let elevator = build_elevator(&config, info)?;
        let (ring, buffers, fixed_buffers) =
            setup::ring_and_buffers(jobs, &opened.layout, path, &opened.file, queue_depth)?;
        let procs = io_processes(jobs, &opened.layout, &checks.methods);
        let clone_jobs: Vec<usize> = opened.layout.clones.iter().map(|plan| plan.job).collect();
        let drv = Driver::new(
            jobs,
            opened.layout,
            elevator,
            config.seed,
            config.nr_requests,
        )
        .map_err(|e| EngineError::WaitFor {
            job: e.job,
            target: e.target,
        })?;
        let WorkerPlan {
            thread_cpus,
            owner,
            placement,
        } = plan_workers(jobs, &clone_jobs, cpus.as_deref(), &config, &drv)?;
        let workers = thread_cpus.len();
        let back = EngineBackend {
            ring,
            buffers,
            fixed_buffers,
            config,
            target,
            _file: opened.file,
            procs,
            patterns: checks.patterns,
            wakes: BTreeMap::new(),
            wake_seq: 0,
            woken: Vec::new(),
            now: 0,
            in_device: 0,
            queue_depth,
            start: Instant::now(),
            verify_failures: Vec::new(),
            io_errors: Vec::new(),
            scheduler_ns: 0,
            scheduler_calls: 0,
            timed_calls: 0,
            timing_draw: 0x9e37_79b9_7f4a_7c15,
            write_seq: 0,
            iovecs: BTreeMap::new(),
            stopping: false,
            warnings,
            cpus,
            completions: Vec::with_capacity(2 * queue_depth.next_power_of_two() as usize + 8),
            woken_spare: Vec::with_capacity(clone_jobs.len()),
            reaped: vec![0; clone_jobs.len()],
            complete_max: clone_jobs
                .iter()
                .map(|&job| jobs[job].iodepth_batch_complete_max.max(1))
                .collect(),
            touched: Vec::with_capacity(4),
            device_gauge: DepthGauge::new(queue_depth),
            job_gauges: clone_jobs
                .iter()
                .map(|&job| DepthGauge::new(jobs[job].effective_depth()))
                .collect(),
            enter_calls: 0,
            unsent: Vec::with_capacity(2 * queue_depth as usize),
            ring_error: None,
            scratch: Scratch::default(),
            owner,
            thread: 0,
            mail: vec![Vec::new(); thread_cpus.len()],
            notify: vec![false; thread_cpus.len()],
            thread_cpus,
            cross_thread_wakes: 0,
            notified: false,
            defer_submit: false,
            placement,
            outbox: vec![Vec::new(); workers],
            owned_out: vec![0; workers],
            handed_since: vec![None; workers],
            handed_over: 0,
            handover_wakes: 0,
            stages: vec![StageSums::default(); clone_jobs.len()],
            woke_at: 0,
        };
        Ok(Engine { drv, back })
    }

    /// Things the caller should tell the user before the run (the kernel's scheduler is not
    /// `none`).
    pub fn warnings(&self) -> &[String] {
        &self.back.warnings
    }

    /// The probed target.
    pub fn target(&self) -> &Target {
        &self.back.target
    }

    /// Pid and job name of every clone, for trace labels.
    pub fn process_names(&self) -> Vec<(u32, String)> {
        self.drv.process_names()
    }

    /// Every cgroup with its path (`/`, `/a/b`), for trace labels.
    pub fn cgroup_paths(&self) -> Vec<(CgroupId, String)> {
        self.drv.cgroup_paths()
    }

    /// Worker threads the run will use.
    pub fn threads(&self) -> u32 {
        self.back.thread_cpus.len() as u32
    }

    /// The in-device cap in use.
    pub fn queue_depth(&self) -> u32 {
        self.back.queue_depth
    }

    /// The size of each request list.
    pub fn nr_requests(&self) -> u32 {
        self.drv.nr_requests()
    }

    /// Runs to the end, or until `stop` becomes true (then in-flight I/O drains and the
    /// outcome says `interrupted`).
    pub fn run(self, stop: &AtomicBool) -> Result<EngineOutcome, EngineError> {
        self.run_traced(stop, &mut iosched_core::NoTrace)
    }

    /// [`Engine::run`], with every request event (queue, merge, get, plug, insert, issue,
    /// complete) and every scheduler decision sent to `trace`, timed by the real clock.
    /// A run of several threads ([`Engine::threads`]) sends nothing to `trace`: the
    /// threads share the scheduler, and a trace sink is one thread's.
    pub fn run_traced(
        self,
        stop: &AtomicBool,
        trace: &mut dyn Trace,
    ) -> Result<EngineOutcome, EngineError> {
        self.run_observed(stop, trace, &mut |_| {})
    }

    /// [`Engine::run_traced`], calling `progress` with the time since the jobs started (ns)
    /// and the I/Os done at most every [`PROGRESS_EVERY_NS`], for an eta line.
    pub fn run_observed(
        mut self,
        stop: &AtomicBool,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(RunProgress),
    ) -> Result<EngineOutcome, EngineError> {
        if self.threads() > 1 || self.back.placement.is_some() {
            return threads::run(self, stop, progress);
        }
        if let Some(cpus) = &self.back.cpus {
            affinity::pin_current_thread(cpus).map_err(|error| {
                EngineError::io(
                    &self.back.target.path,
                    "cannot pin to the jobs' cpus_allowed",
                    error,
                )
            })?;
        }
        let usage_at_start = Usage::now();
        let (drv, back) = (&mut self.drv, &mut self.back);
        back.start = Instant::now();
        back.set_now(drv, 0);
        drv.start_ready_jobs(back);
        let mut next_progress_ns = 0;
        loop {
            let now = back.clock();
            back.set_now(drv, now);
            if now >= next_progress_ns {
                progress(drv.progress(now));
                next_progress_ns = now + PROGRESS_EVERY_NS;
            }
            if stop.load(Ordering::Relaxed) && !back.stopping {
                back.begin_stop(drv);
            }
            if back.run_turn(drv, trace) {
                break;
            }
            let deadline = back.deadline(drv);
            if back.in_device == 0 && deadline.is_none() && back.ring.submission().is_empty() {
                return Err(back.stalled(drv));
            }
            back.wait(drv, deadline)?;
            back.woke_at = back.clock();
            back.reap(drv, trace);
            if let Some(error) = back.ring_error.take() {
                return Err(EngineError::io(&back.target.path, "io_uring_enter", error));
            }
        }
        self.finish(usage_at_start.until(Usage::now()), LockSummary::default())
    }

    pub(crate) fn finish(
        self,
        usage: Usage,
        lock: LockSummary,
    ) -> Result<EngineOutcome, EngineError> {
        let Engine { drv, mut back } = self;
        let target = &back.target;
        let name = target
            .partition
            .clone()
            .or_else(|| target.disk.clone())
            .unwrap_or_else(|| {
                std::path::Path::new(&target.path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        let requests = drv.requests;
        // Read before the groups go (with the backend, at the end of this call).
        let kernel_cgroup_ios = back
            .placement
            .as_ref()
            .map(|placement| placement.kernel_ios(back.target.dev))
            .unwrap_or_default();
        let outcome = drv.finish(name);
        let mut outcome = outcome;
        let clones = &mut outcome.clones;
        let run_s = outcome.end_ns.max(1) as f64 / 1e9;
        for stats in clones.iter_mut() {
            // One thread serves every job: each reports the process's CPU share.
            stats.usr_cpu = usage.usr_ns as f64 / 1e9 * 100.0 / run_s;
            stats.sys_cpu = usage.sys_ns as f64 / 1e9 * 100.0 / run_s;
            stats.ctx = usage.ctx;
            stats.majf = usage.majf;
            stats.minf = usage.minf;
        }
        Ok(EngineOutcome {
            elapsed_ns: outcome.end_ns,
            run: outcome,
            verify_failures: std::mem::take(&mut back.verify_failures),
            io_errors: std::mem::take(&mut back.io_errors),
            interrupted: back.stopping,
            requests,
            // The sample scaled to every call.
            scheduler_ns: (u128::from(back.scheduler_ns) * u128::from(back.scheduler_calls)
                / u128::from(back.timed_calls.max(1))) as u64,
            scheduler_calls: back.scheduler_calls,
            clock_overhead_ns: clock_overhead_ns(),
            usr_cpu_ns: usage.usr_ns,
            sys_cpu_ns: usage.sys_ns,
            fixed_buffers: back.fixed_buffers,
            queue_depth: back.queue_depth,
            inflight: InFlightSummary {
                device: back.device_gauge.summary(),
                clones: back.job_gauges.iter().map(DepthGauge::summary).collect(),
                stages: back.stages.clone(),
            },
            enter_calls: back.enter_calls,
            threads: back.thread_cpus.len() as u32,
            lock,
            cross_thread_wakes: back.cross_thread_wakes,
            kernel_cgroup_ios,
            handed_over: back.handed_over,
            handover_wakes: back.handover_wakes,
            workers: Vec::new(),
        })
    }
}

impl std::ops::Deref for EngineOutcome {
    type Target = Outcome;

    fn deref(&self) -> &Outcome {
        &self.run
    }
}

impl EngineBackend {
    /// Nanoseconds since the run started (CLOCK_MONOTONIC: `Instant` on Linux).
    pub(crate) fn clock(&self) -> Time {
        self.start.elapsed().as_nanos() as Time
    }

    /// The step at `now` begins.
    pub(crate) fn set_now(&mut self, drv: &mut EngineDriver<'_>, now: Time) {
        self.now = now;
        drv.now = now;
    }

    pub(crate) fn push_wake(&mut self, at: Time, wake: Wake) {
        self.wake_seq += 1;
        self.wakes.insert((at, self.wake_seq), wake);
    }

    /// The next wake-up or idle deadline.
    pub(crate) fn deadline(&self, drv: &EngineDriver<'_>) -> Option<Time> {
        let handed = self
            .handed_since
            .iter()
            .flatten()
            .map(|&since| since + io::HANDOVER_WAIT_NS);
        self.wakes
            .keys()
            .next()
            .map(|&(at, _)| at)
            .into_iter()
            .chain(drv.timer_at)
            .chain(handed)
            .min()
    }

    pub(crate) fn stalled(&self, drv: &EngineDriver<'_>) -> EngineError {
        EngineError::Io {
            path: self.target.path.clone(),
            context: "event loop stalled".to_string(),
            error: std::io::Error::other(format!(
                "{} requests queued in the scheduler, none in the device, nothing due",
                drv.elevator.queued()
            )),
        }
    }

    /// A turn's work once its completions are in, the same on one thread or several: due
    /// wake-ups (the idle timer among them), the woken clones, the dispatch; whether the run
    /// is over (every job finished, nothing in flight).
    pub(crate) fn run_turn(&mut self, drv: &mut EngineDriver<'_>, trace: &mut dyn Trace) -> bool {
        self.run_due(drv, trace);
        self.step_woken(drv, trace);
        drv.pump_dispatch(self, trace);
        if self.config.check {
            drv.elevator.check_invariants();
        }
        drv.life.all_finished() && drv.in_flight.is_empty()
    }

    /// Steps the processes woken since the last look (completions, `exitall`, request lists).
    pub(crate) fn step_woken(&mut self, drv: &mut EngineDriver<'_>, trace: &mut dyn Trace) {
        // Bounded: a process stepped wakes others only by finishing or completing.
        while !self.woken.is_empty() {
            self.step_ready(drv, trace, true);
        }
    }

    /// Steps the woken processes once each, handing what each submits to the kernel before
    /// the next runs. Unless `all`, a process still short of its job's
    /// `iodepth_batch_complete_max` reaped completions stays woken for later (fio reaps up to
    /// that many before it refills).
    fn step_ready(&mut self, drv: &mut EngineDriver<'_>, trace: &mut dyn Trace, all: bool) {
        if self.woken.is_empty() {
            return;
        }
        let mut woken = std::mem::take(&mut self.woken_spare);
        std::mem::swap(&mut woken, &mut self.woken);
        woken.sort_unstable();
        woken.dedup();
        for &index in &woken {
            if self.owner[index] != self.thread {
                self.mail_to(index);
                continue;
            }
            let reaped = self.reaped[index];
            if !all && reaped > 0 && reaped < self.complete_max[index] {
                self.woken.push(index);
                continue;
            }
            self.reaped[index] = 0;
            drv.wake_process(self, index, trace);
            self.commit(drv, trace);
            self.gauge_clone(drv, index);
        }
        woken.clear();
        self.woken_spare = woken;
    }

    /// What a process step submitted goes to the device now: the plug ends, free slots are
    /// offered to the scheduler, and what it dispatched is handed to the kernel (one
    /// `io_uring_enter`). The step's clone and the device gauges follow.
    pub(crate) fn commit(&mut self, drv: &mut EngineDriver<'_>, trace: &mut dyn Trace) {
        drv.unplug(trace);
        drv.pump_dispatch(self, trace);
        self.submit_queued(drv);
    }

    /// Hands the queued entries to the kernel with one `io_uring_enter` that does not wait
    /// (fio's `commit`, [`commit_entries`]), and stamps each entry it took with the time the
    /// call returned. A busy or interrupted call leaves them queued for the next; any other
    /// error is kept in `ring_error` for the loop.
    pub(crate) fn submit_queued(&mut self, drv: &mut EngineDriver<'_>) {
        if self.ring.submission().is_empty()
            || (self.defer_submit && !self.ring.submission().is_full())
        {
            return;
        }
        self.enter_calls += 1;
        // The entries go in as the call begins.
        let now = self.clock();
        self.device_gauge.set(self.in_device, now);
        match commit_entries(&mut self.ring) {
            Ok(taken) => self.stamp_sent(drv, taken),
            Err(error)
                if matches!(
                    error.raw_os_error(),
                    Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                ) => {}
            Err(error) => {
                self.ring_error.get_or_insert(error);
            }
        }
        if !self.ring.submission().is_empty() {
            // Not all went in: what is left is not in the device.
            let now = self.clock();
            self.gauge_device(now);
        }
    }

    /// The first `taken` queued entries (the kernel takes them in order) reached the device
    /// now: fio's `issue_time`, read once for the batch after `io_uring_enter` returned, as
    /// fio's io_uring engine reads it once per commit.
    ///
    /// Choice: the job I/O's submission latency (from its generation, `submitted_at`, to this
    /// stamp) includes the time its request waited in the scheduler. In the kernel that wait
    /// comes after the submitting syscall returns, so fio counts it in clat; here the
    /// scheduler sits before io_uring, and what a fio user reads as slat is the time from
    /// the job producing the I/O to the `io_uring_enter` that carried it returning. clat is
    /// then the device's time alone, and lat = slat + clat per I/O, as fio defines them.
    pub(crate) fn stamp_sent(&mut self, drv: &mut EngineDriver<'_>, taken: usize) {
        let now = self.clock();
        self.stamp_sent_at(drv, taken, now);
    }

    /// [`EngineBackend::stamp_sent`] for a call that returned at `now`.
    pub(crate) fn stamp_sent_at(&mut self, drv: &mut EngineDriver<'_>, taken: usize, now: Time) {
        let taken = taken.min(self.unsent.len());
        if taken == 0 {
            return;
        }
        for id in self.unsent.drain(..taken) {
            if let Some(entry) = drv.in_flight.get_mut(id) {
                entry.io.sent_at = Some(now);
                for rider in &mut entry.riders {
                    rider.io.sent_at = Some(now);
                }
            }
        }
    }

    /// The device gauge at `now`: what the kernel was handed and has not been reaped.
    pub(crate) fn gauge_device(&mut self, now: Time) {
        let handed: usize = self.outbox.iter().map(Vec::len).sum();
        let queued = self.ring.submission().len() as u32 + handed as u32;
        self.device_gauge
            .set(self.in_device.saturating_sub(queued), now);
    }

    /// Clone `index`'s depth gauge after it ran or a completion reached it.
    pub(crate) fn gauge_clone(&mut self, drv: &EngineDriver<'_>, index: usize) {
        self.job_gauges[index].set(drv.life.in_flight(index), self.now);
    }

    /// Takes what completed from the ring and hands it to the driver one completion at a
    /// time, stepping each job whose batch of completions is in before looking at the next.
    pub(crate) fn reap(&mut self, drv: &mut EngineDriver<'_>, trace: &mut dyn Trace) {
        self.completions.clear();
        let cq = self.ring.completion();
        self.completions
            .extend(cq.map(|cqe| (cqe.user_data(), cqe.result())));
        let count = self.completions.len();
        for at in 0..count {
            let (id, result) = self.completions[at];
            if id == threads::NOTIFY_TAG {
                // Another thread's wake-up for this one (only with several threads).
                self.notified = true;
                continue;
            }
            self.set_now(drv, self.clock());
            self.touched.clear();
            drv.complete(self, RequestId(id), result, trace);
            self.gauge_device(self.now);
            for touched in 0..self.touched.len() {
                let index = self.touched[touched];
                self.gauge_clone(drv, index);
            }
            drv.retry_sleepers(self, trace);
            self.step_ready(drv, trace, at + 1 == count);
        }
        self.step_woken(drv, trace);
    }

    /// How many completions the loop's wait asks the kernel for: what the jobs wait for
    /// before they reap (the least `iodepth_batch_complete_min` still outstanding among
    /// them, fio's `io_getevents(min, ..)`), or 1 whenever one completion could set
    /// something going: requests queued in the scheduler or asleep on a request list (a
    /// freed device slot or request dispatches them), a merged request in the device (one
    /// completion carrying several I/Os), a job wanting 1.
    fn completions_to_wait_for(&self, drv: &EngineDriver<'_>) -> u32 {
        if drv.elevator.queued() > 0 || drv.sleepers() > 0 || !self.iovecs.is_empty() {
            return 1;
        }
        let wanted = drv
            .life
            .running()
            .map(|clone| drv.life.completions_wanted(clone))
            .filter(|&wanted| wanted > 0)
            .min()
            .unwrap_or(1);
        wanted.clamp(1, self.in_device.max(1))
    }

    /// Submits what is queued (see [`EngineBackend::submit_queued`]), then one
    /// `io_uring_enter` waits for [`EngineBackend::completions_to_wait_for`] completions or
    /// the deadline (fio's `getevents` after its `commit`: two calls, so that the entries'
    /// submission time is not the wait's end), unless the ring holds them already (the
    /// submit ran the deferred completions' task work: `submit_and_wait` adds GETEVENTS
    /// whenever the kernel flags some as pending, `IORING_SQ_TASKRUN`).
    pub(crate) fn wait(
        &mut self,
        drv: &mut EngineDriver<'_>,
        deadline: Option<Time>,
    ) -> Result<(), EngineError> {
        self.submit_queued(drv);
        if let Some(error) = self.ring_error.take() {
            return Err(EngineError::io(&self.target.path, "io_uring_enter", error));
        }
        let want = self.completions_to_wait_for(drv) as usize;
        // fio's getevents reaps what the ring already holds before it enters the kernel:
        // no wait (and no system call) when the completions it needs are in.
        if self.ring.completion().len() >= want {
            return Ok(());
        }
        if deadline.is_none() && self.in_device == 0 {
            return Ok(());
        }
        let start = self.start;
        wait_in_kernel(
            &self.ring,
            want,
            || start.elapsed().as_nanos() as Time,
            deadline,
            &mut self.enter_calls,
        )
        .map(|_| ())
        .map_err(|error| EngineError::io(&self.target.path, "io_uring_enter", error))
    }

    /// Wakes thread `owner` for the requests in its outbox.
    pub(crate) fn wake_for_handover(&mut self, owner: usize) {
        self.notify[owner] = true;
        self.handed_since[owner] = None;
        self.handover_wakes += 1;
    }

    /// Wakes every thread whose outbox has waited [`io::HANDOVER_WAIT_NS`] for a batch.
    pub(crate) fn wake_overdue_handovers(&mut self, now: Time) {
        for owner in 0..self.handed_since.len() {
            if self.handed_since[owner].is_some_and(|since| since + io::HANDOVER_WAIT_NS <= now) {
                self.wake_for_handover(owner);
            }
        }
    }

    /// Clone `index`, another thread's, was woken here: into its thread's mailbox.
    fn mail_to(&mut self, index: usize) {
        let owner = self.owner[index];
        self.mail[owner].push(index);
        self.notify[owner] = true;
        self.cross_thread_wakes += 1;
    }

    /// SIGINT: every job stops; running clones drain their I/O and finish.
    pub(crate) fn begin_stop(&mut self, drv: &mut EngineDriver<'_>) {
        self.stopping = true;
        let stopped = drv.stop_all(drv.now);
        self.woken.extend(stopped);
        self.wakes
            .retain(|_, wake| matches!(wake, Wake::Process(_)));
    }

    /// Runs what is due: the scheduler's idle deadline, job starts, process wake-ups.
    pub(crate) fn run_due(&mut self, drv: &mut EngineDriver<'_>, trace: &mut dyn Trace) {
        if drv.timer_at.is_some_and(|at| at <= drv.now) {
            drv.fire_idle_timer(self, trace);
        }
        while let Some(entry) = self.wakes.first_entry() {
            if entry.key().0 > drv.now {
                break;
            }
            match entry.remove() {
                Wake::StartJob(job) => drv.start_job(self, job),
                Wake::Process(index) if self.owner[index] != self.thread => self.mail_to(index),
                Wake::Process(index) => {
                    drv.wake_process(self, index, trace);
                    self.gauge_clone(drv, index);
                }
            }
        }
    }
}

/// `io_uring_enter`'s flag asking for completions (`IORING_ENTER_GETEVENTS`, bit 0 in the
/// kernel's `include/uapi/linux/io_uring.h`; the io-uring crate keeps its copy private).
const IORING_ENTER_GETEVENTS: u32 = 1 << 0;

/// Submits every queued entry with one `io_uring_enter` that asks for completions without
/// waiting for any (`GETEVENTS`, `min_complete` 0), as fio 3.33's io_uring `commit` enters:
/// with `DEFER_TASKRUN` the completions that arrived while the call ran (the device finished
/// the I/O before the call returned, as a loop device's worker on the same CPU does) are
/// posted to the completion queue before it returns, so the wait that follows finds them
/// there and makes no second call. Without the flag they stay pending until that second
/// call runs them. Returns how many entries the kernel took.
pub(crate) fn commit_entries(ring: &mut IoUring) -> std::io::Result<usize> {
    let queued = ring.submission().len() as u32;
    // SAFETY: no argument is passed (null pointer, size of a sigset as for a plain submit);
    // the entries handed over were written by `SubmissionQueue::push`, whose callers keep
    // their buffers alive until the completions are reaped.
    unsafe {
        ring.submitter()
            .enter::<libc::sigset_t>(queued, 0, IORING_ENTER_GETEVENTS, None)
    }
}

/// One `io_uring_enter` that submits what the ring holds queued and waits for `want`
/// completions, until `deadline` on the run's clock (`now` reads it) or without one; none
/// when the deadline has passed. Counted in `calls`. Returns how many entries the kernel
/// took. The outcomes that only mean "look again" (the timeout expired, a signal arrived,
/// the completion queue was busy) are not errors.
pub(crate) fn wait_in_kernel(
    ring: &IoUring,
    want: usize,
    now: impl FnOnce() -> Time,
    deadline: Option<Time>,
    calls: &mut u64,
) -> std::io::Result<usize> {
    let result = match deadline {
        Some(at) => {
            let now = now();
            if at <= now {
                return Ok(0);
            }
            let wait = at - now;
            let timespec = types::Timespec::new()
                .sec(wait / 1_000_000_000)
                .nsec((wait % 1_000_000_000) as u32);
            let args = types::SubmitArgs::new().timespec(&timespec);
            *calls += 1;
            ring.submitter().submit_with_args(want, &args)
        }
        None => {
            *calls += 1;
            ring.submit_and_wait(want)
        }
    };
    match result {
        Ok(taken) => Ok(taken),
        Err(error) => match error.raw_os_error() {
            Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN) => Ok(0),
            _ => Err(error),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use io_uring::{opcode, squeue};

    /// A ring as the engine's (`setup::new_ring`), but without `TASKRUN_FLAG`, so that the
    /// io-uring crate's own `submit` cannot see the pending work and add `GETEVENTS` itself.
    fn deferred_ring() -> Option<IoUring> {
        IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(8)
            .ok()
    }

    /// A completion that arrives as deferred task work (a no-op punted to io-wq) is posted by
    /// `commit_entries`, as by fio's commit (`IORING_ENTER_GETEVENTS`), and not by a plain
    /// submit. The reference is the kernel itself: without the flag the same call leaves it
    /// pending.
    #[test]
    fn commit_posts_deferred_completions() {
        let Some(mut ring) = deferred_ring() else {
            eprintln!("SKIPPED: this kernel has no IORING_SETUP_DEFER_TASKRUN");
            return;
        };
        let nop = opcode::Nop::new()
            .build()
            .flags(squeue::Flags::ASYNC)
            .user_data(7);
        // SAFETY: a no-op points at no memory.
        unsafe { ring.submission().push(&nop) }.unwrap();
        assert_eq!(ring.submit().unwrap(), 1);
        // The io-wq worker finishes at once; its completion waits for the ring's task.
        std::thread::sleep(std::time::Duration::from_millis(50));
        ring.submit().unwrap();
        assert_eq!(ring.completion().len(), 0, "a plain submit posted it");
        assert_eq!(commit_entries(&mut ring).unwrap(), 0);
        let posted: Vec<u64> = ring.completion().map(|cqe| cqe.user_data()).collect();
        assert_eq!(posted, [7]);
    }
}
