//! The software queue, the flushed lists and dispatch. Kernel: kyber_bio_merge(),
//! kyber_insert_requests(), kyber_flush_busy_kcqs(), kyber_dispatch_cur_domain(),
//! kyber_dispatch_request(), kyber_has_work(), and the block layer's blk_bio_list_merge()
//! (block/kyber-iosched.c, block/blk-mq-sched.c, block/blk-merge.c, 6.12).
//!
//! A new request goes on its software queue's list for its domain (`kcq->rq_list`), where
//! bios may still merge into it: the newest eight requests are tried, newest first, and
//! the first that could take the bio but is full ends the search. Dispatch serves one
//! domain at a time, up to its batch size in a row. A domain with requests asks for a
//! token; only with one does it move its whole software-queue list to its dispatch list
//! (`khd->rqs`, no longer mergeable) and hand out the first request. Without a token the
//! domain is throttled and the next one is tried, wrapping back to the first.
//!
//! How the core models blk-mq: one CPU, so one software queue (`kcq`) per domain feeds the
//! one hardware queue (`khd`); its `kcq_map` bit is "the list is not empty".

use std::collections::VecDeque;

use super::domain::{sched_domain, BATCH_SIZE, NAMES, NUM_DOMAINS};
use super::{InFlight, Kyber, Queued};
use crate::request::{Op, Request, RequestId, Time};
use crate::trace::{DecisionKind, Trace};

/// What a bio merge did: the bio joined `into` at its front or back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BioMerge {
    pub into: RequestId,
    pub front: bool,
}

/// Requests tried by blk_bio_list_merge().
const MERGE_CHECKS: usize = 8;

/// Kernel: bio_mergeable() / rq_mergeable() on the operation and flags.
fn op_mergeable(rq: &Request) -> bool {
    matches!(rq.op, Op::Read | Op::Write) && !rq.flags.fua
}

impl Kyber {
    /// Kernel: kyber_bio_merge() / blk_bio_list_merge(): tries the bio on the newest eight
    /// requests of its domain's software queue.
    pub fn bio_merge(&mut self, bio: &Request) -> Option<BioMerge> {
        let max = self.max_sectors;
        let list = &mut self.kcq[sched_domain(bio.op)];
        for q in list.iter_mut().rev().take(MERGE_CHECKS) {
            let rq = &q.rq;
            // blk_rq_merge_ok(): same operation, priority and cgroup (blk_cgroup_mergeable()),
            // neither marked unmergeable.
            if q.nomerge || !op_mergeable(rq) || !op_mergeable(bio) {
                continue;
            }
            if rq.op != bio.op || rq.ioprio != bio.ioprio || rq.cgroup != bio.cgroup {
                continue;
            }
            // blk_try_merge(): the bio ends where the request starts, or starts at its end.
            let back = rq.end_sector() == bio.sector;
            let front = rq.sector.wrapping_sub(u64::from(bio.nr_sectors)) == bio.sector;
            if !back && !front {
                continue;
            }
            // ll_back/front_merge_fn(): a full request is marked and ends the search.
            if rq.nr_sectors + bio.nr_sectors > max {
                q.nomerge = true;
                return None;
            }
            if back {
                q.rq.nr_sectors += bio.nr_sectors;
            } else {
                q.rq.sector = bio.sector;
                q.rq.nr_sectors += bio.nr_sectors;
            }
            return Some(BioMerge {
                into: q.rq.id,
                front: !back,
            });
        }
        None
    }

    /// Kernel: kyber_insert_requests(): onto the software queue's list, at its head for
    /// `at_head` (requeues, flushes).
    pub fn insert_request(&mut self, rq: Request, at_head: bool, now: Time) {
        let q = Queued {
            rq,
            start_ns: now,
            nomerge: false,
        };
        let list = &mut self.kcq[sched_domain(rq.op)];
        if at_head {
            list.push_front(q);
        } else {
            list.push_back(q);
        }
        self.queued += 1;
    }

    /// Kernel: kyber_has_work().
    pub fn has_work(&self) -> bool {
        self.queued > 0
    }

    /// Kernel: kyber_dispatch_request(): the current domain while its batch lasts, then
    /// each other domain in turn (ending with the current one again).
    /// A domain found without tokens is traced as `throttled` there and then.
    pub fn dispatch_request(&mut self, now: Time, trace: &mut dyn Trace) -> Option<Request> {
        if self.batching < BATCH_SIZE[self.cur_domain] {
            if let Some(rq) = self.dispatch_cur_domain(now, trace) {
                return Some(rq);
            }
        }
        self.batching = 0;
        for _ in 0..NUM_DOMAINS {
            self.cur_domain = (self.cur_domain + 1) % NUM_DOMAINS;
            if let Some(rq) = self.dispatch_cur_domain(now, trace) {
                return Some(rq);
            }
        }
        None
    }

    /// Kernel: kyber_dispatch_cur_domain(): a flushed request, or a flush of the software
    /// queue, each only with a token; a domain with requests and no token is throttled.
    fn dispatch_cur_domain(&mut self, now: Time, trace: &mut dyn Trace) -> Option<Request> {
        let domain = self.cur_domain;
        if self.rqs[domain].is_empty() && self.kcq[domain].is_empty() {
            return None;
        }
        let Some(token) = self.tokens.get(domain) else {
            super::decide(trace, now, DecisionKind::Throttled, NAMES[domain], None);
            return None;
        };
        if self.rqs[domain].is_empty() {
            // kyber_flush_busy_kcqs(): the whole list, in order, to the (empty) dispatch
            // list; swapped, so both keep their buffers.
            let (kcq, rqs) = (&mut self.kcq[domain], &mut self.rqs[domain]);
            std::mem::swap(kcq, rqs);
        }
        let q = self.rqs[domain].pop_front().expect("a flushed request");
        self.batching += 1;
        self.queued -= 1;
        let previous = self.in_flight.insert(
            q.rq.id,
            InFlight {
                domain: domain as u8,
                token,
                start_ns: q.start_ns,
                io_start_ns: now,
            },
        );
        assert!(previous.is_none(), "request {:?} dispatched twice", q.rq.id);
        Some(q.rq)
    }

    /// Every queued request, software queues first (for the invariant checks).
    pub(super) fn all_queued(&self) -> impl Iterator<Item = &Queued> {
        self.kcq
            .iter()
            .chain(self.rqs.iter())
            .flat_map(VecDeque::iter)
    }
}
