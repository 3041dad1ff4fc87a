//! Selection: which group, which workload (class and type), which queue.
//!
//! The active queue keeps the device while it has requests and slice left; when it runs dry
//! CFQ may keep it anyway (idling, or waiting for its in-flight requests) before expiring it.
//! A new queue comes from the leftmost group (lowest `vdisktime`): RT before BE before IDLE;
//! among ASYNC / SYNC_NOIDLE / SYNC the type whose first queue waited longest, for a workload
//! slice proportional to its share of the group's busy queues.
//! Kernel: cfq_select_queue(), cfq_choose_cfqg(), choose_wl_class_and_type(),
//! cfq_choose_wl_type(), cfq_get_next_queue(), cfq_set_active_queue().

use super::service_tree::tree_index;
use super::slice::ExpireCause;
use super::{
    Cfq, GId, QId, ASYNC_WORKLOAD, BE_WORKLOAD, IDLE_WORKLOAD, RT_WORKLOAD, SYNC_NOIDLE_WORKLOAD,
    SYNC_WORKLOAD,
};
use crate::request::Time;
use crate::trace::{DecisionKind, NoTrace, Trace};

impl Cfq {
    /// Kernel: CFQ_MIN_TT: 2 jiffies, the floor of a workload slice.
    fn min_tt(&self) -> Time {
        2 * self.jiffy()
    }

    /// Until when (inclusive) `dispatch` would answer as it just did and change nothing
    /// (see [`Elevator::dispatch_settled_until`]). Three states are known, each answered
    /// before any rule that reads the clock could change the answer: nothing queued
    /// (`busy_queues`, rule 2); idling on the empty active queue (rule 7); and, when no trace
    /// listens, waiting for the empty active queue's requests (rule 9, which writes a
    /// decision each time it answers). The last two hold until rule 4 finds the slice used,
    /// and all end before the idle timer is due: the next call at or past it fires the timer
    /// (`catch_up_timer`).
    ///
    /// Only a completion arms the timer or empties the active queue between calls, so the
    /// call that just answered found the active queue empty in this same state and passed
    /// rules 3 to 6: rule 6 reads no clock, so it would find no cooperator again; rule 8
    /// compares the slice left with the slice used, which only shrinks as time passes (or
    /// holds while `slice_new`), so it would not fire either.
    ///
    /// [`Elevator::dispatch_settled_until`]: crate::Elevator::dispatch_settled_until
    pub(crate) fn settled_until(&self, traced: bool) -> Option<Time> {
        let before_timer = match self.idle_timer {
            Some(timer) => timer.until.checked_sub(1)?,
            None => Time::MAX,
        };
        if self.busy_queues == 0 || (self.rq_queued == 0 && self.active_queue.is_some()) {
            return Some(before_timer);
        }
        let q = self.active_queue?;
        let cfqq = &self.queues[q];
        if !cfqq.is_empty() {
            return None;
        }
        // Rule 4: `slice_used()` turns true at `slice_end`.
        let slice_left = if cfqq.slice_new || cfqq.must_dispatch {
            Time::MAX
        } else {
            cfqq.slice_end.checked_sub(1)?
        };
        if self.idle_timer.is_some() {
            return Some(before_timer.min(slice_left));
        }
        // `should_idle` writes only when it answers false.
        let rule_9 = cfqq.dispatched > 0 && self.should_idle(q, 0, &mut NoTrace);
        (rule_9 && !traced).then_some(slice_left)
    }

