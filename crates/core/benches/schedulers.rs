//! ns per request (insert + dispatch + complete) by scheduler and number of busy queues.
//!
//! Each process keeps two requests queued; one iteration dispatches one request, completes
//! it 100 µs later (virtual time) and inserts that process's next request, so the number of
//! busy queues stays fixed. Idle deadlines returned by `dispatch` are fired at once.
//!
//! mq-deadline and kyber have no per-queue or per-group state: their 8-group cases only
//! spread the same processes over cgroups, to show the cost does not change.
//!
//! `CARGO_TARGET_DIR=/work/target-cfq cargo bench -p iosched-core --bench schedulers`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
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

fn schedulers(c: &mut Criterion) {
    let mut group = c.benchmark_group("request");
    group.throughput(Throughput::Elements(1));
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    let cases: [(&str, &str, usize, u32); 20] = [
        ("noop/16", "noop", 16, 0),
        ("mq-deadline/1", "mq-deadline", 1, 0),
        ("mq-deadline/16", "mq-deadline", 16, 0),
        ("mq-deadline/256", "mq-deadline", 256, 0),
        ("mq-deadline/16q-8groups", "mq-deadline", 16, 8),
        ("mq-deadline/256q-8groups", "mq-deadline", 256, 8),
        ("kyber/1", "kyber", 1, 0),
        ("kyber/16", "kyber", 16, 0),
        ("kyber/256", "kyber", 256, 0),
        ("kyber/16q-8groups", "kyber", 16, 8),
        ("kyber/256q-8groups", "kyber", 256, 8),
        ("cfq/1", "cfq", 1, 0),
        ("cfq/16", "cfq", 16, 0),
        ("cfq/256", "cfq", 256, 0),
        ("cfq/16q-8groups", "cfq", 16, 8),
        ("cfq/256q-8groups", "cfq", 256, 8),
        ("bfq/1", "bfq", 1, 0),
        ("bfq/16", "bfq", 16, 0),
        ("bfq/256", "bfq", 256, 0),
        ("bfq/256q-8groups", "bfq", 256, 8),
    ];
    for (label, name, procs, groups) in cases {
        let mut bench = Bench::new(name, procs, groups);
        group.bench_function(label, |b| b.iter(|| bench.step()));
    }
    group.finish();
}

criterion_group!(benches, schedulers);
criterion_main!(benches);
