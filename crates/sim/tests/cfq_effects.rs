//! CFQ's signature effects, seen through the simulator on device models: idling keeps a
//! disk head on one sequential stream, and group weights divide device time.

use iosched_core::NoTrace;
use iosched_sim::device::preset;
use iosched_sim::{SimConfig, SimOutcome, Simulation};
use iosched_workload::{JobSpec, RwMode, SizeOrPercent};

fn sequential_reader(name: &str) -> JobSpec {
    let mut spec = JobSpec::new(name);
    spec.rw = RwMode::Read;
    spec.direct = true;
    spec.bs = std::array::from_fn(|_| iosched_workload::BlockSizes::Fixed(64 * 1024));
    spec.size = Some(SizeOrPercent::Bytes(1 << 30));
    spec.time_based = true;
    spec.runtime_ns = Some(4_000_000_000);
    spec
}

fn run(jobs: &[JobSpec], device: &str, scheduler: &str, set: &[(&str, &str)]) -> SimOutcome {
    let config = SimConfig {
        scheduler: scheduler.to_string(),
        tunables: set
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        seed: 5,
        ..SimConfig::default()
    };
    Simulation::new(jobs, preset(device).unwrap(), config)
        .unwrap()
        .run(&mut NoTrace, &mut |_| {})
        .unwrap()
}

fn total_bytes(outcome: &SimOutcome) -> u64 {
    outcome
        .clones
        .iter()
        .map(|stats| stats.dirs.iter().map(|d| d.io_bytes).sum::<u64>())
        .sum()
}

/// Two sequential readers far apart on one disk: noop alternates between them and pays a
/// seek per request; CFQ idles on each for its slice and streams. slice_idle=0 undoes it.
#[test]
fn idling_multiplies_two_sequential_readers_on_a_disk() {
    let a = sequential_reader("a");
    let mut b = sequential_reader("b");
    b.offset = SizeOrPercent::Bytes(0);
    let jobs = [a, b];
    let noop = total_bytes(&run(&jobs, "hdd-7200", "noop", &[]));
    let cfq = total_bytes(&run(&jobs, "hdd-7200", "cfq", &[]));
    let cfq_no_idle = total_bytes(&run(&jobs, "hdd-7200", "cfq", &[("slice_idle", "0")]));
    assert!(
        cfq > 2 * noop,
        "CFQ {cfq} should be several times noop {noop}"
    );
    assert!(
        cfq_no_idle * 3 < cfq * 2,
        "slice_idle=0 ({cfq_no_idle}) should lose most of CFQ's gain ({cfq})"
    );
}

/// Two backlogged sync readers in groups weighted 1000:500 share device time 2:1.
#[test]
fn group_weights_divide_service_two_to_one() {
    let mut heavy = sequential_reader("heavy");
    heavy.rw = RwMode::RandRead;
    heavy.bs = std::array::from_fn(|_| iosched_workload::BlockSizes::Fixed(4096));
    heavy.cgroup = Some("heavy".into());
    heavy.cgroup_weight = Some(1000);
    let mut light = heavy.clone();
    light.name = "light".into();
    light.cgroup = Some("light".into());
    light.cgroup_weight = Some(500);
    let outcome = run(&[heavy, light], "hdd-7200", "cfq", &[]);
    let heavy_bytes = outcome.clones[0].dirs[0].io_bytes as f64;
    let light_bytes = outcome.clones[1].dirs[0].io_bytes as f64;
    let ratio = heavy_bytes / light_bytes;
    assert!(
        (1.8..=2.2).contains(&ratio),
        "1000:500 groups got {heavy_bytes}:{light_bytes} = {ratio:.2}"
    );
}
