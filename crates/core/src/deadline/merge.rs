//! Merging into mq-deadline's requests: the block layer's merge path with mq-deadline's
//! hooks. Kernel: elv_merge(), blk_try_merge(), blk_rq_merge_ok(), elv_rqhash_find(),
//! dd_request_merge(), blk_mq_sched_try_merge(), attempt_merge(), elv_attempt_insert_merge(),
//! dd_request_merged(), dd_merged_requests(), req_set_nomerge() (6.12).
//!
//! A bio tries the one-hit cache (`q->last_merge`, back or front), then the hash of request
//! ends (back), then mq-deadline's sort tree (front, when `front_merges`). The first
//! candidate found is the only one tried: if it cannot grow by the bio (max_sectors) it is
//! marked unmergeable and the bio gets a request of its own. After a bio merge the request
//! tries to absorb its sort-tree successor (back) or be absorbed by its predecessor (front);
//! an absorbed request leaves the scheduler, and a survivor takes over the earlier FIFO
//! deadline and place. A new request tries the same with the cache and the hash before it
//! is inserted. Merges need the same operation, direction and I/O priority.

use super::{direction, Deadline, Held, Slot};
use crate::request::{Op, Request, RequestId};

/// Kernel: enum elv_merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Back,
    Front,
}

/// A request absorbed by another (attempt_merge()): `absorbed` is gone, its bios ride on
/// `into`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestMerge {
    pub absorbed: RequestId,
    pub into: RequestId,
}

/// What a bio merge did: the bio joined `into` at its front or back, and `then` the
/// request merge that followed, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BioMerge {
    pub into: RequestId,
    pub front: bool,
    pub then: Option<RequestMerge>,
}

pub(super) fn op_mergeable(rq: &Request) -> bool {
    matches!(rq.op, Op::Read | Op::Write) && !rq.flags.fua
}

/// Kernel: rq_mergeable() on a held request.
fn held_mergeable(h: &Held) -> bool {
    op_mergeable(&h.rq) && !h.nomerge
}

impl Deadline {
    /// Kernel: rq_mergeable().
    pub(super) fn mergeable(&self, slot: Slot) -> bool {
        held_mergeable(self.held(slot))
    }

    /// Kernel: blk_rq_merge_ok() (elv_bio_merge_ok(); mq-deadline has no allow_merge), with
    /// blk_cgroup_mergeable(): a bio joins only a request of its own cgroup.
    fn merge_ok(&self, slot: Slot, bio: &Request) -> bool {
        let rq = &self.held(slot).rq;
        self.mergeable(slot)
            && op_mergeable(bio)
            && rq.op == bio.op
            && rq.ioprio == bio.ioprio
            && rq.cgroup == bio.cgroup
    }

    /// Kernel: elv_rqhash_add(), under the request's end sector.
    pub(super) fn hash_add(&mut self, slot: Slot) {
        let end = self.held(slot).rq.end_sector();
        self.hash.add(slot as usize, end);
    }

    /// Kernel: elv_rqhash_del().
    pub(super) fn hash_del(&mut self, slot: Slot) {
        self.hash.del(slot as usize);
    }

    /// Kernel: elv_rqhash_find(): the newest mergeable request ending at `end`.
    fn hash_find(&mut self, end: u64) -> Option<Slot> {
        let slots = &self.slots;
        let found = self.hash.find(end, |s| {
            held_mergeable(slots[s].as_ref().expect("a hashed request is held"))
        })?;
        Some(Slot::try_from(found).expect("slots fit in u32"))
    }

    /// Kernel: elv_merge() with dd_request_merge() as the scheduler's lookup.
    fn elv_merge(&mut self, bio: &Request) -> Option<(Slot, Kind)> {
        if !op_mergeable(bio) {
            return None;
        }
        if let Some(last) = self.last_merge.filter(|&s| self.merge_ok(s, bio)) {
            let rq = self.held(last).rq;
            if rq.end_sector() == bio.sector {
                return Some((last, Kind::Back));
            }
            if rq.sector.wrapping_sub(u64::from(bio.nr_sectors)) == bio.sector {
                return Some((last, Kind::Front));
            }
        }
        if let Some(slot) = self
            .hash_find(bio.sector)
            .filter(|&s| self.merge_ok(s, bio))
        {
            return Some((slot, Kind::Back));
        }
        if self.front_merges == 0 {
            return None;
        }
        let tree = super::class_to_prio(bio.ioprio.class) * 2 + direction(bio);
        let found = self
            .sort
            .search(tree, bio.end_sector(), Self::sector_of(&self.sectors))
            .found? as Slot;
        self.merge_ok(found, bio).then_some((found, Kind::Front))
    }

    /// Kernel: ll_back_merge_fn()/ll_front_merge_fn()'s size check, with req_set_nomerge()
    /// when the request cannot take `sectors` more.
    fn fits_or_nomerge(&mut self, slot: Slot, sectors: u32) -> bool {
        if self.held(slot).rq.nr_sectors + sectors <= self.max_sectors {
            return true;
        }
        self.held_mut(slot).nomerge = true;
        if self.last_merge == Some(slot) {
            self.last_merge = None;
        }
        false
    }

