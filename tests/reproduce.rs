//! `iosched reproduce` from the outside: the short variant of every scenario runs and
//! reports every row and comparison in the documented JSON shape.

use std::process::Command;

#[test]
fn short_reproduce_reports_every_row_and_comparison() {
    let output = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["reproduce", "--short", "--output-format", "json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let comparisons = doc["comparisons"].as_array().unwrap();
    let seeds: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|row| row["seed"].as_str().unwrap())
        .collect();
    assert!(seeds.contains("000") && seeds.contains("004"), "{seeds:?}");
    for row in rows {
        for field in ["seed", "table", "label", "unit"] {
            assert!(row[field].is_string(), "{field} in {row}");
        }
        assert!(row["value"].as_f64().is_some_and(f64::is_finite), "{row}");
    }
    assert!(!comparisons.is_empty());
    for comparison in comparisons {
        assert!(comparison["seed_ratio"].is_number(), "{comparison}");
        assert!(comparison["ratio"].is_number(), "{comparison}");
        assert!(comparison["direction_ok"].is_boolean());
        assert!(comparison["within_25pct"].is_boolean());
    }
}

#[test]
fn unknown_seed_is_refused() {
    let output = Command::new(env!("CARGO_BIN_EXE_iosched"))
        .args(["reproduce", "999"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("999"));
}
