//! Service trees: where busy queues wait inside their group, ordered by `rb_key`.
//!
//! A queue's key is roughly "when it should next be served": `now` plus an offset that grows
//! with the number of busy queues and shrinks with priority, minus the slice it had left
//! (`slice_resid`) last time. Idle-class queues queue behind the rightmost with a 200 ms gap;
//! a preempting queue goes 1 s ahead of the leftmost. Busy queues are also kept in
//! `prio_trees`, by the start sector of their next request, to find cooperators.
//! Kernel: cfq_service_tree_add(), cfq_slice_offset(), cfq_add_cfqq_rr(),
//! cfq_del_cfqq_rr(), cfq_resort_rr_list(), cfq_prio_tree_add(), st_for().
//!
//! The trees are red-black trees over queue ids in one arena (`Cfq::st_forest`, tree
//! `group * 7 + index`), with the leftmost queue cached as the kernel's `rb_root_cached`
//! does. With thousands of queues a preemption takes one queue off and puts two back on
//! every request (issue 34); a `BTreeMap` spent ~500 instructions and a node allocation or
//! free on each, where relinking a node in place allocates nothing.

use super::queue::CfqQueue;
use super::think_time::Ttime;
use super::{Cfq, GId, QId, CFQ_IDLE_DELAY, IDLE_WORKLOAD};
use crate::request::{Time, NSEC_PER_SEC};
use crate::trace::Trace;

/// One service tree. Kernel: struct cfq_rb_root.
///
/// Keys are `u64`, computed with wrapping arithmetic and compared unsigned (equal keys go
/// after existing ones): a key that goes below zero (add-front's `leftmost - 1 s`, a group's first queue's
/// negative `cfq_slice_offset()`, a large `slice_resid`) wraps and sorts *last*. That only
/// happens while the clock is small (within a second or so of boot); a machine that has been
/// up for a while never sees it, and neither does iosched's driver, whose clock starts at an
/// origin well after boot.
#[derive(Clone, Debug, Default)]
pub(crate) struct ServiceTree {
    /// The first queue in key order. Kernel: `rb_root_cached.rb_leftmost`.
    pub leftmost: Option<QId>,
    /// The last queue in key order: a queue re-added with a fresh key (`now` plus its
    /// offset) nearly always goes last, and linking it below this one is the same link as
    /// the kernel's descent (`RbForest::after_last`), without the walk down a tree of
    /// thousands of queues (issue 34).
    pub rightmost: Option<QId>,
    pub count: u32,
    pub ttime: Ttime,
}

impl ServiceTree {
    /// An empty tree whose think-time clock starts at `now` (Kernel: CFQ_RB_ROOT, which
    /// stamps `ttime.last_end_request` when the group is allocated).
    pub(crate) fn starting(now: Time) -> ServiceTree {
        ServiceTree {
            ttime: Ttime::starting(now),
            ..ServiceTree::default()
        }
    }

    /// Kernel: cfq_rb_first().
    pub(crate) fn first(&self) -> Option<QId> {
        self.leftmost
    }
}

/// The forest tree of group `g`'s service tree `st`.
pub(crate) fn forest_tree(g: GId, st: usize) -> usize {
    g * 7 + st
}

/// Kernel: st_for(): index of the tree for (class, type).
pub(crate) fn tree_index(wl_class: usize, wl_type: usize) -> usize {
    if wl_class == IDLE_WORKLOAD {
        6
    } else {
        wl_class * 3 + wl_type
    }
}

impl Cfq {
    /// Kernel: cfq_prio_slice(): `base + base/5 * (4 - prio)`, in the kernel's wrapping u64.
    pub(crate) fn prio_slice(&self, sync: bool, prio: u8) -> Time {
        let base = self.tun.slice_ns[usize::from(sync)];
        let step = base / 5;
        let factor = 4i64 - i64::from(prio);
        base.wrapping_add(step.wrapping_mul(factor as u64))
    }

    /// Kernel: cfq_slice_offset(): `(nr_cfqq - 1) * (prio_slice(sync,0) - prio_slice(q))`,
    /// in u64, for a queue of a group with `nr_cfqq` busy queues. For the first queue of a
    /// group `nr_cfqq` is still 0, so the kernel's int-to-u64 conversion makes the factor
    /// 2^64 - 1 and the offset wraps below zero; kept.
    fn slice_offset(&self, nr_cfqq: u32, cfqq: &CfqQueue) -> u64 {
        let nr = i64::from(nr_cfqq) - 1;
        let diff = self
            .prio_slice(true, 0)
            .wrapping_sub(self.prio_slice(cfqq.sync, cfqq.ioprio));
        (nr as u64).wrapping_mul(diff)
    }

