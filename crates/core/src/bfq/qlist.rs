//! A list of queues linked through per-queue slots, as the kernel's `list_head`s are: adding
//! at the head and removing a queue are O(1) (BFQ's `active_list` and `idle_list` hold every
//! busy or idle queue, and a `Vec` scan to remove one cost O(queues) per request), and the
//! order is the kernel's, head first.
//! Kernel: list_add(), list_del() on bfqq->bfqq_list.

use super::QId;

/// A queue's neighbours on the list, when on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Link {
    prev: Option<QId>,
    next: Option<QId>,
}

/// Queues, head first; a queue is on the list at most once.
#[derive(Clone, Debug, Default)]
pub(crate) struct QList {
    head: Option<QId>,
    links: Vec<Option<Link>>,
}

impl QList {
    fn link_mut(&mut self, q: QId) -> &mut Link {
        self.links[q]
            .as_mut()
            .expect("a linked queue is on the list")
    }

    pub(crate) fn contains(&self, q: QId) -> bool {
        self.links.get(q).is_some_and(Option::is_some)
    }

    /// Kernel: list_add(): `q` becomes the head.
    pub(crate) fn push_front(&mut self, q: QId) {
        assert!(!self.contains(q), "queue {q} is already on the list");
        if self.links.len() <= q {
            self.links.resize(q + 1, None);
        }
        let next = self.head.replace(q);
        self.links[q] = Some(Link { prev: None, next });
        if let Some(n) = next {
            self.link_mut(n).prev = Some(q);
        }
    }

    /// Kernel: list_del(): `q` leaves the list, if on it.
    pub(crate) fn remove(&mut self, q: QId) {
        let Some(link) = self.links.get_mut(q).and_then(Option::take) else {
            return;
        };
        match link.prev {
            Some(p) => self.link_mut(p).next = link.next,
            None => self.head = link.next,
        }
        if let Some(n) = link.next {
            self.link_mut(n).prev = link.prev;
        }
    }

    /// The queues, head first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = QId> + '_ {
        std::iter::successors(self.head, |&q| {
            self.links[q].expect("a linked queue is on the list").next
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Head-first order after adds and removals from the head, middle and tail, as a
    /// `list_add()`/`list_del()` list keeps it.
    #[test]
    fn keeps_head_first_order_through_removals() {
        let mut l = QList::default();
        for q in [3, 1, 4, 5, 9] {
            l.push_front(q);
        }
        assert_eq!(l.iter().collect::<Vec<_>>(), [9, 5, 4, 1, 3]);
        l.remove(4);
        l.remove(9);
        l.remove(3);
        l.remove(7);
        assert_eq!(l.iter().collect::<Vec<_>>(), [5, 1]);
        l.push_front(3);
        assert_eq!(l.iter().collect::<Vec<_>>(), [3, 5, 1]);
        assert!(l.contains(5) && !l.contains(9));
    }
}
