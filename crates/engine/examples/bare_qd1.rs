//! The floor for the engine's QD1 figures: the least an io_uring program can do per 4 KiB
//! random read at queue depth 1, with fio 3.33's ring and fio's system calls and nothing
//! else (no scheduler, no statistics, no job model).
//!
//! `scripts/bench-engine-vs-fio.py` runs it beside the engine and fio on the same loop
//! device: where the engine trails fio but matches this loop, the gap is not in the engine's
//! code. Read-only by construction, so it needs no `--force`.
//!
//! Usage: `bare_qd1 DEVICE SECONDS [SIZE_MIB]` (SIZE_MIB defaults to 128, as the bench's
//! `size=128m`). Prints one JSON line: IOPS, and per I/O the CPU time and the context
//! switches the process made (an involuntary switch is the loop's worker preempting this
//! process on its own CPU, which is how a QD1 read on a loop device over /dev/shm runs
//! fastest on a 2-CPU machine).

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::process::ExitCode;
use std::time::Instant;

use io_uring::{opcode, types, IoUring};

const BLOCK: usize = 4096;
/// `io_uring_enter`'s flag asking for completions (the crate keeps its copy private).
const IORING_ENTER_GETEVENTS: u32 = 1;
/// Look at the clock once per this many I/Os, as fio checks its runtime between batches.
const CLOCK_EVERY: u64 = 256;

struct Args {
    device: String,
    seconds: f64,
    size_mib: u64,
}

fn parse_args() -> Result<Args, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bare_qd1 DEVICE SECONDS [SIZE_MIB]";
    let (Some(device), Some(seconds)) = (args.first(), args.get(1)) else {
        return Err(usage.to_string());
    };
    let seconds: f64 = seconds
        .parse()
        .ok()
        .filter(|s: &f64| *s > 0.0 && *s <= 3600.0)
        .ok_or_else(|| format!("SECONDS: '{seconds}' is not a number from 0 to 3600"))?;
    let size_mib = match args.get(2) {
        None => 128,
        Some(text) => text
            .parse()
            .ok()
            .filter(|&mib: &u64| mib > 0 && mib <= 1 << 30)
            .ok_or_else(|| format!("SIZE_MIB: '{text}' is not a positive size"))?,
    };
    if args.len() > 3 {
        return Err(usage.to_string());
    }
    Ok(Args {
        device: device.clone(),
        seconds,
        size_mib,
    })
}

/// fio 3.33's ring for `iodepth=1`: one submission entry, a completion queue of one
/// (`CQSIZE`), completions' task work run only when the process enters the kernel
/// (`COOP_TASKRUN`, `SINGLE_ISSUER`, `DEFER_TASKRUN`), each flag dropped where the
/// kernel does not know it, as fio retries.
fn fio_ring() -> std::io::Result<IoUring> {
    let deferred = IoUring::builder()
        .setup_cqsize(1)
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(1);
    match deferred {
        Err(error) if error.raw_os_error() == Some(libc::EINVAL) => IoUring::builder()
            .setup_cqsize(1)
            .setup_coop_taskrun()
            .build(1)
            .or_else(|_| IoUring::builder().setup_cqsize(1).build(1)),
        other => other,
    }
}

/// A page-aligned buffer for one `O_DIRECT` read, freed on drop.
struct AlignedBlock(*mut u8);

impl AlignedBlock {
    fn new() -> AlignedBlock {
        let layout = std::alloc::Layout::from_size_align(BLOCK, BLOCK).expect("static layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBlock(ptr)
    }
}

impl Drop for AlignedBlock {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(BLOCK, BLOCK).expect("static layout");
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.0, layout) };
    }
}

/// Per-process CPU time (µs) and context switches, from getrusage(2).
fn usage() -> (f64, f64, i64, i64) {
    // SAFETY: `rusage` is plain data that getrusage fills.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let us = |tv: libc::timeval| tv.tv_sec as f64 * 1e6 + tv.tv_usec as f64;
    (
        us(usage.ru_utime),
        us(usage.ru_stime),
        usage.ru_nvcsw,
        usage.ru_nivcsw,
    )
}

/// Runs QD1 random reads for `seconds`; returns the I/Os done and the seconds they took.
fn read_loop(ring: &mut IoUring, file: &File, args: &Args) -> Result<(u64, f64), String> {
    let block = AlignedBlock::new();
    let blocks = (args.size_mib << 20) / BLOCK as u64;
    // xorshift64: offsets spread over the range; reads may repeat, which a loop device
    // over memory does not care about.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let start = Instant::now();
    let mut ios = 0u64;
    loop {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let offset = (state % blocks) * BLOCK as u64;
        let read = opcode::Read::new(types::Fd(file.as_raw_fd()), block.0, BLOCK as u32)
            .offset(offset)
            .build();
        // SAFETY: the buffer outlives the read, which is reaped below before the next push.
        unsafe { ring.submission().push(&read) }.map_err(|_| "submission queue full")?;
        // fio's commit: submit, and run any completion's task work without waiting.
        // SAFETY: no argument is passed.
        unsafe {
            ring.submitter()
                .enter::<libc::sigset_t>(1, 0, IORING_ENTER_GETEVENTS, None)
        }
        .map_err(|error| format!("io_uring_enter (submit): {error}"))?;
        // fio's getevents: wait only if the completion is not in already.
        if ring.completion().is_empty() {
            ring.submit_and_wait(1)
                .map_err(|error| format!("io_uring_enter (wait): {error}"))?;
        }
        let Some(done) = ring.completion().next() else {
            return Err("woken without a completion".to_string());
        };
        if done.result() != BLOCK as i32 {
            return Err(format!("read at {offset} returned {}", done.result()));
        }
        ios += 1;
        if ios.is_multiple_of(CLOCK_EVERY) && start.elapsed().as_secs_f64() >= args.seconds {
            return Ok((ios, start.elapsed().as_secs_f64()));
        }
    }
}

fn run(args: &Args) -> Result<String, String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&args.device)
        .map_err(|error| format!("{}: {error}", args.device))?;
    let mut ring = fio_ring().map_err(|error| format!("io_uring_setup: {error}"))?;
    let before = usage();
    let (ios, seconds) = read_loop(&mut ring, &file, args)?;
    let after = usage();
    let per_io = |a: f64, b: f64| (b - a) / ios as f64;
    Ok(format!(
        "{{\"iops\": {:.1}, \"ios\": {ios}, \"seconds\": {seconds:.3}, \"usr_us_per_io\": {:.3}, \
         \"sys_us_per_io\": {:.3}, \"voluntary_switches_per_io\": {:.3}, \
         \"involuntary_switches_per_io\": {:.3}}}",
        ios as f64 / seconds,
        per_io(before.0, after.0),
        per_io(before.1, after.1),
        per_io(before.2 as f64, after.2 as f64),
        per_io(before.3 as f64, after.3 as f64),
    ))
}

fn main() -> ExitCode {
    match parse_args().and_then(|args| run(&args)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("bare_qd1: {message}");
            ExitCode::FAILURE
        }
    }
}
