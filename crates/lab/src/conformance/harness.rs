//! The harness loop: one scenario through iosched's CFQ, as the kernel side drove 4.20.1's.
//!
//! Events are ordered by (time, kind, sequence), idle timer before completion before arrival.
//! After every event the device is topped up: while it holds fewer than `depth` requests,
//! `dispatch` is asked, and a dispatched request starts at once and completes after the device
//! model's service time. An arrival is offered to `may_queue` and then inserted; its cgroup
//! (and the cgroup's ancestors) is announced to the scheduler at its first request, with that
//! request's time, as the kernel creates a blkg at a cgroup's first bio. The idle timer is the
//! deadline of the last `IdleUntil` answer and fires at it unless another answer replaced it.
//! Processes draw random sectors from splitmix64 streams seeded per process.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;

use iosched_core::cfq::Cfq;
use iosched_core::{
    CgroupId, Decision, DeviceInfo, Dispatch, Elevator, IoContextId, MessageSubject, Op, Request,
    RequestId, Time, Trace, TunableError,
};

use super::scenario::{ArrivalSpec, ProcSpec, Scenario};

/// One dispatch: (absolute time, request id, pid), as the expected `D` lines give it.
pub type DispatchRecord = (u64, u64, u32);

/// What a scenario run produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunOutput {
    pub dispatches: Vec<DispatchRecord>,
    /// The harness's line format (with CFQ's messages as `M` lines and iosched's decisions as
    /// `X` lines), when asked for.
    pub text: Option<String>,
}

/// Event kinds, in the order events of one instant are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Complete,
    Arrive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    Complete { rq: Request, service_ns: u64 },
    Arrive(ArrivalSpec),
}

/// The text sink: CFQ's messages and decisions as lines, when text output is on.
struct Lines {
    text: Option<String>,
}

impl Trace for Lines {
    fn enabled(&self) -> bool {
        self.text.is_some()
    }

    fn message(&mut self, now: Time, subject: MessageSubject, msg: &str) {
        let Some(out) = self.text.as_mut() else {
            return;
        };
        // Choice: blkparse's prefix shapes (`cfq<pid><S|A><N| >`, groups by cgroup id).
        let _ = match subject {
            MessageSubject::Device => writeln!(out, "M {now} cfq {msg}"),
            MessageSubject::Text => writeln!(out, "M {now} {msg}"),
            MessageSubject::Group(cg) => writeln!(out, "M {now} cg{} {msg}", cg.0),
            MessageSubject::Queue {
                pid,
                cgroup,
                sync,
                noidle,
            } => {
                let s = if sync { 'S' } else { 'A' };
                let n = if noidle { 'N' } else { ' ' };
                writeln!(out, "M {now} cg{} cfq{pid}{s}{n} {msg}", cgroup.0)
            }
        };
    }

    fn decision(&mut self, now: Time, d: &Decision<'_>) {
        if let Some(out) = self.text.as_mut() {
            let _ = writeln!(
                out,
                "X {now} {} q={:?} g={:?} {} {:?}",
                d.kind,
                d.queue,
                d.group.map(|g| g.0),
                d.reason,
                d.value_ns
            );
        }
    }
}

/// Per-process state of the loop.
struct ProcState {
    spec: ProcSpec,
    rng: u64,
    next_sector: u64,
    requests: u64,
    bytes: u64,
    service_ns: u64,
}

/// splitmix64: the harness's per-process random stream.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Harness<'a> {
    sc: &'a Scenario,
    cfq: Cfq,
    lines: Lines,
    dispatches: Vec<DispatchRecord>,
    heap: BinaryHeap<Reverse<(u64, Kind, u64, usize)>>,
    payloads: Vec<Option<Payload>>,
    procs: Vec<ProcState>,
    announced: Vec<u32>,
    /// Absolute end: events at or after it are dropped.
    end_ns: u64,
    in_device: u32,
    last_end: u64,
    next_id: u64,
    deadline: Option<u64>,
}

