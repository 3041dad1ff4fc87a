//! Bio merging: a new bio that continues a request still waiting in the queue it would be
//! queued on joins that request instead of becoming a request of its own.
//!
//! CFQ only lets a bio merge within its own queue (`cfq_allow_bio_merge()`): a sync bio never
//! joins an async request, and a process never extends another process's request. Only the
//! back side is attempted; the merged request keeps its FIFO deadline and sort position
//! (its start sector does not move), so no tree needs repositioning.
//! Kernel: cfq_allow_bio_merge(), cfq_merged_request() (back merges), elv_merge().

use super::queue::effective_class;
use super::{Cfq, QId};
use crate::request::{IoPrioClass, Request, RequestId};

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
        let group = &self.groups[self.group_for(bio.cgroup)];
        let level = usize::from(bio.ioprio.level.min(7));
        match effective_class(bio.ioprio.class) {
            IoPrioClass::RealTime => group.async_queues[0][level],
            IoPrioClass::Idle => group.async_idle,
            _ => group.async_queues[1][level],
        }
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
}
