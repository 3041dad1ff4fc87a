//! Scenario tests per BFQ rule over a scripted clock. Each names the kernel function whose
//! rule it checks; the expected values are worked out from Linux 6.12's bfq-iosched.c and
//! bfq-wf2q.c (constants and formulas cited in the modules), not from this implementation.
//!
//! Mutations tried, each applied alone to a copy and `cargo test -p iosched-core --lib bfq::`
//! run: caught (a test failed) — budget feedback ×4 → ×2, the 2 ms cap of a seeky queue's
//! idle dropped, the budget-exhausted check of bfq_select_queue disabled, the async charge
//! factor 3 → 1, the strict_guarantees dispatch limit dropped, the `slice_idle == 0` test of
//! bfq_better_to_idle dropped, wr_coeff not applied to the weight, the class test of
//! bfq_bfqq_higher_class_or_weight dropped, bfq_check_fifo never returning, the budget
//! timeout never expiring, bfq_calc_finish ignoring the weight. Missed: the large-burst
//! threshold off by one (caught since, by `eighth_queue_of_a_burst_makes_it_large` checking
//! the eighth queue), and the eligibility test of bfq_first_active_entity dropped (no test
//! has an ineligible entity with a smaller finish time yet).

use super::*;
use crate::request::{IoPrio, IoPrioClass, Op, ReqFlags, RequestId, NSEC_PER_MSEC};

pub(crate) const MS: Time = NSEC_PER_MSEC;
/// 1000 s of uptime: jiffies-based stamps (budget timeouts at "smallest from now") behave
/// as on a machine up for a while.
pub(crate) const UP: Time = 1000 * 1_000_000_000;

/// A recorded decision: time, kind, queue pid, reason, value.
pub(crate) type Logged = (Time, DecisionKind, Option<u32>, String, Option<u64>);

/// A trace that keeps every message and decision.
#[derive(Default)]
pub(crate) struct Rec {
    pub msgs: Vec<(Time, String)>,
    pub decisions: Vec<Logged>,
}

impl Trace for Rec {
    fn enabled(&self) -> bool {
        true
    }
    fn message(&mut self, now: Time, _subject: MessageSubject, text: &str) {
        self.msgs.push((now, text.to_string()));
    }
    fn decision(&mut self, now: Time, d: &Decision<'_>) {
        self.decisions
            .push((now, d.kind, d.queue, d.reason.to_string(), d.value_ns));
    }
}

impl Rec {
    pub(crate) fn any(&self, text: &str) -> bool {
        self.msgs.iter().any(|(_, m)| m.contains(text))
    }
    pub(crate) fn last(&self, kind: DecisionKind) -> Option<&Logged> {
        self.decisions.iter().rev().find(|d| d.1 == kind)
    }
}

pub(crate) fn rot() -> Bfq {
    Bfq::new(
        DeviceInfo {
            rotational: true,
            queue_depth: 32,
        },
        UP,
    )
}

/// A request of process `pid` (its own io context) in the root group.
pub(crate) fn req(id: u64, pid: u32, op: Op, sector: u64, sectors: u32) -> Request {
    Request {
        id: RequestId(id),
        sector,
        nr_sectors: sectors,
        op,
        flags: ReqFlags::default(),
        pid,
        ioc: IoContextId(pid),
        cgroup: CgroupId::ROOT,
        ioprio: IoPrio::none(),
    }
}

pub(crate) fn read(id: u64, pid: u32, sector: u64, sectors: u32) -> Request {
    req(id, pid, Op::Read, sector, sectors)
}

fn dispatched(b: &mut Bfq, now: Time, t: &mut dyn Trace) -> Request {
    match b.dispatch(now, t) {
        Dispatch::Request(rq) => rq,
        other => panic!("expected a request at {now}, got {other:?}"),
    }
}

