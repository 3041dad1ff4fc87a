//! Scenario tests for what the shared conformance scenarios never exercise: bio and request
//! merges, process exit, and I/O priority changes in the middle of a run (issue 13, item 4).
//!
//! The reference is the source of Linux 4.20's `block/cfq-iosched.c` (and the block layer
//! around it), not a recording: each test names the kernel function whose rule it checks,
//! scripts the clock and the arrivals, and asserts each decision and its time. Clocks start
//! at [`UP`], a machine that has been up for a while, as the conformance harness does.

use super::tests::{
    active_pid, async_write, complete, dispatch_id, hdd, insert, noidle_write, read, with_prio,
    Rec, MS, UP,
};
use super::*;
use crate::request::{IoPrioClass, Op};
use crate::testing;

fn dispatch_rq(cfq: &mut Cfq, now: Time, rec: &mut Rec) -> Request {
    match cfq.dispatch(now, rec) {
        Dispatch::Request(rq) => {
            cfq.check_invariants();
            rq
        }
        other => panic!("expected a request at {now}, got {other:?}"),
    }
}

fn bio(id: u64, pid: u32, op: Op, sector: u64, nr_sectors: u32) -> Request {
    testing::request(id, op, sector, nr_sectors, pid)
}

/// The queue of process `pid`'s sync requests.
fn sync_queue(cfq: &Cfq, pid: u32) -> QId {
    cfq.cic(IoContextId(pid))
        .sync_q
        .expect("process has a sync queue")
}

// ---------------------------------------------------------------- merges

/// A back merge grows the queued request in place: same start, same sort position, same
/// FIFO deadline; the request is dispatched once, with the bio's sectors added.
/// Kernel: elv_merge() (back side) -> cfq_allow_bio_merge(); cfq_merged_request() does
/// nothing for a back merge.
#[test]
fn back_merge_grows_the_queued_request_in_place() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    insert(&mut cfq, read(1, 1, 1000), UP, &mut rec);
    insert(&mut cfq, read(2, 1, 5000), UP + MS, &mut rec);
    let merged = cfq.try_back_merge(&bio(3, 1, Op::Read, 1008, 8), UP + 2 * MS);
    assert_eq!(merged, Some(RequestId(1)));
    cfq.check_invariants();
    assert_eq!(cfq.queued(), 2, "a merged bio is no request of its own");
    let first = dispatch_rq(&mut cfq, UP + 2 * MS, &mut rec);
    assert_eq!((first.id.0, first.sector, first.nr_sectors), (1, 1000, 16));
    assert_eq!(dispatch_id(&mut cfq, UP + 2 * MS, &mut rec), 2);
}

/// A front merge moves the request's start back: the request is re-sorted and the queue's
/// next request chosen again against the head, so the grown request, now the nearer one,
/// is served first.
/// Kernel: cfq_merged_request(ELEVATOR_FRONT_MERGE) -> cfq_reposition_rq_rb() ->
/// cfq_add_rq_rb() -> cfq_choose_req().
#[test]
fn front_merge_resorts_the_request_and_chooses_next_again() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    // Head at 1500 after the first request.
    insert(&mut cfq, read(1, 1, 1492), UP, &mut rec);
    assert_eq!(dispatch_id(&mut cfq, UP, &mut rec), 1);
    assert_eq!(cfq.last_position, 1500);
    // 100 sectors behind the head (cost 200 with the back-seek penalty) against 300 ahead.
    insert(&mut cfq, read(2, 1, 1400), UP + MS, &mut rec);
    insert(&mut cfq, read(3, 1, 1800), UP + MS, &mut rec);
    let q = sync_queue(&cfq, 1);
    assert_eq!(cfq.next_pending(q).unwrap().rq.id.0, 2);
    // A bio ending where request 3 starts: request 3 now starts 100 sectors ahead.
    let merged = cfq.try_front_merge(&bio(4, 1, Op::Read, 1600, 200), UP + 2 * MS);
    assert_eq!(merged, Some(RequestId(3)));
    cfq.check_invariants();
    assert_eq!(cfq.next_pending(q).unwrap().rq.id.0, 3);
    let rq = dispatch_rq(&mut cfq, UP + 2 * MS, &mut rec);
    assert_eq!((rq.id.0, rq.sector, rq.nr_sectors), (3, 1600, 208));
}

