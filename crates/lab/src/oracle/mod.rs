//! The kernel's own blk-mq schedulers as the oracle for iosched's.
//!
//! A scenario file (format in [`scenario`]) runs twice: through the kernel's scheduler,
//! compiled unmodified from Debian's `linux-source-6.12` against the project's user-space
//! shim and driven by the project's C driver (`oracle/`, [`kernel`]), and through core's
//! scheduler under the same block-layer model ([`harness`]). Both print one line per
//! decision, and the two outputs must be identical:
//!
//! ```text
//! Q T BIO PID R|W SECTOR SECTORS   a bio arrives          S T NAME SHOWN   tunable stored
//! M T BIO RQ B|F                   bio merged (back/front) W T BIO         waits for a tag
//! A T NEXT RQ                      request NEXT merged into RQ
//! I T RQ                           request inserted        D T RQ SECTOR SECTORS  dispatched
//! C T RQ                           completed               R T             queue re-run
//! X T PID                          process exits
//! K T latency|adjust|throttled ... kyber's tracepoints (kyber_latency, kyber_adjust,
//!                                  kyber_throttled), their text without the device
//! T T AT                           a timer armed or moved to expire at AT
//! F T                              a timer fires
//! ```
//! Times are absolute ns (scenario time + origin); request ids are their first bio's.
//!
//! BFQ adds (format in `oracle/README.md`):
//!
//! ```text
//! H T arm EXPIRES    idle timer armed        H T cancel   a pending expiry cancelled
//! H T fire           the idle timer's function runs
//! L T CGROUP MSG     a bfq_log message (CGROUP `-` for bfq_log, else the queue's cgroup)
//! S T bfq.weight@PATH W     a cgroup's bfq.weight written (`cgweight`)
//! ```

mod draw;
pub mod generate;
pub mod generate_bfq;
pub mod harness;
pub mod kernel;
pub mod sanity;
pub mod scenario;

use std::path::{Path, PathBuf};

/// Where two outputs part: the line index, a few lines before it, and both sides' line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    pub line: usize,
    pub context: Vec<String>,
    pub kernel: Option<String>,
    pub iosched: Option<String>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "  first difference at line {}:", self.line + 1)?;
        for c in &self.context {
            writeln!(f, "    both:    {c}")?;
        }
        let side = |s: &Option<String>| s.clone().unwrap_or_else(|| "(end)".into());
        writeln!(f, "    kernel:  {}", side(&self.kernel))?;
        write!(f, "    iosched: {}", side(&self.iosched))
    }
}

/// Lines of context shown before a divergence.
const CONTEXT: usize = 6;

/// The first line where `kernel` and `iosched` differ, if any.
pub fn first_divergence(kernel: &str, iosched: &str) -> Option<Divergence> {
    let (k, i): (Vec<&str>, Vec<&str>) = (kernel.lines().collect(), iosched.lines().collect());
    let at = (0..k.len().max(i.len())).find(|&n| k.get(n) != i.get(n))?;
    Some(Divergence {
        line: at,
        context: k[at.saturating_sub(CONTEXT)..at]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        kernel: k.get(at).map(|s| s.to_string()),
        iosched: i.get(at).map(|s| s.to_string()),
    })
}

/// One scenario's result.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub name: String,
    pub lines: usize,
    pub divergence: Option<Divergence>,
}

/// Whether iosched's core has `sched`, so that the oracle can compare against it.
pub fn core_has(sched: &str) -> bool {
    matches!(sched, "mq-deadline" | "deadline" | "kyber" | "bfq")
}

/// Runs one scenario file through both sides: the kernel's `sched` (compiled into `bin`)
/// and core's.
pub fn compare_file(sched: &str, bin: &Path, path: &Path) -> Result<Outcome, String> {
    let sc = scenario::read_scenario(path).map_err(|e| e.to_string())?;
    let ours = harness::run_scenario(sched, &sc).map_err(|e| format!("{}: {e}", path.display()))?;
    let theirs = kernel::run_kernel(bin, path).map_err(|e| e.to_string())?;
    Ok(Outcome {
        name: path.display().to_string(),
        lines: theirs.lines().count(),
        divergence: first_divergence(&theirs, &ours),
    })
}

