//! A saved run spec (`--save-spec`, read by `--spec`): checked, written back unchanged, and
//! its job files parsed in the machine it describes, without a panic. `tests/fuzz_corpus.rs`
//! runs the same over `corpus/run_spec/`.
#![no_main]

use iosched_driver::spec::RunSpec;
use iosched_workload::fio::parse_sources;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(spec) = RunSpec::from_json(&text) {
        assert_eq!(RunSpec::from_json(&spec.to_json()).ok().as_ref(), Some(&spec));
        // 1 GiB and 64 clones: small enough that a spec cannot make the fuzzer allocate much.
        let _ = parse_sources(&spec.jobs, &spec.machine.parse_context((1024, 64)));
    }
});
