//! The prio trees: busy queues by their next request's start sector, one kernel-shaped
//! red-black tree per original ioprio level (`cfqd->prio_trees[]`), searched for close
//! cooperators.
//!
//! A queue that gets a request is linked, and unlinked again when that request is
//! dispatched and the queue runs dry: under a process's small iodepth that is every request
//! (issue 34: ~190 instructions a request in `rb_insert_color()` and `rb_erase()`), and
//! nothing looks at the tree in between. A link whose erasure would undo it exactly is held
//! back instead of made: a red leaf under a black parent (no rebalancing), or the root of an
//! empty tree. Erasing that node then just forgets the link; anything else done to or read
//! from the tree first makes it, at the place the search found, which the tree (unchanged
//! since) still offers. Insertion and rebalancing read only links and colours, never keys,
//! so the tree is the one the kernel builds in every case.

use crate::rbtree::{RbForest, Search};

/// The trees and the one link held back, as (tree, node, where).
#[derive(Clone, Debug)]
pub(crate) struct PrioTrees {
    forest: RbForest,
    held: Option<(usize, usize, Search)>,
}

impl PrioTrees {
    pub(crate) fn new(trees: usize) -> PrioTrees {
        PrioTrees {
            forest: RbForest::new(trees),
            held: None,
        }
    }

    /// Makes the held link, if any: before any other change or read of the trees.
    #[inline]
    pub(crate) fn flush(&mut self) {
        if let Some((tree, node, at)) = self.held.take() {
            self.forest.insert(tree, node, at);
        }
    }

    /// The trees, every link made (after [`PrioTrees::flush`]).
    #[inline]
    pub(crate) fn settled(&self) -> &RbForest {
        assert!(self.held.is_none(), "prio tree read with a link held back");
        &self.forest
    }

    /// Links `node` into `tree` where the search `at` (on the flushed tree) ended: at once,
    /// or held back when an erasure would undo it exactly.
    pub(crate) fn link(&mut self, tree: usize, node: usize, at: Search) {
        assert!(self.held.is_none(), "linking with a link held back");
        let undoable = match at.parent {
            None => true,
            Some(parent) => !self.forest.red(parent),
        };
        if undoable && at.found.is_none() {
            self.held = Some((tree, node, at));
        } else {
            self.forest.insert(tree, node, at);
        }
    }

    /// What [`PrioTrees::flush`], a search and [`PrioTrees::link`] do when no link is held
    /// and `tree` is empty (the search ends at once, without a parent, and the link is held
    /// back), without the search; answers whether it did.
    #[inline]
    pub(crate) fn hold_in_empty(&mut self, tree: usize, node: usize) -> bool {
        if self.held.is_some() || self.forest.root(tree).is_some() {
            return false;
        }
        self.held = Some((
            tree,
            node,
            Search {
                found: None,
                parent: None,
                right: false,
            },
        ));
        true
    }

    /// Unlinks `node` from `tree` (or forgets its held link).
    #[inline]
    pub(crate) fn erase(&mut self, tree: usize, node: usize) {
        if let Some((t, n, _)) = self.held {
            if (t, n) == (tree, node) {
                self.held = None;
                return;
            }
        }
        self.erase_linked(tree, node);
    }

    /// [`PrioTrees::erase`] of a node linked in its tree.
    #[inline(never)]
    fn erase_linked(&mut self, tree: usize, node: usize) {
        self.flush();
        self.forest.erase(tree, node);
    }

    /// The trees as they would be with every link made (consistency checks and tests).
    fn made(&self) -> std::borrow::Cow<'_, RbForest> {
        match self.held {
            None => std::borrow::Cow::Borrowed(&self.forest),
            Some((tree, node, at)) => {
                let mut forest = self.forest.clone();
                forest.insert(tree, node, at);
                std::borrow::Cow::Owned(forest)
            }
        }
    }

    /// Nodes of `tree` in key order, the held link included.
    pub(crate) fn in_order(&self, tree: usize) -> Vec<usize> {
        self.made().in_order(tree)
    }

    /// Checks `tree`'s red-black rules, the held link included.
    pub(crate) fn check(&self, tree: usize) {
        self.made().check(tree);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Random links and erasures of nodes keyed by their ids, on held-back trees and on
    /// plain ones: the same shapes after every step once flushed (the held link only ever
    /// skips a link and erasure that cancel).
    fn same_shapes(ops: &[(bool, u8)]) {
        let mut held = PrioTrees::new(1);
        let mut plain = RbForest::new(1);
        let mut linked = std::collections::BTreeSet::new();
        for &(add, n) in ops {
            let node = usize::from(n % 24);
            if add && !linked.contains(&node) {
                held.flush();
                let key = |m: usize| m as u64;
                let at = held.settled().search(0, node as u64, key);
                assert_eq!(at, plain.search(0, node as u64, key));
                held.link(0, node, at);
                plain.insert(0, node, at);
                linked.insert(node);
            } else if !add && linked.remove(&node) {
                held.erase(0, node);
                plain.erase(0, node);
            }
            assert_eq!(held.in_order(0), plain.in_order(0));
            let mut flushed = held.clone();
            flushed.flush();
            for m in 0..24 {
                let got = (
                    flushed.settled().left(m),
                    flushed.settled().right(m),
                    flushed.settled().red(m),
                );
                assert_eq!(
                    got,
                    (plain.left(m), plain.right(m), plain.red(m)),
                    "node {m}"
                );
            }
            assert_eq!(flushed.settled().root(0), plain.root(0));
        }
    }

    /// A link and its erasure with nothing between leave no trace, and a red parent is
    /// never held back under.
    #[test]
    fn a_cancelled_link_leaves_the_tree_as_it_was() {
        same_shapes(&[
            (true, 5),
            (false, 5),
            (true, 3),
            (true, 7),
            (false, 7),
            (true, 1),
        ]);
        let mut trees = PrioTrees::new(1);
        for n in [10usize, 5, 15] {
            trees.flush();
            let at = trees.settled().search(0, n as u64, |m| m as u64);
            trees.link(0, n, at);
        }
        trees.flush();
        // 5 and 15 are red children of the black 10: 3 goes under the red 5, linked at once.
        let at = trees.settled().search(0, 3, |m| m as u64);
        trees.link(0, 3, at);
        assert!(trees.held.is_none());
    }

    proptest! {
        #[test]
        fn held_back_links_keep_the_kernels_shapes(ops in prop::collection::vec(any::<(bool, u8)>(), 0..300)) {
            same_shapes(&ops);
        }
    }
}