/// The `*.scn` files under `dir` (recursively), by name.
pub fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            out.extend(scenario_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "scn") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Writes generated scenarios `0..n` of `seed` for scheduler `sched` into `dir`; their paths.
pub fn write_generated(sched: &str, dir: &Path, seed: u64, n: u64) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    (0..n)
        .map(|i| {
            let path = dir.join(format!("gen-{seed}-{i:04}.scn"));
            let text = match sched {
                "bfq" => generate_bfq::scenario(seed, i),
                _ => generate::scenario_for(sched, seed, i),
            };
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// Runs every file through both sides on `jobs` workers, results in file order.
pub fn compare_all(
    sched: &str,
    bin: &Path,
    files: &[PathBuf],
    jobs: usize,
) -> Result<Vec<Outcome>, String> {
    crate::pool::map_in_order(files, jobs, |p| compare_file(sched, bin, p), || {})
        .into_iter()
        .collect()
}

/// The kernel side alone: each file's decision lines, in file order (the scenario is parsed
/// first, so both sides refuse the same files).
pub fn kernel_all(bin: &Path, files: &[PathBuf], jobs: usize) -> Result<Vec<String>, String> {
    let one = |p: &PathBuf| {
        scenario::read_scenario(p).map_err(|e| e.to_string())?;
        kernel::run_kernel(bin, p).map_err(|e| e.to_string())
    };
    crate::pool::map_in_order(files, jobs, one, || {})
        .into_iter()
        .collect()
}

/// `K of N scenarios identical`.
pub fn summary_line(outcomes: &[Outcome]) -> String {
    let same = outcomes.iter().filter(|o| o.divergence.is_none()).count();
    format!("{same} of {} scenarios identical", outcomes.len())
}

/// The CI verdict on a run of the hand-written files (the first `hand` outcomes) followed by
/// generated ones from `seed`: at least `min` scenarios, each with kernel decisions, every one
/// identical. Ok holds the line a test prints; Err names each differing scenario with its
/// first differing decision.
pub fn all_identical(
    outcomes: &[Outcome],
    hand: usize,
    seed: u64,
    min: usize,
) -> Result<String, String> {
    let hand = hand.min(outcomes.len());
    let same = |o: &[Outcome]| o.iter().filter(|o| o.divergence.is_none()).count();
    let line = format!(
        "hand-written: {} of {hand} identical; generated (seed {seed}): {} of {} identical; {}",
        same(&outcomes[..hand]),
        same(&outcomes[hand..]),
        outcomes.len() - hand,
        summary_line(outcomes),
    );
    if outcomes.len() < min {
        return Err(format!("only {} scenarios, {min} wanted", outcomes.len()));
    }
    if let Some(empty) = outcomes.iter().find(|o| o.lines == 0) {
        return Err(format!("{}: no kernel decisions", empty.name));
    }
    let differing: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.divergence.as_ref().map(|d| format!("{}:\n{d}", o.name)))
        .collect();
    if differing.is_empty() {
        Ok(line)
    } else {
        Err(format!(
            "{line}\n{} differ:\n{}",
            differing.len(),
            differing.join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A divergence names the first differing line, with the lines before it.
    #[test]
    fn first_divergence_shows_both_sides_with_context() {
        let kernel = "Q 1 1 1 R 0 8\nI 1 1\nD 1 1 0 8\nC 2 1\n";
        let ours = "Q 1 1 1 R 0 8\nI 1 1\nD 1 1 0 16\nC 2 1\n";
        let d = first_divergence(kernel, ours).expect("they differ");
        assert_eq!(d.line, 2);
        assert_eq!(d.context, ["Q 1 1 1 R 0 8", "I 1 1"]);
        assert_eq!(d.kernel.as_deref(), Some("D 1 1 0 8"));
        assert_eq!(d.iosched.as_deref(), Some("D 1 1 0 16"));
        assert!(first_divergence(kernel, kernel).is_none());
        let short = first_divergence(kernel, "Q 1 1 1 R 0 8\n").expect("shorter");
        assert_eq!((short.line, short.iosched), (1, None));
    }

    /// The CI verdict fails on a divergence, on a scenario without kernel lines and on too
    /// few scenarios, and counts hand-written and generated ones apart.
    #[test]
    fn all_identical_refuses_each_kind_of_failure() {
        let outcome = |name: &str, lines, differs: bool| Outcome {
            name: name.to_string(),
            lines,
            divergence: differs
                .then(|| first_divergence("D 1 1 0 8\n", "D 1 1 0 16\n"))
                .flatten(),
        };
        let good = [outcome("a", 3, false), outcome("b", 4, false)];
        let line = all_identical(&good, 1, 7, 2).expect("all identical");
        assert!(line.contains("hand-written: 1 of 1"), "{line}");
        assert!(line.contains("(seed 7): 1 of 1"), "{line}");
        assert!(all_identical(&good, 1, 7, 3).is_err());
        let silent = [outcome("a", 3, false), outcome("quiet", 0, false)];
        assert!(all_identical(&silent, 1, 7, 2)
            .unwrap_err()
            .contains("quiet"));
        let diverging = [outcome("a", 3, false), outcome("odd", 4, true)];
        let err = all_identical(&diverging, 1, 7, 2).unwrap_err();
        assert!(err.contains("odd:") && err.contains("1 differ"), "{err}");
    }

    /// The same seed and index give the same scenario; another index another one.
    #[test]
    fn generated_scenarios_are_reproducible_and_parse() {
        assert_eq!(generate::scenario(5, 3), generate::scenario(5, 3));
        assert_ne!(generate::scenario(5, 3), generate::scenario(5, 4));
        for i in 0..50 {
            let text = generate::scenario(9, i);
            scenario::parse_scenario(&text, Path::new("gen")).expect("generated text parses");
        }
    }
}
