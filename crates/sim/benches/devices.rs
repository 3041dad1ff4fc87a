//! Simulated requests per second through each device model: a closed loop of 4 KiB random
//! reads at queue depth 1 and 32 (capped by the device's depth), no scheduler.
//!
//! `cargo bench -p iosched-sim --bench devices`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use iosched_sim::device::calibrate::{run_closed_loop, LoopSpec, Pattern, Region};
use iosched_sim::device::presets;

const OPS: u64 = 20_000;

fn devices(c: &mut Criterion) {
    let mut group = c.benchmark_group("devices");
    group.throughput(Throughput::Elements(OPS));
    group.sample_size(20);
    for preset in presets() {
        for depth in [1u32, 32] {
            let spec = LoopSpec {
                pattern: Pattern::RandomRead,
                region: Region::Full,
                queue_depth: depth,
                block_bytes: 4096,
                ops: OPS,
                warmup_ops: 0,
                time_limit_ns: u64::MAX,
                seed: 1,
            };
            group.bench_function(format!("{}/qd{depth}", preset.name), |b| {
                b.iter_batched(
                    preset.build,
                    |mut device| run_closed_loop(device.as_mut(), &spec),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, devices);
criterion_main!(benches);
