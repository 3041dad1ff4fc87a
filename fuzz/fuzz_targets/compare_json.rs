//! The fio JSON `iosched compare` reads, and the table rows from it, without a panic.
//! `tests/fuzz_corpus.rs` runs the same over `corpus/compare_json/`.
#![no_main]

use iosched_report::compare::{read_run, rows};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(run) = read_run(&text) {
        let _ = rows(&[run.clone(), run]);
    }
});
