//! What [`crate::Engine::new`] checks and opens before anything is written: the jobs the
//! engine can run, the target (refused when writing would harm it), the layout of the jobs
//! on it, the ring and its buffers.

use std::fs::File;
use std::os::fd::AsRawFd;

use io_uring::IoUring;
use iosched_workload::layout::{lay_out_on, Layout};
use iosched_workload::pattern::Pattern;
use iosched_workload::{JobSpec, RwMode};

use crate::buffer::BufferPool;
use crate::error::EngineError;
use crate::safety;
use crate::target::{self, Target, TargetKind};
use crate::verify::{self, VerifyMethod};

/// Each job's verify method and `verify_pattern` (the whole block with `verify=pattern`,
/// else the data after the checksum header).
pub(crate) struct JobChecks {
    pub methods: Vec<Option<VerifyMethod>>,
    pub patterns: Vec<Option<Pattern>>,
}

/// Refuses what the engine cannot run: buffered I/O, unknown or incomplete verify methods,
/// blocks too small for a checksum header.
pub(crate) fn check_jobs(jobs: &[JobSpec]) -> Result<JobChecks, EngineError> {
    let mut checks = JobChecks {
        methods: Vec::with_capacity(jobs.len()),
        patterns: Vec::with_capacity(jobs.len()),
    };
    for spec in jobs {
        let refuse = |message: String| EngineError::Unsupported {
            job: spec.name.clone(),
            message,
        };
        if !spec.direct {
            return Err(refuse("buffered I/O (direct=0) is not supported by the engine: it has no page cache yet; add direct=1".to_string()));
        }
        let method = match &spec.verify {
            Some(name) => VerifyMethod::parse(name).map_err(refuse)?,
            None => None,
        };
        if method == Some(VerifyMethod::Pattern) && spec.verify_pattern.is_none() {
            return Err(refuse("verify=pattern needs verify_pattern=".to_string()));
        }
        if method.is_some_and(|method| method != VerifyMethod::Pattern) {
            let min = spec.bs.iter().map(|bs| bs.min()).min().unwrap_or(4096);
            if min < verify::HEADER_BYTES as u64 {
                return Err(refuse(format!(
                    "verify needs blocks of at least {} bytes",
                    verify::HEADER_BYTES
                )));
            }
        }
        checks.patterns.push(spec.verify_pattern.clone());
        checks.methods.push(method);
    }
    Ok(checks)
}

/// The probed and opened target with the jobs laid out on it.
pub(crate) struct Opened {
    pub target: Target,
    pub file: File,
    pub layout: Layout,
}

/// Probes `path`, refuses a write that could harm it (unless `force`), lays the jobs out and
/// opens it (creating, growing and filling a file as fio does). Warnings go to `warnings`.
pub(crate) fn open_target(
    jobs: &[JobSpec],
    path: &str,
    force: bool,
    seed: u64,
    warnings: &mut Vec<String>,
) -> Result<Opened, EngineError> {
    let target = target::probe(path)?;
    // Reading harms nothing: only runs that write, trim or grow the file are checked.
    // verify_only jobs read where they would have written.
    let writes = jobs
        .iter()
        .any(|spec| !spec.verify_only && !matches!(spec.rw, RwMode::Read | RwMode::RandRead));
    if target.kind == TargetKind::BlockDevice {
        if let Some(kernel) = target.kernel_scheduler.as_deref().filter(|s| *s != "none") {
            warnings.push(format!(
                "{path}: the kernel's own scheduler is '{kernel}', which reorders after ours; set it to none: echo none > /sys/block/{}/queue/scheduler",
                target.disk.as_deref().unwrap_or("?")
            ));
        }
    }
    let layout = layout_on(jobs, &target, seed)?;
    // A missing or short file must be created or grown even for a reading job, and laid
    // out with data when any job reads (fio's "Laying out IO file").
    let grows = target.kind == TargetKind::RegularFile
        && target
            .capacity_bytes
            .is_none_or(|size| size < layout.end_bytes);
    let reads = jobs
        .iter()
        .any(|spec| !matches!(spec.rw, RwMode::Write | RwMode::RandWrite) || spec.verify.is_some());
    if grows {
        if let Some(spec) = jobs.iter().find(|spec| spec.verify_only) {
            return Err(EngineError::Unsupported {
                job: spec.name.clone(),
                message: format!(
                    "verify_only: {path} ends before the jobs' blocks ({} bytes): nothing was written there to check",
                    layout.end_bytes
                ),
            });
        }
    }
    // Growing a file writes to it too (layout data or allocation): the same checks as a
    // writing job, so a reading job never appends to a disk image or a loop's backing file.
    if (writes || grows) && !force {
        safety::check_writable(&target, writes, layout.end_bytes)?;
    }
    let fill = (grows && reads).then(|| data_ranges(&layout));
    if let Some(ranges) = &fill {
        let from = target.capacity_bytes.unwrap_or(0);
        let bytes: u64 = ranges
            .iter()
            .map(|r| r.end.saturating_sub(r.start.max(from)))
            .sum();
        warnings.push(format!(
            "{path}: laying out {bytes} bytes with data for the reading jobs"
        ));
    }
    let file = target.open(layout.end_bytes, writes || grows, fill.as_deref())?;
    Ok(Opened {
        target,
        file,
        layout,
    })
}