/// When the front-merged request already is the queue's next request, the kernel does not
/// relink the queue in its prio tree (cfq_add_rq_rb() compares `next_rq` pointers, and the
/// pointer did not change): the queue stays linked under its new start sector even though
/// another queue's next request starts there. Relinking would search for that sector, find
/// the other queue, and leave this one out of the tree, hiding it from the cooperator search.
/// Kernel: cfq_reposition_rq_rb() -> cfq_add_rq_rb() -> `prev != cfqq->next_rq`.
#[test]
fn front_merge_of_the_next_request_keeps_the_prio_tree_link() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    insert(&mut cfq, read(1, 2, 4992), UP, &mut rec);
    insert(&mut cfq, read(2, 1, 5000), UP, &mut rec);
    let (p, other) = (sync_queue(&cfq, 1), sync_queue(&cfq, 2));
    assert!(cfq.queues[p].p_key.is_some() && cfq.queues[other].p_key.is_some());
    let merged = cfq.try_front_merge(&bio(3, 1, Op::Read, 4992, 8), UP + MS);
    assert_eq!(merged, Some(RequestId(2)));
    cfq.check_invariants();
    assert_eq!(cfq.next_pending(p).unwrap().rq.sector, 4992);
    assert_eq!(
        cfq.queues[p].p_key,
        Some(4),
        "queue unlinked from its prio tree"
    );
    let linked = cfq.prio_trees.in_order(4);
    assert!(linked.contains(&p) && linked.contains(&other), "{linked:?}");
}

/// Two queued requests a bio made contiguous become one: the survivor takes the older
/// request's FIFO place and deadline and its earlier allocation time, and the queue counts
/// one request fewer. Kernel: attempt_merge() -> cfq_allow_rq_merge(),
/// cfq_merged_requests() (`list_move()` + `fifo_time`), cfq_remove_request().
#[test]
fn merged_requests_take_the_older_fifo_deadline() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    insert(&mut cfq, read(1, 1, 9000), UP, &mut rec);
    insert(&mut cfq, read(2, 1, 2008), UP + MS, &mut rec);
    insert(&mut cfq, read(3, 1, 2000), UP + 10 * MS, &mut rec);
    let q = sync_queue(&cfq, 1);
    let fifo_expire = cfq.tun.fifo_expire_ns[1];
    assert!(cfq.merge_requests(RequestId(3), RequestId(2), UP + 11 * MS, &mut rec));
    cfq.check_invariants();
    assert_eq!(cfq.queued(), 2);
    let slot = *cfq.queues[q]
        .sort_list
        .values()
        .next()
        .expect("survivor queued");
    let survivor = cfq.pending[slot as usize];
    assert_eq!((survivor.rq.id.0, survivor.rq.sector), (3, 2000));
    assert_eq!(survivor.rq.nr_sectors, 16);
    assert_eq!(survivor.fifo_time, UP + MS + fifo_expire);
    assert_eq!(survivor.start_time, UP + MS);
    // FIFO order: request 1, then the survivor in request 2's place.
    let live: Vec<u64> = cfq
        .fifo_slots(q)
        .iter()
        .map(|&s| cfq.pending[s as usize].rq.id.0)
        .collect();
    assert_eq!(live, [1, 3]);
    // A younger `next` leaves the deadline alone.
    let mut cfq = hdd();
    insert(&mut cfq, read(1, 1, 2000), UP, &mut rec);
    insert(&mut cfq, read(2, 1, 2008), UP + MS, &mut rec);
    assert!(cfq.merge_requests(RequestId(1), RequestId(2), UP + 2 * MS, &mut rec));
    let q = sync_queue(&cfq, 1);
    let slot = *cfq.queues[q].sort_list.values().next().unwrap();
    assert_eq!(cfq.pending[slot as usize].fifo_time, UP + fifo_expire);
}

/// Requests of two queues never merge, however contiguous. Kernel: cfq_allow_rq_merge().
#[test]
fn requests_of_two_queues_never_merge() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    insert(&mut cfq, read(1, 1, 2000), UP, &mut rec);
    insert(&mut cfq, read(2, 2, 2008), UP, &mut rec);
    assert!(!cfq.merge_requests(RequestId(1), RequestId(2), UP + MS, &mut rec));
    assert_eq!(cfq.queued(), 2);
    cfq.check_invariants();
}

