//! The block-layer half of a run, written once for every backend.
//!
//! A run is job clones (simulated or real processes) submitting I/O through one scheduler to
//! one device. Whatever the device is, the same things happen between a job and the device:
//! each clone is a process with its pid, io context, cgroup and ioprio; a job's `IoUnit` becomes
//! a bio, which may merge into a queued request (`M`/`F`), or needs a request from its cgroup's
//! request list (`nr_requests` per direction, with batching and sleepers, `S`); a process's
//! submission batch is plugged (`P`/`U`); free device slots are offered to the scheduler until
//! it has nothing for now or asks to idle; every request is accounted in flight exactly once,
//! and its completion fans out to the scheduler, the disk counters, the job statistics and
//! the job's state machine. [`Driver`] holds that state and those steps.
//!
//! What differs is a [`Backend`]: how deep the device is and what is in it, how a request
//! is issued, how wake-ups and the idle deadline are scheduled (a simulator's event queue, a
//! real loop's wake list), and what a completion carried (a simulated file system's tag, a
//! real transfer's result and data to verify). The simulator and the io_uring engine
//! implement it; their loops feed the driver time and completions.
//!
//! Nothing here reads a clock: the backend sets [`Driver::now`] before each step.

#![forbid(unsafe_code)]

pub mod backlog;
mod complete;
pub mod disk;
mod dispatch;
pub mod fio_plat;
pub mod histogram;
pub mod io_log;
mod process;
pub mod spec;
pub mod stats;
mod submit;

use std::collections::VecDeque;

use disk::DiskAccounting;
use iosched_core::request_pool::RequestPool;
use iosched_core::seq_table::SeqTable;
use iosched_core::{
    CgroupId, Elevator, IoContextId, IoPrio, Request, RequestId, RqEvent, ServiceSummary, Time,
    Trace, TunableValue,
};
use iosched_workload::cgroups::Cgroups;
use iosched_workload::generator::IoUnit;
use iosched_workload::layout::Layout;
use iosched_workload::lifecycle::Lifecycle;
use iosched_workload::processes::{identities, WaitForError};
use iosched_workload::replay::ReplayPart;
use iosched_workload::JobSpec;
use stats::{DiskStats, JobStats};

pub use complete::UnitDone;

/// What differs between backends. Every method that needs the driver's state gets it as
/// `drv`; the driver calls them at the points its loop reaches them.
pub trait Backend {
    /// What the backend keeps with each I/O (a simulated file system's tag, a real
    /// transfer's buffer and verify data).
    type Io: Copy;
    /// What a device reports with a completion (nothing in the simulator, a byte count or
    /// an error number from io_uring).
    type Result: Copy;

