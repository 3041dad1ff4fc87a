//! B-WF2Q+: the fair-queueing engine over entities. Kernel: `block/bfq-wf2q.c`.
//!
//! An entity is a queue or a (non-root) group. Each group has three service trees (RT, BE,
//! IDLE; groups themselves are always BE). A tree holds its *active* entities in a red-black
//! tree ordered by virtual finish time, augmented with the smallest virtual start below each
//! node (`min_start`), and its *idle* entities (finished their service but with a finish time
//! still ahead of the tree's virtual time) ordered the same way. An entity is *eligible* when
//! its start is not after the tree's virtual time `vtime`; the next entity to serve is found
//! by the kernel's walk in [`Bfq::first_active_entity`], which reads the tree's shape, so the
//! active trees are the kernel's red-black trees shape for shape
//! ([`crate::rbtree::RbForest`]). `vtime` advances by `service << 22 / wsum` as service
//! is charged ([`Bfq::bfqq_served`]) and jumps to the smallest start when nothing is eligible.
//!
//! `min_start` is kept in each entity as the kernel keeps it: after an insertion or an
//! erasure the nodes on the path from the deepest changed node to the root, and their
//! siblings, are recomputed from their children ([`Bfq::update_active_tree`]), which covers
//! every node a rotation moved, so the walk and the virtual-time jump read it in O(1) per
//! node. Keys are compared as unsigned numbers where the kernel uses the wrap-safe
//! `bfq_gt()`; virtual times start at 0 and grow by at most 2^22 per sector, so they never
//! come near the wrap.

use std::collections::BTreeMap;

use super::{Bfq, EId, GId, QId, BFQ_IOPRIO_CLASSES, BFQ_MAX_WEIGHT, BFQ_MIN_WEIGHT, CLASS_BE};
use super::{BFQ_WEIGHT_CONVERSION_COEFF, IOPRIO_NR_LEVELS};
use crate::deadline::tunables::{jiffies, jiffies_to_msecs};
use crate::rbtree::RbForest;
use crate::request::Time;
use crate::trace::Trace;

/// Kernel: WFQ_SERVICE_SHIFT.
pub(crate) const WFQ_SERVICE_SHIFT: u32 = 22;
/// 50 jiffies (200 ms): the idle class is served at least this often. Kernel:
/// BFQ_CL_IDLE_TIMEOUT.
pub(crate) const BFQ_CL_IDLE_TIMEOUT: u64 = 250 / 5;

/// What an entity stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    Queue(QId),
    Group(GId),
}

/// Which tree of its service tree an entity is on (`entity->tree`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tree {
    None,
    Active(usize),
    Idle(usize),
}

/// Kernel: struct bfq_entity.
#[derive(Clone, Debug)]
pub(crate) struct Entity {
    pub owner: Owner,
    pub on_st_or_in_serv: bool,
    pub start: u64,
    pub finish: u64,
    /// The smallest start in this entity's subtree of its active tree (valid while on it).
    pub min_start: u64,
    pub tree: Tree,
    /// The idle tree's key while on it.
    pub idle_key: (u64, u64),
    pub service: i64,
    pub budget: i64,
    pub allocated: i32,
    pub weight: u32,
    pub new_weight: u32,
    pub orig_weight: u32,
    /// The parent group's entity (`None`: the root group).
    pub parent: Option<EId>,
    /// The group whose service trees hold this entity.
    pub sched_data: GId,
    /// For a group's entity, the group it schedules.
    pub my_sched_data: Option<GId>,
    pub prio_changed: bool,
    pub in_groups_with_pending_reqs: bool,
    pub last_bfqq_created: Option<QId>,
}

impl Entity {
    pub(crate) fn new(owner: Owner, sched_data: GId, parent: Option<EId>, weight: u32) -> Entity {
        Entity {
            owner,
            on_st_or_in_serv: false,
            start: 0,
            finish: 0,
            min_start: 0,
            tree: Tree::None,
            idle_key: (0, 0),
            service: 0,
            budget: 0,
            allocated: 0,
            weight,
            new_weight: weight,
            orig_weight: weight,
            parent,
            sched_data,
            my_sched_data: match owner {
                Owner::Group(g) => Some(g),
                Owner::Queue(_) => None,
            },
            prio_changed: false,
            in_groups_with_pending_reqs: false,
            last_bfqq_created: None,
        }
    }
}

/// Kernel: struct bfq_service_tree (the active rbtree lives in [`SchedData::active`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct ServiceTree {
    pub idle: BTreeMap<(u64, u64), EId>,
    pub first_idle: Option<EId>,
    pub last_idle: Option<EId>,
    pub vtime: u64,
    pub wsum: u64,
    pub nr_active: usize,
}

/// Kernel: struct bfq_sched_data.
#[derive(Clone, Debug)]
pub(crate) struct SchedData {
    pub in_service_entity: Option<EId>,
    pub next_in_service: Option<EId>,
    pub service_tree: [ServiceTree; BFQ_IOPRIO_CLASSES],
    /// The three active trees, one per class.
    pub active: RbForest,
    pub bfq_class_idle_last_service: u64,
}

