//! The kernel's red-black tree, shape for shape, with 32-bit links: CFQ's prio trees, BFQ's
//! sort lists, `rq_pos_tree`s and service trees, and mq-deadline's sort lists.
//!
//! Searches that end without an exact hit take the *last node on the search path*
//! (`cfqq_close()`, `bfq_rq_pos_tree_lookup()`, `elv_rb_find()` over equal sectors), so the node returned
//! depends on the tree's shape, i.e. on the exact history of insertions and erasures and on
//! the kernel's rebalancing; and the comparisons read each node's *live* key (a queue's
//! next request moves, a front merge moves a request's start). So the trees are kept as the
//! kernel keeps them: nodes are ids in an arena, keys are read through a closure at every
//! comparison, insertion is `rb_link_node()` + `rb_insert_color()`, erasure `rb_erase()`,
//! with the same rotations and recolourings (the classic algorithm, successor-based erase,
//! as lib/rbtree.c).
//!
//! Each node's links are packed into 32-bit ids (`NIL` for none), 16 bytes a node where
//! `Option<usize>` links took 56: the trees are walked on every request, and four nodes
//! share a cache line. The shapes are held by the kernel oracles (CFQ's 315 scenarios of
//! Linux 4.20.1, BFQ's and mq-deadline's compiled 6.12 code), which see every search path.
//! Kernel: lib/rbtree.c (__rb_insert(), __rb_erase_augmented(), ____rb_erase_color(),
//! rb_next(), rb_prev()).

/// No node.
const NIL: u32 = u32::MAX;

/// One node's links as stored: parent, children (`NIL` for none), colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    parent: u32,
    left: u32,
    right: u32,
    red: bool,
}

impl Default for Node {
    fn default() -> Node {
        Node {
            parent: NIL,
            left: NIL,
            right: NIL,
            red: false,
        }
    }
}

/// One node's links as read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Links {
    parent: Option<usize>,
    left: Option<usize>,
    right: Option<usize>,
    red: bool,
}

fn opt(id: u32) -> Option<usize> {
    (id != NIL).then_some(id as usize)
}

fn raw(n: Option<usize>) -> u32 {
    match n {
        Some(n) => {
            debug_assert!(n < NIL as usize, "node id {n} does not fit 32 bits");
            n as u32
        }
        None => NIL,
    }
}

/// Where a search ended: the node found (an exact key match), or the last node visited and
/// the side of it where the key would be linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Search {
    pub found: Option<usize>,
    pub parent: Option<usize>,
    /// Link as the parent's right child (else left); meaningless without a parent.
    pub right: bool,
}

/// A forest of red-black trees over one arena of nodes (a node is in at most one tree).
#[derive(Clone, Debug, Default)]
pub(crate) struct RbForest {
    links: Vec<Node>,
    roots: Vec<u32>,
}

impl RbForest {
    /// `trees` empty trees.
    pub(crate) fn new(trees: usize) -> RbForest {
        RbForest {
            links: Vec::new(),
            roots: vec![NIL; trees],
        }
    }

    /// Grows the forest to at least `trees` trees (BFQ keeps one per queue, made as queues
    /// are).
    pub(crate) fn ensure_trees(&mut self, trees: usize) {
        if self.roots.len() < trees {
            self.roots.resize(trees, NIL);
        }
    }

    /// How many trees the forest has.
    pub(crate) fn trees(&self) -> usize {
        self.roots.len()
    }

    pub(crate) fn root(&self, tree: usize) -> Option<usize> {
        opt(self.roots[tree])
    }

    fn l(&self, n: usize) -> Links {
        let node = self.links.get(n).copied().unwrap_or_default();
        Links {
            parent: opt(node.parent),
            left: opt(node.left),
            right: opt(node.right),
            red: node.red,
        }
    }

    /// The links of `n`, a node that has been inserted (so the arena holds it): every
    /// write but [`RbForest::insert`]'s first is to a node in a tree.
    fn l_mut(&mut self, n: usize) -> &mut Node {
        &mut self.links[n]
    }

