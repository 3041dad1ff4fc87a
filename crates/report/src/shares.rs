//! Each cgroup's share of the bytes moved, beside the share its weight entitles it to: the
//! number a weighted-sharing study reads first. Filled per job clone by any driver (or from
//! fio's own JSON), written into the `iosched` object as `cgroups`.

use serde_json::{json, Value};

/// cgroup v1 defaults: a new group's `blkio.weight`, and the root's.
const DEFAULT_WEIGHT: u32 = 500;
const ROOT_WEIGHT: u32 = 1000;

/// Whether `scheduler` shares the device by cgroup weight, so that a weight-ideal share means
/// something beside its result: CFQ, BFQ and adaptive do; noop, deadline, kyber and none never read a
/// weight. The one place `compare`, `plot` and `sweep` ask.
pub fn aims_for_weights(scheduler: &str) -> bool {
    matches!(scheduler, "cfq" | "bfq" | "adaptive")
}

/// Bytes per cgroup, in order of first mention.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CgroupShares {
    groups: Vec<(String, u32, u64)>,
    /// Bytes each group (by path) was owed while backlogged, when the driver measured it
    /// (`iosched_driver::backlog`); empty from a kernel run.
    owed: Vec<(String, u64)>,
}

impl CgroupShares {
    pub fn new() -> CgroupShares {
        CgroupShares::default()
    }

    /// Adds one clone's bytes to its cgroup `path` (`/`, `/a/b`); `weight` is the job's
    /// `cgroup_weight`, if it set one.
    pub fn add(&mut self, path: &str, weight: Option<u32>, bytes: u64) {
        let weight = weight.unwrap_or(if path == "/" {
            ROOT_WEIGHT
        } else {
            DEFAULT_WEIGHT
        });
        match self.groups.iter_mut().find(|(p, _, _)| p == path) {
            Some(group) => group.2 += bytes,
            None => self.groups.push((path.to_string(), weight, bytes)),
        }
    }

    /// The shares of a finished run: clone `i` ran job `clone_jobs[i]` of `jobs` in cgroup
    /// `clone_cgroups[i]`.
    pub fn of_clones(
        clones: &[crate::stats::JobStats],
        clone_jobs: &[usize],
        clone_cgroups: &[String],
        jobs: &iosched_workload::JobSet,
    ) -> CgroupShares {
        let mut shares = CgroupShares::new();
        for (clone, stats) in clones.iter().enumerate() {
            let spec = &jobs.jobs[clone_jobs[clone]];
            let bytes: u64 = stats.dirs.iter().map(|d| d.io_bytes).sum();
            shares.add(&clone_cgroups[clone], spec.cgroup_weight, bytes);
        }
        shares
    }

    /// Records what each group (by path) was owed while backlogged: `to_json` then adds
    /// `backlogged_ideal_share`, its part of all bytes owed.
    pub fn set_backlog_owed(&mut self, owed: &[(String, f64)]) {
        self.owed = owed
            .iter()
            .map(|(path, bytes)| (path.clone(), bytes.round() as u64))
            .collect();
    }

    /// A group's share of the bytes owed while backlogged, if measured.
    fn backlogged_ideal(&self, path: &str) -> Option<f64> {
        let total: u64 = self.owed.iter().map(|(_, b)| b).sum();
        let owed = self.owed.iter().find(|(p, _)| p == path)?.1;
        (total > 0).then(|| owed as f64 / total as f64)
    }

    /// A block for the normal output after fio's disk stats, when any job named a cgroup
    /// (one line per group: weight, bytes, share and the weight-ideal share); else empty.
    pub fn text(&self) -> String {
        if self.groups.iter().all(|(path, _, _)| path == "/") {
            return String::new();
        }
        let total: u64 = self.groups.iter().map(|g| g.2).sum();
        let weights: u64 = self.groups.iter().map(|g| u64::from(g.1)).sum();
        let width = self.groups.iter().map(|g| g.0.len()).max().unwrap_or(1);
        let mut out =
            String::from("\nCgroup shares (bytes moved; ideal = weight / sum of weights):\n");
        for (path, weight, bytes) in &self.groups {
            out.push_str(&format!(
                "  {path:<width$}  weight={weight:<4}  io={:.1}MiB  share={:.1}%  ideal={:.1}%\n",
                *bytes as f64 / f64::from(1 << 20),
                100.0 * *bytes as f64 / total.max(1) as f64,
                100.0 * f64::from(*weight) / weights.max(1) as f64,
            ));
        }
        out
    }

    /// `[{path, weight, io_bytes, share, ideal_share}]`, shares as fractions of 1.
    pub fn to_json(&self) -> Value {
        let total: u64 = self.groups.iter().map(|g| g.2).sum();
        let weights: u64 = self.groups.iter().map(|g| u64::from(g.1)).sum();
        Value::Array(
            self.groups
                .iter()
                .map(|(path, weight, bytes)| {
                    let mut group = json!({
                        "path": path,
                        "weight": weight,
                        "io_bytes": bytes,
                        "share": *bytes as f64 / total.max(1) as f64,
                        "ideal_share": f64::from(*weight) / weights.max(1) as f64,
                    });
                    if let Some(ideal) = self.backlogged_ideal(path) {
                        group["backlogged_ideal_share"] = ideal.into();
                    }
                    group
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The normal-output block lists each group with its share and ideal; a run with only
    /// the root group prints nothing.
    #[test]
    fn text_lists_groups_only_when_there_are_some() {
        let mut shares = CgroupShares::new();
        shares.add("/", None, 1 << 20);
        assert_eq!(shares.text(), "");
        shares.add("/a", Some(1000), 3 << 20);
        let text = shares.text();
        assert!(
            text.contains("/a  weight=1000  io=3.0MiB  share=75.0%  ideal=50.0%"),
            "{text}"
        );
        assert!(
            text.contains("/   weight=1000  io=1.0MiB  share=25.0%"),
            "{text}"
        );
    }

    #[test]
    fn shares_sum_per_group_and_follow_weights() {
        let mut shares = CgroupShares::new();
        shares.add("/a", Some(900), 300);
        shares.add("/a", Some(900), 300);
        shares.add("/b", None, 400);
        let json = shares.to_json();
        assert_eq!(json[0]["io_bytes"], 600);
        assert_eq!(json[0]["share"], 0.6);
        // 900 against the default 500.
        assert!((json[1]["ideal_share"].as_f64().unwrap() - 500.0 / 1400.0).abs() < 1e-12);
    }

    /// The ideal while backlogged is each group's part of the bytes owed, present only once
    /// measured: /a owed 300 of 400 bytes has 0.75 beside its weight's 0.5.
    #[test]
    fn backlogged_ideal_follows_the_bytes_owed() {
        let mut shares = CgroupShares::new();
        shares.add("/a", Some(500), 300);
        shares.add("/b", Some(500), 100);
        assert!(shares.to_json()[0].get("backlogged_ideal_share").is_none());
        shares.set_backlog_owed(&[
            ("/".into(), 0.0),
            ("/a".into(), 300.0),
            ("/b".into(), 100.0),
        ]);
        let json = shares.to_json();
        assert_eq!(json[0]["backlogged_ideal_share"], 0.75);
        assert_eq!(json[0]["ideal_share"], 0.5);
    }
}
