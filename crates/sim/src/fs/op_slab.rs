//! Buffered operations in progress, by token (a slot and its generation).

use super::FsOp;

/// Buffered operations in progress. A token names a slot and the slot's generation at
/// insertion, so a slot is reused at once while a stale token (an event of a finished
/// operation still queued) finds nothing, as a map keyed by never-reused tokens would say.
/// Tokens are identities only: nothing orders or prints them.
///
/// Choice: a slab over the hash map it replaces (insert, three to six look-ups and a removal
/// per buffered operation, ~5 % of a buffered run's instructions).
#[derive(Debug, Default)]
pub(crate) struct OpSlab {
    /// (generation, operation) per slot.
    slots: Vec<(u32, Option<FsOp>)>,
    free: Vec<u32>,
}

impl OpSlab {
    /// Stores `op`; returns its token.
    pub fn insert(&mut self, op: FsOp) -> u64 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push((0, None));
                u32::try_from(self.slots.len() - 1).expect("under 2^32 operations in flight")
            }
        };
        let entry = &mut self.slots[slot as usize];
        entry.1 = Some(op);
        (u64::from(entry.0) << 32) | u64::from(slot)
    }

    /// The slot `token` names, if the slot still holds that generation.
    #[inline]
    fn live_slot(&self, token: u64) -> Option<usize> {
        let slot = (token & u64::from(u32::MAX)) as usize;
        let (generation, _) = self.slots.get(slot)?;
        (u64::from(*generation) == token >> 32).then_some(slot)
    }

    #[inline]
    pub fn get(&self, token: u64) -> Option<&FsOp> {
        self.slots[self.live_slot(token)?].1.as_ref()
    }

    #[inline]
    pub fn get_mut(&mut self, token: u64) -> Option<&mut FsOp> {
        let slot = self.live_slot(token)?;
        self.slots[slot].1.as_mut()
    }

    /// Takes the operation out; its slot's next tenant gets a new generation.
    pub fn remove(&mut self, token: u64) -> Option<FsOp> {
        let slot = self.live_slot(token)?;
        let entry = &mut self.slots[slot];
        let op = entry.1.take()?;
        entry.0 = entry.0.wrapping_add(1);
        self.free.push(slot as u32);
        Some(op)
    }
}

impl std::ops::Index<u64> for OpSlab {
    type Output = FsOp;
    fn index(&self, token: u64) -> &FsOp {
        self.get(token).expect("a buffered operation in progress")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::OpPhase;
    use iosched_workload::generator::{IoKind, IoUnit};

    fn op(process: usize) -> FsOp {
        FsOp {
            process,
            unit: IoUnit {
                kind: IoKind::Read,
                file: 0,
                offset: 0,
                len: 4096,
            },
            submitted_at: 0,
            outstanding: 0,
            phase: OpPhase::Read,
            round: 0,
            balanced: false,
            cpu_pages: 0,
        }
    }

    /// A finished operation's token finds nothing once its slot holds another operation
    /// (an event of the finished one may still be queued), and removal takes it only once.
    #[test]
    fn a_stale_token_finds_nothing_after_its_slot_is_reused() {
        let mut ops = OpSlab::default();
        let first = ops.insert(op(1));
        let second = ops.insert(op(2));
        assert_eq!(ops[first].process, 1);
        assert_eq!(ops.remove(first).map(|op| op.process), Some(1));
        let third = ops.insert(op(3));
        assert_ne!(third, first, "a reused slot gets a new token");
        assert!(ops.get(first).is_none());
        assert!(ops.get_mut(first).is_none());
        assert!(ops.remove(first).is_none());
        assert_eq!(ops[third].process, 3);
        assert_eq!(ops[second].process, 2);
        assert!(ops.get(u64::MAX).is_none());
    }
}