    fn is_red(&self, n: Option<usize>) -> bool {
        n.is_some_and(|n| self.l(n).red)
    }

    /// Kernel: cfq_prio_tree_lookup(): descend by `key(node)` (smaller left, larger right)
    /// until an equal key or a leaf.
    pub(crate) fn search(&self, tree: usize, sector: u64, key: impl Fn(usize) -> u64) -> Search {
        let mut at = opt(self.roots[tree]);
        let mut out = Search {
            found: None,
            parent: None,
            right: false,
        };
        while let Some(n) = at {
            out.parent = Some(n);
            let k = key(n);
            if sector > k {
                out.right = true;
                at = self.l(n).right;
            } else if sector < k {
                out.right = false;
                at = self.l(n).left;
            } else {
                out.found = Some(n);
                return out;
            }
        }
        out
    }

    /// Kernel: elv_rb_add()'s descent: smaller keys go left, equal or larger right, so a
    /// node joins after those with its key (mq-deadline's sort lists allow equal sectors).
    pub(crate) fn search_for_insert(
        &self,
        tree: usize,
        sector: u64,
        key: impl Fn(usize) -> u64,
    ) -> Search {
        let mut at = opt(self.roots[tree]);
        let mut out = Search {
            found: None,
            parent: None,
            right: false,
        };
        while let Some(n) = at {
            out.parent = Some(n);
            out.right = sector >= key(n);
            at = if out.right {
                self.l(n).right
            } else {
                self.l(n).left
            };
        }
        out
    }

    /// Where `search_for_insert` ends for a key at least that of `last`, the tree's rightmost
    /// node: every node on the way down has a key no greater, so the descent turns right at
    /// each and stops below `last`. Links an append in O(1) instead of a root-to-leaf walk.
    pub(crate) fn after_last(&self, last: usize) -> Search {
        debug_assert!(
            self.l(last).right.is_none(),
            "{last} is not the rightmost node"
        );
        Search {
            found: None,
            parent: Some(last),
            right: true,
        }
    }

    /// Kernel: deadline_from_pos(): the first node in order whose key is at least `pos`.
    pub(crate) fn lower_bound(
        &self,
        tree: usize,
        pos: u64,
        key: impl Fn(usize) -> u64,
    ) -> Option<usize> {
        let mut at = opt(self.roots[tree]);
        let mut found = None;
        while let Some(n) = at {
            if key(n) >= pos {
                found = Some(n);
                at = self.l(n).left;
            } else {
                at = self.l(n).right;
            }
        }
        found
    }

    /// Kernel: rb_link_node() + rb_insert_color(): `node` becomes a red leaf where `at`
    /// ended (which must not have found an equal key), then the tree is rebalanced.
    pub(crate) fn insert(&mut self, tree: usize, node: usize, at: Search) {
        assert!(at.found.is_none(), "inserting over an equal key");
        if self.links.len() <= node {
            self.links.resize(node + 1, Node::default());
        }
        *self.l_mut(node) = Node {
            parent: raw(at.parent),
            left: NIL,
            right: NIL,
            red: true,
        };
        match at.parent {
            None => self.roots[tree] = raw(Some(node)),
            Some(p) if at.right => self.l_mut(p).right = raw(Some(node)),
            Some(p) => self.l_mut(p).left = raw(Some(node)),
        }
        self.insert_color(tree, node);
    }

    /// Replaces `old` by `new` in `parent`'s child slot (or as the root).
    fn change_child(&mut self, tree: usize, old: usize, new: Option<usize>, parent: Option<usize>) {
        match parent {
            Some(p) if self.l(p).left == Some(old) => self.l_mut(p).left = raw(new),
            Some(p) => self.l_mut(p).right = raw(new),
            None => self.roots[tree] = raw(new),
        }
    }