    /// Kernel: cfq_select_queue(). `None` means "dispatch nothing now" (idling, waiting for
    /// completions, or nothing to do).
    pub(crate) fn select_queue(&mut self, now: Time, trace: &mut dyn Trace) -> Option<QId> {
        let mut new_cfqq = None;
        'expire: {
            let Some(q) = self.active_queue else {
                break 'expire;
            };
            if self.rq_queued == 0 {
                return None;
            }
            let cause;
            // Rule 5 first when it holds and nothing before it can: the active queue has
            // requests, no wait_busy, and its slice left (or must dispatch). The rules below
            // answer the same then; this spares their look-ups (issue 34: every request).
            let cfqq = &self.queues[q];
            if !cfqq.is_empty()
                && !cfqq.wait_busy
                && (cfqq.slice_new || now < cfqq.slice_end || cfqq.must_dispatch)
            {
                return Some(q);
            }
            'group_idle_check: {
                // Rule 3: waited for the group to get backlogged and it did.
                if self.queues[q].wait_busy && !self.queues[q].is_empty() {
                    cause = ExpireCause::WaitBusyArrival;
                    self.slice_expired(false, cause, now, trace);
                    break 'expire;
                }
                // Rule 4: slice used up.
                if self.slice_used(q, now) && !self.queues[q].must_dispatch {
                    let cfqq = &self.queues[q];
                    if self.groups[cfqq.group].nr_cfqq == 1
                        && cfqq.is_empty()
                        && cfqq.dispatched > 0
                        && self.should_idle(q, now, trace)
                    {
                        return self.keep_queue(
                            trace,
                            now,
                            q,
                            "rule 4: slice used, sole queue of group, waiting for completion",
                        );
                    }
                    break 'group_idle_check;
                }
                // Rule 5: requests and slice left.
                if !self.queues[q].is_empty() {
                    return Some(q);
                }
                // Rule 6: a close cooperator takes over.
                if let Some(c) = self.close_cooperator(q) {
                    if self.queues[q].new_cfqq.is_none() {
                        self.setup_merge(q, c);
                    }
                    new_cfqq = Some(c);
                    self.slice_expired(false, ExpireCause::Cooperator, now, trace);
                    break 'expire;
                }
                // Rule 7: idling.
                if self.idle_timer.is_some() {
                    return None;
                }
                self.clear_deep_if_device_faster(q, now, trace);
                // Rule 9: wait for in-flight requests of a queue we would idle on.
                if self.queues[q].dispatched > 0 && self.should_idle(q, now, trace) {
                    return self.keep_queue(
                        trace,
                        now,
                        q,
                        "rule 9: requests in flight, queue may idle",
                    );
                }
            }
            // Rule 10: group idling while the group's requests are in flight.
            let g = self.queues[q].group;
            if self.tun.group_idle_ns > 0
                && self.groups[g].nr_cfqq == 1
                && self.groups[g].dispatched > 0
                && !self.thinktime_big_group(g)
            {
                return self.keep_queue(
                    trace,
                    now,
                    q,
                    "rule 10: group idle, group requests in flight",
                );
            }
            cause = if self.slice_used(q, now) {
                ExpireCause::SliceUsed
            } else {
                ExpireCause::Empty
            };
            self.slice_expired(false, cause, now, trace);
        }
        // NEW
        if new_cfqq.is_none() {
            self.choose_group(now, trace);
        }
        self.set_active_queue(new_cfqq, now, trace)
    }

    /// Records the decision to keep `q` in service and dispatch nothing now.
    // One copy out of line rather than the decision's arguments at each of three rules.
    #[cold]
    #[inline(never)]
    fn keep_queue(
        &self,
        trace: &mut dyn Trace,
        now: Time,
        q: QId,
        why: &'static str,
    ) -> Option<QId> {
        self.decide(trace, now, DecisionKind::KeepQueue, Some(q), why, None);
        None
    }

    /// Rule 8 of cfq_select_queue(), on the active queue `q` that ran dry.
    fn clear_deep_if_device_faster(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        // Rule 8 (8e1ac6655104): a deep seeky queue on a device faster than it.
        // `deep_fast_clear = 0` removes the rule ("w/o 8e1ac6655104" in seed 000);
        // `deep_always_clear = 1` is the seed's "always clear" experiment: the rule
        // fires whenever the dry queue is seeky and idle-windowed, however far into
        // its slice.
        let cfqq = &self.queues[q];
        let fast_device =
            cfqq.slice_new || cfqq.slice_end.wrapping_sub(now) > now.wrapping_sub(cfqq.slice_start);
        // The seed 000 fix replaces the rule (see `update_idle_window`).
        // 2.6.32 predates the rule (rules_2632).
        let rule_on = self.tun.deep_fast_clear && !self.tun.deep_seeky_fix && !self.tun.rules_2632;
        if (rule_on || self.tun.deep_always_clear)
            && cfqq.seeky()
            && cfqq.idle_window
            && (fast_device || self.tun.deep_always_clear)
        {
            let cfqq = &mut self.queues[q];
            cfqq.deep = false;
            cfqq.idle_window = false;
            self.decide(
                trace,
                now,
                DecisionKind::DeepCleared,
                Some(q),
                "rule 8: seeky queue, device faster than queue",
                None,
            );
        }
    }

    /// Kernel: cfq_choose_cfqg().
    fn choose_group(&mut self, now: Time, trace: &mut dyn Trace) {
        let Some(g) = self.get_next_group() else {
            self.serving_group = None;
            return;
        };
        self.serving_group = Some(g);
        let cfqg = &self.groups[g];
        if cfqg.saved_wl_slice > 0 {
            self.workload_expires = now.wrapping_add(cfqg.saved_wl_slice);
            self.serving_wl_type = cfqg.saved_wl_type;
            self.serving_wl_class = cfqg.saved_wl_class;
        } else {
            self.workload_expires = now.wrapping_sub(1);
        }
        if self.tracing {
            self.group_selected(g, now, trace);
        }
        self.choose_wl_class_and_type(g, now, trace);
    }

    /// choose_group()'s decision, for a listening sink: out of the dispatch's hot code.
    #[cold]
    #[inline(never)]
    fn group_selected(&self, g: GId, now: Time, trace: &mut dyn Trace) {
        let vt = self.groups[g].vdisktime;
        trace.decision(
            now,
            &crate::trace::Decision {
                kind: DecisionKind::SelectGroup,
                queue: None,
                group: Some(self.groups[g].cgroup),
                reason: "leftmost vdisktime",
                value_ns: Some(vt),
            },
        );
    }

    /// Kernel: choose_wl_class_and_type().
    fn choose_wl_class_and_type(&mut self, g: GId, now: Time, trace: &mut dyn Trace) {
        let original_class = self.serving_wl_class;
        let cfqg = &self.groups[g];
        if cfqg.busy_queues_wl(RT_WORKLOAD) > 0 {
            self.serving_wl_class = RT_WORKLOAD;
        } else if cfqg.busy_queues_wl(BE_WORKLOAD) > 0 {
            self.serving_wl_class = BE_WORKLOAD;
        } else {
            self.serving_wl_class = IDLE_WORKLOAD;
            self.workload_expires = now + self.jiffy();
            return;
        }
        if original_class == self.serving_wl_class {
            let st = tree_index(self.serving_wl_class, self.serving_wl_type);
            let count = self.groups[g].trees[st].count;
            if count > 0 && now <= self.workload_expires {
                return;
            }
        }
        self.new_workload(g, now, trace);
    }

    /// choose_wl_class_and_type() past its early answers: a new workload type and its slice.
    // Out of line: under one busy workload type (issue 34's randread) it runs once in
    // thousands of queue selections, and inlined it took ~0.5 KiB of the dispatch's code.
    #[inline(never)]
    fn new_workload(&mut self, g: GId, now: Time, trace: &mut dyn Trace) {
        self.serving_wl_type = self.choose_wl_type(g, self.serving_wl_class);
        let cfqg = &self.groups[g];
        let count =
            u64::from(cfqg.trees[tree_index(self.serving_wl_class, self.serving_wl_type)].count);
        let group_slice = self.group_slice(g);
        let busy = cfqg.busy_queues_avg[self.serving_wl_class]
            .max(cfqg.busy_queues_wl(self.serving_wl_class));
        let mut slice = group_slice * count / u64::from(busy.max(1));
        if self.serving_wl_type == ASYNC_WORKLOAD {
            let tmp = self.tun.target_latency_ns * u64::from(cfqg.busy_async_queues())
                / u64::from(self.busy_queues.max(1));
            slice = slice.min(tmp);
            slice = slice * self.tun.slice_ns[0] / self.tun.slice_ns[1];
        } else {
            slice = slice.max(2 * self.tun.slice_idle_ns);
        }
        slice = slice.max(self.min_tt());
        self.log(trace, now, format_args!("workload slice:{slice}"));
        self.decide(
            trace,
            now,
            DecisionKind::Workload,
            None,
            workload_name(self.serving_wl_class, self.serving_wl_type),
            Some(slice),
        );
        self.workload_expires = now + slice;
    }

    /// Kernel: cfq_choose_wl_type(): the type whose first queue has the lowest key.
    fn choose_wl_type(&self, g: GId, wl_class: usize) -> usize {
        let mut best = SYNC_NOIDLE_WORKLOAD;
        let mut lowest: Option<u64> = None;
        for wl_type in [ASYNC_WORKLOAD, SYNC_NOIDLE_WORKLOAD, SYNC_WORKLOAD] {
            if let Some(q) = self.groups[g].trees[tree_index(wl_class, wl_type)].first() {
                let key = self.queues[q].rb_key;
                if lowest.is_none_or(|l| key < l) {
                    lowest = Some(key);
                    best = wl_type;
                }
            }
        }
        best
    }

    /// Kernel: cfq_set_active_queue() / __cfq_set_active_queue() / cfq_get_next_queue().
    #[inline(always)]
    pub(crate) fn set_active_queue(
        &mut self,
        q: Option<QId>,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<QId> {
        let chosen = q.is_some();
        let q = q.or_else(|| {
            if self.rq_queued == 0 {
                return None;
            }
            let g = self.serving_group?;
            let st = tree_index(self.serving_wl_class, self.serving_wl_type);
            self.groups[g].trees[st].first()
        });
        if let Some(q) = q {
            if self.tracing {
                self.active_queue_set(q, chosen, now, trace);
            }
            let cfqq = &mut self.queues[q];
            cfqq.slice_start = 0;
            cfqq.dispatch_start = now;
            cfqq.allocated_slice = 0;
            cfqq.slice_end = 0;
            cfqq.slice_dispatch = 0;
            cfqq.nr_sectors = 0;
            cfqq.wait_request = false;
            cfqq.must_dispatch = false;
            cfqq.must_alloc_slice = false;
            cfqq.fifo_expire = false;
            cfqq.slice_new = true;
            if self.idle_timer.is_some() {
                self.end_idle(now, false, trace);
            }
        }
        self.active_queue = q;
        q
    }

    /// set_active_queue()'s message and decision, for a listening sink: their arguments
    /// are built here, out of the switch's code (issue 34: ~15 instructions a switch).
    #[cold]
    #[inline(never)]
    fn active_queue_set(&self, q: QId, chosen: bool, now: Time, trace: &mut dyn Trace) {
        let reason = if chosen {
            "chosen directly (close cooperator or forced dispatch)"
        } else {
            "first of the serving tree"
        };
        let (c, t) = (self.serving_wl_class, self.serving_wl_type);
        self.log_q(
            trace,
            now,
            q,
            format_args!("set_active wl_class:{c} wl_type:{t}"),
        );
        self.decide(trace, now, DecisionKind::SelectQueue, Some(q), reason, None);
    }
}

fn workload_name(class: usize, wl_type: usize) -> &'static str {
    match (class, wl_type) {
        (RT_WORKLOAD, ASYNC_WORKLOAD) => "RT async",
        (RT_WORKLOAD, SYNC_NOIDLE_WORKLOAD) => "RT sync-noidle",
        (RT_WORKLOAD, _) => "RT sync",
        (BE_WORKLOAD, ASYNC_WORKLOAD) => "BE async",
        (BE_WORKLOAD, SYNC_NOIDLE_WORKLOAD) => "BE sync-noidle",
        (BE_WORKLOAD, _) => "BE sync",
        _ => "idle",
    }
}
