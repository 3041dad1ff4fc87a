//! `iosched reproduce [SEED...]`: the seed experiments in simulation, beside the seeds'
//! published figures.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::anyhow;
use clap::{Args, ValueEnum};
use iosched_sim::reproduce::{self, render, scenario, verdict, Length, RowResult};

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
    /// Simulations run at once (default: all cores).
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
    let dir = scenarios_dir(args.scenarios);
    let mut scenarios = scenario::load_all(&dir).map_err(Failure::input)?;
    if !args.seeds.is_empty() {
        for wanted in &args.seeds {
            if !scenarios.iter().any(|s| &s.seed == wanted) {
                let known: Vec<&str> = scenarios.iter().map(|s| s.seed.as_str()).collect();
                return Err(Failure::input(anyhow!(
                    "no scenario for seed '{wanted}' in {} (have: {})",
                    dir.display(),
                    known.join(", ")
                )));
            }
        }
        scenarios.retain(|s| args.seeds.contains(&s.seed));
    }
    let length = if args.short {
        Length::Short
    } else {
        Length::Full
    };
    let work = reproduce::runs(&scenarios);
    let workers = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, work.len().max(1));

    let progress = indicatif::ProgressBar::new(work.len() as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} simulations {msg}")
            .expect("static template"),
    );
    type Values = Result<Vec<(usize, f64)>, String>;
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<Values>>> = Mutex::new(vec![None; work.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(run) = work.get(index) else {
                    break;
                };
                let scenario = &scenarios[run.scenario];
                let table = &scenario.tables[run.table];
                let group = &reproduce::column_groups(table)[run.group];
                let result = reproduce::run_group(
                    scenario,
                    table,
                    &table.rows[run.row],
                    group,
                    length,
                    args.seed,
                );
                slots.lock().expect("no worker panics holding the lock")[index] = Some(result);
                progress.inc(1);
            });
        }
    });
    progress.finish_and_clear();

    // Runs are in print order, a row's groups together: fold them into rows.
    let mut results: Vec<RowResult> = Vec::new();
    for (run, slot) in work
        .iter()
        .zip(slots.into_inner().expect("workers finished"))
    {
        let values = slot
            .expect("every simulation ran")
            .map_err(|error| Failure::run(anyhow!(error)))?;
        let scenario = &scenarios[run.scenario];
        let table = &scenario.tables[run.table];
        if run.group == 0 {
            results.push(RowResult {
                seed: scenario.seed.clone(),
                table: table.id.clone(),
                label: table.rows[run.row].label.clone(),
                values: vec![0.0; table.columns.len()],
            });
        }
        let row = results.last_mut().expect("group 0 comes first");
        for (index, value) in values {
            row.values[index] = value;
        }
    }
    let verdicts: Vec<verdict::Verdict> = scenarios
        .iter()
        .flat_map(|scenario| verdict::judge(scenario, &results))
        .collect();
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::input(anyhow!("--plot {}: {e}", dir.display())))?;
        for (name, table) in render::plot_tables(&scenarios, &results) {
            iosched_report::plot::write_table(&dir.join(name), &table)
                .map_err(|e| Failure::run(anyhow!("--plot: {e}")))?;
        }
    }
    match args.output_format {
        ReproduceFormat::Normal => print!("{}", render::text(&scenarios, &results, &verdicts)),
        ReproduceFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&render::json(&scenarios, &results, &verdicts))
                .expect("JSON values serialise")
        ),
    }
    Ok(())
}
