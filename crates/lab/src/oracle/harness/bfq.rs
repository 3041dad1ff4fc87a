//! Core's BFQ behind the oracle's elevator operations, printing what `oracle/driver/bfq.c`
//! and the BFQ shim print for the kernel's: `L` lines for `bfq_log()`/`bfq_log_bfqq()` (the
//! queue's cgroup path, or `-`), `H` lines for the idle slice timer, `S` lines for a
//! cgroup's `bfq.weight`.
//!
//! What the kernel's blkcg does around BFQ, as the shim does it: a cgroup's group is created
//! at the first bio from it, ancestors first, with the weight its `bfq.weight` file holds
//! then (`bfq_pd_init()`); a write to that file sets the default for groups still to come
//! and the weight of the one that exists (`bfq_io_set_weight_legacy()`). A process's exit
//! exits its io context (`bfq_exit_icq()`); a process that issues again after its exit gets
//! a new one.

use std::fmt::Write as _;

use iosched_core::bfq::{Bfq, TimerEvent};
use iosched_core::{
    CgroupId, CgroupSpec, DeviceInfo, Dispatch, Elevator, IoContextId, MessageSubject, Request,
    RequestId, Time, Trace, TunableError,
};

use super::sched::{BioMerged, OracleSched};
use crate::oracle::scenario::Scenario;

/// Kernel: BFQ_MIN_WEIGHT, BFQ_MAX_WEIGHT (what bfq.weight accepts).
const WEIGHT_RANGE: std::ops::RangeInclusive<u64> = 1..=1000;
/// Kernel: CGROUP_WEIGHT_DFL.
const DEFAULT_WEIGHT: u32 = 100;

/// One scenario cgroup: its path, parent, `bfq.weight` and whether its group exists yet.
struct Group {
    path: String,
    parent: CgroupId,
    weight: u32,
    created: bool,
}

/// Core's BFQ with the cgroups of one scenario.
pub(super) struct BfqOracle {
    bfq: Bfq,
    /// Index = CgroupId; 0 is the root.
    groups: Vec<Group>,
    timer: Hrtimer,
}

/// The idle slice timer as the shim's hrtimer sees it: a generation bumped by every arm and
/// cancel, and the arms not yet handed to the driver.
#[derive(Default)]
struct Hrtimer {
    generation: u64,
    arms: Vec<(Time, u64)>,
}

/// The cgroup id of `path` ("" or "/" the root) among the scenario's cgroups.
pub(super) fn cgroup_id(sc: &Scenario, path: &str) -> CgroupId {
    let at = sc.cgroups.iter().position(|g| g.path == path);
    CgroupId(at.map_or(0, |i| i as u32 + 1))
}

/// Kernel: bfq_io_set_weight() as the shim runs it: "W" or "default W" in 1..=1000 sets the
/// weight; anything else is a per-device weight, which the oracle refuses.
fn parse_weight(value: &str) -> Option<u64> {
    let v = value.trim();
    let v = v.strip_prefix("default ").unwrap_or(v);
    let digits = v.strip_prefix('+').unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // strtoull saturates; anything that large is out of range anyway.
    let w = digits.parse::<u64>().unwrap_or(u64::MAX);
    WEIGHT_RANGE.contains(&w).then_some(w)
}

/// Builds core's BFQ for `sc`: its device, tags, cgroups (weights written before any I/O, as
/// `shim_sched_ready()` writes them) and the processes' nice values.
pub(super) fn new(sc: &Scenario, nr_requests: u32) -> Box<dyn OracleSched> {
    let device = DeviceInfo {
        rotational: sc.device.rotational,
        queue_depth: sc.device.depth,
    };
    let mut bfq = Bfq::new(device, 0);
    bfq.max_sectors = sc.device.max_sectors;
    bfq.timer_delivered = true;
    bfq.depth_updated(nr_requests);
    for p in &sc.procs {
        bfq.set_nice(p.pid, p.nice);
    }
    let mut groups = vec![Group {
        path: "/".into(),
        parent: CgroupId::ROOT,
        weight: DEFAULT_WEIGHT,
        created: true,
    }];
    for g in &sc.cgroups {
        let parent = cgroup_id(sc, &g.path[..g.path.rfind('/').unwrap_or(0)]);
        let weight = match g.weight {
            0 => DEFAULT_WEIGHT,
            w if WEIGHT_RANGE.contains(&u64::from(w)) => w,
            _ => DEFAULT_WEIGHT,
        };
        groups.push(Group {
            path: g.path.clone(),
            parent,
            weight,
            created: false,
        });
    }
    Box::new(BfqOracle {
        bfq,
        groups,
        timer: Hrtimer::default(),
    })
}

/// BFQ's messages and idle-timer events as the oracle's lines.
struct Lines<'a> {
    out: &'a mut String,
    groups: &'a [Group],
    timer: &'a mut Hrtimer,
}

impl Trace for Lines<'_> {
    fn enabled(&self) -> bool {
        true
    }
    fn message(&mut self, now: Time, subject: MessageSubject, text: &str) {
        let cgroup = match subject {
            MessageSubject::Group(id) => self.groups[id.0 as usize].path.as_str(),
            _ => "-",
        };
        let _ = writeln!(self.out, "L {now} {cgroup} {text}");
    }
    fn bio_merged(&mut self, now: Time, bio: RequestId, into: RequestId, front: bool) {
        let side = if front { 'F' } else { 'B' };
        let _ = writeln!(self.out, "M {now} {} {} {side}", bio.0, into.0);
    }
    fn requests_merged(&mut self, now: Time, absorbed: RequestId, into: RequestId) {
        let _ = writeln!(self.out, "A {now} {} {}", absorbed.0, into.0);
    }
    fn timer_event(&mut self, now: Time, event: TimerEvent) {
        let t = &mut *self.timer;
        let _ = match event {
            TimerEvent::Arm(at) => {
                t.generation += 1;
                t.arms.push((at, t.generation));
                writeln!(self.out, "H {now} arm {at}")
            }
            TimerEvent::Cancel => {
                t.generation += 1;
                writeln!(self.out, "H {now} cancel")
            }
            TimerEvent::Fire => writeln!(self.out, "H {now} fire"),
        };
    }
}

