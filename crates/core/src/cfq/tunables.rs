//! CFQ's sysfs tunables (`/sys/block/<dev>/queue/iosched/`) and iosched's seed switches.
//!
//! Every time tunable is held once, in nanoseconds; sysfs shows it twice, in ms (`slice_idle`)
//! and in µs (`slice_idle_us`), each view dividing the one value. Stores multiply back and clamp
//! into `[min, UINT_MAX]` as the kernel's `STORE_FUNCTION` does.
//! Kernel: cfq_attrs[], `SHOW_FUNCTION`/`STORE_FUNCTION`, `USEC_SHOW_FUNCTION`.
//!
//! iosched's seed switches (`extension = true`; defaults reproduce 4.20):
//! - `ancestor_preempt` (seed 002, 3984aa55204e + a257ae3e482e, Linux 4.6): 1 lets a queue
//!   of the active group or of an ancestor preempt, and drops the "exactly two queues on the
//!   tree" condition of the SYNC_NOIDLE rule; 0 restores the pre-4.6 rules (same group only,
//!   count == 2).
//! - `group_idle_ttime` (seed 002, e795421e40b3, 4.6): 1 refuses group idling when the
//!   queue's service-tree think time exceeds `group_idle`; 0 arms it regardless.
//! - `deep_fast_clear` (seed 000, 8e1ac6655104): 1 keeps select-time rule 8 (a dry, seeky,
//!   idle-windowed queue with less than half its slice used loses `deep` and `idle_window`);
//!   0 is the seed's "w/o 8e1ac6655104" kernel.
//! - `deep_mark` (seed 000): 0 never marks a queue `deep` (the seed's commented-out marking).
//! - `deep_always_clear` (seed 000): 1 is the seed's "always clear" experiment: rule 8 fires
//!   without its slice-progress test.
//! - `deep_seeky_fix` (seed 000, the proposed fix as iosched defines it from the seed's two
//!   complaints about 8e1ac6655104 — the flags outlive their cause until select time, and
//!   "less than half the slice used" misjudges a slow disk as fast): rule 8 is off, and at
//!   every arrival a deep seeky queue keeps its idle window only while the device is slower
//!   than the queue: its per-request device cost (dispatch to completion, over the requests
//!   the device held; a decaying average) times its backlog (queued + in flight, at least 4)
//!   exceeds `slice_idle`. On a slow disk the queue keeps its idled slices (as without
//!   8e1ac6655104); on a fast array it turns SYNC_NOIDLE at the arrival that shows it, and is
//!   preemptible at once.
//! - `rampup_any_sync` (seed 003): 1 keys the low_latency async depth ramp-up on *every* sync
//!   completion, as 2.6.32 did (`last_end_sync_rq`); 0 keys it on delayed sync completions
//!   only (573412b29586, 2.6.33 onwards).
//! - `timer_hz` (seeds on kernels before 4.8): 0 arms the idle timer to the nanosecond, as the
//!   hrtimer of 4.8 onwards does; N > 0 arms it as the jiffy timer before that did,
//!   `mod_timer(jiffies + sl)` with `sl` in jiffies at HZ = N (`msecs_to_jiffies()` rounds
//!   up), so it fires on a tick: `sl` ticks after the one current at arming, less the time
//!   already gone in the current tick.
//! - `rules_2632` (seed 003, Linux 2.6.32's cfq-iosched.c): 1 runs 2.6.32's low_latency and
//!   idling rules in place of 4.20's (see `rules_2632.rs`): low_latency does not scale
//!   slices; a sync queue's idle window follows its process's seek mean (a seeky process
//!   keeps it only under low_latency or without NCQ, and is idled at most 2 ms); CFQ idles
//!   only on a queue with an idle window (no SYNC_NOIDLE tree, no group_idle fallback, no
//!   `deep`); every sync queue of a class shares one service tree.

use crate::request::{Time, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};
use crate::tunable::{parse_tunable, TunableError, TunableSpec, TunableValue};

