//! The path a run writes to: a regular file (created if missing) or a block device, and what
//! the scheduler is told about it.
//!
//! For a block device the facts come from sysfs: `queue/rotational`, `queue/nr_requests` (the
//! in-device cap) and `queue/scheduler` (the kernel's own scheduler, which should be `none`
//! so that ours is the only one reordering). A regular file is treated as a non-rotational
//! device of depth 32.

use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::ops::Range;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::EngineError;

/// Queue depth where no `nr_requests` can be read (a file on tmpfs, an odd device).
pub const DEFAULT_QUEUE_DEPTH: u32 = 32;

/// What kind of path the run targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    RegularFile,
    BlockDevice,
}

/// A probed target, before it is opened.
#[derive(Clone, Debug)]
pub struct Target {
    pub path: String,
    pub kind: TargetKind,
    /// Whether a regular file exists yet (block devices always do).
    pub exists: bool,
    /// Size in bytes, if it exists.
    pub capacity_bytes: Option<u64>,
    /// sysfs name of the whole disk (`loop0`), for block devices.
    pub disk: Option<String>,
    /// sysfs name of the partition when the path is one (`sda1`).
    pub partition: Option<String>,
    /// `major:minor` of the path itself, for block devices.
    pub dev: Option<u64>,
    pub rotational: bool,
    pub queue_depth: u32,
    /// The kernel's scheduler on the disk (`none`, `mq-deadline`, ...).
    pub kernel_scheduler: Option<String>,
}

/// `major:minor` of a device number, as sysfs names it.
pub fn dev_name(dev: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major}:{minor}")
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The bracketed entry of a `queue/scheduler` line: `none [mq-deadline] kyber` → `mq-deadline`.
pub fn active_scheduler(line: &str) -> Option<String> {
    let start = line.find('[')?;
    let end = line[start..].find(']')? + start;
    Some(line[start + 1..end].to_string())
}

/// The request-queue size (`nr_requests`) of the block device holding the file system
/// that `path` lives on, as the queue a file's I/O ends up in; the default when there is
/// none to read (tmpfs, overlay).
fn holding_device_depth(path: &Path) -> u32 {
    let Ok(metadata) = fs::metadata(path) else {
        return DEFAULT_QUEUE_DEPTH;
    };
    let Ok(sys) = fs::canonicalize(format!("/sys/dev/block/{}", dev_name(metadata.dev()))) else {
        return DEFAULT_QUEUE_DEPTH;
    };
    // A partition's queue is its disk's.
    let queue = if sys.join("partition").exists() {
        sys.parent().map(|disk| disk.join("queue"))
    } else {
        Some(sys.join("queue"))
    };
    queue
        .and_then(|queue| read_trimmed(&queue.join("nr_requests")))
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_QUEUE_DEPTH)
}

/// What a path that is neither a regular file nor a block device is, for the message.
fn kind_name(file_type: &fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "this kind of file"
    }
}

/// Looks at `path` without opening it for I/O.
pub fn probe(path: &str) -> Result<Target, EngineError> {
    let metadata = match fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return probe_missing(path, error)
        }
        Err(error) => return Err(EngineError::io(path, "cannot look at the path", error)),
    };
    let file_type = metadata.file_type();
    if file_type.is_file() {
        return Ok(Target {
            path: path.to_string(),
            kind: TargetKind::RegularFile,
            exists: true,
            capacity_bytes: Some(metadata.len()),
            disk: None,
            partition: None,
            dev: None,
            rotational: false,
            queue_depth: holding_device_depth(Path::new(path)),
            kernel_scheduler: None,
        });
    }
    if !file_type.is_block_device() {
        // Not a safety refusal: `--force` cannot make a directory, FIFO or character device a
        // target, and a reading run gets the same answer.
        return Err(EngineError::BadTarget {
            path: path.to_string(),
            reason: format!(
                "{} is neither a regular file nor a block device; the engine needs one of those",
                kind_name(&file_type)
            ),
        });
    }
    probe_block_device(path, metadata.rdev())
}

/// A path that does not exist yet: a regular file the engine may create, if its directory
/// exists and it is not under /dev.
fn probe_missing(path: &str, error: std::io::Error) -> Result<Target, EngineError> {
    // A mistyped device name must not become a new regular file under /dev.
    if path.starts_with("/dev/") {
        return Err(EngineError::BadTarget {
            path: path.to_string(),
            reason: format!("no such device (not creating a file under /dev): {error}"),
        });
    }
    let parent = Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(EngineError::BadTarget {
            path: path.to_string(),
            reason: format!(
                "cannot create the file: directory {} does not exist",
                parent.display()
            ),
        });
    }
    Ok(Target {
        path: path.to_string(),
        kind: TargetKind::RegularFile,
        exists: false,
        capacity_bytes: None,
        disk: None,
        partition: None,
        dev: None,
        rotational: false,
        queue_depth: holding_device_depth(parent),
        kernel_scheduler: None,
    })
}