    /// Kernel: cfq_service_tree_add().
    // One copy out of line for the callers of either kind.
    #[inline(never)]
    pub(crate) fn service_tree_add(&mut self, q: QId, add_front: bool, now: Time) {
        self.service_tree_add_inline(q, add_front, now);
    }

    /// [`Cfq::service_tree_add`] inlined with `add_front` known: a queue made busy, and a
    /// preempting queue moved to the front (issue 34: at 4096 queues every request does
    /// both, each a call of ~20 instructions and half the body unused).
    // The queue, its group and its tree each looked up once.
    #[inline(always)]
    pub(crate) fn service_tree_add_inline(&mut self, q: QId, add_front: bool, now: Time) {
        let cfqq = &self.queues[q];
        let g = cfqq.group;
        let cfqg = &self.groups[g];
        let st = tree_index(cfqq.wl_class(), self.tree_wl_type_of(cfqq));
        let old_st = cfqq.service_tree.map(usize::from);
        let old_key = cfqq.rb_key;
        let rb_key = if cfqq.class_idle() {
            // Choice: 4.20 looks up the tree's cached rightmost node, but for queue trees that
            // cache is only ever cleared (cfq_service_tree_add() never sets it; only the group
            // tree's insert does), so it is always empty and the key is `now + 200 ms`.
            CFQ_IDLE_DELAY.wrapping_add(now)
        } else if !add_front {
            let key = self.slice_offset(cfqg.nr_cfqq, cfqq).wrapping_add(now);
            // slice_resid is signed (s64); subtracting it in u64 is the kernel's `-=`.
            let key = key.wrapping_sub(cfqq.slice_resid as u64);
            self.queues[q].slice_resid = 0;
            key
        } else {
            let base = match cfqg.trees[st].first() {
                Some(first) => self.queues[first].rb_key,
                None => now,
            };
            base.wrapping_sub(NSEC_PER_SEC)
        };

        if let Some(old_st) = old_st {
            if old_st == st {
                if rb_key == old_key {
                    return;
                }
                if self.groups[g].trees[st].count == 1 {
                    // The tree's only node: its erasure and re-insertion leave it the same
                    // black root without children, and leftmost (the kernel's moves of a
                    // preempting queue under one busy queue, every preemption;
                    // `lone_queue_rekeyed_in_place`).
                    self.next_seq();
                    self.queues[q].rb_key = rb_key;
                    return;
                }
            }
            self.tree_unlink(g, old_st, q);
        }
        // The shared sequence also numbers requests, and traces print those numbers (as
        // `fifo=0x..`): it advances here as it did when it broke ties in this tree.
        self.next_seq();
        let cfqq = &mut self.queues[q];
        cfqq.rb_key = rb_key;
        // Seven trees: the index fits a byte.
        cfqq.service_tree = Some(st as u8);
        self.tree_link(g, st, q, rb_key);
        if add_front || old_st.is_some() {
            return;
        }
        self.group_notify_queue_add(g);
    }

    /// Links `q`, keyed `key`, into group `g`'s tree `st`, after queues of equal key.
    /// Kernel: cfq_service_tree_add()'s descent, rb_insert_color_cached().
    #[inline]
    fn tree_link(&mut self, g: GId, st: usize, q: QId, key: u64) {
        let t = forest_tree(g, st);
        let queues = &self.queues;
        let tree = &mut self.groups[g].trees[st];
        // Equal keys go right, so a key at least the last one's goes last.
        let appends = tree.rightmost.is_none_or(|last| key >= queues[last].rb_key);
        let at = match tree.rightmost {
            Some(last) if appends => self.st_forest.after_last(last),
            _ => self
                .st_forest
                .search_for_insert(t, key, |n| queues[n].rb_key),
        };
        self.st_forest.insert(t, q, at);
        if appends {
            tree.rightmost = Some(q);
        }
        // The new queue is leftmost only below the old leftmost (equal keys go right): never
        // when it went last behind other queues, whose keys are all at most its own.
        let leftmost = match tree.leftmost {
            None => true,
            Some(first) => !appends && key < queues[first].rb_key,
        };
        if leftmost {
            tree.leftmost = Some(q);
        }
        tree.count += 1;
    }