const UINT_MAX: u64 = u32::MAX as u64;

const fn spec(
    name: &'static str,
    unit: &'static str,
    default: u64,
    min: u64,
    max: u64,
    meaning: &'static str,
) -> TunableSpec {
    TunableSpec {
        name,
        unit,
        default,
        min,
        max,
        meaning,
        extension: false,
    }
}

const fn switch(name: &'static str, default: u64, meaning: &'static str) -> TunableSpec {
    TunableSpec {
        name,
        unit: "bool",
        default,
        min: 0,
        max: 1,
        meaning,
        extension: true,
    }
}

/// The table, in the kernel's `cfq_attrs[]` order, then iosched's switches.
pub(crate) static TUNABLES: [TunableSpec; 26] = [
    spec(
        "quantum",
        "requests",
        8,
        1,
        UINT_MAX,
        "per-queue in-flight cap when other queues wait",
    ),
    spec(
        "fifo_expire_sync",
        "ms",
        125,
        1,
        UINT_MAX,
        "deadline of a sync request, checked once per slice",
    ),
    spec(
        "fifo_expire_async",
        "ms",
        250,
        1,
        UINT_MAX,
        "deadline of an async request, checked once per slice",
    ),
    spec(
        "back_seek_max",
        "KiB",
        16384,
        0,
        UINT_MAX,
        "longest backward seek preferred over a forward one",
    ),
    spec(
        "back_seek_penalty",
        "multiplier",
        2,
        1,
        UINT_MAX,
        "cost factor of a backward seek",
    ),
    spec(
        "slice_sync",
        "ms",
        100,
        1,
        UINT_MAX,
        "base time slice of a sync queue (prio 4)",
    ),
    spec(
        "slice_sync_us",
        "us",
        100_000,
        1,
        UINT_MAX,
        "slice_sync in microseconds",
    ),
    spec(
        "slice_async",
        "ms",
        40,
        1,
        UINT_MAX,
        "base time slice of an async queue (prio 4)",
    ),
    spec(
        "slice_async_us",
        "us",
        40_000,
        1,
        UINT_MAX,
        "slice_async in microseconds",
    ),
    spec(
        "slice_async_rq",
        "requests",
        2,
        1,
        UINT_MAX,
        "scales the async dispatch limit per slice",
    ),
    spec(
        "slice_idle",
        "ms",
        8,
        0,
        UINT_MAX,
        "idle window awaiting a queue's next request (0: iops mode)",
    ),
    spec(
        "slice_idle_us",
        "us",
        8_000,
        0,
        UINT_MAX,
        "slice_idle in microseconds",
    ),
    spec(
        "group_idle",
        "ms",
        8,
        0,
        UINT_MAX,
        "idle window awaiting a group's next request",
    ),
    spec(
        "group_idle_us",
        "us",
        8_000,
        0,
        UINT_MAX,
        "group_idle in microseconds",
    ),
    spec(
        "low_latency",
        "bool",
        1,
        0,
        1,
        "scale slices to target_latency, ramp async depth",
    ),
    spec(
        "target_latency",
        "ms",
        300,
        1,
        UINT_MAX,
        "latency target that sizes group and workload slices",
    ),
    spec(
        "target_latency_us",
        "us",
        300_000,
        1,
        UINT_MAX,
        "target_latency in microseconds",
    ),
    switch(
        "ancestor_preempt",
        1,
        "seed 002: 4.6+ preemption (ancestor group, no count==2); 0 = pre-4.6",
    ),
    switch(
        "group_idle_ttime",
        1,
        "seed 002: e795421e40b3, no group idling when tree think time > group_idle",
    ),
    switch(
        "deep_fast_clear",
        1,
        "seed 000: 8e1ac6655104, clear deep+idle_window of a seeky queue on a fast device",
    ),
    switch(
        "deep_mark",
        1,
        "seed 000: mark a queue deep at >= 4 queued requests; 0 = never",
    ),
    switch(
        "deep_always_clear",
        0,
        "seed 000 experiment: select-time rule 8 without its slice-progress test",
    ),
    switch(
        "deep_seeky_fix",
        0,
        "seed 000 fix: deep keeps a seeky queue idling only while the device is slower than its backlog",
    ),
    switch(
        "rampup_any_sync",
        0,
        "seed 003: 2.6.32 async ramp-up keyed on any sync completion (pre-573412b29586)",
    ),
    TunableSpec {
        name: "timer_hz",
        unit: "Hz",
        default: 0,
        min: 0,
        max: 1000,
        meaning: "kernels before 4.8: idle timer fires on a tick at this HZ; 0 = hrtimer",
        extension: true,
    },
    switch(
        "rules_2632",
        0,
        "seed 003: 2.6.32 low_latency/idling (seeky idle window, 2 ms cap, one sync tree)",
    ),
];

