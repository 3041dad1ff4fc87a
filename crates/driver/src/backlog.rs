//! Each cgroup's weight-ideal share *while backlogged*, measured by the block layer (outside
//! any scheduler): the bar issue 32 sets ("every group within 10 % of its weight-ideal
//! share while backlogged").
//!
//! A group is backlogged while one of its processes has an I/O outstanding (queued in the
//! scheduler or in the device): it is waiting for service. Every completed byte is owed,
//! as generalized processor sharing owes it, to the groups backlogged at that moment in
//! proportion to their weights; a group that was thinking, or had nothing outstanding, is
//! owed nothing of it. A group's ideal share is what it was owed over all bytes moved. With
//! every group backlogged throughout this is `weight / sum of weights`; a group that stops
//! asking (think time) hands its part of those moments to the others.

use iosched_core::CgroupId;

/// What each group was owed, indexed by `CgroupId.0`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Backlog {
    owed: Vec<f64>,
    /// Each group's weight (what its tasks run at), set once the run is under way.
    pub weights: Option<Vec<u32>>,
    /// Scratch: whether each group is backlogged at the current completion.
    waiting: Vec<bool>,
    /// Each group's processes, and which of them last had an I/O outstanding: the next
    /// completion looks there first, so finding every backlogged group usually costs a look
    /// per group, not a walk over every process (issue 34: seed 004's 100-odd processes).
    members: Vec<Vec<usize>>,
    cursor: Vec<usize>,
}

impl Backlog {
    /// `bytes` completed while the groups of `backlogged` were waiting (a group may appear
    /// several times, once per process: counted once). Needs `weights`.
    pub fn completed(&mut self, bytes: u64, backlogged: impl Iterator<Item = CgroupId>) {
        let groups = self.weights.as_ref().map_or(0, Vec::len);
        self.waiting.clear();
        self.waiting.resize(groups, false);
        for id in backlogged {
            self.waiting[id.0 as usize] = true;
        }
        self.owe(bytes);
    }

    /// Whether each process's group is known ([`Backlog::set_members`]).
    pub fn has_members(&self) -> bool {
        !self.members.is_empty()
    }

    /// The run's processes' groups (`groups[p]` is process `p`'s), fixed for the run.
    /// Needs `weights`.
    pub fn set_members(&mut self, groups: impl Iterator<Item = CgroupId>) {
        let count = self.weights.as_ref().map_or(0, Vec::len);
        self.members = vec![Vec::new(); count];
        self.cursor = vec![0; count];
        for (process, id) in groups.enumerate() {
            self.members[id.0 as usize].push(process);
        }
    }

    /// `bytes` completed for a process of group `own`: owed to every group with a process
    /// that has an I/O outstanding (`in_flight(p)`), `own` included, as
    /// [`Backlog::completed`] with every such process's group. Needs `set_members`.
    pub fn completed_by(&mut self, bytes: u64, own: CgroupId, in_flight: impl Fn(usize) -> bool) {
        let groups = self.members.len();
        self.waiting.clear();
        self.waiting.resize(groups, false);
        self.waiting[own.0 as usize] = true;
        for group in 0..groups {
            if self.waiting[group] {
                continue;
            }
            let members = &self.members[group];
            let start = self.cursor[group];
            // From the last one found, round the group's processes once.
            let found = (0..members.len())
                .map(|step| (start + step) % members.len())
                .find(|&at| in_flight(members[at]));
            if let Some(at) = found {
                self.cursor[group] = at;
                self.waiting[group] = true;
            }
        }
        self.owe(bytes);
    }

    /// `bytes` owed to the groups `waiting` marks, by weight.
    fn owe(&mut self, bytes: u64) {
        let weights = self.weights.as_deref().unwrap_or(&[]);
        let waiting = |(index, &weight): (usize, &u32)| self.waiting[index].then_some(weight);
        let total: u64 = weights
            .iter()
            .enumerate()
            .filter_map(waiting)
            .map(|w| u64::from(w.max(1)))
            .sum();
        if total == 0 {
            return;
        }
        self.owed.resize(weights.len(), 0.0);
        for (index, &weight) in weights.iter().enumerate() {
            if self.waiting[index] {
                self.owed[index] += bytes as f64 * f64::from(weight.max(1)) / total as f64;
            }
        }
    }

    /// Bytes owed to group `id` over the run.
    pub fn owed(&self, id: CgroupId) -> f64 {
        self.owed.get(id.0 as usize).copied().unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both backlogged: owed by weight; one thinking: the other is owed all; a group named
    /// twice (two processes) counts once.
    #[test]
    fn bytes_are_owed_to_the_backlogged_by_weight() {
        let mut b = Backlog {
            weights: Some(vec![1000, 1000, 100]),
            ..Backlog::default()
        };
        let (heavy, light) = (CgroupId(1), CgroupId(2));
        b.completed(1100, [heavy, light, light].into_iter());
        assert_eq!((b.owed(heavy), b.owed(light)), (1000.0, 100.0));
        b.completed(500, [light].into_iter());
        assert_eq!((b.owed(heavy), b.owed(light)), (1000.0, 600.0));
        assert_eq!(b.owed(CgroupId(7)), 0.0);
    }

    /// The cursor's look-up owes exactly what a walk over every process owes, bit for bit,
    /// over completions whose outstanding sets change under it (it fails if a group whose
    /// last-found process went idle is not searched further, or if `own` is not counted).
    #[test]
    fn the_cursor_owes_what_the_walk_owes() {
        let groups_of = [0u32, 1, 1, 2, 2, 2, 3, 1, 3, 2].map(CgroupId);
        let weights = Some(vec![300, 1000, 500, 100]);
        let mut walk = Backlog {
            weights: weights.clone(),
            ..Backlog::default()
        };
        let mut cursor = Backlog {
            weights,
            ..Backlog::default()
        };
        cursor.set_members(groups_of.iter().copied());
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for round in 0..2000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let outstanding = state;
            let process = (round % groups_of.len() as u64) as usize;
            let busy = |p: usize| outstanding >> (p * 3 % 61) & 1 == 1;
            let bytes = 4096 * (1 + (state >> 40) % 64);
            let backlogged = (0..groups_of.len())
                .filter(|&p| p == process || busy(p))
                .map(|p| groups_of[p]);
            walk.completed(bytes, backlogged);
            cursor.completed_by(bytes, groups_of[process], busy);
        }
        for id in 0..4 {
            let id = CgroupId(id);
            assert_eq!(walk.owed(id).to_bits(), cursor.owed(id).to_bits());
            assert!(walk.owed(id) > 0.0);
        }
    }
}
