//! `iosched calibrate DEVICE`: queue-depth sweeps and sequential runs on a device model, with
//! the published target beside each figure.

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use iosched_sim::device::calibrate::{
    calibrate_until_stopped, CalibrationOptions, CalibrationReport, TOLERANCE,
};
use iosched_sim::device::disksim;
use iosched_sim::device::file::load_device_file;
use iosched_sim::device::{preset, presets, Device};
use serde_json::{json, Value};

use super::{CmdResult, Failure};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CalibrateFormat {
    Normal,
    Json,
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// A device preset (see `iosched devices`) or a model file ending in .toml.
    #[arg(required_unless_present_any = ["disksim", "disksim_import"])]
    device: Option<String>,
    /// Replay DiskSim 4.0's drive validation traces on the converted drive models in DIR (by
    /// default the repository's) and print each drive's demerit beside DiskSim's.
    #[arg(long, value_name = "DIR", num_args = 0..=1, conflicts_with_all = ["disksim_import", "device"])]
    disksim: Option<Option<std::path::PathBuf>>,
    /// Convert the drives of DiskSim's `valid/` folder VALID into model files, traces and
    /// source copies under DIR (`--disksim-import VALID DIR`).
    #[arg(long, value_names = ["VALID", "DIR"], num_args = 2, conflicts_with = "device")]
    disksim_import: Option<Vec<std::path::PathBuf>>,
    #[arg(long, value_enum, default_value = "normal")]
    output_format: CalibrateFormat,
    /// Seed of the random offsets.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Completions per random-read loop (writes and the mix run more; sequential loops a
    /// quarter); more gives steadier figures. Each loop also stops at 60 s of simulated time.
    /// At most a million: each completion's latency is kept for the percentiles.
    #[arg(long, default_value_t = 4000, value_name = "N",
          value_parser = clap::value_parser!(u64).range(4..=1_000_000))]
    ops: u64,
}

fn to_json(report: &CalibrationReport) -> Value {
    let mut json = report_json(report);
    if report.interrupted {
        // Only when set, as `iosched run` marks its results.
        json["interrupted"] = true.into();
    }
    json
}

fn report_json(report: &CalibrationReport) -> Value {
    let measurements: Vec<Value> = report
        .measurements
        .iter()
        .map(|m| {
            json!({
                "pattern": m.spec.pattern.name(),
                "region": m.spec.region.name(),
                "queue_depth": m.spec.queue_depth,
                "block_bytes": m.spec.block_bytes,
                "value": m.value,
                "unit": m.unit,
                "mean_latency_us": m.result.mean_latency_us,
                "p50_latency_us": m.result.p50_latency_us,
                "p99_latency_us": m.result.p99_latency_us,
                "target": m.target.map(|(low, high)| json!({"low": low, "high": high})),
                "target_source": m.target_source,
                "within_target": m.within_target(),
                "published": m.target.is_some(),
            })
        })
        .collect();
    json!({
        "device": report.device,
        "targets_of": report.targets_of,
        "rotational": report.rotational,
        "queue_depth": report.queue_depth,
        "capacity_bytes": report.capacity_bytes,
        "measurements": measurements,
        "coverage": coverage_json(report),
        "unpublished": report.unpublished(),
        "sources": report
            .sources()
            .into_iter()
            .map(|(source, rows)| json!({"source": source, "rows": rows}))
            .collect::<Vec<Value>>(),
    })
}

/// `coverage`: rows, rows checked against a published figure (with their labels and whether
/// each is within it), and how a figure becomes a target.
fn coverage_json(report: &CalibrationReport) -> Value {
    let coverage = report.coverage();
    let checked: Vec<Value> = coverage
        .checked
        .iter()
        .map(|(row, within)| json!({"row": row, "within_target": within}))
        .collect();
    json!({
        "rows": coverage.rows,
        "checked": checked.len(),
        "within": coverage.within,
        "tolerance": TOLERANCE,
        "checked_rows": checked,
    })
}

/// `--disksim [DIR]`: one line per drive.
fn run_disksim(dir: Option<std::path::PathBuf>) -> CmdResult {
    let dir = dir.unwrap_or_else(disksim::replay::default_data_dir);
    let results = disksim::replay::validate_all(&dir).map_err(|e| Failure::input(anyhow!(e)))?;
    let mut text = String::new();
    for (result, disksim) in results {
        text += &format!(
            "{} demerit {:.3} ms (DiskSim {disksim:.3} ms)\n",
            result.drive, result.demerit_ms
        );
    }
    super::print_out(&text)
}

/// `--disksim-import VALID DIR`.
fn run_disksim_import(paths: &[std::path::PathBuf]) -> CmdResult {
    let written = disksim::import::import_all(&paths[0], &paths[1])
        .map_err(|e| Failure::input(anyhow!(e)))?;
    super::print_out(&format!(
        "converted {} into {}\n",
        written.join(", "),
        paths[1].display()
    ))
}

pub fn run(args: CalibrateArgs) -> CmdResult {
    if let Some(paths) = &args.disksim_import {
        return run_disksim_import(paths);
    }
    if let Some(dir) = args.disksim {
        return run_disksim(dir);
    }
    let stop = super::stop::install();
    let device = args
        .device
        .clone()
        .expect("clap requires a device without --disksim");
    let build: Box<dyn Fn() -> Box<dyn Device>> = if device.ends_with(".toml") {
        // Load once to report a bad file before measuring anything.
        load_device_file(&device)
            .with_context(|| "calibrate")
            .map_err(Failure::input)?;
        let path = device.clone();
        Box::new(move || load_device_file(&path).expect("loaded once already"))
    } else {
        if preset(&device).is_none() {
            let known: Vec<&str> = presets().iter().map(|p| p.name).collect();
            return Err(Failure::input(anyhow!(
                "no device preset '{}' (known: {})",
                device,
                known.join(", ")
            )));
        }
        let name = device.clone();
        Box::new(move || preset(&name).expect("checked above"))
    };
    let options = CalibrationOptions {
        seed: args.seed,
        random_ops: args.ops,
        sequential_ops: args.ops / 4,
        ..CalibrationOptions::default()
    };
    let report = calibrate_until_stopped(&device, &*build, &options, stop);
    let text = match args.output_format {
        CalibrateFormat::Normal => report.to_text(),
        CalibrateFormat::Json => {
            serde_json::to_string_pretty(&to_json(&report)).expect("JSON values serialise") + "\n"
        }
    };
    super::print_out(&text)?;
    super::stop::status(report.interrupted)
}
