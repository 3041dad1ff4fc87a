//! Property test: backlogged groups of random weights, processes, depths and request sizes,
//! on a device of random parallelism, get their weight-ideal shares within the tolerance
//! bar; the invariants hold after every event.

use proptest::prelude::*;

use super::tests::{rd, sched};
use super::*;
use crate::trace::NoTrace;

/// A closed-loop process: `depth` requests of `sectors` outstanding, `think_ns` between a
/// completion and the next submission.
#[derive(Clone, Debug)]
struct Proc {
    cgroup: u32,
    depth: u32,
    sectors: u32,
    think_ns: Time,
}

/// A device of `units` servers, each request taking `base + sectors x per_sector` ns; more
/// requests than units wait in the device in arrival order.
struct Model {
    units: usize,
    base: Time,
    per_sector: Time,
    /// (completion time, request) of requests being served.
    serving: Vec<(Time, Request)>,
    waiting: VecDeque<Request>,
}

impl Model {
    fn start(&mut self, rq: Request, now: Time) {
        if self.serving.len() < self.units {
            let done = now + self.base + u64::from(rq.nr_sectors) * self.per_sector;
            self.serving.push((done, rq));
        } else {
            self.waiting.push_back(rq);
        }
    }
}

/// Runs the processes for `span` ns and returns the bytes each cgroup moved after `warm`.
fn run(procs: &[Proc], weights: &[u32], units: usize, span: Time, warm: Time) -> Vec<u64> {
    let groups: Vec<(u32, u32)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| (i as u32 + 1, w))
        .collect();
    let mut a = sched(false, 32, &groups);
    let mut m = Model {
        units,
        base: 60_000,
        per_sector: 200,
        serving: Vec::new(),
        waiting: VecDeque::new(),
    };
    let mut now: Time = 0;
    let mut next_id = 1u64;
    // Per process: outstanding requests and times their next submissions are due.
    let mut outstanding = vec![0u32; procs.len()];
    let mut due: Vec<Vec<Time>> = procs.iter().map(|p| vec![0; p.depth as usize]).collect();
    let mut bytes = vec![0u64; weights.len()];
    let mut timer: Option<Time> = None;
    while now < span {
        for (i, p) in procs.iter().enumerate() {
            due[i].retain(|&t| {
                if t <= now {
                    let rq = rd(next_id, i as u32 + 1, p.cgroup, next_id * 4096, p.sectors);
                    a.insert(rq, now, &mut NoTrace);
                    next_id += 1;
                    outstanding[i] += 1;
                    false
                } else {
                    true
                }
            });
        }
        if timer.is_some_and(|t| t <= now) {
            timer = None;
            a.timer(now, &mut NoTrace);
        }
        while m.serving.len() + m.waiting.len() < 32 {
            match a.dispatch(now, &mut NoTrace) {
                Dispatch::Request(rq) => m.start(rq, now),
                Dispatch::IdleUntil(t) => {
                    assert!(t > now, "idle deadline in the past");
                    timer = Some(t);
                    break;
                }
                Dispatch::Empty => break,
            }
        }
        a.check_invariants();
        // Next event: a completion, a submission or the timer.
        let next_done = m.serving.iter().map(|s| s.0).min();
        let next_due = due.iter().flatten().copied().min();
        let next = [next_done, next_due, timer]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(span);
        now = next.max(now);
        while let Some(k) = m.serving.iter().position(|s| s.0 <= now) {
            let (_, rq) = m.serving.swap_remove(k);
            a.completed(&rq, now, &mut NoTrace);
            let i = (rq.pid - 1) as usize;
            outstanding[i] -= 1;
            due[i].push(now + procs[i].think_ns);
            if now >= warm {
                bytes[(rq.cgroup.0 - 1) as usize] += rq.bytes();
            }
            if let Some(w) = m.waiting.pop_front() {
                m.start(w, now);
            }
        }
    }
    bytes
}

fn procs_strategy() -> impl Strategy<Value = (Vec<u32>, Vec<Proc>, usize)> {
    (2usize..=4, 1usize..=16, any::<bool>())
        .prop_flat_map(|(groups, units, thinking)| {
            let weights =
                prop::collection::vec(prop::sample::select(vec![100u32, 300, 500, 1000]), groups);
            let procs = prop::collection::vec(
                (
                    1..=groups as u32,
                    1u32..=4,
                    prop::sample::select(vec![8u32, 64, 256]),
                    0u64..20_000,
                ),
                groups..=2 * groups,
            );
            (weights, procs, Just(units), Just(thinking))
        })
        .prop_map(|(weights, raw, units, thinking)| {
            let mut procs: Vec<Proc> = raw
                .into_iter()
                .map(|(cgroup, depth, sectors, think_ns)| Proc {
                    cgroup,
                    depth,
                    sectors,
                    think_ns: if thinking { think_ns } else { 0 },
                })
                .collect();
            // Every group has at least one process.
            for g in 1..=weights.len() as u32 {
                if !procs.iter().any(|p| p.cgroup == g) {
                    procs.push(Proc {
                        cgroup: g,
                        depth: 2,
                        sectors: 8,
                        think_ns: 0,
                    });
                }
            }
            (weights, procs, units)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Groups that always have a request out get their weights' shares within 10 %
    /// (relative). With think time a group is owed only its share of the moments it has
    /// one out (`gap`), which this closed-loop model phase-locks: a light group's every
    /// completion can fall in a heavy one's 3 us gap, so those cases check the invariants
    /// only (the shares owed while backlogged are checked on the simulator's devices,
    /// tests/adaptive.rs).
    #[test]
    fn backlogged_groups_get_their_weights((weights, procs, units) in procs_strategy()) {
        if procs.iter().all(|p| p.think_ns == 0) {
            within_their_weights(&weights, &procs, units)?;
        } else {
            run(&procs, &weights, units, 1_000_000_000, 0);
        }
    }
}

/// Bytes are counted from the end of the first share window (500 ms, the tunable's
/// default): the first window runs without a measured allowance or window shares to bound
/// loans, so only later windows are held to the bar.
fn within_their_weights(
    weights: &[u32],
    procs: &[Proc],
    units: usize,
) -> Result<(), TestCaseError> {
    let bytes = run(procs, weights, units, 2_500_000_000, 500_000_000);
    let total: u64 = bytes.iter().sum();
    let wsum: u32 = weights.iter().sum();
    for (g, &b) in bytes.iter().enumerate() {
        let share = b as f64 / total as f64;
        let ideal = f64::from(weights[g]) / f64::from(wsum);
        prop_assert!(
            (share - ideal).abs() / ideal <= 0.10,
            "group {} weight {}: share {:.3} ideal {:.3} ({:?})",
            g + 1,
            weights[g],
            share,
            ideal,
            bytes
        );
    }
    Ok(())
}

/// The case CI drew on 2026-11-28: a 128 KiB reader (weight 100) beside 4 KiB ones of
/// weights 100 and 1000 on ten units held 111 % of its share counted from 200 ms (129 % in
/// the first window, 106-107 % after it: the lend bound).
#[test]
fn a_large_request_reader_beside_small_ones_stays_within_the_bar() {
    let p = |cgroup, depth, sectors, think_ns| Proc {
        cgroup,
        depth,
        sectors,
        think_ns,
    };
    let procs = [
        p(2, 2, 8, 0),
        p(2, 1, 256, 9322),
        p(3, 1, 256, 0),
        p(1, 2, 8, 0),
    ];
    within_their_weights(&[100, 1000, 100], &procs, 10).unwrap();
}
