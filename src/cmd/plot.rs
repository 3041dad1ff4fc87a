//! `iosched plot RUN.json... --out DIR`: charts of any runs' fio JSON results (simulated,
//! engine or `iosched kernel`), one colour per run.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Context};
use clap::Args;
use iosched_report::run_plot::{plot_runs, RunFigures};
use iosched_workload::input::{read_text, InputKind};

use super::{CmdResult, Failure};

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// Result files in fio JSON (`--output-format json`).
    #[arg(required = true, value_name = "RESULT.json")]
    files: Vec<PathBuf>,
    /// Folder for the charts (`throughput`, `latency`, `shares`, `writeback`; PNG and SVG).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Legend names of the runs, comma-separated (default: the file names without `.json`).
    #[arg(long, value_delimiter = ',')]
    titles: Vec<String>,
}

pub fn plot(args: PlotArgs) -> CmdResult {
    if !args.titles.is_empty() && args.titles.len() != args.files.len() {
        return Err(Failure::input(anyhow!(
            "--titles: {} titles for {} files",
            args.titles.len(),
            args.files.len()
        )));
    }
    let mut runs = Vec::with_capacity(args.files.len());
    for (index, file) in args.files.iter().enumerate() {
        let label = args.titles.get(index).cloned().unwrap_or_else(|| {
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let text = read_text(file, InputKind::Results).map_err(Failure::input)?;
        let json = serde_json::from_str(&text)
            .with_context(|| format!("{}: not JSON", file.display()))
            .map_err(Failure::input)?;
        let run = RunFigures::from_json(&label, &json)
            .map_err(|e| Failure::input(anyhow!("{}: {e}", file.display())))?;
        runs.push(run);
    }
    let written = plot_runs(&runs, &args.out).map_err(|e| Failure::run(anyhow!(e)))?;
    // A closed pipe ends the listing quietly instead of panicking in println!.
    let mut stdout = std::io::stdout().lock();
    for path in written {
        if writeln!(stdout, "{}", path.display()).is_err() {
            break;
        }
    }
    Ok(())
}
