//! Does our simulation tell the seed's story? For each comparison: the seed's ratio, ours,
//! whether ours points the same way, and whether it lands within ±25 % of the seed's.

use super::scenario::{Comparison, Scenario};
use super::RowResult;

/// A ratio within this fraction of 1 counts as "no change" when judging direction.
const FLAT: f64 = 0.03;

/// The judgement of one comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub seed: String,
    pub name: String,
    pub seed_ratio: f64,
    pub ratio: f64,
    pub direction_ok: bool,
    pub within_25pct: bool,
    /// The scenario's reason when this comparison is not a headline one.
    pub aside: Option<String>,
}

impl Verdict {
    /// A comparison the seed's story rests on (no `aside` in the scenario).
    pub fn headline(&self) -> bool {
        self.aside.is_none()
    }
}

fn direction(ratio: f64) -> i8 {
    if ratio > 1.0 + FLAT {
        1
    } else if ratio < 1.0 - FLAT {
        -1
    } else {
        0
    }
}

fn lookup(
    scenario: &Scenario,
    results: &[RowResult],
    comparison: &Comparison,
    label: &str,
    column: Option<&String>,
) -> Option<(f64, f64)> {
    let table = scenario.table(&comparison.table)?;
    let column_index = match column {
        Some(header) => table.columns.iter().position(|c| &c.header == header)?,
        None => 0,
    };
    let row_index = table.rows.iter().position(|row| row.label == label)?;
    let seed_value = table.rows[row_index].seed_values[column_index]?;
    let ours = results
        .iter()
        .find(|r| r.seed == scenario.seed && r.table == table.id && r.label == label)?
        .values[column_index];
    Some((seed_value, ours))
}

/// Judges every comparison of `scenario` whose rows were run.
pub fn judge(scenario: &Scenario, results: &[RowResult]) -> Vec<Verdict> {
    scenario
        .comparisons
        .iter()
        .filter_map(|comparison| {
            let a = lookup(
                scenario,
                results,
                comparison,
                &comparison.a,
                comparison.column.as_ref(),
            )?;
            let b_column = comparison.b_column.as_ref().or(comparison.column.as_ref());
            let b = lookup(scenario, results, comparison, &comparison.b, b_column)?;
            let seed_ratio = a.0 / b.0;
            let ratio = a.1 / b.1;
            Some(Verdict {
                seed: scenario.seed.clone(),
                name: comparison.name.clone(),
                seed_ratio,
                ratio,
                // A ratio of nothing over nothing (0/0) has no direction.
                direction_ok: ratio.is_finite() && direction(seed_ratio) == direction(ratio),
                within_25pct: ratio.is_finite() && (ratio / seed_ratio - 1.0).abs() <= 0.25,
                aside: comparison.aside.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_ratios_have_no_direction() {
        assert_eq!(direction(1.02), 0);
        assert_eq!(direction(0.5), -1);
        assert_eq!(direction(1.5), 1);
    }
}
