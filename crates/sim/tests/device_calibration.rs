//! Each device preset lands inside the published ranges of device-models.md §2.1 / §1.5,
//! measured by closed loops straight into the model (fixed seeds).

use iosched_sim::device::calibrate::{calibrate_preset, CalibrationOptions};

/// Prints every preset's calibration table: `cargo test -p iosched-sim --release --test
/// device_calibration -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_calibration() {
    let only = std::env::var("PRESET").ok();
    for preset in iosched_sim::device::presets() {
        if only.as_deref().is_some_and(|name| name != preset.name) {
            continue;
        }
        let report = calibrate_preset(preset.name, &CalibrationOptions::default()).unwrap();
        println!("{}", report.to_text());
    }
}
