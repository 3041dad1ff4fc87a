//! `iosched sweep SPEC.toml`: every combination of the spec's job files, devices,
//! schedulers, settings, variables and seeds, run as `iosched run` runs each, in parallel,
//! written as one tidy table (CSV or JSON lines) and, with `--out`, a line chart.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosched_lab::sweep::{self, table, SweepSpec};

use super::{CmdResult, Eta, Failure};

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
}

pub fn run(args: SweepArgs) -> CmdResult {
    let stop = super::stop::install();
    let spec = SweepSpec::load(&args.spec).map_err(Failure::input)?;
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .map_err(|e| Failure::input(anyhow!("--out {}: {e}", out.display())))?;
    }
    let bar = progress_bar(&spec, args.eta);
    let swept = sweep::run(&spec, args.jobs.unwrap_or(0), &|| bar.inc(1), stop);
    bar.finish_and_clear();
    let swept = swept.map_err(|error| {
        if error.is_input() {
            Failure::input(error)
        } else {
            Failure::run(error)
        }
    })?;
    let text = match args.output_format {
        SweepFormat::Csv => table::csv(&spec, &swept),
        SweepFormat::Json => table::json_lines(&spec, &swept),
    };
    if let Some(out) = &args.out {
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
        write("sweep.csv", &table::csv(&spec, &swept))?;
        write("sweep.jsonl", &table::json_lines(&spec, &swept))?;
        iosched_report::sweep_plot::write_lines(&out.join("sweep"), &table::chart(&spec, &swept))
            .map_err(|e| Failure::run(anyhow!("--out {e}")))?;
    }
    super::print_out(&text)?;
    super::stop::status(swept.interrupted)
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
