//! Simulator loop throughput: simulated requests per second of wall time, the whole loop
//! (jobs, driver, scheduler, device model, statistics) per scheduler: one random reader at
//! iodepth 32 on the `fixed` device, and issue 34's workload (16 clones of 4 KiB random reads
//! at iodepth 4 on `nvme-gen4`, here bounded by I/O count instead of 5 simulated seconds).
//!
//! cargo bench -p iosched-sim --bench sim_loop

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use iosched_core::NoTrace;
use iosched_sim::device::preset;
use iosched_sim::{SimConfig, Simulation};
use iosched_workload::{IoEngine, JobSpec, RwMode, SizeOrPercent};

const REQUESTS: u64 = 20_000;

fn job() -> JobSpec {
    let mut spec = JobSpec::new("bench");
    spec.rw = RwMode::RandRead;
    spec.ioengine = IoEngine::IoUring;
    spec.direct = true;
    spec.iodepth = 32;
    spec.iodepth_low = 32;
    spec.size = Some(SizeOrPercent::Bytes(1 << 30));
    spec.number_ios = Some(REQUESTS);
    spec
}

fn sim_loop(c: &mut Criterion) {
    let jobs = [job()];
    let mut group = c.benchmark_group("sim_loop");
    group.throughput(Throughput::Elements(REQUESTS));
    for scheduler in ["noop", "deadline", "cfq"] {
        group.bench_function(format!("{scheduler}_fixed_qd32"), |b| {
            b.iter(|| {
                let config = SimConfig {
                    scheduler: scheduler.to_string(),
                    ..SimConfig::default()
                };
                Simulation::new(&jobs, preset("fixed").unwrap(), config)
                    .unwrap()
                    .run(&mut NoTrace, &mut |_| {})
                    .unwrap()
            })
        });
    }
    group.finish();
}

/// 1,024 I/Os per clone, 16 clones: 16,384 requests per iteration.
const CLONE_IOS: u64 = 1024;
const CLONES: u32 = 16;

/// Issue 34's job: `bench/jobs/speed-randread.fio` with an I/O count for its runtime.
fn clones_job() -> JobSpec {
    let mut spec = JobSpec::new("speed");
    spec.rw = RwMode::RandRead;
    spec.ioengine = IoEngine::Libaio;
    spec.direct = true;
    spec.iodepth = 4;
    spec.iodepth_low = 4;
    spec.numjobs = CLONES;
    spec.size = Some(SizeOrPercent::Bytes(1 << 30));
    spec.number_ios = Some(CLONE_IOS);
    spec
}

fn sim_loop_clones(c: &mut Criterion) {
    let jobs = [clones_job()];
    let mut group = c.benchmark_group("sim_loop");
    group.throughput(Throughput::Elements(CLONE_IOS * u64::from(CLONES)));
    for scheduler in ["noop", "deadline", "cfq"] {
        group.bench_function(format!("{scheduler}_nvme_16x_qd4"), |b| {
            b.iter(|| {
                let config = SimConfig {
                    scheduler: scheduler.to_string(),
                    ..SimConfig::default()
                };
                let outcome = Simulation::new(&jobs, preset("nvme-gen4").unwrap(), config)
                    .unwrap()
                    .run(&mut NoTrace, &mut |_| {})
                    .unwrap();
                let reads: u64 = outcome.clones.iter().map(|c| c.dirs[0].total_ios).sum();
                assert_eq!(reads, CLONE_IOS * u64::from(CLONES));
                outcome
            })
        });
    }
    group.finish();
}

criterion_group!(benches, sim_loop, sim_loop_clones);
criterion_main!(benches);
