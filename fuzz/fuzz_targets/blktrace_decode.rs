//! The blktrace binary decoder replay reads, without a panic.
//! `tests/fuzz_corpus.rs` runs the same over `corpus/blktrace_decode/`.
#![no_main]

use iosched_workload::replay::blktrace::decode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode(std::path::Path::new("fuzz.blktrace.0"), data);
});
