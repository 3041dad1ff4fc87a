//! Simulated CPUs (`cpu_era`, `cpus`): a process waiting for a CPU issues no I/O, CPU use is
//! reported per job as fio reports it, and the model adds its costs and nothing else.
//!
//! Outside references: fio 3.33's `stat.c` defines `usr_cpu`/`sys_cpu` as the thread's user
//! and system time over its runtime, in percent, so one thread cannot exceed 100 % and two
//! threads sharing one CPU cannot exceed 100 % together; fio 3.33 on this machine (a 4 KiB
//! buffered read of a cached file, docs/machine-models.md) spends about four fifths of its CPU
//! in the kernel. The era costs are from the sources in docs/machine-models.md.

use iosched_core::NoTrace;
use iosched_sim::device::preset;
use iosched_sim::{SimConfig, SimOutcome, Simulation};
use iosched_workload::job::{IoEngine, RwMode, SizeOrPercent};
use iosched_workload::{BlockSizes, JobSpec};

fn job(name: &str, rw: RwMode, direct: bool) -> JobSpec {
    let mut spec = JobSpec::new(name);
    spec.rw = rw;
    spec.direct = direct;
    spec.bs = std::array::from_fn(|_| BlockSizes::Fixed(4096));
    spec.size = Some(SizeOrPercent::Bytes(64 << 20));
    spec.time_based = true;
    spec.runtime_ns = Some(200_000_000);
    spec
}

/// A buffered reader of a file already in the cache: all CPU, no I/O.
fn cached_reader(name: &str) -> JobSpec {
    let mut spec = job(name, RwMode::Read, false);
    spec.pre_read = true;
    spec
}

fn run(jobs: &[JobSpec], device: &str, knobs: &[(&str, &str)]) -> SimOutcome {
    let config = SimConfig {
        scheduler: "noop".to_string(),
        seed: 3,
        check: true,
        fs_knobs: knobs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..SimConfig::default()
    };
    Simulation::new(jobs, preset(device).unwrap(), config)
        .unwrap()
        .run(&mut NoTrace, &mut |_| {})
        .unwrap()
}

fn ios(outcome: &SimOutcome, clone: usize) -> u64 {
    outcome.clones[clone].dirs.iter().map(|d| d.total_ios).sum()
}

fn cpu_pct(outcome: &SimOutcome, clone: usize) -> f64 {
    outcome.clones[clone].usr_cpu + outcome.clones[clone].sys_cpu
}

/// Two CPU-bound readers on one CPU share it: their usr+sys add up to at most 100 % and each
/// does about half the reads it does with a CPU of its own; on two CPUs each runs at 100 %.
#[test]
fn one_cpu_is_shared_and_two_run_at_once() {
    let jobs = [cached_reader("a"), cached_reader("b")];
    let era = ("cpu_era", "desktop-2016");
    let one = run(&jobs, "nvme-gen4", &[era, ("cpus", "1")]);
    let two = run(&jobs, "nvme-gen4", &[era, ("cpus", "2")]);
    let shared = cpu_pct(&one, 0) + cpu_pct(&one, 1);
    assert!(shared <= 100.5 && shared > 95.0, "one CPU: {shared:.1} %");
    for clone in 0..2 {
        let alone = cpu_pct(&two, clone);
        assert!(alone > 99.0 && alone <= 100.5, "two CPUs: {alone:.1} %");
        let ratio = ios(&two, clone) as f64 / ios(&one, clone) as f64;
        assert!(
            (1.9..2.1).contains(&ratio),
            "reads, 2 CPUs over 1: {ratio:.2}"
        );
        // Mostly system time, as fio measures a cached buffered read here.
        assert!(two.clones[clone].sys_cpu > 2.0 * two.clones[clone].usr_cpu);
    }
    let cpu = one.cpu.as_ref().expect("CPU outcome");
    assert_eq!((cpu.era, cpu.ncpus), ("desktop-2016", 1));
    assert!(cpu.waited_ns > 0);
}

