//! Checks made before the first write to a target, so that a typo in `--device` does not
//! destroy a file system: a block device (or any of its partitions) is mounted or used as
//! swap, it has partitions, another driver holds it; a regular file backs a loop device; and
//! on either, the first blocks carry a known file-system, swap, encryption or partition-table
//! signature (a disk image). `--force` skips them; runs that only read are not checked.
//!
//! On every target the engine also asserts that each request stays inside its job's region
//! (see `engine.rs`).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use iosched_gate::holds::{entry_names, file_refusal, head_signature, loops_backed_by};

use crate::error::EngineError;
use crate::target::{Target, TargetKind};

/// Device numbers (`st_rdev`) of the target and, for a whole disk, of its partitions.
fn device_numbers(target: &Target) -> Vec<u64> {
    let mut devs: Vec<u64> = target.dev.into_iter().collect();
    if let (None, Some(disk)) = (&target.partition, &target.disk) {
        for name in partitions(disk) {
            if let Ok(text) = fs::read_to_string(format!("/sys/block/{disk}/{name}/dev")) {
                if let Some((major, minor)) = text.trim().split_once(':') {
                    if let (Ok(major), Ok(minor)) = (major.parse::<u64>(), minor.parse::<u64>()) {
                        devs.push(makedev(major, minor));
                    }
                }
            }
        }
    }
    devs
}

fn makedev(major: u64, minor: u64) -> u64 {
    ((major & 0xfff) << 8) | ((major & !0xfff) << 32) | (minor & 0xff) | ((minor & !0xff) << 12)
}

/// Partition names of a whole disk (`loop0p1`, `sda1`...).
pub fn partitions(disk: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(format!("/sys/block/{disk}"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.path().join("partition").exists())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// First field of each line of a `/proc/self/mounts`-like file that names a device we hold.
fn users_in(table: &str, devs: &[u64], skip_header: bool) -> Vec<String> {
    let mut users = Vec::new();
    for line in table.lines().skip(usize::from(skip_header)) {
        let mut fields = line.split_whitespace();
        let (Some(source), second) = (fields.next(), fields.next()) else {
            continue;
        };
        if !source.starts_with('/') {
            continue;
        }
        let Ok(metadata) = fs::metadata(source) else {
            continue;
        };
        if devs.contains(&metadata.rdev()) && metadata.file_type_is_block() {
            users.push(match second {
                Some(point) if !skip_header => format!("{source} mounted on {point}"),
                _ => format!("{source} in use as swap"),
            });
        }
    }
    users
}

trait BlockType {
    fn file_type_is_block(&self) -> bool;
}

impl BlockType for fs::Metadata {
    fn file_type_is_block(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.file_type().is_block_device()
    }
}

/// Refuses a run that would write to `target` (its jobs write, or a short file must be grown
/// to `end_bytes` for them) when writing could destroy data, or when reading jobs would
/// fill a file that holds data with layout data.
pub fn check_writable(
    target: &Target,
    jobs_write: bool,
    end_bytes: u64,
) -> Result<(), EngineError> {
    let from = target.capacity_bytes.unwrap_or(0);
    // Issue 28: reading jobs asked for no write, so a file holding data is not theirs to
    // fill (5000 clones of 8 KiB, each file 1 MiB aligned, once wrote 5.2 GB into an 8 MiB
    // file): only an empty or new file is laid out without --force.
    let holds_data = (!jobs_write && target.kind == TargetKind::RegularFile && from > 0)
        .then(|| format!("it holds {from} bytes of data"));
    let Some(reason) = refusal(target).or(holds_data) else {
        return Ok(());
    };
    let reason = if jobs_write {
        reason
    } else {
        format!("the reading jobs need it grown from {from} to {end_bytes} bytes with layout data, and {reason}")
    };
    Err(EngineError::Refused {
        path: target.path.clone(),
        reason,
    })
}

/// Why writing to `target` could destroy data, if it could.
pub fn refusal(target: &Target) -> Option<String> {
    if target.kind == TargetKind::RegularFile {
        return file_refusal(Path::new(&target.path));
    }
    let devs = device_numbers(target);
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut users = users_in(&mounts, &devs, false);
    let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
    users.extend(users_in(&swaps, &devs, true));
    if !users.is_empty() {
        return Some(format!("it is in use: {}", users.join(", ")));
    }
    if let Some(reason) = holder_refusal(target, &devs) {
        return Some(reason);
    }
    match head_signature(Path::new(&target.path)) {
        Ok(found) => found,
        Err(error) => Some(format!(
            "cannot read its first blocks to look for a file system ({error})"
        )),
    }
}

/// A block device that has partitions, or is held (through sysfs `holders`: device-mapper,
/// md, bcache...) or backs a loop device, itself or through one of its partitions.
fn holder_refusal(target: &Target, devs: &[u64]) -> Option<String> {
    let disk = target.disk.as_ref()?;
    let mut own = vec![format!("/sys/block/{disk}")];
    match &target.partition {
        Some(part) => own = vec![format!("/sys/block/{disk}/{part}")],
        None => {
            let parts = partitions(disk);
            if !parts.is_empty() {
                return Some(format!("it has partitions ({})", parts.join(", ")));
            }
        }
    }
    let holders: Vec<String> = own
        .iter()
        .flat_map(|dir| entry_names(&Path::new(dir).join("holders")))
        .collect();
    if !holders.is_empty() {
        return Some(format!("it is held by {}", holders.join(", ")));
    }
    // A loop device over a block device claims no holder: its backing_file names it.
    let loops = loops_backed_by(|backing| {
        fs::metadata(backing).is_ok_and(|m| m.file_type_is_block() && devs.contains(&m.rdev()))
    });
    if !loops.is_empty() {
        return Some(format!("it backs {}", loops.join(", ")));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makedev_inverts_dev_name() {
        assert_eq!(crate::target::dev_name(makedev(259, 3)), "259:3");
        assert_eq!(crate::target::dev_name(makedev(7, 300)), "7:300");
    }
}
