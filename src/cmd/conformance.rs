//! `iosched conformance cfq`: iosched's CFQ against Linux 4.20.1's recorded decisions.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, Subcommand};
use iosched_lab::conformance::{run_suite, summary_line, SuiteOptions};

use super::{CmdResult, Failure};

#[derive(Args)]
pub struct ConformanceArgs {
    #[command(subcommand)]
    pub suite: Suite,
}

#[derive(Subcommand)]
pub enum Suite {
    /// Every scenario through iosched's CFQ with the harness's loop and device model, its
    /// dispatches compared with the kernel's (`../shared/conformance/cfq/`). Exit status 1
    /// unless every scenario is identical.
    Cfq(CfqArgs),
}

#[derive(Args)]
pub struct CfqArgs {
    /// Directory of `*.scn` scenarios.
    #[arg(long, value_name = "DIR")]
    pub scenarios: PathBuf,
    /// Directory of the kernel's outputs, `NAME.out.xz` (or `NAME.out`).
    #[arg(long, value_name = "DIR")]
    pub expected: PathBuf,
    /// Also write iosched's output of each scenario here as `NAME.out` (for compare.py).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only scenarios whose name contains this.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Absolute time (ns) of every scenario's time 0, overriding the scenarios' `origin`
    /// (0 starts at boot, where the scheduler is created).
    #[arg(long, value_name = "NS")]
    pub origin: Option<u64>,
    /// Print a line for identical scenarios too.
    #[arg(long)]
    pub verbose: bool,
}

pub fn run(args: ConformanceArgs) -> CmdResult {
    let Suite::Cfq(args) = args.suite;
    let opts = SuiteOptions {
        origin_ns: args.origin,
        out_dir: args.out,
        filter: args.filter,
        jobs: 0,
    };
    let results = run_suite(&args.scenarios, &args.expected, &opts).map_err(Failure::input)?;
    let mut out = String::new();
    for r in &results {
        if args.verbose || !r.identical() {
            out.push_str(&format!("{r}\n"));
        }
    }
    out.push_str(&format!("{}\n", summary_line(&results)));
    super::print_out(&out)?;
    if results.iter().all(|r| r.identical()) {
        Ok(())
    } else {
        Err(Failure::run(anyhow!(
            "conformance: some scenarios differ from the kernel's dispatches"
        )))
    }
}
