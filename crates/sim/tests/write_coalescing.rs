//! Write-back caches that coalesce: many interleaved sequential 4 KiB write streams (fio-style
//! processes, each cycling through its files one block at a time) keep the disk or array near
//! its sequential rate once the cache is full, because adjacent dirty blocks of one stream are
//! destaged as one long media write; random 4 KiB writes stay at the random rate.

use iosched_core::{Op, RequestId, Time, NSEC_PER_SEC};
use iosched_sim::device::calibrate::{run_closed_loop, LoopSpec, Pattern, Region};
use iosched_sim::device::{preset, Command, Device};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

const SEED: u64 = 20_260_101;

/// How the streams' files lie on the device.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Evenly over the whole capacity (worst-case seeks between streams).
    Spread,
    /// Packed one after another, each `file_sectors` long (a fresh file system's allocator).
    Packed { file_sectors: u64 },
}

/// `processes` closed loops, one 4 KiB write outstanding each; process `p` writes its files
/// `p·files … p·files + files − 1` in turn, each file advancing 4 KiB per write. Returns the
/// MB/s completed between `warmup_ns` and `warmup_ns + measure_ns`.
fn interleaved_streams(
    device: &mut dyn Device,
    processes: u64,
    files: u64,
    layout: Layout,
    random: bool,
    warmup_ns: Time,
    measure_ns: Time,
) -> f64 {
    let mut rng = Pcg64Mcg::seed_from_u64(SEED);
    let mut offsets = Pcg64Mcg::seed_from_u64(SEED ^ 0x77);
    let capacity = device.capacity_sectors();
    let streams = processes * files;
    let base: Vec<u64> = (0..streams)
        .map(|s| match layout {
            Layout::Spread => s * (capacity / streams) / 8 * 8,
            Layout::Packed { file_sectors } => s * file_sectors,
        })
        .collect();
    let mut next = base.clone();
    let mut turn = vec![0u64; processes as usize];
    let mut issue = |p: u64, now: Time, device: &mut dyn Device, rng: &mut Pcg64Mcg| {
        let stream = p * files + turn[p as usize];
        turn[p as usize] = (turn[p as usize] + 1) % files;
        let sector = if random {
            offsets.next_u64() % (capacity / 8) * 8
        } else {
            let sector = next[stream as usize];
            next[stream as usize] += 8;
            sector
        };
        device.submit(
            now,
            Command {
                id: RequestId(p),
                op: Op::Write,
                sector,
                nr_sectors: 8,
                fua: false,
            },
            rng,
        );
    };
    for p in 0..processes {
        issue(p, 0, device, &mut rng);
    }
    let end = warmup_ns + measure_ns;
    let mut counted = 0u64;
    let mut done = Vec::new();
    loop {
        let now = device.next_event().expect("writes in flight");
        if now > end {
            break;
        }
        done.clear();
        device.advance(now, &mut rng, &mut done);
        for id in &done {
            if now > warmup_ns {
                counted += 1;
            }
            issue(id.0, now, device, &mut rng);
        }
    }
    (counted * 4096) as f64 / (measure_ns as f64 / NSEC_PER_SEC as f64) / 1e6
}

fn sequential_write_mb_per_s(name: &str) -> f64 {
    let mut device = preset(name).unwrap();
    let spec = LoopSpec {
        pattern: Pattern::SequentialWrite,
        region: Region::Outer,
        queue_depth: 8,
        block_bytes: 1 << 20,
        ops: 2_000,
        warmup_ops: 1_000,
        time_limit_ns: 60 * NSEC_PER_SEC,
        seed: SEED,
    };
    run_closed_loop(device.as_mut(), &spec).mb_per_s
}

/// Prints the figures: `cargo test -p iosched-sim --release --test write_coalescing --
/// --ignored --nocapture`.
#[test]
#[ignore]
fn print_interleaved_stream_figures() {
    let only = std::env::var("PRESET").ok();
    for (name, warmup, measure) in [("hdd-7200", 2, 10), ("raid0-8x10k", 8, 10)] {
        if only.as_deref().is_some_and(|only| only != name) {
            continue;
        }
        let seq = sequential_write_mb_per_s(name);
        println!("{name}: sequential 1 MiB writes {seq:.1} MB/s");
        for (label, layout, random) in [
            ("random 4 KiB", Layout::Spread, true),
            ("32 streams spread", Layout::Spread, false),
            (
                "32 streams packed 64 MiB files",
                Layout::Packed {
                    file_sectors: 131_072,
                },
                false,
            ),
        ] {
            let mut device = preset(name).unwrap();
            let mb = interleaved_streams(
                device.as_mut(),
                8,
                4,
                layout,
                random,
                warmup * NSEC_PER_SEC,
                measure * NSEC_PER_SEC,
            );
            println!("{name}: {label}, 8 processes x 4 files, QD 8: {mb:.2} MB/s");
        }
    }
}