/// The byte ranges of the target the clones' regions cover, sorted and merged: what laying
/// out must fill with data (the jobs do I/O nowhere else), however far apart the clones'
/// aligned files lie.
fn data_ranges(layout: &Layout) -> Vec<std::ops::Range<u64>> {
    let mut ranges: Vec<std::ops::Range<u64>> = layout
        .clones
        .iter()
        .flat_map(|plan| plan.files.iter().zip(&plan.regions))
        .map(|(&file, region)| {
            let start = layout.files[file].start + region.start;
            start..start + region.len
        })
        .collect();
    ranges.sort_by_key(|r| r.start);
    let mut merged: Vec<std::ops::Range<u64>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// The jobs' layout on `target`: a block device's capacity bounds it; a file grows to fit
/// (only `/dev/` names need their present size).
fn layout_on(jobs: &[JobSpec], target: &Target, seed: u64) -> Result<Layout, EngineError> {
    // A job file naming the target file itself (fio's `filename=` of the file the engine
    // runs on) means all of it, from byte 0, at its present size.
    let names_target = |name: &str| {
        target.kind == TargetKind::RegularFile
            && target.capacity_bytes.is_some()
            && same_file(name, &target.path)
    };
    let names_it = jobs
        .iter()
        .any(|spec| spec.filenames.iter().any(|name| names_target(name)));
    let capacity = match target.kind {
        TargetKind::BlockDevice => target.capacity_bytes,
        TargetKind::RegularFile if names_it => target.capacity_bytes,
        TargetKind::RegularFile => None,
    };
    let mut layout = lay_out_on(jobs, capacity, seed, &names_target)?;
    if target.kind == TargetKind::RegularFile {
        let size = target.capacity_bytes.unwrap_or(0).max(layout.end_bytes);
        for file in layout
            .files
            .iter_mut()
            .filter(|f| f.name.starts_with("/dev/"))
        {
            file.bytes = size;
        }
    }
    Ok(layout)
}

/// The ring with the target registered, and the buffers (registered when the kernel lets
/// us: `true`).
pub(crate) fn ring_and_buffers(
    jobs: &[JobSpec],
    layout: &Layout,
    path: &str,
    file: &File,
    queue_depth: u32,
) -> Result<(IoUring, BufferPool, bool), EngineError> {
    let entries = queue_depth.next_power_of_two().clamp(8, 4096);
    let ring = new_ring(entries)
        .map_err(|error| EngineError::io(path, "cannot set up io_uring", error))?;
    ring.submitter()
        .register_files(&[file.as_raw_fd()])
        .map_err(|error| EngineError::io(path, "cannot register the file with io_uring", error))?;
    let max_bs = jobs
        .iter()
        .flat_map(|spec| spec.bs.iter().map(|bs| bs.max()))
        .max()
        .unwrap_or(4096);
    // One buffer per job I/O in flight: a clone never has more than its depth, and merged
    // I/Os ride in one request with a buffer each, so the clones' depths together bound
    // them whatever the device's depth.
    let total_depth: u64 = layout
        .clones
        .iter()
        .map(|plan| u64::from(jobs[plan.job].effective_depth()))
        .sum();
    let buffers = BufferPool::new(total_depth.max(1) as usize, max_bs as usize);
    let iovecs = buffers.iovecs();
    // SAFETY: the iovecs describe the pool's slots, which live as long as `buffers`; the
    // engine drops the ring (and with it the registration) before the buffers.
    let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
    Ok((ring, buffers, fixed_buffers))
}

/// A ring set up as fio 3.33's io_uring engine sets up its own: completions' task work runs
/// when the engine enters the kernel (`DEFER_TASKRUN`, one issuing thread), never by
/// interrupting it (`COOP_TASKRUN`); each flag is dropped in turn where the kernel does not
/// know it. Choice: the engine's one thread creates and drives the ring (`Engine::new` and
/// `Engine::run` on the same thread), as `SINGLE_ISSUER` requires.
pub(crate) fn new_ring(entries: u32) -> std::io::Result<IoUring> {
    let deferred = IoUring::builder()
        .setup_coop_taskrun()
        .setup_taskrun_flag()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries);
    let error = match deferred {
        Ok(ring) => return Ok(ring),
        Err(error) => error,
    };
    if error.raw_os_error() != Some(libc::EINVAL) {
        return Err(error);
    }
    match IoUring::builder()
        .setup_coop_taskrun()
        .setup_taskrun_flag()
        .build(entries)
    {
        Err(error) if error.raw_os_error() == Some(libc::EINVAL) => IoUring::new(entries),
        other => other,
    }
}

/// Whether a job's `filename=` and the engine's target path are one file.
fn same_file(name: &str, target: &str) -> bool {
    match (std::fs::canonicalize(name), std::fs::canonicalize(target)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
