//! BFQ's sysfs tunables (`bfq_attrs[]`) and the fixed parameters `bfq_init_queue()` sets,
//! stored as the kernel stores them.
//!
//! Kernel: the SHOW_FUNCTION / STORE_FUNCTION macros and the hand-written stores of
//! bfq-iosched.c. Values parse as `kstrtoul()` does (decimal), clamp into the attribute's
//! range, and keep the kernel's units: `slice_idle` is held in ns in a `u32` (so a huge value
//! wraps as the kernel's does), `timeout_sync` in jiffies (reads back rounded up to 4 ms).

use super::{Bfq, Time};
use crate::deadline::tunables::{jiffies_to_msecs, msecs_to_jiffies};
use crate::trace::Trace;
use crate::tunable::{parse_tunable, TunableError, TunableSpec, TunableValue};

const INT_MAX: u64 = i32::MAX as u64;
const UINT_MAX: u64 = u32::MAX as u64;
const NSEC_PER_MSEC: u64 = 1_000_000;

pub(crate) static TUNABLES: [TunableSpec; 10] = [
    TunableSpec {
        name: "fifo_expire_sync",
        unit: "ms",
        default: 125,
        min: 1,
        max: INT_MAX,
        meaning: "deadline of a sync request from insertion, checked once per budget",
        extension: false,
    },
    TunableSpec {
        name: "fifo_expire_async",
        unit: "ms",
        default: 250,
        min: 1,
        max: INT_MAX,
        meaning: "deadline of an async request from insertion, checked once per budget",
        extension: false,
    },
    TunableSpec {
        name: "back_seek_max",
        unit: "KiB",
        default: 16384,
        min: 0,
        max: INT_MAX,
        meaning: "how far behind the head a request may be and still be chosen next",
        extension: false,
    },
    TunableSpec {
        name: "back_seek_penalty",
        unit: "factor",
        default: 2,
        min: 1,
        max: INT_MAX,
        meaning: "a backward seek counts this many times its distance",
        extension: false,
    },
    TunableSpec {
        name: "slice_idle",
        unit: "ms",
        default: 8,
        min: 0,
        max: INT_MAX,
        meaning: "how long the empty queue in service is waited for (0: never idle)",
        extension: false,
    },
    TunableSpec {
        name: "slice_idle_us",
        unit: "us",
        default: 8000,
        min: 0,
        max: UINT_MAX,
        meaning: "slice_idle in microseconds",
        extension: false,
    },
    TunableSpec {
        name: "max_budget",
        unit: "sectors",
        default: 0,
        min: 0,
        max: INT_MAX,
        meaning: "largest budget (0: from the peak rate and timeout_sync)",
        extension: false,
    },
    TunableSpec {
        name: "timeout_sync",
        unit: "ms",
        default: 124,
        min: 1,
        max: INT_MAX,
        meaning: "longest a queue may take to use its budget (kept in 4 ms jiffies)",
        extension: false,
    },
    TunableSpec {
        name: "strict_guarantees",
        unit: "bool",
        default: 0,
        min: 0,
        max: 1,
        meaning: "always idle, one request in the device at a time: exact service shares",
        extension: false,
    },
    TunableSpec {
        name: "low_latency",
        unit: "bool",
        default: 1,
        min: 0,
        max: 1,
        meaning: "raise the weight of interactive and soft real-time queues",
        extension: false,
    },
];

/// The parameters of `struct bfq_data` that sysfs or `bfq_init_queue()` set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    /// ns, `[async, sync]`. Kernel: bfq_fifo_expire.
    pub fifo_expire: [u64; 2],
    /// KiB. Kernel: bfq_back_max.
    pub back_max: u32,
    pub back_penalty: u32,
    /// ns. Kernel: bfq_slice_idle (a `u32`).
    pub slice_idle: u32,
    /// sectors; 0 = automatic. Kernel: bfq_user_max_budget.
    pub user_max_budget: i64,
    /// jiffies. Kernel: bfq_timeout.
    pub timeout: u64,
    pub strict_guarantees: bool,
    pub low_latency: bool,
    /// Kernel: bfq_large_burst_thresh.
    pub large_burst_thresh: i32,
    /// jiffies. Kernel: bfq_burst_interval.
    pub burst_interval: u64,
    /// Kernel: bfq_wr_coeff.
    pub wr_coeff: u32,
    /// jiffies. Kernel: bfq_wr_rt_max_time.
    pub wr_rt_max_time: u64,
    /// jiffies. Kernel: bfq_wr_min_idle_time.
    pub wr_min_idle_time: u64,
    /// jiffies. Kernel: bfq_wr_min_inter_arr_async.
    pub wr_min_inter_arr_async: u64,
    /// sectors/s. Kernel: bfq_wr_max_softrt_rate.
    pub wr_max_softrt_rate: u64,
}

