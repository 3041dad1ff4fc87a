//! Scenario tests of mq-deadline's rules over a scripted clock. The oracle
//! (`crates/lab/src/oracle`) checks the same rules against the kernel's own code.

use super::*;
use crate::request::{IoPrio, NSEC_PER_MSEC};
use crate::testing::{async_write, read};
use crate::trace::NoTrace;

fn next(dd: &mut Deadline, now: Time) -> u64 {
    match dd.dispatch(now, &mut NoTrace) {
        Dispatch::Request(rq) => rq.id.0,
        other => panic!("expected a request, got {other:?}"),
    }
}

fn with_class(mut rq: Request, class: IoPrioClass) -> Request {
    rq.ioprio = IoPrio { class, level: 0 };
    rq
}

/// The first batch starts at the lowest sector (latest_pos starts at 0), then runs upward.
#[test]
fn first_batch_starts_from_sector_zero_upward() {
    let mut dd = Deadline::new();
    for (id, sector) in [(1, 500), (2, 100), (3, 900), (4, 700)] {
        dd.insert(read(id, sector, 8), 0, &mut NoTrace);
    }
    let order: Vec<u64> = (0..4).map(|_| next(&mut dd, 0)).collect();
    assert_eq!(order, [2, 1, 4, 3]);
    dd.check_invariants();
}

/// An expired read FIFO head wins over the sorted position when a new batch starts.
#[test]
fn expired_read_restarts_batch_at_fifo_head() {
    let mut dd = Deadline::new();
    dd.set_tunable("fifo_batch", "1").unwrap();
    dd.insert(read(1, 10, 8), 0, &mut NoTrace);
    dd.insert(read(2, 5_000, 8), 0, &mut NoTrace);
    dd.insert(read(3, 20, 8), 1, &mut NoTrace);
    assert_eq!(next(&mut dd, 2), 1);
    assert_eq!(next(&mut dd, 600 * NSEC_PER_MSEC), 2);
}

/// Writes are passed over at most `writes_starved` times while reads keep coming. (The
/// write arrives after the first read: at start `last_dir` is WRITE with position 0, so a
/// write queued then would continue that "batch" first.)
#[test]
fn writes_starved_bounds_read_preference() {
    let mut dd = Deadline::new();
    dd.set_tunable("fifo_batch", "1").unwrap();
    for id in 1..=5 {
        dd.insert(read(id, id * 1000, 8), 0, &mut NoTrace);
    }
    assert_eq!(next(&mut dd, 0), 1);
    dd.insert(async_write(100, 50_000, 8), 0, &mut NoTrace);
    let order: Vec<u64> = (0..4).map(|_| next(&mut dd, 0)).collect();
    assert_eq!(order, [2, 3, 100, 4]);
}

/// A BE request waits while an RT request is queued or in flight (dd_queued() counts until
/// completion), and goes once it completes.
#[test]
fn lower_level_waits_for_higher_level_completion() {
    let mut dd = Deadline::new();
    dd.insert(
        with_class(read(1, 100, 8), IoPrioClass::RealTime),
        0,
        &mut NoTrace,
    );
    dd.insert(read(2, 200, 8), 0, &mut NoTrace);
    let rt = match dd.dispatch(0, &mut NoTrace) {
        Dispatch::Request(rq) => rq,
        other => panic!("expected the RT request, got {other:?}"),
    };
    assert_eq!(rt.id.0, 1);
    assert_eq!(dd.dispatch(0, &mut NoTrace), Dispatch::Empty);
    assert!(dd.has_work());
    dd.completed(&rt, NSEC_PER_MSEC, &mut NoTrace);
    assert_eq!(next(&mut dd, NSEC_PER_MSEC), 2);
}

/// A BE request older than prio_aging_expire goes before queued RT requests.
#[test]
fn aged_lower_level_request_goes_first() {
    let mut dd = Deadline::new();
    dd.set_tunable("prio_aging_expire", "100").unwrap();
    dd.insert(read(1, 200, 8), 0, &mut NoTrace);
    dd.insert(
        with_class(read(2, 100, 8), IoPrioClass::RealTime),
        50 * NSEC_PER_MSEC,
        &mut NoTrace,
    );
    dd.insert(
        with_class(read(3, 300, 8), IoPrioClass::RealTime),
        50 * NSEC_PER_MSEC,
        &mut NoTrace,
    );
    assert_eq!(next(&mut dd, 60 * NSEC_PER_MSEC), 2);
    assert_eq!(next(&mut dd, 104 * NSEC_PER_MSEC), 1);
}

/// Async requests and writes allocate with async_depth as their shallow depth; sync reads
/// are not limited; nr_requests resets it.
#[test]
fn limit_depth_throttles_async_and_writes_only() {
    let mut dd = Deadline::new();
    dd.depth_updated(64);
    dd.set_tunable("async_depth", "8").unwrap();
    assert_eq!(dd.limit_depth(&read(1, 0, 8)), None);
    assert_eq!(dd.limit_depth(&async_write(2, 0, 8)), Some(8));
    dd.depth_updated(32);
    assert_eq!(dd.limit_depth(&async_write(2, 0, 8)), Some(32));
}

/// A bio back-merged into a request that then touches its successor absorbs it; the
/// survivor keeps the earlier deadline.
#[test]
fn back_merge_then_absorbs_the_successor() {
    let mut dd = Deadline::new();
    dd.insert_request(read(1, 1000, 8), false, 0);
    dd.insert_request(read(2, 1016, 8), false, 0);
    let m = dd.bio_merge(&read(3, 1008, 8)).expect("merges");
    assert_eq!(m.into, RequestId(1));
    assert_eq!(
        m.then,
        Some(RequestMerge {
            absorbed: RequestId(2),
            into: RequestId(1)
        })
    );
    dd.check_invariants();
    match dd.dispatch(0, &mut NoTrace) {
        Dispatch::Request(rq) => assert_eq!((rq.id.0, rq.sector, rq.nr_sectors), (1, 1000, 24)),
        other => panic!("expected a request, got {other:?}"),
    }
}