    /// Kernel: __rb_rotate_set_parents(): `new` takes `old`'s place and colour, `old` goes
    /// under `new` with colour `red`.
    fn rotate_set_parents(&mut self, tree: usize, old: usize, new: usize, red: bool) {
        let o = self.l(old);
        self.l_mut(new).parent = raw(o.parent);
        self.l_mut(new).red = o.red;
        self.l_mut(old).parent = raw(Some(new));
        self.l_mut(old).red = red;
        self.change_child(tree, old, Some(new), o.parent);
    }

    fn set_parent(&mut self, n: Option<usize>, parent: usize) {
        if let Some(n) = n {
            self.l_mut(n).parent = raw(Some(parent));
        }
    }

    fn set_parent_black(&mut self, n: Option<usize>, parent: usize) {
        if let Some(n) = n {
            let l = self.l_mut(n);
            l.parent = parent as u32;
            l.red = false;
        }
    }

    /// Kernel: __rb_insert().
    fn insert_color(&mut self, tree: usize, mut node: usize) {
        loop {
            let Some(parent) = self.l(node).parent else {
                self.l_mut(node).red = false;
                return;
            };
            if !self.l(parent).red {
                return;
            }
            let gparent = self.l(parent).parent.expect("a red node has a parent");
            let left_side = self.l(gparent).right != Some(parent);
            let uncle = if left_side {
                self.l(gparent).right
            } else {
                self.l(gparent).left
            };
            if self.is_red(uncle) {
                // Case 1: recolour and move up.
                self.set_parent_black(uncle, gparent);
                self.set_parent_black(Some(parent), gparent);
                self.l_mut(gparent).red = true;
                node = gparent;
                continue;
            }
            self.insert_rotate(tree, node, parent, gparent, left_side);
            return;
        }
    }

    /// Cases 2 and 3 of __rb_insert(), `left_side` when `parent` is `gparent`'s left child.
    fn insert_rotate(
        &mut self,
        tree: usize,
        node: usize,
        mut parent: usize,
        gparent: usize,
        left_side: bool,
    ) {
        let inner = if left_side {
            self.l(parent).right
        } else {
            self.l(parent).left
        };
        let mut tmp;
        if inner == Some(node) {
            // Case 2: rotate the inner grandchild up over its parent.
            if left_side {
                tmp = self.l(node).left;
                self.l_mut(parent).right = raw(tmp);
                self.l_mut(node).left = raw(Some(parent));
            } else {
                tmp = self.l(node).right;
                self.l_mut(parent).left = raw(tmp);
                self.l_mut(node).right = raw(Some(parent));
            }
            self.set_parent_black(tmp, parent);
            self.l_mut(parent).parent = raw(Some(node));
            self.l_mut(parent).red = true;
            parent = node;
        }
        // Case 3: rotate the parent up over the grandparent.
        if left_side {
            tmp = self.l(parent).right;
            self.l_mut(gparent).left = raw(tmp);
            self.l_mut(parent).right = raw(Some(gparent));
        } else {
            tmp = self.l(parent).left;
            self.l_mut(gparent).right = raw(tmp);
            self.l_mut(parent).left = raw(Some(gparent));
        }
        self.set_parent_black(tmp, gparent);
        self.rotate_set_parents(tree, gparent, parent, true);
    }

    /// Kernel: rb_erase(): unlink `node` (replaced by its successor when it has two
    /// children), then rebalance.
    pub(crate) fn erase(&mut self, tree: usize, node: usize) {
        let n = self.l(node);
        let rebalance;
        match (n.left, n.right) {
            (None, child) => {
                self.change_child(tree, node, child, n.parent);
                if let Some(c) = child {
                    self.l_mut(c).parent = raw(n.parent);
                    self.l_mut(c).red = n.red;
                    rebalance = None;
                } else {
                    rebalance = if n.red { None } else { n.parent };
                }
            }
            (Some(left), None) => {
                self.l_mut(left).parent = raw(n.parent);
                self.l_mut(left).red = n.red;
                self.change_child(tree, node, Some(left), n.parent);
                rebalance = None;
            }
            (Some(left), Some(child)) => {
                rebalance = self.erase_two_children(tree, node, n, left, child);
            }
        }
        *self.l_mut(node) = Node::default();
        if let Some(parent) = rebalance {
            self.erase_color(tree, parent);
        }
    }

