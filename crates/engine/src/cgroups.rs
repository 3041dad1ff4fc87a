//! Cgroup paths of the jobs interned into the ids the scheduler works with (`a/b` creates `a`
//! too). These are the scheduler's own groups: the engine does not move itself into kernel
//! cgroups, since every job runs in the one event-loop thread.

use iosched_core::{CgroupId, CgroupSpec};

/// cgroup v1 `blkio.weight` default for a new group.
pub const DEFAULT_WEIGHT: u32 = 500;
/// The root group's weight.
pub const ROOT_WEIGHT: u32 = 1000;

/// The groups named by the jobs; index = id, entry 0 is the root with path "".
#[derive(Clone, Debug)]
pub struct Cgroups {
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

    /// The id of `path`, creating it and its ancestors.
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

    /// Sets `blkio.weight` (and the leaf weight, as writing `blkio.weight` does).
    pub fn set_weight(&mut self, id: CgroupId, weight: u32) {
        let spec = &mut self.groups[id.0 as usize].1;
        spec.weight = weight;
        spec.leaf_weight = weight;
    }

    /// `/a/b` path of a group.
    pub fn path(&self, id: CgroupId) -> String {
        format!("/{}", self.groups[id.0 as usize].0)
    }

    /// Every group, parents first.
    pub fn specs(&self) -> impl Iterator<Item = &CgroupSpec> {
        self.groups.iter().map(|(_, spec)| spec)
    }
}
