//! Cooperating queues: processes interleaving I/O on neighbouring sectors (e.g. threads
//! without CLONE_IO reading one file) are served back to back and then merged into one queue.
//!
//! When the active queue runs dry, CFQ looks in the prio tree of its level for a busy queue
//! whose next request starts at (or within 4 MiB of) the head; that queue is activated at once
//! and a merge is planned toward the side with more process references. The hand-off happens
//! when a process of the merged-away queue next inserts a request (the kernel does it at
//! request allocation). A merged queue that turns seeky is split again at its next insertion.
//! Kernel: cfq_close_cooperator(), cfqq_close(), cfq_prio_tree_lookup(), cfq_setup_merge(),
//! cfq_merge_cfqqs(), split_cfqq(), cfq_put_cooperator().

use super::{Cfq, QId, CFQQ_CLOSE_THR};
use crate::request::Time;
use crate::trace::{DecisionKind, Trace};

impl Cfq {
    fn rq_close(&self, q: QId) -> bool {
        self.next_pending(q)
            .is_some_and(|p| p.rq.sector.abs_diff(self.last_position) <= CFQQ_CLOSE_THR)
    }

    /// Kernel: cfqq_close(): an exact hit for the head's sector, else the *last node of the
    /// search path* (which one depends on the tree's shape, see `rbtree`) if close, else
    /// that node's in-order neighbour toward the head if close. Only one candidate comes
    /// back; `close_cooperator` does not try another when it rejects it.
    fn queue_close(&mut self, cur: QId) -> Option<QId> {
        let level = usize::from(self.queues[cur].org_ioprio.min(7));
        self.prio_trees.flush();
        let trees = self.prio_trees.settled();
        trees.root(level)?;
        let sector = self.last_position;
        let at = trees.search(level, sector, |n| self.prio_key(n));
        if let Some(q) = at.found {
            return Some(q);
        }
        let parent = at.parent.expect("a non-empty tree's search visits a node");
        if self.rq_close(parent) {
            return Some(parent);
        }
        let other = if self.prio_key(parent) < sector {
            trees.next(parent)
        } else {
            trees.prev(parent)
        }?;
        self.rq_close(other).then_some(other)
    }

    /// Kernel: cfq_close_cooperator(). Its first rule inline: a seeky queue (every random
    /// reader) has none, and completions ask at every request.
    // Always inline: out of line (three callers) the call cost more than the rule (issue 34).
    #[inline(always)]
    pub(crate) fn close_cooperator(&mut self, cur: QId) -> Option<QId> {
        let cq = &self.queues[cur];
        if cq.class_idle() || !cq.sync || cq.seeky() {
            return None;
        }
        self.close_cooperator_search(cur)
    }

    /// cfq_close_cooperator() past its first rule.
    #[inline(never)]
    fn close_cooperator_search(&mut self, cur: QId) -> Option<QId> {
        let cq = &self.queues[cur];
        if self.groups[cq.group].nr_cfqq == 1 {
            return None;
        }
        let c = self.queue_close(cur)?;
        let (cq, cand) = (&self.queues[cur], &self.queues[c]);
        if c == cur || cand.group != cq.group || !cand.sync || cand.seeky() {
            return None;
        }
        if cand.class_rt() != cq.class_rt() {
            return None;
        }
        Some(c)
    }

    /// Kernel: cfq_setup_merge(): plan a merge toward the queue with more process refs.
    pub(crate) fn setup_merge(&mut self, q: QId, mut new: QId) {
        if self.queues[new].proc_refs == 0 {
            return;
        }
        let mut steps = 0;
        while let Some(next) = self.queues[new].new_cfqq {
            if next == q {
                return;
            }
            new = next;
            steps += 1;
            assert!(steps <= self.queues.len(), "new_cfqq chain loops");
        }
        let refs = self.queues[q].proc_refs;
        let new_refs = self.queues[new].proc_refs;
        if refs == 0 || new_refs == 0 {
            return;
        }
        self.merges_planned = true;
        if new_refs >= refs {
            self.queues[q].new_cfqq = Some(new);
            self.queues[new].proc_refs += refs;
        } else {
            self.queues[new].new_cfqq = Some(q);
            self.queues[q].proc_refs += new_refs;
        }
    }

    /// Kernel: cfq_merge_cfqqs(), applied at the process's next insertion.
    #[inline]
    pub(crate) fn follow_merge(
        &mut self,
        c: usize,
        q: QId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> QId {
        match self.queues[q].new_cfqq {
            None => q,
            Some(target) => self.merge_into(c, q, target, now, trace),
        }
    }

    /// follow_merge() with a merge planned: the context moves to `target`.
    fn merge_into(
        &mut self,
        c: usize,
        q: QId,
        target: QId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> QId {
        // Choice: `%p` (the target's address) becomes the target's slab index in hex.
        self.log_q(
            trace,
            now,
            q,
            format_args!("merging with queue 0x{target:x}"),
        );
        self.decide(
            trace,
            now,
            DecisionKind::Merge,
            Some(q),
            "cooperating queues merged",
            None,
        );
        self.cics[c].sync_q = Some(target);
        self.queues[target].coop = true;
        // The target's reference for this process was taken at setup_merge().
        self.put_process_ref(q, now, trace);
        target
    }

    /// Kernel: split_cfqq(): `None` when the process must get a fresh queue.
    pub(crate) fn split_queue(
        &mut self,
        c: usize,
        q: QId,
        pid: u32,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<QId> {
        if self.queues[q].proc_refs == 1 {
            let cfqq = &mut self.queues[q];
            cfqq.pid = pid;
            cfqq.coop = false;
            cfqq.split_coop = false;
            return Some(q);
        }
        self.cics[c].sync_q = None;
        // cfq_put_cooperator(): release the references pre-taken along the merge chain.
        let mut next = self.queues[q].new_cfqq;
        let mut steps = 0;
        while let Some(n) = next {
            if n == q || steps > self.queues.len() {
                break;
            }
            next = self.queues[n].new_cfqq;
            if self.queues[n].proc_refs > 0 {
                self.put_process_ref(n, now, trace);
            }
            steps += 1;
        }
        self.put_process_ref(q, now, trace);
        None
    }
}
