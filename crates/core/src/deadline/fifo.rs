//! mq-deadline's FIFO lists: requests in arrival order per priority level and direction,
//! each with its expiry (`fifo_time`, in jiffies).
//!
//! The kernel links `rq->queuelist` into `per_prio->fifo_list[dir]`; merging two requests
//! moves the survivor to the merged one's place (`list_move()` in dd_merged_requests()).
//! Here the links are slot indices, so unlinking and moving are O(1) as in the kernel.

use super::Slot;

/// Links of one slot: its neighbours on the list it is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Links {
    prev: Option<Slot>,
    next: Option<Slot>,
    /// Which list, when linked.
    list: Option<usize>,
}

/// Doubly linked lists over one arena of slots (a slot is on at most one list).
#[derive(Clone, Debug, Default)]
pub(super) struct Lists {
    links: Vec<Links>,
    heads: Vec<(Option<Slot>, Option<Slot>)>,
}

impl Lists {
    pub(super) fn new(lists: usize) -> Lists {
        Lists {
            links: Vec::new(),
            heads: vec![(None, None); lists],
        }
    }

    fn link_mut(&mut self, slot: Slot) -> &mut Links {
        let i = slot as usize;
        if self.links.len() <= i {
            self.links.resize(i + 1, Links::default());
        }
        &mut self.links[i]
    }

    fn link(&self, slot: Slot) -> Links {
        self.links.get(slot as usize).copied().unwrap_or_default()
    }

    pub(super) fn first(&self, list: usize) -> Option<Slot> {
        self.heads[list].0
    }

    pub(super) fn is_empty(&self, list: usize) -> bool {
        self.heads[list].0.is_none()
    }

    /// `list_empty(&rq->queuelist)` is false: the slot is on some list.
    pub(super) fn is_linked(&self, slot: Slot) -> bool {
        self.link(slot).list.is_some()
    }

    /// Kernel: list_add_tail().
    pub(super) fn push_back(&mut self, list: usize, slot: Slot) {
        assert!(!self.is_linked(slot), "slot {slot} is already on a list");
        let tail = self.heads[list].1;
        *self.link_mut(slot) = Links {
            prev: tail,
            next: None,
            list: Some(list),
        };
        match tail {
            Some(t) => self.link_mut(t).next = Some(slot),
            None => self.heads[list].0 = Some(slot),
        }
        self.heads[list].1 = Some(slot);
    }

    /// Kernel: list_move(slot, after): `slot` leaves its list and follows `after`.
    pub(super) fn move_after(&mut self, slot: Slot, after: Slot) {
        self.remove(slot);
        let at = self.link(after);
        let list = at.list.expect("moving after a slot that is on no list");
        *self.link_mut(slot) = Links {
            prev: Some(after),
            next: at.next,
            list: Some(list),
        };
        match at.next {
            Some(n) => self.link_mut(n).prev = Some(slot),
            None => self.heads[list].1 = Some(slot),
        }
        self.link_mut(after).next = Some(slot);
    }

    /// Kernel: list_del_init(); harmless on an unlinked slot.
    pub(super) fn remove(&mut self, slot: Slot) {
        let l = self.link(slot);
        let Some(list) = l.list else {
            return;
        };
        match l.prev {
            Some(p) => self.link_mut(p).next = l.next,
            None => self.heads[list].0 = l.next,
        }
        match l.next {
            Some(n) => self.link_mut(n).prev = l.prev,
            None => self.heads[list].1 = l.prev,
        }
        *self.link_mut(slot) = Links::default();
    }

    /// The slots of `list` in order (for invariant checks).
    pub(super) fn iter(&self, list: usize) -> impl Iterator<Item = Slot> + '_ {
        std::iter::successors(self.heads[list].0, move |&s| self.link(s).next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_after_takes_the_place_behind() {
        let mut l = Lists::new(1);
        for s in [1, 2, 3, 4] {
            l.push_back(0, s);
        }
        l.move_after(4, 1);
        assert_eq!(l.iter(0).collect::<Vec<_>>(), [1, 4, 2, 3]);
        l.move_after(1, 3);
        assert_eq!(l.iter(0).collect::<Vec<_>>(), [4, 2, 3, 1]);
        l.remove(4);
        l.remove(1);
        assert_eq!(l.iter(0).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(l.first(0), Some(2));
    }
}
