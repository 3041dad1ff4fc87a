//! `iosched`: subcommands only. Each one parses its flags, wires the crates together and
//! prints; the logic lives in the crates.

mod cmd;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// CFQ and its peers, simulated and real: a block I/O scheduler laboratory.
#[derive(Parser)]
#[command(
    name = "iosched",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("IOSCHED_COMMIT"), ")"),
    about,
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run fio job files under a scheduler, on a simulated device or a real file or device.
    Run(cmd::run::RunArgs),
    /// Run the seed experiments in simulation, each seed's published figure beside ours.
    Reproduce(cmd::reproduce::ReproduceArgs),
    /// Replay a blktrace capture or fio iolog through several schedulers, one comparison table.
    Replay(cmd::replay::ReplayArgs),
    /// Run fio job files with fio against the kernel's own scheduler on a block device.
    Kernel(cmd::kernel::KernelArgs),
    /// Results of several runs (fio JSON) side by side in one mmtests-style table.
    Compare(cmd::compare::CompareArgs),
    /// Charts of runs' results (fio JSON): throughput, latency percentiles, cgroup shares, page cache.
    Plot(cmd::plot::PlotArgs),
    /// Run every combination of job files, devices, schedulers, settings and seeds of a TOML
    /// spec in parallel: one tidy table (CSV, JSON lines) and a line chart.
    Sweep(cmd::sweep::SweepArgs),
    /// Check a scheduler against the kernel's own recorded decisions.
    Conformance(cmd::conformance::ConformanceArgs),
    /// Measure a device model: QD sweeps and sequential runs beside published figures.
    Calibrate(cmd::calibrate::CalibrateArgs),
    /// List the schedulers with their tunables (defaults, units, meaning).
    Schedulers,
    /// List the page-cache, writeback, request-queue and file-system knobs of `--set` (defaults, meaning).
    Knobs,
    /// List the simulated device presets.
    Devices,
    /// Print the man page (roff), or write one page per subcommand with --dir.
    Manpage(cmd::docs::ManpageArgs),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell).
    Completions(cmd::docs::CompletionsArgs),
    /// Print a reference page of the book (docs/reference/), made from the code.
    #[command(hide = true)]
    Reference(cmd::docs::ReferenceArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help/version to stdout with exit 0, usage errors with exit 2.
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Reproduce(args) => cmd::reproduce::run(args),
        Command::Replay(args) => cmd::replay::run(args),
        Command::Kernel(args) => cmd::kernel::kernel(args),
        Command::Compare(args) => cmd::compare::compare(args),
        Command::Plot(args) => cmd::plot::plot(args),
        Command::Sweep(args) => cmd::sweep::run(args),
        Command::Calibrate(args) => cmd::calibrate::run(args),
        Command::Conformance(args) => cmd::conformance::run(args),
        Command::Schedulers => cmd::list::schedulers(),
        Command::Knobs => cmd::list::knobs(),
        Command::Devices => cmd::list::devices(),
        Command::Manpage(args) => cmd::docs::manpage(Cli::command(), args),
        Command::Completions(args) => cmd::docs::completions(Cli::command(), args),
        Command::Reference(args) => cmd::docs::reference(Cli::command(), args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("iosched: {:#}", failure.error);
            ExitCode::from(failure.code)
        }
    }
}
