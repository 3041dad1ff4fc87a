//! The fio job-file parser on arbitrary text: an error or a job set, never a panic.
//! `tests/fuzz_corpus.rs` runs the same call over `corpus/fio_parser/`.
#![no_main]

use iosched_workload::fio::{parse_str, ParseContext};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parse_str(&text, "fuzz.fio", &ParseContext::default());
});
