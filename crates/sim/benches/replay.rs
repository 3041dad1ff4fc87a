//! Replay speed: capture records decoded per second (a synthetic blktrace capture of queue and
//! completion events from four processes), and replayed I/Os simulated per second (the same
//! capture open loop and closed loop through `noop` and `cfq` on the `fixed` device).
//!
//! cargo bench -p iosched-sim --bench replay

use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use iosched_core::NoTrace;
use iosched_report::blktrace::{action, category, tc_act, Record};
use iosched_sim::device::preset;
use iosched_sim::{SimConfig, Simulation};
use iosched_workload::replay::blktrace::{decode, Capture};
use iosched_workload::replay::{ReplayLog, ReplayPart, ReplaySpec};
use iosched_workload::{IoEngine, JobSpec};

const IOS: u64 = 20_000;
const PIDS: u64 = 4;

/// `IOS` 4 KiB sync reads, each process sequential in its own region, 100 µs apart, each
/// completed 80 µs after it was queued: a `Q` and a `C` record each.
fn capture_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    for i in 0..IOS {
        let pid = (i % PIDS) as u32 + 100;
        let sector = u64::from(pid) * (1 << 21) + (i / PIDS) * 8;
        let record = |time: u64, code: u32, cat: u32| Record {
            sequence: i as u32,
            time,
            sector,
            bytes: 4096,
            action: code | tc_act(cat | category::READ | category::SYNC),
            pid,
            device: 8 << 20,
            cpu: 0,
            error: 0,
            payload: Vec::new(),
        };
        let t = i * 100_000;
        bytes.extend(record(t, action::QUEUE, category::QUEUE).encode());
        bytes.extend(record(t + 80_000, action::COMPLETE, category::COMPLETE).encode());
    }
    bytes
}

fn jobs(log: &Arc<ReplayLog>, closed_loop: bool) -> Vec<JobSpec> {
    log.pids()
        .into_iter()
        .map(|pid| {
            let mut replay = ReplaySpec::new("bench");
            replay.log = Some(log.clone());
            replay.pids = Some(vec![pid]);
            replay.part = ReplayPart::Sync;
            replay.closed_loop = closed_loop;
            let mut spec = JobSpec::new(&format!("p{pid}"));
            spec.direct = true;
            spec.ioengine = IoEngine::Libaio;
            spec.iodepth = 64;
            spec.filenames = vec!["/dev/replay".to_string()];
            spec.replay = Some(replay);
            spec
        })
        .collect()
}

fn replay(c: &mut Criterion) {
    let bytes = capture_bytes();
    let mut group = c.benchmark_group("replay");
    group.throughput(Throughput::Elements(2 * IOS));
    group.bench_function("decode_records", |b| {
        b.iter(|| {
            let records = decode(Path::new("bench"), &bytes).unwrap();
            Capture::merge(vec![records]).ios()
        })
    });
    let records = decode(Path::new("bench"), &bytes).unwrap();
    let log = Arc::new(ReplayLog::from_capture(
        Path::new("bench"),
        &Capture::merge(vec![records]),
    ));
    group.throughput(Throughput::Elements(IOS));
    for (mode, closed) in [("open", false), ("closed", true)] {
        let jobs = jobs(&log, closed);
        for scheduler in ["noop", "cfq"] {
            group.bench_function(format!("simulate_{mode}_{scheduler}"), |b| {
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
    }
    group.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
