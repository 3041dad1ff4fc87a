//! `iosched schedulers`, `iosched knobs` and `iosched devices`.

use super::CmdResult;

pub fn schedulers() -> CmdResult {
    for scheduler in iosched_core::schedulers() {
        println!("{}: {}", scheduler.name, scheduler.summary);
        if scheduler.tunables.is_empty() {
            println!("    (no tunables)");
        }
        for spec in scheduler.tunables {
            let marker = if spec.extension {
                " [iosched extension]"
            } else {
                ""
            };
            println!(
                "    {:<22} default {:>6} {:<9} {}{}",
                spec.name, spec.default, spec.unit, spec.meaning, marker
            );
        }
        println!();
    }
    Ok(())
}

pub fn knobs() -> CmdResult {
    let defaults = iosched_sim::fs::FsConfig::default().knobs();
    for ((name, meaning), (_, default)) in iosched_sim::fs::FsConfig::meanings()
        .into_iter()
        .zip(defaults)
    {
        println!("{name:<26} default {default:<10} {meaning}");
    }
    Ok(())
}

pub fn devices() -> CmdResult {
    for preset in iosched_sim::device::presets() {
        let device = (preset.build)();
        println!(
            "{:<12} rotational={} queue_depth={:<3} capacity={} GiB  {}",
            preset.name,
            u8::from(device.rotational()),
            device.queue_depth(),
            (device.capacity_sectors() * 512) >> 30,
            preset.summary
        );
    }
    Ok(())
}
