//! Bio merging: a new bio that continues a request still waiting in the queue it would be
//! queued on joins that request instead of becoming a request of its own.
//!
//! CFQ only lets a bio merge within its own queue (`cfq_allow_bio_merge()`): a sync bio never
//! joins an async request, and a process never extends another process's request. A back
//! merge leaves the request's start, FIFO deadline and sort position alone; a front merge
//! moves its start back, so the request is repositioned in the sort list and the queue's
//! next request chosen again, as cfq_merged_request() does.
//! Kernel: cfq_allow_bio_merge(), cfq_merged_request(), cfq_reposition_rq_rb(), elv_merge().

use super::queue::{boost_on_prio, init_prio_data};
use super::{Cfq, QId};
use crate::request::{Request, RequestId};

impl Cfq {
    /// The queue `bio` would be queued on, if it exists already; merging never creates one.
    fn merge_queue(&self, bio: &Request) -> Option<QId> {
        if bio.is_sync() {
            let cic = &self.cics[*self.cic_of.get(&bio.ioc)?];
            if cic.cgroup != bio.cgroup {
                return None;
            }
            let q = cic.sync_q?;
            // A pending cooperator hand-off sends the bio elsewhere: no merge.
            return self.queues[q].new_cfqq.is_none().then_some(q);
        }
        // cfq_allow_bio_merge(): only into the context's own async queue.
        let cic = &self.cics[*self.cic_of.get(&bio.ioc)?];
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
        let Some(&c) = self.cic_of.get(&bio.ioc) else {
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

    /// Kernel: elv_merge() back side within the bio's own queue.
    pub(crate) fn back_merge(&mut self, bio: &Request) -> Option<RequestId> {
        let q = self.merge_queue(bio)?;
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
        let before = cfqq.next_rq;
        let prev = before.map(|r| if r.1 == slot { (moved, slot) } else { r });
        let next = self.choose_req(prev, Some((moved, slot)), self.last_position);
        self.queues[q].next_rq = next;
        // The prio tree is keyed by the next request's sector, which may have moved.
        if before != next {
            self.prio_tree_add(q);
        }
        Some(target.id)
    }
}