    /// Kernel: blk_mq_sched_try_merge() as dd_bio_merge() calls it; the absorbed request,
    /// if any, is freed (dd_finish_request() counts it completed).
    pub fn bio_merge(&mut self, bio: &Request) -> Option<BioMerge> {
        let (slot, kind) = self.elv_merge(bio)?;
        let merged = self.merge_bio(slot, kind, bio)?;
        let then = match kind {
            Kind::Back => self
                .sort_next(slot)
                .and_then(|n| self.attempt_merge(slot, n)),
            Kind::Front => self
                .sort_prev(slot)
                .and_then(|p| self.attempt_merge(p, slot)),
        };
        if then.is_none() {
            self.merged_request(slot, kind);
        }
        Some(BioMerge {
            into: merged,
            front: kind == Kind::Front,
            then,
        })
    }

    /// The bio merge of the [`crate::Elevator`] trait: `front` says which call this is;
    /// only the kind elv_merge() picks is done, and no request merge follows.
    pub(super) fn bio_merge_only(&mut self, bio: &Request, front: bool) -> Option<RequestId> {
        let (slot, kind) = self.elv_merge(bio)?;
        if (kind == Kind::Front) != front {
            return None;
        }
        let merged = self.merge_bio(slot, kind, bio)?;
        self.merged_request(slot, kind);
        Some(merged)
    }

    /// Kernel: bio_attempt_back_merge() / bio_attempt_front_merge().
    fn merge_bio(&mut self, slot: Slot, kind: Kind, bio: &Request) -> Option<RequestId> {
        if !self.fits_or_nomerge(slot, bio.nr_sectors) {
            return None;
        }
        if kind == Kind::Front {
            self.set_sector(slot, bio.sector);
        }
        let rq = &mut self.held_mut(slot).rq;
        rq.nr_sectors += bio.nr_sectors;
        Some(rq.id)
    }

    fn sort_next(&self, slot: Slot) -> Option<Slot> {
        self.sort.next(slot as usize).map(|n| n as Slot)
    }

    fn sort_prev(&self, slot: Slot) -> Option<Slot> {
        self.sort.prev(slot as usize).map(|n| n as Slot)
    }

    /// Kernel: elv_merged_request() → dd_request_merged(): a front-merged request moves in
    /// its tree, a back-merged one on the hash; either becomes the one-hit cache.
    fn merged_request(&mut self, slot: Slot, kind: Kind) {
        if kind == Kind::Front {
            self.tree_del(slot);
            self.tree_add(slot);
        } else {
            self.hash_del(slot);
            self.hash_add(slot);
        }
        self.last_merge = Some(slot);
    }

    /// Kernel: attempt_merge(): `next` joins the end of `req` if they are contiguous and
    /// compatible and fit; then elv_merge_requests() → dd_merged_requests(), and `next` is
    /// freed.
    fn attempt_merge(&mut self, req: Slot, next: Slot) -> Option<RequestMerge> {
        let (a, b) = (self.held(req).rq, self.held(next).rq);
        if !self.mergeable(req) || !self.mergeable(next) {
            return None;
        }
        // blk_cgroup_mergeable(req, next->bio): requests of two cgroups stay apart.
        if a.op != b.op || a.ioprio != b.ioprio || a.cgroup != b.cgroup {
            return None;
        }
        if a.end_sector() != b.sector {
            return None;
        }
        if a.nr_sectors + b.nr_sectors > self.max_sectors {
            return None;
        }
        self.held_mut(req).rq.nr_sectors += b.nr_sectors;
        self.merged_requests(req, next);
        self.hash_del(req);
        self.hash_add(req);
        self.last_merge = Some(req);
        let prio = self.held(next).prio;
        self.stats[prio].completed = self.stats[prio].completed.wrapping_add(1);
        self.release(next);
        Some(RequestMerge {
            absorbed: b.id,
            into: a.id,
        })
    }

    /// Kernel: dd_merged_requests(): `req` takes `next`'s FIFO place and deadline when
    /// `next` expires first; `next` leaves the scheduler.
    fn merged_requests(&mut self, req: Slot, next: Slot) {
        let prio = self.held(next).prio;
        self.stats[prio].merged = self.stats[prio].merged.wrapping_add(1);
        if self.fifo.is_linked(req) && self.fifo.is_linked(next) {
            let (req_time, next_time) = (self.held(req).fifo_time, self.held(next).fifo_time);
            if super::time_after(req_time, next_time) {
                self.fifo.move_after(req, next);
                self.held_mut(req).fifo_time = next_time;
            }
        }
        self.remove_request(next);
    }

    /// Kernel: elv_attempt_insert_merge(): the new request `slot` joins the end of the
    /// one-hit cache's request, or of the newest request ending where it starts, and so on
    /// while the grown request can join another.
    pub(super) fn insert_merge(&mut self, slot: Slot) -> Vec<super::RequestMerge> {
        let mut merges = Vec::new();
        if let Some(last) = self.last_merge {
            if let Some(m) = self.attempt_merge(last, slot) {
                merges.push(m);
                return merges;
            }
        }
        let mut rq = slot;
        while let Some(back) = self.hash_find(self.held(rq).rq.sector) {
            let Some(m) = self.attempt_merge(back, rq) else {
                break;
            };
            merges.push(m);
            rq = back;
        }
        merges
    }
}