/// Kernel: bfq_completed_request() + bfq_arm_slice_timer(): a sync queue emptied on a
/// rotational drive without queueing is idled for `slice_idle` (8 ms) after its completion.
#[test]
fn idles_after_sync_read_on_rotational() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 1000, 8), UP, &mut t);
    let rq = dispatched(&mut b, UP, &mut t);
    b.completed(&rq, UP + MS, &mut t);
    assert_eq!(
        b.dispatch(UP + MS, &mut t),
        Dispatch::IdleUntil(UP + 9 * MS)
    );
    let armed = t.last(DecisionKind::ArmIdle).expect("arm_idle decision");
    assert_eq!(armed.4, Some(8 * MS));
    b.check_invariants();
    // Kernel: bfq_idle_slice_timer_body(): no request came: the queue expires as too idle.
    b.timer(UP + 9 * MS, &mut t);
    assert!(
        t.any("expire (0, slow 0, num_disp 0, short_ttime 1)"),
        "{:?}",
        t.msgs
    );
    assert_eq!(b.dispatch(UP + 9 * MS, &mut t), Dispatch::Empty);
}

/// Kernel: bfq_better_to_idle(): `slice_idle` 0 never idles; the queue expires with no
/// more requests (reason 3).
#[test]
fn no_idling_with_slice_idle_0() {
    let mut b = rot();
    b.set_tunable("slice_idle", "0").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 1000, 8), UP, &mut t);
    let rq = dispatched(&mut b, UP, &mut t);
    b.completed(&rq, UP + MS, &mut t);
    assert_eq!(b.dispatch(UP + MS, &mut t), Dispatch::Empty);
    assert!(t.any("expire (3,"), "{:?}", t.msgs);
    assert_eq!(
        t.last(DecisionKind::NoIdle).map(|d| d.3.as_str()),
        Some("slice_idle_0")
    );
}

/// Kernel: bfq_select_queue() + __bfq_bfqq_recalc_budget(): a sync queue whose next request
/// does not fit its budget expires (BFQQE_BUDGET_EXHAUSTED, 2) and its `max_budget` is
/// multiplied by four, capped at `bfq_max_budget` (16384 before 194 budgets were assigned).
#[test]
fn budget_exhausted_quadruples_max_budget() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    for i in 0..8 {
        b.insert(read(i + 1, 10, 1000 + i * 2048, 2048), UP, &mut t);
    }
    let q = b.bics[&IoContextId(10)].bfqq[1].unwrap();
    // bfq_init_bfqq(): max_budget = 2/3 of bfq_default_max_budget.
    assert_eq!(b.q(q).max_budget, 2 * 16384 / 3);
    for _ in 0..5 {
        dispatched(&mut b, UP, &mut t);
    }
    // 5 * 2048 = 10240 served, 682 left: the sixth request (2048) does not fit.
    dispatched(&mut b, UP, &mut t);
    assert!(
        t.any("expire (2, slow 0, num_disp 5, short_ttime 1)"),
        "{:?}",
        t.msgs
    );
    assert_eq!(
        t.last(DecisionKind::SliceExpired).unwrap().3,
        "budget_exhausted"
    );
    assert_eq!(b.q(q).max_budget, 16384);
    b.check_invariants();
}

/// Kernel: __bfq_bfqq_recalc_budget(), BFQQE_NO_MORE_REQUESTS: the new budget is what the
/// queue used, but at least `bfq_min_budget` (16384 / 32 = 512).
#[test]
fn no_more_requests_budget_is_service_used() {
    let mut b = rot();
    b.set_tunable("slice_idle", "0").unwrap();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 1000, 64), UP, &mut t);
    let q = b.bics[&IoContextId(10)].bfqq[1].unwrap();
    let rq = dispatched(&mut b, UP, &mut t);
    b.completed(&rq, UP + MS, &mut t);
    assert_eq!(b.q(q).max_budget, 512);
}

/// Kernel: bfq_serv_to_charge(): an async request of a non-raised queue in a symmetric
/// scenario is charged three times its sectors (bfq_async_charge_factor).
#[test]
fn async_requests_are_charged_three_times() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    b.insert(req(1, 10, Op::Write, 1000, 8), UP, &mut t);
    dispatched(&mut b, UP, &mut t);
    assert!(t.any("bfqq_served 24 secs"), "{:?}", t.msgs);
}