impl SchedData {
    pub(crate) fn new(now: Time) -> SchedData {
        SchedData {
            in_service_entity: None,
            next_in_service: None,
            service_tree: Default::default(),
            active: RbForest::new(BFQ_IOPRIO_CLASSES),
            bfq_class_idle_last_service: jiffies(now),
        }
    }
}

/// Kernel: bfq_gt().
fn bfq_gt(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

/// Kernel: bfq_delta().
pub(crate) fn bfq_delta(service: u64, weight: u64) -> u64 {
    assert!(weight > 0, "bfq_delta() with weight 0");
    (service << WFQ_SERVICE_SHIFT) / weight
}

/// Kernel: bfq_weight_to_ioprio().
fn weight_to_ioprio(weight: u32) -> u32 {
    IOPRIO_NR_LEVELS.saturating_sub(weight / BFQ_WEIGHT_CONVERSION_COEFF)
}

/// A service tree: group and class index.
pub(crate) type St = (GId, usize);

impl Bfq {
    pub(crate) fn st(&self, st: St) -> &ServiceTree {
        &self.groups[st.0].sched_data.service_tree[st.1]
    }

    pub(crate) fn st_mut(&mut self, st: St) -> &mut ServiceTree {
        &mut self.groups[st.0].sched_data.service_tree[st.1]
    }

    pub(crate) fn entity_queue(&self, e: EId) -> Option<QId> {
        match self.e(e).owner {
            Owner::Queue(q) => Some(q),
            Owner::Group(_) => None,
        }
    }

    /// Kernel: bfq_class_idx().
    pub(crate) fn class_idx(&self, e: EId) -> usize {
        match self.e(e).owner {
            Owner::Queue(q) => (self.q(q).ioprio_class - 1) as usize,
            Owner::Group(_) => (CLASS_BE - 1) as usize,
        }
    }

    /// Kernel: bfq_entity_service_tree().
    pub(crate) fn entity_service_tree(&self, e: EId) -> St {
        (self.e(e).sched_data, self.class_idx(e))
    }

    /// Kernel: bfq_calc_finish().
    fn calc_finish(&mut self, e: EId, service: u64, now: Time, trace: &mut dyn Trace) {
        let (start, weight) = (self.e(e).start, self.e(e).weight);
        let delta = bfq_delta(service, u64::from(weight));
        self.em(e).finish = start.wrapping_add(delta);
        if let Some(q) = self.entity_queue(e) {
            let finish = self.e(e).finish;
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("calc_finish: serv {service}, w {weight}"),
            );
            bfq_log_q!(
                self,
                trace,
                now,
                q,
                format_args!("calc_finish: start {start}, finish {finish}, delta {delta}"),
            );
        }
    }

    /// Kernel: bfq_idle_extract().
    fn idle_extract(&mut self, st: St, e: EId) {
        let key = self.e(e).idle_key;
        let tree = self.st(st);
        let next = tree
            .idle
            .range((key.0, key.1 + 1)..)
            .next()
            .map(|(_, &n)| n);
        let prev = tree.idle.range(..key).next_back().map(|(_, &p)| p);
        let tree = self.st_mut(st);
        if tree.first_idle == Some(e) {
            tree.first_idle = next;
        }
        if tree.last_idle == Some(e) {
            tree.last_idle = prev;
        }
        let removed = tree.idle.remove(&key);
        assert_eq!(removed, Some(e), "entity not on its idle tree");
        self.em(e).tree = Tree::None;
        if let Some(q) = self.entity_queue(e) {
            self.idle_list.remove(q);
        }
    }

    /// Kernel: bfq_active_insert() (bfq_insert() on the active tree).
    fn active_insert(&mut self, st: St, e: EId) {
        let finish = self.e(e).finish;
        let entities = &self.entities;
        let forest = &mut self.groups[st.0].sched_data.active;
        let at = forest.search_for_insert(st.1, finish, |n| entities[n].finish);
        forest.insert(st.1, e, at);
        let node = forest.left(e).or(forest.right(e)).unwrap_or(e);
        self.update_active_tree(st.0, node);
        self.st_mut(st).nr_active += 1;
        self.em(e).tree = Tree::Active(st.1);
        if let Some(q) = self.entity_queue(e) {
            self.active_list.push_front(q);
        }
        self.inc_active_entities(e);
    }

    /// Kernel: bfq_active_extract().
    pub(crate) fn active_extract(&mut self, st: St, e: EId) {
        assert_eq!(
            self.e(e).tree,
            Tree::Active(st.1),
            "entity not on this active tree"
        );
        let deepest = self.find_deepest(st.0, e);
        self.groups[st.0].sched_data.active.erase(st.1, e);
        if let Some(node) = deepest {
            self.update_active_tree(st.0, node);
        }
        self.st_mut(st).nr_active -= 1;
        self.em(e).tree = Tree::None;
        if let Some(q) = self.entity_queue(e) {
            self.active_list.remove(q);
        }
        self.dec_active_entities(e);
    }

    /// Kernel: bfq_idle_insert().
    fn idle_insert(&mut self, st: St, e: EId) {
        let finish = self.e(e).finish;
        let seq = self.next_seq();
        let first = self.st(st).first_idle.map(|f| self.e(f).finish);
        let last = self.st(st).last_idle.map(|l| self.e(l).finish);
        let tree = self.st_mut(st);
        if first.is_none_or(|f| bfq_gt(f, finish)) {
            tree.first_idle = Some(e);
        }
        if last.is_none_or(|l| bfq_gt(finish, l)) {
            tree.last_idle = Some(e);
        }
        tree.idle.insert((finish, seq), e);
        self.em(e).idle_key = (finish, seq);
        self.em(e).tree = Tree::Idle(st.1);
        if let Some(q) = self.entity_queue(e) {
            self.idle_list.push_front(q);
        }
    }

    /// Kernel: bfq_forget_entity().
    fn forget_entity(
        &mut self,
        st: St,
        e: EId,
        is_in_service: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        self.em(e).on_st_or_in_serv = false;
        let weight = u64::from(self.e(e).weight);
        self.st_mut(st).wsum -= weight;
        if let Some(q) = self.entity_queue(e) {
            if !is_in_service {
                self.put_queue(q, now, trace);
            }
        }
    }

    /// Kernel: bfq_put_idle_entity().
    pub(crate) fn put_idle_entity(&mut self, st: St, e: EId, now: Time, trace: &mut dyn Trace) {
        self.idle_extract(st, e);
        let in_service = self.groups[self.e(e).sched_data]
            .sched_data
            .in_service_entity
            == Some(e);
        self.forget_entity(st, e, in_service, now, trace);
    }

    /// Kernel: bfq_forget_idle(). Called at every level on every dispatch: with no first
    /// and no last idle entity (an empty idle tree) it does nothing.
    #[inline(always)]
    fn forget_idle(&mut self, st: St, now: Time, trace: &mut dyn Trace) {
        let tree = self.st(st);
        if tree.first_idle.is_some() || tree.last_idle.is_some() {
            self.forget_idle_entities(st, now, trace);
        }
    }

    /// bfq_forget_idle() with an idle tree that is not empty.
    #[inline(never)]
    fn forget_idle_entities(&mut self, st: St, now: Time, trace: &mut dyn Trace) {
        let tree = self.st(st);
        let (first, last, vtime) = (tree.first_idle, tree.last_idle, tree.vtime);
        if tree.nr_active == 0 {
            if let Some(l) = last {
                let finish = self.e(l).finish;
                if !bfq_gt(finish, vtime) {
                    self.st_mut(st).vtime = finish;
                }
            }
        }
        if let Some(f) = first {
            if !bfq_gt(self.e(f).finish, self.st(st).vtime) {
                self.put_idle_entity(st, f, now, trace);
            }
        }
    }

    /// Kernel: __bfq_entity_update_weight_prio(): applies a pending weight or class change
    /// (and weight raising) to an entity off its tree; returns the tree it belongs on now.
    pub(crate) fn update_weight_prio(
        &mut self,
        old_st: St,
        e: EId,
        update_class_too: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> St {
        if !self.e(e).prio_changed {
            return old_st;
        }
        let q = self.entity_queue(e);
        let weight = u64::from(self.e(e).weight);
        self.st_mut(old_st).wsum -= weight;
        let ent = self.em(e);
        if ent.new_weight != ent.orig_weight {
            ent.new_weight = ent.new_weight.clamp(BFQ_MIN_WEIGHT, BFQ_MAX_WEIGHT);
            ent.orig_weight = ent.new_weight;
            let orig = ent.orig_weight;
            if let Some(q) = q {
                self.qm(q).ioprio = weight_to_ioprio(orig);
            }
        }
        if let Some(q) = q {
            let bfqq = self.qm(q);
            if update_class_too {
                bfqq.ioprio_class = bfqq.new_ioprio_class;
            }
        }
        if q.is_none_or(|q| self.q(q).ioprio_class == self.q(q).new_ioprio_class) {
            self.em(e).prio_changed = false;
        }
        let new_st = self.entity_service_tree(e);
        let prev_weight = self.e(e).weight;
        let wr_coeff = q.map_or(1, |q| self.q(q).wr_coeff);
        let new_weight = self.e(e).orig_weight * wr_coeff;
        if let Some(q) = q {
            if prev_weight != new_weight {
                self.weights_tree_remove(q, now, trace);
            }
        }
        self.em(e).weight = new_weight;
        if let Some(q) = q {
            if prev_weight != new_weight && wr_coeff == 1 {
                self.weights_tree_add(q);
            }
        }
        self.st_mut(new_st).wsum += u64::from(new_weight);
        if new_st != old_st {
            self.em(e).start = self.st(new_st).vtime;
        }
        new_st
    }

    /// Kernel: bfq_bfqq_served(): charges `served` sectors to the queue and its ancestors,
    /// advancing each tree's virtual time.
    pub(crate) fn bfqq_served(&mut self, q: QId, served: i64, now: Time, trace: &mut dyn Trace) {
        let bfqq = self.qm(q);
        if bfqq.service_from_backlogged == 0 {
            bfqq.first_io_time = jiffies(now);
        }
        if bfqq.wr_coeff > 1 {
            bfqq.service_from_wr = bfqq.service_from_wr.wrapping_add(served as u64);
        }
        bfqq.service_from_backlogged = bfqq.service_from_backlogged.wrapping_add(served as u64);
        // The queue's entity is on its class's tree; every ancestor is a group's, on BE's
        // (bfq_entity_service_tree(), without asking each level's owner).
        let mut class = (bfqq.ioprio_class - 1) as usize;
        let mut at = Some(bfqq.entity);
        while let Some(e) = at {
            let ent = &mut self.entities[e];
            ent.service += served;
            let st = (ent.sched_data, class);
            let tree = self.st_mut(st);
            tree.vtime = tree.vtime.wrapping_add(bfq_delta(served as u64, tree.wsum));
            self.forget_idle(st, now, trace);
            at = self.entities[e].parent;
            class = (CLASS_BE - 1) as usize;
        }
        bfq_log_q!(
            self,
            trace,
            now,
            q,
            format_args!("bfqq_served {served} secs")
        );
    }

    /// Kernel: bfq_bfqq_charge_time(): charges a queue that used its time rather than its
    /// budget as if it had received the service the peak rate gives in that time.
    pub(crate) fn bfqq_charge_time(
        &mut self,
        q: QId,
        time_ms: u64,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let timeout_ms = u64::from(jiffies_to_msecs(super::budget::BFQ_TIMEOUT));
        let bounded_time_ms = time_ms.min(timeout_ms);
        let serv_to_charge_for_time =
            (self.bfq_max_budget * bounded_time_ms as i64) / timeout_ms as i64;
        let e = self.q(q).entity;
        let tot_serv_to_charge = serv_to_charge_for_time.max(self.e(e).service);
        if tot_serv_to_charge > self.e(e).budget {
            self.em(e).budget = tot_serv_to_charge;
        }
        let extra = (tot_serv_to_charge - self.e(e).service).max(0);
        self.bfqq_served(q, extra, now, trace);
    }

    /// Kernel: bfq_update_fin_time_enqueue().
    fn update_fin_time_enqueue(
        &mut self,
        e: EId,
        st: St,
        backshifted: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let st = self.update_weight_prio(st, e, true, now, trace);
        let budget = self.e(e).budget;
        self.calc_finish(e, budget as u64, now, trace);
        let vtime = self.st(st).vtime;
        if backshifted && bfq_gt(vtime, self.e(e).finish) {
            let mut delta = vtime.wrapping_sub(self.e(e).finish);
            if let Some(q) = self.entity_queue(e) {
                delta /= u64::from(self.q(q).wr_coeff);
            }
            let ent = self.em(e);
            ent.start = ent.start.wrapping_add(delta);
            ent.finish = ent.finish.wrapping_add(delta);
        }
        self.active_insert(st, e);
    }

    /// Kernel: __bfq_activate_entity().
    fn activate_entity_inner(
        &mut self,
        e: EId,
        non_blocking_wait_rq: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let st = self.entity_service_tree(e);
        let vtime = self.st(st).vtime;
        let finish = self.e(e).finish;
        let (backshifted, min_vstart) = if non_blocking_wait_rq && bfq_gt(vtime, finish) {
            (true, finish)
        } else {
            (false, vtime)
        };
        if self.e(e).tree == Tree::Idle(st.1) {
            self.idle_extract(st, e);
            self.em(e).start = if bfq_gt(min_vstart, finish) {
                min_vstart
            } else {
                finish
            };
        } else {
            self.em(e).start = min_vstart;
            let weight = u64::from(self.e(e).weight);
            self.st_mut(st).wsum += weight;
            self.get_entity(e, now, trace);
            self.em(e).on_st_or_in_serv = true;
        }
        self.update_fin_time_enqueue(e, st, backshifted, now, trace);
    }

    /// Kernel: bfq_get_entity().
    fn get_entity(&mut self, e: EId, now: Time, trace: &mut dyn Trace) {
        if let Some(q) = self.entity_queue(e) {
            self.qm(q).ref_ += 1;
            if self.tracing {
                let p = self.ptr(0, q as u64);
                let r = self.q(q).ref_;
                bfq_log_q!(self, trace, now, q, format_args!("get_entity: {p} {r}"));
            }
        }
    }

    /// Kernel: __bfq_requeue_entity().
    fn requeue_entity_inner(&mut self, e: EId, now: Time, trace: &mut dyn Trace) {
        let sd = self.e(e).sched_data;
        let st = self.entity_service_tree(e);
        if self.groups[sd].sched_data.in_service_entity == Some(e) {
            let service = self.e(e).service;
            self.calc_finish(e, service as u64, now, trace);
            let finish = self.e(e).finish;
            self.em(e).start = finish;
            if self.e(e).tree != Tree::None {
                self.active_extract(st, e);
            }
        } else {
            self.active_extract(st, e);
        }
        self.update_fin_time_enqueue(e, st, false, now, trace);
    }

    /// Kernel: __bfq_activate_requeue_entity().
    fn activate_requeue_inner(
        &mut self,
        e: EId,
        non_blocking_wait_rq: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let st = self.entity_service_tree(e);
        let sd = self.e(e).sched_data;
        if self.groups[sd].sched_data.in_service_entity == Some(e)
            || self.e(e).tree == Tree::Active(st.1)
        {
            self.requeue_entity_inner(e, now, trace);
        } else {
            self.activate_entity_inner(e, non_blocking_wait_rq, now, trace);
        }
    }

    /// Kernel: bfq_activate_requeue_entity(): up the hierarchy while the parent's next entity
    /// may change.
    fn activate_requeue_entity(
        &mut self,
        e: EId,
        non_blocking_wait_rq: bool,
        requeue: bool,
        expiration: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let mut at = Some(e);
        while let Some(e) = at {
            self.activate_requeue_inner(e, non_blocking_wait_rq, now, trace);
            let sd = self.e(e).sched_data;
            if !self.update_next_in_service(sd, Some(e), expiration, now, trace) && !requeue {
                break;
            }
            at = self.e(e).parent;
        }
    }

    /// Kernel: __bfq_deactivate_entity(): off the active tree; onto the idle tree if asked and
    /// its finish is still ahead, else forgotten. False if it was on no tree.
    pub(crate) fn deactivate_entity_inner(
        &mut self,
        e: EId,
        ins_into_idle_tree: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        if !self.e(e).on_st_or_in_serv {
            return false;
        }
        let sd = self.e(e).sched_data;
        let st = self.entity_service_tree(e);
        let is_in_service = self.groups[sd].sched_data.in_service_entity == Some(e);
        let service = self.e(e).service;
        self.calc_finish(e, service as u64, now, trace);
        if is_in_service {
            self.groups[sd].sched_data.in_service_entity = None;
        } else {
            self.em(e).service = 0;
        }
        match self.e(e).tree {
            Tree::Active(c) if c == st.1 => self.active_extract(st, e),
            Tree::Idle(c) if c == st.1 && !is_in_service => self.idle_extract(st, e),
            _ => {}
        }
        if !ins_into_idle_tree || !bfq_gt(self.e(e).finish, self.st(st).vtime) {
            self.forget_entity(st, e, is_in_service, now, trace);
        } else {
            self.idle_insert(st, e);
        }
        true
    }

    /// Kernel: bfq_deactivate_entity().
    fn deactivate_entity(
        &mut self,
        e: EId,
        mut ins_into_idle_tree: bool,
        expiration: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let mut at = Some(e);
        let mut parent = None;
        while let Some(e) = at {
            parent = self.e(e).parent;
            let sd = self.e(e).sched_data;
            if !self.deactivate_entity_inner(e, ins_into_idle_tree, now, trace) {
                return;
            }
            if self.groups[sd].sched_data.next_in_service == Some(e) {
                self.update_next_in_service(sd, None, expiration, now, trace);
            }
            let sdd = &self.groups[sd].sched_data;
            if sdd.next_in_service.is_some() || sdd.in_service_entity.is_some() {
                break;
            }
            ins_into_idle_tree = true;
            at = parent;
        }
        let mut at = parent;
        while let Some(e) = at {
            self.requeue_entity_inner(e, now, trace);
            let sd = self.e(e).sched_data;
            if !self.update_next_in_service(sd, Some(e), expiration, now, trace) && !expiration {
                break;
            }
            at = self.e(e).parent;
        }
    }

    /// Kernel: bfq_update_active_node(): `n`'s `min_start` from its own start and its
    /// children's `min_start`, which must be up to date.
    fn update_active_node(&mut self, g: GId, n: EId) {
        self.em(n).min_start = self.expected_min_start(g, n);
    }

    /// Kernel: bfq_update_active_tree(): from `n`, the deepest node a change touched, up to
    /// the root, each node and its sibling (the only nodes whose subtrees may have changed).
    fn update_active_tree(&mut self, g: GId, mut n: EId) {
        loop {
            self.update_active_node(g, n);
            let forest = &self.groups[g].sched_data.active;
            let Some(parent) = forest.parent(n) else {
                return;
            };
            let (left, right) = (forest.left(parent), forest.right(parent));
            match (left, right) {
                (Some(l), Some(r)) if l == n => self.update_active_node(g, r),
                (Some(l), _) => self.update_active_node(g, l),
                _ => {}
            }
            n = parent;
        }
    }

    /// Kernel: bfq_find_deepest(): the deepest node erasing `n` can change (none when `n`
    /// is the tree's only node).
    fn find_deepest(&self, g: GId, n: EId) -> Option<EId> {
        let forest = &self.groups[g].sched_data.active;
        match (forest.left(n), forest.right(n)) {
            (None, None) => forest.parent(n),
            (Some(l), None) => Some(l),
            (None, Some(r)) => Some(r),
            (Some(_), Some(_)) => {
                let next = forest.next(n).expect("a right subtree has a first node");
                if let Some(r) = forest.right(next) {
                    Some(r)
                } else if forest.parent(next) != Some(n) {
                    forest.parent(next)
                } else {
                    Some(next)
                }
            }
        }
    }

    /// The smallest start in the subtree of `n` (the kernel's `min_start`).
    fn min_start(&self, n: EId) -> u64 {
        self.e(n).min_start
    }

    /// The smallest of `n`'s start and its children's `min_start`: what `min_start` must be
    /// (the checks test it at every node, so by induction from the leaves the whole tree).
    fn expected_min_start(&self, g: GId, n: EId) -> u64 {
        let forest = &self.groups[g].sched_data.active;
        let mut min = self.e(n).start;
        for child in [forest.left(n), forest.right(n)].into_iter().flatten() {
            let m = self.e(child).min_start;
            if bfq_gt(min, m) {
                min = m;
            }
        }
        min
    }

    /// Kernel: bfq_calc_vtime_jump().
    fn calc_vtime_jump(&self, st: St) -> u64 {
        let root = self.groups[st.0]
            .sched_data
            .active
            .root(st.1)
            .expect("active tree not empty");
        let min = self.min_start(root);
        let vtime = self.st(st).vtime;
        if bfq_gt(min, vtime) {
            min
        } else {
            vtime
        }
    }

    /// Kernel: bfq_update_vtime().
    fn update_vtime(&mut self, st: St, new_value: u64, now: Time, trace: &mut dyn Trace) {
        if new_value > self.st(st).vtime {
            self.st_mut(st).vtime = new_value;
            self.forget_idle(st, now, trace);
        }
    }

    /// Kernel: bfq_first_active_entity(): the kernel's walk for an eligible entity with a
    /// small finish time (not always the smallest: it stops at the first eligible node once
    /// the left subtree has no eligible entity).
    pub(crate) fn first_active_entity(&self, st: St, vtime: u64) -> Option<EId> {
        let forest = &self.groups[st.0].sched_data.active;
        let mut first = None;
        let mut node = forest.root(st.1);
        while let Some(mut n) = node {
            loop {
                if !bfq_gt(self.e(n).start, vtime) {
                    first = Some(n);
                }
                match forest.left(n) {
                    Some(l) if !bfq_gt(self.min_start(l), vtime) => n = l,
                    _ => break,
                }
            }
            if first.is_some() {
                break;
            }
            node = forest.right(n);
        }
        first
    }

    /// Kernel: __bfq_lookup_next_entity().
    fn lookup_next_entity_in(
        &mut self,
        st: St,
        in_service: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<EId> {
        if self.st(st).nr_active == 0 {
            return None;
        }
        let new_vtime = self.calc_vtime_jump(st);
        if !in_service {
            self.update_vtime(st, new_vtime, now, trace);
        }
        self.first_active_entity(st, new_vtime)
    }

    /// Kernel: bfq_lookup_next_entity(): the idle class first if it has waited too long,
    /// else by class.
    fn lookup_next_entity(
        &mut self,
        g: GId,
        expiration: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Option<EId> {
        let j = jiffies(now);
        let mut class_idx = 0;
        let sd = &self.groups[g].sched_data;
        if super::time_after(j, sd.bfq_class_idle_last_service + BFQ_CL_IDLE_TIMEOUT) {
            if sd.service_tree[BFQ_IOPRIO_CLASSES - 1].nr_active > 0 {
                class_idx = BFQ_IOPRIO_CLASSES - 1;
            }
            self.groups[g].sched_data.bfq_class_idle_last_service = j;
        }
        let in_service = self.groups[g].sched_data.in_service_entity.is_some() && !expiration;
        for c in class_idx..BFQ_IOPRIO_CLASSES {
            if let Some(e) = self.lookup_next_entity_in((g, c), in_service, now, trace) {
                return Some(e);
            }
        }
        None
    }

    /// Kernel: bfq_update_next_in_service(): true if the parent's next entity may change.
    pub(crate) fn update_next_in_service(
        &mut self,
        g: GId,
        new_entity: Option<EId>,
        expiration: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) -> bool {
        let mut next_in_service = self.groups[g].sched_data.next_in_service;
        let mut change_without_lookup = false;
        if let Some(new) = new_entity.filter(|&n| Some(n) != next_in_service) {
            change_without_lookup = true;
            if let Some(next) = next_in_service {
                let c = self.class_idx(new);
                let vtime = self.groups[g].sched_data.service_tree[c].vtime;
                change_without_lookup = c == self.class_idx(next)
                    && !bfq_gt(self.e(new).start, vtime)
                    && bfq_gt(self.e(next).finish, self.e(new).finish);
            }
            if change_without_lookup {
                next_in_service = Some(new);
            }
        }
        if !change_without_lookup {
            next_in_service = self.lookup_next_entity(g, expiration, now, trace);
        }
        let mut parent_sched_may_change = false;
        if let Some(next) = next_in_service {
            let new_budget_triggers_change = self.update_parent_budget(next);
            parent_sched_may_change =
                self.groups[g].sched_data.next_in_service.is_none() || new_budget_triggers_change;
        }
        self.groups[g].sched_data.next_in_service = next_in_service;
        parent_sched_may_change
    }

    /// Kernel: bfq_update_parent_budget(): a group's budget is its next entity's.
    fn update_parent_budget(&mut self, next_in_service: EId) -> bool {
        let g = self.e(next_in_service).sched_data;
        let budget = self.e(next_in_service).budget;
        match self.groups[g].entity {
            Some(ge) => {
                let changed = self.e(ge).budget > budget;
                self.em(ge).budget = budget;
                changed
            }
            None => false,
        }
    }

    /// Kernel: bfq_no_longer_next_in_service().
    fn no_longer_next_in_service(&self, e: EId) -> bool {
        match self.e(e).owner {
            Owner::Queue(_) => true,
            Owner::Group(g) => self.groups[g].active_entities == 1,
        }
    }

    /// Kernel: bfq_inc_active_entities().
    fn inc_active_entities(&mut self, e: EId) {
        let g = self.e(e).sched_data;
        if g != 0 {
            self.groups[g].active_entities += 1;
        }
    }

    /// Kernel: bfq_dec_active_entities().
    fn dec_active_entities(&mut self, e: EId) {
        let g = self.e(e).sched_data;
        if g != 0 {
            self.groups[g].active_entities -= 1;
        }
    }

    /// Kernel: next_queue_may_preempt().
    pub(crate) fn next_queue_may_preempt(&self) -> bool {
        let sd = &self.groups[0].sched_data;
        sd.next_in_service != sd.in_service_entity
    }

    /// Kernel: bfq_get_next_queue(): descends from the root along `next_in_service`,
    /// making each entity the one in service.
    pub(crate) fn get_next_queue(&mut self, now: Time, trace: &mut dyn Trace) -> Option<QId> {
        if self.tot_busy_queues() == 0 {
            return None;
        }
        let mut g = Some(0);
        let mut entity = None;
        while let Some(sd) = g {
            let e = self.groups[sd]
                .sched_data
                .next_in_service
                .expect("busy queues have a next entity");
            self.groups[sd].sched_data.in_service_entity = Some(e);
            if self.no_longer_next_in_service(e) {
                let st = self.entity_service_tree(e);
                self.active_extract(st, e);
            }
            entity = Some(e);
            g = self.e(e).my_sched_data;
        }
        let e = entity.expect("descended at least once");
        let q = self.entity_queue(e).expect("a leaf entity is a queue");
        let mut at = Some(e);
        while let Some(e) = at {
            let sd = self.e(e).sched_data;
            if !self.update_next_in_service(sd, None, false, now, trace) {
                break;
            }
            at = self.e(e).parent;
        }
        Some(q)
    }

    /// Kernel: __bfq_bfqd_reset_in_service(): no queue in service; true if the queue was
    /// freed.
    pub(crate) fn reset_in_service(&mut self, now: Time, trace: &mut dyn Trace) -> bool {
        let q = self.in_service_queue.expect("a queue in service");
        self.qm(q).wait_request = false;
        self.cancel_idle_timer(now, trace);
        self.in_service_queue = None;
        let e0 = self.q(q).entity;
        let mut at = Some(e0);
        while let Some(e) = at {
            let sd = self.e(e).sched_data;
            self.groups[sd].sched_data.in_service_entity = None;
            at = self.e(e).parent;
        }
        if !self.e(e0).on_st_or_in_serv {
            let r = self.q(q).ref_;
            self.put_queue(q, now, trace);
            if r == 1 {
                return true;
            }
        }
        false
    }

    /// Kernel: bfq_deactivate_bfqq().
    pub(crate) fn deactivate_bfqq(
        &mut self,
        q: QId,
        ins_into_idle_tree: bool,
        expiration: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let e = self.q(q).entity;
        self.deactivate_entity(e, ins_into_idle_tree, expiration, now, trace);
    }

    /// Kernel: bfq_activate_bfqq().
    pub(crate) fn activate_bfqq(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        let e = self.q(q).entity;
        let nbwr = self.q(q).non_blocking_wait_rq;
        self.activate_requeue_entity(e, nbwr, false, false, now, trace);
        self.qm(q).non_blocking_wait_rq = false;
    }

    /// Kernel: bfq_requeue_bfqq().
    pub(crate) fn requeue_bfqq(
        &mut self,
        q: QId,
        expiration: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let e = self.q(q).entity;
        let requeue = self.in_service_queue == Some(q);
        self.activate_requeue_entity(e, false, requeue, expiration, now, trace);
    }

    /// Kernel: bfq_add_bfqq_in_groups_with_pending_reqs().
    pub(crate) fn add_bfqq_in_groups_with_pending_reqs(&mut self, q: QId) {
        if !self.qe(q).in_groups_with_pending_reqs {
            self.qem(q).in_groups_with_pending_reqs = true;
            let g = self.bfqq_group(q);
            self.groups[g].num_queues_with_pending_reqs += 1;
            if self.groups[g].num_queues_with_pending_reqs == 1 {
                self.num_groups_with_pending_reqs += 1;
            }
        }
    }

    /// Kernel: bfq_del_bfqq_in_groups_with_pending_reqs().
    pub(crate) fn del_bfqq_in_groups_with_pending_reqs(&mut self, q: QId) {
        if self.qe(q).in_groups_with_pending_reqs {
            self.qem(q).in_groups_with_pending_reqs = false;
            let g = self.bfqq_group(q);
            self.groups[g].num_queues_with_pending_reqs -= 1;
            if self.groups[g].num_queues_with_pending_reqs == 0 {
                self.num_groups_with_pending_reqs -= 1;
            }
        }
    }

    /// Kernel: bfq_del_bfqq_busy().
    pub(crate) fn del_bfqq_busy(
        &mut self,
        q: QId,
        expiration: bool,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        bfq_log_q!(self, trace, now, q, format_args!("del from busy"));
        let class = self.q(q).ioprio_class as usize - 1;
        self.qm(q).busy = false;
        self.busy_queues[class] -= 1;
        if self.q(q).wr_coeff > 1 {
            self.wr_busy_queues -= 1;
        }
        self.deactivate_bfqq(q, true, expiration, now, trace);
        if self.queues[q].is_some() && self.q(q).dispatched == 0 {
            self.del_bfqq_in_groups_with_pending_reqs(q);
            self.weights_tree_remove(q, now, trace);
        }
    }

    /// Kernel: bfq_add_bfqq_busy().
    pub(crate) fn add_bfqq_busy(&mut self, q: QId, now: Time, trace: &mut dyn Trace) {
        bfq_log_q!(self, trace, now, q, format_args!("add to busy"));
        self.activate_bfqq(q, now, trace);
        self.qm(q).busy = true;
        let class = self.q(q).ioprio_class as usize - 1;
        self.busy_queues[class] += 1;
        if self.q(q).dispatched == 0 {
            self.add_bfqq_in_groups_with_pending_reqs(q);
            if self.q(q).wr_coeff == 1 {
                self.weights_tree_add(q);
            }
        }
        if self.q(q).wr_coeff > 1 {
            self.wr_busy_queues += 1;
        }
        // A woken queue moves to the head of its waker's list when it becomes busy.
        if let Some(w) = self.q(q).woken_list_node {
            if self.q(w).woken_list.front() != Some(&q) {
                self.qm(w).woken_list.retain(|&x| x != q);
                self.qm(w).woken_list.push_front(q);
            }
        }
    }

    /// O(n) checks of the trees: wsum is the weight of the entities on or in service of each
    /// tree, the red-black rules hold, and counts agree.
    pub(crate) fn check_wf2q(&self) {
        for (g, group) in self.groups.iter().enumerate() {
            for c in 0..BFQ_IOPRIO_CLASSES {
                let forest = &group.sched_data.active;
                forest.check(c);
                let active = forest.in_order(c);
                for &e in &active {
                    assert_eq!(
                        self.e(e).min_start,
                        self.expected_min_start(g, e),
                        "group {g} class {c}: entity {e}'s min_start is stale"
                    );
                }
                assert_eq!(
                    active.len(),
                    group.sched_data.service_tree[c].nr_active,
                    "group {g} class {c}: active count"
                );
                let mut wsum = 0u64;
                for (e, ent) in self.entities.iter().enumerate() {
                    if ent.sched_data == g
                        && ent.on_st_or_in_serv
                        && self.class_of_live(e) == Some(c)
                    {
                        wsum += u64::from(ent.weight);
                    }
                }
                assert_eq!(
                    wsum, group.sched_data.service_tree[c].wsum,
                    "group {g} class {c}: wsum"
                );
            }
        }
    }

    fn class_of_live(&self, e: EId) -> Option<usize> {
        match self.e(e).owner {
            Owner::Queue(q) => self.queues[q]
                .as_ref()
                .map(|b| (b.ioprio_class - 1) as usize),
            Owner::Group(_) => Some((CLASS_BE - 1) as usize),
        }
    }
}