/// Runs `sc` with scenario time 0 at absolute `origin_ns` (the scenario's own unless
/// overridden); `text` also renders the harness's line format.
pub fn run_scenario(
    sc: &Scenario,
    origin_ns: Option<u64>,
    text: bool,
) -> Result<RunOutput, TunableError> {
    let origin = origin_ns.unwrap_or(sc.origin_ns);
    let mut cfq = Cfq::new(DeviceInfo {
        rotational: sc.device.rotational,
        queue_depth: sc.device.depth,
    });
    for (name, value, _) in &sc.tunables {
        cfq.set_tunable(name, value)?;
    }
    let mut h = Harness {
        sc,
        cfq,
        lines: Lines {
            text: text.then(String::new),
        },
        dispatches: Vec::new(),
        heap: BinaryHeap::new(),
        payloads: Vec::new(),
        procs: Vec::new(),
        announced: Vec::new(),
        end_ns: origin + sc.end_ns,
        in_device: 0,
        last_end: 0,
        next_id: 1,
        deadline: None,
    };
    h.start(origin);
    h.run();
    Ok(RunOutput {
        dispatches: h.dispatches,
        text: h.lines.text,
    })
}

impl Harness<'_> {
    fn push(&mut self, t: u64, kind: Kind, payload: Payload) {
        let seq = self.payloads.len();
        self.payloads.push(Some(payload));
        self.heap.push(Reverse((t, kind, seq as u64, seq)));
    }

    /// Shifts process times by the origin and queues the first requests and the arrivals.
    fn start(&mut self, origin: u64) {
        for spec in &self.sc.procs {
            let mut spec = spec.clone();
            spec.start_ns += origin;
            if spec.stop_ns != u64::MAX {
                spec.stop_ns += origin;
            }
            self.procs.push(ProcState {
                rng: spec.seed,
                next_sector: spec.base,
                spec,
                requests: 0,
                bytes: 0,
                service_ns: 0,
            });
        }
        for i in 0..self.procs.len() {
            let p = &self.procs[i].spec;
            let (depth, start, stop) = (p.depth, p.start_ns, p.stop_ns);
            if start < self.end_ns && start < stop {
                for _ in 0..depth {
                    self.issue_next(i, start);
                }
            }
        }
        for a in &self.sc.arrivals {
            let t = a.time_ns + origin;
            if t < self.end_ns {
                self.push(
                    t,
                    Kind::Arrive,
                    Payload::Arrive(ArrivalSpec { time_ns: t, ..*a }),
                );
            }
        }
    }

    /// Queues process `i`'s next request for time `t`.
    fn issue_next(&mut self, i: usize, t: u64) {
        let p = &mut self.procs[i];
        let size = u64::from(p.spec.size);
        let sector = if p.spec.random {
            let slots = (p.spec.span / size).max(1);
            p.spec.base + (splitmix64(&mut p.rng) % slots) * size
        } else {
            let s = p.next_sector;
            p.next_sector += size + p.spec.gap;
            if p.spec.span != 0 && p.next_sector + size > p.spec.base + p.spec.span {
                p.next_sector = p.spec.base;
            }
            s
        };
        let mut flags = p.spec.flags;
        if p.spec.write && p.spec.sync {
            flags.sync = true;
        }
        let arrival = ArrivalSpec {
            time_ns: t,
            pid: p.spec.pid,
            write: p.spec.write,
            flags,
            sector,
            sectors: p.spec.size,
        };
        self.push(t, Kind::Arrive, Payload::Arrive(arrival));
    }

    fn run(&mut self) {
        loop {
            let next_t = self.heap.peek().map_or(u64::MAX, |Reverse(e)| e.0);
            if let Some(t) = self.deadline {
                if t <= next_t && t < self.end_ns {
                    self.deadline = None;
                    self.note(format_args!("I {t}"));
                    self.cfq.timer(t, &mut self.lines);
                    self.top_up(t);
                    continue;
                }
            }
            if next_t >= self.end_ns {
                break;
            }
            let Some(Reverse((now, _, _, slot))) = self.heap.pop() else {
                break;
            };
            match self.payloads[slot].take() {
                Some(Payload::Arrive(a)) => self.arrive(&a, now),
                Some(Payload::Complete { rq, service_ns }) => self.complete(&rq, service_ns, now),
                None => unreachable!("event {slot} handled twice"),
            }
            self.top_up(now);
        }
        for p in &self.procs {
            let (pid, n, bytes, svc) = (p.spec.pid, p.requests, p.bytes, p.service_ns);
            self.lines.line(format_args!("T {pid} {n} {bytes} {svc}"));
        }
    }

    fn note(&mut self, args: std::fmt::Arguments) {
        self.lines.line(args);
    }

    /// Dispatches while the device has room and the scheduler gives requests.
    fn top_up(&mut self, now: u64) {
        while self.in_device < self.sc.device.depth {
            match self.cfq.dispatch(now, &mut self.lines) {
                Dispatch::Request(rq) => {
                    let svc = self
                        .sc
                        .device
                        .service_ns(rq.sector, rq.nr_sectors, self.last_end);
                    self.last_end = rq.end_sector();
                    self.in_device += 1;
                    self.dispatches.push((now, rq.id.0, rq.pid));
                    self.note(format_args!("D {now} {} {}", rq.id.0, rq.pid));
                    let done = Payload::Complete {
                        rq,
                        service_ns: svc,
                    };
                    self.push(now + svc, Kind::Complete, done);
                }
                Dispatch::IdleUntil(t) => {
                    self.deadline = Some(t);
                    break;
                }
                Dispatch::Empty => {
                    self.deadline = None;
                    break;
                }
            }
        }
    }

    /// Announces cgroup `cg` and its ancestors (parents first) at their first request.
    fn announce(&mut self, cg: u32, now: u64) {
        if cg == 0 || self.announced.contains(&cg) {
            return;
        }
        let spec = *self
            .sc
            .cgroups
            .iter()
            .find(|c| c.id.0 == cg)
            .expect("scenario validation checked the cgroup");
        self.announce(spec.parent.0, now);
        self.cfq.add_cgroup(spec, now);
        self.announced.push(cg);
    }

    fn arrive(&mut self, a: &ArrivalSpec, now: u64) {
        let i = self
            .procs
            .iter()
            .position(|p| p.spec.pid == a.pid)
            .expect("scenario validation checked the pid");
        let spec = &self.procs[i].spec;
        let (cg, ioprio) = (spec.cgroup, spec.ioprio);
        self.announce(cg, now);
        let rq = Request {
            id: RequestId(self.next_id),
            sector: a.sector,
            nr_sectors: a.sectors,
            op: if a.write { Op::Write } else { Op::Read },
            flags: a.flags,
            pid: a.pid,
            ioc: IoContextId(a.pid),
            cgroup: CgroupId(cg),
            ioprio,
        };
        self.next_id += 1;
        let _ = self.cfq.may_queue(&rq);
        let dir = if a.write { 'W' } else { 'R' };
        let (id, pid, sector, n) = (rq.id.0, rq.pid, a.sector, a.sectors);
        self.note(format_args!("Q {now} {id} {pid} {dir} {sector} {n}"));
        self.cfq.insert(rq, now, &mut self.lines);
    }

    fn complete(&mut self, rq: &Request, service_ns: u64, now: u64) {
        self.in_device -= 1;
        self.note(format_args!("C {now} {} {}", rq.id.0, rq.pid));
        let i = self
            .procs
            .iter()
            .position(|p| p.spec.pid == rq.pid)
            .expect("a dispatched request has its process");
        let p = &mut self.procs[i];
        p.requests += 1;
        p.bytes += rq.bytes();
        p.service_ns += service_ns;
        self.cfq.completed(rq, now, &mut self.lines);
        let p = &self.procs[i].spec;
        let t = now + p.think_ns;
        if p.depth > 0 && t < p.stop_ns && t < self.end_ns {
            self.issue_next(i, t);
        }
    }
}

impl Lines {
    fn line(&mut self, args: std::fmt::Arguments) {
        if let Some(out) = self.text.as_mut() {
            let _ = out.write_fmt(args);
            out.push('\n');
        }
    }
}
