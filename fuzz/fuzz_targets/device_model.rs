//! Device model files (`--device MODEL.toml`): parsed, and when valid built into a device
//! model, without a panic. `tests/fuzz_corpus.rs` runs the same over `corpus/device_model/`.
#![no_main]

use iosched_sim::device::file::parse_device_text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(model) = parse_device_text(std::path::Path::new("fuzz.toml"), &text) {
        let _ = model.build();
    }
});
