//! `iosched reproduce [SEED...]`: the seed experiments in simulation, beside the seeds'
//! published figures.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosched_lab::reproduce::render::{self, PlotError};
use iosched_lab::reproduce::{self, Length, Options, Report};

use super::{CmdResult, Failure};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReproduceFormat {
    Normal,
    Json,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Seeds to run ("000" ... "004"); all when none are given.
    #[arg(value_name = "SEED")]
    seeds: Vec<String>,
    #[arg(long, value_enum, default_value = "normal")]
    output_format: ReproduceFormat,
    /// Simulations run at once (default, or 0: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// The scenarios folder (default: ./scenarios, else the one in the source tree).
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,
    /// Run the short variant of every scenario (seconds of simulated time; for smoke tests).
    #[arg(long)]
    short: bool,
    /// Write one PNG and one SVG per table into this folder.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Seed of the simulations' random streams.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn scenarios_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.unwrap_or_else(|| {
        let here = PathBuf::from("scenarios");
        if here.is_dir() {
            here
        } else {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
        }
    })
}

pub fn run(args: ReproduceArgs) -> CmdResult {
    let stop = super::stop::install();
    let dir = scenarios_dir(args.scenarios);
    let scenarios = reproduce::load(&dir, &args.seeds).map_err(Failure::input)?;
    let options = Options {
        length: if args.short {
            Length::Short
        } else {
            Length::Full
        },
        seed: args.seed,
        // 0: one worker per available CPU.
        jobs: args.jobs.unwrap_or(0),
    };
    let progress = indicatif::ProgressBar::new(reproduce::simulation_count(&scenarios) as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} simulations {msg}")
            .expect("static template"),
    );
    let report = reproduce::run(&scenarios, &options, &|| progress.inc(1), stop);
    progress.finish_and_clear();
    let Report {
        results,
        verdicts,
        interrupted,
    } = report.map_err(Failure::run)?;
    if let Some(dir) = &args.plot {
        render::write_plots(dir, &scenarios, &results, &verdicts).map_err(|error| match error {
            PlotError::Folder { .. } => Failure::input(anyhow!("--plot {error}")),
            PlotError::Write(_) => Failure::run(anyhow!("--plot: {error}")),
        })?;
    }
    let text = match args.output_format {
        ReproduceFormat::Normal => {
            let mut text = render::text(&scenarios, &results, &verdicts);
            if interrupted {
                text.push_str(render::INTERRUPTED_NOTE);
                text.push('\n');
            }
            text
        }
        ReproduceFormat::Json => {
            let mut json = render::json(&scenarios, &results, &verdicts);
            if interrupted {
                // Only when set, as `iosched run` marks its results.
                json["interrupted"] = true.into();
            }
            serde_json::to_string_pretty(&json).expect("JSON values serialise") + "\n"
        }
    };
    super::print_out(&text)?;
    super::stop::status(interrupted)
}
