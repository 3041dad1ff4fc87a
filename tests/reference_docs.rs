//! The book's reference pages (`docs/reference/`) are made from the code by
//! `scripts/gen-reference`; this fails when one is stale, e.g. when a subcommand, tunable,
//! knob, device preset or fio option is added and the pages were not made again.

mod common;

use common::{iosched, stderr_of};

const PAGES: [&str; 5] = ["commands", "schedulers", "knobs", "devices", "fio-options"];

#[test]
fn reference_pages_match_the_code() {
    let mut stale = Vec::new();
    for page in PAGES {
        let out = iosched(&["reference", page]);
        assert!(out.status.success(), "{page}: {}", stderr_of(&out));
        let path = format!("{}/docs/reference/{page}.md", env!("CARGO_MANIFEST_DIR"));
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed.as_bytes() != out.stdout.as_slice() {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "stale reference pages (run scripts/gen-reference): {stale:?}"
    );
}

#[test]
fn every_preset_and_scheduler_has_its_row() {
    let devices = String::from_utf8_lossy(&iosched(&["reference", "devices"]).stdout).into_owned();
    for preset in ["hdd-7200", "nvme-gen4", "ufs31", "ssd-x25e"] {
        assert!(devices.contains(preset), "{preset} missing");
    }
    let schedulers =
        String::from_utf8_lossy(&iosched(&["reference", "schedulers"]).stdout).into_owned();
    for tunable in ["slice_idle", "group_idle", "fifo_batch"] {
        assert!(schedulers.contains(tunable), "{tunable} missing");
    }
}
