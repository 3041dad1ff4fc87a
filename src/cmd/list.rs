//! `iosched schedulers`, `iosched knobs` and `iosched devices`: aligned by
//! [`iosched_report::text_table`].

use std::fmt::Write as _;

use iosched_report::text_table::TextTable;

use super::{print_out, CmdResult};

use iosched_lab::listing::{self, KERNEL_ONLY};

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
    if !KERNEL_ONLY.is_empty() {
        let _ = writeln!(
            out,
            "{}: the kernel's own, run by fio on a real block device with `iosched kernel` \
             (which takes the names above too)",
            KERNEL_ONLY.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "The kernel's own bfq, mq-deadline, kyber and none run by fio on a real block device \
         with `iosched kernel` (which takes the names above too)."
    );
    out
}

pub fn knobs() -> CmdResult {
    print_out(&knobs_text())
}

/// What `iosched knobs` prints.
pub fn knobs_text() -> String {
    let mut table = TextTable::new(&["knob", "default", "meaning"]);
    for knob in listing::knobs() {
        table.row([knob.name, knob.default.as_str(), knob.meaning]);
    }
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
    for device in listing::devices() {
        // Decimal GB, as drive makers, the device notes and `calibrate` count it.
        let capacity = device.capacity_bytes as f64 / 1e9;
        table.row([
            device.name.to_string(),
            u8::from(device.rotational).to_string(),
            device.queue_depth.to_string(),
            format!("{capacity:.1}"),
            device.summary.to_string(),
        ]);
    }
    table.render()
}
