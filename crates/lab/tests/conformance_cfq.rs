//! iosched's CFQ against Linux 4.20.1's own recorded decisions (the OUTSIDE reference):
//! every scenario of `../shared/conformance/cfq/` (beside the repository, as in CI) must
//! dispatch exactly as the kernel did, request for request, at the same times.

use std::path::{Path, PathBuf};

use iosched_lab::conformance::{run_one, run_suite, summary_line, SuiteOptions};

fn data_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/cfq");
    if dir.join("scenarios").is_dir() && dir.join("expected").is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: {} not found (the shared data sits beside the repository)",
            dir.display()
        );
        None
    }
}

/// 100 %: every shared scenario identical to the kernel's dispatch sequence.
#[test]
fn every_scenario_dispatches_as_linux_4_20() {
    let Some(dir) = data_dir() else { return };
    let results = run_suite(
        &dir.join("scenarios"),
        &dir.join("expected"),
        &SuiteOptions::default(),
    )
    .expect("the suite runs");
    let differing: Vec<String> = results
        .iter()
        .filter(|r| !r.identical())
        .map(|r| r.to_string())
        .collect();
    eprintln!("{}", summary_line(&results));
    assert!(
        results.len() >= 315,
        "only {} scenarios found",
        results.len()
    );
    assert!(differing.is_empty(), "differing:\n{}", differing.join("\n"));
}

/// The comparison can fail: one kernel dispatch altered in a copy of the expected output is
/// reported at its index, with both sides' choice.
#[test]
fn an_altered_kernel_dispatch_is_reported() {
    let Some(dir) = data_dir() else { return };
    let name = "boot-mix";
    let tmp = std::env::temp_dir().join(format!("iosched-conf-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let text = iosched_lab::conformance::expected::read_expected(&dir.join("expected"), name)
        .expect("boot-mix expected output");
    let mut out = String::new();
    for (i, (t, id, pid)) in text.iter().enumerate() {
        let id = if i == 5 { id + 1000 } else { *id };
        out.push_str(&format!("D {t} {id} {pid}\n"));
    }
    std::fs::write(tmp.join(format!("{name}.out")), out).unwrap();
    let scn = dir.join("scenarios").join(format!("{name}.scn"));
    let r = run_one(&scn, &tmp, &SuiteOptions::default()).unwrap();
    std::fs::remove_dir_all(&tmp).unwrap();
    let d = r.divergence.expect("the altered dispatch is found");
    assert_eq!(d.index, 5);
    assert_eq!(d.kernel.unwrap().1, text[5].1 + 1000);
    assert_eq!(d.iosched.unwrap(), text[5]);
    assert!(r.to_string().contains("first divergence at dispatch #5"));
}
