//! fio's iolog (version 2 and 3) as replay reads it, without a panic.
//! `tests/fuzz_corpus.rs` runs the same over `corpus/iolog_parse/`.
#![no_main]

use iosched_workload::replay::iolog::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parse(std::path::Path::new("fuzz.log"), &text);
});