    /// __rb_erase_augmented()'s case 2/3: the successor takes `node`'s place and colour.
    fn erase_two_children(
        &mut self,
        tree: usize,
        node: usize,
        n: Links,
        left: usize,
        child: usize,
    ) -> Option<usize> {
        let successor;
        let parent;
        let child2;
        match self.l(child).left {
            None => {
                // Case 2: the successor is the right child.
                successor = child;
                parent = child;
                child2 = self.l(successor).right;
            }
            Some(first) => {
                // Case 3: the successor is the leftmost node under the right child.
                let (mut p, mut cur) = (child, first);
                while let Some(next) = self.l(cur).left {
                    p = cur;
                    cur = next;
                }
                successor = cur;
                parent = p;
                child2 = self.l(successor).right;
                self.l_mut(parent).left = raw(child2);
                self.l_mut(successor).right = raw(Some(child));
                self.l_mut(child).parent = raw(Some(successor));
            }
        }
        self.l_mut(successor).left = raw(Some(left));
        self.l_mut(left).parent = raw(Some(successor));
        self.change_child(tree, node, Some(successor), n.parent);
        let successor_was_red = self.l(successor).red;
        self.l_mut(successor).parent = raw(n.parent);
        self.l_mut(successor).red = n.red;
        if child2.is_some() {
            self.set_parent_black(child2, parent);
            None
        } else if successor_was_red {
            None
        } else {
            Some(parent)
        }
    }

    /// Kernel: ____rb_erase_color(): restore the black height below `parent`, whose
    /// `node` side (initially the emptied side) is one black short.
    fn erase_color(&mut self, tree: usize, mut parent: usize) {
        let mut node: Option<usize> = None;
        loop {
            let node_is_left = self.l(parent).right != node;
            let sibling = if node_is_left {
                self.l(parent).right
            } else {
                self.l(parent).left
            };
            let mut sibling = sibling.expect("a short side has a sibling");
            if self.l(sibling).red {
                // Case 1: rotate the red sibling up.
                let inner = self.inner(sibling, node_is_left);
                self.set_outer_child(parent, inner, node_is_left);
                self.set_inner_child(sibling, Some(parent), node_is_left);
                self.set_parent_black(inner, parent);
                self.rotate_set_parents(tree, parent, sibling, true);
                sibling = inner.expect("a red sibling has black children");
            }
            let outer = self.outer(sibling, node_is_left);
            if !self.is_red(outer) {
                let inner = self.inner(sibling, node_is_left);
                if !self.is_red(inner) {
                    // Case 2: recolour the sibling, move up if the parent was black.
                    self.l_mut(sibling).parent = raw(Some(parent));
                    self.l_mut(sibling).red = true;
                    if self.l(parent).red {
                        self.l_mut(parent).red = false;
                    } else {
                        node = Some(parent);
                        if let Some(p) = self.l(parent).parent {
                            parent = p;
                            continue;
                        }
                    }
                    return;
                }
                // Case 3: rotate the sibling's red inner child up over the sibling.
                let inner = inner.expect("checked red");
                let tmp1 = self.outer(inner, node_is_left);
                self.set_inner_child(sibling, tmp1, node_is_left);
                self.set_outer_child(inner, Some(sibling), node_is_left);
                self.set_outer_child(parent, Some(inner), node_is_left);
                self.set_parent_black(tmp1, sibling);
                sibling = inner;
            }
            self.erase_case4(tree, parent, sibling, node_is_left);
            return;
        }
    }

