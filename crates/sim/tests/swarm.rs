//! Swarm testing: device, scheduler, tunables and workload all drawn from a seed, run with
//! the scheduler's invariant checks after every event. Any panic, runaway or accounting
//! mismatch fails with the seed that produced it.

use iosched_core::NoTrace;
use iosched_core::{IoPrio, IoPrioClass};
use iosched_sim::device::{preset, presets};
use iosched_sim::{SimConfig, Simulation};
use iosched_workload::rng::Rng;
use iosched_workload::{BlockSizes, IoEngine, JobSpec, RwMode, SizeOrPercent};

const MODES: [RwMode; 6] = [
    RwMode::Read,
    RwMode::Write,
    RwMode::RandRead,
    RwMode::RandWrite,
    RwMode::RandRw,
    RwMode::ReadWrite,
];

fn draw_job(rng: &mut Rng, index: usize) -> JobSpec {
    let mut spec = JobSpec::new(&format!("j{index}"));
    spec.rw = MODES[rng.below(MODES.len() as u64) as usize];
    spec.direct = true;
    let bs = 4096 << rng.below(5);
    spec.bs = std::array::from_fn(|_| BlockSizes::Fixed(bs));
    spec.size = Some(SizeOrPercent::Bytes(bs * (16 + rng.below(200))));
    if rng.below(2) == 0 {
        spec.ioengine = IoEngine::Libaio;
        // Now and then deeper than a request list, so submitters sleep on it.
        spec.iodepth = if rng.below(6) == 0 {
            32 + rng.below(256) as u32
        } else {
            1 + rng.below(16) as u32
        };
        spec.iodepth_low = spec.iodepth;
    }
    spec.numjobs = 1 + rng.below(2) as u32;
    if rng.below(3) == 0 {
        spec.thinktime_ns = rng.below(2_000_000);
    }
    match rng.below(4) {
        0 => spec.cgroup = Some(format!("g{}", rng.below(3))),
        1 => spec.cgroup = Some(format!("g{}/sub{}", rng.below(2), rng.below(2))),
        _ => {}
    }
    if spec.cgroup.is_some() && rng.below(2) == 0 {
        spec.cgroup_weight = Some(100 + 100 * rng.below(10) as u32);
    }
    spec.ioprio = match rng.below(5) {
        0 => IoPrio {
            class: IoPrioClass::RealTime,
            level: rng.below(8) as u8,
        },
        1 => IoPrio {
            class: IoPrioClass::Idle,
            level: 7,
        },
        2 => IoPrio {
            class: IoPrioClass::BestEffort,
            level: rng.below(8) as u8,
        },
        _ => IoPrio::none(),
    };
    spec
}

fn draw_tunables(rng: &mut Rng, scheduler: &str) -> Vec<(String, String)> {
    let choices: &[(&str, &[&str])] = match scheduler {
        "cfq" => &[
            ("slice_idle", &["0", "1", "8"]),
            ("group_idle", &["0", "8"]),
            ("low_latency", &["0", "1"]),
            ("quantum", &["1", "8", "32"]),
            ("deep_fast_clear", &["0", "1"]),
            ("deep_seeky_fix", &["0", "1"]),
            ("ancestor_preempt", &["0", "1"]),
        ],
        "deadline" => &[
            ("fifo_batch", &["1", "16"]),
            ("writes_starved", &["0", "2"]),
        ],
        _ => &[],
    };
    let mut set = Vec::new();
    for (name, values) in choices {
        if rng.below(2) == 0 {
            let value = values[rng.below(values.len() as u64) as usize];
            set.push((name.to_string(), value.to_string()));
        }
    }
    set
}

fn swarm_case(seed: u64) {
    let mut rng = Rng::new(seed);
    let devices = presets();
    let device = devices[rng.below(devices.len() as u64) as usize].name;
    let scheduler = ["noop", "deadline", "cfq"][rng.below(3) as usize];
    let jobs: Vec<JobSpec> = (0..1 + rng.below(4) as usize)
        .map(|index| draw_job(&mut rng, index))
        .collect();
    let nr_requests = ["4", "16", "128"][rng.below(3) as usize];
    let config = SimConfig {
        scheduler: scheduler.to_string(),
        tunables: draw_tunables(&mut rng, scheduler),
        fs_knobs: vec![("nr_requests".into(), nr_requests.into())],
        seed,
        check: true,
        events_max: 5_000_000,
        ..SimConfig::default()
    };
    let context = format!(
        "swarm seed {seed}: {device} {scheduler} nr_requests={nr_requests} {:?}",
        config.tunables
    );
    let outcome = Simulation::new(&jobs, preset(device).unwrap(), config)
        .unwrap_or_else(|e| panic!("{context}: {e}"))
        .run(&mut NoTrace, &mut |_| {})
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let job_bytes: u64 = outcome
        .clones
        .iter()
        .map(|s| s.dirs.iter().map(|d| d.io_bytes).sum::<u64>())
        .sum();
    let device_bytes = (outcome.disk.read_sectors + outcome.disk.write_sectors) * 512;
    assert_eq!(job_bytes, device_bytes, "{context}");
}

#[test]
fn swarm_fixed_seed_set() {
    for seed in 0..1500 {
        swarm_case(seed);
    }
}