    /// Takes a queue off its service tree (not a group notification), as a test's kernel
    /// steps do; the callers know the tree and call `tree_unlink`.
    /// Kernel: cfq_rb_erase() (rb_erase_cached()).
    #[cfg(test)]
    fn tree_remove(&mut self, q: QId) {
        let cfqq = &mut self.queues[q];
        if let Some(st) = cfqq.service_tree.take() {
            let g = cfqq.group;
            self.tree_unlink(g, usize::from(st), q);
        }
    }

    /// Takes `q` off group `g`'s tree `st`, where it was. Kernel: cfq_rb_erase().
    // Inlined into its two callers, which have the tree at hand (issue 34: a call a switch).
    #[inline(always)]
    fn tree_unlink(&mut self, g: GId, st: usize, q: QId) {
        let tree = &mut self.groups[g].trees[st];
        assert!(tree.count > 0, "queue {q} off an empty service tree");
        if tree.leftmost == Some(q) {
            tree.leftmost = self.st_forest.next(q);
        }
        if tree.rightmost == Some(q) {
            tree.rightmost = self.st_forest.prev(q);
        }
        self.st_forest.erase(forest_tree(g, st), q);
        tree.count -= 1;
    }

    /// Kernel: cfq_resort_rr_list(): recompute the key (and tree) of a busy queue.
    pub(crate) fn resort_rr_list(&mut self, q: QId, now: Time) {
        if self.queues[q].on_rr {
            self.service_tree_add(q, false, now);
            self.prio_tree_add(q);
        }
    }

    /// Kernel: cfq_add_cfqq_rr().
    pub(crate) fn add_to_rr(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        self.log_q(trace, now, q, format_args!("add_to_rr"));
        let cfqq = &mut self.queues[q];
        assert!(!cfqq.on_rr, "queue already busy");
        cfqq.on_rr = true;
        self.busy_queues += 1;
        if cfqq.sync {
            self.busy_sync_queues += 1;
        }
        // resort_rr_list() of the queue just made busy.
        self.service_tree_add_inline(q, false, now);
        self.prio_tree_add(q);
    }

    /// Kernel: cfq_del_cfqq_rr().
    // The queue read once for its trees, group and sync flag (issue 34: every preemption at
    // 4096 queues takes the expired queue off). Its service tree and prio tree are apart,
    // so the order of the two removals changes neither. Inlined into the expiry, its caller
    // at every switch.
    #[inline(always)]
    pub(crate) fn del_from_rr(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        self.log_q(trace, now, q, format_args!("del_from_rr"));
        let cfqq = &mut self.queues[q];
        assert!(cfqq.on_rr, "queue not busy");
        cfqq.on_rr = false;
        let (g, sync) = (cfqq.group, cfqq.sync);
        let st = cfqq.service_tree.take();
        let level = cfqq.p_key.take();
        if let Some(st) = st {
            self.tree_unlink(g, usize::from(st), q);
        }
        if let Some(level) = level {
            self.prio_trees.erase(usize::from(level), q);
        }
        self.group_notify_queue_del(g, now, trace);
        assert!(self.busy_queues > 0, "busy_queues underflow");
        self.busy_queues -= 1;
        if sync {
            self.busy_sync_queues -= 1;
        }
    }

    /// The live prio-tree key of a linked queue: its `next_rq`'s start sector. The kernel
    /// compares these live values, so a queue whose next request moved since it was linked
    /// (the active queue, dispatching) is passed by the position it has now.
    pub(crate) fn prio_key(&self, q: QId) -> u64 {
        self.next_pending(q)
            .expect("a queue in a prio tree has a next request")
            .rq
            .sector
    }

