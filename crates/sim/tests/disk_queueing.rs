//! The textbook case for CFQ's idling — several sequential readers on one disk — as the
//! sourced `hdd-7200` drive plays it (docs/device-models.md, "Two to four sequential readers").
//!
//! Outside references: the drive's queue and cache parameters come from DiskSim's validated
//! disk models, Seagate's product manuals and Google's NCQ measurement (docs/device-models.md);
//! none is set from these runs. What the tests hold is how that drive divides the gain:
//! `direct=1` readers leave one command each in the drive, which ping-pongs between files under
//! noop and streams under CFQ's idling; buffered readers leave two (read-ahead), and the NCQ
//! drive's positioning-time order keeps serving the stream whose next window is queued, so the
//! drive itself anticipates and CFQ has nothing left to win. With NCQ off (one command in the
//! drive, as in the pre-NCQ measurements behind the 2–4× folklore) the buffered gain returns.

use iosched_core::NoTrace;
use iosched_sim::device::hdd::{HddDevice, HddParams};
use iosched_sim::device::{preset, Device};
use iosched_sim::{SimConfig, SimOutcome, Simulation};
use iosched_workload::{BlockSizes, JobSpec, RwMode, SizeOrPercent};

fn reader(index: usize, direct: bool, bs: u64) -> JobSpec {
    let mut spec = JobSpec::new(&format!("r{index}"));
    spec.rw = RwMode::Read;
    spec.direct = direct;
    spec.bs = std::array::from_fn(|_| BlockSizes::Fixed(bs));
    spec.size = Some(SizeOrPercent::Bytes(2 << 30));
    spec.time_based = true;
    spec.runtime_ns = Some(3_000_000_000);
    spec
}

fn total_mb_s(jobs: &[JobSpec], device: Box<dyn Device>, scheduler: &str, idle: bool) -> f64 {
    let mut tunables = Vec::new();
    if !idle {
        tunables.push(("slice_idle".to_string(), "0".to_string()));
    }
    let config = SimConfig {
        scheduler: scheduler.to_string(),
        tunables,
        seed: 7,
        ..SimConfig::default()
    };
    let outcome: SimOutcome = Simulation::new(jobs, device, config)
        .unwrap()
        .run(&mut NoTrace, &mut |_| {})
        .unwrap();
    let bytes: u64 = outcome
        .clones
        .iter()
        .map(|stats| stats.dirs.iter().map(|d| d.io_bytes).sum::<u64>())
        .sum();
    bytes as f64 / 3.0 / 1e6
}

/// noop, CFQ and CFQ with `slice_idle=0`, in MB/s, for `readers` readers.
fn three_ways(readers: usize, direct: bool, bs: u64, build: fn() -> Box<dyn Device>) -> [f64; 3] {
    let jobs: Vec<JobSpec> = (0..readers).map(|i| reader(i, direct, bs)).collect();
    [
        total_mb_s(&jobs, build(), "noop", true),
        total_mb_s(&jobs, build(), "cfq", true),
        total_mb_s(&jobs, build(), "cfq", false),
    ]
}

fn hdd_7200() -> Box<dyn Device> {
    preset("hdd-7200").unwrap()
}

fn hdd_7200_ncq_off() -> Box<dyn Device> {
    Box::new(HddDevice::new(HddParams {
        queue_depth: 1,
        ..HddParams::hdd_7200()
    }))
}

/// O_DIRECT readers, 4 KiB and 64 KiB, two and four of them: CFQ's idling multiplies the
/// total and `slice_idle=0` gives back at least most of the gain.
#[test]
fn idling_pays_for_direct_sequential_readers() {
    for readers in [2, 4] {
        for bs in [4096, 65536] {
            let [noop, cfq, no_idle] = three_ways(readers, true, bs, hdd_7200);
            let case = format!(
                "{readers} readers, bs {bs}: noop {noop:.1} cfq {cfq:.1} slice_idle=0 {no_idle:.1}"
            );
            assert!(cfq > 1.5 * noop, "{case}");
            assert!(no_idle - noop < 0.5 * (cfq - noop), "{case}");
        }
    }
}

