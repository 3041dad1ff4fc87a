//! ns per request (insert + dispatch + complete) by scheduler and number of busy queues.
//!
//! Each process keeps two requests queued; one iteration dispatches one request, completes
//! it 100 µs later (virtual time) and inserts that process's next request, so the number of
//! busy queues stays fixed. Idle deadlines returned by `dispatch` are fired at once.
//!
//! What a "queue" is differs by scheduler. CFQ and BFQ keep one queue per process (`cfqq`,
//! `bfqq`), so N queues are N processes. mq-deadline and kyber have no per-process state:
//! their N "queues" are N submitting processes, each at its own region of the disk, whose
//! requests share mq-deadline's sort trees and FIFOs or kyber's domain lists. Likewise
//! only CFQ and BFQ have per-group state; the 8-group cases of mq-deadline and kyber only
//! spread the same processes over cgroups, to show the cost does not change. One queue in
//! 8 groups would use one group, so the group cases are 16 and 256 queues.
//!
//! The clock is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not the wall clock: on a
//! shared machine the wall clock counts the time other processes hold the CPU.
//! `IOSCHED_BENCH_CLOCK=wall` measures wall time instead.
//!
//! `cargo bench -p iosched-core --bench schedulers [-- FILTER]`
//!
//! For instruction counts (callgrind), `IOSCHED_BENCH_STEPS=N` runs each case matching
//! the filter for N requests after its set-up, without criterion:
//! `scripts/bench-schedulers-callgrind` runs two step counts and reports the difference
//! per request.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput};
use iosched_core::{
    new_elevator, CgroupId, CgroupSpec, DeviceInfo, Dispatch, Elevator, IoContextId, IoPrio,
    NoTrace, Op, ReqFlags, Request, RequestId, Time,
};

struct Bench {
    elevator: Box<dyn Elevator>,
    now: Time,
    next_id: u64,
    /// Next sector per process.
    pos: Vec<u64>,
    groups: u32,
}

impl Bench {
    fn new(name: &str, procs: usize, groups: u32) -> Bench {
        let device = DeviceInfo {
            rotational: true,
            queue_depth: 1,
        };
        let mut elevator = new_elevator(name, device).expect("known scheduler");
        for g in 1..=groups {
            elevator.add_cgroup(
                CgroupSpec {
                    id: CgroupId(g),
                    parent: CgroupId::ROOT,
                    weight: 100 * g,
                    leaf_weight: 100 * g,
                },
                0,
            );
        }
        let mut bench = Bench {
            elevator,
            now: 0,
            next_id: 0,
            pos: vec![0; procs],
            groups,
        };
        for pid in 0..procs {
            bench.insert(pid);
            bench.insert(pid);
        }
        bench
    }

    fn insert(&mut self, pid: usize) {
        self.next_id += 1;
        let cgroup = if self.groups == 0 {
            0
        } else {
            pid as u32 % self.groups + 1
        };
        let rq = Request {
            id: RequestId(self.next_id),
            sector: ((pid as u64) << 32) + self.pos[pid],
            nr_sectors: 8,
            op: Op::Read,
            flags: ReqFlags::default(),
            pid: pid as u32 + 1,
            ioc: IoContextId(pid as u32 + 1),
            cgroup: CgroupId(cgroup),
            ioprio: IoPrio::none(),
        };
        self.pos[pid] += 8;
        self.elevator.insert(rq, self.now, &mut NoTrace);
    }

    /// One request through: dispatch, complete, refill.
    fn step(&mut self) {
        loop {
            match self.elevator.dispatch(self.now, &mut NoTrace) {
                Dispatch::Request(rq) => {
                    self.now += 100_000;
                    self.elevator.completed(&rq, self.now, &mut NoTrace);
                    self.insert(rq.pid as usize - 1);
                    black_box(rq);
                    return;
                }
                Dispatch::IdleUntil(t) => {
                    self.now = t;
                    self.elevator.timer(t, &mut NoTrace);
                }
                Dispatch::Empty => panic!("backlogged scheduler went empty"),
            }
        }
    }
}

/// Schedulers measured, and the (queues, groups) of each case.
const SCHEDULERS: [&str; 4] = ["mq-deadline", "kyber", "cfq", "bfq"];
const SHAPES: [(usize, u32); 5] = [(1, 0), (16, 0), (256, 0), (16, 8), (256, 8)];

/// Every case as (label, scheduler, queues, groups); noop once, as the floor.
fn cases() -> Vec<(String, &'static str, usize, u32)> {
    let mut cases = vec![("noop/16".to_string(), "noop", 16, 0)];
    for name in SCHEDULERS {
        for (procs, groups) in SHAPES {
            let label = match groups {
                0 => format!("{name}/{procs}"),
                g => format!("{name}/{procs}q-{g}groups"),
            };
            cases.push((label, name, procs, groups));
        }
    }
    cases
}

/// The calling thread's CPU time, as criterion measures it.
struct ThreadCpuTime;

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = Duration;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> Duration {
        Duration::from_nanos(thread_cpu_ns() - start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}

fn run<M: Measurement>(c: &mut Criterion<M>) {
    let mut group = c.benchmark_group("request");
    group.throughput(Throughput::Elements(1));
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    for (label, name, procs, groups) in cases() {
        let mut bench = Bench::new(name, procs, groups);
        group.bench_function(label, |b| b.iter(|| bench.step()));
    }
    group.finish();
}

/// Callgrind mode: `steps` requests through the case labelled `filter` (every case without).
fn run_steps(steps: u64, filter: Option<&str>) {
    let known = cases();
    if let Some(f) = filter.filter(|f| !known.iter().any(|c| c.0 == *f)) {
        eprintln!("schedulers: no case {f:?}");
        std::process::exit(2);
    }
    for (label, name, procs, groups) in known {
        if filter.is_some_and(|f| label != f) {
            continue;
        }
        let mut bench = Bench::new(name, procs, groups);
        for _ in 0..steps {
            bench.step();
        }
        black_box(bench.now);
    }
}

fn main() {
    if let Ok(steps) = std::env::var("IOSCHED_BENCH_STEPS") {
        let steps: u64 = steps.parse().expect("IOSCHED_BENCH_STEPS is a count");
        let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
        run_steps(steps, filter.as_deref());
        return;
    }
    let wall = std::env::var("IOSCHED_BENCH_CLOCK").is_ok_and(|c| c == "wall");
    if wall {
        let mut c = Criterion::default().configure_from_args();
        run(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default()
            .with_measurement(ThreadCpuTime)
            .configure_from_args();
        run(&mut c);
        c.final_summary();
    }
}