/// A sync bio never joins an async request, even its own process's; an async bio joins any
/// request of the group's shared async queue, whichever process queued it, once its own
/// context uses that queue. Kernel: cfq_allow_bio_merge() (`is_sync && !rq_is_sync(rq)`,
/// then `cic_to_cfqq(cic, is_sync) == RQ_CFQQ(rq)`).
#[test]
fn sync_bio_never_merges_into_an_async_request() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    insert(&mut cfq, read(1, 1, 100), UP, &mut rec); // pid 1 has a sync queue too
    insert(&mut cfq, async_write(2, 1, 3000), UP, &mut rec);
    assert_eq!(cfq.try_back_merge(&noidle_write(3, 1, 3008), UP + MS), None);
    // Another process with no async queue of its own yet: no merge.
    insert(&mut cfq, read(4, 2, 90_000), UP, &mut rec);
    assert_eq!(cfq.try_back_merge(&async_write(5, 2, 3008), UP + MS), None);
    // Once its context uses the shared async queue, its bio joins pid 1's request.
    insert(&mut cfq, async_write(6, 2, 70_000), UP + MS, &mut rec);
    assert_eq!(
        cfq.try_back_merge(&async_write(7, 2, 3008), UP + 2 * MS),
        Some(RequestId(2))
    );
    cfq.check_invariants();
}

/// A pending cooperator hand-off does not stop a bio from merging into the process's
/// current queue: the kernel moves the context to the merged queue only when it allocates
/// its next request. Kernel: cfq_allow_bio_merge() (no `new_cfqq` test), cfq_set_request()
/// -> cfq_merge_cfqqs().
#[test]
fn bio_merges_while_a_cooperator_hand_off_is_pending() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    insert(&mut cfq, read(1, 1, 2000), UP, &mut rec);
    insert(&mut cfq, read(2, 2, 2016), UP, &mut rec);
    let (q1, q2) = (sync_queue(&cfq, 1), sync_queue(&cfq, 2));
    cfq.setup_merge(q1, q2);
    assert_eq!(cfq.queues[q1].new_cfqq, Some(q2));
    assert_eq!(
        cfq.try_back_merge(&read(3, 1, 2008), UP + MS),
        Some(RequestId(1))
    );
}

// ---------------------------------------------------------------- process exit

/// Two readers; the first one's queue is idled on after its read completes. When its process
/// exits, the slice ends at once (untimed), the timer is cancelled, the empty queue is freed
/// ("put_queue"), and the other reader is served at the exit time instead of after the idle
/// window. Kernel: cfq_exit_icq() -> cfq_exit_cfqq() -> __cfq_slice_expired(cfqq, 0),
/// cfq_schedule_dispatch(), cfq_put_queue().
#[test]
fn exit_of_the_idled_on_process_ends_the_slice_at_once() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    let first = read(1, 1, 1000);
    insert(&mut cfq, first, UP, &mut rec);
    insert(&mut cfq, read(2, 2, 900_000), UP, &mut rec);
    assert_eq!(dispatch_id(&mut cfq, UP, &mut rec), 1);
    complete(&mut cfq, first, UP + MS, &mut rec);
    assert_eq!(
        cfq.dispatch(UP + MS, &mut rec),
        Dispatch::IdleUntil(UP + 9 * MS)
    );
    cfq.exit_ioc(IoContextId(1), UP + 2 * MS, &mut rec);
    cfq.check_invariants();
    assert!(cfq.idle_timer.is_none(), "idle timer still armed");
    assert!(rec.has(UP + 2 * MS, "slice expired t=0"));
    assert!(rec.has(UP + 2 * MS, "put_queue"));
    let expired = rec.decision(DecisionKind::SliceExpired).unwrap();
    assert_eq!(
        (expired.0, expired.3.as_str()),
        (UP + 2 * MS, "process exited")
    );
    assert_eq!(dispatch_id(&mut cfq, UP + 2 * MS, &mut rec), 2);
    assert_eq!(active_pid(&cfq), Some(2));
}

