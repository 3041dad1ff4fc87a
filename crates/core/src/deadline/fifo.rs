//! mq-deadline's FIFO lists: requests in arrival order per priority level and direction,
//! each with its expiry (`fifo_time`, in jiffies).
//!
//! The kernel links `rq->queuelist` into `per_prio->fifo_list[dir]`; merging two requests
//! moves the survivor to the merged one's place (`list_move()` in dd_merged_requests()).
//! Here the links are slot indices, so unlinking and moving are O(1) as in the kernel.

use super::Slot;

/// No slot, no list.
const NIL: u32 = u32::MAX;

fn opt(s: u32) -> Option<Slot> {
    (s != NIL).then_some(s)
}

/// Links of one slot: its neighbours on the list it is on, packed as `u32`s (`NIL` for
/// none): 12 bytes a slot, touched at every insert and dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Links {
    prev: u32,
    next: u32,
    /// Which list, when linked.
    list: u32,
}

impl Default for Links {
    fn default() -> Links {
        Links {
            prev: NIL,
            next: NIL,
            list: NIL,
        }
    }
}

/// Doubly linked lists over one arena of slots (a slot is on at most one list).
#[derive(Clone, Debug, Default)]
pub(super) struct Lists {
    links: Vec<Links>,
    /// Each list's (first, last).
    heads: Vec<(u32, u32)>,
}

impl Lists {
    pub(super) fn new(lists: usize) -> Lists {
        Lists {
            links: Vec::new(),
            heads: vec![(NIL, NIL); lists],
        }
    }

    fn link_mut(&mut self, slot: Slot) -> &mut Links {
        let i = slot as usize;
        if self.links.len() <= i {
            self.grow(i);
        }
        &mut self.links[i]
    }

    /// Room for slot `i`'s links: once per slot ever used, out of the hot path.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        self.links.resize(i + 1, Links::default());
    }

    fn link(&self, slot: Slot) -> Links {
        self.links.get(slot as usize).copied().unwrap_or_default()
    }

    pub(super) fn first(&self, list: usize) -> Option<Slot> {
        opt(self.heads[list].0)
    }

    pub(super) fn is_empty(&self, list: usize) -> bool {
        self.heads[list].0 == NIL
    }

    /// `list_empty(&rq->queuelist)` is false: the slot is on some list.
    pub(super) fn is_linked(&self, slot: Slot) -> bool {
        self.link(slot).list != NIL
    }

    /// Kernel: list_add_tail().
    pub(super) fn push_back(&mut self, list: usize, slot: Slot) {
        assert!(slot != NIL, "slot {slot} is the list end marker");
        let tail = self.heads[list].1;
        let link = self.link_mut(slot);
        assert!(link.list == NIL, "slot {slot} is already on a list");
        *link = Links {
            prev: tail,
            next: NIL,
            list: list as u32,
        };
        if tail == NIL {
            self.heads[list].0 = slot;
        } else {
            self.links[tail as usize].next = slot;
        }
        self.heads[list].1 = slot;
    }

    /// Kernel: list_move(slot, after): `slot` leaves its list and follows `after`.
    pub(super) fn move_after(&mut self, slot: Slot, after: Slot) {
        self.remove(slot);
        let at = self.link(after);
        assert!(at.list != NIL, "moving after a slot that is on no list");
        *self.link_mut(slot) = Links {
            prev: after,
            next: at.next,
            list: at.list,
        };
        if at.next == NIL {
            self.heads[at.list as usize].1 = slot;
        } else {
            self.links[at.next as usize].prev = slot;
        }
        self.links[after as usize].next = slot;
    }

    /// Kernel: list_del_init(); harmless on an unlinked slot.
    pub(super) fn remove(&mut self, slot: Slot) {
        let l = self.link(slot);
        if l.list == NIL {
            return;
        }
        let list = l.list as usize;
        if l.prev == NIL {
            self.heads[list].0 = l.next;
        } else {
            self.links[l.prev as usize].next = l.next;
        }
        if l.next == NIL {
            self.heads[list].1 = l.prev;
        } else {
            self.links[l.next as usize].prev = l.prev;
        }
        self.links[slot as usize] = Links::default();
    }

    /// The slots of `list` in order (for invariant checks).
    pub(super) fn iter(&self, list: usize) -> impl Iterator<Item = Slot> + '_ {
        std::iter::successors(self.first(list), move |&s| opt(self.link(s).next))
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
