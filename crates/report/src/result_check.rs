//! The figures `iosched compare` and `iosched plot` read from a fio JSON result, checked where
//! they enter: a hand-edited or corrupt file must not print `"abc"` as 0.00, and a bandwidth of
//! 1e307 (infinite once scaled to bytes) must not reach an axis, whose ticks never end.
//!
//! A figure may be absent or `null` (fio leaves out what it did not measure); when present
//! it is a number, finite, not negative and at most [`MAX_FIGURE`]. The error names the field
//! by its place: `jobs[0] 'reader': read.bw: "abc" is not a number`.

use serde_json::Value;

/// 1e18: larger than any figure a run can report in fio's units (a zettabyte per second in
/// KiB/s, 31 years in ns, an exabyte), and small enough that any scaling a chart applies stays
/// finite with drawable ticks.
pub const MAX_FIGURE: f64 = 1e18;

/// The per-direction fields compare and plot read.
const DIRECTION_FIELDS: [&str; 4] = ["bw", "bw_bytes", "iops", "total_ios"];

/// Checks every figure `compare` and `plot` read from the parsed result `json`.
pub fn check_result(json: &Value) -> Result<(), String> {
    for (index, job) in json["jobs"].as_array().into_iter().flatten().enumerate() {
        let name = job["jobname"].as_str().unwrap_or("?");
        let at = |field: &str| format!("jobs[{index}] '{name}': {field}");
        for dir in ["read", "write", "trim"] {
            let d = &job[dir];
            for key in DIRECTION_FIELDS {
                figure(&d[key], || at(&format!("{dir}.{key}")))?;
            }
            let clat = &d["clat_ns"];
            figure(&clat["mean"], || at(&format!("{dir}.clat_ns.mean")))?;
            if let Some(percentiles) = clat["percentile"].as_object() {
                for (key, value) in percentiles {
                    figure(value, || at(&format!("{dir}.clat_ns.percentile.{key}")))?;
                }
            }
        }
    }
    let iosched = &json["iosched"];
    for (index, group) in iosched["cgroups"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for key in ["share", "ideal_share"] {
            figure(&group[key], || format!("iosched.cgroups[{index}].{key}"))?;
        }
    }
    let series = &iosched["writeback"]["series"];
    for key in ["time_ns", "dirty_bytes", "writeback_bytes"] {
        for (index, value) in series[key].as_array().into_iter().flatten().enumerate() {
            figure(value, || format!("iosched.writeback.series.{key}[{index}]"))?;
        }
    }
    Ok(())
}

/// One figure: absent, `null`, or a number in `0..=MAX_FIGURE`.
fn figure(value: &Value, field: impl Fn() -> String) -> Result<(), String> {
    match value {
        Value::Null => Ok(()),
        Value::Number(number) => match number.as_f64() {
            Some(x) if (0.0..=MAX_FIGURE).contains(&x) => Ok(()),
            _ => Err(format!(
                "{}: {number} is out of range (a figure is 0 to {MAX_FIGURE:e})",
                field()
            )),
        },
        other => Err(format!("{}: {other} is not a number", field())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_string_bandwidth_is_named_by_its_place() {
        let result = json!({"jobs": [{"jobname": "r", "read": {"bw": "abc"}}]});
        assert_eq!(
            check_result(&result).unwrap_err(),
            "jobs[0] 'r': read.bw: \"abc\" is not a number"
        );
    }

    #[test]
    fn absurd_and_negative_figures_are_refused() {
        for bad in [json!(1e307), json!(-1), json!(1.5e18)] {
            let result = json!({"jobs": [{"jobname": "r", "write": {"clat_ns": {
                "percentile": {"99.000000": bad}}}}]});
            let e = check_result(&result).unwrap_err();
            assert!(
                e.starts_with("jobs[0] 'r': write.clat_ns.percentile.99.000000: "),
                "{e}"
            );
        }
    }

    #[test]
    fn absent_null_and_real_figures_pass() {
        let result = json!({"jobs": [{"jobname": "r", "read": {"bw": 4000, "iops": null,
            "clat_ns": {"mean": 99.5, "percentile": {"50.000000": 99840}}}}],
            "iosched": {"cgroups": [{"share": 0.5}], "writeback": {"series": {"time_ns": [0, 1e8]}}}});
        assert_eq!(check_result(&result), Ok(()));
    }

    #[test]
    fn writeback_series_and_cgroups_are_checked() {
        let result = json!({"jobs": [], "iosched": {"cgroups": [{"ideal_share": "x"}]}});
        assert!(check_result(&result)
            .unwrap_err()
            .starts_with("iosched.cgroups[0].ideal_share"));
        let result = json!({"jobs": [], "iosched": {"writeback": {"series": {
            "dirty_bytes": [1, 1e300]}}}});
        assert!(check_result(&result)
            .unwrap_err()
            .starts_with("iosched.writeback.series.dirty_bytes[1]"));
    }
}
