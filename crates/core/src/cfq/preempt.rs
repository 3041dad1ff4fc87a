//! Preemption: a request arriving for a queue other than the active one may end the active
//! queue's slice at once and put its own queue at the front of its tree.
//!
//! The rules (4.6+ order, numbered as in the spec §3.14) let sync beat async anywhere, RT beat
//! BE, and, inside a group or from an ancestor group (since 4.6, commit 3984aa55204e), a
//! SYNC_NOIDLE request end idling on a SYNC_NOIDLE tree, a REQ_PRIO request beat plain I/O,
//! and a close request beat an idling queue. The `ancestor_preempt` switch restores the pre-4.6
//! rules (same group only; rule 9 also needs exactly two queues on the new queue's tree).
//! Kernel: cfq_should_preempt(), cfq_preempt_queue(), cfqg_is_descendant().

use super::slice::ExpireCause;
use super::{Cfq, QId, CFQQ_CLOSE_THR, SYNC_NOIDLE_WORKLOAD};
use crate::request::{Request, Time};
use crate::trace::{DecisionKind, Trace};

impl Cfq {
    /// Kernel: cfq_should_preempt(). Returns the number of the rule that allowed it.
    pub(crate) fn should_preempt(
        &self,
        new: QId,
        rq: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<u8> {
        let a = self.active_queue?; // rule 1
        let newq = &self.queues[new];
        let cur = &self.queues[a];
        if newq.class_idle() {
            return None; // rule 2
        }
        if cur.class_idle() {
            return Some(3);
        }
        if cur.class_rt() && !newq.class_rt() {
            return None; // rule 4
        }
        if rq.is_sync() && !cur.sync && !cur.must_dispatch {
            return Some(5);
        }
        // Rule 6: only the active group or its ancestors may preempt (pre-4.6: same group).
        let related = if self.tun.ancestor_preempt {
            self.group_is_descendant(cur.group, newq.group)
        } else {
            cur.group == newq.group
        };
        if !related {
            return None;
        }
        if self.slice_used(a, now) {
            return Some(7);
        }
        if newq.class_rt() && !cur.class_rt() {
            return Some(8);
        }
        // Rule 9: both SYNC_NOIDLE and the active queue is empty (idling on the tree).
        let tree_pair = self.tun.ancestor_preempt
            || newq
                .service_tree
                .is_some_and(|st| self.groups[newq.group].trees[usize::from(st)].count == 2);
        if self.serving_wl_type == SYNC_NOIDLE_WORKLOAD
            && newq.wl_type() == SYNC_NOIDLE_WORKLOAD
            && tree_pair
            && cur.is_empty()
        {
            return Some(9);
        }
        if rq.flags.prio && cur.prio_pending == 0 {
            return Some(10);
        }
        if cur.is_empty() && !self.should_idle(a, now, trace) {
            return Some(11);
        }
        if self.active_cic.is_none() || !cur.wait_request {
            return None; // rule 12
        }
        if rq.sector.abs_diff(self.last_position) <= CFQQ_CLOSE_THR {
            return Some(13);
        }
        None
    }

    /// Kernel: cfq_preempt_queue().
    // The active and the new queue each read once before the expiry and once after (issue
    // 34: at 4096 queues nearly every request preempts).
    pub(crate) fn preempt_queue(&mut self, new: QId, rule: u8, now: Time, trace: &mut dyn Trace) {
        let a = self
            .active_queue
            .expect("preempting without an active queue");
        if self.tracing {
            self.log_q(trace, now, new, format_args!("preempt"));
            let reason = format!("rule {rule}: {}", rule_text(rule));
            self.decide(trace, now, DecisionKind::Preempt, Some(new), &reason, None);
        }
        let old_type = self.tree_wl_type(a);
        let cfqq = &mut self.queues[a];
        cfqq.stats.preemptions += 1;
        self.groups[cfqq.group].stats.preemptions += 1;
        self.slice_expired(true, ExpireCause::Preempted, now, trace);
        let cfqq = &self.queues[new];
        assert!(cfqq.on_rr, "preempting queue is not busy");
        if old_type != self.tree_wl_type_of(cfqq) {
            self.groups[cfqq.group].saved_wl_slice = 0;
        }
        self.service_tree_add_inline(new, true, now);
        let cfqq = &mut self.queues[new];
        cfqq.slice_end = 0;
        cfqq.slice_new = true;
    }
}

fn rule_text(rule: u8) -> &'static str {
    match rule {
        3 => "active queue is idle class",
        5 => "sync request over async queue",
        7 => "active slice used",
        8 => "RT over BE",
        9 => "sync-noidle while idling on sync-noidle tree",
        10 => "REQ_PRIO over plain I/O",
        11 => "active queue empty and should not idle",
        13 => "request close to the head while idling",
        _ => "other",
    }
}
