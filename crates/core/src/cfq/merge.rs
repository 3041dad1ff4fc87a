//! Bio merging: a new bio that continues a request still waiting in the queue it would be
//! queued on joins that request instead of becoming a request of its own.
//!
//! CFQ only lets a bio merge within its own queue (`cfq_allow_bio_merge()`): a sync bio never
//! joins an async request, and a process never extends another process's request. A back
//! merge leaves the request's start, FIFO deadline and sort position alone; a front merge
//! moves its start back, so the request is repositioned in the sort list and the queue's
//! next request chosen again, as cfq_merged_request() does. Two queued requests of one queue
//! that a bio made contiguous merge into one (`merge_requests`, cfq_merged_requests()).
//! Kernel: cfq_allow_bio_merge(), cfq_allow_rq_merge(), cfq_merged_request(),
//! cfq_reposition_rq_rb(), cfq_merged_requests(), elv_merge().

use super::queue::{boost_on_prio, init_prio_data, Slot};
use super::{Cfq, QId};
use crate::request::{Request, RequestId, Time};
use crate::trace::{RqEvent, Trace};

impl Cfq {
    /// The queue `bio` would be queued on, if it exists already; merging never creates one.
    #[inline(always)]
    fn merge_queue(&mut self, bio: &Request) -> Option<QId> {
        let c = self.cic_index(bio.ioc)?;
        if bio.is_sync() {
            let cic = &self.cics[c];
            if cic.cgroup != bio.cgroup {
                return None;
            }
            // A pending cooperator hand-off (`new_cfqq`) does not stop the merge: the kernel
            // switches the context's queue at request allocation (cfq_set_request() ->
            // cfq_merge_cfqqs()), after the bio had its chance to merge.
            return cic.sync_q;
        }
        // cfq_allow_bio_merge(): only into the context's own async queue.
        let cic = &self.cics[c];
        if cic.cgroup != bio.cgroup {
            return None;
        }
        cic.async_q
    }

    /// Kernel: cfq_may_queue() / __cfq_may_queue(), cfqq_boost_on_prio(): before a request
    /// is allocated, the queue its context already has for the request's sync-ness (none for
    /// a new process: no boost, and the queue created later is not boosted) re-reads a
    /// pending priority change, then takes the REQ_PRIO boost (an idle-class queue to BE, a
    /// level below NORM to NORM) or, without REQ_PRIO, drops it. A process CFQ is idling for
    /// may allocate past a full request list, once per slice.
    pub(crate) fn may_queue(&mut self, bio: &Request) -> bool {
        let Some(c) = self.cic_index(bio.ioc) else {
            return false;
        };
        let cic = &self.cics[c];
        let q = if bio.is_sync() {
            cic.sync_q
        } else {
            cic.async_q
        };
        let Some(q) = q else { return false };
        let prio = cic.ioprio;
        init_prio_data(&mut self.queues[q], prio);
        boost_on_prio(&mut self.queues[q], bio.flags.prio);
        let cfqq = &mut self.queues[q];
        if cfqq.wait_request && !cfqq.must_alloc_slice {
            cfqq.must_alloc_slice = true;
            return true;
        }
        false
    }

    /// Kernel: elv_merge(): the back side, then the front side, within the bio's own queue
    /// (found once for both).
    // Inline up to an empty queue's answer (no request to merge with: every process at a
    // small iodepth, whose requests are dispatched as they come), the searches out of line.
    #[inline]
    pub(crate) fn merge(&mut self, bio: &Request) -> Option<(RequestId, RqEvent)> {
        let q = self.merge_queue(bio)?;
        if self.queues[q].sort_list.is_empty() {
            return None;
        }
        self.merge_bio_into(q, bio)
    }

    /// merge() into a queue holding requests.
    #[inline(never)]
    fn merge_bio_into(&mut self, q: QId, bio: &Request) -> Option<(RequestId, RqEvent)> {
        if let Some(target) = self.back_merge_in(q, bio) {
            return Some((target, RqEvent::BackMerge));
        }
        self.front_merge_in(q, bio)
            .map(|target| (target, RqEvent::FrontMerge))
    }

    /// Kernel: elv_merge() back side within the bio's own queue.
    pub(crate) fn back_merge(&mut self, bio: &Request) -> Option<RequestId> {
        let q = self.merge_queue(bio)?;
        self.back_merge_in(q, bio)
    }

    fn back_merge_in(&mut self, q: QId, bio: &Request) -> Option<RequestId> {
        // An empty queue (every process at iodepth 1) answers before the search.
        if self.queues[q].sort_list.is_empty() {
            return None;
        }
        let (_, &slot) = self.queues[q]
            .sort_list
            .range(..(bio.sector, 0))
            .next_back()?;
        let pending = &mut self.pending[slot as usize];
        if !pending.rq.can_back_merge(bio) {
            return None;
        }
        pending.rq.nr_sectors += bio.nr_sectors;
        Some(pending.rq.id)
    }

    /// Kernel: elv_merge() front side, then cfq_merged_request() → cfq_reposition_rq_rb().
    pub(crate) fn front_merge(&mut self, bio: &Request) -> Option<RequestId> {
        let q = self.merge_queue(bio)?;
        self.front_merge_in(q, bio)
    }

