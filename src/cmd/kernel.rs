//! `iosched kernel JOBFILE --device PATH --scheduler NAME`: the same jobs run by `fio` against
//! the kernel's own scheduler on a real block device, for comparison with the engine and the
//! simulator.
//!
//! The command switches `/sys/block/X/queue/scheduler`, writes `--set` tunables under
//! `queue/iosched/`, creates the jobs' cgroups (cgroup v1 `blkio` or v2 `io`) with their
//! weights, and hands fio a job file in which every clone is its own section placed on the
//! same bytes as the engine would use (same layout rules). Whatever happens — success, fio
//! failing, Ctrl-C — the scheduler, its tunables and the cgroups are put back as they were.
//! fio's JSON is passed through with an `iosched` object added; its normal and terse outputs
//! are passed through as they are.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::Args;
use iosched_engine::{safety, signal, target, TargetKind};
use iosched_report::shares::CgroupShares;
use iosched_workload::fio;
use iosched_workload::layout::lay_out;
use iosched_workload::JobSet;
use serde_json::{json, Value};

use super::run::{parse_set, take_nr_requests, OutputFormat};
use super::{CmdResult, Failure};

/// The kernel schedulers of blk-mq.
const KERNEL_SCHEDULERS: [&str; 4] = ["none", "mq-deadline", "kyber", "bfq"];
/// 128 + SIGINT.
const EXIT_INTERRUPTED: u8 = 130;
/// Options the generated job file sets itself, per clone.
const PLACEMENT_OPTIONS: [&str; 13] = [
    "filename",
    "directory",
    "nrfiles",
    "size",
    "filesize",
    "offset",
    "offset_increment",
    "numjobs",
    "cgroup",
    "cgroup_weight",
    "cgroup_nodelete",
    "unlink",
    "create_on_open",
];
/// Ordering options that only the first clone of a job keeps.
const ORDERING_OPTIONS: [&str; 3] = ["stonewall", "new_group", "wait_for"];

#[derive(Args, Debug)]
pub struct KernelArgs {
    /// fio job files (the same ones `iosched run` takes).
    #[arg(required = true, value_name = "JOBFILE")]
    jobfiles: Vec<PathBuf>,
    /// Block device to run on (its data in the jobs' ranges is overwritten by writing jobs).
    #[arg(long, value_name = "PATH")]
    device: String,
    /// Kernel scheduler: bfq, mq-deadline, kyber or none (noop and deadline are accepted as aliases).
    #[arg(long)]
    scheduler: String,
    /// Set a tunable under queue/iosched/, e.g. `--set slice_idle=0`. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed of the layout (as `iosched run --seed`).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, value_enum, default_value = "json")]
    output_format: OutputFormat,
    /// Write results here instead of standard output.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write to a device even if it is mounted, partitioned or carries a file system.
    #[arg(long)]
    force: bool,
    /// The fio binary.
    #[arg(long, default_value = "fio")]
    fio: String,
}

/// Where the jobs' cgroups go and how weights are written there.
struct CgroupFs {
    /// Mount point of the hierarchy with the block I/O controller.
    mount: PathBuf,
    v2: bool,
}

fn find_cgroup_fs() -> Option<CgroupFs> {
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    let mut v2 = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 4 {
            continue;
        }
        if fields[2] == "cgroup" && fields[3].split(',').any(|o| o == "blkio") {
            return Some(CgroupFs {
                mount: PathBuf::from(fields[1]),
                v2: false,
            });
        }
        if fields[2] == "cgroup2" && v2.is_none() {
            let controllers = fs::read_to_string(Path::new(fields[1]).join("cgroup.controllers"))
                .unwrap_or_default();
            if controllers.split_whitespace().any(|c| c == "io") {
                v2 = Some(CgroupFs {
                    mount: PathBuf::from(fields[1]),
                    v2: true,
                });
            }
        }
    }
    v2
}

/// Everything to put back, restored on drop (also on error and after Ctrl-C).
struct Restore {
    queue: PathBuf,
    scheduler: Option<String>,
    tunables: Vec<(String, String)>,
    /// `queue/nr_requests` before the run, when `--set nr_requests` changed it.
    nr_requests: Option<String>,
    /// Cgroup directories created, parents first.
    cgroups: Vec<PathBuf>,
}

