//! A queue's FIFO of queued requests, oldest first, linked through the requests themselves
//! as the kernel links `rq->queuelist` into `bfqq->fifo`.
//!
//! Requests usually leave in sector order, not arrival order, and a merged queue holds the
//! requests of many processes: removing one by a scan of the queue's list cost O(queued)
//! per dispatch (~800 instructions per request with 256 processes stably merged into 8
//! groups' queues). With the links in the request, removal is O(1) and the order is the
//! kernel's. Kernel: list_add_tail(), list_del_init(), list_replace_init() on
//! rq->queuelist; the users are bfq_insert_request() (`__bfq_insert_request()`),
//! bfq_remove_request(), bfq_requests_merged() and bfq_check_fifo().

use super::{Bfq, QId, Slot};

/// A queue's FIFO: its oldest and newest requests and how many it holds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fifo {
    head: Option<Slot>,
    tail: Option<Slot>,
    len: usize,
}

impl Fifo {
    /// The oldest request (`rq_entry_fifo(bfqq->fifo.next)`).
    pub(crate) fn front(&self) -> Option<Slot> {
        self.head
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }
}

/// A request's place on its queue's FIFO (`rq->queuelist`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FifoLink {
    prev: Option<Slot>,
    next: Option<Slot>,
    /// On a FIFO (`!list_empty(&rq->queuelist)`).
    linked: bool,
}

impl Bfq {
    /// Kernel: list_add_tail(&rq->queuelist, &bfqq->fifo).
    pub(crate) fn fifo_push_back(&mut self, q: QId, slot: Slot) {
        assert!(!self.h(slot).fifo.linked, "request already on a FIFO");
        let tail = self.q(q).fifo.tail;
        self.hm(slot).fifo = FifoLink {
            prev: tail,
            next: None,
            linked: true,
        };
        match tail {
            Some(t) => self.hm(t).fifo.next = Some(slot),
            None => self.qm(q).fifo.head = Some(slot),
        }
        let fifo = &mut self.qm(q).fifo;
        fifo.tail = Some(slot);
        fifo.len += 1;
    }

    /// Kernel: list_del_init(&rq->queuelist): `slot` leaves `q`'s FIFO; nothing if it is on
    /// none (a request whose place another took in a merge).
    pub(crate) fn fifo_remove(&mut self, q: QId, slot: Slot) {
        let link = self.h(slot).fifo;
        if !link.linked {
            return;
        }
        match link.prev {
            Some(p) => self.hm(p).fifo.next = link.next,
            None => {
                assert_eq!(self.q(q).fifo.head, Some(slot), "request on another FIFO");
                self.qm(q).fifo.head = link.next;
            }
        }
        match link.next {
            Some(n) => self.hm(n).fifo.prev = link.prev,
            None => self.qm(q).fifo.tail = link.prev,
        }
        self.qm(q).fifo.len -= 1;
        self.hm(slot).fifo = FifoLink::default();
    }

    /// Kernel: list_replace_init(&old->queuelist, &new->queuelist): `new` (on no FIFO) takes
    /// `old`'s place on `q`'s FIFO and `old` leaves it.
    pub(crate) fn fifo_replace(&mut self, q: QId, old: Slot, new: Slot) {
        let link = self.h(old).fifo;
        assert!(link.linked, "replaced request is on no FIFO");
        assert!(!self.h(new).fifo.linked, "replacing request is on a FIFO");
        match link.prev {
            Some(p) => self.hm(p).fifo.next = Some(new),
            None => self.qm(q).fifo.head = Some(new),
        }
        match link.next {
            Some(n) => self.hm(n).fifo.prev = Some(new),
            None => self.qm(q).fifo.tail = Some(new),
        }
        self.hm(new).fifo = link;
        self.hm(old).fifo = FifoLink::default();
    }

    /// `q`'s FIFO, oldest first (for invariant checks and tests).
    pub(crate) fn fifo_slots(&self, q: QId) -> Vec<Slot> {
        let len = self.q(q).fifo.len;
        std::iter::successors(self.q(q).fifo.head, |&s| self.h(s).fifo.next)
            .take(len + 1)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{req, rot, MS, UP};
    use crate::elevator::{Dispatch, Elevator};
    use crate::request::Op;
    use crate::trace::NoTrace;

    /// A request dispatched from the middle of its queue's FIFO (sector order is not
    /// arrival order) leaves it without disturbing the others' order, and a merge's
    /// list_replace_init() puts the survivor in the absorbed request's place.
    #[test]
    fn removal_from_the_middle_keeps_arrival_order() {
        let mut b = rot();
        for (i, sector) in [300_000u64, 100_000, 200_000, 400_000]
            .into_iter()
            .enumerate()
        {
            b.insert(
                req(i as u64 + 1, 7, Op::Read, sector, 8),
                UP + i as u64 * MS,
                &mut NoTrace,
            );
        }
        let q = b.h(0).bfqq;
        assert_eq!(b.fifo_slots(q), [0, 1, 2, 3]);
        let Dispatch::Request(first) = b.dispatch(UP + 4 * MS, &mut NoTrace) else {
            panic!("a queued request is dispatched");
        };
        assert_eq!(first.sector, 100_000, "sector order from position 0");
        assert_eq!(b.fifo_slots(q), [0, 2, 3]);
        assert_eq!(b.q(q).fifo.front(), Some(0));
        assert_eq!(b.q(q).fifo.len(), 3);
        b.fifo_remove(q, 2);
        assert_eq!(b.fifo_slots(q), [0, 3]);
        b.fifo_replace(q, 0, 2);
        assert_eq!(b.fifo_slots(q), [2, 3]);
        b.fifo_remove(q, 0);
        assert_eq!(b.fifo_slots(q), [2, 3], "a replaced request is on no FIFO");
        b.fifo_remove(q, 3);
        assert_eq!(b.fifo_slots(q), [2]);
        assert_eq!(b.q(q).fifo.len(), 1);
    }
}