/// A process exits with one request in flight and one queued. Its queue loses the slice at
/// once but outlives the process: the queued request is still served (after the other
/// process's turn), and the queue is let go ("put_queue", then its slice ends) when its last
/// request completes, not at a later queue selection. Kernel: cfq_exit_cfqq(); request
/// references (`cfqq->allocated`, cfq_put_request()) keep the queue; cfq_put_queue() of the
/// active queue calls __cfq_slice_expired().
#[test]
fn exit_with_requests_pending_keeps_the_queue_until_they_complete() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    let (a, b, c) = (read(1, 1, 1000), read(2, 1, 1008), read(3, 2, 900_000));
    insert(&mut cfq, a, UP, &mut rec);
    insert(&mut cfq, b, UP, &mut rec);
    insert(&mut cfq, c, UP, &mut rec);
    assert_eq!(dispatch_id(&mut cfq, UP, &mut rec), 1);
    let q = sync_queue(&cfq, 1);
    cfq.exit_ioc(IoContextId(1), UP + MS, &mut rec);
    cfq.check_invariants();
    assert!(rec.has(UP + MS, "slice expired t=0"));
    assert!(
        cfq.queues[q].live && cfq.queues[q].on_rr,
        "queue with a request lost"
    );
    // Untimed expiry: no residual credit, so the other reader (keyed at UP) goes first.
    assert_eq!(dispatch_id(&mut cfq, UP + MS, &mut rec), 3);
    complete(&mut cfq, a, UP + 2 * MS, &mut rec);
    complete(&mut cfq, c, UP + 3 * MS, &mut rec);
    assert_eq!(
        cfq.dispatch(UP + 3 * MS, &mut rec),
        Dispatch::IdleUntil(UP + 11 * MS)
    );
    cfq.timer(UP + 11 * MS, &mut rec);
    assert_eq!(dispatch_id(&mut cfq, UP + 11 * MS, &mut rec), 2);
    assert!(
        !rec.any("put_queue"),
        "queue freed while a request was queued"
    );
    complete(&mut cfq, b, UP + 12 * MS, &mut rec);
    cfq.check_invariants();
    let at_end: Vec<&str> = rec
        .msgs
        .iter()
        .filter(|(t, m)| *t == UP + 12 * MS && m.starts_with("cfq1S"))
        .map(|(_, m)| m.as_str())
        .collect();
    let put = at_end.iter().position(|m| m.ends_with(" put_queue"));
    let expired = at_end
        .iter()
        .position(|m| m.ends_with(" slice expired t=0"));
    assert!(
        matches!((put, expired), (Some(p), Some(e)) if p < e),
        "{at_end:?}"
    );
    assert!(!cfq.queues[q].live, "queue not freed");
    assert_eq!(cfq.active_queue, None);
}

/// The exiting process's async queue is served: it loses its slice too (the shared queue
/// itself stays, pinned by its group), and keeps its requests.
/// Kernel: cfq_exit_icq() -> cfq_exit_cfqq() on `cic->cfqq[BLK_RW_ASYNC]`.
#[test]
fn exit_ends_the_slice_of_the_served_async_queue() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    insert(&mut cfq, async_write(1, 1, 1000), UP, &mut rec);
    insert(&mut cfq, async_write(2, 1, 1008 + 8), UP, &mut rec);
    assert_eq!(dispatch_id(&mut cfq, UP, &mut rec), 1);
    let q = cfq.active_queue.unwrap();
    assert!(!cfq.queues[q].sync);
    cfq.exit_ioc(IoContextId(1), UP + MS, &mut rec);
    cfq.check_invariants();
    assert_eq!(cfq.active_queue, None);
    let expired = rec.decision(DecisionKind::SliceExpired).unwrap();
    assert_eq!((expired.0, expired.3.as_str()), (UP + MS, "process exited"));
    assert!(cfq.queues[q].live && cfq.queues[q].on_rr);
    assert_eq!(dispatch_id(&mut cfq, UP + MS, &mut rec), 2);
}

