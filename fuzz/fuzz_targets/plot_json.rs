//! A fio JSON result as `iosched plot` reads it, and every chart of it drawn as SVG in memory,
//! without a panic or an axis that never ends. `tests/fuzz_corpus.rs` runs the same over
//! `corpus/plot_json/`.
#![no_main]

use iosched_report::run_plot::{draw_svgs, RunFigures};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(run) = RunFigures::from_json("fuzz", &json) {
        let _ = draw_svgs(&[run]);
    }
});