/// CFQ's settings, times in ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tunables {
    pub quantum: u64,
    /// `cfq_fifo_expire[]`: index 0 async, 1 sync.
    pub fifo_expire_ns: [Time; 2],
    /// KiB.
    pub back_seek_max: u64,
    pub back_seek_penalty: u64,
    /// `cfq_slice[]`: index 0 async, 1 sync.
    pub slice_ns: [Time; 2],
    pub slice_async_rq: u64,
    pub slice_idle_ns: Time,
    pub group_idle_ns: Time,
    pub low_latency: bool,
    pub target_latency_ns: Time,
    pub ancestor_preempt: bool,
    pub group_idle_ttime: bool,
    pub deep_fast_clear: bool,
    pub deep_mark: bool,
    pub deep_always_clear: bool,
    pub deep_seeky_fix: bool,
    pub rampup_any_sync: bool,
    /// 0: the idle timer is an hrtimer (4.8+); otherwise the HZ of a jiffy timer.
    pub timer_hz: u64,
    pub rules_2632: bool,
}

impl Default for Tunables {
    fn default() -> Self {
        Tunables {
            quantum: 8,
            // NSEC_PER_SEC / 4 and / 8.
            fifo_expire_ns: [NSEC_PER_SEC / 4, NSEC_PER_SEC / 8],
            back_seek_max: 16 * 1024,
            back_seek_penalty: 2,
            // 40 ms async, 100 ms sync.
            slice_ns: [NSEC_PER_SEC / 100 * 4, NSEC_PER_SEC / 10],
            slice_async_rq: 2,
            // 8 ms: NSEC_PER_SEC / 125.
            slice_idle_ns: NSEC_PER_SEC / 125,
            group_idle_ns: NSEC_PER_SEC / 125,
            low_latency: true,
            target_latency_ns: NSEC_PER_SEC * 3 / 10,
            ancestor_preempt: true,
            group_idle_ttime: true,
            deep_fast_clear: true,
            deep_mark: true,
            deep_always_clear: false,
            deep_seeky_fix: false,
            rampup_any_sync: false,
            timer_hz: 0,
            rules_2632: false,
        }
    }
}

impl Tunables {
    /// Current values in table order, each in its sysfs unit.
    pub fn values(&self) -> Vec<TunableValue> {
        TUNABLES
            .iter()
            .map(|spec| TunableValue {
                spec,
                value: self.get(spec.name),
            })
            .collect()
    }

