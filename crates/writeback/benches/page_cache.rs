//! Cost of the page-cache policy per buffered write: a writer dirtying 4 KiB pages (random
//! or sequential) in a 256 MiB file under throttling, with a per-bdi or pdflush flusher
//! whose requests complete at once. Reports pages per second of policy work.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use iosched_writeback::{
    FlusherMode, FlusherStep, Notice, QueueState, Throttle, Writeback, WritebackConfig, PAGE_SIZE,
};

const PAGES: u64 = 20_000;
const FILE_PAGES: u64 = 65_536;

fn buffered_writes(mode: FlusherMode, random: bool) -> u64 {
    let mut config = WritebackConfig {
        flusher: mode,
        ..WritebackConfig::default()
    };
    config.set("mem", "256m").expect("valid");
    let mut wb = Writeback::new(config, 1);
    let file = wb.add_file(0, FILE_PAGES * PAGE_SIZE);
    let mut flushers = Vec::new();
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut now = 0;
    let mut written = 0;
    for step in 0..PAGES {
        now += 1_000;
        if let Throttle::Block(pause) = wb.balance_dirty_pages(1, now) {
            now += pause;
        }
        let page = if random {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % FILE_PAGES
        } else {
            step % FILE_PAGES
        };
        wb.write(file, page * PAGE_SIZE, PAGE_SIZE, now);
        if wb.timer_at().is_some_and(|at| at <= now) {
            wb.timer(now);
        }
        for notice in wb.take_notices() {
            let (Notice::Spawned { id, .. } | Notice::Wake { id }) = notice;
            if !flushers.contains(&id) {
                flushers.push(id);
            }
        }
        if step % 64 == 0 {
            for &id in &flushers {
                while let FlusherStep::Submit(range) =
                    wb.flusher_step(id, now, QueueState::default())
                {
                    written += range.count;
                    wb.writeback_done(range, now);
                }
            }
        }
    }
    written
}

fn page_cache(c: &mut Criterion) {
    let mut group = c.benchmark_group("buffered_write_4k");
    group.throughput(Throughput::Elements(PAGES));
    group.sample_size(10);
    for (name, mode) in [
        ("per-bdi", FlusherMode::PerBdi),
        ("pdflush", FlusherMode::Pdflush),
    ] {
        for random in [false, true] {
            let label = format!("{name}/{}", if random { "random" } else { "sequential" });
            group.bench_with_input(BenchmarkId::from_parameter(label), &random, |b, &random| {
                b.iter(|| buffered_writes(mode, random))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, page_cache);
criterion_main!(benches);
