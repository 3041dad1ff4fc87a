//! The oracle's driver loop on iosched's side: one scenario through one of core's blk-mq
//! schedulers (mq-deadline, kyber, bfq), printing the lines `oracle/driver/driver.c` prints for
//! the kernel's.
//!
//! The block layer modelled (the same on both sides): a bio first tries the scheduler's bio
//! merge; else it takes a scheduler tag (`nr_requests` of them; the shallow depth
//! `limit_depth` answers caps how many may be in use when it asks) or waits for one behind
//! earlier waiters, then is inserted. After every event the hardware queue runs: while the
//! device holds fewer than `depth` requests and the scheduler has work, dispatch; an empty
//! answer with work pending re-runs the queue `msecs_to_jiffies(3)` jiffies later
//! (BLK_MQ_BUDGET_DELAY, rounded to the tick), unless a re-run is pending. A completion
//! ends the request's bios (each closed-loop process issues its next one `think` later),
//! frees the request and its tag, and lets the tag waiters in, in order.
//! Events of one instant: a due scheduler timer (kyber's; it does not run the queue), then
//! completion, re-run, tunable, exit, arrival, then sequence.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;

use iosched_core::deadline::tunables::{jiffies, msecs_to_jiffies, INITIAL_JIFFIES, JIFFY_NS};
use iosched_core::{IoContextId, IoPrio, Op, ReqFlags, Request, RequestId};

use super::scenario::{Arrival, Scenario, TunableSet};
use sched::OracleSched;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Hrtimer,
    Complete,
    Rerun,
    Tunable,
    Exit,
    Arrive,
}

#[derive(Clone, Debug)]
enum Payload {
    Hrtimer(u64),
    Complete(Request),
    Rerun,
    Tunable(TunableSet),
    Exit(u32),
    Arrive(Arrival),
}

/// splitmix64: the processes' random streams.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct ProcState {
    rng: u64,
    next_sector: u64,
    exited: bool,
    stop_abs: u64,
}

/// A request the device or the scheduler holds, with the bios riding on it (bio id, pid).
struct Riders {
    id: RequestId,
    bios: Vec<(u64, u32)>,
}

struct Harness<'a> {
    sc: &'a Scenario,
    dd: Box<dyn OracleSched>,
    out: String,
    heap: BinaryHeap<Reverse<(u64, Kind, u64)>>,
    payloads: Vec<Option<Payload>>,
    procs: Vec<ProcState>,
    riders: Vec<Riders>,
    waiting: Vec<(Request, Option<u32>)>,
    now: u64,
    end_abs: u64,
    next_bio: u64,
    in_device: u32,
    tags_used: u32,
    nr_requests: u32,
    last_end: u64,
    rerun_pending: bool,
    /// Per process: how many times it has exited (a new io context after each).
    exits: Vec<u32>,
}

/// Runs `sc` through core's scheduler `sched`; returns the decision lines.
pub fn run_scenario(sched: &str, sc: &Scenario) -> Result<String, String> {
    let nr_requests = sc.device.nr_requests();
    let dd = match sched {
        "bfq" => bfq::new(sc, nr_requests),
        _ => sched::new_sched(sched, nr_requests, sc.device.max_sectors)?,
    };
    let mut h = Harness {
        sc,
        dd,
        out: String::new(),
        heap: BinaryHeap::new(),
        payloads: Vec::new(),
        procs: Vec::new(),
        riders: Vec::new(),
        waiting: Vec::new(),
        now: 0,
        end_abs: sc.origin_ns + sc.end_ns,
        next_bio: 1,
        in_device: 0,
        tags_used: 0,
        nr_requests,
        last_end: 0,
        rerun_pending: false,
        exits: vec![0; sc.procs.len()],
    };
    h.schedule()?;
    loop {
        let next = h.heap.peek().map(|&Reverse((t, _, _))| t);
        if let Some(at) = h.dd.timer_expires() {
            if at < h.end_abs && next.is_none_or(|t| at <= t) {
                h.now = at;
                h.dd.run_timer(at, &mut h.out);
                continue;
            }
        }
        let Some(&Reverse((t, _, seq))) = h.heap.peek() else {
            break;
        };
        if t >= h.end_abs {
            break;
        }
        h.heap.pop();
        h.now = t;
        let payload = h.payloads[seq as usize]
            .take()
            .expect("each event is handled once");
        h.handle(payload)?;
    }
    Ok(h.out)
}

