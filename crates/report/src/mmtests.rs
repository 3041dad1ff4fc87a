//! mmtests-style comparison tables for A/B runs (`compare-mmtests.pl`'s text printer).
//!
//! The first column is the baseline. Each value prints as `%12.2f` followed by its change
//! against the baseline as ` (%7.2f%)`, where a **positive percentage always means better**:
//! `new/base - 1` for higher-is-better metrics (throughput), `1 - new/base` for
//! lower-is-better ones (latency, time, spread). Column titles are split at their first `-`
//! into two header rows (`4.19-cfq` prints `4.19` over `cfq`), keeping a `-rcN` suffix on the
//! first row. [`summary_rows`] builds mmtests' "Multiops" statistic rows (Min, Hmean or Amean,
//! Stddev, CoeffVar, Max, BHmean-95 or BAmean-95) from raw samples.

use std::fmt::Write as _;

/// One table row: a statistic of one operation, one value per column (baseline first).
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    /// Statistic name, e.g. `Hmean`.
    pub stat: String,
    /// Operation, e.g. `tput-1` (may be empty).
    pub op: String,
    /// Whether a larger value is an improvement (sets the sign of the percentage).
    pub higher_is_better: bool,
    pub values: Vec<f64>,
}

/// Width of a value (`%12.2f`).
const VALUE_WIDTH: usize = 12;
/// Width of one column: value, ` (`, `%7.2f`, `%)`.
const COLUMN_WIDTH: usize = VALUE_WIDTH + 2 + 7 + 2;

/// The change of `new` against `base` in percent, positive when `new` is better.
/// Kernel-free analogue of mmtests' `pdiff()`/`pndiff()`, special cases included: equal
/// values give 0; higher-is-better: new 0 gives 0, base 0 gives +100; lower-is-better: base 0
/// gives -99, new 0 gives +100.
pub fn percent_change(base: f64, new: f64, higher_is_better: bool) -> f64 {
    if base == new {
        return 0.0;
    }
    if higher_is_better {
        if new == 0.0 {
            0.0
        } else if base == 0.0 {
            100.0
        } else {
            new * 100.0 / base - 100.0
        }
    } else if base == 0.0 {
        -99.0
    } else if new == 0.0 {
        100.0
    } else {
        100.0 - new * 100.0 / base
    }
}

/// Splits a run title into its two header rows: before and after the first `-`, except that
/// a `-rcN` part stays on the first row (`5.0-rc3-bfq` gives `5.0-rc3` / `bfq`).
pub fn split_title(title: &str) -> (String, String) {
    let mut search = 0;
    while let Some(i) = title[search..].find('-').map(|i| i + search) {
        let rest = &title[i + 1..];
        let is_rc =
            rest.starts_with("rc") && rest[2..].chars().next().is_some_and(|c| c.is_ascii_digit());
        if !is_rc {
            return (title[..i].to_string(), rest.to_string());
        }
        search = i + 1;
    }
    (title.to_string(), String::new())
}