    /// Requests the device takes at once.
    fn queue_depth(&self) -> u32;
    /// Requests in the device now.
    fn in_device(&self) -> u32;
    /// Hands the dispatched `request` (already marked issued, and the copy `drv.in_flight`
    /// holds) to the device.
    fn issue(&mut self, drv: &mut Driver<'_, Self::Io>, request: &Request, trace: &mut dyn Trace);
    /// Process `process` is to run at `at` (`at == drv.now`: as soon as the current step ends).
    fn wake(&mut self, process: usize, at: Time);
    /// Job `job`'s clones start at `at`: call [`Driver::start_job`] then.
    fn start_job_at(&mut self, job: usize, at: Time);
    /// The scheduler asked to be called back at `at` ([`Driver::fire_idle_timer`]).
    fn arm_idle_timer(&mut self, at: Time);
    /// The backend's data for a job I/O the lifecycle just produced (`verify_tag`: the data
    /// seed a read-back block should carry).
    fn job_io(&mut self, verify_tag: Option<u64>) -> Self::Io;
    /// Called for each job I/O before it becomes a bio: true if the backend took it (the
    /// simulator's page cache takes buffered I/O).
    fn admit(
        &mut self,
        _drv: &mut Driver<'_, Self::Io>,
        _process: usize,
        _unit: &IoUnit,
        _trace: &mut dyn Trace,
    ) -> bool {
        false
    }
    /// A clone's job started (before it first runs).
    fn clone_started(&mut self, _drv: &mut Driver<'_, Self::Io>, _process: usize) {}
    /// A clone finished.
    fn process_finished(&mut self, _drv: &mut Driver<'_, Self::Io>) {}
    /// How each unit of a completed request ended, riders first (in their order), then the
    /// request's own unit, pushed to `out`.
    fn unit_results(
        &mut self,
        drv: &mut Driver<'_, Self::Io>,
        entry: &InFlight<Self::Io>,
        result: Self::Result,
        out: &mut Vec<UnitDone>,
    );
    /// How a completed request that carried no riders ended, when the backend can say it
    /// without [`Backend::unit_results`]' vector (the simulator: always done); `None` (the
    /// default): the driver asks `unit_results`.
    fn unit_result(
        &mut self,
        _drv: &mut Driver<'_, Self::Io>,
        _entry: &InFlight<Self::Io>,
        _result: Self::Result,
    ) -> Option<UnitDone> {
        None
    }

    /// A completed request that was the backend's own (not a job's, not on a request list):
    /// handle it and answer true. Called after its riders completed.
    fn own_completion(
        &mut self,
        _drv: &mut Driver<'_, Self::Io>,
        _entry: &InFlight<Self::Io>,
        _trace: &mut dyn Trace,
    ) -> bool {
        false
    }
    /// Process `process` has submitted a whole batch of its job's `iodepth_batch_submit` I/Os
    /// inside one step (fio commits the batch there, one `io_uring_enter`): a real backend
    /// hands the batch to its device now ([`Driver::unplug`], then dispatch) instead of at
    /// the end of the step. A simulator, where a step takes no time, need not.
    fn batch_submitted(
        &mut self,
        _drv: &mut Driver<'_, Self::Io>,
        _process: usize,
        _trace: &mut dyn Trace,
    ) {
    }
    /// One job I/O of a completed request reached its job (statistics, state machine, a
    /// wake-up); `more` when further I/Os of the same request follow. A real backend may let
    /// the job run here, before the rest are handed over, as fio reaps completions one
    /// `io_getevents` at a time and refills in between: the I/Os of a merged request come
    /// back as separate events there.
    fn unit_completed(
        &mut self,
        _drv: &mut Driver<'_, Self::Io>,
        _process: usize,
        _more: bool,
        _trace: &mut dyn Trace,
    ) {
    }
    /// Runs one scheduler call (insert, dispatch, completed, timer); a real backend may time it.
    fn in_scheduler<R>(&mut self, call: impl FnOnce() -> R) -> R {
        call()
    }
}

/// A job clone as a process of the block layer: 24 bytes, what its every bio reads.
///
/// Its other files' starts are apart ([`Driver::file_start`]): the clones run I/Os in
/// turn, mostly in index order, so a line of these records serves the bios of the next
/// clones too (issue 34: 4096 48-byte records with the vector inline cost 0.75 misses a
/// bio; a 64-byte record a line, 1.0).
#[derive(Clone, Debug)]
pub struct Process {
    pub pid: u32,
    pub ioc: IoContextId,
    pub cgroup: CgroupId,
    pub ioprio: IoPrio,
    /// Device byte offset of the clone's first file (0 without files).
    first_file_start: u64,
    /// O_DIRECT: its writes are `REQ_SYNC`.
    pub direct: bool,
    /// Replays a process's async writes (`iosched_replay_part=async`): submitted without
    /// `REQ_SYNC`, as write-back submitted them.
    pub replay_async: bool,
}

/// A request the driver knows about, from its allocation to its completion.
///
/// Two whole cache lines when `X` is at most 8 bytes (the simulator's): with 4096 clones the
/// entry is out of cache when its request completes, ~130 completions after it was made,
/// and completing moves it out of the table whole (issue 34: 176 bytes at any offset were
/// 3.3 misses and a `memcpy` call each way; the issue time held as an `Option` took 16).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct InFlight<X> {
    pub process: usize,
    pub unit: IoUnit,
    /// The request as last seen (the scheduler's copy, grown by merges, once issued).
    pub request: Request,
    pub submitted_at: Time,
    /// When it was handed to the device; `NOT_ISSUED` until then.
    issued_at: Time,
    pub io: X,
    /// Job I/Os merged into this request: they complete with it.
    pub riders: Vec<Rider<X>>,
}

/// `InFlight::issued_at` of a request not handed to the device yet.
const NOT_ISSUED: Time = Time::MAX;

impl<X> InFlight<X> {
    /// `request`, made by `process` for `unit` at `submitted_at`, not issued yet, no riders.
    pub fn new(process: usize, unit: IoUnit, request: Request, submitted_at: Time, io: X) -> Self {
        InFlight {
            process,
            unit,
            request,
            submitted_at,
            issued_at: NOT_ISSUED,
            io,
            riders: Vec::new(),
        }
    }

    /// When it was handed to the device, if it was.
    pub fn issued_at(&self) -> Option<Time> {
        (self.issued_at != NOT_ISSUED).then_some(self.issued_at)
    }
}

/// A job I/O that rides on another request after a merge.
#[derive(Clone, Copy, Debug)]
pub struct Rider<X> {
    pub process: usize,
    pub unit: IoUnit,
    pub submitted_at: Time,
    pub io: X,
}

/// A job I/O whose request could not be allocated: its process sleeps on the request list.
#[derive(Clone, Copy, Debug)]
struct Held<X> {
    unit: IoUnit,
    request: Request,
    submitted_at: Time,
    io: X,
}

/// The I/O each process sleeps on, waiting for a request: a slot index per process into
/// a slab whose freed slots are reused last-freed first. With 4096 processes against 128
/// requests most sleep at any time; a process goes to sleep just after a completion woke
/// another, whose slot is still in cache, and asking whether a process sleeps reads 4
/// bytes, not a whole entry (issue 34: a `Vec<Option<Held>>` cost ~3 cache misses per I/O).
struct Sleepers<X> {
    slot_of: Vec<u32>,
    slots: Vec<Held<X>>,
    free: Vec<u32>,
}

impl<X: Copy> Sleepers<X> {
    const AWAKE: u32 = u32::MAX;

    fn new(processes: usize) -> Sleepers<X> {
        Sleepers {
            slot_of: vec![Self::AWAKE; processes],
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    #[inline]
    fn is_asleep(&self, process: usize) -> bool {
        self.slot_of[process] != Self::AWAKE
    }

    /// Process `process` sleeps on `held`.
    fn hold(&mut self, process: usize, held: Held<X>) {
        debug_assert!(
            !self.is_asleep(process),
            "a process sleeps on one I/O at a time"
        );
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = held;
                slot
            }
            None => {
                self.slots.push(held);
                u32::try_from(self.slots.len() - 1).expect("fewer sleepers than 2^32")
            }
        };
        self.slot_of[process] = slot;
    }

    /// The I/O process `process` sleeps on.
    fn get(&self, process: usize) -> Held<X> {
        let slot = self.slot_of[process];
        assert!(slot != Self::AWAKE, "woke a process that was not asleep");
        self.slots[slot as usize]
    }

    /// Process `process` sleeps no more.
    fn wake(&mut self, process: usize) {
        let slot = std::mem::replace(&mut self.slot_of[process], Self::AWAKE);
        debug_assert!(slot != Self::AWAKE, "woke a process that was not asleep");
        self.free.push(slot);
    }
}

/// Whether the scheduler's last answer to `dispatch`, "nothing now", still stands.
#[derive(Clone, Copy, Debug)]
enum Standing {
    /// A call reached the scheduler since, or its last answer was a request: ask.
    No,
    /// Nothing has reached it; how long the answer holds is not asked yet (asked only when
    /// the driver would dispatch again, so runs whose every event reaches the scheduler
    /// never pay for the question).
    Unasked,
    /// Nothing has reached it, and the answer holds until this time, inclusive
    /// (`Elevator::dispatch_settled_until`; `None`: ask).
    Until(Option<Time>),
}

/// The submitting process's plug, for the trace's `P`/`U` events.
#[derive(Clone, Copy, Debug)]
enum Plug {
    /// Not inside a process's submission batch.
    Off,
    /// Inside one, nothing submitted yet.
    Armed,
    /// Plugged; the last request submitted in the batch.
    Plugged(Request),
}

/// What every finished run hands back, whatever its backend.
#[derive(Debug)]
pub struct Outcome {
    /// One entry per job clone, in job order.
    pub clones: Vec<JobStats>,
    /// Each clone's job index.
    pub clone_jobs: Vec<usize>,
    /// Each clone's cgroup path.
    pub clone_cgroups: Vec<String>,
    pub disk: DiskStats,
    /// When the last clone finished.
    pub end_ns: Time,
    pub tunables: Vec<TunableValue>,
    pub summary: Vec<ServiceSummary>,
    /// Each cgroup's path and the bytes it was owed while backlogged ([`backlog`]).
    pub backlog_owed: Vec<(String, f64)>,
    pub layout: Layout,
    /// What the clones of jobs with `write_iolog` issued (fio's iolog).
    pub issued: iosched_workload::issue_log::IssueLog,
}

/// The block layer's state of one run.
pub struct Driver<'a, X> {
    pub jobs: &'a [JobSpec],
    pub elevator: Box<dyn Elevator>,
    pub cgroups: Cgroups,
    pub layout: Layout,
    pub processes: Vec<Process>,
    /// Per process, the device byte offset of each of its files.
    file_starts: Vec<Vec<u64>>,
    pub life: Lifecycle,
    pub stats: Vec<JobStats>,
    /// Every request between allocation and completion, exactly once (looked up by id,
    /// never walked: its order means nothing). A slab indexed by the id's low bits
    /// ([`SeqTable`]): a new request reuses the slot the last completion freed, still
    /// in cache (issue 34).
    pub in_flight: SeqTable<InFlight<X>>,
    /// Flushes bypass the scheduler, as the kernel's flush machinery does.
    pub bypass: VecDeque<RequestId>,
    pub disk: DiskAccounting,
    /// The time of the current step, set by the backend.
    pub now: Time,
    /// The scheduler's idle deadline, while one is armed.
    pub timer_at: Option<Time>,
    /// Whether the scheduler's last "nothing now" still stands (see `pump_dispatch`).
    standing: Standing,
    /// The scheduler's `completion_keeps_dispatch_settled()`, asked once: a completion
    /// leaves `standing` as it was.
    completion_settles: bool,
    /// The scheduler's `nothing_queued_answers_empty()`, asked once: with nothing queued
    /// the pump need not ask it to dispatch.
    empty_when_drained: bool,
    /// Some job commits in batches (`iodepth_batch_submit` above 1); when none does, a
    /// step need not look up its job's (issue 34).
    batched_submits: bool,
    /// Some job reaps in groups (`iodepth_batch_complete_min` above 1); when none does, a
    /// completion need not look up its job's.
    grouped_reaps: bool,
    /// Requests inserted into the scheduler.
    pub requests: u64,
    next_request: u64,
    /// Whether the run's trace takes request events ([`Trace::takes_requests`]); when not,
    /// neither the events nor the plug they describe are kept.
    trace_requests: bool,
    plug: Plug,
    /// I/Os of the step in progress not yet counted in fio's `iodepth_level`: fio counts a
    /// batch at its commit, each at the depth the whole batch reached (`io_u_mark_depth()`).
    unmarked: u32,
    /// Request lists of the jobs' own requests.
    pool: RequestPool,
    /// Per process: the I/O it sleeps on, waiting for a request.
    held: Sleepers<X>,
    /// Sleepers a completion freed a request for, retried by [`Driver::retry_sleepers`].
    freed_for: Vec<usize>,
    unit_scratch: Vec<UnitDone>,
    /// Bytes each cgroup was owed while backlogged ([`backlog`]).
    pub backlog: backlog::Backlog,
    /// Job data I/Os completed so far (ramp time, errors and all): a progress line's count.
    units_done: u64,
}

/// Where a run stands, for a progress line: the run's clock and the job data I/Os that
/// have completed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunProgress {
    pub now: Time,
    pub ios_done: u64,
}