impl Harness<'_> {
    fn push(&mut self, t: u64, kind: Kind, payload: Payload) {
        let seq = self.payloads.len() as u64;
        self.payloads.push(Some(payload));
        self.heap.push(Reverse((t, kind, seq)));
    }

    fn schedule(&mut self) -> Result<(), String> {
        let origin = self.sc.origin_ns;
        for t in &self.sc.tunables {
            match t.at_ns {
                None => self.store_tunable(t)?,
                Some(at) if origin + at < self.end_abs => {
                    self.push(origin + at, Kind::Tunable, Payload::Tunable(t.clone()))
                }
                Some(_) => {}
            }
        }
        for &(t, pid) in &self.sc.exits {
            if origin + t < self.end_abs {
                self.push(origin + t, Kind::Exit, Payload::Exit(pid));
            }
        }
        for (i, p) in self.sc.procs.iter().enumerate() {
            // As the C driver: wrapping, with "never" kept.
            let stop_abs = if p.stop_ns == u64::MAX {
                u64::MAX
            } else {
                p.stop_ns.wrapping_add(origin)
            };
            self.procs.push(ProcState {
                rng: p.seed,
                next_sector: p.base,
                exited: false,
                stop_abs,
            });
            let start = origin + p.start_ns;
            if start < self.end_abs && start < stop_abs {
                for _ in 0..p.depth {
                    self.issue_next(i, start);
                }
            }
        }
        for a in &self.sc.arrivals {
            let t = origin + a.time_ns;
            if t < self.end_abs {
                self.push(
                    t,
                    Kind::Arrive,
                    Payload::Arrive(Arrival { time_ns: t, ..*a }),
                );
            }
        }
        Ok(())
    }

    fn issue_next(&mut self, i: usize, t: u64) {
        let spec = &self.sc.procs[i];
        let p = &mut self.procs[i];
        let size = u64::from(spec.size);
        let sector = if spec.random {
            let slots = (spec.span / size).max(1);
            spec.base + (splitmix64(&mut p.rng) % slots) * size
        } else {
            let s = p.next_sector;
            p.next_sector += size + spec.gap;
            if spec.span != 0 && p.next_sector + size > spec.base + spec.span {
                p.next_sector = spec.base;
            }
            s
        };
        let a = Arrival {
            time_ns: t,
            pid: spec.pid,
            write: spec.write,
            sync: spec.sync,
            fua: false,
            head: false,
            sector,
            sectors: spec.size,
        };
        self.push(t, Kind::Arrive, Payload::Arrive(a));
    }

    fn proc_index(&self, pid: u32) -> usize {
        self.sc
            .procs
            .iter()
            .position(|p| p.pid == pid)
            .expect("scenario validation checked the pid")
    }

    fn handle(&mut self, payload: Payload) -> Result<(), String> {
        match payload {
            Payload::Hrtimer(generation) => {
                self.dd.hrtimer_event(generation, self.now, &mut self.out)
            }
            Payload::Complete(rq) => self.complete(&rq),
            Payload::Rerun => {
                self.rerun_pending = false;
                let _ = writeln!(self.out, "R {}", self.now);
            }
            Payload::Tunable(t) => self.store_tunable(&t)?,
            Payload::Exit(pid) => {
                let i = self.proc_index(pid);
                self.procs[i].exited = true;
                let _ = writeln!(self.out, "X {} {pid}", self.now);
                let ioc = self.ioc_of(i);
                self.dd.exit(ioc, self.now, &mut self.out);
                self.exits[i] += 1;
            }
            Payload::Arrive(a) => self.submit(&a),
        }
        self.run_queue();
        for (at, generation) in self.dd.take_timer_arms() {
            self.push(at, Kind::Hrtimer, Payload::Hrtimer(generation));
        }
        Ok(())
    }

    /// The io context process `i` submits with: a new one after each exit.
    fn ioc_of(&self, i: usize) -> IoContextId {
        IoContextId(self.sc.procs[i].pid + (self.exits[i] << 24))
    }

    fn store_tunable(&mut self, t: &TunableSet) -> Result<(), String> {
        let now = if t.at_ns.is_none() { 0 } else { self.now };
        if let Some(path) = &t.cgroup {
            let id = bfq::cgroup_id(self.sc, path);
            let Some((shown, taken)) = self.dd.cgroup_weight(id, &t.value, self.now) else {
                let name = self.dd.elevator().name();
                return Err(format!("{name} has no cgroup weight file '{}'", t.name));
            };
            let rejected = if taken { "" } else { " rejected" };
            let _ = writeln!(self.out, "S {now} {}@{path} {shown}{rejected}", t.name);
            return Ok(());
        }
        let stored = self.dd.store(&t.name, &t.value, self.now, &mut self.out);
        if let Err(iosched_core::TunableError::Unknown { .. }) = stored {
            let name = self.dd.elevator().name();
            return Err(format!("{name} has no tunable '{}'", t.name));
        }
        let value = self
            .dd
            .elevator()
            .tunables()
            .iter()
            .find(|v| v.spec.name == t.name)
            .map(|v| v.value)
            .expect("a stored tunable is in the table");
        let shown = self.dd.show(value);
        let rejected = if stored.is_err() { " rejected" } else { "" };
        let _ = writeln!(self.out, "S {now} {} {shown}{rejected}", t.name);
        Ok(())
    }
}

mod bfq;
mod block;
mod sched;