impl BfqOracle {
    /// Kernel: blkg_lookup_create() at a bio's association: the group of `id` and its
    /// missing ancestors, top down, each with its cgroup's weight now.
    fn ensure_group(&mut self, id: CgroupId, now: Time) {
        let g = &self.groups[id.0 as usize];
        if g.created {
            return;
        }
        let parent = g.parent;
        self.ensure_group(parent, now);
        let g = &mut self.groups[id.0 as usize];
        g.created = true;
        let spec = CgroupSpec {
            id,
            parent,
            weight: g.weight,
            leaf_weight: g.weight,
        };
        self.bfq.add_cgroup(spec, now);
    }

    fn lines<'a>(out: &'a mut String, groups: &'a [Group], timer: &'a mut Hrtimer) -> Lines<'a> {
        Lines { out, groups, timer }
    }
}

impl OracleSched for BfqOracle {
    fn bio_merge(&mut self, bio: &Request) -> Option<BioMerged> {
        self.bio_merge_traced(bio, 0, &mut String::new())
    }
    fn bio_merge_traced(
        &mut self,
        bio: &Request,
        now: Time,
        out: &mut String,
    ) -> Option<BioMerged> {
        // The bio is associated with its cgroup's blkg when it is made.
        self.ensure_group(bio.cgroup, now);
        let mut lines = Self::lines(out, &self.groups, &mut self.timer);
        let m = self.bfq.bio_merge(bio, now, &mut lines)?;
        Some(BioMerged {
            into: m.into,
            front: m.front,
            then: m.then,
        })
    }
    fn prints_merges(&self) -> bool {
        true
    }
    fn limit_depth(&self, _bio: &Request) -> Option<u32> {
        unreachable!("the harness asks BFQ through limit_depth_traced")
    }
    fn limit_depth_traced(&mut self, bio: &Request, now: Time, out: &mut String) -> Option<u32> {
        self.ensure_group(bio.cgroup, now);
        let mut lines = Self::lines(out, &self.groups, &mut self.timer);
        self.bfq.limit_depth(bio, now, &mut lines)
    }
    fn insert(&mut self, rq: Request, head: bool, now: Time) -> Vec<(RequestId, RequestId)> {
        self.insert_traced(rq, head, now, &mut String::new())
    }
    fn insert_traced(
        &mut self,
        rq: Request,
        _head: bool,
        now: Time,
        out: &mut String,
    ) -> Vec<(RequestId, RequestId)> {
        let mut lines = Self::lines(out, &self.groups, &mut self.timer);
        self.bfq.insert_request_merging(rq, now, &mut lines)
    }
    fn has_work(&self) -> bool {
        self.bfq.has_work()
    }
    fn dispatch(&mut self, now: Time, out: &mut String) -> Option<Request> {
        let mut lines = Self::lines(out, &self.groups, &mut self.timer);
        match self.bfq.dispatch(now, &mut lines) {
            Dispatch::Request(rq) => Some(rq),
            Dispatch::IdleUntil(_) | Dispatch::Empty => None,
        }
    }
    fn complete(&mut self, rq: &Request, now: Time, out: &mut String) {
        let mut lines = Self::lines(out, &self.groups, &mut self.timer);
        self.bfq.completed(rq, now, &mut lines);
    }
    fn take_timer_arms(&mut self) -> Vec<(Time, u64)> {
        std::mem::take(&mut self.timer.arms)
    }
    fn hrtimer_event(&mut self, generation: u64, now: Time, out: &mut String) {
        if generation != self.timer.generation || self.bfq.idle_timer_expires() != Some(now) {
            return;
        }
        let mut lines = Self::lines(out, &self.groups, &mut self.timer);
        self.bfq.timer(now, &mut lines);
    }
    fn exit(&mut self, ioc: IoContextId, now: Time, out: &mut String) {
        let mut lines = Self::lines(out, &self.groups, &mut self.timer);
        self.bfq.exit_ioc(ioc, now, &mut lines);
    }
    fn store(
        &mut self,
        name: &str,
        value: &str,
        now: Time,
        out: &mut String,
    ) -> Result<(), TunableError> {
        let mut lines = Self::lines(out, &self.groups, &mut self.timer);
        self.bfq.store_tunable_at(name, value, now, &mut lines)
    }
    fn cgroup_weight(&mut self, id: CgroupId, value: &str, now: Time) -> Option<(u32, bool)> {
        let Some(w) = parse_weight(value) else {
            return Some((self.groups[id.0 as usize].weight, false));
        };
        let g = &mut self.groups[id.0 as usize];
        g.weight = w as u32;
        if g.created {
            let spec = CgroupSpec {
                id,
                parent: g.parent,
                weight: g.weight,
                leaf_weight: g.weight,
            };
            self.bfq.add_cgroup(spec, now);
        }
        Some((w as u32, true))
    }
    fn elevator(&mut self) -> &mut dyn Elevator {
        &mut self.bfq
    }
    fn show(&self, value: u64) -> String {
        // bfq_var_show(): "%u" of an unsigned int.
        (value as u32).to_string()
    }
}
