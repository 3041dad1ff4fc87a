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
    let config = iosched_sim::fs::FsConfig::default();
    // The JSON echo leaves the CPU model's knobs out while it is off, so their defaults are
    // named here rather than found among the echoed values.
    let defaults = config.knobs();
    for (name, meaning) in iosched_sim::fs::FsConfig::meanings() {
        let default = match name {
            "cpu_era" => "off".to_string(),
            "cpus" => config.writeback.cpus.to_string(),
            _ => defaults
                .iter()
                .find(|(known, _)| known == name)
                .map_or_else(String::new, |(_, value)| value.clone()),
        };
        let _ = writeln!(out, "{name:<26} default {default:<10} {meaning}");
    }
    let engine_threads = "real targets only: engine worker threads, each with its own io_uring \
                          ring, sharing one scheduler (auto: one per CPU the jobs allow)";
    let _ = writeln!(
        out,
        "{:<26} default {:<10} {engine_threads}",
        "engine_threads", 1
    );
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
