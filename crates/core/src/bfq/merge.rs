//! Merging into BFQ's requests: the block layer's merge path (6.12) with BFQ's hooks.
//!
//! A bio of a process with a context looks up that process's queue (`bio_bfqq`), then tries
//! the one-hit cache (`q->last_merge`, back or front), the hash of request ends (back) and
//! its queue's sort list (front, `bfq_request_merge()`). Each candidate is asked
//! `bfq_allow_bio_merge()`: no sync bio into an async request, and only into a request of
//! the bio's queue, whose cooperator (if any, `bfq_setup_cooperator()`) the queue is merged
//! with first. A bio merge may let the grown request absorb its sort-list neighbour
//! (`attempt_merge()`); the absorbed request leaves BFQ (`bfq_requests_merged()`,
//! `bfq_remove_request()`) and is freed unstarted. A new request tries to join the end of
//! the cache's request, or of the newest one ending where it starts, before it is queued
//! (`blk_mq_sched_try_insert_merge()` in `bfq_insert_request()`). Only `max_sectors` bounds a
//! merge, as in the oracle's block layer.
//!
//! The [`crate::Elevator`] path does not merge (its driver merges on its own); the kernel
//! oracle calls [`Bfq::bio_merge`] and [`Bfq::insert_request_merging`].
//!
//! Kernel: bfq_bio_merge(), bfq_allow_bio_merge(), bfq_request_merge(), bfq_find_rq_fmerge(),
//! bfq_request_merged(), bfq_requests_merged(), bfq_finish_requeue_request() of an unstarted
//! request; elv_merge(), elv_rqhash_*(), blk_mq_sched_try_merge(), attempt_merge(),
//! blk_mq_sched_try_insert_merge().

use super::{Bfq, Slot};
use crate::request::{IoContextId, Op, Request, RequestId, Time};
use crate::trace::Trace;

/// Kernel: enum elv_merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Back,
    Front,
}

/// What a bio merge did: the bio joined `into` (at its front when `front`); `then` the
/// request merge that followed, `(absorbed, into)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BioMerge {
    pub into: RequestId,
    pub front: bool,
    pub then: Option<(RequestId, RequestId)>,
}

/// Kernel: bio_mergeable() (REQ_NOMERGE_FLAGS) and the operations that merge.
pub(crate) fn op_mergeable(rq: &Request) -> bool {
    matches!(rq.op, Op::Read | Op::Write) && !rq.flags.fua
}

impl Bfq {
    /// Kernel: elv_rb_add(): `slot` joins its queue's sort tree, after those at its sector.
    pub(crate) fn rb_add(&mut self, q: super::QId, slot: Slot) {
        self.sort_tree.ensure_trees(q + 1);
        let sector = self.h(slot).rq.sector;
        let held = &self.held;
        let key = |n: usize| held[n].as_ref().expect("held request").rq.sector;
        let at = self.sort_tree.search_for_insert(q, sector, key);
        self.sort_tree.insert(q, slot, at);
    }

    /// Kernel: elv_rb_del().
    pub(crate) fn rb_del(&mut self, q: super::QId, slot: Slot) {
        self.sort_tree.erase(q, slot);
    }

    /// Kernel: elv_rb_find(): the first request met on the search path starting at
    /// `sector`.
    fn rb_find(&self, q: super::QId, sector: u64) -> Option<Slot> {
        self.rb_root(q)?;
        let held = &self.held;
        let key = |n: usize| held[n].as_ref().expect("held request").rq.sector;
        self.sort_tree.search(q, sector, key).found
    }

    /// The root of a queue's sort tree (none for a queue that never had a request).
    fn rb_root(&self, q: super::QId) -> Option<Slot> {
        (q < self.sort_tree.trees()).then(|| self.sort_tree.root(q))?
    }

    /// Kernel: rb_next() / rb_prev() on a queued request's node.
    pub(crate) fn rb_next(&self, slot: Slot) -> Option<Slot> {
        self.sort_tree.next(slot)
    }

    pub(crate) fn rb_prev(&self, slot: Slot) -> Option<Slot> {
        self.sort_tree.prev(slot)
    }