    fn front_merge_in(&mut self, q: QId, bio: &Request) -> Option<RequestId> {
        if self.queues[q].sort_list.is_empty() {
            return None;
        }
        let end = bio.end_sector();
        let (&key, &slot) = self.queues[q].sort_list.range((end, 0)..).next()?;
        let target = self.pending[slot as usize].rq;
        if target.sector != end || !bio.can_back_merge(&target) {
            return None;
        }
        let pending = &mut self.pending[slot as usize];
        pending.rq.sector = bio.sector;
        pending.rq.nr_sectors += bio.nr_sectors;
        let moved = (bio.sector, key.1);
        let cfqq = &mut self.queues[q];
        cfqq.sort_list.remove(&key);
        cfqq.sort_list.insert(moved, slot);
        let before = cfqq.next_rq.map(|(_, s)| s);
        let prev = cfqq
            .next_rq
            .map(|r| if r.1 == slot { (moved, slot) } else { r });
        let next = self.choose_req(prev, Some((moved, slot)), self.last_position);
        self.queues[q].next_rq = next;
        // cfq_add_rq_rb() relinks the prio tree only when `next_rq` becomes another
        // *request* (a pointer comparison): when the front-merged request already was the
        // queue's next request, the queue stays where it was linked, under a key (the live
        // start sector) that has moved back.
        if before != next.map(|(_, s)| s) {
            self.prio_tree_add(q);
        }
        Some(target.id)
    }

    /// The queue holding pending request `slot`.
    fn queue_of_slot(&self, slot: Slot) -> Option<QId> {
        let key = self.pending[slot as usize].key();
        (0..self.queues.len()).find(|&q| self.queues[q].sort_list.get(&key) == Some(&slot))
    }

    /// The pending slot of queued request `id`.
    fn slot_of(&self, id: RequestId) -> Option<Slot> {
        self.queues.iter().find_map(|cfqq| {
            cfqq.sort_list
                .values()
                .copied()
                .find(|&s| self.pending[s as usize].rq.id == id)
        })
    }

    /// Two queued requests became contiguous (a bio filled the gap between them): `next`,
    /// which starts where `into` ends, joins `into` and leaves the scheduler. Answers whether
    /// the merge happened.
    ///
    /// Kernel: the block layer's attempt_back_merge() / attempt_front_merge() →
    /// attempt_merge(), asking cfq_allow_rq_merge() (both requests in one queue), then
    /// cfq_merged_requests(): `into` takes `next`'s place in the FIFO and its deadline when
    /// `next` is older, becomes the queue's next request if `next` was, and `next` is removed
    /// as cfq_remove_request() does. The merged request keeps the earlier allocation time
    /// (attempt_merge()'s `start_time_ns`).
    ///
    /// Choice: the drivers never offer this merge yet (their bios merge into one request at
    /// a time); the hook is here, exact, for a driver that models the block layer's
    /// request-to-request merges.
    pub fn merge_requests(
        &mut self,
        into: RequestId,
        next: RequestId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        self.listen(trace);
        let (Some(a), Some(b)) = (self.slot_of(into), self.slot_of(next)) else {
            return false;
        };
        let q = self
            .queue_of_slot(a)
            .expect("a queued request sits in a queue");
        // cfq_allow_rq_merge(): never across queues.
        if self.queue_of_slot(b) != Some(q) {
            return false;
        }
        let (rq_a, rq_b) = (self.pending[a as usize].rq, self.pending[b as usize].rq);
        if !rq_a.can_back_merge(&rq_b) {
            return false;
        }
        self.fifo_take_place(q, a, b);
        let (pa, pb) = (self.pending[a as usize], self.pending[b as usize]);
        let merged = &mut self.pending[a as usize];
        merged.rq.nr_sectors += pb.rq.nr_sectors;
        merged.start_time = pa.start_time.min(pb.start_time);
        if self.queues[q].next_rq.map(|(_, s)| s) == Some(b) {
            self.queues[q].next_rq = Some((pa.key(), a));
        }
        self.remove_merged(q, b, now, trace);
        true
    }

    /// cfq_merged_requests()'s FIFO step: when `next` (slot `b`) is older, `into` (slot `a`)
    /// moves to `next`'s place in the FIFO and takes its deadline.
    fn fifo_take_place(&mut self, q: QId, a: Slot, b: Slot) {
        let (pa, pb) = (self.pending[a as usize], self.pending[b as usize]);
        if pb.fifo_time >= pa.fifo_time {
            return;
        }
        self.fifo_unlink(q, a);
        self.fifo_replace(q, b, a);
        self.pending[a as usize].fifo_time = pb.fifo_time;
    }

    /// Kernel: cfq_remove_request() of a request merged away, then cfq_merged_requests()'s
    /// removal of a queue left empty (unless it is the active one).
    fn remove_merged(&mut self, q: QId, b: Slot, now: Time, trace: &mut dyn Trace) {
        let key = self.pending[b as usize].key();
        if self.queues[q].next_rq.map(|(_, s)| s) == Some(b) {
            let next = self.find_next_rq(q, key);
            self.queues[q].next_rq = next;
        }
        if self.fifo_linked(q, b) {
            self.fifo_unlink(q, b);
        }
        let pending = self.free_pending_slot(b);
        let cfqq = &mut self.queues[q];
        let removed = cfqq.sort_list.remove(&key);
        assert_eq!(removed, Some(b), "merged request is queued");
        let sync = usize::from(pending.rq.is_sync());
        assert!(cfqq.queued[sync] > 0, "queued count underflow");
        cfqq.queued[sync] -= 1;
        if pending.rq.flags.prio {
            cfqq.prio_pending -= 1;
        }
        let empty = cfqq.sort_list.is_empty();
        if cfqq.on_rr && empty {
            self.prio_tree_remove(q);
        }
        self.rq_queued -= 1;
        if self.queues[q].on_rr && empty && self.active_queue != Some(q) {
            self.del_from_rr(q, now, trace);
        }
    }
}