/// The comparison table of `rows` under column `titles` (baseline first), newline-terminated.
/// Rows with fewer values than titles leave the missing cells blank. A NaN value (a figure a
/// run does not have) prints as `n/a`, and so does its change, and every change of a row
/// whose baseline is NaN.
pub fn compare_table(titles: &[String], rows: &[CompareRow]) -> String {
    let stat_w = rows.iter().map(|r| r.stat.len()).max().unwrap_or(0);
    let op_w = rows.iter().map(|r| r.op.len()).max().unwrap_or(0);
    let label_w = stat_w + 1 + op_w;
    let mut out = String::new();
    let heads: Vec<(String, String)> = titles.iter().map(|t| split_title(t)).collect();
    for row in 0..2 {
        let mut line = " ".repeat(label_w);
        for (a, b) in &heads {
            let cell = if row == 0 { a } else { b };
            let _ = write!(line, "{cell:>COLUMN_WIDTH$}");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for r in rows {
        let _ = write!(out, "{:<stat_w$} {:<op_w$}", r.stat, r.op);
        let base = r.values.first().copied().unwrap_or(0.0);
        for &v in &r.values {
            if v.is_nan() {
                let _ = write!(out, "{:>VALUE_WIDTH$} ({:>7}) ", "n/a", "n/a");
            } else if base.is_nan() {
                let _ = write!(out, "{v:VALUE_WIDTH$.2} ({:>7}) ", "n/a");
            } else {
                let pct = percent_change(base, v, r.higher_is_better);
                let _ = write!(out, "{v:VALUE_WIDTH$.2} ({pct:7.2}%)");
            }
        }
        out.push('\n');
    }
    out
}

fn amean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn hmean(v: &[f64]) -> f64 {
    if v.is_empty() || v.iter().any(|&x| x <= 0.0) {
        0.0
    } else {
        v.len() as f64 / v.iter().map(|x| 1.0 / x).sum::<f64>()
    }
}

fn stddev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = amean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// mmtests' Multiops statistic rows for operation `op`, one column per sample set:
/// Min, Hmean (higher-is-better) or Amean, Stddev, CoeffVar, Max, and the mean of the best
/// 95% of samples (BHmean-95 / BAmean-95). Stddev and CoeffVar always compare as
/// lower-is-better. Choice: the spread rows are the ordinary sample standard deviation
/// (N - 1) and its ratio to the mean, for both mean kinds.
pub fn summary_rows(op: &str, columns: &[Vec<f64>], higher_is_better: bool) -> Vec<CompareRow> {
    let mean = |v: &[f64]| {
        if higher_is_better {
            hmean(v)
        } else {
            amean(v)
        }
    };
    let best95 = |v: &[f64]| {
        let mut sorted = v.to_vec();
        sorted.sort_by(|a, b| a.total_cmp(b));
        if higher_is_better {
            sorted.reverse();
        }
        let keep = (sorted.len() * 95 / 100).max(1).min(sorted.len());
        mean(&sorted[..keep])
    };
    let (mean_name, best_name) = if higher_is_better {
        ("Hmean", "BHmean-95")
    } else {
        ("Amean", "BAmean-95")
    };
    let row = |stat: &str, hib: bool, f: &dyn Fn(&[f64]) -> f64| CompareRow {
        stat: stat.to_string(),
        op: op.to_string(),
        higher_is_better: hib,
        values: columns.iter().map(|c| f(c)).collect(),
    };
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    vec![
        row("Min", higher_is_better, &|v| finite(min(v))),
        row(mean_name, higher_is_better, &mean),
        row("Stddev", false, &stddev),
        row("CoeffVar", false, &|v| {
            let m = mean(v);
            if m == 0.0 {
                0.0
            } else {
                stddev(v) * 100.0 / m
            }
        }),
        row("Max", higher_is_better, &|v| finite(max(v))),
        row(best_name, higher_is_better, &best95),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_percent_means_better_in_both_directions() {
        // formats.md §4: throughput 1266.02 -> 1278.55 is +0.99%; latency 10.41 -> 10.80 is -3.75%.
        assert!((percent_change(1266.02, 1278.55, true) - 0.9897).abs() < 1e-3);
        assert!((percent_change(10.41, 10.80, false) - -3.7464).abs() < 1e-3);
        assert_eq!(percent_change(5.0, 5.0, true), 0.0);
        assert_eq!(percent_change(0.0, 3.0, true), 100.0);
        assert_eq!(percent_change(4.0, 0.0, true), 0.0);
        assert_eq!(percent_change(0.0, 3.0, false), -99.0);
        assert_eq!(percent_change(4.0, 0.0, false), 100.0);
    }

    /// A figure a run lacks is n/a, and so is every change against a missing baseline.
    #[test]
    fn missing_values_print_as_n_a() {
        let rows = [CompareRow {
            stat: "IOPS".into(),
            op: "late".into(),
            higher_is_better: true,
            values: vec![f64::NAN, 5.0, f64::NAN],
        }];
        let titles = ["a".to_string(), "b".to_string(), "c".to_string()];
        let table = compare_table(&titles, &rows);
        let line = table.lines().nth(2).unwrap();
        assert_eq!(
            line,
            "IOPS late         n/a (    n/a)         5.00 (    n/a)          n/a (    n/a) "
        );
    }

    #[test]
    fn titles_split_at_first_dash_keeping_rc() {
        assert_eq!(split_title("4.19-cfq"), ("4.19".into(), "cfq".into()));
        assert_eq!(split_title("5.0-rc3-bfq"), ("5.0-rc3".into(), "bfq".into()));
        assert_eq!(split_title("baseline"), ("baseline".into(), "".into()));
        assert_eq!(split_title("a-b-c"), ("a".into(), "b-c".into()));
    }

    #[test]
    fn table_matches_the_documented_layout() {
        let rows = vec![
            CompareRow {
                stat: "Min".into(),
                op: "tput-1".into(),
                higher_is_better: true,
                values: vec![1201.33, 1230.10],
            },
            CompareRow {
                stat: "Hmean".into(),
                op: "tput-1".into(),
                higher_is_better: true,
                values: vec![1266.02, 1278.55],
            },
            CompareRow {
                stat: "HCoeffVar".into(),
                op: "tput-1".into(),
                higher_is_better: false,
                values: vec![3.25, 2.40],
            },
        ];
        let t = compare_table(&["4.19-cfq".to_string(), "4.19-bfq".to_string()], &rows);
        let expected = [
            "                                   4.19                   4.19",
            "                                    cfq                    bfq",
            "Min       tput-1     1201.33 (   0.00%)     1230.10 (   2.39%)",
            "Hmean     tput-1     1266.02 (   0.00%)     1278.55 (   0.99%)",
            "HCoeffVar tput-1        3.25 (   0.00%)        2.40 (  26.15%)",
        ];
        assert_eq!(t.lines().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn summary_rows_use_hmean_for_throughput_and_amean_for_latency() {
        let cols = vec![vec![100.0, 200.0], vec![100.0, 100.0]];
        let rows = summary_rows("tput-1", &cols, true);
        let names: Vec<&str> = rows.iter().map(|r| r.stat.as_str()).collect();
        assert_eq!(
            names,
            ["Min", "Hmean", "Stddev", "CoeffVar", "Max", "BHmean-95"]
        );
        assert!((rows[1].values[0] - 133.333_333).abs() < 1e-5);
        assert!(!rows[2].higher_is_better);
        // Best 95% of two samples is the best one.
        assert_eq!(rows[5].values[0], 200.0);
        let lat = summary_rows("read", &cols, false);
        assert_eq!(lat[1].stat, "Amean");
        assert_eq!(lat[1].values[0], 150.0);
        assert_eq!(lat[5].values[0], 100.0);
    }
}