    /// Case 4 of ____rb_erase_color(): rotate the sibling up over the parent and recolour.
    fn erase_case4(&mut self, tree: usize, parent: usize, sibling: usize, node_is_left: bool) {
        let outer = self.outer(sibling, node_is_left);
        let tmp2 = self.inner(sibling, node_is_left);
        self.set_outer_child(parent, tmp2, node_is_left);
        self.set_inner_child(sibling, Some(parent), node_is_left);
        self.set_parent_black(outer, sibling);
        self.set_parent(tmp2, parent);
        self.rotate_set_parents(tree, parent, sibling, false);
    }

    /// The child of `n` on the side facing the short node (left when the node is a left
    /// child), and the one away from it.
    fn inner(&self, n: usize, node_is_left: bool) -> Option<usize> {
        if node_is_left {
            self.l(n).left
        } else {
            self.l(n).right
        }
    }

    fn outer(&self, n: usize, node_is_left: bool) -> Option<usize> {
        if node_is_left {
            self.l(n).right
        } else {
            self.l(n).left
        }
    }

    fn set_inner_child(&mut self, n: usize, c: Option<usize>, node_is_left: bool) {
        if node_is_left {
            self.l_mut(n).left = raw(c);
        } else {
            self.l_mut(n).right = raw(c);
        }
    }

    fn set_outer_child(&mut self, n: usize, c: Option<usize>, node_is_left: bool) {
        if node_is_left {
            self.l_mut(n).right = raw(c);
        } else {
            self.l_mut(n).left = raw(c);
        }
    }

    /// Whether `n` is `tree`'s only node: erasing it and linking it again (any key) leaves
    /// the tree as it was.
    pub(crate) fn is_lone_root(&self, tree: usize, n: usize) -> bool {
        // The stored links read directly: CFQ asks at every charge (issue 34).
        self.roots[tree] as usize == n && {
            let node = &self.links[n];
            node.left == NIL && node.right == NIL
        }
    }

    /// Whether `n` is red (a node in no tree reads black). Kernel: `rb_is_red()`.
    pub(crate) fn red(&self, n: usize) -> bool {
        self.l(n).red
    }

    /// The left child of `n` (BFQ's augmented walk reads the shape). Kernel: `rb_left`.
    pub(crate) fn left(&self, n: usize) -> Option<usize> {
        self.l(n).left
    }

    /// The right child of `n`. Kernel: `rb_right`.
    pub(crate) fn right(&self, n: usize) -> Option<usize> {
        self.l(n).right
    }

    /// The parent of `n` (none for a root). Kernel: rb_parent().
    pub(crate) fn parent(&self, n: usize) -> Option<usize> {
        self.l(n).parent
    }

    /// Whether erasing `n` and linking it again at the same place (same parent, same side)
    /// leaves the tree exactly as it was: `n` is a leaf, and red (rb_erase() of a red leaf
    /// rebalances nothing, and a red leaf linked under its parent, black since `n` was red,
    /// needs no fix-up) or the tree's only node (it goes back as a black root).
    pub(crate) fn relink_is_identity(&self, n: usize) -> bool {
        let l = self.l(n);
        l.left.is_none() && l.right.is_none() && (l.red || l.parent.is_none())
    }

    /// Kernel: rb_first(): the leftmost node of `tree`.
    // The stored links read directly: CFQ takes the leftmost group at every queue switch.
    #[inline]
    pub(crate) fn first(&self, tree: usize) -> Option<usize> {
        let mut at = self.roots[tree];
        if at == NIL {
            return None;
        }
        loop {
            let left = self.links[at as usize].left;
            if left == NIL {
                return Some(at as usize);
            }
            at = left;
        }
    }

    /// Kernel: rb_last(): the rightmost node of `tree`.
    pub(crate) fn last(&self, tree: usize) -> Option<usize> {
        let mut at = opt(self.roots[tree])?;
        while let Some(r) = self.l(at).right {
            at = r;
        }
        Some(at)
    }