    /// Kernel: rb_first() of a queue's sort list.
    pub(crate) fn rb_first(&self, q: super::QId) -> Option<Slot> {
        let mut at = self.rb_root(q)?;
        while let Some(l) = self.sort_tree.left(at) {
            at = l;
        }
        Some(at)
    }

    /// Kernel: rq_mergeable().
    fn rq_mergeable(&self, slot: Slot) -> bool {
        let h = self.h(slot);
        op_mergeable(&h.rq) && !h.nomerge
    }

    /// Kernel: elv_rqhash_add(): the newest of its end.
    pub(crate) fn hash_add(&mut self, slot: Slot) {
        let end = self.h(slot).rq.end_sector();
        self.hash.add(slot, end);
    }

    /// Kernel: elv_rqhash_del().
    pub(crate) fn hash_del(&mut self, slot: Slot) {
        self.hash.del(slot);
    }

    /// Kernel: elv_rqhash_find(): the newest mergeable request ending at `end`.
    fn hash_find(&mut self, end: u64) -> Option<Slot> {
        let held = &self.held;
        self.hash.find(end, |s| {
            let h = held[s].as_ref().expect("a hashed request is held");
            op_mergeable(&h.rq) && !h.nomerge
        })
    }

    /// Kernel: elv_bio_merge_ok() with bfq_allow_bio_merge().
    fn bio_merge_ok(
        &mut self,
        slot: Slot,
        bio: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        let rq = self.h(slot).rq;
        if !self.rq_mergeable(slot) || !op_mergeable(bio) || rq.op != bio.op {
            return false;
        }
        if rq.cgroup != bio.cgroup || rq.ioprio != bio.ioprio {
            return false;
        }
        self.allow_bio_merge(slot, bio, now, trace)
    }

    /// Kernel: bfq_allow_bio_merge(): the bio's queue (merged first with its cooperator)
    /// must hold the request.
    fn allow_bio_merge(
        &mut self,
        slot: Slot,
        bio: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        if bio.is_sync() && !self.h(slot).rq.is_sync() {
            return false;
        }
        let (Some(mut q), Some(bic)) = (self.bio_bfqq, self.bio_bic) else {
            return false;
        };
        if let Some(new) = self.setup_cooperator(q, bio.sector, bic, now, trace) {
            q = self.merge_chain(bic, q, new, now, trace);
            self.bio_bfqq = Some(q);
        }
        self.h(slot).bfqq == q
    }

    /// Kernel: bfq_find_rq_fmerge(): the bio's queue's request starting where the bio ends
    /// (elv_rb_find(): the first met at that sector).
    fn find_rq_fmerge(&self, bio: &Request) -> Option<Slot> {
        self.rb_find(self.bio_bfqq?, bio.end_sector())
    }

