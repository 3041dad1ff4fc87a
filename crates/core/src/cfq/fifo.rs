//! FIFO expiry: each request carries a deadline (`fifo_expire_sync`/`_async` after arrival);
//! once per slice the active queue looks at its oldest request and, if the deadline passed,
//! serves it next regardless of elevator order and dispatch limits (`must_dispatch`).
//! Kernel: cfq_check_fifo().
//!
//! A queue's FIFO is a doubly linked list through the request slab, as the kernel's
//! `cfqq->fifo` list runs through its requests: the queue holds its two ends, each pending
//! request its neighbours. With thousands of queues a per-queue `VecDeque` was a line of its
//! own written at every insertion (issue 34); the links sit in the request's slot, which the
//! insertion writes anyway.

use super::queue::{Pending, RqRef, Slot};
use super::{Cfq, QId};
use crate::request::Time;

/// No request: an empty end, or no neighbour.
pub(crate) const NO_SLOT: Slot = Slot::MAX;

/// A queue's oldest and newest pending requests (`NO_SLOT` when it has none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FifoEnds {
    pub head: Slot,
    pub tail: Slot,
}

impl Default for FifoEnds {
    fn default() -> FifoEnds {
        FifoEnds {
            head: NO_SLOT,
            tail: NO_SLOT,
        }
    }
}

impl Cfq {
    /// Kernel: cfq_check_fifo(): consumes the once-per-slice check (`fifo_expire` flag).
    pub(crate) fn check_fifo(&mut self, q: QId, now: Time) -> Option<RqRef> {
        let cfqq = &mut self.queues[q];
        if cfqq.fifo_expire {
            return None;
        }
        cfqq.fifo_expire = true;
        let slot = cfqq.fifo.head;
        if slot == NO_SLOT {
            return None;
        }
        let head = &self.pending[slot as usize];
        if now < head.fifo_time {
            return None;
        }
        Some((head.key(), slot))
    }

    /// Takes `slot` out of queue `q`'s FIFO. Kernel: list_del_init().
    #[inline]
    pub(crate) fn fifo_unlink(&mut self, q: QId, slot: Slot) {
        unlink(&mut self.pending, &mut self.queues[q].fifo, slot);
    }

    /// `into` (not linked) takes `old`'s place in queue `q`'s FIFO; `old` leaves it.
    /// Kernel: list_move(&rq->queuelist, &next->queuelist) then next's removal.
    pub(crate) fn fifo_replace(&mut self, q: QId, old: Slot, into: Slot) {
        let (pending, ends) = (&mut self.pending, &mut self.queues[q].fifo);
        let o = &mut pending[old as usize];
        let (prev, next) = (o.fifo_prev, o.fifo_next);
        o.fifo_prev = NO_SLOT;
        o.fifo_next = NO_SLOT;
        let p = &mut pending[into as usize];
        p.fifo_prev = prev;
        p.fifo_next = next;
        set_next(pending, ends, prev, into);
        set_prev(pending, ends, next, into);
    }

    /// Whether `slot` is in queue `q`'s FIFO.
    pub(crate) fn fifo_linked(&self, q: QId, slot: Slot) -> bool {
        self.queues[q].fifo.head == slot || self.pending[slot as usize].fifo_prev != NO_SLOT
    }

    /// Queue `q`'s FIFO, oldest first (checks and tests).
    pub(crate) fn fifo_slots(&self, q: QId) -> Vec<Slot> {
        let mut out = Vec::new();
        let mut at = self.queues[q].fifo.head;
        while at != NO_SLOT {
            out.push(at);
            at = self.pending[at as usize].fifo_next;
        }
        out
    }
}

// The list's steps on the request slab and one queue's ends, borrowed apart, so that a
// caller already holding the queue (the insertion, the dispatch) links and unlinks without
// looking it up again (issue 34).

/// Appends `slot` (not linked) to the FIFO whose ends are `ends`. Kernel: list_add_tail().
#[inline]
pub(crate) fn push_tail(pending: &mut [Pending], ends: &mut FifoEnds, slot: Slot) {
    let tail = ends.tail;
    let p = &mut pending[slot as usize];
    p.fifo_prev = tail;
    p.fifo_next = NO_SLOT;
    set_next(pending, ends, tail, slot);
    ends.tail = slot;
}

/// Takes `slot` out of the FIFO whose ends are `ends`. Kernel: list_del_init().
#[inline]
pub(crate) fn unlink(pending: &mut [Pending], ends: &mut FifoEnds, slot: Slot) {
    let p = &mut pending[slot as usize];
    let (prev, next) = (p.fifo_prev, p.fifo_next);
    p.fifo_prev = NO_SLOT;
    p.fifo_next = NO_SLOT;
    set_next(pending, ends, prev, next);
    set_prev(pending, ends, next, prev);
}

/// The link after `at` (or the head, when `at` is none) becomes `to`.
#[inline]
fn set_next(pending: &mut [Pending], ends: &mut FifoEnds, at: Slot, to: Slot) {
    if at == NO_SLOT {
        ends.head = to;
    } else {
        pending[at as usize].fifo_next = to;
    }
}

/// The link before `at` (or the tail, when `at` is none) becomes `to`.
#[inline]
fn set_prev(pending: &mut [Pending], ends: &mut FifoEnds, at: Slot, to: Slot) {
    if at == NO_SLOT {
        ends.tail = to;
    } else {
        pending[at as usize].fifo_prev = to;
    }
}
