//! Groups: `bfq.weight` in the cgroup hierarchy. Kernel: `block/bfq-cgroup.c`.
//!
//! Each cgroup with I/O has a group with an entity on its parent group's BE service tree,
//! weighted by `bfq.weight` (1..=1000, default 100), and its own service trees for its queues
//! and child groups; B-WF2Q+ shares the device among sibling entities by weight at every
//! level. A weight written later takes effect at the entity's next (re)activation
//! (`prio_changed`). Each group has its own async queues.
//!
//! Choice: iosched announces a cgroup with [`CgroupSpec`], whose `weight` is taken as
//! `bfq.weight` (clamped to 1..=1000), and with its parent (announced first); the kernel
//! links a group to its parent at its first bio (bfq_link_bfqg()), which is when iosched
//! announces it. A process whose requests come from another cgroup than before loses its
//! async queue and moves its sync queue (bfq_bic_update_cgroup()).
//!
//! Kernel: bfq_pd_init(), bfq_group_set_parent(), bfq_link_bfqg(), bfq_bio_bfqg(),
//! bfq_group_set_weight(), bfq_bic_update_cgroup(), __bfq_bic_change_cgroup(),
//! bfq_sync_bfqq_move(), bfq_bfqq_move().

use super::wf2q::{Entity, Owner, SchedData};
use super::{Bfq, BfqGroup, GId, QId, BFQ_MAX_WEIGHT, BFQ_MIN_WEIGHT};
use crate::elevator::CgroupSpec;
use crate::rbtree::RbForest;
use crate::request::{CgroupId, IoContextId, Request, Time};
use crate::trace::Trace;

/// Kernel: CGROUP_WEIGHT_DFL, the default `bfq.weight`.
pub const BFQ_DEFAULT_GROUP_WEIGHT: u32 = 100;

impl BfqGroup {
    pub(crate) fn new(cgroup: CgroupId, entity: Option<usize>, now: Time) -> BfqGroup {
        BfqGroup {
            cgroup,
            entity,
            sched_data: SchedData::new(now),
            async_bfqq: [[None; 8]; 2],
            async_idle_bfqq: None,
            active_entities: 0,
            num_queues_with_pending_reqs: 0,
            rq_pos_tree: RbForest::new(1),
        }
    }
}

impl Bfq {
    /// Kernel: bfq_pd_init() + bfq_link_bfqg(): a group for `spec`, or a new weight for a
    /// known one (bfq_group_set_weight()).
    pub(crate) fn add_group(&mut self, spec: CgroupSpec, now: Time) {
        let weight = spec.weight.clamp(BFQ_MIN_WEIGHT, BFQ_MAX_WEIGHT);
        if let Some(&g) = self.group_of.get(spec.id) {
            if let Some(e) = self.groups[g].entity {
                if weight != self.e(e).new_weight {
                    self.em(e).new_weight = weight;
                    self.em(e).prio_changed = true;
                }
            }
            return;
        }
        let parent_g = self.group_of.get(spec.parent).copied().unwrap_or(0);
        let g = self.groups.len();
        let e = self.entities.len();
        let parent_e = self.groups[parent_g].entity;
        self.entities
            .push(Entity::new(Owner::Group(g), parent_g, parent_e, weight));
        let mut group = BfqGroup::new(spec.id, Some(e), now);
        // bfq_pd_alloc() zeroes the group; only the root's is set to jiffies
        // (bfq_init_root_group()).
        group.sched_data.bfq_class_idle_last_service = 0;
        self.groups.push(group);
        self.group_of.insert(spec.id, g);
    }

    /// Kernel: bfq_bio_bfqg(): the group of a request's cgroup (the root for an unknown one).
    pub(crate) fn bio_bfqg(&self, rq: &Request) -> GId {
        self.group_of.get(rq.cgroup).copied().unwrap_or(0)
    }

    /// Kernel: bfq_bic_update_cgroup().
    #[inline(always)]
    pub(crate) fn bic_update_cgroup(
        &mut self,
        bic: IoContextId,
        rq: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        // The bic's cgroup is one that had a group when it was set, and groups are never
        // removed: the same cgroup again maps to that group (skips the group look-up).
        if self.bics[&bic].cgroup != Some(rq.cgroup) {
            self.bic_change_cgroup(bic, rq, now, trace);
        }
    }

    /// bfq_bic_update_cgroup() for a request of another cgroup than the process's last.
    #[inline(never)]
    fn bic_change_cgroup(
        &mut self,
        bic: IoContextId,
        rq: &Request,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        let g = self.bio_bfqg(rq);
        let cgroup = self.groups[g].cgroup;
        if self.bics[&bic].cgroup == Some(cgroup) {
            return;
        }
        // __bfq_bic_change_cgroup().
        if let Some(aq) = self.bics[&bic].bfqq[0] {
            if self.bfqq_group(aq) != g {
                self.bic_set_bfqq(bic, None, false, now, trace);
                self.release_process_ref(aq, now, trace);
            }
        }
        if let Some(sq) = self.bics[&bic].bfqq[1] {
            self.sync_bfqq_move(sq, bic, g, now, trace);
        }
        self.bics.get_mut(bic).expect("bic").cgroup = Some(cgroup);
    }

    /// Kernel: bfq_sync_bfqq_move().
    fn sync_bfqq_move(
        &mut self,
        sq: QId,
        bic: IoContextId,
        g: GId,
        now: Time,
        trace: &mut dyn Trace,
    ) {
        if self.q(sq).new_bfqq.is_none() && !self.q(sq).coop {
            if self.bfqq_group(sq) != g {
                self.bfqq_move(sq, g, now, trace);
            }
            return;
        }
        let mut at = Some(sq);
        while let Some(q) = at {
            if self.bfqq_group(q) != g {
                break;
            }
            at = self.q(q).new_bfqq;
        }
        if at.is_some() {
            self.put_cooperator(sq, now, trace);
            self.bic_set_bfqq(bic, None, true, now, trace);
            self.release_process_ref(sq, now, trace);
        }
    }

    /// Kernel: bfq_bfqq_move(): the queue leaves its group for `g`.
    pub(crate) fn bfqq_move(&mut self, q: QId, g: GId, now: Time, trace: &mut dyn Trace) {
        if self.bfqq_group(q) == g {
            return;
        }
        self.qm(q).ref_ += 1;
        let had_pending = self.qe(q).in_groups_with_pending_reqs;
        if had_pending {
            self.del_bfqq_in_groups_with_pending_reqs(q);
        }
        if self.in_service_queue == Some(q) {
            self.bfqq_expire(q, false, super::Expiration::Preempted, now, trace);
        }
        if self.q(q).busy {
            self.deactivate_bfqq(q, false, false, now, trace);
        } else if self.qe(q).on_st_or_in_serv {
            let e = self.q(q).entity;
            let st = self.entity_service_tree(e);
            self.put_idle_entity(st, e, now, trace);
        }
        self.reassign_last_bfqq(q, None);
        let parent = self.groups[g].entity;
        let ent = self.qem(q);
        ent.parent = parent;
        ent.sched_data = g;
        if had_pending {
            self.add_bfqq_in_groups_with_pending_reqs(q);
        }
        if self.q(q).busy {
            if !self.nonrot_with_queueing {
                self.pos_tree_add_move(q, now, trace);
            }
            self.activate_bfqq(q, now, trace);
        }
        if self.in_service_queue.is_none() && self.tot_rq_in_driver == 0 {
            self.schedule_dispatch(now, trace);
        }
        self.put_queue(q, now, trace);
    }
}