/// A bio ending where a queued request starts joins it in front, unless front_merges=0 and
/// the request is not the one-hit cache.
#[test]
fn front_merge_moves_the_start_back_unless_switched_off() {
    let mut dd = Deadline::new();
    dd.insert_request(read(1, 1000, 8), false, 0);
    dd.insert_request(read(9, 5000, 8), false, 0);
    let m = dd.bio_merge(&read(2, 992, 8)).expect("merges");
    assert!(m.front);
    dd.check_invariants();
    let mut off = Deadline::new();
    off.set_tunable("front_merges", "0").unwrap();
    off.insert_request(read(9, 5000, 8), false, 0);
    off.insert_request(read(1, 1000, 8), false, 0);
    assert_eq!(off.bio_merge(&read(2, 992, 8)), None);
}

/// A request that cannot grow is marked unmergeable: the next bio gets its own request.
#[test]
fn full_request_refuses_merges_for_good() {
    let mut dd = Deadline::new();
    dd.max_sectors = 16;
    dd.insert_request(read(1, 0, 16), false, 0);
    assert_eq!(dd.bio_merge(&read(2, 16, 8)), None);
    dd.max_sectors = 64;
    assert_eq!(dd.bio_merge(&read(3, 16, 8)), None);
}

/// A requeued request (inserted at the head) goes before everything, newest first.
#[test]
fn head_insertions_go_first_newest_first() {
    let mut dd = Deadline::new();
    dd.insert_request(read(1, 100, 8), false, 0);
    dd.insert_request(read(2, 900, 8), true, 0);
    dd.insert_request(read(3, 500, 8), true, 0);
    let order: Vec<u64> = (0..3).map(|_| next(&mut dd, 0)).collect();
    assert_eq!(order, [3, 2, 1]);
}

#[test]
fn tunables_echo_in_jiffy_rounded_ms_and_clamp() {
    let mut dd = Deadline::new();
    dd.set_tunable("read_expire", "250").unwrap();
    dd.set_tunable("write_expire", "3").unwrap();
    dd.set_tunable("front_merges", "7").unwrap();
    let values: Vec<(&str, u64)> = dd
        .tunables()
        .iter()
        .map(|t| (t.spec.name, t.value))
        .collect();
    assert!(values.contains(&("read_expire", 252)));
    assert!(values.contains(&("write_expire", 4)));
    assert!(values.contains(&("front_merges", 1)));
    assert!(dd.set_tunable("slice_idle", "0").is_err());
}

fn in_cgroup(mut rq: Request, id: u32) -> Request {
    rq.cgroup = crate::request::CgroupId(id);
    rq
}

/// 6.12's blk_rq_merge_ok() and attempt_merge() call blk_cgroup_mergeable(): a bio of another
/// cgroup gets its own request even where it is contiguous, and two requests of two cgroups
/// that touch are not joined.
#[test]
fn bios_and_requests_of_two_cgroups_stay_apart() {
    let mut dd = Deadline::new();
    dd.insert_request(read(1, 1000, 8), false, 0);
    dd.insert_request(in_cgroup(read(2, 1016, 8), 1), false, 0);
    assert_eq!(dd.bio_merge(&in_cgroup(read(3, 1008, 8), 2)), None);
    let m = dd.bio_merge(&read(4, 1008, 8)).expect("same cgroup merges");
    assert_eq!((m.into, m.then), (RequestId(1), None));
    dd.check_invariants();
}

/// The known next request of each tree (the batch's continuation and the insertion
/// shortcut) always equals the kernel's descent: random inserts on few sectors (equal
/// sectors and sequential runs), bio and insert merges (front merges move a start),
/// requeues at the head and dispatches, some bios aimed at the end of a known next request
/// (absorbing its successor), with `check()` comparing the cache (and the successor kept
/// beside it) against
/// deadline_from_pos()'s descent after every step and `tree_add()` its shortcut against
/// elv_rb_add()'s (under `cfg(test)`).
#[test]
fn known_next_request_matches_the_descent_under_random_traffic() {
    let mut dd = Deadline::new();
    dd.set_tunable("fifo_batch", "4").unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let (mut id, mut now, mut dispatched) = (0, 0, 0);
    for _ in 0..20_000 {
        id += 1;
        let sector = rand(64) * 8;
        let mut rq = if rand(4) == 0 {
            async_write(id, sector, 8)
        } else {
            read(id, sector, 8)
        };
        if rand(8) == 0 {
            rq = with_class(rq, IoPrioClass::RealTime);
        }
        // Now and then a bio aimed at the end of the BE read tree's next request: a back
        // merge into it that may absorb its successor.
        let next = dd.next[2];
        if next < UNKNOWN && rand(8) == 0 {
            rq.sector = dd.held(next).rq.end_sector();
        }
        match rand(10) {
            0..=3 => dd.insert(rq, now, &mut NoTrace),
            4 => drop(dd.insert_request(rq, rand(6) == 0, now)),
            5 | 6 => drop(dd.bio_merge(&rq)),
            _ => {
                if let Dispatch::Request(rq) = dd.dispatch(now, &mut NoTrace) {
                    dd.completed(&rq, now, &mut NoTrace);
                    dispatched += 1;
                }
            }
        }
        now += rand(3) * NSEC_PER_MSEC;
        dd.check_invariants();
    }
    assert!(dispatched > 5_000, "the traffic dispatched {dispatched}");
}