/// Kernel: bfq_arm_slice_timer(): a seeky queue (more than 19 of its last 32 requests more
/// than 800 sectors from the previous) in a symmetric scenario is idled for at most
/// BFQ_MIN_TT (2 ms).
#[test]
fn seeky_queue_idles_2ms() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    let mut now = UP;
    for i in 0..40u64 {
        // Far apart, alternating: every request is a seek.
        let sector = if i % 2 == 0 {
            10_000_000 + i * 5000
        } else {
            100 + i * 5000
        };
        b.insert(read(i + 1, 10, sector, 8), now, &mut t);
        let rq = dispatched(&mut b, now, &mut t);
        now += MS;
        b.completed(&rq, now, &mut t);
        now += 100_000;
    }
    let q = b.bics[&IoContextId(10)].bfqq[1].unwrap();
    assert!(b.bfqq_seeky(q));
    let armed = t.last(DecisionKind::ArmIdle).expect("idling armed");
    assert_eq!(armed.4, Some(2 * MS));
}

/// Kernel: bfq_bfqq_handle_idle_busy_switch() + bfq_update_bfqq_wr_on_rq_arrival(): under
/// low_latency a new sync queue of default weight (idle "for long": it never ran) is raised
/// as interactive: weight 40 * wr_coeff (30) = 1200, and it is idled for at least 20 ms.
#[test]
fn new_sync_queue_is_weight_raised_interactive() {
    let mut b = rot();
    b.set_tunable("slice_idle_us", "1000").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 1000, 8), UP, &mut t);
    let q = b.bics[&IoContextId(10)].bfqq[1].unwrap();
    assert_eq!(b.q(q).wr_coeff, 30);
    let wr = t
        .last(DecisionKind::WeightRaise)
        .expect("weight raising started");
    assert_eq!(wr.3, "interactive");
    let rq = dispatched(&mut b, UP, &mut t);
    assert_eq!(b.qe(q).weight, 1200);
    b.completed(&rq, UP + MS, &mut t);
    assert_eq!(
        b.dispatch(UP + MS, &mut t),
        Dispatch::IdleUntil(UP + 21 * MS)
    );
}

/// Kernel: bfq_bfqq_handle_idle_busy_switch(): with low_latency off nothing is raised.
#[test]
fn low_latency_off_raises_nothing() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 1000, 8), UP, &mut t);
    let q = b.bics[&IoContextId(10)].bfqq[1].unwrap();
    assert_eq!(b.q(q).wr_coeff, 1);
    assert!(t.last(DecisionKind::WeightRaise).is_none());
}

/// Kernel: __bfq_dispatch_request(): with strict_guarantees BFQ keeps at most one request
/// in the device.
#[test]
fn strict_guarantees_one_request_in_the_device() {
    let mut b = rot();
    b.set_tunable("strict_guarantees", "1").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 1000, 8), UP, &mut t);
    b.insert(read(2, 10, 1008, 8), UP, &mut t);
    let first = dispatched(&mut b, UP, &mut t);
    assert!(!matches!(b.dispatch(UP, &mut t), Dispatch::Request(_)));
    b.completed(&first, UP + MS, &mut t);
    dispatched(&mut b, UP + MS, &mut t);
}

/// Kernel: bfq_bfqq_handle_idle_busy_switch() + bfq_bfqq_higher_class_or_weight(): while
/// BFQ idles for a best-effort queue, a real-time queue's arrival preempts it (expire
/// reason 4), and B-WF2Q+ serves the RT class first (bfq_lookup_next_entity()).
#[test]
fn realtime_queue_preempts_best_effort() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 1000, 8), UP, &mut t);
    let rq = dispatched(&mut b, UP, &mut t);
    b.completed(&rq, UP + MS, &mut t);
    assert!(matches!(
        b.dispatch(UP + MS, &mut t),
        Dispatch::IdleUntil(_)
    ));
    let mut rt = read(2, 20, 900_000, 8);
    rt.ioprio = IoPrio {
        class: IoPrioClass::RealTime,
        level: 4,
    };
    b.insert(rt, UP + 2 * MS, &mut t);
    assert!(t.any("expire (4,"), "{:?}", t.msgs);
    assert_eq!(
        t.last(DecisionKind::Preempt).unwrap().3,
        "higher_class_or_weight"
    );
    assert_eq!(dispatched(&mut b, UP + 2 * MS, &mut t).id, RequestId(2));
}

