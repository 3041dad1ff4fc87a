//! `iosched schedulers`, `iosched knobs` and `iosched devices`.

use std::fmt::Write as _;

use super::{print_out, CmdResult};

pub fn schedulers() -> CmdResult {
    let mut out = String::new();
    for scheduler in iosched_core::schedulers() {
        let _ = writeln!(out, "{}: {}", scheduler.name, scheduler.summary);
        if scheduler.tunables.is_empty() {
            let _ = writeln!(out, "    (no tunables)");
        }
        for spec in scheduler.tunables {
            let marker = if spec.extension {
                " [iosched extension]"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "    {:<22} default {:>6} {:<9} {}{}",
                spec.name, spec.default, spec.unit, spec.meaning, marker
            );
        }
        let _ = writeln!(out);
    }
    print_out(&out)
}

pub fn knobs() -> CmdResult {
    let mut out = String::new();
    let defaults = iosched_sim::fs::FsConfig::default().knobs();
    for ((name, meaning), (_, default)) in iosched_sim::fs::FsConfig::meanings()
        .into_iter()
        .zip(defaults)
    {
        let _ = writeln!(out, "{name:<26} default {default:<10} {meaning}");
    }
    print_out(&out)
}

pub fn devices() -> CmdResult {
    let mut out = String::new();
    for preset in iosched_sim::device::presets() {
        let device = (preset.build)();
        let _ = writeln!(
            out,
            "{:<12} rotational={} queue_depth={:<3} capacity={:>7.1} GB  {}",
            preset.name,
            u8::from(device.rotational()),
            device.queue_depth(),
            // Decimal GB, as drive makers, the device notes and `calibrate` count it.
            (device.capacity_sectors() * 512) as f64 / 1e9,
            preset.summary
        );
    }
    print_out(&out)
}
