//! `iosched schedulers`, `iosched knobs` and `iosched devices`: aligned by
//! [`iosched_report::text_table`].

use std::fmt::Write as _;

use iosched_report::text_table::TextTable;

use super::{print_out, CmdResult};

/// The kernel's blk-mq schedulers iosched does not re-create: `iosched kernel` runs fio on
/// them, and `iosched run` refuses them with a pointer there.
const KERNEL_ONLY: [&str; 1] = ["bfq"];

pub fn schedulers() -> CmdResult {
    print_out(&schedulers_text())
}

/// What `iosched schedulers` prints (also the reference page's body).
pub fn schedulers_text() -> String {
    let mut out = String::new();
    for scheduler in iosched_core::schedulers() {
        let aliases = if scheduler.aliases.is_empty() {
            String::new()
        } else {
            format!(" (alias {})", scheduler.aliases.join(", "))
        };
        let _ = writeln!(out, "{}{aliases}: {}", scheduler.name, scheduler.summary);
        if scheduler.tunables.is_empty() {
            let _ = writeln!(out, "    (no tunables)");
        } else {
            let mut table = TextTable::new(&["tunable", "default", "unit", "meaning"])
                .right_aligned(&[1])
                .indented(4);
            for spec in scheduler.tunables {
                let marker = if spec.extension {
                    " [iosched extension]"
                } else {
                    ""
                };
                let meaning = format!("{}{marker}", spec.meaning);
                table.row([spec.name, &spec.default.to_string(), spec.unit, &meaning]);
            }
            out.push_str(&table.render());
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "{}: the kernel's own, run by fio on a real block device with `iosched kernel` \
         (which takes the names above too)",
        KERNEL_ONLY.join(", ")
    );
    out
}

pub fn knobs() -> CmdResult {
    print_out(&knobs_text())
}

/// What `iosched knobs` prints.
pub fn knobs_text() -> String {
    let config = iosched_sim::fs::FsConfig::default();
    // The JSON echo leaves the CPU model's knobs out while it is off, so their defaults are
    // named here rather than found among the echoed values.
    let defaults = config.knobs();
    let mut table = TextTable::new(&["knob", "default", "meaning"]);
    for (name, meaning) in iosched_sim::fs::FsConfig::meanings() {
        let default = match name {
            "cpu_era" => "off".to_string(),
            "cpus" => config.writeback.cpus.to_string(),
            _ => defaults
                .iter()
                .find(|(known, _)| known == name)
                .map_or_else(String::new, |(_, value)| value.clone()),
        };
        table.row([name, default.as_str(), meaning]);
    }
    let engine_threads = "real targets only: engine worker threads, each with its own io_uring \
                          ring, sharing one scheduler (auto: one per CPU the jobs allow)";
    table.row(["engine_threads", "1", engine_threads]);
    table.render()
}

pub fn devices() -> CmdResult {
    print_out(&devices_text())
}

/// What `iosched devices` prints.
pub fn devices_text() -> String {
    let mut table = TextTable::new(&[
        "device",
        "rotational",
        "queue depth",
        "capacity (GB)",
        "model",
    ])
    .right_aligned(&[1, 2, 3]);
    for preset in iosched_sim::device::presets() {
        let device = (preset.build)();
        // Decimal GB, as drive makers, the device notes and `calibrate` count it.
        let capacity = (device.capacity_sectors() * 512) as f64 / 1e9;
        table.row([
            preset.name.to_string(),
            u8::from(device.rotational()).to_string(),
            device.queue_depth().to_string(),
            format!("{capacity:.1}"),
            preset.summary.to_string(),
        ]);
    }
    table.render()
}