/// A block device: its disk (the parent of a partition) and that disk's queue settings
/// from sysfs, and its size.
fn probe_block_device(path: &str, dev: u64) -> Result<Target, EngineError> {
    let sys: PathBuf =
        fs::canonicalize(format!("/sys/dev/block/{}", dev_name(dev))).map_err(|error| {
            EngineError::io(path, "cannot find the device in /sys/dev/block", error)
        })?;
    let own_name = sys
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (disk, partition) = if sys.join("partition").exists() {
        let parent = sys
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (parent, Some(own_name))
    } else {
        (own_name, None)
    };
    let queue = PathBuf::from(format!("/sys/block/{disk}/queue"));
    let rotational = read_trimmed(&queue.join("rotational")).is_some_and(|v| v == "1");
    let queue_depth = read_trimmed(&queue.join("nr_requests"))
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_QUEUE_DEPTH);
    let kernel_scheduler =
        read_trimmed(&queue.join("scheduler")).and_then(|line| active_scheduler(&line));
    let capacity = File::open(path)
        .and_then(|mut f| f.seek(SeekFrom::End(0)))
        .map_err(|error| EngineError::io(path, "cannot read the device size", error))?;
    Ok(Target {
        path: path.to_string(),
        kind: TargetKind::BlockDevice,
        exists: true,
        capacity_bytes: Some(capacity),
        disk: Some(disk),
        partition,
        dev: Some(dev),
        rotational,
        queue_depth,
        kernel_scheduler,
    })
}

impl Target {
    /// Opens for direct I/O; `writable` adds write access. A missing or short regular file is
    /// created or grown to `needed_bytes`, existing bytes untouched: with `lay_out` the new
    /// space is written with data, as fio lays out a file its jobs will read (reads of
    /// merely allocated space return zeros without touching the disk); otherwise it is only
    /// allocated. Growth is checked against the file system's free space first, and undone
    /// (the file truncated back, or removed if this call created it) when it fails. Block
    /// devices opened for writing are opened `O_EXCL`, which the kernel refuses while anything
    /// has the device mounted or claimed; reading needs no exclusive claim.
    pub fn open(
        &self,
        needed_bytes: u64,
        writable: bool,
        lay_out: Option<&[Range<u64>]>,
    ) -> Result<File, EngineError> {
        let mut options = OpenOptions::new();
        options.read(true).write(writable);
        let mut flags = libc::O_DIRECT;
        match self.kind {
            TargetKind::BlockDevice if writable => flags |= libc::O_EXCL,
            TargetKind::BlockDevice => {}
            TargetKind::RegularFile => {
                if writable {
                    options.create(true);
                }
            }
        }
        options.custom_flags(flags);
        let file = options.open(&self.path).map_err(|error| {
            let context = match error.raw_os_error() {
                Some(libc::EBUSY) => "device busy (mounted or held by another user)",
                Some(libc::EINVAL) => {
                    "cannot open with O_DIRECT (does the file system support it?)"
                }
                _ => "cannot open",
            };
            EngineError::io(&self.path, context, error)
        })?;
        if self.kind == TargetKind::RegularFile {
            if let Err(error) = self.grow(&file, needed_bytes, writable, lay_out) {
                if !self.exists {
                    let _ = fs::remove_file(&self.path);
                }
                return Err(error);
            }
        }
        Ok(file)
    }

    /// Grows a regular file to `needed_bytes` if it is shorter, after checking free space;
    /// on failure the file is truncated back to its old length.
    fn grow(
        &self,
        file: &File,
        needed_bytes: u64,
        writable: bool,
        lay_out: Option<&[Range<u64>]>,
    ) -> Result<(), EngineError> {
        let current = file
            .metadata()
            .map_err(|error| EngineError::io(&self.path, "cannot stat", error))?
            .len();
        if current >= needed_bytes {
            return Ok(());
        }
        if !writable {
            return Err(EngineError::Layout {
                job: self.path.clone(),
                message: format!(
                    "the jobs read {needed_bytes} bytes but the file holds {current} (write it first)"
                ),
            });
        }
        // Laid out, only the jobs' regions past the old end take data (the gaps between
        // clones' 1 MiB aligned files stay holes); allocated, all of the growth.
        let fill: Vec<Range<u64>> = lay_out.map_or_else(Vec::new, |ranges| {
            ranges
                .iter()
                .map(|r| r.start.max(current)..r.end.min(needed_bytes))
                .filter(|r| r.start < r.end)
                .collect()
        });
        let grow_bytes = match lay_out {
            Some(_) => fill.iter().map(|r| r.end - r.start).sum(),
            None => needed_bytes - current,
        };
        let free_bytes = free_space(file)
            .map_err(|error| EngineError::io(&self.path, "cannot read free space", error))?;
        if grow_bytes > free_bytes {
            return Err(EngineError::NoSpace {
                path: self.path.clone(),
                grow_bytes,
                free_bytes,
            });
        }
        let grown = match lay_out {
            Some(_) => file
                .set_len(needed_bytes)
                .and_then(|()| write_out(&self.path, &fill)),
            None => allocate(file, current, grow_bytes),
        };
        grown.map_err(|error| {
            // Nothing half-grown stays behind: a full file system gets its space back.
            let _ = file.set_len(current);
            EngineError::io(&self.path, "cannot lay out the file", error)
        })
    }
}

