//! A job I/O becomes a bio, merges into a queued request or takes a request from its
//! cgroup's request list (sleeping on a full one), and reaches the scheduler.
//!
//! Kernel: blk_queue_bio() (merge attempts, then get_request()), __get_request() with
//! elv_may_queue() asked first, blk_flush_plug_list().

use iosched_core::request_pool::Alloc;
use iosched_core::{Op, ReqFlags, Request, RqEvent, Time, Trace, SECTOR_SIZE};
use iosched_workload::generator::{IoKind, IoUnit};

use crate::{Backend, Driver, Held, InFlight, Plug, Rider, Standing};

impl<X: Copy> Driver<'_, X> {
    /// The bio process `index` makes of `unit`.
    fn bio(&mut self, index: usize, unit: &IoUnit) -> Request {
        let id = self.next_request_id();
        let process = &self.processes[index];
        let (op, sync) = match unit.kind {
            IoKind::Read => (Op::Read, true),
            // O_DIRECT writes are REQ_SYNC; buffered writes would come from writeback.
            IoKind::Write => (Op::Write, process.direct && !process.replay_async),
            IoKind::Trim => (Op::Discard, false),
            IoKind::Fsync | IoKind::Fdatasync => (Op::Flush, true),
            // Only iosched_workload=dbench4 truncates, and it is buffered: the page cache
            // (simulator) takes it, the engine refuses it.
            IoKind::Truncate => unreachable!("truncate outside the file system"),
        };
        let file_start = match unit.file {
            0 => process.first_file_start,
            file => self.file_starts[index][file],
        };
        let sector = file_start / SECTOR_SIZE + unit.offset / SECTOR_SIZE;
        Request {
            id,
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
        }
    }

    /// Process `index` submits `unit`.
    pub(crate) fn submit<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        index: usize,
        unit: IoUnit,
        io: X,
        trace: &mut dyn Trace,
    ) {
        if b.admit(self, index, &unit, trace) {
            return;
        }
        let request = self.bio(index, &unit);
        self.unmarked += 1;
        if request.op != Op::Flush && self.try_merge(index, unit, &request, io, trace) {
            return;
        }
        self.trace_request(trace, RqEvent::Queue, &request);
        if !self.allocate(index, &request, trace) {
            let held = Held {
                unit,
                request,
                submitted_at: self.now,
                io,
            };
            self.held.hold(index, held);
            return;
        }
        self.start_job_request(b, index, unit, request, self.now, io, trace);
    }

    /// Merges the bio into a queued request if the scheduler finds one: the I/O rides on it.
    fn try_merge(
        &mut self,
        index: usize,
        unit: IoUnit,
        request: &Request,
        io: X,
        trace: &mut dyn Trace,
    ) -> bool {
        self.standing = Standing::No;
        let Some((target, event)) = self.elevator.try_merge(request, self.now) else {
            return false;
        };
        // The bio joins a queued request: no request of its own, no insert.
        self.trace_request(trace, RqEvent::Queue, request);
        self.trace_request(trace, event, request);
        self.disk.merged(request.op.data_dir());
        self.in_flight
            .get_mut(target)
            .expect("merged into a request the driver never saw")
            .riders
            .push(Rider {
                process: index,
                unit,
                submitted_at: self.now,
                io,
            });
        true
    }

    /// Takes a slot on `request`'s request list for process `index`, or puts the process to
    /// sleep on the list (`S`) and answers false. Kernel: __get_request(), with the
    /// scheduler's elv_may_queue() asked first.
    fn allocate(&mut self, index: usize, request: &Request, trace: &mut dyn Trace) -> bool {
        self.standing = Standing::No;
        let may_queue = self.elevator.may_queue(request);
        let sync = request.is_sync();
        let alloc = self
            .pool
            .get(request.cgroup, sync, request.ioc, may_queue, self.now);
        if alloc == Alloc::Sleep {
            self.trace_request(trace, RqEvent::SleepRq, request);
            self.pool.sleep(request.cgroup, sync, index as u64);
            return false;
        }
        true
    }

    /// A job request has its request-list slot: it exists from now on (`G`), inside the
    /// process's plug.
    #[allow(clippy::too_many_arguments)]
    fn start_job_request<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        index: usize,
        unit: IoUnit,
        request: Request,
        submitted_at: Time,
        io: X,
        trace: &mut dyn Trace,
    ) {
        let entry = InFlight::new(index, unit, request, submitted_at, io);
        self.enqueue(b, entry, false, trace);
    }

    /// A request outside the request lists (a backend's own: the simulated file system's
    /// reads, writeback and journal) is queued (`Q`), allocated (`G`) and inserted.
    pub fn submit_own<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        entry: InFlight<X>,
        trace: &mut dyn Trace,
    ) {
        self.enqueue(b, entry, true, trace);
    }

    /// Puts `entry` in flight and hands it to the scheduler, or past it for a flush. A job
    /// request (`own == false`) joins the submitting process's plug.
    fn enqueue<B: Backend<Io = X>>(
        &mut self,
        b: &mut B,
        entry: InFlight<X>,
        own: bool,
        trace: &mut dyn Trace,
    ) {
        let request = entry.request;
        // Ids are never reused: a new one cannot be in flight (the slab panics if it were).
        self.in_flight.insert_new(request.id, entry);
        self.disk.start(self.now);
        if self.trace_requests {
            self.trace_queued(trace, &request, own);
        }
        if request.op == Op::Flush {
            self.bypass.push_back(request.id);
        } else {
            self.trace_request(trace, RqEvent::Insert, &request);
            self.requests += 1;
            let now = self.now;
            let elevator = &mut self.elevator;
            self.standing = Standing::No;
            b.in_scheduler(|| elevator.insert(request, now, trace));
        }
    }

    /// A new request's `Q` (one of the backend's own), `G`, and for a job's its plug (`P`
    /// on the first of a step): only for a trace that takes them.
    fn trace_queued(&mut self, trace: &mut dyn Trace, request: &Request, own: bool) {
        if own {
            trace.request(self.now, RqEvent::Queue, request);
        }
        trace.request(self.now, RqEvent::GetRq, request);
        if !own {
            match self.plug {
                Plug::Armed => {
                    trace.request(self.now, RqEvent::Plug, request);
                    self.plug = Plug::Plugged(*request);
                }
                Plug::Plugged(_) => self.plug = Plug::Plugged(*request),
                Plug::Off => {}
            }
        }
    }

    /// Processes whose request list a completion freed a slot on retry as batchers:
    /// allocated, their I/O goes on and so do they, else they sleep again. Kernel:
    /// get_request() after io_schedule().
    #[inline]
    pub fn retry_sleepers<B: Backend<Io = X>>(&mut self, b: &mut B, trace: &mut dyn Trace) {
        // Asked after every batch of completions; almost always nobody sleeps.
        if !self.freed_for.is_empty() {
            self.retry_freed(b, trace);
        }
    }

    fn retry_freed<B: Backend<Io = X>>(&mut self, b: &mut B, trace: &mut dyn Trace) {
        for index in std::mem::take(&mut self.freed_for) {
            let held = self.held.get(index);
            let request = held.request;
            self.pool.woke(request.ioc, self.now);
            if !self.allocate(index, &request, trace) {
                continue;
            }
            self.held.wake(index);
            self.start_job_request(
                b,
                index,
                held.unit,
                request,
                held.submitted_at,
                held.io,
                trace,
            );
            b.wake(index, self.now);
        }
    }
}
