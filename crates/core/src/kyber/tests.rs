//! Kyber's rules over a scripted clock. The decisions themselves are checked against the
//! kernel's own kyber-iosched.c by the oracle (crates/lab/tests/kernel_oracle_kyber.rs);
//! these pin each rule so that breaking it fails here too.

use super::domain::{MAX_DEPTH, READ, WRITE};
use super::*;
use crate::testing::{async_write, read, request};
use crate::trace::NoTrace;

const MS: u64 = 1_000_000;

/// Everything dispatchable now, in order.
fn drain(k: &mut Kyber, now: Time) -> Vec<u64> {
    std::iter::from_fn(|| k.dispatch_at(now, &mut NoTrace).map(|r| r.id.0)).collect()
}

/// Reads go out in batches of 16 before writes get a turn, and writes in batches of 8
/// (kyber_batch_size[]); the domains take turns.
#[test]
fn domains_take_turns_in_batches() {
    let mut k = Kyber::new();
    for i in 0..20 {
        k.insert_request(read(i, i * 100, 8), false, 0);
        k.insert_request(async_write(100 + i, 50_000 + i * 100, 8), false, 0);
    }
    let order = drain(&mut k, 0);
    assert_eq!(order.len(), 40);
    assert!(
        order[..16].iter().all(|&id| id < 100),
        "first a read batch of 16"
    );
    assert!(
        order[16..24].iter().all(|&id| id >= 100),
        "then a write batch of 8"
    );
    assert!(
        order[24..28].iter().all(|&id| id < 100),
        "then the remaining reads"
    );
    k.check();
}

/// A domain out of tokens is skipped (throttled) and the next domain serves: with the read
/// pool shrunk to 2, the third read waits while writes go.
#[test]
fn a_domain_without_tokens_is_throttled() {
    let mut k = Kyber::new();
    k.tokens.resize(READ, 2);
    for i in 0..4 {
        k.insert_request(read(i, i * 8, 8), false, 0);
    }
    k.insert_request(async_write(9, 90_000, 8), false, 0);
    assert_eq!(drain(&mut k, 0), [0, 1, 9]);
    assert!(k.has_work());
    let done = read(0, 0, 8);
    k.complete_request(&done, MS, &mut NoTrace);
    assert_eq!(drain(&mut k, MS), [2]);
    k.check();
}

/// A bio merges into the newest requests of the software queue only: once flushed to the
/// dispatch list a request takes no more bios.
#[test]
fn bios_merge_only_before_the_flush() {
    let mut k = Kyber::new();
    k.insert_request(read(1, 0, 8), false, 0);
    k.insert_request(read(2, 800, 8), false, 0);
    let m = k.bio_merge(&read(3, 8, 8)).expect("back merge into 1");
    assert_eq!((m.into, m.front), (RequestId(1), false));
    let m = k.bio_merge(&read(4, 792, 8)).expect("front merge into 2");
    assert_eq!((m.into, m.front), (RequestId(2), true));
    k.tokens.resize(READ, 1);
    assert_eq!(
        drain(&mut k, 0),
        [1],
        "the flush moved 2 to the dispatch list"
    );
    assert_eq!(k.bio_merge(&read(5, 808, 8)), None);
}

/// Only the newest eight requests are tried.
#[test]
fn bio_merge_tries_eight_requests() {
    let mut k = Kyber::new();
    for i in 0..9 {
        k.insert_request(read(i, i * 1000, 8), false, 0);
    }
    assert_eq!(
        k.bio_merge(&read(20, 8, 8)),
        None,
        "request 0 is the ninth newest"
    );
    assert!(k.bio_merge(&read(21, 1008, 8)).is_some());
}

/// A request too full to take the bio ends the walk and is marked unmergeable.
#[test]
fn a_full_request_ends_the_merge_walk() {
    let mut k = Kyber::new();
    k.max_sectors = 16;
    k.insert_request(read(1, 0, 16), false, 0);
    assert_eq!(k.bio_merge(&read(2, 16, 8)), None);
    assert_eq!(k.bio_merge(&read(3, 16, 8)), None);
    assert!(k.kcq[READ][0].nomerge);
}

/// Async writes allocate with 75 % of the tags; sync writes and reads with all of them.
#[test]
fn async_requests_get_three_quarters_of_the_tags() {
    let mut k = Kyber::new();
    k.depth_updated(64);
    assert_eq!(k.limit_depth(&async_write(1, 0, 8)), Some(48));
    let mut sync_write = async_write(2, 0, 8);
    sync_write.flags.sync = true;
    assert_eq!(k.limit_depth(&sync_write), None);
    assert_eq!(k.limit_depth(&read(3, 0, 8)), None);
}

/// Through the Elevator trait the timer fires at the first call past its expiry: slow
/// reads (8 ms in the device against a 2 ms target) make the window congested, and once
/// 500 samples are in, the next call after the timer grows nothing (reads are bad) but
/// reports the percentiles; the depth stays at the maximum.
#[test]
fn timer_fires_at_the_next_call_after_expiry() {
    let mut k = Kyber::new();
    let mut now = 0;
    for i in 0..600u64 {
        let rq = read(i, i * 8, 8);
        k.insert(rq, now, &mut NoTrace);
        let Dispatch::Request(d) = k.dispatch(now, &mut NoTrace) else {
            panic!("a read with tokens")
        };
        now += 8 * MS / 100;
        k.completed(&d, now, &mut NoTrace);
    }
    assert!(k.timer_expires().is_some());
    assert_eq!(k.domain_depth(READ), MAX_DEPTH[READ]);
    assert_eq!(k.domain_depth(WRITE), MAX_DEPTH[WRITE]);
    k.check();
}

/// Completion of a request the scheduler never dispatched is a bug.
#[test]
#[should_panic(expected = "never dispatched")]
fn completing_an_unknown_request_panics() {
    let mut k = Kyber::new();
    k.complete_request(&request(7, Op::Read, 0, 8, 1), 0, &mut NoTrace);
}

/// The tunables read back what was stored; kstrtoull refusals leave them alone.
#[test]
fn latency_targets_store_and_refuse() {
    let mut k = Kyber::new();
    k.set_tunable("read_lat_nsec", "+500000").expect("stored");
    assert!(k.set_tunable("write_lat_nsec", "-1").is_err());
    let values: Vec<u64> = k.tunables().iter().map(|v| v.value).collect();
    assert_eq!(values, [500_000, 10_000_000]);
    assert!(k.set_tunable("bogus", "1").is_err());
}

/// 6.12's blk_rq_merge_ok() calls blk_cgroup_mergeable(): a bio of another cgroup does not
/// join a contiguous request.
#[test]
fn a_bio_of_another_cgroup_does_not_merge() {
    let mut k = Kyber::new();
    k.insert_request(read(1, 0, 8), false, 0);
    let mut other = read(2, 8, 8);
    other.cgroup = crate::request::CgroupId(1);
    assert_eq!(k.bio_merge(&other), None);
    assert!(k.bio_merge(&read(3, 8, 8)).is_some());
}
