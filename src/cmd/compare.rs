//! `iosched compare A.json B.json ...`: results of several runs side by side in one
//! mmtests-style table, the first file as the baseline.
//!
//! Any fio JSON works (the simulator's, the engine's, `iosched kernel`'s or fio's own). Per
//! job: bandwidth and IOPS (reads plus writes plus trims), and the completion-latency median
//! and 99th percentile of its busier direction; per cgroup, when some run has cgroups, the
//! share of bytes, beside the share its weight entitles it to for schedulers that aim at
//! weights; and the totals. Jobs are matched by name (a repeated name by its occurrence:
//! `name#2`); a figure a run lacks is n/a. `--output-format csv|json` gives the same table as
//! data, `--plot DIR` the charts of `iosched plot`.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosched_report::compare::{self, read_run, rows, LEGEND};
use iosched_report::mmtests::compare_table;
use iosched_report::run_plot::{plot_runs, RunFigures};
use iosched_workload::input::{read_text, InputKind};

use super::{CmdResult, Failure};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// mmtests' table, with a legend for the signs.
    Normal,
    /// `stat,op,run,value,change_pct`, a line per row and run.
    Csv,
    /// `{"runs": [...], "rows": [...]}`.
    Json,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Result files in fio JSON (`--output-format json`); the first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "RESULT.json")]
    files: Vec<PathBuf>,
    /// Column titles, comma-separated (default: the file names without `.json`).
    #[arg(long, value_delimiter = ',')]
    titles: Vec<String>,
    #[arg(long, value_enum, default_value = "normal")]
    output_format: CompareFormat,
    /// Also draw the runs' charts (throughput, latency, shares, page cache) into this folder.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
}

fn title_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".json").to_string())
        .unwrap_or_default()
}

pub fn compare(args: CompareArgs) -> CmdResult {
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
    let mut runs = Vec::new();
    let mut charts = Vec::new();
    for (path, title) in args.files.iter().zip(&titles) {
        let text = read_text(path, InputKind::Results).map_err(Failure::input)?;
        let run =
            read_run(&text).map_err(|why| Failure::input(anyhow!("{}: {why}", path.display())))?;
        runs.push(run);
        if args.plot.is_some() {
            // read_run accepted it, so it parses from its first `{`.
            let json = serde_json::from_str(&text[text.find('{').unwrap_or(0)..])
                .map_err(|e| Failure::input(anyhow!("{}: {e}", path.display())))?;
            let chart = RunFigures::from_json(title, &json)
                .map_err(|e| Failure::input(anyhow!("{}: {e}", path.display())))?;
            charts.push(chart);
        }
    }
    if let Some(dir) = &args.plot {
        plot_runs(&charts, dir).map_err(|e| Failure::run(anyhow!("--plot: {e}")))?;
    }
    let rows = rows(&runs);
    let text = match args.output_format {
        CompareFormat::Normal => format!("{}\n{LEGEND}", compare_table(&titles, &rows)),
        CompareFormat::Csv => compare::csv(&titles, &rows),
        CompareFormat::Json => format!("{:#}\n", compare::json(&titles, &rows)),
    };
    super::print_out(&text)
}
