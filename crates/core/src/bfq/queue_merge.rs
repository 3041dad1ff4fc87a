//! Queue merging: processes doing interleaved I/O (several threads reading one file in
//! turns) are served as one queue, so the device sees one sequential stream.
//!
//! *Early* (close-cooperator) merging, on devices without deep queueing: a queue whose new
//! request lies within 8192 sectors of the queue in service's last position, or of another
//! queue's next request (looked up in its group's position tree, `rq_pos_tree`, shape for
//! shape), is scheduled to merge with it (`new_bfqq`) and merged at its next insertion.
//! *Stable* merging: a sync queue created within `burst_interval` of the previous one, with
//! the same parent, class and priority, is merged with it at once on queueing SSDs, or later
//! (600 ms on) if idling would not boost its throughput. A merged (`coop`) queue that turns
//! seeky is split back at its process's next request, with the state saved at the merge.
//!
//! Kernel: bfq_pos_tree_add_move(), bfq_rq_pos_tree_lookup(), bfqq_find_close(),
//! bfq_setup_cooperator(), bfq_setup_merge(), bfq_may_be_close_cooperator(),
//! bfq_setup_stable_merge(), bfq_do_or_sched_stable_merge(), bfq_do_early_stable_merge(),
//! bfq_merge_bfqqs(), bfq_bfqq_save_state(), bfq_bfqq_resume_state(), bfq_split_bfqq(),
//! bfq_get_bfqq_handle_split(), bfq_waker_bfqq(), bfq_too_late_for_merging().

use super::{time_after, time_after_eq, Bfq, QId};
use crate::deadline::tunables::msecs_to_jiffies;
use crate::rbtree::{RbForest, Search};
use crate::request::{IoContextId, Request, Time};
use crate::trace::Trace;

/// 8192 sectors. Kernel: BFQQ_CLOSE_THR.
const BFQQ_CLOSE_THR: u64 = 8 * 1024;
/// 25 jiffies (100 ms). Kernel: bfq_merge_time_limit.
const BFQ_MERGE_TIME_LIMIT: u64 = 250 / 10;
/// ms. Kernel: bfq_activation_stable_merging, bfq_late_stable_merging.
const BFQ_ACTIVATION_STABLE_MERGING: u32 = 600;
const BFQ_LATE_STABLE_MERGING: u32 = 600;

/// Whether erasing node `n` from `tree` (tree 0 of the forest) and linking it again where a
/// lookup of `key` ends (bfq_rq_pos_tree_lookup(): `key_of` is each node's live key; an
/// equal key is "found" and not linked) leaves every link and colour as it is: the round
/// trip changes nothing when `n` is a red leaf or the only node
/// ([`RbForest::relink_is_identity`]) and the lookup descends to `n`'s own place, i.e. `key`
/// compares (strictly) with each ancestor on the side `n` hangs from it.
pub(crate) fn relinks_in_place(
    tree: &RbForest,
    n: usize,
    key: u64,
    key_of: impl Fn(usize) -> u64,
) -> bool {
    if !tree.relink_is_identity(n) {
        return false;
    }
    let mut child = n;
    while let Some(p) = tree.parent(child) {
        let k = key_of(p);
        let same_side = if tree.left(p) == Some(child) {
            key < k
        } else {
            key > k
        };
        if !same_side {
            return false;
        }
        child = p;
    }
    true
}

impl Bfq {
    /// The sector of a queue's next request (the position tree's key).
    #[inline(always)]
    fn next_pos(&self, q: QId) -> u64 {
        self.h(self
            .q(q)
            .next_rq
            .expect("queue on the position tree has a next request"))
            .rq
            .sector
    }

    /// Kernel: bfq_too_late_for_merging().
    fn too_late_for_merging(&self, q: QId, now: Time) -> bool {
        let b = self.q(q);
        b.service_from_backlogged > 0
            && time_after(
                Bfq::jif(now),
                b.first_io_time.wrapping_add(BFQ_MERGE_TIME_LIMIT),
            )
    }

