//! Burst detection: many queues created close together (a program starting, `git grep`
//! forking workers) are a *burst*; from `large_burst_thresh` (8) members on, the burst is
//! large and its queues are neither weight-raised nor idled for as interactive ones would be,
//! since raising them all would defeat the purpose.
//!
//! A new sync queue joins the current burst if it arrives within `burst_interval` (180 ms)
//! of the previous one and under the same parent group; otherwise a new burst starts with it
//! (as its only member when no queue is busy).
//!
//! Kernel: bfq_handle_burst(), bfq_reset_burst_list(), bfq_add_to_burst().

use super::{time_after, time_after_eq, Bfq, QId};
use crate::deadline::tunables::msecs_to_jiffies;
use crate::request::Time;

impl Bfq {
    /// Kernel: bfq_reset_burst_list().
    fn reset_burst_list(&mut self, q: QId) {
        let members: Vec<QId> = self.burst_list.drain(..).collect();
        for m in members {
            self.qm(m).in_burst_list = false;
        }
        if self.tot_busy_queues() == 0 {
            self.burst_list.push_front(q);
            self.qm(q).in_burst_list = true;
            self.burst_size = 1;
        } else {
            self.burst_size = 0;
        }
        self.burst_parent_entity = self.qe(q).parent;
    }

    /// Kernel: bfq_add_to_burst().
    fn add_to_burst(&mut self, q: QId) {
        self.burst_size += 1;
        if self.burst_size == self.tun.large_burst_thresh {
            self.large_burst = true;
            let members: Vec<QId> = self.burst_list.drain(..).collect();
            for m in members {
                let b = self.qm(m);
                b.in_large_burst = true;
                b.in_burst_list = false;
            }
            self.qm(q).in_large_burst = true;
        } else {
            self.burst_list.push_front(q);
            self.qm(q).in_burst_list = true;
        }
    }

    /// Kernel: bfq_handle_burst(): called for a just-created sync queue.
    pub(crate) fn handle_burst(&mut self, q: QId, now: Time) {
        let j = Bfq::jif(now);
        let b = self.q(q);
        if b.in_burst_list
            || b.in_large_burst
            || time_after_eq(b.split_time.wrapping_add(msecs_to_jiffies(10)), j)
        {
            return;
        }
        if time_after(
            j,
            self.last_ins_in_burst.wrapping_add(self.tun.burst_interval),
        ) || self.qe(q).parent != self.burst_parent_entity
        {
            self.large_burst = false;
            self.reset_burst_list(q);
        } else if self.large_burst {
            self.qm(q).in_large_burst = true;
        } else {
            self.add_to_burst(q);
        }
        self.last_ins_in_burst = j;
    }

    /// Removes a queue from the burst list (a queue idle for long, or freed). Kernel:
    /// hlist_del_init(&bfqq->burst_list_node).
    pub(crate) fn burst_list_del(&mut self, q: QId) {
        if self.q(q).in_burst_list {
            self.burst_list.retain(|&x| x != q);
            self.qm(q).in_burst_list = false;
        }
    }
}