impl Default for Tunables {
    /// Kernel: bfq_init_queue().
    fn default() -> Tunables {
        Tunables {
            fifo_expire: [1_000_000_000 / 4, 1_000_000_000 / 8],
            back_max: 16 * 1024,
            back_penalty: 2,
            slice_idle: (1_000_000_000 / 125) as u32,
            user_max_budget: 0,
            timeout: super::budget::BFQ_TIMEOUT,
            strict_guarantees: false,
            low_latency: true,
            large_burst_thresh: 8,
            burst_interval: msecs_to_jiffies(180),
            wr_coeff: 30,
            wr_rt_max_time: msecs_to_jiffies(300),
            wr_min_idle_time: msecs_to_jiffies(2000),
            wr_min_inter_arr_async: msecs_to_jiffies(500),
            wr_max_softrt_rate: 7000,
        }
    }
}

impl Tunables {
    /// The values sysfs shows, in table order.
    pub(crate) fn values(&self) -> Vec<TunableValue> {
        let values = [
            self.fifo_expire[1] / NSEC_PER_MSEC,
            self.fifo_expire[0] / NSEC_PER_MSEC,
            u64::from(self.back_max),
            u64::from(self.back_penalty),
            u64::from(self.slice_idle) / NSEC_PER_MSEC,
            u64::from(self.slice_idle) / 1000,
            self.user_max_budget as u64,
            u64::from(jiffies_to_msecs(self.timeout)),
            u64::from(self.strict_guarantees),
            u64::from(self.low_latency),
        ];
        TUNABLES
            .iter()
            .zip(values)
            .map(|(spec, value)| TunableValue { spec, value })
            .collect()
    }
}

impl Bfq {
    /// Kernel: the `bfq_*_store()` functions.
    pub(crate) fn store_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        self.store_tunable_at(name, value, 0, &mut crate::trace::NoTrace)
    }

    /// A store at time `now` (`low_latency` 0 ends weight raising then).
    pub fn store_tunable_at(
        &mut self,
        name: &str,
        value: &str,
        now: Time,
        trace: &mut dyn Trace,
    ) -> Result<(), TunableError> {
        self.listen(trace);
        let (spec, v) = parse_tunable("bfq", &TUNABLES, name, value)?;
        let t = &mut self.tun;
        match spec.name {
            "fifo_expire_sync" => t.fifo_expire[1] = v * NSEC_PER_MSEC,
            "fifo_expire_async" => t.fifo_expire[0] = v * NSEC_PER_MSEC,
            "back_seek_max" => t.back_max = v as u32,
            "back_seek_penalty" => t.back_penalty = v as u32,
            "slice_idle" => t.slice_idle = (v * NSEC_PER_MSEC) as u32,
            "slice_idle_us" => t.slice_idle = (v * 1000) as u32,
            "max_budget" => {
                self.bfq_max_budget = if v == 0 {
                    self.calc_max_budget()
                } else {
                    v as i64
                };
                self.tun.user_max_budget = v as i64;
            }
            "timeout_sync" => {
                t.timeout = msecs_to_jiffies(v as u32);
                if t.user_max_budget == 0 {
                    self.bfq_max_budget = self.calc_max_budget();
                }
            }
            "strict_guarantees" => {
                if !t.strict_guarantees && v == 1 && u64::from(t.slice_idle) < 8 * NSEC_PER_MSEC {
                    t.slice_idle = (8 * NSEC_PER_MSEC) as u32;
                }
                t.strict_guarantees = v == 1;
            }
            "low_latency" => {
                if v == 0 && t.low_latency {
                    self.end_wr(now, trace);
                }
                self.tun.low_latency = v == 1;
            }
            other => unreachable!("tunable {other} is in the table but not handled"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elevator::{DeviceInfo, Elevator};

    fn bfq() -> Bfq {
        Bfq::new(
            DeviceInfo {
                rotational: true,
                queue_depth: 32,
            },
            0,
        )
    }

    /// The table's defaults are what a fresh bfq_data shows (bfq_init_queue()).
    #[test]
    fn defaults_read_back_as_the_table_says() {
        for v in bfq().tunables() {
            assert_eq!(v.value, v.spec.default, "{}", v.spec.name);
        }
    }

    /// Kernel: bfq_timeout_sync_store() keeps jiffies: 10 ms reads back as 12 ms.
    #[test]
    fn timeout_sync_rounds_up_to_jiffies() {
        let mut b = bfq();
        b.set_tunable("timeout_sync", "10").unwrap();
        assert_eq!(b.tun.timeout, 3);
        let shown = b
            .tunables()
            .into_iter()
            .find(|v| v.spec.name == "timeout_sync")
            .unwrap();
        assert_eq!(shown.value, 12);
    }

    /// Kernel: bfq_strict_guarantees_store() raises slice_idle to 8 ms.
    #[test]
    fn strict_guarantees_raises_slice_idle() {
        let mut b = bfq();
        b.set_tunable("slice_idle", "0").unwrap();
        b.set_tunable("strict_guarantees", "1").unwrap();
        assert_eq!(b.tun.slice_idle, 8_000_000);
    }
}