    /// Kernel: bfq_rq_pos_tree_lookup().
    fn rq_pos_tree_lookup(
        &self,
        g: usize,
        sector: u64,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Search {
        let at = self.groups[g]
            .rq_pos_tree
            .search(0, sector, |n| self.next_pos(n));
        let pid = at.found.map_or(0, |q| self.q(q).pid);
        bfq_log!(
            self,
            trace,
            now,
            format_args!("rq_pos_tree_lookup {sector}: returning {pid}"),
        );
        at
    }

    /// Kernel: bfq_pos_tree_add_move(): (re)files the queue under its next request. A queue
    /// on no tree that may not go on one (too late for merging, mostly: the queue in service
    /// after its first 100 ms) is the common case at dispatch, answered inline.
    #[inline(always)]
    pub(crate) fn pos_tree_add_move(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let b = self.q(q);
        if b.pos_root.is_none()
            && (self.too_late_for_merging(q, now) || self.class_idle(q) || b.next_rq.is_none())
        {
            return;
        }
        self.pos_tree_refile(q, now, trace);
    }

    /// bfq_pos_tree_add_move() for a queue on a tree or that may go on one.
    fn pos_tree_refile(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        if let Some(key) = self.pos_tree_stays(q, now) {
            // The kernel's erase, lookup and re-link would leave the tree as it is.
            bfq_log!(
                self,
                trace,
                now,
                format_args!("rq_pos_tree_lookup {key}: returning 0"),
            );
            return;
        }
        if let Some(g) = self.qm(q).pos_root.take() {
            self.groups[g].rq_pos_tree.erase(0, q);
        }
        if self.too_late_for_merging(q, now) || self.class_idle(q) || self.q(q).next_rq.is_none() {
            return;
        }
        let g = self.bfqq_group(q);
        let at = self.rq_pos_tree_lookup(g, self.next_pos(q), now, trace);
        if at.found.is_none() {
            self.groups[g].rq_pos_tree.insert(0, q, at);
            self.qm(q).pos_root = Some(g);
        }
    }

    /// Whether bfq_pos_tree_add_move() would put `q` back where it is: it is on its group's
    /// position tree, stays eligible for it, and the erase and re-link under its next
    /// request's sector change nothing ([`relinks_in_place`]). Answers that sector.
    fn pos_tree_stays(&self, q: QId, now: Time) -> Option<u64> {
        let b = self.q(q);
        let g = b.pos_root?;
        let next = b.next_rq?;
        let tree = &self.groups[g].rq_pos_tree;
        if g != self.bfqq_group(q) || self.too_late_for_merging(q, now) || self.class_idle(q) {
            return None;
        }
        let key = self.h(next).rq.sector;
        relinks_in_place(tree, q, key, |n| self.next_pos(n)).then_some(key)
    }

    /// Takes the queue off its position tree (its last request left).
    pub(crate) fn pos_tree_del(&mut self, q: QId) {
        if let Some(g) = self.qm(q).pos_root.take() {
            self.groups[g].rq_pos_tree.erase(0, q);
        }
    }

    /// Kernel: bfqq_find_close() + bfq_find_close_cooperator().
    fn find_close_cooperator(
        &self,
        cur: QId,
        sector: u64,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<QId> {
        let g = self.bfqq_group(cur);
        let tree = &self.groups[g].rq_pos_tree;
        tree.root(0)?;
        let at = self.rq_pos_tree_lookup(g, sector, now, trace);
        let close = |q: QId| self.next_pos(q).abs_diff(sector) <= BFQQ_CLOSE_THR;
        let found = at.found.or_else(|| {
            let parent = at.parent.expect("non-empty tree");
            if close(parent) {
                return Some(parent);
            }
            let node = if self.next_pos(parent) < sector {
                tree.next(parent)
            } else {
                tree.prev(parent)
            };
            node.filter(|&n| close(n))
        })?;
        (found != cur).then_some(found)
    }

    /// Kernel: bfq_setup_merge(): schedules `q`'s merge into `new` (or the end of `new`'s
    /// own merge chain).
    fn setup_merge(
        &mut self,
        q: QId,
        mut new: QId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<QId> {
        if self.process_refs(new) == 0 {
            return None;
        }
        while let Some(n) = self.q(new).new_bfqq {
            if n == q {
                return None;
            }
            new = n;
        }
        let (process_refs, new_process_refs) = (self.process_refs(q), self.process_refs(new));
        if process_refs == 0 || new_process_refs == 0 || self.qe(new).parent != self.qe(q).parent {
            return None;
        }
        let pid = self.q(new).pid;
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("scheduling merge with queue {pid}"),
        );
        self.qm(q).new_bfqq = Some(new);
        self.qm(new).ref_ += process_refs;
        Some(new)
    }

    /// Kernel: bfq_may_be_close_cooperator().
    fn may_be_close_cooperator(&self, q: QId, new: QId, now: Time) -> bool {
        let (a, b) = (self.q(q), self.q(new));
        !self.too_late_for_merging(new, now)
            && !self.class_idle(q)
            && !self.class_idle(new)
            && a.ioprio_class == b.ioprio_class
            && !self.bfqq_seeky(q)
            && !self.bfqq_seeky(new)
            && a.sync
            && b.sync
    }

    /// Kernel: bfq_setup_stable_merge().
    fn setup_stable_merge(
        &mut self,
        q: QId,
        stable: QId,
        bic: IoContextId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<QId> {
        let proc_ref = self.process_refs(q).min(self.process_refs(stable));
        self.bics.get_mut(bic).expect("bic").data.stable_merge_bfqq = None;
        let mut new = None;
        if !self.idling_boosts_thr_without_issues(q) && proc_ref != 0 {
            new = self.setup_merge(q, stable, now, trace);
            if let Some(n) = new {
                self.bics.get_mut(bic).expect("bic").data.stably_merged = true;
                if let Some(nb) = self.q(n).bic {
                    self.bics.get_mut(nb).expect("bic").data.stably_merged = true;
                }
            }
        }
        self.qm(stable).stable_ref -= 1;
        self.put_queue(stable, now, trace);
        new
    }

    /// Kernel: bfq_setup_cooperator(): the queue `q`'s new request at `pos` should go to,
    /// if not `q`.
    pub(crate) fn setup_cooperator(
        &mut self,
        q: QId,
        pos: u64,
        bic: IoContextId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<QId> {
        if let Some(mut new) = self.q(q).new_bfqq {
            while let Some(n) = self.q(new).new_bfqq {
                new = n;
            }
            return Some(new);
        }
        let j = Bfq::jif(now);
        if !self.nonrot_with_queueing {
            let late = msecs_to_jiffies(BFQ_LATE_STABLE_MERGING);
            let b = self.q(q);
            if let Some(stable) = self.bics[&bic].data.stable_merge_bfqq {
                if b.sync
                    && !b.just_created
                    && time_after(j, b.split_time.wrapping_add(late))
                    && time_after(j, b.creation_time.wrapping_add(late))
                {
                    return self.setup_stable_merge(q, stable, bic, now, trace);
                }
            }
        }
        if self.nonrot_with_queueing
            || self.too_late_for_merging(q, now)
            || self.tot_busy_queues() == 1
        {
            return None;
        }
        if let Some(s) = self.in_service_queue.filter(|&s| s != q) {
            if pos.abs_diff(self.in_serv_last_pos) <= BFQQ_CLOSE_THR
                && self.qe(q).parent == self.qe(s).parent
                && self.may_be_close_cooperator(q, s, now)
            {
                if let Some(new) = self.setup_merge(q, s, now, trace) {
                    return Some(new);
                }
            }
        }
        let new = self.find_close_cooperator(q, pos, now, trace)?;
        if self.may_be_close_cooperator(q, new, now) {
            return self.setup_merge(q, new, now, trace);
        }
        None
    }

    /// Kernel: bfq_bfqq_save_state().
    fn save_state(&mut self, q: QId, now: Time) {
        let Some(bic) = self.q(q).bic else {
            return;
        };
        let (dur, wr_coeff, low_latency) =
            (self.wr_duration(), self.tun.wr_coeff, self.tun.low_latency);
        let b = self.q(q).clone();
        let e = self.qe(q).clone();
        let d = &mut self.bics.get_mut(bic).expect("bic").data;
        d.saved_last_serv_time_ns = b.last_serv_time_ns;
        d.saved_inject_limit = b.inject_limit;
        d.saved_decrease_time_jif = b.decrease_time_jif;
        d.saved_weight = e.orig_weight;
        d.saved_ttime = b.ttime;
        d.saved_has_short_ttime = b.has_short_ttime;
        d.saved_io_bound = b.io_bound;
        d.saved_io_start_time = b.io_start_time;
        d.saved_tot_idle_time = b.tot_idle_time;
        d.saved_in_large_burst = b.in_large_burst;
        d.was_in_burst_list = b.in_burst_list;
        if b.just_created && !b.in_large_burst && low_latency {
            d.saved_wr_coeff = wr_coeff;
            d.saved_wr_start_at_switch_to_srt = Bfq::smallest_from_now(now);
            d.saved_wr_cur_max_time = dur;
            d.saved_last_wr_start_finish = Bfq::jif(now);
        } else {
            d.saved_wr_coeff = b.wr_coeff;
            d.saved_wr_start_at_switch_to_srt = b.wr_start_at_switch_to_srt;
            d.saved_service_from_wr = b.service_from_wr;
            d.saved_last_wr_start_finish = b.last_wr_start_finish;
            d.saved_wr_cur_max_time = b.wr_cur_max_time;
        }
    }

    /// Kernel: bfq_merge_bfqqs(): the process of `bic` now uses `q`'s `new_bfqq`.
    fn merge_bfqqs(&mut self, bic: IoContextId, q: QId, now: Time, trace: &mut dyn Trace) -> QId {
        let new = self.q(q).new_bfqq.expect("a scheduled merge");
        let pid = self.q(new).pid as i64 as u64;
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("merging with queue {pid}")
        );
        self.save_state(q, now);
        self.save_state(new, now);
        if self.q(q).io_bound {
            self.qm(new).io_bound = true;
        }
        self.qm(q).io_bound = false;
        if let Some(w) = self.q(q).waker_bfqq {
            if self.q(new).waker_bfqq.is_none() && w != new {
                let nb = self.qm(new);
                nb.waker_bfqq = Some(w);
                nb.tentative_waker_bfqq = None;
                nb.woken_list_node = Some(w);
                self.qm(w).woken_list.push_front(new);
            }
        }
        if self.q(new).wr_coeff == 1 && self.q(q).wr_coeff > 1 {
            let b = self.q(q).clone();
            let nb = self.qm(new);
            nb.wr_coeff = b.wr_coeff;
            nb.wr_cur_max_time = b.wr_cur_max_time;
            nb.last_wr_start_finish = b.last_wr_start_finish;
            nb.wr_start_at_switch_to_srt = b.wr_start_at_switch_to_srt;
            if nb.busy {
                self.wr_busy_queues += 1;
            }
            self.qem(new).prio_changed = true;
        }
        if self.q(q).wr_coeff > 1 {
            self.qm(q).wr_coeff = 1;
            self.qem(q).prio_changed = true;
            if self.q(q).busy {
                self.wr_busy_queues -= 1;
            }
        }
        let wr_busy = self.wr_busy_queues;
        bfq_log_q!(
            self,
            trace,
            now,
            new,
            format_args!("merge_bfqqs: wr_busy {wr_busy}"),
        );
        self.bic_set_bfqq(bic, Some(new), true, now, trace);
        let nb = self.qm(new);
        nb.coop = true;
        nb.bic = None;
        nb.pid = -1;
        self.qm(q).bic = None;
        self.reassign_last_bfqq(q, Some(new));
        self.release_process_ref(q, now, trace);
        self.decide(
            trace,
            now,
            crate::trace::DecisionKind::Merge,
            Some(new),
            "cooperating",
            None,
        );
        new
    }

    /// Merges `q` along its whole `new_bfqq` chain into `new`.
    pub(crate) fn merge_chain(
        &mut self,
        bic: IoContextId,
        mut q: QId,
        new: QId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> QId {
        while q != new {
            q = self.merge_bfqqs(bic, q, now, trace);
        }
        q
    }

    /// Kernel: bfq_do_or_sched_stable_merge(): for a new sync queue.
    pub(crate) fn do_or_sched_stable_merge(
        &mut self,
        q: QId,
        bic: IoContextId,
        now: Time,
        trace: &mut dyn Trace,
    ) -> QId {
        let parent = self.qe(q).parent;
        let last = match parent {
            Some(p) => self.e(p).last_bfqq_created,
            None => self.last_bfqq_created,
        };
        let b = self.q(q);
        let unrelated = last.is_none_or(|l| {
            let lb = self.q(l);
            time_after(
                b.creation_time,
                lb.creation_time
                    .wrapping_add(msecs_to_jiffies(BFQ_ACTIVATION_STABLE_MERGING)),
            ) || self.qe(l).parent != parent
                || lb.ioprio != b.ioprio
                || lb.ioprio_class != b.ioprio_class
        });
        if unrelated {
            match parent {
                Some(p) => self.em(p).last_bfqq_created = Some(q),
                None => self.last_bfqq_created = Some(q),
            }
            return q;
        }
        let l = last.expect("related");
        if !time_after_eq(
            self.q(l)
                .creation_time
                .wrapping_add(self.tun.burst_interval),
            b.creation_time,
        ) {
            return q;
        }
        if self.nonrot_with_queueing {
            // Kernel: bfq_do_early_stable_merge().
            let Some(new) = self.setup_merge(q, l, now, trace) else {
                return q;
            };
            if let Some(nb) = self.q(new).bic {
                self.bics.get_mut(nb).expect("bic").data.stably_merged = true;
            }
            self.bics.get_mut(bic).expect("bic").data.stably_merged = true;
            self.qm(q).bic = Some(bic);
            return self.merge_bfqqs(bic, q, now, trace);
        }
        self.qm(l).ref_ += 1;
        self.qm(l).stable_ref += 1;
        self.bics.get_mut(bic).expect("bic").data.stable_merge_bfqq = Some(l);
        q
    }

    /// Kernel: bfq_bfqq_resume_state(): a split queue takes back its process's saved state.
    fn resume_state(
        &mut self,
        q: QId,
        bic: IoContextId,
        already_existing: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let busy = already_existing && self.q(q).busy;
        let d = self.bics[&bic].data;
        let (low_latency, rt_max, dur) = (
            self.tun.low_latency,
            self.tun.wr_rt_max_time,
            self.wr_duration(),
        );
        let j = Bfq::jif(now);
        let mut old_wr_coeff = 1;
        let b = self.qm(q);
        b.has_short_ttime = d.saved_has_short_ttime;
        b.io_bound = d.saved_io_bound;
        b.last_serv_time_ns = d.saved_last_serv_time_ns;
        b.inject_limit = d.saved_inject_limit;
        b.decrease_time_jif = d.saved_decrease_time_jif;
        b.ttime = d.saved_ttime;
        b.io_start_time = d.saved_io_start_time;
        b.tot_idle_time = d.saved_tot_idle_time;
        if low_latency {
            old_wr_coeff = b.wr_coeff;
            b.wr_coeff = d.saved_wr_coeff;
        }
        b.service_from_wr = d.saved_service_from_wr;
        b.wr_start_at_switch_to_srt = d.saved_wr_start_at_switch_to_srt;
        b.last_wr_start_finish = d.saved_last_wr_start_finish;
        b.wr_cur_max_time = d.saved_wr_cur_max_time;
        self.qem(q).new_weight = d.saved_weight;
        let b = self.q(q);
        if b.wr_coeff > 1
            && (b.in_large_burst
                || time_after(j, b.last_wr_start_finish.wrapping_add(b.wr_cur_max_time)))
        {
            if b.wr_cur_max_time == rt_max
                && !b.in_large_burst
                && time_after_eq(b.wr_start_at_switch_to_srt.wrapping_add(dur), j)
            {
                let coeff = self.tun.wr_coeff;
                let b = self.qm(q);
                b.wr_coeff = coeff;
                b.wr_cur_max_time = dur;
                b.last_wr_start_finish = b.wr_start_at_switch_to_srt;
            } else {
                self.qm(q).wr_coeff = 1;
                bfq_log_q!(
                    self,
                    trace,
                    now,
                    q,
                    format_args!("resume state: switching off wr"),
                );
            }
        }
        self.qem(q).prio_changed = true;
        if !busy {
            return;
        }
        let new = self.q(q).wr_coeff;
        if old_wr_coeff == 1 && new > 1 {
            self.wr_busy_queues += 1;
        } else if old_wr_coeff > 1 && new == 1 {
            self.wr_busy_queues -= 1;
        }
    }

    /// Kernel: bfq_split_bfqq().
    fn split_bfqq(
        &mut self,
        bic: IoContextId,
        q: QId,
        pid: u32,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<QId> {
        bfq_log_q!(self, trace, now, q, format_args!("splitting queue"));
        if self.process_refs(q) == 1 && self.q(q).new_bfqq.is_none() {
            let b = self.qm(q);
            b.pid = pid as i32;
            b.coop = false;
            b.split_coop = false;
            return Some(q);
        }
        self.bic_set_bfqq(bic, None, true, now, trace);
        self.put_cooperator(q, now, trace);
        self.release_process_ref(q, now, trace);
        None
    }

    /// Kernel: __bfq_get_bfqq_handle_split(): the process's queue, created if missing.
    #[inline(always)]
    fn get_bfqq_inner(
        &mut self,
        bic: IoContextId,
        rq: &Request,
        split: bool,
        is_sync: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> (QId, bool) {
        if let Some(q) = self.bics[&bic].bfqq[usize::from(is_sync)] {
            return (q, false);
        }
        self.get_bfqq_new(bic, rq, split, is_sync, now, trace)
    }

    /// __bfq_get_bfqq_handle_split() for a process without its queue.
    #[inline(never)]
    fn get_bfqq_new(
        &mut self,
        bic: IoContextId,
        rq: &Request,
        split: bool,
        is_sync: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> (QId, bool) {
        let q = self.get_queue(rq, is_sync, bic, split, now, trace);
        self.bic_set_bfqq(bic, Some(q), is_sync, now, trace);
        if split && is_sync {
            let d = self.bics[&bic].data;
            if (d.was_in_burst_list && self.large_burst) || d.saved_in_large_burst {
                self.qm(q).in_large_burst = true;
            } else {
                self.qm(q).in_large_burst = false;
                if d.was_in_burst_list && !self.q(q).in_burst_list {
                    self.burst_list.push_front(q);
                    self.qm(q).in_burst_list = true;
                }
            }
            self.qm(q).split_time = Bfq::jif(now);
        }
        (q, true)
    }

    /// Kernel: bfq_waker_bfqq().
    fn waker_for_split(&self, q: QId) -> Option<QId> {
        let waker = self.q(q).waker_bfqq?;
        let mut at = self.q(q).new_bfqq;
        while let Some(n) = at {
            if n == waker {
                return (self.process_refs(waker) != 1).then_some(waker);
            }
            at = self.q(n).new_bfqq;
        }
        (self.process_refs(waker) != 0).then_some(waker)
    }

    /// Kernel: bfq_get_bfqq_handle_split(): the process's queue, split from a merged one that
    /// turned seeky.
    pub(crate) fn get_bfqq_handle_split(
        &mut self,
        bic: IoContextId,
        rq: &Request,
        is_sync: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> QId {
        let (q, new_queue) = self.get_bfqq_inner(bic, rq, false, is_sync, now, trace);
        if new_queue {
            return q;
        }
        let b = self.q(q);
        if !b.coop || !b.split_coop || self.bics[&bic].data.stably_merged {
            return q;
        }
        let waker = self.waker_for_split(q);
        if self.q(q).in_large_burst {
            self.bics
                .get_mut(bic)
                .expect("bic")
                .data
                .saved_in_large_burst = true;
        }
        if let Some(q) = self.split_bfqq(bic, q, rq.pid, now, trace) {
            self.resume_state(q, bic, true, now, trace);
            return q;
        }
        let (q, _) = self.get_bfqq_inner(bic, rq, true, is_sync, now, trace);
        self.resume_state(q, bic, false, now, trace);
        self.woken_list_del(q);
        let b = self.qm(q);
        b.waker_bfqq = waker;
        b.tentative_waker_bfqq = None;
        if let Some(w) = waker {
            self.qm(q).woken_list_node = Some(w);
            self.qm(w).woken_list.push_front(q);
        }
        q
    }
}
