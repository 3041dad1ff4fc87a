//! Cgroup hierarchy: a child's weight splits its parent's share, as CFQ's and BFQ's
//! hierarchical modes do (CFQ: `cfqg->vfraction`, the product down the path of each
//! level's weight over the weights of its busy siblings; BFQ: one WF2Q+ service tree per
//! group). A group's own tasks compete with its children by its `leaf_weight`, as the
//! root's tasks do with the root's children.
//!
//! Virtual time stays one flat clock over the groups that hold requests: a group is charged
//! by its *effective* share of the device, the product of those fractions over the groups
//! active now (an idle sibling's part goes to the busy ones, as CFQ computes `vfraction`
//! when a group becomes busy). When every group is a child of the root the fractions are
//! the weights over their sum, so the flat charge by weight is kept as it is there (seed
//! 004's groups), byte for byte.

use super::Adaptive;
use crate::request::CgroupId;

/// The whole device, in effective-share units (parts per million).
pub const WHOLE_PPM: u64 = 1_000_000;

impl Adaptive {
    /// Whether some group sits below another group than the root (cached in `nested`).
    pub(crate) fn any_nested(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.id != CgroupId::ROOT && g.parent_id != CgroupId::ROOT)
    }

    /// The group of `g`'s parent cgroup, if announced (the root has none).
    fn parent_of(&self, g: usize) -> Option<usize> {
        let group = &self.groups[g];
        if group.id == CgroupId::ROOT {
            return None;
        }
        self.group_index.get(&group.parent_id).copied()
    }

    /// Per group: itself or a descendant is active (children come after their parents).
    fn subtree_active(&self) -> Vec<bool> {
        let mut busy: Vec<bool> = self.groups.iter().map(|g| g.active).collect();
        for g in (0..self.groups.len()).rev() {
            if let Some(p) = self.parent_of(g) {
                busy[p] |= busy[g];
            }
        }
        busy
    }

    /// Group `g`'s own tasks' effective share of the device, in ppm (at least 1).
    pub(crate) fn share_ppm(&self, g: usize) -> u64 {
        let busy = &self.subtree_active();
        let children = |p: usize| {
            self.groups
                .iter()
                .enumerate()
                .filter(move |&(c, _)| self.parent_of(c) == Some(p) && busy[c])
                .map(|(_, x)| u64::from(x.child_weight))
                .sum::<u64>()
        };
        let leaf = |p: usize| u64::from(self.groups[p].leaf_weight);
        let mut share = u128::from(WHOLE_PPM);
        let kids = children(g);
        if kids > 0 {
            share = share * u128::from(leaf(g)) / u128::from(leaf(g) + kids);
        }
        let mut node = g;
        while let Some(p) = self.parent_of(node) {
            let own = u64::from(self.groups[node].child_weight);
            let tasks = if self.groups[p].active { leaf(p) } else { 0 };
            let siblings = (children(p) + tasks).max(own);
            share = share * u128::from(own) / u128::from(siblings);
            node = p;
        }
        (share as u64).max(1)
    }

    /// The weight group `g` is charged and measured by: its cgroup weight while the groups
    /// are flat, its effective share (ppm) in a hierarchy.
    pub(crate) fn weight_now(&self, g: usize) -> u64 {
        if self.nested {
            self.share_ppm(g)
        } else {
            u64::from(self.groups[g].weight)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{rd, sched};
    use super::*;
    use crate::elevator::{CgroupSpec, Dispatch, Elevator};
    use crate::request::Time;
    use crate::trace::NoTrace;

    /// `/a` (1000) with children `/a/x` and `/a/y` (100 each), beside `/b` (1000): the
    /// children split `/a`'s half, 25 % each, where flat weights would give them 100 of
    /// 1200 each (8.3 %). One request at a time on a serial device, all backlogged.
    #[test]
    fn children_split_their_parents_share() {
        let mut a = sched(false, 1, &[(1, 1000), (3, 1000)]);
        for (id, weight) in [(2, 100), (4, 100)] {
            let spec = CgroupSpec {
                id: CgroupId(id),
                parent: CgroupId(1),
                weight,
                leaf_weight: weight,
            };
            a.add_cgroup(spec, 0);
        }
        let leaves = [2u32, 4, 3];
        let mut next = 0u64;
        for &cg in &leaves {
            for _ in 0..8 {
                a.insert(rd(next, cg, cg, next * 64, 8), 0, &mut NoTrace);
                next += 1;
            }
        }
        let mut served = [0u32; 3];
        let mut now: Time = 0;
        for _ in 0..400 {
            let Dispatch::Request(rq) = a.dispatch(now, &mut NoTrace) else {
                panic!("all backlogged: a request is due at {now}");
            };
            now += 100_000;
            a.completed(&rq, now, &mut NoTrace);
            let leaf = leaves
                .iter()
                .position(|&c| CgroupId(c) == rq.cgroup)
                .unwrap();
            served[leaf] += 1;
            a.insert(
                rd(next, rq.pid, rq.cgroup.0, next * 64, 8),
                now,
                &mut NoTrace,
            );
            next += 1;
            a.check_invariants();
        }
        assert!((95..=105).contains(&served[0]), "{served:?}");
        assert!((95..=105).contains(&served[1]), "{served:?}");
        assert!((190..=210).contains(&served[2]), "{served:?}");
    }
}