/// Kernel: bfq_may_expire_for_budg_timeout(): a queue still holding the device
/// `timeout_sync` (31 jiffies) after its budget started expires with BFQQE_BUDGET_TIMEOUT
/// (1) at its next dispatch, and is charged for the time (bfq_bfqq_charge_time()).
#[test]
fn budget_timeout_expires_slow_queue() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    for i in 0..20 {
        b.insert(read(i + 1, 10, 1000 + i * 8, 8), UP, &mut t);
    }
    let mut now = UP;
    for _ in 0..13 {
        let rq = dispatched(&mut b, now, &mut t);
        now += 10 * MS;
        b.completed(&rq, now, &mut t);
    }
    assert!(t.any("expire (1, slow 1"), "{:?}", t.msgs);
    assert_eq!(
        t.last(DecisionKind::SliceExpired).unwrap().3,
        "budget_timeout"
    );
}

/// Kernel: bfq_check_fifo(): once per budget, a request past its FIFO deadline
/// (`fifo_expire_sync`, 125 ms) is served before the sector order's choice.
#[test]
fn expired_fifo_head_goes_first() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 50_000, 8), UP, &mut t);
    b.insert(read(2, 10, 1000, 8), UP + MS, &mut t);
    b.insert(read(3, 10, 1008, 8), UP + MS, &mut t);
    // The nearest from position 0 is sector 1000 (request 2).
    assert_eq!(dispatched(&mut b, UP + 200 * MS, &mut t).id, RequestId(2));
    // Request 1 waited 200 ms > 125 ms: it goes next although 1008 is nearer.
    assert_eq!(dispatched(&mut b, UP + 200 * MS, &mut t).id, RequestId(1));
    assert!(t.any("check_fifo: returned"), "{:?}", t.msgs);
}

/// Kernel: bfq_handle_burst() + bfq_add_to_burst(): the 8th sync queue created within
/// `burst_interval` (180 ms) of the previous one makes the burst large: its queues are
/// marked `in_large_burst`, and a later member is not weight-raised.
#[test]
fn eighth_queue_of_a_burst_makes_it_large() {
    let mut b = rot();
    let mut t = Rec::default();
    let q = |b: &Bfq, pid: u32| b.bics[&IoContextId(pid)].bfqq[1].unwrap();
    for pid in 0..9u64 {
        b.insert(
            read(pid + 1, 100 + pid as u32, pid * 1_000_000, 8),
            UP + pid * 10 * MS,
            &mut t,
        );
        if pid == 6 {
            assert!(!b.large_burst, "seven queues are not a large burst");
            assert_eq!(
                b.q(q(&b, 106)).wr_coeff,
                30,
                "a small burst's queue is raised"
            );
        }
        if pid == 7 {
            assert!(b.large_burst, "the eighth queue makes the burst large");
        }
    }
    assert!(b.large_burst);
    assert!(b.q(q(&b, 100)).in_large_burst);
    assert!(b.q(q(&b, 107)).in_large_burst);
    assert!(b.q(q(&b, 108)).in_large_burst);
    assert_eq!(
        b.q(q(&b, 108)).wr_coeff,
        1,
        "a large burst's queue is not raised"
    );
    b.check_invariants();
}