impl Drop for Restore {
    fn drop(&mut self) {
        for dir in self.cgroups.iter().rev() {
            if let Err(error) = fs::remove_dir(dir) {
                eprintln!(
                    "iosched: warning: cannot remove cgroup {}: {error}",
                    dir.display()
                );
            }
        }
        if let Some(scheduler) = &self.scheduler {
            if let Err(error) = fs::write(self.queue.join("scheduler"), scheduler) {
                eprintln!("iosched: warning: cannot restore the scheduler '{scheduler}': {error}");
            }
        }
        // Switching back gives the old scheduler fresh defaults: write its saved values.
        for (name, value) in &self.tunables {
            let _ = fs::write(self.queue.join("iosched").join(name), value);
        }
        // After the scheduler: switching schedulers resets the queue's request count.
        if let Some(value) = &self.nr_requests {
            if let Err(error) = fs::write(self.queue.join("nr_requests"), value) {
                eprintln!("iosched: warning: cannot restore nr_requests {value}: {error}");
            }
        }
    }
}

fn read_tunables(queue: &Path) -> Vec<(String, String)> {
    let mut tunables: Vec<(String, String)> = fs::read_dir(queue.join("iosched"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let value = fs::read_to_string(entry.path()).ok()?;
            Some((
                entry.file_name().to_string_lossy().into_owned(),
                value.trim().to_string(),
            ))
        })
        .collect();
    tunables.sort();
    tunables
}

/// The generated fio job file: globals, then one section per clone on its own byte range.
fn job_file(
    jobs: &JobSet,
    layout: &iosched_workload::layout::Layout,
    device: &str,
    cgroup_root: &str,
) -> String {
    let keep = |key: &str| !PLACEMENT_OPTIONS.contains(&key);
    let mut text = String::from("; generated by iosched kernel\n[global]\n");
    for (key, value) in jobs.global_options.iter().filter(|(k, _)| keep(k)) {
        push_option(&mut text, key, value);
    }
    for plan in &layout.clones {
        let spec = &jobs.jobs[plan.job];
        let _ = writeln!(text, "\n[{}]", spec.name);
        for (key, value) in spec.options.iter().filter(|(k, _)| keep(k)) {
            if plan.clone > 0 && ORDERING_OPTIONS.contains(&key.as_str()) {
                continue;
            }
            push_option(&mut text, key, value);
        }
        let start = layout.files[plan.files[0]].start + plan.regions[0].start;
        let _ = writeln!(text, "filename={device}");
        let _ = writeln!(text, "offset={start}");
        let _ = writeln!(text, "size={}", plan.regions[0].len);
        if let Some(path) = &spec.cgroup {
            // `cgroup=/` is the run's own root group.
            let _ = match path.as_str() {
                "" => writeln!(text, "cgroup={cgroup_root}"),
                path => writeln!(text, "cgroup={cgroup_root}/{path}"),
            };
            let _ = writeln!(text, "cgroup_nodelete=1");
        }
    }
    text
}

fn push_option(text: &mut String, key: &str, value: &str) {
    if value.is_empty() {
        let _ = writeln!(text, "{key}");
    } else {
        let _ = writeln!(text, "{key}={value}");
    }
}

/// Share of bytes per cgroup in fio's results, beside the weight-ideal share.
fn cgroup_shares(fio_json: &Value, jobs: &JobSet, clone_jobs: &[usize]) -> Value {
    let Some(entries) = fio_json["jobs"].as_array() else {
        return Value::Null;
    };
    if entries.len() != clone_jobs.len() {
        // group_reporting merged clones: no per-clone mapping.
        return Value::Null;
    }
    let mut shares = CgroupShares::new();
    for (entry, &job) in entries.iter().zip(clone_jobs) {
        let spec = &jobs.jobs[job];
        let path = format!("/{}", spec.cgroup.clone().unwrap_or_default());
        let bytes: u64 = ["read", "write", "trim"]
            .iter()
            .map(|d| entry[d]["io_bytes"].as_u64().unwrap_or(0))
            .sum();
        shares.add(&path, spec.cgroup_weight, bytes);
    }
    shares.to_json()
}

/// How long fio may take to exit after our SIGINT before it is killed: a fio stuck in its own
/// signal handler would otherwise leave the device changed until someone kills us.
const FIO_EXIT_GRACE: Duration = Duration::from_secs(5);

