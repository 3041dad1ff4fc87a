//! Property tests: B-WF2Q+ shares, no idling with `slice_idle` 0, and the invariants, over
//! random workloads run through a small closed-loop device model.

use proptest::prelude::*;

use super::tests::{req, UP};
use super::*;
use crate::request::{IoPrio, IoPrioClass, Op};
use crate::trace::NoTrace;

/// One process of a closed-loop workload.
#[derive(Clone, Debug)]
struct Proc {
    pid: u32,
    op: Op,
    level: u8,
    sectors: u32,
    seq: bool,
    depth: usize,
    /// When the process starts submitting.
    start: Time,
}

/// A device serving `depth` requests at a time, each in `base + sectors * per_sector` ns.
struct Sim {
    bfq: Bfq,
    now: Time,
    depth: usize,
    base: u64,
    per_sector: u64,
    in_flight: Vec<(Time, Request)>,
    next_id: u64,
    next_pos: Vec<u64>,
    outstanding: Vec<usize>,
    served: Vec<u64>,
    rng: u64,
    events: u64,
    /// Service is counted from this time on.
    measure_from: Time,
}

impl Sim {
    fn new(device: DeviceInfo, procs: usize, base: u64, per_sector: u64, seed: u64) -> Sim {
        Sim {
            bfq: Bfq::new(device, UP),
            now: UP,
            depth: device.queue_depth as usize,
            base,
            per_sector,
            in_flight: Vec::new(),
            next_id: 1,
            next_pos: (0..procs as u64).map(|p| p * 100_000_000).collect(),
            outstanding: vec![0; procs],
            served: vec![0; procs],
            rng: seed | 1,
            events: 0,
            measure_from: UP,
        }
    }