impl<'a, X: Copy> Driver<'a, X> {
    /// Where the run stands at `now`: the job data I/Os completed so far.
    pub fn progress(&self, now: Time) -> RunProgress {
        RunProgress {
            now,
            ios_done: self.ios_done(),
        }
    }

    /// Job data I/Os completed so far (ramp time and errors included).
    pub fn ios_done(&self) -> u64 {
        self.units_done
    }

    /// The processes of `layout`'s clones, announced with their cgroups to `elevator`, and
    /// their request lists of `nr_requests` per cgroup and direction.
    pub fn new(
        jobs: &'a [JobSpec],
        layout: Layout,
        mut elevator: Box<dyn Elevator>,
        seed: u64,
        nr_requests: u32,
    ) -> Result<Driver<'a, X>, WaitForError> {
        let (identities, cgroups) = identities(jobs, &layout);
        // Sized up front: 4096 clones' records grown by doubling were copied ~twice over
        // (12 reallocations of up to ~7 MiB of statistics, issue 34).
        let mut processes = Vec::with_capacity(layout.clones.len());
        let mut stats = Vec::with_capacity(layout.clones.len());
        let mut file_starts = Vec::with_capacity(layout.clones.len());
        for (plan, identity) in layout.clones.iter().zip(&identities) {
            let spec = &jobs[plan.job];
            let starts: Vec<u64> = plan.files.iter().map(|&f| layout.files[f].start).collect();
            processes.push(Process {
                pid: identity.pid,
                ioc: identity.ioc,
                cgroup: identity.cgroup,
                ioprio: identity.ioprio,
                first_file_start: starts.first().copied().unwrap_or(0),
                direct: spec.direct,
                replay_async: spec
                    .replay
                    .as_ref()
                    .is_some_and(|replay| replay.part == ReplayPart::AsyncWrites),
            });
            stats.push(JobStats::for_job(spec));
            file_starts.push(starts);
        }
        // The one place cgroups reach the scheduler. Root too: `cgroup=/` with
        // `cgroup_weight=` sets the root's (leaf) weight, as Android's "normal" group in seed
        // 004 does. Declared at time 0; a scheduler wrapped in `iosched_core::Uptime` (as
        // both backends' are) creates the others at their first request, as the kernel
        // creates a blkg.
        for spec in cgroups.specs() {
            elevator.add_cgroup(*spec, 0);
        }
        let life = Lifecycle::new(jobs, &layout, seed)?;
        let clones = processes.len();
        let completion_settles = elevator.completion_keeps_dispatch_settled();
        let empty_when_drained = elevator.nothing_queued_answers_empty();
        Ok(Driver {
            jobs,
            elevator,
            cgroups,
            layout,
            processes,
            file_starts,
            life,
            stats,
            in_flight: SeqTable::default(),
            bypass: VecDeque::new(),
            disk: DiskAccounting::default(),
            now: 0,
            timer_at: None,
            standing: Standing::No,
            completion_settles,
            empty_when_drained,
            batched_submits: jobs.iter().any(|job| job.iodepth_batch_submit > 1),
            grouped_reaps: jobs.iter().any(|job| job.iodepth_batch_complete_min > 1),
            requests: 0,
            next_request: 0,
            trace_requests: true,
            plug: Plug::Off,
            unmarked: 0,
            pool: RequestPool::new(nr_requests),
            held: Sleepers::new(clones),
            freed_for: Vec::new(),
            unit_scratch: Vec::new(),
            backlog: backlog::Backlog::default(),
            units_done: 0,
        })
    }

    /// The device byte offset of file `file` of process `process`.
    pub fn file_start(&self, process: usize, file: usize) -> u64 {
        match file {
            0 => self.processes[process].first_file_start,
            file => self.file_starts[process][file],
        }
    }

    /// A fresh request id.
    pub fn next_request_id(&mut self) -> RequestId {
        let id = RequestId(self.next_request);
        self.next_request += 1;
        id
    }

    /// The same driver with request lists of `nr_requests` (nothing may be in flight yet).
    pub fn with_nr_requests(mut self, nr_requests: u32) -> Self {
        assert!(self.in_flight.is_empty(), "request lists resized in flight");
        self.pool = RequestPool::new(nr_requests);
        self
    }

    /// The size of each request list.
    pub fn nr_requests(&self) -> u32 {
        self.pool.nr_requests()
    }

    /// Takes request events to `trace` for the run ahead only if it says it takes them
    /// ([`Trace::takes_requests`]); without this call every event is sent.
    pub fn trace_requests_to(&mut self, trace: &dyn Trace) {
        self.trace_requests = trace.takes_requests();
    }

    /// A request lifecycle event, if the run's trace takes them.
    #[inline(always)]
    fn trace_request(&self, trace: &mut dyn Trace, event: RqEvent, request: &Request) {
        if self.trace_requests {
            trace.request(self.now, event, request);
        }
    }

    /// Processes asleep on a full request list.
    pub fn sleepers(&self) -> usize {
        self.pool.sleepers()
    }

    /// The name of the first job with a clone not finished.
    pub fn unfinished_job(&self) -> Option<String> {
        let (clone, _) = self.life.first_unfinished()?;
        Some(self.jobs[self.life.job_of(clone)].name.clone())
    }

    /// Each process's pid and command name (its job's name), for trace labels.
    pub fn process_names(&self) -> Vec<(u32, String)> {
        self.processes
            .iter()
            .enumerate()
            .map(|(index, process)| (process.pid, self.jobs[self.life.job_of(index)].name.clone()))
            .collect()
    }

    /// Every cgroup with its path (`/`, `/a/b`), for trace labels.
    pub fn cgroup_paths(&self) -> Vec<(CgroupId, String)> {
        self.cgroups
            .specs()
            .map(|spec| (spec.id, self.cgroups.path(spec.id)))
            .collect()
    }

    /// Checks that nothing is left over and hands back the results; `disk_name` names the
    /// disk in fio's `disk_util`.
    pub fn finish(mut self, disk_name: String) -> Outcome {
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
        let end_ns = self.life.last_finish();
        for (clone, stats) in self.stats.iter_mut().enumerate() {
            stats.steadystate = self.life.steady_state(self.jobs, clone);
        }
        Outcome {
            clone_jobs: self.life.clone_jobs(),
            clone_cgroups: self
                .processes
                .iter()
                .map(|p| self.cgroups.path(p.cgroup))
                .collect(),
            clones: self.stats,
            disk: self.disk.stats(disk_name, end_ns),
            end_ns,
            tunables: self.elevator.tunables(),
            summary: self.elevator.summary(),
            backlog_owed: self
                .cgroups
                .specs()
                .map(|spec| (self.cgroups.path(spec.id), self.backlog.owed(spec.id)))
                .collect(),
            issued: self.life.take_issue_log(),
            layout: self.layout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_workload::generator::IoKind;

    fn held(offset: u64) -> Held<()> {
        Held {
            unit: IoUnit {
                kind: IoKind::Read,
                file: 0,
                offset,
                len: 4096,
            },
            request: Request {
                id: RequestId(offset),
                sector: offset / 512,
                nr_sectors: 8,
                op: iosched_core::Op::Read,
                flags: Default::default(),
                pid: 1,
                ioc: IoContextId(1),
                cgroup: CgroupId::ROOT,
                ioprio: IoPrio::none(),
            },
            submitted_at: offset,
            io: (),
        }
    }

    /// Each sleeper gets back its own I/O, and a slot freed is the next one taken.
    #[test]
    fn sleepers_keep_each_process_io_and_reuse_the_last_freed_slot() {
        let mut sleepers = Sleepers::new(3);
        sleepers.hold(2, held(20));
        sleepers.hold(0, held(0));
        assert!(sleepers.is_asleep(0) && !sleepers.is_asleep(1) && sleepers.is_asleep(2));
        assert_eq!(sleepers.get(2).unit.offset, 20);
        sleepers.wake(2);
        assert!(!sleepers.is_asleep(2));
        sleepers.hold(1, held(10));
        assert_eq!(sleepers.slot_of[1], 0, "the slot process 2 freed");
        assert_eq!(sleepers.slots.len(), 2);
        assert_eq!(sleepers.get(1).submitted_at, 10);
        assert_eq!(sleepers.get(0).request.id, RequestId(0));
    }
}