/// Bytes an unprivileged writer may still allocate on the file system holding `file`.
fn free_space(file: &File) -> std::io::Result<u64> {
    use std::os::fd::AsRawFd;
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: fstatvfs writes a statvfs into the buffer we pass, sized for it, and reads
    // nothing else; the descriptor is ours for the call.
    let rc = unsafe { libc::fstatvfs(file.as_raw_fd(), stats.as_mut_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstatvfs returned 0, so it filled the structure.
    let stats = unsafe { stats.assume_init() };
    Ok(stats.f_bavail.saturating_mul(stats.f_frsize))
}

/// Writes `ranges` of `path` with a fixed non-zero pattern (not zeros, which some devices
/// store specially) through the page cache, then syncs them to the device once.
fn write_out(path: &str, ranges: &[Range<u64>]) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    const CHUNK: usize = 1 << 20;
    let chunk: Vec<u8> = (0..CHUNK)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
        .collect();
    let mut file = OpenOptions::new().write(true).open(path)?;
    for range in ranges {
        file.seek(SeekFrom::Start(range.start))?;
        let mut at = range.start;
        while at < range.end {
            let n = (range.end - at).min(CHUNK as u64) as usize;
            file.write_all(&chunk[..n])?;
            at += n as u64;
        }
    }
    file.sync_all()
}

/// Allocates `len` bytes from `offset`, falling back to a sparse extension where the file
/// system has no `fallocate` (reads of holes return zeros either way).
fn allocate(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: plain system call on a descriptor we own; no memory is passed.
    let rc = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            0,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EOPNOTSUPP) => file.set_len(offset + len),
        _ => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A laid-out file holds data in the ranges asked for and nowhere else (issue 28: the
    /// gaps between clones' aligned files stay holes), and its head carries no signature that
    /// would make the safety checks refuse the next writing run.
    #[test]
    fn laying_out_writes_data_that_looks_like_no_file_system() {
        let path = std::env::temp_dir().join(format!("iosched-layout-{}", std::process::id()));
        let path = path.to_string_lossy().into_owned();
        std::fs::write(&path, b"keep").unwrap();
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(3 << 20).unwrap();
        write_out(&path, &[4..1 << 20, 2 << 20..3 << 20]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(bytes.len(), 3 << 20);
        assert_eq!(&bytes[..4], b"keep", "existing bytes untouched");
        let filled = |range: Range<usize>| {
            bytes[range]
                .chunks(4096)
                .all(|block| block.iter().any(|&b| b != 0))
        };
        assert!(filled(4..1 << 20) && filled(2 << 20..3 << 20));
        assert!(
            bytes[1 << 20..2 << 20].iter().all(|&b| b == 0),
            "the gap stays a hole"
        );
        assert_eq!(iosched_gate::holds::signature(&bytes[..80 << 10]), None);
    }

    #[test]
    fn active_scheduler_is_the_bracketed_one() {
        assert_eq!(
            active_scheduler("[none] mq-deadline kyber bfq").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none [bfq]").as_deref(), Some("bfq"));
        assert_eq!(active_scheduler("none"), None);
    }

    #[test]
    fn dev_names_split_major_and_minor() {
        assert_eq!(dev_name((7 << 8) | 3), "7:3");
        assert_eq!(dev_name((259 << 8) | 1), "259:1");
    }

    #[test]
    fn a_missing_device_is_not_created_as_a_file() {
        let error = probe("/dev/iosched-no-such-device").unwrap_err();
        assert!(error.to_string().contains("no such device"), "{error}");
        assert!(!std::path::Path::new("/dev/iosched-no-such-device").exists());
    }

    #[test]
    fn a_missing_file_probes_as_a_file_to_create() {
        let dir = std::env::temp_dir().join(format!("iosched-probe-{}", std::process::id()));
        let target = probe(dir.join("nope").to_str().unwrap());
        assert!(target.is_err(), "missing parent directory must be an error");
        let target = probe(
            std::env::temp_dir()
                .join("iosched-surely-missing")
                .to_str()
                .unwrap(),
        )
        .unwrap();
        assert!(!target.exists);
        assert_eq!(target.kind, TargetKind::RegularFile);
    }
}
