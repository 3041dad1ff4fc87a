//! The engine against real targets: a plain file and a loop device (root only; skipped with a
//! note otherwise), two weighted cgroups through each scheduler, verify runs, and the refusals
//! that protect file systems.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

use iosched_engine::{Engine, EngineConfig, EngineError};
use iosched_workload::{IoEngine, JobSpec, RwMode, SizeOrPercent};

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("iosched-engine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over a file, detached on drop (also when the test fails).
struct LoopDevice {
    device: String,
}

impl LoopDevice {
    /// `None` (with a note) when not root or loop devices are unavailable.
    fn attach(image: &str, bytes: u64, partscan: bool) -> Option<LoopDevice> {
        if !is_root() {
            eprintln!(
                "SKIPPED: {}: loop devices need root",
                std::thread::current().name().unwrap_or("?")
            );
            return None;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(image)
            .unwrap();
        file.set_len(bytes).unwrap();
        let mut args = vec!["-f", "--show"];
        if partscan {
            args.push("-P");
        }
        args.push(image);
        let output = Command::new("losetup").args(&args).output();
        match output {
            Ok(out) if out.status.success() => Some(LoopDevice {
                device: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            }),
            other => {
                eprintln!(
                    "SKIPPED: {}: losetup failed: {other:?}",
                    std::thread::current().name().unwrap_or("?")
                );
                None
            }
        }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.device).output();
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

fn job(name: &str, rw: RwMode, size: u64) -> JobSpec {
    let mut spec = JobSpec::new(name);
    spec.rw = rw;
    spec.direct = true;
    spec.ioengine = IoEngine::IoUring;
    spec.iodepth = 8;
    spec.size = Some(SizeOrPercent::Bytes(size));
    spec
}

/// Two jobs in two cgroups weighted 800 and 200.
fn weighted_pair(rw: RwMode) -> Vec<JobSpec> {
    let mut a = job("heavy", rw, 4 << 20);
    a.cgroup = Some("heavy".into());
    a.cgroup_weight = Some(800);
    let mut b = job("light", rw, 4 << 20);
    b.cgroup = Some("light".into());
    b.cgroup_weight = Some(200);
    vec![a, b]
}

fn config(scheduler: &str) -> EngineConfig {
    EngineConfig {
        scheduler: scheduler.to_string(),
        check: true,
        ..EngineConfig::default()
    }
}

/// The schedulers to try: noop always, cfq once the core has it.
fn schedulers() -> Vec<&'static str> {
    let info = iosched_core::DeviceInfo {
        rotational: false,
        queue_depth: 32,
    };
    let mut names = vec!["noop", "deadline"];
    if iosched_core::new_elevator("cfq", info).is_ok() {
        names.push("cfq");
    } else {
        eprintln!("note: cfq not available in the core yet; testing noop and deadline");
    }
    names
}

fn run(jobs: &[JobSpec], path: &str, config: EngineConfig) -> iosched_engine::EngineOutcome {
    let engine = Engine::new(jobs, path, config).unwrap_or_else(|e| panic!("{path}: {e}"));
    engine
        .run(&AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every byte of both jobs moves, with no error, through each scheduler.
fn check_weighted_pair(path: &str) {
    for scheduler in schedulers() {
        for rw in [RwMode::Write, RwMode::RandRead] {
            let jobs = weighted_pair(rw);
            let outcome = run(&jobs, path, config(scheduler));
            let ddir = if rw == RwMode::Write { 1 } else { 0 };
            for stats in &outcome.clones {
                assert_eq!(
                    stats.dirs[ddir].io_bytes,
                    4 << 20,
                    "{scheduler} {rw:?} {}",
                    stats.name
                );
                assert_eq!(stats.error, 0);
            }
            assert!(outcome.io_errors.is_empty(), "{:?}", outcome.io_errors);
            // Every 4 KiB I/O is a request of its own or merged into one (the driver merges).
            let merges = outcome.disk.read_merges + outcome.disk.write_merges;
            assert_eq!(outcome.requests + merges, 2 * 1024, "{scheduler} {rw:?}");
            assert_eq!(outcome.clone_cgroups, ["/heavy", "/light"]);
            let sectors = outcome.disk.read_sectors + outcome.disk.write_sectors;
            assert_eq!(sectors, 2 * (4 << 20) / 512);
        }
    }
}

#[test]
fn weighted_pair_on_a_plain_file() {
    let scratch = Scratch::new("file");
    let path = scratch.path("target.img");
    check_weighted_pair(&path);
    // The file was created to hold both extents after the first MiB.
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        (1 << 20) + (4 << 20) + (4 << 20)
    );
}

#[test]
fn weighted_pair_on_a_loop_device() {
    let scratch = Scratch::new("loop");
    let Some(device) = LoopDevice::attach(&scratch.path("backing.img"), 64 << 20, false) else {
        return;
    };
    check_weighted_pair(&device.device);
}

/// Bytes outside the jobs' extents stay as they were: the engine writes only its regions.
#[test]
fn bytes_outside_the_regions_are_untouched() {
    let scratch = Scratch::new("bounds");
    let path = scratch.path("target.img");
    let sentinel = vec![0xA5u8; 12 << 20];
    std::fs::write(&path, &sentinel).unwrap();
    let mut spec = job("w", RwMode::RandWrite, 2 << 20);
    spec.offset = SizeOrPercent::Bytes(1 << 20);
    run(&[spec], &path, config("noop"));
    let after = std::fs::read(&path).unwrap();
    // Extent at 1 MiB, region [1 MiB, 3 MiB) of it: bytes [2 MiB, 4 MiB) of the file.
    assert!(after[..2 << 20].iter().all(|&b| b == 0xA5), "head written");
    assert!(after[4 << 20..].iter().all(|&b| b == 0xA5), "tail written");
    assert!(
        after[2 << 20..4 << 20].iter().any(|&b| b != 0xA5),
        "region not written"
    );
}

#[test]
fn verify_write_then_read_back_finds_nothing_wrong() {
    let scratch = Scratch::new("verify");
    let path = scratch.path("target.img");
    for method in ["crc32c", "md5"] {
        for rw in [RwMode::Write, RwMode::RandWrite] {
            let mut spec = job("v", rw, 2 << 20);
            spec.verify = Some(method.to_string());
            let outcome = run(&[spec], &path, config("noop"));
            assert!(
                outcome.verify_failures.is_empty(),
                "{:?}",
                outcome.verify_failures
            );
            assert_eq!(outcome.clones[0].dirs[1].io_bytes, 2 << 20);
            // The verify pass reads back every distinct block written (random offsets may
            // repeat: the generator keeps no random map).
            let read = outcome.clones[0].dirs[0].io_bytes;
            assert!(read > 0 && read <= 2 << 20, "{rw:?}: read back {read}");
            if rw == RwMode::Write {
                assert_eq!(read, 2 << 20);
            }
        }
    }
}

#[test]
fn a_corrupted_block_is_caught_with_its_offset() {
    let scratch = Scratch::new("corrupt");
    let path = scratch.path("target.img");
    let mut writer = job("v", RwMode::Write, 1 << 20);
    writer.verify = Some("crc32c".into());
    writer.do_verify = false;
    let outcome = run(&[writer.clone()], &path, config("noop"));
    assert!(outcome.verify_failures.is_empty());
    // Flip one byte in the data of the block at file offset 1 MiB + 64 KiB.
    let corrupt_at = (1u64 << 20) + (64 << 10);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[corrupt_at as usize + 1000] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    let mut reader = writer;
    reader.rw = RwMode::Read;
    let outcome = run(&[reader], &path, config("noop"));
    assert_eq!(
        outcome.verify_failures.len(),
        1,
        "{:?}",
        outcome.verify_failures
    );
    assert_eq!(outcome.verify_failures[0].offset, corrupt_at);
    assert!(outcome.verify_failures[0]
        .message
        .contains("crc32c mismatch"));
}

#[test]
fn buffered_jobs_are_refused_clearly() {
    let scratch = Scratch::new("buffered");
    let mut spec = job("b", RwMode::Read, 1 << 20);
    spec.direct = false;
    let error = Engine::new(&[spec], &scratch.path("x.img"), config("noop"))
        .err()
        .unwrap();
    assert!(error.to_string().contains("direct=0"), "{error}");
}

fn refusal(device: &str) -> String {
    let spec = job("w", RwMode::Write, 1 << 20);
    match Engine::new(&[spec], device, config("noop")) {
        Err(error @ EngineError::Refused { .. }) => error.to_string(),
        Err(other) => panic!("expected a refusal, got: {other}"),
        Ok(_) => panic!("{device} was not refused"),
    }
}

#[test]
fn a_device_with_a_file_system_is_refused_and_mounted_it_stays_refused() {
    let scratch = Scratch::new("mkfs");
    let Some(device) = LoopDevice::attach(&scratch.path("fs.img"), 32 << 20, false) else {
        return;
    };
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", &device.device])
        .status();
    if !mkfs.is_ok_and(|s| s.success()) {
        eprintln!(
            "SKIPPED: {}: mkfs.ext4 unavailable",
            std::thread::current().name().unwrap_or("?")
        );
        return;
    }
    let message = refusal(&device.device);
    assert!(message.contains("ext2/3/4"), "{message}");
    // Reading it harms nothing.
    let reader = job("r", RwMode::RandRead, 1 << 20);
    assert!(Engine::new(&[reader], &device.device, config("noop")).is_ok());
    let mount_point = scratch.path("mnt");
    std::fs::create_dir_all(&mount_point).unwrap();
    let mounted = Command::new("mount")
        .args([&device.device, &mount_point])
        .status();
    if !mounted.is_ok_and(|s| s.success()) {
        eprintln!(
            "SKIPPED: {}: mount not permitted here (the signature alone was checked)",
            std::thread::current().name().unwrap_or("?")
        );
        return;
    }
    let message = refusal(&device.device);
    let _ = Command::new("umount").arg(&mount_point).status();
    assert!(message.contains("mounted on"), "{message}");
    // --force skips the checks, but the kernel's exclusive open still refuses a mounted
    // device; unmounted, a forced run goes ahead.
    let spec = job("w", RwMode::Write, 1 << 20);
    let forced = EngineConfig {
        force: true,
        ..config("noop")
    };
    assert!(Engine::new(&[spec], &device.device, forced).is_ok());
}

/// An image file of `bytes` with a hand-made MBR: one Linux partition from sector 2048 to
/// the end.
fn mbr_image(image: &str, bytes: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut mbr = [0u8; 512];
    let entry = &mut mbr[446..462];
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
    entry[12..16].copy_from_slice(&((bytes / 512 - 2048) as u32).to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(image)
        .unwrap();
    file.set_len(bytes).unwrap();
    file.seek(SeekFrom::Start(0)).unwrap();
    file.write_all(&mbr).unwrap();
}

#[test]
fn a_partitioned_device_is_refused() {
    let scratch = Scratch::new("parts");
    let image = scratch.path("parts.img");
    mbr_image(&image, 16 << 20);
    let Some(device) = LoopDevice::attach(&image, 16 << 20, true) else {
        return;
    };
    let message = refusal(&device.device);
    assert!(
        message.contains("partitions") || message.contains("MBR"),
        "{message}"
    );
    let part = format!("{}p1", device.device);
    if Path::new(&part).exists() {
        assert!(message.contains("partitions ("), "{message}");
    }
}

/// A disk image is a file system too: a regular file carrying a partition table or a file
/// system signature is refused for writing, and so is the backing file of an attached loop
/// device, whatever it holds. Reading either is harmless and allowed.
#[test]
fn disk_images_and_loop_backing_files_are_refused_for_writing_only() {
    let scratch = Scratch::new("images");
    let image = scratch.path("mbr.img");
    mbr_image(&image, 16 << 20);
    let message = refusal(&image);
    assert!(message.contains("MBR"), "{message}");
    let reader = job("r", RwMode::Read, 1 << 20);
    assert!(Engine::new(std::slice::from_ref(&reader), &image, config("noop")).is_ok());

    let backing = scratch.path("backing.img");
    let Some(device) = LoopDevice::attach(&backing, 16 << 20, false) else {
        return;
    };
    let message = refusal(&backing);
    assert!(message.contains(&device.device), "{message}");
    assert!(Engine::new(&[reader], &backing, config("noop")).is_ok());
}

#[test]
fn a_missing_directory_is_a_clear_error() {
    let spec = job("w", RwMode::Write, 1 << 20);
    let error = Engine::new(&[spec], "/nonexistent-dir/x.img", config("noop"))
        .err()
        .unwrap();
    assert!(error.to_string().contains("does not exist"), "{error}");
}

/// Rate limits and think time become timed wake-ups of the loop: 50 reads at 1000 IOPS take
/// at least 49 ms of real time.
#[test]
fn rate_limits_sleep_on_the_real_clock() {
    let scratch = Scratch::new("rate");
    let mut spec = job("slow", RwMode::RandRead, 200 << 10);
    spec.rate_iops = [Some(1000), None, None];
    spec.iodepth = 1;
    let outcome = run(&[spec], &scratch.path("t.img"), config("noop"));
    assert_eq!(outcome.clones[0].dirs[0].total_ios, 50);
    assert!(
        outcome.elapsed_ns >= 49_000_000,
        "{} ns",
        outcome.elapsed_ns
    );
}

/// A stonewalled job starts only after the one before it finished.
#[test]
fn stonewall_orders_jobs_in_real_time() {
    let scratch = Scratch::new("stonewall");
    let first = job("first", RwMode::Write, 1 << 20);
    let mut second = job("second", RwMode::Read, 1 << 20);
    second.stonewall = true;
    second.group_id = 1;
    let outcome = run(&[first, second], &scratch.path("t.img"), config("deadline"));
    let (a, b) = (&outcome.clones[0], &outcome.clones[1]);
    assert!(
        b.start_ns >= a.end_ns,
        "second started at {} before first ended at {}",
        b.start_ns,
        a.end_ns
    );
}

/// Trims punch holes (fallocate) and fsyncs go to the device past the scheduler: both are
/// counted in fio's trim and sync figures, with no error.
#[test]
fn trims_and_fsyncs_reach_the_device() {
    let scratch = Scratch::new("trimsync");
    let path = scratch.path("t.img");
    let mut writer = job("w", RwMode::Write, 1 << 20);
    writer.fsync = 4;
    writer.end_fsync = true;
    let outcome = run(&[writer], &path, config("noop"));
    assert!(outcome.io_errors.is_empty(), "{:?}", outcome.io_errors);
    // 256 writes: a sync before every 4th write after the first four (none after the
    // last, as fio 3.33 logs it), plus end_fsync.
    assert_eq!(outcome.clones[0].sync.count(), 64);
    let trimmer = job("w", RwMode::RandTrim, 1 << 20);
    let outcome = run(&[trimmer], &path, config("deadline"));
    assert!(outcome.io_errors.is_empty(), "{:?}", outcome.io_errors);
    assert_eq!(outcome.clones[0].dirs[2].io_bytes, 1 << 20);
}

/// `exitall`: when the short job ends, the long time-based one in its group stops too.
#[test]
fn exitall_stops_the_rest_of_the_group() {
    let scratch = Scratch::new("exitall");
    let mut short = job("short", RwMode::Read, 256 << 10);
    short.exitall = true;
    short.iodepth = 1;
    let mut long = job("long", RwMode::RandRead, 1 << 20);
    long.time_based = true;
    long.runtime_ns = Some(60_000_000_000);
    let outcome = run(&[short, long], &scratch.path("t.img"), config("noop"));
    assert!(
        outcome.elapsed_ns < 10_000_000_000,
        "{} ns",
        outcome.elapsed_ns
    );
    assert!(outcome.clones[1].dirs[0].total_ios > 0);
}

// Several worker threads sharing one scheduler (`EngineConfig::threads`).

fn threaded(scheduler: &str, threads: u32) -> EngineConfig {
    EngineConfig {
        threads,
        ..config(scheduler)
    }
}

/// Runs `jobs` on a thread of its own and fails instead of hanging when the run does not
/// end (a worker never woken for its clone would wait for ever).
fn run_within(
    jobs: Vec<JobSpec>,
    path: String,
    config: EngineConfig,
) -> iosched_engine::EngineOutcome {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let outcome =
            Engine::new(&jobs, &path, config).and_then(|e| e.run(&AtomicBool::new(false)));
        let _ = send.send(outcome.map_err(|e| e.to_string()));
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the threaded run did not end within 60 s")
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Two threads, four jobs (random reads, random writes, a verified write-then-read): every
/// I/O completes exactly once, with each job's own totals, through noop and CFQ, and the
/// device's in-flight gauge never goes past the device's cap.
#[test]
fn two_threads_complete_every_io_once() {
    let scratch = Scratch::new("threads");
    let Some(device) = LoopDevice::attach(&scratch.path("backing.img"), 64 << 20, false) else {
        return;
    };
    for scheduler in ["noop", "cfq"] {
        let mut jobs = vec![
            job("r1", RwMode::RandRead, 4 << 20),
            job("r2", RwMode::RandRead, 4 << 20),
            job("w1", RwMode::RandWrite, 4 << 20),
            job("v1", RwMode::RandWrite, 4 << 20),
        ];
        jobs[3].verify = Some("crc32c".into());
        let outcome = run_within(jobs.clone(), device.device.clone(), threaded(scheduler, 2));
        assert_eq!(outcome.threads, 2);
        assert!(outcome.lock.acquisitions > 0, "{:?}", outcome.lock);
        assert!(outcome.io_errors.is_empty(), "{:?}", outcome.io_errors);
        assert!(
            outcome.verify_failures.is_empty(),
            "{:?}",
            outcome.verify_failures
        );
        for (stats, spec) in outcome.clones.iter().zip(&jobs) {
            let ddir = if spec.rw == RwMode::RandRead { 0 } else { 1 };
            assert_eq!(
                stats.dirs[ddir].total_ios, 1024,
                "{scheduler} {}",
                spec.name
            );
            assert_eq!(
                stats.dirs[ddir].io_bytes,
                4 << 20,
                "{scheduler} {}",
                spec.name
            );
            assert_eq!(stats.error, 0);
        }
        // The verify job read back all it wrote.
        assert_eq!(outcome.clones[3].dirs[0].io_bytes, 4 << 20, "{scheduler}");
        let merges = outcome.disk.read_merges + outcome.disk.write_merges;
        assert_eq!(outcome.requests + merges, 5 * 1024, "{scheduler}");
        let gauge = &outcome.inflight.device;
        assert!(
            gauge.mean > 0.0 && gauge.mean <= f64::from(outcome.queue_depth),
            "{gauge:?}"
        );
    }
}

/// The device gauge counts what every worker hands to the kernel. Two noop random readers at
/// QD8 keep 16 requests in the device between completions, and the gauge must see that level:
/// two workers submit outside the queue lock, and a gauge that learnt of those submissions
/// only at the next completion never rose past 15 (its mean read 9.8). On one thread, where
/// nothing waits in the scheduler, the device's mean is also the jobs' together. (With two
/// threads on a loaded machine a worker can be preempted between its turn and its submit,
/// which the gauge rightly shows as a lower device level, so the means are compared on one.)
#[test]
fn the_device_gauge_counts_every_workers_submissions() {
    let scratch = Scratch::new("threads-gauge");
    let Some(device) = LoopDevice::attach(&scratch.path("backing.img"), 64 << 20, false) else {
        return;
    };
    for threads in [1, 2] {
        let jobs = vec![
            job("r1", RwMode::RandRead, 16 << 20),
            job("r2", RwMode::RandRead, 16 << 20),
        ];
        let outcome = run_within(jobs, device.device.clone(), threaded("noop", threads));
        let gauge = &outcome.inflight.device;
        let at_16: f64 = gauge
            .percent
            .iter()
            .filter(|&&(level, _)| level >= 16)
            .map(|&(_, percent)| percent)
            .sum();
        assert!(at_16 > 0.0, "{threads} thread(s): never at 16: {gauge:?}");
        if threads == 1 {
            let jobs_mean: f64 = outcome.inflight.clones.iter().map(|c| c.mean).sum();
            assert!(
                (gauge.mean - jobs_mean).abs() <= 0.25 * jobs_mean,
                "device {:.2} against the jobs' {jobs_mean:.2}",
                gauge.mean
            );
        }
    }
}

/// The kernel's CFQ gives two busy groups shares in proportion to their weights (its
/// vdisktime advances by service scaled by weight, cfq-iosched.c): 1000:100 is 90.9 % for
/// the heavy group. With two threads sharing the scheduler the weights still decide:
/// the share stays within 9 points of it, where without the weights it would be near 50 %.
/// The bound is wide because CFQ shares time, and I/Os per unit of time follow the CPU the
/// runs get: on this shared machine, under the suite's own load, one thread's shares spread
/// over 89.8-95.2 % and two threads' over 86.1-96.4 % (the benchmark, on a quieter machine,
/// measures 90.4-91.1 % for two threads). Beside a loaded machine (load 12-16, other
/// builds) single runs fell to 69.7-79.4 % in about one of four, on this code and before it,
/// so the run is repeated up to three times and one must land within the bound: without
/// the weights every run sits near 50 %, so the test still fails then.
#[test]
fn two_threads_keep_the_weights() {
    let _alone = cgroups_to_ourselves();
    let scratch = Scratch::new("threads-weights");
    let Some(device) = LoopDevice::attach(&scratch.path("backing.img"), 64 << 20, false) else {
        return;
    };
    let mut shares = Vec::new();
    for _ in 0..3 {
        let heavy = heavy_share_with_two_threads(&device.device);
        shares.push(format!("{heavy:.1}"));
        if (heavy - 90.9).abs() < 9.0 {
            return;
        }
    }
    panic!("heavy share {} % in three runs", shares.join(", "));
}

/// The 1000:100 random-reader pair under CFQ on two engine threads for 2 s: the heavy
/// job's share of the I/Os, in per cent.
fn heavy_share_with_two_threads(device: &str) -> f64 {
    let mut jobs = weighted_pair(RwMode::RandRead);
    jobs[0].cgroup_weight = Some(1000);
    jobs[1].cgroup_weight = Some(100);
    for spec in &mut jobs {
        spec.time_based = true;
        spec.runtime_ns = Some(2_000_000_000);
    }
    let outcome = run_within(jobs, device.to_string(), threaded("cfq", 2));
    assert_eq!(outcome.threads, 2);
    let ios: Vec<f64> = outcome
        .clones
        .iter()
        .map(|s| s.dirs[0].total_ios as f64)
        .collect();
    100.0 * ios[0] / (ios[0] + ios[1])
}

/// A job pinned to CPU 1 whose I/O a thread on CPU 0 dispatched (one request in the device
/// at a time: whichever thread frees the slot dispatches the next request, of either job)
/// is woken through its own thread's mailbox, and both jobs finish with all their I/O.
#[test]
fn a_completion_on_another_thread_wakes_the_owner() {
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        eprintln!("SKIPPED: a_completion_on_another_thread_wakes_the_owner: needs 2 CPUs");
        return;
    }
    let scratch = Scratch::new("threads-wake");
    let Some(device) = LoopDevice::attach(&scratch.path("backing.img"), 64 << 20, false) else {
        return;
    };
    let mut jobs = vec![
        job("cpu0", RwMode::RandRead, 2 << 20),
        job("cpu1", RwMode::RandRead, 2 << 20),
    ];
    jobs[0].cpus_allowed = Some(vec![0]);
    jobs[1].cpus_allowed = Some(vec![1]);
    let config = EngineConfig {
        queue_depth: Some(1),
        ..threaded("noop", 2)
    };
    let outcome = run_within(jobs, device.device.clone(), config);
    assert_eq!(outcome.threads, 2);
    assert!(outcome.cross_thread_wakes > 0);
    for stats in &outcome.clones {
        assert_eq!(stats.dirs[0].total_ios, 512, "{}", stats.name);
    }
}

// One worker per job cgroup, each in a blkio cgroup of its own (`engine_threads=cgroups`).

/// The tests that place workers in cgroups run one at a time: a run's groups are named by the
/// process id (`iosched-engine-PID`), which the tests of this binary share. The threaded
/// share test takes it too: it measures CFQ's time shares, which a second busy run beside
/// it on this 2-CPU machine skews (72 % for the heavy group once, against 86-96 % alone).
static CGROUPS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cgroups_to_ourselves() -> std::sync::MutexGuard<'static, ()> {
    CGROUPS.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Two jobs at 1000:100 through adaptive, one worker thread per cgroup: the kernel charges
/// every request to the cgroup of the job that made it. The witness is the kernel's own
/// accounting, BFQ's `blkio.bfq.io_serviced` (the loop device runs BFQ below the engine for
/// this): the light job's requests, many of them dispatched on the heavy job's thread while
/// the light one waited for its share, are all counted in `/light`; together the two
/// groups hold every request the device served; and the groups are gone afterwards.
#[test]
fn each_request_is_charged_to_its_jobs_cgroup() {
    let _cgroups = cgroups_to_ourselves();
    let scratch = Scratch::new("cgroups");
    let Some(device) = LoopDevice::attach(&scratch.path("backing.img"), 64 << 20, false) else {
        return;
    };
    if iosched_engine::blkio_v1_mount().is_none() {
        eprintln!("SKIPPED: each_request_is_charged_to_its_jobs_cgroup: no cgroup v1 blkio");
        return;
    }
    let disk = Path::new(&device.device)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let scheduler = format!("/sys/block/{disk}/queue/scheduler");
    // No merging in the kernel either: each request the engine sends is one BFQ counts.
    let _ = std::fs::write(format!("/sys/block/{disk}/queue/nomerges"), "2");
    if std::fs::write(&scheduler, "bfq").is_err() {
        eprintln!("SKIPPED: each_request_is_charged_to_its_jobs_cgroup: no BFQ for {disk}");
        return;
    }
    let mut jobs = vec![
        job("heavy", RwMode::RandRead, 4 << 20),
        job("light", RwMode::RandRead, 1 << 20),
    ];
    jobs[0].cgroup = Some("heavy".into());
    jobs[0].cgroup_weight = Some(1000);
    jobs[1].cgroup = Some("light".into());
    jobs[1].cgroup_weight = Some(100);
    // Depth 1 and a region apart: the light job's requests never merge, so each of its I/Os
    // is one request for the kernel to count.
    jobs[1].iodepth = 1;
    jobs[1].offset = SizeOrPercent::Bytes(32 << 20);
    let config = EngineConfig {
        cgroup_threads: true,
        ..config("adaptive")
    };
    let outcome = run_within(jobs, device.device.clone(), config);
    let _ = std::fs::write(&scheduler, "none");
    assert_eq!(outcome.threads, 2);
    assert!(
        outcome.handed_over > 0,
        "no request crossed threads: the test proves nothing"
    );
    let light_ios = outcome.clones[1].dirs[0].total_ios;
    let kernel: Vec<(&str, u64)> = outcome
        .kernel_cgroup_ios
        .iter()
        .map(|(path, ios)| (path.as_str(), *ios))
        .collect();
    assert_eq!(kernel[0].0, "/heavy");
    assert_eq!(kernel[1], ("/light", light_ios));
    assert_eq!(kernel[0].1 + kernel[1].1, outcome.disk.read_ios);
    let base = format!("iosched-engine-{}", std::process::id());
    let left = std::fs::read_dir("/sys/fs/cgroup/blkio")
        .map(|dir| {
            dir.flatten()
                .any(|entry| entry.file_name().to_string_lossy() == base)
        })
        .unwrap_or(false);
    assert!(!left, "the run's cgroups were not removed");
}

/// Issue 32's two QD8 random readers at 1000:100 through adaptive, a worker per cgroup:
/// the light group's requests, released mostly at the heavy job's completions on the heavy
/// job's thread, are handed over without waking the light thread while one of its own
/// requests is out (its completion takes them), so fewer hand-overs wake it (every one did
/// before); every request still completes once and the heavy job keeps its
/// share (90.9 % ideal; adaptive holds 90.3 % on a loop device, and the bound here is wide
/// for a loaded machine).
#[test]
fn handed_requests_wait_for_the_owners_own_completion() {
    // One request per release, the rule this test is about: with bursts (the default) a
    // released burst is handed over whole and wakes its owner once.
    let Some(outcome) = issue_32_readers(
        "handed_requests_wait_for_the_owners_own_completion",
        &[("burst", "1")],
    ) else {
        return;
    };
    assert!(
        outcome.handed_over > 100,
        "{} hand-overs",
        outcome.handed_over
    );
    // The old rule woke the owner on every hand-over (2,237 for 2,237). The new one wakes it
    // only when it has nothing of its own out, and then once per 4 or after 200 us; how often
    // that is depends on the machine's speed: about 0.4 in a quiet release build, 0.6-0.7
    // in a debug build beside a CI run, where the 200 us deadline passes more often.
    assert!(
        10 * outcome.handover_wakes < 9 * outcome.handed_over,
        "{} wake-ups for {} hand-overs",
        outcome.handover_wakes,
        outcome.handed_over
    );
    let ios: Vec<u64> = outcome.clones.iter().map(|c| c.dirs[0].total_ios).collect();
    assert_eq!(ios[0] + ios[1], outcome.requests + outcome.disk.read_merges);
    let heavy = 100.0 * ios[0] as f64 / (ios[0] + ios[1]) as f64;
    assert!((heavy - 90.9).abs() < 5.0, "heavy share {heavy:.1} %");
}

/// The same two readers: a worker's turn (one take of the queue lock) hands what it queued
/// to the kernel in a call of its own, then waits in another (`threads.rs`, `work` and
/// `submit_and_wait`): at most two `io_uring_enter` per turn, and more than one on average
/// (a turn mostly queues a refill or a released request). The single call of submission
/// and wait made at most 1.05 per turn, and left the heavy job's worker runnable and not
/// running about 1 ms per slice on a loaded machine. Every completed request is counted
/// once in its clone's stages, and each worker's scheduling is read.
#[test]
fn a_worker_turn_submits_before_it_waits() {
    let Some(outcome) = issue_32_readers("a_worker_turn_submits_before_it_waits", &[]) else {
        return;
    };
    let turns = outcome.lock.acquisitions;
    assert!(turns > 1000, "{turns} turns");
    // A full ring (rare: the ring holds the device's cap) makes one more call.
    assert!(
        outcome.enter_calls <= 2 * turns + turns / 20,
        "{} io_uring_enter calls in {turns} turns",
        outcome.enter_calls
    );
    assert!(
        4 * outcome.enter_calls > 5 * turns,
        "{} io_uring_enter calls in {turns} turns: the submission rode on the wait",
        outcome.enter_calls
    );
    let ios: Vec<u64> = outcome.clones.iter().map(|c| c.dirs[0].total_ios).collect();
    assert_eq!(ios[0] + ios[1], outcome.requests + outcome.disk.read_merges);
    let staged: u64 = outcome.inflight.stages.iter().map(|s| s.requests).sum();
    assert_eq!(staged, outcome.requests);
    assert_eq!(outcome.workers.len(), 2);
    assert!(outcome
        .workers
        .iter()
        .all(|w| w.slices > 0 || w.run_ns == 0));
}

/// Issue 32's two QD8 random readers at 1000:100 through adaptive on a loop device, a worker
/// per cgroup, for 1 s; `None` (the test skipped) without root, a loop device or cgroup v1
/// blkio.
fn issue_32_readers(
    test: &str,
    tunables: &[(&str, &str)],
) -> Option<iosched_engine::EngineOutcome> {
    let _cgroups = cgroups_to_ourselves();
    let scratch = Scratch::new(test);
    let device = LoopDevice::attach(&scratch.path("backing.img"), 64 << 20, false)?;
    if iosched_engine::blkio_v1_mount().is_none() {
        eprintln!("SKIPPED: {test}: no cgroup v1 blkio");
        return None;
    }
    let mut jobs = vec![
        job("heavy", RwMode::RandRead, 16 << 20),
        job("light", RwMode::RandRead, 16 << 20),
    ];
    for (spec, weight) in jobs.iter_mut().zip([1000, 100]) {
        spec.cgroup = Some(spec.name.clone());
        spec.cgroup_weight = Some(weight);
        spec.time_based = true;
        spec.runtime_ns = Some(1_000_000_000);
    }
    let config = EngineConfig {
        cgroup_threads: true,
        tunables: tunables
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect(),
        ..config("adaptive")
    };
    let outcome = run_within(jobs, device.device.clone(), config);
    assert_eq!(outcome.threads, 2);
    Some(outcome)
}

/// Jobs that name no cgroup run as without `cgroup_threads` (one thread, nothing placed, no
/// root needed); a job pinned with `cpus_allowed` is refused, by name, before anything is
/// made: one thread serves a whole cgroup, so the pin could not be kept.
#[test]
fn cgroup_threads_without_cgroups_and_with_cpus_allowed() {
    let scratch = Scratch::new("cgroup-threads-plain");
    let config = EngineConfig {
        cgroup_threads: true,
        ..config("noop")
    };
    let jobs = vec![
        job("a", RwMode::Write, 1 << 20),
        job("b", RwMode::Write, 1 << 20),
    ];
    let engine = Engine::new(&jobs, &scratch.path("plain.img"), config.clone()).unwrap();
    assert_eq!(engine.threads(), 1);
    let outcome = engine.run(&AtomicBool::new(false)).unwrap();
    assert!(outcome.kernel_cgroup_ios.is_empty());
    let mut pinned = jobs.clone();
    pinned[1].cgroup = Some("x".into());
    pinned[1].cpus_allowed = Some(vec![0]);
    let refused = Engine::new(&pinned, &scratch.path("pinned.img"), config);
    let message = refused.err().expect("refused").to_string();
    assert!(message.starts_with("job 'b': cpus_allowed"), "{message}");
}