/// Waits for fio, forwarding a SIGINT of ours to it; if it has not exited
/// [`FIO_EXIT_GRACE`] after that, kills it and says so.
fn supervise(
    child: &mut std::process::Child,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<std::process::ExitStatus, Failure> {
    let mut forwarded: Option<std::time::Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => {}
            Err(error) => return Err(Failure::run(anyhow!("waiting for fio: {error}"))),
        }
        match forwarded {
            None if stop.load(Ordering::Relaxed) => {
                // fio prints what it has measured when interrupted; a terminal's Ctrl-C
                // reaches it directly, a `kill -INT` of ours does not.
                signal::interrupt(child.id());
                forwarded = Some(std::time::Instant::now());
            }
            Some(at) if at.elapsed() > FIO_EXIT_GRACE => {
                eprintln!(
                    "iosched: fio had not exited {} s after SIGINT: killed",
                    FIO_EXIT_GRACE.as_secs()
                );
                // fio's job processes are in its process group: all of them go.
                let group = format!("-{}", child.id());
                let killed = Command::new("kill").args(["-KILL", "--", &group]).status();
                if !killed.is_ok_and(|status| status.success()) {
                    let _ = child.kill();
                }
                return child
                    .wait()
                    .map_err(|error| Failure::run(anyhow!("waiting for fio: {error}")));
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn kernel(args: KernelArgs) -> CmdResult {
    // From here on Ctrl-C only sets a flag, so the device is always put back.
    let stop = signal::install_sigint();
    // `iosched run`'s names for the same policies are accepted as aliases.
    let mut args = args;
    match args.scheduler.as_str() {
        "noop" => args.scheduler = "none".to_string(),
        "deadline" => args.scheduler = "mq-deadline".to_string(),
        _ => {}
    }
    if !KERNEL_SCHEDULERS.contains(&args.scheduler.as_str()) {
        let hint = if args.scheduler == "cfq" {
            " (CFQ left the kernel in 5.0: iosched runs it with `iosched run --device PATH --scheduler cfq`)"
        } else {
            ""
        };
        return Err(Failure::input(anyhow!(
            "--scheduler '{}': the kernel's schedulers are {} (noop and deadline are accepted as \
             aliases of none and mq-deadline){hint}",
            args.scheduler,
            KERNEL_SCHEDULERS.join(", ")
        )));
    }
    let mut tunables = parse_set(&args.set)?;
    let nr_requests = take_nr_requests(&mut tunables);
    let fio_version = Command::new(&args.fio)
        .arg("--version")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .ok_or_else(|| {
            Failure::run(anyhow!(
                "'{}' not found or not working: install fio (Debian: apt-get install fio) or pass --fio PATH",
                args.fio
            ))
        })?;
    let jobs = fio::parse_files(&args.jobfiles, &iosched_engine::host::parse_context())
        .map_err(Failure::input)?;
    let target = target::probe(&args.device).map_err(Failure::input)?;
    if target.kind != TargetKind::BlockDevice {
        return Err(Failure::input(anyhow!(
            "{}: the kernel's schedulers need a block device (try a loop device: losetup -f --show FILE)",
            args.device
        )));
    }
    if !args.force {
        if let Some(reason) = safety::refusal(&target) {
            return Err(Failure::input(anyhow!(
                "{}: refusing to write: {reason} (pass --force if you really mean it)",
                args.device
            )));
        }
    }
    let layout = lay_out(&jobs.jobs, target.capacity_bytes, args.seed).map_err(Failure::input)?;
    let disk = target.disk.clone().unwrap_or_default();
    let queue = PathBuf::from(format!("/sys/block/{disk}/queue"));
    let old_scheduler = fs::read_to_string(queue.join("scheduler"))
        .ok()
        .and_then(|line| target::active_scheduler(&line));
    let mut restore = Restore {
        queue: queue.clone(),
        scheduler: old_scheduler.clone(),
        tunables: read_tunables(&queue),
        nr_requests: None,
        cgroups: Vec::new(),
    };
    fs::write(queue.join("scheduler"), &args.scheduler)
        .with_context(|| {
            format!(
                "{}: cannot select scheduler '{}'",
                queue.display(),
                args.scheduler
            )
        })
        .map_err(Failure::run)?;
    if let Some(value) = &nr_requests {
        restore.nr_requests = fs::read_to_string(queue.join("nr_requests"))
            .ok()
            .map(|old| old.trim().to_string());
        fs::write(queue.join("nr_requests"), value)
            .with_context(|| format!("--set nr_requests={value}: cannot write queue/nr_requests"))
            .map_err(Failure::input)?;
    }
    for (name, value) in &tunables {
        fs::write(queue.join("iosched").join(name), value)
            .with_context(|| format!("--set {name}={value}: cannot write queue/iosched/{name}"))
            .map_err(Failure::input)?;
    }
    // What the run had (the kernel rounds some values), for the JSON.
    let applied_nr_requests = fs::read_to_string(queue.join("nr_requests"))
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok());
    let applied_tunables: serde_json::Map<String, Value> = read_tunables(&queue)
        .into_iter()
        .map(|(k, v)| (k, Value::from(v)))
        .collect();

    // Cgroups: created under one directory of our own, weights written where the kernel has
    // a weight file for them.
    let cgroup_root = format!("iosched-{}", std::process::id());
    let mut weight_notes: Vec<String> = Vec::new();
    let mut weights_applied = true;
    let cgroup_paths: Vec<(&str, Option<u32>)> = {
        let mut seen: Vec<(&str, Option<u32>)> = Vec::new();
        for spec in &jobs.jobs {
            if let Some(path) = spec.cgroup.as_deref() {
                if !seen.iter().any(|(p, _)| *p == path) {
                    seen.push((path, spec.cgroup_weight));
                }
            }
        }
        seen
    };
    if !cgroup_paths.is_empty() {
        let cgfs = find_cgroup_fs().ok_or_else(|| {
            Failure::run(anyhow!(
                "the jobs name cgroups but no blkio (v1) or io (v2) cgroup hierarchy is mounted"
            ))
        })?;
        let root_dir = cgfs.mount.join(&cgroup_root);
        if cgfs.v2 {
            let _ = fs::write(cgfs.mount.join("cgroup.subtree_control"), "+io");
        }
        fs::create_dir(&root_dir)
            .with_context(|| format!("cannot create cgroup {}", root_dir.display()))
            .map_err(Failure::run)?;
        restore.cgroups.push(root_dir.clone());
        for (path, weight) in &cgroup_paths {
            let mut dir = root_dir.clone();
            for component in path.split('/').filter(|c| !c.is_empty()) {
                if cgfs.v2 {
                    let _ = fs::write(dir.join("cgroup.subtree_control"), "+io");
                }
                dir = dir.join(component);
                if !dir.exists() {
                    fs::create_dir(&dir)
                        .with_context(|| format!("cannot create cgroup {}", dir.display()))
                        .map_err(Failure::run)?;
                    restore.cgroups.push(dir.clone());
                }
            }
            let weight = weight.unwrap_or(500);
            let files: &[&str] = if cgfs.v2 {
                &["io.bfq.weight", "io.weight"]
            } else {
                &["blkio.bfq.weight", "blkio.weight"]
            };
            let written = files
                .iter()
                .find(|name| fs::write(dir.join(name), weight.to_string()).is_ok());
            match written {
                Some(name) => weight_notes.push(format!("/{path}: {name}={weight}")),
                None => {
                    weights_applied = false;
                    eprintln!(
                        "iosched: warning: cgroup /{path}: no writable weight file ({}) on this kernel; running without weights",
                        files.join(", ")
                    );
                }
            }
        }
    }

    let work = std::env::temp_dir().join(format!("iosched-kernel-{}", std::process::id()));
    fs::create_dir_all(&work)
        .context("cannot create a scratch directory")
        .map_err(Failure::run)?;
    let job_path = work.join("jobs.fio");
    fs::write(
        &job_path,
        job_file(&jobs, &layout, &args.device, &cgroup_root),
    )
    .context("cannot write the generated job file")
    .map_err(Failure::run)?;
    let fio_output = work.join("fio.out");
    let format = match args.output_format {
        OutputFormat::Json => "json",
        OutputFormat::Normal => "normal",
        OutputFormat::Terse => "terse",
    };
    if stop.load(Ordering::Relaxed) {
        return Err(Failure {
            error: anyhow!("interrupted before fio started; the device is as it was"),
            code: EXIT_INTERRUPTED,
        });
    }
    let mut child = Command::new(&args.fio)
        .arg(format!("--output-format={format}"))
        .arg(format!("--output={}", fio_output.display()))
        .arg(&job_path)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        // Its own process group, so the watchdog can end fio with its job processes (our
        // SIGINT is forwarded to it either way).
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {}", args.fio))
        .map_err(Failure::run)?;
    let status = supervise(&mut child, stop)?;
    let mut stderr_text = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        use std::io::Read;
        let _ = stderr.read_to_string(&mut stderr_text);
    }
    let interrupted = stop.load(Ordering::Relaxed);
    let raw = fs::read_to_string(&fio_output).unwrap_or_default();
    let _ = fs::remove_dir_all(&work);
    // Restore before printing, so a failure to print cannot leave the device changed.
    drop(restore);
    if !status.success() && !interrupted {
        return Err(Failure::run(anyhow!(
            "fio failed ({status}): {}",
            stderr_text.trim()
        )));
    }
    if !stderr_text.trim().is_empty() {
        eprint!("{stderr_text}");
    }
    let nothing =
        raw.trim().is_empty() || (args.output_format == OutputFormat::Json && !raw.contains('{'));
    if interrupted && nothing {
        return Err(Failure {
            error: anyhow!(
                "interrupted: fio stopped before it reported anything; the device is as it was"
            ),
            code: EXIT_INTERRUPTED,
        });
    }
    let text = match args.output_format {
        OutputFormat::Json => {
            let start = raw.find('{').unwrap_or(0);
            let mut value: Value = serde_json::from_str(&raw[start..])
                .with_context(|| "fio's JSON output does not parse")
                .map_err(Failure::run)?;
            let clone_jobs: Vec<usize> = layout.clones.iter().map(|c| c.job).collect();
            let shares = cgroup_shares(&value, &jobs, &clone_jobs);
            value["iosched"] = json!({
                "version": env!("CARGO_PKG_VERSION"),
                "driver": "kernel",
                "scheduler": args.scheduler,
                "tunables": applied_tunables,
                "device": {
                    "path": args.device,
                    "kind": "block",
                    "rotational": target.rotational,
                    "queue_depth": target.queue_depth,
                    "nr_requests": applied_nr_requests,
                    "capacity_bytes": target.capacity_bytes,
                    "previous_scheduler": old_scheduler,
                },
                "fio": fio_version,
                "cgroups": shares,
                "cgroup_weights": weight_notes,
                "weights_applied": weights_applied,
                "interrupted": interrupted,
            });
            let mut text = serde_json::to_string_pretty(&value)
                .context("serialising results")
                .map_err(Failure::run)?;
            text.push('\n');
            text
        }
        _ => raw,
    };
    match &args.output {
        Some(path) => fs::write(path, text)
            .with_context(|| format!("--output {}", path.display()))
            .map_err(Failure::input)?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("writing results")
                .map_err(Failure::run)?;
        }
    }
    if interrupted {
        return Err(Failure {
            error: anyhow!("interrupted: the results above are partial"),
            code: EXIT_INTERRUPTED,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_workload::{JobSpec, SizeOrPercent};

    #[test]
    fn each_clone_gets_its_own_section_and_range() {
        let mut spec = JobSpec::new("r");
        spec.size = Some(SizeOrPercent::Bytes(1 << 20));
        spec.numjobs = 2;
        spec.cgroup = Some("a".into());
        spec.options = vec![
            ("rw".into(), "randread".into()),
            ("numjobs".into(), "2".into()),
            ("stonewall".into(), String::new()),
        ];
        let jobs = JobSet {
            jobs: vec![spec],
            ..JobSet::default()
        };
        let layout = lay_out(&jobs.jobs, Some(64 << 20), 1).unwrap();
        let text = job_file(&jobs, &layout, "/dev/loop9", "iosched-1");
        assert_eq!(text.matches("[r]").count(), 2, "{text}");
        assert_eq!(text.matches("stonewall").count(), 1, "{text}");
        assert!(!text.contains("numjobs"), "{text}");
        assert!(text.contains("offset=1048576\n"), "{text}");
        assert!(text.contains("offset=2097152\n"), "{text}");
        assert!(text.contains("cgroup=iosched-1/a\n"), "{text}");
    }
}