    /// Kernel: rb_next(): the in-order successor of `n`, a node in a tree. Reads the stored
    /// links directly: mq-deadline takes it at every dispatch and most inserts.
    #[inline]
    pub(crate) fn next(&self, n: usize) -> Option<usize> {
        let links = &self.links;
        let mut at = links[n].right;
        if at != NIL {
            loop {
                let left = links[at as usize].left;
                if left == NIL {
                    return opt(at);
                }
                at = left;
            }
        }
        let mut child = n as u32;
        loop {
            let parent = links[child as usize].parent;
            if parent == NIL || links[parent as usize].right != child {
                return opt(parent);
            }
            child = parent;
        }
    }

    /// Kernel: rb_prev(): the in-order predecessor of `n`, a node in a tree.
    pub(crate) fn prev(&self, n: usize) -> Option<usize> {
        let links = &self.links;
        let mut at = links[n].left;
        if at != NIL {
            loop {
                let right = links[at as usize].right;
                if right == NIL {
                    return opt(at);
                }
                at = right;
            }
        }
        let mut child = n as u32;
        loop {
            let parent = links[child as usize].parent;
            if parent == NIL || links[parent as usize].left != child {
                return opt(parent);
            }
            child = parent;
        }
    }

    /// The nodes of `tree` in order.
    pub(crate) fn in_order(&self, tree: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = self.first(tree);
        while let Some(n) = at {
            out.push(n);
            at = self.next(n);
        }
        out
    }

    /// O(n) check of the red-black rules and the parent links; returns the black height.
    pub(crate) fn check(&self, tree: usize) -> usize {
        let root = opt(self.roots[tree]);
        if let Some(r) = root {
            assert!(self.l(r).parent.is_none(), "root has a parent");
            assert!(!self.l(r).red, "root is red");
        }
        self.check_below(root)
    }