/// Buffered readers on the NCQ drive: two requests of each reader in the drive, and the
/// drive's positioning-time order streams one file until the ageing bound, as CFQ would; the
/// two schedulers stay within 25 % of each other. With NCQ off the drive sees one command at
/// a time, noop alternates files, and CFQ's gain is 1.5–6×.
#[test]
fn ncq_drive_anticipates_for_buffered_readers() {
    for readers in [2, 4] {
        for bs in [4096, 65536] {
            let [noop, cfq, _] = three_ways(readers, false, bs, hdd_7200);
            let case = format!("NCQ, {readers} readers, bs {bs}: noop {noop:.1} cfq {cfq:.1}");
            assert!(cfq < 1.25 * noop && noop < 1.25 * cfq, "{case}");
            let [noop, cfq, _] = three_ways(readers, false, bs, hdd_7200_ncq_off);
            let case = format!("NCQ off, {readers} readers, bs {bs}: noop {noop:.1} cfq {cfq:.1}");
            assert!(cfq > 1.5 * noop && cfq < 6.0 * noop, "{case}");
        }
    }
}

/// Issue 33: what anticipation gains on one disk without command queueing, against the
/// published measurement. Iyer and Druschel (SOSP 2001, "Anticipatory scheduling", §1 and §2)
/// measured deceptive idleness costing synchronous sequential readers "up to a factor of
/// four" under a seek-optimising work-conserving scheduler, and anticipation giving Apache
/// 29–71 % more throughput. Here CFQ's idling over deadline (their kind of baseline) for two
/// and four O_DIRECT 4 KiB sequential readers on `hdd-7200` with NCQ off must lie within that
/// measured range, 1× to 4×. Before the drive's read-ahead kept running while the other
/// reader's command paid its overhead, every switch cost a seek and a rotation and the gain was
/// 43× (two readers, these 3 s runs: deadline 0.8 MB/s, CFQ 34.2 MB/s).
#[test]
fn anticipation_gains_at_most_the_measured_factor_of_four() {
    for readers in [2, 4] {
        let jobs: Vec<JobSpec> = (0..readers).map(|i| reader(i, true, 4096)).collect();
        let deadline = total_mb_s(&jobs, hdd_7200_ncq_off(), "deadline", true);
        let cfq = total_mb_s(&jobs, hdd_7200_ncq_off(), "cfq", true);
        let gain = cfq / deadline;
        let case = format!("{readers} readers: deadline {deadline:.1} cfq {cfq:.1} MB/s");
        assert!(gain >= 0.95, "gain {gain:.2} below 1: {case}");
        assert!(gain <= 4.0, "gain {gain:.2} above the measured 4x: {case}");
    }
}

/// Issue 33: interleaved sequential streams against a published measurement. Corrado Zoccolo
/// (LKML, 2009-09-03, "cfq: adapt slice to number of processes doing I/O") measured on a
/// rotational disk under CFQ 28 093 KB/s for 32 concurrent sequential readers and 466 KB/s for
/// 32 random readers: a ratio of 60. His drive is not named (its rates are about a third of
/// `hdd-7200`'s), so the ratio is what is compared; held within a factor of two (30–120).
#[test]
fn thirty_two_sequential_readers_over_random_near_the_measured_ratio() {
    let jobs = |random: bool| -> Vec<JobSpec> {
        (0..32)
            .map(|i| {
                let mut spec = reader(i, false, 4096);
                spec.size = Some(SizeOrPercent::Bytes(256 << 20));
                if random {
                    spec.rw = RwMode::RandRead;
                }
                spec
            })
            .collect()
    };
    let sequential = total_mb_s(&jobs(false), hdd_7200(), "cfq", true);
    let random = total_mb_s(&jobs(true), hdd_7200(), "cfq", true);
    let ratio = sequential / random;
    let case = format!("sequential {sequential:.2} random {random:.3} MB/s: ratio {ratio:.0}");
    assert!((30.0..=120.0).contains(&ratio), "{case}");
}