    /// Kernel: cfq_prio_tree_add(): (re)link the queue by its next request's sector in the
    /// tree of its original level; a queue whose sector is already there is left out.
    // Always inline up to the empty tree's answer: a queue that gets a request finds its
    // level's tree empty under a process's small iodepth (every queue runs dry at each
    // dispatch), and the call cost a third of the rest.
    // The queue looked up once for all of it (issue 34: twice a request, three look-ups).
    #[inline(always)]
    pub(crate) fn prio_tree_add(&mut self, q: QId) {
        let cfqq = &mut self.queues[q];
        if let Some(level) = cfqq.p_key.take() {
            self.prio_trees.erase(usize::from(level), q);
        }
        if cfqq.class_idle() {
            return;
        }
        let Some((_, slot)) = cfqq.next_rq else {
            return;
        };
        let level = usize::from(cfqq.org_ioprio.min(7));
        if self.prio_trees.hold_in_empty(level, q) {
            cfqq.p_key = Some(level as u8); // eight levels
            return;
        }
        self.prio_tree_link(q, slot, level);
    }

    /// prio_tree_add() into a tree that is not empty (or past a held link).
    #[inline(never)]
    fn prio_tree_link(&mut self, q: QId, slot: super::queue::Slot, level: usize) {
        let sector = self.pending[slot as usize].rq.sector;
        self.prio_trees.flush();
        let at = self
            .prio_trees
            .settled()
            .search(level, sector, |n| self.prio_key(n));
        if at.found.is_none() {
            self.prio_trees.link(level, q, at);
            self.queues[q].p_key = Some(level as u8); // eight levels
        }
    }

    pub(crate) fn prio_tree_remove(&mut self, q: QId) {
        if let Some(level) = self.queues[q].p_key.take().map(usize::from) {
            self.prio_trees.erase(level, q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{insert, read, ssd, Rec, UP};
    use super::*;
    use crate::elevator::Elevator;
    use crate::request::IoContextId;

    /// A queue linked behind the others (its key at least the rightmost's) leaves the
    /// leftmost as it was, as the kernel's descent, which turns right at every node, leaves
    /// `rb_leftmost`; equal keys go after existing ones. Checked against the in-order walk
    /// at each link (it fails when an appended queue is taken as leftmost).
    #[test]
    fn appended_queue_keeps_the_leftmost() {
        let mut cfq = ssd();
        let st = 1;
        for key in [50u64, 50, 70, 10, 90, 10, 90] {
            let q = cfq.queues.len();
            cfq.queues.push(CfqQueue {
                live: true,
                rb_key: key,
                service_tree: Some(st as u8),
                ..CfqQueue::default()
            });
            cfq.tree_link(0, st, q, key);
            let order = cfq.st_forest.in_order(forest_tree(0, st));
            let tree = &cfq.groups[0].trees[st];
            assert_eq!(tree.leftmost, order.first().copied(), "key {key}");
            assert_eq!(tree.rightmost, order.last().copied(), "key {key}");
            assert_eq!(tree.count as usize, order.len());
        }
    }

    /// A queue alone on its tree, re-keyed (a preemption's move to the front), ends as the
    /// erasure and re-insertion leave it: the same root, links, colour, leftmost and count,
    /// its new key, and the shared sequence advanced once.
    #[test]
    fn lone_queue_rekeyed_in_place() {
        let lone = || {
            let mut cfq = ssd();
            insert(&mut cfq, read(1, 100, 0), UP, &mut Rec::default());
            let q = cfq.cic(IoContextId(100)).sync_q.expect("a sync queue");
            // Onto the tree its type now names (the insertion turned its idle window off).
            cfq.service_tree_add(q, false, UP + 1);
            (cfq, q)
        };
        let (mut fast, q) = lone();
        let (mut plain, _) = lone();
        let st = usize::from(fast.queues[q].service_tree.expect("on a tree"));
        assert_eq!(fast.groups[0].trees[st].count, 1);
        fast.service_tree_add(q, true, UP + 5);
        // The kernel's moves, one by one: erase, then link with the front key.
        let key = plain.queues[q].rb_key.wrapping_sub(NSEC_PER_SEC);
        plain.tree_remove(q);
        plain.next_seq();
        plain.queues[q].rb_key = key;
        plain.queues[q].service_tree = Some(st as u8);
        plain.tree_link(0, st, q, key);
        let t = forest_tree(0, st);
        let shape = |cfq: &Cfq| {
            let f = &cfq.st_forest;
            let tree = &cfq.groups[0].trees[st];
            (
                f.root(t),
                f.left(q),
                f.right(q),
                f.parent(q),
                f.red(q),
                tree.leftmost,
                tree.count,
                cfq.queues[q].rb_key,
                cfq.seq,
            )
        };
        assert_eq!(shape(&fast), shape(&plain));
        fast.check_invariants();
    }
}