/// Two buffered sequential readers of files not cached, whose copies out of the cache take
/// longer than the device takes to read them ahead: on one CPU they take turns, so each reads
/// about half as much, and so does the device.
#[test]
fn a_process_waiting_for_cpu_issues_no_io() {
    let reader = |name| {
        let mut spec = job(name, RwMode::Read, false);
        spec.size = Some(SizeOrPercent::Bytes(2 << 30));
        spec
    };
    let jobs = [reader("a"), reader("b")];
    let era = ("cpu_era", "desktop-2016");
    let one = run(&jobs, "nvme-gen4", &[era, ("cpus", "1")]);
    let two = run(&jobs, "nvme-gen4", &[era, ("cpus", "2")]);
    for clone in 0..2 {
        let ratio = ios(&two, clone) as f64 / ios(&one, clone) as f64;
        assert!(
            (1.7..2.2).contains(&ratio),
            "reads, 2 CPUs over 1: {ratio:.2}"
        );
        let shared = cpu_pct(&one, 0) + cpu_pct(&one, 1);
        assert!(shared <= 100.5, "one CPU: {shared:.1} %");
    }
    // The device reads what the readers ask for: about half as much on one CPU. (Its
    // `util` stays high either way: each reader keeps a read-ahead window in flight while it
    // copies the previous one, and util counts any time with a request in flight.)
    let sectors = two.disk.read_sectors as f64 / one.disk.read_sectors as f64;
    assert!(
        (1.7..2.2).contains(&sectors),
        "device reads, 2 CPUs over 1: {sectors:.2}"
    );
}

/// An era that costs nothing, on as many CPUs as the model allows, gives the run without the
/// model (with its flat page cost at 0) to the last figure: buffered reads and writes,
/// fsync, throttled writers writing back themselves, mmap stores and direct I/O.
#[test]
fn an_era_without_costs_changes_nothing() {
    let mut writer = job("writer", RwMode::RandWrite, false);
    writer.fsync = 64;
    let mut mapped = job("mapped", RwMode::RandWrite, false);
    mapped.ioengine = IoEngine::Mmap;
    let jobs = [
        writer,
        mapped,
        job("reader", RwMode::Read, false),
        job("direct", RwMode::RandRead, true),
    ];
    let base = [
        ("page_cpu_ns", "0"),
        ("mem", "64m"),
        ("dirty_throttle", "writeback"),
    ];
    let off = run(&jobs, "ssd-x25e", &base);
    let mut knobs = base.to_vec();
    knobs.extend([("cpu_era", "zero"), ("cpus", "4096")]);
    let zero = run(&jobs, "ssd-x25e", &knobs);
    assert!(off.cpu.is_none() && zero.cpu.is_some());
    assert_eq!(off.events, zero.events);
    assert_eq!(off.sim_time_ns, zero.sim_time_ns);
    assert_eq!(format!("{:?}", off.disk), format!("{:?}", zero.disk));
    for clone in 0..jobs.len() {
        let (a, b) = (&off.clones[clone], &zero.clones[clone]);
        assert_eq!(format!("{:?}", a.dirs), format!("{:?}", b.dirs));
        assert_eq!((b.usr_cpu, b.sys_cpu), (0.0, 0.0));
    }
    let (a, b) = (off.fs.as_ref().unwrap(), zero.fs.as_ref().unwrap());
    assert_eq!(a.pages_written_back, b.pages_written_back);
    assert_eq!(a.throttled_ns, b.throttled_ns);
}

/// Flushers and writers doing writeback are charged for the walk: with the model on a
/// buffered writer's sys time includes it and kernel threads show CPU time.
#[test]
fn writeback_costs_cpu() {
    let mut writer = job("writer", RwMode::Write, false);
    writer.size = Some(SizeOrPercent::Bytes(256 << 20));
    let outcome = run(
        &[writer],
        "ssd-x25e",
        &[("cpu_era", "server-2009"), ("mem", "64m")],
    );
    let cpu = outcome.cpu.as_ref().unwrap();
    assert!(cpu.kernel.sys_ns > 0, "flusher walk charged");
    assert!(outcome.clones[0].sys_cpu > 0.0);
    assert!(outcome.clones[0].ctx > 0);
}

#[test]
fn an_unknown_era_is_refused_by_name() {
    let config = SimConfig {
        fs_knobs: vec![("cpu_era".into(), "vax-1980".into())],
        ..SimConfig::default()
    };
    let jobs = [job("j", RwMode::Read, true)];
    let error = Simulation::new(&jobs, preset("nvme-gen4").unwrap(), config)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        error.contains("vax-1980") && error.contains("desktop-2016"),
        "{error}"
    );
}