/// A process exits while its queue plans to merge into a cooperator: the references that
/// plan took on the cooperator are returned, so the cooperator is freed once its own
/// process exits and its requests are done. Kernel: cfq_exit_cfqq() -> cfq_put_cooperator()
/// (the references taken by cfq_setup_merge()).
#[test]
fn exit_returns_the_references_of_a_planned_cooperator_merge() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    let (a, b) = (read(1, 1, 2000), read(2, 2, 2016));
    insert(&mut cfq, a, UP, &mut rec);
    insert(&mut cfq, b, UP, &mut rec);
    let (q1, q2) = (sync_queue(&cfq, 1), sync_queue(&cfq, 2));
    cfq.setup_merge(q1, q2);
    assert_eq!(cfq.queues[q2].proc_refs, 2);
    cfq.exit_ioc(IoContextId(1), UP + MS, &mut rec);
    assert_eq!(cfq.queues[q2].proc_refs, 1);
    cfq.exit_ioc(IoContextId(2), UP + MS, &mut rec);
    for step in 0..2 {
        let at = UP + MS + 2 * step * MS;
        let rq = dispatch_rq(&mut cfq, at, &mut rec);
        complete(&mut cfq, rq, at + MS, &mut rec);
    }
    cfq.check_invariants();
    assert!(!cfq.queues[q2].live, "cooperator never freed");
}

// ---------------------------------------------------------------- ioprio changes

/// A process moves from BE level 4 to level 0 between slices: its sync queue re-reads the
/// priority at its next request, and the next slice is level 0's 180 ms, not 100 ms.
/// Kernel: check_ioprio_changed() marks `prio_changed`; cfq_insert_request() ->
/// cfq_init_prio_data(); cfq_set_prio_slice() -> cfq_prio_slice().
#[test]
fn ioprio_change_sets_the_next_slice() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    let be = |rq, level| with_prio(rq, IoPrioClass::BestEffort, level);
    let first = be(read(1, 1, 1000), 4);
    insert(&mut cfq, first, UP, &mut rec);
    dispatch_id(&mut cfq, UP, &mut rec);
    complete(&mut cfq, first, UP + MS, &mut rec);
    assert!(rec.has(UP + MS, "set_slice=100000000"));
    // Idle window runs out: the slice ends, the queue leaves the service tree.
    cfq.timer(UP + 9 * MS, &mut rec);
    assert_eq!(cfq.active_queue, None);
    let second = be(read(2, 1, 1008), 0);
    insert(&mut cfq, second, UP + 20 * MS, &mut rec);
    let q = sync_queue(&cfq, 1);
    assert_eq!(cfq.queues[q].ioprio, 0);
    dispatch_id(&mut cfq, UP + 20 * MS, &mut rec);
    complete(&mut cfq, second, UP + 21 * MS, &mut rec);
    assert!(rec.has(UP + 21 * MS, "set_slice=180000000"));
    assert_eq!(cfq.queues[q].slice_end, UP + 201 * MS);
}

/// A process turns idle-class mid-run. As a best-effort queue, the group's first busy queue
/// again, its key (`now` plus the wrapped negative `cfq_slice_offset()`) would put it ahead
/// of a reader queued just after it; as an idle-class queue it waits on the idle tree and is
/// served only once no BE queue is busy (after the reader's idle window), with no idle
/// window of its own.
/// Kernel: check_ioprio_changed(), cfq_init_prio_data() (IOPRIO_CLASS_IDLE: level 7, idle
/// window cleared), cfq_service_tree_add() (idle-class key), choose_wl_class_and_type().
#[test]
fn class_change_to_idle_waits_behind_best_effort() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    let first = read(1, 1, 1000);
    insert(&mut cfq, first, UP, &mut rec);
    dispatch_id(&mut cfq, UP, &mut rec);
    complete(&mut cfq, first, UP + MS, &mut rec);
    cfq.timer(UP + 9 * MS, &mut rec);
    let q = sync_queue(&cfq, 1);
    assert!(!cfq.queues[q].on_rr);
    let idle = with_prio(read(3, 1, 1008), IoPrioClass::Idle, 0);
    insert(&mut cfq, idle, UP + 10 * MS, &mut rec);
    let other = read(2, 2, 900_000);
    insert(&mut cfq, other, UP + 10 * MS, &mut rec);
    assert!(cfq.queues[q].class_idle() && !cfq.queues[q].idle_window);
    assert_eq!(cfq.queues[q].ioprio, 7);
    assert_eq!(dispatch_id(&mut cfq, UP + 10 * MS, &mut rec), 2);
    complete(&mut cfq, other, UP + 11 * MS, &mut rec);
    assert_eq!(
        cfq.dispatch(UP + 11 * MS, &mut rec),
        Dispatch::IdleUntil(UP + 19 * MS)
    );
    cfq.timer(UP + 19 * MS, &mut rec);
    assert_eq!(dispatch_id(&mut cfq, UP + 19 * MS, &mut rec), 3);
    complete(&mut cfq, idle, UP + 20 * MS, &mut rec);
    assert_eq!(cfq.dispatch(UP + 20 * MS, &mut rec), Dispatch::Empty);
}