    /// Kernel: elv_merge() with bfq_request_merge() as the scheduler's lookup.
    fn elv_merge(
        &mut self,
        bio: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<(Slot, Kind)> {
        if !op_mergeable(bio) {
            return None;
        }
        if let Some(last) = self.last_merge {
            if self.bio_merge_ok(last, bio, now, trace) {
                let rq = self.h(last).rq;
                if rq.end_sector() == bio.sector {
                    return Some((last, Kind::Back));
                }
                if rq.sector.wrapping_sub(u64::from(bio.nr_sectors)) == bio.sector {
                    return Some((last, Kind::Front));
                }
            }
        }
        if let Some(slot) = self.hash_find(bio.sector) {
            if self.bio_merge_ok(slot, bio, now, trace) {
                return Some((slot, Kind::Back));
            }
        }
        let slot = self.find_rq_fmerge(bio)?;
        self.bio_merge_ok(slot, bio, now, trace)
            .then_some((slot, Kind::Front))
    }

    /// The size check of bio_attempt_back/front_merge(): a request that cannot grow is
    /// marked unmergeable and leaves the one-hit cache.
    fn fits_or_nomerge(&mut self, slot: Slot, sectors: u32) -> bool {
        if self.h(slot).rq.nr_sectors + sectors <= self.max_sectors {
            return true;
        }
        self.hm(slot).nomerge = true;
        if self.last_merge == Some(slot) {
            self.last_merge = None;
        }
        false
    }

    /// Kernel: bfq_bio_merge(): `bio` of a process joins one of its queue's requests, if
    /// one is adjacent; the merges are reported through `trace` as they happen
    /// ([`Trace::bio_merged`], [`Trace::requests_merged`]).
    pub fn bio_merge(
        &mut self,
        bio: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<BioMerge> {
        self.listen(trace);
        let bic = self
            .bics
            .get(bio.ioc)
            .filter(|b| !b.exited)
            .map(|_| bio.ioc);
        self.bio_bfqq = None;
        if let Some(bic) = bic {
            self.bic_update_cgroup(bic, bio, now, trace);
            self.bio_bfqq = self.bics[&bic].bfqq[usize::from(bio.is_sync())];
        }
        self.bio_bic = bic;
        let merged = self.try_merge(bio, now, trace);
        self.bio_bfqq = None;
        self.bio_bic = None;
        let (merged, freed) = merged?;
        if let Some(slot) = freed {
            self.free_unstarted(slot, now, trace);
        }
        Some(merged)
    }

    /// Kernel: blk_mq_sched_try_merge(): the merge and the request to free after it.
    fn try_merge(
        &mut self,
        bio: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<(BioMerge, Option<Slot>)> {
        let (slot, kind) = self.elv_merge(bio, now, trace)?;
        if !self.fits_or_nomerge(slot, bio.nr_sectors) {
            return None;
        }
        let rq = &mut self.hm(slot).rq;
        if kind == Kind::Front {
            rq.sector = bio.sector;
        }
        rq.nr_sectors += bio.nr_sectors;
        let into = rq.id;
        trace.bio_merged(now, bio.id, into, kind == Kind::Front);
        let pair = match kind {
            Kind::Back => self.rb_next(slot).map(|n| (slot, n)),
            Kind::Front => self.rb_prev(slot).map(|p| (p, slot)),
        };
        let absorbed = pair.and_then(|(req, next)| {
            self.attempt_merge(req, next, now, trace)
                .then_some((req, next))
        });
        if absorbed.is_none() {
            if kind == Kind::Front {
                self.request_merged_front(slot, now, trace);
            } else {
                self.hash_del(slot);
                self.hash_add(slot);
            }
            self.last_merge = Some(slot);
        }
        let then = absorbed.map(|(req, next)| (self.h(next).rq.id, self.h(req).rq.id));
        let merge = BioMerge {
            into,
            front: kind == Kind::Front,
            then,
        };
        Some((merge, absorbed.map(|(_, next)| next)))
    }

    /// Kernel: bfq_request_merged() for a front merge: a request that now starts before its
    /// sort-list predecessor moves, and may become its queue's next request.
    fn request_merged_front(&mut self, slot: Slot, now: Time, trace: &mut dyn Trace) {
        assert!(self.h(slot).sorted, "a queued request is sorted");
        let q = self.h(slot).bfqq;
        let Some(prev) = self.rb_prev(slot) else {
            return;
        };
        if self.h(slot).rq.sector >= self.h(prev).rq.sector {
            return;
        }
        self.rb_del(q, slot);
        self.rb_add(q, slot);
        let before = self.q(q).next_rq;
        let next = self.choose_req(before, Some(slot), self.last_position);
        self.qm(q).next_rq = next;
        if before != next {
            self.updated_next_req(q, now, trace);
            if !self.nonrot_with_queueing {
                self.pos_tree_add_move(q, now, trace);
            }
        }
    }

    /// Kernel: attempt_merge(): `next` joins the end of `req` if they are contiguous and
    /// compatible; then bfq_requests_merged(). The caller frees `next`.
    fn attempt_merge(&mut self, req: Slot, next: Slot, now: Time, trace: &mut dyn Trace) -> bool {
        let (a, b) = (self.h(req).rq, self.h(next).rq);
        if !self.rq_mergeable(req) || !self.rq_mergeable(next) || a.op != b.op {
            return false;
        }
        if a.ioprio != b.ioprio || a.cgroup != b.cgroup || a.end_sector() != b.sector {
            return false;
        }
        if a.nr_sectors + b.nr_sectors > self.max_sectors {
            return false;
        }
        self.hm(req).rq.nr_sectors += b.nr_sectors;
        trace.requests_merged(now, b.id, a.id);
        self.requests_merged(req, next, now, trace);
        self.hash_del(req);
        self.hash_add(req);
        self.last_merge = Some(req);
        true
    }

    /// Kernel: bfq_requests_merged(): `req` takes `next`'s FIFO place if `next` is older
    /// and of the same queue, and its place as the queue's next request; `next` leaves BFQ.
    fn requests_merged(&mut self, req: Slot, next: Slot, now: Time, trace: &mut dyn Trace) {
        let q = self.h(req).bfqq;
        let queued = |s: Slot| self.h(s).sorted;
        if q == self.h(next).bfqq
            && queued(req)
            && queued(next)
            && self.h(next).fifo_time < self.h(req).fifo_time
        {
            self.fifo_remove(q, req);
            self.fifo_replace(q, next, req);
            let t = self.h(next).fifo_time;
            self.hm(req).fifo_time = t;
        }
        if self.q(q).next_rq == Some(next) {
            self.qm(q).next_rq = Some(req);
        }
        if self.h(next).sorted {
            self.remove_request(next, now, trace);
        }
    }

    /// Kernel: bfq_finish_requeue_request() of a request merged away before it started:
    /// its queue and process lose its references.
    fn free_unstarted(&mut self, slot: Slot, now: Time, trace: &mut dyn Trace) {
        let q = self.h(slot).bfqq;
        self.request_freed(q);
        self.put_queue(q, now, trace);
        let held = self.release(slot);
        self.drop_bic_request(held.bic);
    }

    /// One request fewer holds the process context; an exited one goes with its last.
    #[inline(always)]
    pub(crate) fn drop_bic_request(&mut self, bic: IoContextId) {
        let b = self.bics.get_mut(bic).expect("bic of a held request");
        b.requests -= 1;
        if b.exited && b.requests == 0 {
            self.bics.remove(bic);
        }
    }

    /// Kernel: blk_mq_sched_try_insert_merge(): the new request `slot` joins the end of the
    /// one-hit cache's request, or of the newest request ending where it starts, and so on
    /// while the grown request can join another. The merges, `(absorbed, into)`.
    fn try_insert_merge(
        &mut self,
        slot: Slot,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Vec<(Slot, Slot)> {
        let mut merges = Vec::new();
        if let Some(last) = self.last_merge {
            if self.attempt_merge(last, slot, now, trace) {
                merges.push((slot, last));
                return merges;
            }
        }
        let mut rq = slot;
        while let Some(back) = self.hash_find(self.h(rq).rq.sector) {
            if !self.attempt_merge(back, rq, now, trace) {
                break;
            }
            merges.push((rq, back));
            rq = back;
        }
        merges
    }

    /// Kernel: bfq_insert_request() with its insert merge: `rq` is queued, or absorbed by a
    /// queued request (and then freed, as those it absorbs in turn). The request merges,
    /// `(absorbed, into)`, reported through `trace` as they happen too.
    pub fn insert_request_merging(
        &mut self,
        rq: Request,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Vec<(RequestId, RequestId)> {
        self.listen(trace);
        let slot = self.prepare_insert(rq, now, trace);
        let merges = self.try_insert_merge(slot, now, trace);
        if merges.is_empty() {
            self.queue_request(slot, now, trace);
            return Vec::new();
        }
        let ids = merges
            .iter()
            .map(|&(a, i)| (self.h(a).rq.id, self.h(i).rq.id))
            .collect();
        // blk_mq_free_requests() on a list each was added at the head of: newest first.
        for &(absorbed, _) in merges.iter().rev() {
            self.free_unstarted(absorbed, now, trace);
        }
        ids
    }
}