    fn rand(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// Tops process `i` up to its depth.
    fn submit(&mut self, i: usize, p: &Proc) {
        if self.now < p.start {
            return;
        }
        while self.outstanding[i] < p.depth {
            let sector = if p.seq {
                self.next_pos[i]
            } else {
                i as u64 * 100_000_000 + self.rand() % 50_000_000
            };
            self.next_pos[i] = sector + u64::from(p.sectors);
            let mut rq = req(self.next_id, p.pid, p.op, sector, p.sectors);
            rq.ioprio = IoPrio {
                class: IoPrioClass::BestEffort,
                level: p.level,
            };
            self.next_id += 1;
            self.outstanding[i] += 1;
            self.bfq.insert(rq, self.now, &mut NoTrace);
        }
    }

    /// Fills the device; returns the idle deadline if BFQ answered one.
    fn pump(&mut self) -> Option<Time> {
        while self.in_flight.len() < self.depth {
            match self.bfq.dispatch(self.now, &mut NoTrace) {
                Dispatch::Request(rq) => {
                    let done = self.now + self.base + u64::from(rq.nr_sectors) * self.per_sector;
                    self.in_flight.push((done, rq));
                }
                Dispatch::IdleUntil(t) => return Some(t),
                Dispatch::Empty => return None,
            }
        }
        None
    }

    /// Runs until `end`, keeping every process backlogged; `check` sees each dispatch round.
    fn run(&mut self, procs: &[Proc], end: Time, mut check: impl FnMut(&Sim, Option<Time>)) {
        let pid_index = |pid: u32| procs.iter().position(|p| p.pid == pid).expect("known pid");
        let mut starts: Vec<(Time, usize)> = procs
            .iter()
            .enumerate()
            .map(|(i, p)| (p.start, i))
            .collect();
        starts.sort();
        starts.reverse();
        while self.now < end {
            while starts.last().is_some_and(|&(t, _)| t <= self.now) {
                let (_, i) = starts.pop().expect("checked");
                self.submit(i, &procs[i]);
            }
            let idle = self.pump();
            check(self, idle);
            self.in_flight.sort_by_key(|&(t, rq)| (t, rq.id));
            let mut next_done = self.in_flight.first().map(|&(t, _)| t);
            if let Some(&(start, _)) = starts.last() {
                if next_done.is_none_or(|t| start < t) && idle.is_none_or(|i| start < i) {
                    self.now = start;
                    continue;
                }
                next_done = next_done.filter(|&t| t <= start);
            }
            match (next_done, idle) {
                (Some(t), Some(i)) if i < t => {
                    self.now = i;
                    self.bfq.timer(i, &mut NoTrace);
                }
                (Some(t), _) => {
                    let (_, rq) = self.in_flight.remove(0);
                    self.now = t;
                    self.bfq.completed(&rq, t, &mut NoTrace);
                    let i = pid_index(rq.pid);
                    if t >= self.measure_from {
                        self.served[i] += u64::from(rq.nr_sectors);
                    }
                    self.outstanding[i] -= 1;
                    self.submit(i, &procs[i]);
                }
                (None, Some(i)) => {
                    self.now = i;
                    self.bfq.timer(i, &mut NoTrace);
                }
                (None, None) => break,
            }
            // The O(n) walk every 256 events keeps debug runs short.
            self.events += 1;
            if self.events.is_multiple_of(256) {
                self.bfq.check_invariants();
            }
        }
    }
}

fn proc_strategy() -> impl Strategy<Value = Proc> {
    (
        1u32..1000,
        prop::bool::ANY,
        0u8..8,
        1u32..=256,
        prop::bool::ANY,
        1usize..=4,
    )
        .prop_map(|(pid, write, level, sectors, seq, depth)| Proc {
            pid,
            op: if write { Op::Write } else { Op::Read },
            level,
            sectors,
            seq,
            depth,
            start: UP,
        })
}

fn distinct(mut procs: Vec<Proc>) -> Vec<Proc> {
    procs.sort_by_key(|p| p.pid);
    procs.dedup_by_key(|p| p.pid);
    procs
}

/// 200 ms between process starts: more than `burst_interval` (180 ms), so BFQ does not
/// stable-merge processes started together (bfq_do_or_sched_stable_merge()), which would
/// serve them as one queue.
const STAGGER: Time = 200_000_000;

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Kernel: B-WF2Q+ (bfq-wf2q.c): in a symmetric scenario (same class and weight,
    /// sequential sync readers, no raising) every backlogged queue gets its weight's share
    /// of the service (sectors), within 5 %.
    #[test]
    fn symmetric_backlogged_queues_get_equal_service(n in 2usize..5, sectors in 128u32..=512, seed in 1u64..u64::MAX, rotational in prop::bool::ANY) {
        let procs: Vec<Proc> = (0..n as u32)
            .map(|i| Proc { pid: 100 + i, op: Op::Read, level: 4, sectors, seq: true, depth: 4, start: UP + u64::from(i) * STAGGER })
            .collect();
        let mut sim = Sim::new(DeviceInfo { rotational, queue_depth: 1 }, n, 50_000, 500, seed);
        sim.bfq.set_tunable("low_latency", "0").unwrap();
        // Shares hold over many budgets: a smaller largest budget gives more of them.
        sim.bfq.set_tunable("max_budget", "2048").unwrap();
        sim.measure_from = UP + n as u64 * STAGGER;
        sim.run(&procs, UP + 4 * 1_000_000_000, |_, _| {});
        let total: u64 = sim.served.iter().sum();
        for (i, &s) in sim.served.iter().enumerate() {
            let share = s as f64 / total as f64;
            let want = 1.0 / n as f64;
            prop_assert!((share - want).abs() <= 0.05 * want, "queue {i}: share {share:.4}, want {want:.4}, served {:?}", sim.served);
        }
    }

    /// Kernel: B-WF2Q+ with ioprio weights (bfq_ioprio_to_weight(): (8 - level) * 10): with
    /// idling keeping each queue's budget to itself, backlogged queues of different levels
    /// share the service by weight, within 5 %.
    #[test]
    fn backlogged_queues_share_by_weight(levels in prop::collection::vec(0u8..8, 2..4), seed in 1u64..u64::MAX) {
        let procs: Vec<Proc> = levels.iter().enumerate()
            .map(|(i, &level)| Proc { pid: 100 + i as u32, op: Op::Read, level, sectors: 256, seq: true, depth: 4, start: UP + i as u64 * STAGGER })
            .collect();
        let mut sim = Sim::new(DeviceInfo { rotational: true, queue_depth: 1 }, procs.len(), 50_000, 500, seed);
        sim.bfq.set_tunable("low_latency", "0").unwrap();
        sim.bfq.set_tunable("max_budget", "2048").unwrap();
        sim.measure_from = UP + procs.len() as u64 * STAGGER;
        sim.run(&procs, UP + 6 * 1_000_000_000, |_, _| {});
        let weights: Vec<f64> = levels.iter().map(|&l| f64::from(8 - u32::from(l)) * 10.0).collect();
        let wsum: f64 = weights.iter().sum();
        let total: u64 = sim.served.iter().sum();
        for (i, &s) in sim.served.iter().enumerate() {
            let share = s as f64 / total as f64;
            let want = weights[i] / wsum;
            prop_assert!((share - want).abs() <= 0.05 * want, "queue {i} level {}: share {share:.4}, want {want:.4}, served {:?}", levels[i], sim.served);
        }
    }

    /// Kernel: bfq_better_to_idle() returns false with `slice_idle` 0 (and
    /// strict_guarantees off): whatever the workload, whenever requests wait and the device
    /// has room, dispatch hands one out; BFQ never answers an idle deadline.
    #[test]
    fn slice_idle_0_never_idles_while_requests_wait(procs in prop::collection::vec(proc_strategy(), 1..6), depth in 1u32..8, rotational in prop::bool::ANY, seed in 1u64..u64::MAX) {
        let procs = distinct(procs);
        let mut sim = Sim::new(DeviceInfo { rotational, queue_depth: depth }, procs.len(), 100_000, 1000, seed);
        sim.bfq.set_tunable("slice_idle", "0").unwrap();
        let mut violations = Vec::new();
        sim.run(&procs, UP + 500_000_000, |s, idle| {
            if idle.is_some() || (s.bfq.queued() > 0 && s.in_flight.len() < s.depth) {
                violations.push((s.now, s.bfq.queued(), s.in_flight.len(), idle));
            }
        });
        prop_assert!(violations.is_empty(), "device left idle with requests waiting: {:?}", &violations[..violations.len().min(5)]);
    }

    /// Every request inserted is dispatched and completed once, under any tunables the
    /// workload meets; the O(n) invariants hold after every event (checked inside `run`).
    #[test]
    fn every_request_completes_once(procs in prop::collection::vec(proc_strategy(), 1..6), depth in 1u32..8, low_latency in prop::bool::ANY, strict in prop::bool::ANY, seed in 1u64..u64::MAX) {
        let procs = distinct(procs);
        let mut sim = Sim::new(DeviceInfo { rotational: true, queue_depth: depth }, procs.len(), 100_000, 1000, seed);
        sim.bfq.set_tunable("low_latency", if low_latency { "1" } else { "0" }).unwrap();
        sim.bfq.set_tunable("strict_guarantees", if strict { "1" } else { "0" }).unwrap();
        sim.run(&procs, UP + 500_000_000, |_, _| {});
        let completed: u64 = sim.served.iter().sum();
        prop_assert!(completed > 0);
        let outstanding: usize = sim.outstanding.iter().sum();
        prop_assert_eq!(outstanding, sim.bfq.queued() + sim.in_flight.len());
    }
}