/// Kernel: bfq_weights_tree_add() + bfq_asymmetric_scenario(): queues of different
/// weights make the scenario asymmetric, which makes idling necessary even where it would
/// not boost throughput.
#[test]
fn different_weights_make_the_scenario_asymmetric() {
    let mut b = Bfq::new(
        DeviceInfo {
            rotational: false,
            queue_depth: 32,
        },
        UP,
    );
    b.set_tunable("low_latency", "0").unwrap();
    let mut t = Rec::default();
    b.insert(read(1, 10, 1000, 8), UP, &mut t);
    assert!(!b.asymmetric_scenario(None));
    let mut hi = read(2, 20, 900_000, 8);
    hi.ioprio = IoPrio {
        class: IoPrioClass::BestEffort,
        level: 0,
    };
    b.insert(hi, UP, &mut t);
    assert!(b.asymmetric_scenario(None));
}

/// Kernel: bfq_io_set_weight_legacy() + B-WF2Q+ on groups: two groups of weights 300 and
/// 100 with one backlogged queue each share the device 3:1.
#[test]
fn group_weights_share_the_device() {
    let mut b = rot();
    b.set_tunable("low_latency", "0").unwrap();
    b.set_tunable("slice_idle", "0").unwrap();
    for (id, w) in [(1, 300), (2, 100)] {
        b.add_cgroup(
            CgroupSpec {
                id: CgroupId(id),
                parent: CgroupId::ROOT,
                weight: w,
                leaf_weight: w,
            },
            UP,
        );
    }
    let mut t = crate::trace::NoTrace;
    let mut served = [0u64; 2];
    let mut next = [0u64; 2];
    let mut id = 0;
    let mut now = UP;
    for (g, n) in next.iter_mut().enumerate() {
        for _ in 0..4 {
            id += 1;
            let mut rq = read(id, 10 + g as u32, g as u64 * 50_000_000 + *n * 256, 256);
            rq.cgroup = CgroupId(g as u32 + 1);
            *n += 1;
            b.insert(rq, now, &mut t);
        }
    }
    for _ in 0..4000 {
        let rq = dispatched(&mut b, now, &mut crate::trace::NoTrace);
        let g = (rq.cgroup.0 - 1) as usize;
        served[g] += u64::from(rq.nr_sectors);
        now += 100_000;
        b.completed(&rq, now, &mut t);
        id += 1;
        let mut more = read(
            id,
            10 + g as u32,
            g as u64 * 50_000_000 + next[g] * 256,
            256,
        );
        more.cgroup = rq.cgroup;
        next[g] += 1;
        b.insert(more, now, &mut t);
    }
    let ratio = served[0] as f64 / served[1] as f64;
    assert!(
        (ratio - 3.0).abs() < 0.15,
        "served {served:?}, ratio {ratio}"
    );
    b.check_invariants();
}

/// Registration: `bfq` is selectable by name (what `iosched run --scheduler bfq` resolves
/// through) and `iosched schedulers` lists its ten sysfs tunables (bfq_attrs[]).
#[test]
fn bfq_is_registered_with_its_tunables() {
    let info = crate::schedulers()
        .into_iter()
        .find(|s| s.name == "bfq")
        .expect("listed");
    let names: Vec<&str> = info.tunables.iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "fifo_expire_sync",
            "fifo_expire_async",
            "back_seek_max",
            "back_seek_penalty",
            "slice_idle",
            "slice_idle_us",
            "max_budget",
            "timeout_sync",
            "strict_guarantees",
            "low_latency"
        ]
    );
    let mut e = crate::new_elevator(
        "bfq",
        DeviceInfo {
            rotational: false,
            queue_depth: 4,
        },
    )
    .unwrap();
    assert_eq!(e.name(), "bfq");
    e.insert(read(1, 10, 0, 8), UP, &mut crate::trace::NoTrace);
    assert!(matches!(
        e.dispatch(UP, &mut crate::trace::NoTrace),
        Dispatch::Request(_)
    ));
}