    fn get(&self, name: &str) -> u64 {
        let ms = |ns: Time| ns / NSEC_PER_MSEC;
        let us = |ns: Time| ns / NSEC_PER_USEC;
        match name {
            "quantum" => self.quantum,
            "fifo_expire_sync" => ms(self.fifo_expire_ns[1]),
            "fifo_expire_async" => ms(self.fifo_expire_ns[0]),
            "back_seek_max" => self.back_seek_max,
            "back_seek_penalty" => self.back_seek_penalty,
            "slice_sync" => ms(self.slice_ns[1]),
            "slice_sync_us" => us(self.slice_ns[1]),
            "slice_async" => ms(self.slice_ns[0]),
            "slice_async_us" => us(self.slice_ns[0]),
            "slice_async_rq" => self.slice_async_rq,
            "slice_idle" => ms(self.slice_idle_ns),
            "slice_idle_us" => us(self.slice_idle_ns),
            "group_idle" => ms(self.group_idle_ns),
            "group_idle_us" => us(self.group_idle_ns),
            "low_latency" => u64::from(self.low_latency),
            "target_latency" => ms(self.target_latency_ns),
            "target_latency_us" => us(self.target_latency_ns),
            "ancestor_preempt" => u64::from(self.ancestor_preempt),
            "group_idle_ttime" => u64::from(self.group_idle_ttime),
            "deep_fast_clear" => u64::from(self.deep_fast_clear),
            "deep_mark" => u64::from(self.deep_mark),
            "deep_always_clear" => u64::from(self.deep_always_clear),
            "deep_seeky_fix" => u64::from(self.deep_seeky_fix),
            "rampup_any_sync" => u64::from(self.rampup_any_sync),
            "timer_hz" => self.timer_hz,
            "rules_2632" => u64::from(self.rules_2632),
            other => unreachable!("tunable {other} is in the table but not handled"),
        }
    }

    /// Parses and stores one tunable, as the kernel's sysfs store does.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let (spec, v) = parse_tunable("cfq", &TUNABLES, name, value)?;
        let ms = v * NSEC_PER_MSEC;
        let us = v * NSEC_PER_USEC;
        match spec.name {
            "quantum" => self.quantum = v,
            "fifo_expire_sync" => self.fifo_expire_ns[1] = ms,
            "fifo_expire_async" => self.fifo_expire_ns[0] = ms,
            "back_seek_max" => self.back_seek_max = v,
            "back_seek_penalty" => self.back_seek_penalty = v,
            "slice_sync" => self.slice_ns[1] = ms,
            "slice_sync_us" => self.slice_ns[1] = us,
            "slice_async" => self.slice_ns[0] = ms,
            "slice_async_us" => self.slice_ns[0] = us,
            "slice_async_rq" => self.slice_async_rq = v,
            "slice_idle" => self.slice_idle_ns = ms,
            "slice_idle_us" => self.slice_idle_ns = us,
            "group_idle" => self.group_idle_ns = ms,
            "group_idle_us" => self.group_idle_ns = us,
            "low_latency" => self.low_latency = v != 0,
            "target_latency" => self.target_latency_ns = ms,
            "target_latency_us" => self.target_latency_ns = us,
            "ancestor_preempt" => self.ancestor_preempt = v != 0,
            "group_idle_ttime" => self.group_idle_ttime = v != 0,
            "deep_fast_clear" => self.deep_fast_clear = v != 0,
            "deep_mark" => self.deep_mark = v != 0,
            "deep_always_clear" => self.deep_always_clear = v != 0,
            "deep_seeky_fix" => self.deep_seeky_fix = v != 0,
            "rampup_any_sync" => self.rampup_any_sync = v != 0,
            "timer_hz" => self.timer_hz = v,
            "rules_2632" => self.rules_2632 = v != 0,
            other => unreachable!("tunable {other} is in the table but not handled"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table defaults and the struct defaults agree, in each view's unit.
    #[test]
    fn table_defaults_match_struct_defaults() {
        let t = Tunables::default();
        for value in t.values() {
            assert_eq!(value.value, value.spec.default, "{}", value.spec.name);
        }
    }

    /// ms and µs are two views of one ns value; stores clamp like sysfs.
    #[test]
    fn ms_and_us_views_share_one_value() {
        let mut t = Tunables::default();
        t.set("slice_idle_us", "2500").unwrap();
        assert_eq!(t.slice_idle_ns, 2_500_000);
        assert_eq!(t.get("slice_idle"), 2);
        t.set("quantum", "0").unwrap();
        assert_eq!(t.quantum, 1);
        t.set("low_latency", "9").unwrap();
        assert!(t.low_latency);
        assert!(t.set("nosuch", "1").is_err());
    }
}
