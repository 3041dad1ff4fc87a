//! Every fuzz target's saved corpus (`fuzz/corpus/<target>/`), run on stable Rust as an
//! ordinary test: each input goes through the same call as `fuzz/fuzz_targets/<target>.rs`,
//! and a panic fails the test naming the input. Inputs libFuzzer finds (`cargo +nightly fuzz
//! run <target>`, crashes minimised with `cargo fuzz tmin`) are added to the corpus, so a
//! fixed crash stays fixed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use iosched_driver::spec::RunSpec;
use iosched_lab::sweep::spec::MAX_SWEEP_POINTS;
use iosched_lab::sweep::{describe, SweepSpec};
use iosched_report::compare::{read_run, rows};
use iosched_report::run_plot::{draw_svgs, RunFigures};
use iosched_sim::device::file::parse_device_text;
use iosched_workload::fio::{parse_sources, parse_str, ParseContext};
use iosched_workload::replay::{blktrace, iolog};

/// The inputs saved for `target`, sorted; at least one, so an emptied corpus fails.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no inputs", dir.display());
    files
}

/// Runs `body` on every input of `target`'s corpus; panics name the inputs that panicked.
fn run_corpus(target: &str, body: impl Fn(&[u8])) {
    let mut failed = Vec::new();
    for path in corpus(target) {
        let data = std::fs::read(&path).unwrap();
        if catch_unwind(AssertUnwindSafe(|| body(&data))).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(failed.is_empty(), "{target}: panicked on {failed:?}");
}

#[test]
fn fio_parser_corpus() {
    let ctx = ParseContext::default();
    run_corpus("fio_parser", |data| {
        let _ = parse_str(&String::from_utf8_lossy(data), "fuzz.fio", &ctx);
    });
}

#[test]
fn device_model_corpus() {
    run_corpus("device_model", |data| {
        let text = String::from_utf8_lossy(data);
        if let Ok(model) = parse_device_text(Path::new("fuzz.toml"), &text) {
            let _ = model.build();
        }
    });
}

#[test]
fn compare_json_corpus() {
    run_corpus("compare_json", |data| {
        if let Ok(run) = read_run(&String::from_utf8_lossy(data)) {
            let _ = rows(&[run.clone(), run]);
        }
    });
}

#[test]
fn blktrace_decode_corpus() {
    run_corpus("blktrace_decode", |data| {
        let _ = blktrace::decode(Path::new("fuzz.blktrace.0"), data);
    });
}

#[test]
fn iolog_parse_corpus() {
    run_corpus("iolog_parse", |data| {
        let _ = iolog::parse(Path::new("fuzz.log"), &String::from_utf8_lossy(data));
    });
}

#[test]
fn sweep_spec_corpus() {
    run_corpus("sweep_spec", |data| {
        let text = String::from_utf8_lossy(data);
        if let Ok(spec) = SweepSpec::parse(Path::new("fuzz/s.toml"), &text) {
            assert!(spec.point_count() <= MAX_SWEEP_POINTS);
            for index in 0..spec.point_count().min(16) {
                let _ = describe(&spec, index);
            }
        }
    });
}

#[test]
fn run_spec_corpus() {
    run_corpus("run_spec", |data| {
        if let Ok(spec) = RunSpec::from_json(&String::from_utf8_lossy(data)) {
            assert_eq!(
                RunSpec::from_json(&spec.to_json()).ok().as_ref(),
                Some(&spec)
            );
            let _ = parse_sources(&spec.jobs, &spec.machine.parse_context((1024, 64)));
        }
    });
}

#[test]
fn plot_json_corpus() {
    run_corpus("plot_json", |data| {
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
            return;
        };
        if let Ok(run) = RunFigures::from_json("fuzz", &json) {
            let _ = draw_svgs(&[run]);
        }
    });
}