/// The request-id table (`rq->elv.priv` for iosched, which has only the id a completion
/// carries) holds the requests in the device, not the queued ones: it stays a few entries
/// however many requests wait, and a completion still finds its request.
#[test]
fn id_table_holds_only_requests_in_the_device() {
    let mut b = rot();
    let mut t = crate::trace::NoTrace;
    for id in 1..=6 {
        b.insert(read(id, 10 + id as u32, 1000 * id, 8), UP, &mut t);
    }
    assert_eq!(b.slot_of.len(), 0, "queued requests are not in the table");
    let rq = dispatched(&mut b, UP, &mut t);
    assert_eq!(b.slot_of.len(), 1);
    b.check_invariants();
    b.completed(&rq, UP + MS, &mut t);
    assert_eq!(b.slot_of.len(), 0, "a completion leaves the table");
    b.check_invariants();
}

/// An id inserted twice is a driver bug; with ids looked up only at completion it is
/// caught by the consistency check.
#[test]
#[should_panic(expected = "inserted twice")]
fn id_inserted_twice_is_caught() {
    let mut b = rot();
    let mut t = crate::trace::NoTrace;
    b.insert(read(7, 10, 1000, 8), UP, &mut t);
    b.insert(read(7, 11, 9000, 8), UP, &mut t);
    b.check_invariants();
}

/// A `dyn Trace` read once per call ([`Bfq::listen`]) must be read again at the next call:
/// a dispatch traced after an untraced insertion reports its messages and decisions.
#[test]
fn each_call_reads_whether_its_trace_listens() {
    let mut b = rot();
    b.insert(read(1, 10, 1000, 8), UP, &mut crate::trace::NoTrace);
    let mut t = Rec::default();
    dispatched(&mut b, UP, &mut t);
    assert!(t.any("dispatch requests"), "{:?}", t.msgs);
    assert!(t.last(DecisionKind::SelectQueue).is_some());
    b.completed(&read(1, 10, 1000, 8), UP + MS, &mut crate::trace::NoTrace);
    let mut t = Rec::default();
    b.insert(read(2, 10, 1008, 8), UP + MS, &mut t);
    assert!(t.any("add_request"), "{:?}", t.msgs);
}

/// pos_tree_add_move()'s shortcut ([`queue_merge::relinks_in_place`]): whenever it says the
/// kernel's erase, lookup and re-link of a node under its new key would change nothing,
/// doing them changes nothing (every link and colour), on trees grown and reshaped at
/// random; and it says so often (a key moving a little at a red leaf).
#[test]
fn position_tree_round_trip_skipped_only_when_it_changes_nothing() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let (mut skipped, mut moved) = (0, 0);
    for _ in 0..40 {
        let nodes = 1 + rand(40) as usize;
        let mut keys: Vec<u64> = (0..nodes).map(|_| rand(1 << 20) * 64).collect();
        let mut tree = RbForest::new(1);
        let mut on: Vec<usize> = Vec::new();
        for n in 0..nodes {
            let at = tree.search(0, keys[n], |m| keys[m]);
            if at.found.is_none() {
                tree.insert(0, n, at);
                on.push(n);
            }
        }
        for _ in 0..200 {
            let n = on[rand(on.len() as u64) as usize];
            keys[n] = match rand(4) {
                0 => rand(1 << 20) * 64,
                1 => keys[n],
                _ => keys[n].saturating_add(rand(129)).saturating_sub(64),
            };
            let stays = queue_merge::relinks_in_place(&tree, n, keys[n], |m| keys[m]);
            let before = format!("{tree:?}");
            tree.erase(0, n);
            let at = tree.search(0, keys[n], |m| keys[m]);
            if at.found.is_none() {
                tree.insert(0, n, at);
            } else {
                on.retain(|&m| m != n);
            }
            tree.check(0);
            if stays {
                assert_eq!(before, format!("{tree:?}"), "node {n} key {}", keys[n]);
                skipped += 1;
            } else if before != format!("{tree:?}") {
                moved += 1;
            }
            if on.is_empty() {
                break;
            }
        }
    }
    assert!(
        skipped > 1000 && moved > 1000,
        "skipped {skipped}, moved {moved}"
    );
}
