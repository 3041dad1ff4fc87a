//! Heap allocations per I/O on the engine's hot path, counted by a global allocator that
//! wraps the system's (`cargo bench -p iosched-engine --bench alloc`).
//!
//! Two runs of one job on a scratch file in the temp directory, one with four times the
//! I/Os of the other: the difference in allocations over the difference in I/Os is what
//! each further I/O costs, setup and results aside. The goal is 0 (issue 16); a merged
//! request's vector is the one allocation left by design, and random 4 KiB reads do not
//! merge. Prints allocations per I/O for noop and cfq at QD1 and QD32.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use iosched_engine::{Engine, EngineConfig};
use iosched_workload::fio::{parse_str, ParseContext};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call goes straight to the system allocator; the counter is a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Loops enough that the file's size never ends the run: `number_ios` does.
const LOOPS: u64 = 1000;

/// Allocations during one run of `ios` I/Os (the engine built first, not counted). As in
/// fio 3.33, `number_ios` counts every loop, so the job asks for `ios / LOOPS` a loop.
fn run(path: &str, scheduler: &str, depth: u32, ios: u64) -> u64 {
    assert_eq!(ios % LOOPS, 0, "{ios} I/Os in {LOOPS} loops");
    let text = format!(
        "[bench]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\niodepth={depth}\n\
         size=16m\nnumber_ios={}\nloops={LOOPS}\n",
        ios / LOOPS
    );
    let jobs = parse_str(&text, "alloc.fio", &ParseContext::fixed(4096, 4096, 2))
        .expect("job parses")
        .jobs;
    let config = EngineConfig {
        scheduler: scheduler.to_string(),
        ..EngineConfig::default()
    };
    let engine = Engine::new(&jobs, path, config).expect("engine sets up");
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let outcome = engine.run(&AtomicBool::new(false)).expect("engine runs");
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(outcome.clones[0].dirs[0].io_bytes, ios * 4096);
    after - before
}

fn main() {
    let dir = std::env::temp_dir().join(format!("iosched-alloc-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join("target.img").to_string_lossy().into_owned();
    const SHORT: u64 = 5_000;
    for scheduler in ["noop", "cfq"] {
        for depth in [1, 32] {
            let short = run(&path, scheduler, depth, SHORT);
            let long = run(&path, scheduler, depth, 4 * SHORT);
            let per_io = long.saturating_sub(short) as f64 / (3 * SHORT) as f64;
            println!(
                "{scheduler:5} QD{depth:<2}: {per_io:.3} allocations per I/O \
                 ({short} in {SHORT} I/Os, {long} in {})",
                4 * SHORT
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
