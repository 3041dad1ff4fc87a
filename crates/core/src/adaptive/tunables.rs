//! The adaptive scheduler's tunables. None is a kernel knob (all are iosched extensions);
//! every default is relative to something measured (a service time, a window's progress, a
//! think-time distribution), so no device needs its own setting.

use crate::request::{Time, NSEC_PER_MSEC};
use crate::tunable::{parse_tunable, TunableError, TunableSpec, TunableValue};

pub(super) static TUNABLES: [TunableSpec; 9] = [
    TunableSpec {
        name: "share_tolerance",
        unit: "%",
        default: 5,
        min: 1,
        max: 50,
        meaning: "relative share error each backlogged group is held within over a window; \
                  groups may run this far ahead of the slowest before they wait",
        extension: true,
    },
    TunableSpec {
        name: "share_window_ms",
        unit: "ms",
        default: 500,
        min: 10,
        max: 10_000,
        meaning: "sliding window over which shares are measured and the allowance re-derived",
        extension: true,
    },
    TunableSpec {
        name: "idle_quantile",
        unit: "%",
        default: 75,
        min: 50,
        max: 99,
        meaning: "an idle window covers this fraction of the measured think times",
        extension: true,
    },
    TunableSpec {
        name: "idle_cost",
        unit: "service times",
        default: 16,
        min: 0,
        max: 1024,
        meaning: "an idle window pays while window x measured parallelism stays under this \
                  many depth-1 service times; 0 never idles",
        extension: true,
    },
    TunableSpec {
        name: "idle_max_ms",
        unit: "ms",
        default: 20,
        min: 1,
        max: 1000,
        meaning: "hard cap on any idle window (a safety bound; the service-time rule binds first)",
        extension: true,
    },
    TunableSpec {
        name: "slice_ms",
        unit: "ms",
        default: 100,
        min: 1,
        max: 10_000,
        meaning: "on a device measured serial, longest a sequential queue keeps the device \
                  while it is anticipated",
        extension: true,
    },
    TunableSpec {
        name: "serial_parallelism",
        unit: "1/100",
        default: 150,
        min: 100,
        max: 10_000,
        meaning: "a device whose measured parallelism is below this (x0.01) is treated as serial: \
                  sequential queues are anticipated there",
        extension: true,
    },
    TunableSpec {
        name: "lend",
        unit: "%",
        default: 6,
        min: 0,
        max: 9,
        meaning: "work conservation: a group with nothing queued (its think time or depth \
                  leaves its share unused) lends it to groups waiting behind it, while every \
                  lender keeps at least 100 - lend % and every borrower at most 100 + lend % \
                  of its weight-ideal share over the window; 0 never lends",
        extension: true,
    },
    TunableSpec {
        name: "burst",
        unit: "requests",
        // 8 by default: quiet, on a loop device it moved 1.11-1.12 x the MB/s of 1 (burst.rs).
        default: 8,
        min: 1,
        max: 64,
        meaning: "a group admitted to the device may send its queued requests together until \
                  it has this many in the device (one wake-up of its thread for several), while \
                  every group's window share stays within share_tolerance; 1 sends one at a \
                  time",
        extension: true,
    },
];

/// Current values, in the table's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    pub share_tolerance_pct: u64,
    pub share_window_ns: Time,
    pub idle_quantile_pct: u64,
    pub idle_cost: u64,
    pub idle_max_ns: Time,
    pub slice_ns: Time,
    pub serial_parallelism_centi: u64,
    pub lend_pct: u64,
    pub burst: u64,
}

impl Default for Tunables {
    fn default() -> Tunables {
        let d = |i: usize| TUNABLES[i].default;
        Tunables {
            share_tolerance_pct: d(0),
            share_window_ns: d(1) * NSEC_PER_MSEC,
            idle_quantile_pct: d(2),
            idle_cost: d(3),
            idle_max_ns: d(4) * NSEC_PER_MSEC,
            slice_ns: d(5) * NSEC_PER_MSEC,
            serial_parallelism_centi: d(6),
            lend_pct: d(7),
            burst: d(8),
        }
    }
}

impl Tunables {
    /// The values in table order, in sysfs units.
    pub fn values(&self) -> Vec<TunableValue> {
        let raw = [
            self.share_tolerance_pct,
            self.share_window_ns / NSEC_PER_MSEC,
            self.idle_quantile_pct,
            self.idle_cost,
            self.idle_max_ns / NSEC_PER_MSEC,
            self.slice_ns / NSEC_PER_MSEC,
            self.serial_parallelism_centi,
            self.lend_pct,
            self.burst,
        ];
        TUNABLES
            .iter()
            .zip(raw)
            .map(|(spec, value)| TunableValue { spec, value })
            .collect()
    }

    /// Parses and stores one value, clamped into its range.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let (spec, v) = parse_tunable("adaptive", &TUNABLES, name, value)?;
        match spec.name {
            "share_tolerance" => self.share_tolerance_pct = v,
            "share_window_ms" => self.share_window_ns = v * NSEC_PER_MSEC,
            "idle_quantile" => self.idle_quantile_pct = v,
            "idle_cost" => self.idle_cost = v,
            "idle_max_ms" => self.idle_max_ns = v * NSEC_PER_MSEC,
            "slice_ms" => self.slice_ns = v * NSEC_PER_MSEC,
            "serial_parallelism" => self.serial_parallelism_centi = v,
            "lend" => self.lend_pct = v,
            _ => self.burst = v,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry round-trips through `set` and `values`, so the table and the fields agree.
    #[test]
    fn every_tunable_round_trips() {
        let mut t = Tunables::default();
        for (i, spec) in TUNABLES.iter().enumerate() {
            let v = spec.min + 1;
            t.set(spec.name, &v.to_string()).unwrap();
            assert_eq!(t.values()[i].value, v, "{}", spec.name);
        }
        assert!(t.set("slice_idle", "1").is_err());
    }
}
