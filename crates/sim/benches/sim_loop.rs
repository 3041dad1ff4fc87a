//! Simulator loop throughput: simulated requests per second of wall time through `noop` on
//! the `fixed` device (one random reader at iodepth 32), the cost of the driver itself.
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

criterion_group!(benches, sim_loop);
criterion_main!(benches);