/// A process turns real-time mid-run while a best-effort queue is being served: its next
/// request preempts at once. Kernel: check_ioprio_changed(), cfq_init_prio_data()
/// (IOPRIO_CLASS_RT), cfq_should_preempt() ("RT request preempts a non-RT slice"),
/// cfq_preempt_queue().
#[test]
fn class_change_to_rt_preempts_best_effort() {
    let mut cfq = hdd();
    let mut rec = Rec::default();
    let first = read(1, 1, 1000);
    insert(&mut cfq, first, UP, &mut rec);
    dispatch_id(&mut cfq, UP, &mut rec);
    complete(&mut cfq, first, UP + MS, &mut rec);
    cfq.timer(UP + 9 * MS, &mut rec);
    for (id, sector) in [(2, 900_000), (3, 900_008), (4, 900_016)] {
        insert(&mut cfq, read(id, 2, sector), UP + 10 * MS, &mut rec);
    }
    assert_eq!(dispatch_id(&mut cfq, UP + 10 * MS, &mut rec), 2);
    assert_eq!(active_pid(&cfq), Some(2));
    let rt = with_prio(read(5, 1, 1008), IoPrioClass::RealTime, 4);
    insert(&mut cfq, rt, UP + 11 * MS, &mut rec);
    let preempt = rec.decision(DecisionKind::Preempt).expect("no preemption");
    assert_eq!((preempt.0, preempt.2), (UP + 11 * MS, Some(1)));
    assert_eq!(dispatch_id(&mut cfq, UP + 11 * MS, &mut rec), 5);
    assert_eq!(active_pid(&cfq), Some(1));
}

/// After a priority change the process's async writes still go to the async queue of its
/// *old* priority: check_ioprio_changed() looks the async queue up again before it stores
/// the new priority in the context, so cfq_get_queue() finds the same queue. A context with
/// no async queue yet gets one of the new priority. Observable in the async slice: 40 ms
/// (level 4) against 72 ms (level 0).
/// Kernel: check_ioprio_changed(), cfq_get_queue(), cfq_async_queue_prio().
#[test]
fn async_queue_keeps_the_old_priority_after_a_change() {
    let be = |rq, level| with_prio(rq, IoPrioClass::BestEffort, level);
    let mut cfq = hdd();
    let mut rec = Rec::default();
    let w1 = be(async_write(1, 1, 1000), 4);
    insert(&mut cfq, w1, UP, &mut rec);
    dispatch_id(&mut cfq, UP, &mut rec);
    complete(&mut cfq, w1, UP + MS, &mut rec);
    assert!(rec.has(UP + MS, "set_slice=40000000"));
    let old = cfq.cic(IoContextId(1)).async_q;
    // After that slice (41 ms), a level-0 write: a new slice at the next selection.
    let w2 = be(async_write(2, 1, 2000), 0);
    insert(&mut cfq, w2, UP + 50 * MS, &mut rec);
    assert_eq!(cfq.cic(IoContextId(1)).async_q, old);
    dispatch_id(&mut cfq, UP + 50 * MS, &mut rec);
    complete(&mut cfq, w2, UP + 51 * MS, &mut rec);
    assert!(
        rec.has(UP + 51 * MS, "set_slice=40000000"),
        "async queue moved: {:?}",
        rec.msgs
    );

    let mut cfq = hdd();
    let mut rec = Rec::default();
    let r = be(read(1, 1, 1000), 4);
    insert(&mut cfq, r, UP, &mut rec);
    dispatch_id(&mut cfq, UP, &mut rec);
    complete(&mut cfq, r, UP + MS, &mut rec);
    cfq.timer(UP + 9 * MS, &mut rec);
    let w = be(async_write(2, 1, 2000), 0);
    insert(&mut cfq, w, UP + 10 * MS, &mut rec);
    dispatch_id(&mut cfq, UP + 10 * MS, &mut rec);
    complete(&mut cfq, w, UP + 11 * MS, &mut rec);
    assert!(rec.has(UP + 11 * MS, "set_slice=72000000"));
}
