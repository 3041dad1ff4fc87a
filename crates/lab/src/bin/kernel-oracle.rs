//! `kernel-oracle SCHED [--random N] [--seed S] [--scenarios DIR] [--keep DIR] [--jobs J]
//! [--kernel-only | --core-only]`:
//! runs scenarios through the kernel's own scheduler (Debian's linux-source-6.12, compiled
//! against the project's shim) and through iosched's core, and prints
//! `K of N scenarios identical`, with the first differing decision of each divergence.
//! Without --scenarios and --random it runs the hand-written families in
//! `oracle/scenarios/SCHED/`; --scenarios takes a folder or one file. SCHED is mq-deadline or bfq. `--kernel-only` runs the kernel
//! side alone and prints its decisions (`# FILE` before each scenario's lines); a scheduler
//! that core does not have yet needs it; `--core-only` prints core's side the same way. Exit status: 0 all identical
//! (or, kernel only, all ran), 1 a divergence, 2 bad usage or input (including a missing
//! kernel source package).

use std::path::PathBuf;
use std::process::ExitCode;

use iosched_lab::oracle::{self, kernel};

struct Args {
    sched: String,
    random: u64,
    seed: u64,
    scenarios: Option<PathBuf>,
    keep: Option<PathBuf>,
    jobs: usize,
    kernel_only: bool,
    core_only: bool,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        sched: String::new(),
        random: 0,
        seed: 1,
        scenarios: None,
        keep: None,
        jobs: 0,
        kernel_only: false,
        core_only: false,
    };
    while let Some(a) = argv.next() {
        let mut value = |flag: &str| argv.next().ok_or(format!("{flag} needs a value"));
        let number =
            |flag: &str, v: String| v.parse().map_err(|_| format!("{flag}: bad number '{v}'"));
        match a.as_str() {
            "--random" => args.random = number("--random", value("--random")?)?,
            "--seed" => args.seed = number("--seed", value("--seed")?)?,
            "--jobs" => args.jobs = number("--jobs", value("--jobs")?)? as usize,
            "--scenarios" => args.scenarios = Some(value("--scenarios")?.into()),
            "--keep" => args.keep = Some(value("--keep")?.into()),
            "--kernel-only" => args.kernel_only = true,
            "--core-only" => args.core_only = true,
            s if !s.starts_with('-') && args.sched.is_empty() => args.sched = s.to_string(),
            s => return Err(format!("unknown argument '{s}'")),
        }
    }
    args.sched = match args.sched.as_str() {
        "deadline" | "mq-deadline" => "mq-deadline".into(),
        "kyber" => "kyber".into(),
        "bfq" => "bfq".into(),
        "" => return Err("usage: kernel-oracle SCHED [--random N] [--seed S] [--scenarios DIR] [--keep DIR] [--jobs J] [--kernel-only]".into()),
        other => return Err(format!("no oracle for '{other}' yet (mq-deadline, kyber, bfq)")),
    };
    if !args.kernel_only && !oracle::core_has(&args.sched) {
        return Err(format!(
            "iosched's core has no '{}' scheduler yet: nothing to compare with; \
             --kernel-only prints the kernel's decisions",
            args.sched
        ));
    }
    Ok(args)
}

fn files(args: &Args) -> Result<Vec<PathBuf>, String> {
    if args.random > 0 {
        let dir = args.keep.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("iosched-oracle-gen-{}", std::process::id()))
        });
        return oracle::write_generated(&args.sched, &dir, args.seed, args.random);
    }
    let dir = args
        .scenarios
        .clone()
        .unwrap_or_else(|| kernel::shim_dir().join("scenarios").join(&args.sched));
    // One scenario file runs alone (to read one run's decisions).
    if dir.is_file() {
        return Ok(vec![dir]);
    }
    oracle::scenario_files(&dir)
}

/// Removes the binary and, unless kept, the generated scenarios.
fn cleanup(args: &Args, bin: &std::path::Path, files: &[PathBuf]) {
    let _ = std::fs::remove_file(bin);
    if args.random > 0 && args.keep.is_none() {
        if let Some(dir) = files.first().and_then(|f| f.parent()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// `--kernel-only`: every scenario's kernel decisions, then `N scenarios run (kernel side only)`.
fn kernel_only(args: &Args) -> ExitCode {
    let run = || -> Result<(Vec<PathBuf>, Vec<String>), String> {
        let tree = kernel::kernel_tree().map_err(|e| e.to_string())?;
        let bin = kernel::build(&args.sched, &tree).map_err(|e| e.to_string())?;
        let files = files(args)?;
        let out = oracle::kernel_all(&bin, &files, args.jobs);
        cleanup(args, &bin, &files);
        Ok((files, out?))
    };
    match run() {
        Ok((files, outputs)) => {
            for (f, out) in files.iter().zip(&outputs) {
                println!("# {}", f.display());
                print!("{out}");
            }
            let lines: usize = outputs.iter().map(|o| o.lines().count()).sum();
            println!(
                "{} scenarios run, {lines} decision lines (kernel side only{})",
                outputs.len(),
                if oracle::core_has(&args.sched) {
                    ""
                } else {
                    "; iosched's core has no such scheduler yet"
                }
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kernel-oracle: {e}");
            ExitCode::from(2)
        }
    }
}

/// `--core-only`: iosched's side alone, in the same form as `--kernel-only` (to read a
/// divergence beyond its first line: diff the two).
fn core_only(args: &Args) -> ExitCode {
    let run = || -> Result<(), String> {
        for f in files(args)? {
            let sc = oracle::scenario::read_scenario(&f).map_err(|e| e.to_string())?;
            let out = oracle::harness::run_scenario(&args.sched, &sc)?;
            println!("# {}", f.display());
            print!("{out}");
        }
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kernel-oracle: {e}");
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kernel-oracle: {e}");
            return ExitCode::from(2);
        }
    };
    if args.kernel_only {
        return kernel_only(&args);
    }
    if args.core_only {
        return core_only(&args);
    }
    let run = || -> Result<Vec<oracle::Outcome>, String> {
        let tree = kernel::kernel_tree().map_err(|e| e.to_string())?;
        let bin = kernel::build(&args.sched, &tree).map_err(|e| e.to_string())?;
        let files = files(&args)?;
        let out = oracle::compare_all(&args.sched, &bin, &files, args.jobs);
        cleanup(&args, &bin, &files);
        out
    };
    match run() {
        Ok(outcomes) => {
            for o in outcomes.iter().filter(|o| o.divergence.is_some()) {
                println!("{}: differs", o.name);
                println!("{}", o.divergence.as_ref().expect("filtered on divergence"));
            }
            println!("{}", oracle::summary_line(&outcomes));
            let all = outcomes.iter().all(|o| o.divergence.is_none());
            ExitCode::from(if all { 0 } else { 1 })
        }
        Err(e) => {
            eprintln!("kernel-oracle: {e}");
            ExitCode::from(2)
        }
    }
}