    fn check_below(&self, n: Option<usize>) -> usize {
        let Some(n) = n else { return 1 };
        let l = self.l(n);
        for c in [l.left, l.right].into_iter().flatten() {
            assert_eq!(
                self.l(c).parent,
                Some(n),
                "child {c} does not point back to {n}"
            );
            assert!(
                !(l.red && self.l(c).red),
                "red node {n} has a red child {c}"
            );
        }
        let (hl, hr) = (self.check_below(l.left), self.check_below(l.right));
        assert_eq!(hl, hr, "black heights differ under {n}");
        hl + usize::from(!l.red)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn insert_key(f: &mut RbForest, keys: &[u64], node: usize) -> bool {
        let at = f.search(0, keys[node], |n| keys[n]);
        if at.found.is_some() {
            return false;
        }
        f.insert(0, node, at);
        true
    }

    /// Only a root without children is lone, and erasing and re-linking it changes nothing.
    #[test]
    fn a_lone_root_relinks_to_itself() {
        let keys = [10u64, 20];
        let mut f = RbForest::new(1);
        insert_key(&mut f, &keys, 0);
        assert!(f.is_lone_root(0, 0));
        let before = f.clone();
        f.erase(0, 0);
        insert_key(&mut f, &[99, 20], 0);
        assert_eq!(
            (f.root(0), f.left(0), f.right(0), f.red(0)),
            (before.root(0), None, None, false)
        );
        insert_key(&mut f, &keys, 1);
        assert!(!f.is_lone_root(0, 0) && !f.is_lone_root(0, 1));
    }

    /// Ascending insertions rotate as the kernel's tree does: 1..=3 puts 2 at the root,
    /// and 1..=10 gives root 4 with 2 and 6 below it (the classic algorithm's shape).
    #[test]
    fn ascending_insertions_rotate_left() {
        let keys: Vec<u64> = (0..=10).collect();
        let mut f = RbForest::new(1);
        for n in 1..=3 {
            insert_key(&mut f, &keys, n);
        }
        assert_eq!(f.root(0), Some(2));
        for n in 4..=10 {
            insert_key(&mut f, &keys, n);
        }
        assert_eq!(f.root(0), Some(4));
        assert_eq!((f.l(4).left, f.l(4).right), (Some(2), Some(6)));
        assert_eq!((f.l(6).right, f.l(8).right), (Some(8), Some(9)));
        assert_eq!(f.check(0), 4);
    }

    proptest! {
        /// Appending below the rightmost node links exactly where the full descent does,
        /// for any tree and any key at least the largest (equal keys go right).
        #[test]
        fn after_last_is_where_the_descent_ends(
            keys in proptest::collection::vec(0u64..64, 1..200),
            extra in 0u64..8,
        ) {
            let mut keys = keys;
            let mut f = RbForest::new(1);
            let mut max = 0;
            for node in 0..keys.len() {
                f.insert(0, node, f.search_for_insert(0, keys[node], |n| keys[n]));
                max = max.max(keys[node]);
            }
            keys.push(max + extra);
            let node = keys.len() - 1;
            let last = f.last(0).expect("a non-empty tree");
            let descent = f.search_for_insert(0, keys[node], |n| keys[n]);
            prop_assert_eq!(f.after_last(last), descent);
        }
    }

    /// The search ends on a leaf that is not always the nearer neighbour: after 10, 20, 30
    /// (root 20), a search for 16 ends at 10, although 20 is nearer.
    #[test]
    fn search_ends_at_last_node_of_path() {
        let keys = [10, 20, 30];
        let mut f = RbForest::new(1);
        for n in 0..3 {
            insert_key(&mut f, &keys, n);
        }
        let s = f.search(0, 16, |n| keys[n]);
        assert_eq!((s.found, s.parent, s.right), (None, Some(0), true));
        assert_eq!(f.next(0), Some(1));
        assert_eq!(f.prev(1), Some(0));
    }

    proptest! {
        /// Against a sorted model: any sequence of inserts and erases keeps the tree a valid
        /// red-black tree holding exactly the model's keys in order.
        #[test]
        fn random_inserts_and_erases_keep_the_rules(
            ops in prop::collection::vec((any::<bool>(), 0usize..40), 1..300),
        ) {
            let keys: Vec<u64> = (0..40).map(|n| (n as u64 * 7919) % 101).collect();
            let mut f = RbForest::new(1);
            let mut model = std::collections::BTreeMap::new();
            for (add, node) in ops {
                let present = model.get(&keys[node]) == Some(&node);
                if add && !model.contains_key(&keys[node]) {
                    prop_assert!(insert_key(&mut f, &keys, node));
                    model.insert(keys[node], node);
                } else if !add && present {
                    f.erase(0, node);
                    model.remove(&keys[node]);
                }
                f.check(0);
                let order: Vec<usize> = model.values().copied().collect();
                prop_assert_eq!(f.in_order(0), order);
            }
        }

        /// CFQ's service and group trees (issue 34) replaced `BTreeMap`s keyed by (key,
        /// insertion sequence): with `search_for_insert` (equal keys go right) the tree holds
        /// the map's order, ties by insertion, and `first`/`last` are the map's ends.
        #[test]
        fn equal_keys_keep_insertion_order_as_keyed_map(
            ops in prop::collection::vec((any::<bool>(), 0usize..40), 1..120),
        ) {
            let keys: Vec<u64> = (0..40).map(|n| n as u64 % 5).collect();
            let mut f = RbForest::new(1);
            let mut model = std::collections::BTreeMap::new();
            let mut seq_of = [None; 40];
            for (seq, (add, node)) in ops.into_iter().enumerate() {
                if add && seq_of[node].is_none() {
                    let at = f.search_for_insert(0, keys[node], |n| keys[n]);
                    f.insert(0, node, at);
                    model.insert((keys[node], seq), node);
                    seq_of[node] = Some(seq);
                } else if !add {
                    if let Some(s) = seq_of[node].take() {
                        f.erase(0, node);
                        model.remove(&(keys[node], s));
                    }
                }
                let order: Vec<usize> = model.values().copied().collect();
                prop_assert_eq!(f.in_order(0), order.clone());
                prop_assert_eq!(f.first(0), order.first().copied());
                prop_assert_eq!(f.last(0), order.last().copied());
            }
        }
    }
}
