//! `iosched compare A.json B.json ...`: results of several runs side by side in one
//! mmtests-style table, the first file as the baseline.
//!
//! Any fio JSON works (the simulator's, the engine's, `iosched kernel`'s or fio's own). Per
//! job: bandwidth and IOPS (reads plus writes plus trims), and the completion-latency median
//! and 99th percentile of its busier direction; per cgroup, when the `iosched` object has
//! them, the share of bytes beside the share its weight entitles it to; and the totals. Jobs
//! are matched by name (a repeated name by its occurrence: `name#2`).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::Args;
use iosched_report::compare::{read_run, rows};
use iosched_report::mmtests::compare_table;

use super::{CmdResult, Failure};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Result files in fio JSON (`--output-format json`); the first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "RESULT.json")]
    files: Vec<PathBuf>,
    /// Column titles, comma-separated (default: the file names without `.json`).
    #[arg(long, value_delimiter = ',')]
    titles: Vec<String>,
}

fn title_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".json").to_string())
        .unwrap_or_default()
}

pub fn compare(args: CompareArgs) -> CmdResult {
    let mut runs = Vec::new();
    for path in &args.files {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}", path.display()))
            .map_err(Failure::input)?;
        let run =
            read_run(&text).map_err(|why| Failure::input(anyhow!("{}: {why}", path.display())))?;
        runs.push(run);
    }
    let titles: Vec<String> = if args.titles.is_empty() {
        args.files.iter().map(|p| title_of(p)).collect()
    } else if args.titles.len() == args.files.len() {
        args.titles.clone()
    } else {
        return Err(Failure::input(anyhow!(
            "--titles has {} names for {} files",
            args.titles.len(),
            args.files.len()
        )));
    };
    super::print_out(&compare_table(&titles, &rows(&runs)))
}
