//! `iosched plot RUN.json... --out DIR`: charts of any runs' fio JSON results (simulated,
//! engine or `iosched kernel`), one colour per run.
//!
//! `iosched plot [RUN.json] --timeline --decisions FILE --trace FILE --out FILE.{png,svg,html}`:
//! the timeline of one run. A run's JSON does not hold its decisions or trace (they can be
//! gigabytes); it only titles the picture. The events come from the files `iosched run
//! --decisions` and `--trace` wrote (either alone will do), or from a kernel's trace.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Context};
use clap::Args;
use iosched_report::run_plot::{plot_runs, RunFigures};
use iosched_report::timeline::{self, layout::Window, TimelineError};
use iosched_workload::input::{read_bytes, read_text, InputKind};

use super::{CmdResult, Failure};

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// Result files in fio JSON (`--output-format json`); with `--timeline`, at most one,
    /// which titles the picture.
    #[arg(required_unless_present = "timeline", value_name = "RESULT.json")]
    files: Vec<PathBuf>,
    /// Folder for the charts (`throughput`, `latency`, `shares`, `writeback`; PNG and SVG);
    /// with `--timeline`, the file to write, whose extension picks PNG, SVG or HTML (a page
    /// that pans and zooms, with no server).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Draw the timeline of one run: a lane per queue and per cgroup, slices, requests, idle
    /// windows (used or wasted, and why armed), preemptions, and each request's sector.
    #[arg(long)]
    timeline: bool,
    /// Timeline: the run's decision log (`iosched run --decisions`).
    #[arg(long, value_name = "FILE", requires = "timeline")]
    decisions: Option<PathBuf>,
    /// Timeline: the run's trace (`iosched run --trace`: blkparse text or a `.blktrace.0`
    /// binary), or a kernel run's (blktrace binary, blkparse text or ftrace block events).
    #[arg(long, value_name = "FILE", requires = "timeline")]
    trace: Option<PathBuf>,
    /// Timeline: start of the window shown, in ms on the decision log's clock (its `t_ns`),
    /// or without one since the trace's first event.
    #[arg(long, value_name = "MS", requires = "timeline")]
    from: Option<f64>,
    /// Timeline: end of the window shown, in ms.
    #[arg(long, value_name = "MS", requires = "timeline")]
    to: Option<f64>,
    /// Legend names of the runs, comma-separated (default: the file names without `.json`).
    #[arg(long, value_delimiter = ',')]
    titles: Vec<String>,
}

pub fn plot(args: PlotArgs) -> CmdResult {
    if args.timeline {
        return timeline(args);
    }
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

/// `--timeline`: one run's decisions and trace drawn into `--out`.
fn timeline(args: PlotArgs) -> CmdResult {
    if args.files.len() > 1 {
        return Err(Failure::input(anyhow!(
            "--timeline draws one run: {} result files given",
            args.files.len()
        )));
    }
    if timeline::Format::of(&args.out).is_none() {
        return Err(Failure::input(anyhow!(
            "--out {}: with --timeline the extension says what to write: .png, .svg or .html",
            args.out.display()
        )));
    }
    if args.decisions.is_none() && args.trace.is_none() {
        return Err(Failure::input(anyhow!(
            "--timeline needs the run's --decisions FILE or --trace FILE (a run's JSON does not hold them)"
        )));
    }
    let window = Window {
        from_ns: window_ns("--from", args.from)?,
        to_ns: window_ns("--to", args.to)?,
    };
    let decisions = match &args.decisions {
        Some(path) => Some((
            path,
            read_text(path, InputKind::Capture).map_err(Failure::input)?,
        )),
        None => None,
    };
    let trace = match &args.trace {
        Some(path) => Some((
            path,
            read_bytes(path, InputKind::Capture).map_err(Failure::input)?,
        )),
        None => None,
    };
    let model = timeline::build(
        decisions.as_ref().map(|(p, t)| (p.as_path(), t.as_str())),
        trace.as_ref().map(|(p, b)| (p.as_path(), b.as_slice())),
    )
    .map_err(Failure::input)?;
    let title = match args.files.first() {
        Some(file) => run_title(file)?,
        None => args
            .decisions
            .iter()
            .chain(&args.trace)
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" + "),
    };
    timeline::write(
        &model,
        &format!("Timeline: {title}"),
        window,
        &args.out,
        false,
    )
    .map_err(|e| match e {
        TimelineError::Output(_) => Failure::run(e),
        e => Failure::input(e),
    })?;
    let _ = writeln!(std::io::stdout().lock(), "{}", args.out.display());
    Ok(())
}

/// `--from`/`--to` in ms as ns on the timeline's clock.
fn window_ns(flag: &str, ms: Option<f64>) -> Result<Option<u64>, Failure> {
    match ms {
        None => Ok(None),
        Some(ms) if ms.is_finite() && (0.0..1e12).contains(&ms) => {
            Ok(Some((ms * 1e6).round() as u64))
        }
        Some(ms) => Err(Failure::input(anyhow!(
            "{flag} {ms}: expected milliseconds from 0"
        ))),
    }
}

/// "cfq on hdd-7200: r1, r2" from a run's fio JSON and its `iosched` object.
fn run_title(file: &std::path::Path) -> Result<String, Failure> {
    let text = read_text(file, InputKind::Results).map_err(Failure::input)?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not JSON", file.display()))
        .map_err(Failure::input)?;
    let iosched = json.get("iosched").ok_or_else(|| {
        Failure::input(anyhow!(
            "{}: no 'iosched' object: not a result of iosched",
            file.display()
        ))
    })?;
    let text_of =
        |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).unwrap_or("?").to_string();
    let jobs: Vec<String> = json["jobs"]
        .as_array()
        .map(|jobs| jobs.iter().map(|j| text_of(j.get("jobname"))).collect())
        .unwrap_or_default();
    Ok(format!(
        "{} on {}: {}",
        text_of(iosched.get("scheduler")),
        text_of(
            iosched
                .pointer("/device/name")
                .or_else(|| iosched.pointer("/device/path"))
        ),
        jobs.join(", ")
    ))
}
