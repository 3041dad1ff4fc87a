//! A sweep spec (`iosched sweep SPEC.toml`) as the sweep reads it: checked, its size bounded,
//! and each of its first points named, without a panic. `tests/fuzz_corpus.rs` runs the same
//! over `corpus/sweep_spec/`.
#![no_main]

use iosched_lab::sweep::{describe, SweepSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(spec) = SweepSpec::parse(std::path::Path::new("fuzz/s.toml"), &text) {
        assert!(spec.point_count() <= iosched_lab::sweep::spec::MAX_SWEEP_POINTS);
        for index in 0..spec.point_count().min(16) {
            let _ = describe(&spec, index);
        }
    }
});
