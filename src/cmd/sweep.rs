//! `iosched sweep SPEC.toml`: every combination of the spec's job files, devices,
//! schedulers, settings, variables and seeds, run as `iosched run` runs each, in parallel,
//! written as one tidy table (CSV or JSON lines) and, with `--out`, a line chart.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosched_lab::sweep::{self, table, SweepSpec};

use super::{CmdResult, Eta, Failure};

mod dask;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SweepFormat {
    Csv,
    Json,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep, in TOML (see `examples/group-idle.toml`).
    #[arg(value_name = "SPEC.toml")]
    spec: PathBuf,
    /// Write `sweep.csv`, `sweep.jsonl` and the chart `sweep.png`/`sweep.svg` here.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The table on standard output: CSV, or JSON lines (one object per row).
    #[arg(long, value_enum, default_value = "csv")]
    output_format: SweepFormat,
    /// Runs at once (default, or 0: one per CPU).
    #[arg(long)]
    jobs: Option<usize>,
    /// Progress bar with done/total and ETA on stderr.
    #[arg(long, value_enum, default_value = "auto")]
    eta: Eta,
    /// Run the points on a Dask cluster (its scheduler's address, `tcp://HOST:8786`) through
    /// the Python package (`pip install .`; the interpreter is `$IOSCHED_PYTHON`, else
    /// `python3`).
    #[arg(long, value_name = "ADDRESS", conflicts_with = "jobs")]
    dask: Option<String>,
}

pub fn run(args: SweepArgs) -> CmdResult {
    let stop = super::stop::install();
    let spec = SweepSpec::load(&args.spec).map_err(Failure::input)?;
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .map_err(|e| Failure::input(anyhow!("--out {}: {e}", out.display())))?;
    }
    let swept = match &args.dask {
        Some(address) => dask::run(&args.spec, &spec, address, args.eta)?,
        None => run_here(&spec, &args, stop)?,
    };
    let text = match args.output_format {
        SweepFormat::Csv => table::csv(&spec, &swept),
        SweepFormat::Json => table::json_lines(&spec, &swept),
    };
    if let Some(out) = &args.out {
        write_out(out, &spec, &swept)?;
    }
    super::print_out(&text)?;
    super::stop::status(swept.interrupted)
}

/// The points on this machine's cores: the pilots first (one per scheduler and device), for
/// the estimate printed before the rest start ([`sweep::estimate`]), then the others.
fn run_here(
    spec: &SweepSpec,
    args: &SweepArgs,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<sweep::Swept, Failure> {
    let failure = |error: sweep::SweepError| {
        if error.is_input() {
            Failure::input(error)
        } else {
            Failure::run(error)
        }
    };
    let specs = sweep::specs(spec).map_err(failure)?;
    let bar = progress_bar(spec, args.eta);
    let workers = args.jobs.unwrap_or(0);
    let pilot = sweep::estimate::pilot(spec, &specs, workers, stop).map_err(failure)?;
    bar.suspend(|| eprintln!("iosched: {}", pilot.estimate));
    bar.inc(pilot.done.len() as u64);
    let swept = sweep::run_rest(spec, &specs, pilot.done, workers, &|| bar.inc(1), stop);
    bar.finish_and_clear();
    swept.map_err(failure)
}

/// `--out DIR`: the table as CSV and JSON lines, and the chart.
fn write_out(out: &std::path::Path, spec: &SweepSpec, swept: &sweep::Swept) -> CmdResult {
    let write = |name: &str, text: &str| {
        let path = out.join(name);
        // sweep has no --force: a path the gate refuses is never written.
        iosched_gate::write_file(&path, text.as_bytes(), false).map_err(|e| {
            let input = e.is_input();
            let error = anyhow!("--out {e}");
            if input {
                Failure::input(error)
            } else {
                Failure::run(error)
            }
        })
    };
    write("sweep.csv", &table::csv(spec, swept))?;
    write("sweep.jsonl", &table::json_lines(spec, swept))?;
    iosched_report::sweep_plot::write_lines(&out.join("sweep"), &table::chart(spec, swept))
        .map_err(|e| Failure::run(anyhow!("--out {e}")))?;
    Ok(())
}

fn progress_bar(spec: &SweepSpec, eta: Eta) -> indicatif::ProgressBar {
    let total = spec.point_count() as u64;
    if !eta.shown() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    let what = if sweep::has_real_target(spec) {
        "runs"
    } else {
        "simulations"
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what}, {{elapsed}} elapsed, ETA {{eta}}"
        ))
        .expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(500));
    bar
}
