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
}

impl Backlog {
    /// `bytes` completed while the groups of `backlogged` were waiting (a group may appear
    /// several times, once per process: counted once). Needs `weights`.
    pub fn completed(&mut self, bytes: u64, backlogged: impl Iterator<Item = CgroupId>) {
        let weights = self.weights.as_deref().unwrap_or(&[]);
        self.waiting.clear();
        self.waiting.resize(weights.len(), false);
        for id in backlogged {
            self.waiting[id.0 as usize] = true;
        }
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
}
