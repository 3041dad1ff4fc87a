//! Cgroup paths interned into ids, with parents created on first mention (`a/b` creates `a`).

use iosched_core::{CgroupId, CgroupSpec};

/// cgroup v1 `blkio.weight` default for a new group.
pub const DEFAULT_WEIGHT: u32 = 500;
/// The root group's weight (CFQ doubles the default for root).
pub const ROOT_WEIGHT: u32 = 1000;

/// The simulated blkio hierarchy.
#[derive(Clone, Debug)]
pub struct Cgroups {
    /// Index = `CgroupId.0`; entry 0 is the root, path "".
    groups: Vec<(String, CgroupSpec)>,
}

impl Default for Cgroups {
    fn default() -> Self {
        Cgroups::new()
    }
}

impl Cgroups {
    pub fn new() -> Cgroups {
        Cgroups {
            groups: vec![(
                String::new(),
                CgroupSpec {
                    id: CgroupId::ROOT,
                    parent: CgroupId::ROOT,
                    weight: ROOT_WEIGHT,
                    leaf_weight: ROOT_WEIGHT,
                },
            )],
        }
    }

    /// The id of `path` (`a/b`, no leading slash; empty = root), creating it and its
    /// ancestors as needed.
    pub fn intern(&mut self, path: &str) -> CgroupId {
        let mut parent = CgroupId::ROOT;
        let mut prefix = String::new();
        for component in path.split('/').filter(|c| !c.is_empty()) {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(component);
            parent = match self.groups.iter().position(|(p, _)| *p == prefix) {
                Some(index) => CgroupId(index as u32),
                None => {
                    let id = CgroupId(self.groups.len() as u32);
                    self.groups.push((
                        prefix.clone(),
                        CgroupSpec {
                            id,
                            parent,
                            weight: DEFAULT_WEIGHT,
                            leaf_weight: DEFAULT_WEIGHT,
                        },
                    ));
                    id
                }
            };
        }
        parent
    }

    /// Sets a group's `blkio.weight` (and its leaf weight, as writing `blkio.weight` does).
    pub fn set_weight(&mut self, id: CgroupId, weight: u32) {
        let spec = &mut self.groups[id.0 as usize].1;
        spec.weight = weight;
        spec.leaf_weight = weight;
    }

    /// `/a/b` style path of a group, as traces print it.
    pub fn path(&self, id: CgroupId) -> String {
        format!("/{}", self.groups[id.0 as usize].0)
    }

    /// All groups, parents before children.
    pub fn specs(&self) -> impl Iterator<Item = &CgroupSpec> {
        self.groups.iter().map(|(_, spec)| spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_paths_create_parents_once() {
        let mut cgroups = Cgroups::new();
        let b = cgroups.intern("a/b");
        let a = cgroups.intern("a");
        assert_eq!(cgroups.intern("/a/b/"), b);
        let specs: Vec<_> = cgroups.specs().copied().collect();
        assert_eq!(specs.len(), 3);
        assert_eq!(specs[b.0 as usize].parent, a);
        assert_eq!(cgroups.path(b), "/a/b");
    }
}
