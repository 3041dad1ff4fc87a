//! Checks made before the first write to a target, so that a typo in `--device` does not
//! destroy a file system: a block device (or any of its partitions) is mounted or used as
//! swap, it has partitions, another driver holds it; a regular file backs a loop device; and
//! on either, the first blocks carry a known file-system, swap, encryption or partition-table
//! signature (a disk image). `--force` skips them; runs that only read are not checked.
//!
//! On every target the engine also asserts that each request stays inside its job's region
//! (see `engine.rs`).

use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::EngineError;
use crate::target::{Target, TargetKind};

/// Bytes read from the start of a device to look for signatures (btrfs's lies at 64 KiB + 64).
const PROBE_BYTES: usize = 68 * 1024;

/// A magic string at a byte offset, and what it means.
struct Magic {
    offset: usize,
    bytes: &'static [u8],
    name: &'static str,
}

/// Common signatures, as blkid knows them.
const MAGICS: &[Magic] = &[
    // ext2/3/4: s_magic 0xEF53 (little endian) at superblock (1024) + 56.
    Magic {
        offset: 1080,
        bytes: &[0x53, 0xEF],
        name: "an ext2/3/4 file system",
    },
    Magic {
        offset: 0,
        bytes: b"XFSB",
        name: "an XFS file system",
    },
    Magic {
        offset: 65600,
        bytes: b"_BHRfS_M",
        name: "a btrfs file system",
    },
    Magic {
        offset: 4086,
        bytes: b"SWAPSPACE2",
        name: "a swap area",
    },
    Magic {
        offset: 4086,
        bytes: b"SWAP-SPACE",
        name: "a swap area",
    },
    Magic {
        offset: 0,
        bytes: b"LUKS\xba\xbe",
        name: "a LUKS encrypted volume",
    },
    Magic {
        offset: 0,
        bytes: b"SKUL\xba\xbe",
        name: "a LUKS2 encrypted volume",
    },
    Magic {
        offset: 54,
        bytes: b"FAT12   ",
        name: "a FAT file system",
    },
    Magic {
        offset: 54,
        bytes: b"FAT16   ",
        name: "a FAT file system",
    },
    Magic {
        offset: 82,
        bytes: b"FAT32   ",
        name: "a FAT file system",
    },
    Magic {
        offset: 3,
        bytes: b"NTFS    ",
        name: "an NTFS file system",
    },
    Magic {
        offset: 0,
        bytes: b"hsqs",
        name: "a squashfs image",
    },
    Magic {
        offset: 32769,
        bytes: b"CD001",
        name: "an ISO 9660 image",
    },
    Magic {
        offset: 512,
        bytes: b"EFI PART",
        name: "a GPT partition table",
    },
    Magic {
        offset: 1024,
        bytes: &[0x10, 0x20, 0xF5, 0xF2],
        name: "an F2FS file system",
    },
    Magic {
        offset: 0x218,
        bytes: b"LVM2 001",
        name: "an LVM physical volume",
    },
];

/// What the first bytes of a device say it holds, if anything recognisable.
pub fn signature(head: &[u8]) -> Option<&'static str> {
    for magic in MAGICS {
        if head.get(magic.offset..magic.offset + magic.bytes.len()) == Some(magic.bytes) {
            return Some(magic.name);
        }
    }
    // An MBR: boot signature 0x55AA and at least one partition entry with a type byte.
    if head.get(510..512) == Some(&[0x55, 0xAA]) {
        let has_entry = (0..4).any(|i| head.get(446 + 16 * i + 4).is_some_and(|&t| t != 0));
        if has_entry {
            return Some("an MBR partition table");
        }
    }
    None
}

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
/// to `end_bytes` for them) when writing could destroy data.
pub fn check_writable(
    target: &Target,
    jobs_write: bool,
    end_bytes: u64,
) -> Result<(), EngineError> {
    let Some(reason) = refusal(target) else {
        return Ok(());
    };
    let reason = if jobs_write {
        reason
    } else {
        let from = target.capacity_bytes.unwrap_or(0);
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
        return file_refusal(&target.path);
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
    match head_signature(&target.path) {
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

/// Names of the entries of a directory (none if it cannot be read).
fn entry_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Attached loop devices whose backing file satisfies `matches`, as `/dev/loopN`.
fn loops_backed_by(matches: impl Fn(&Path) -> bool) -> Vec<String> {
    entry_names(Path::new("/sys/block"))
        .into_iter()
        .filter(|name| {
            fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
                .is_ok_and(|backing| matches(Path::new(backing.trim())))
        })
        .map(|name| format!("/dev/{name}"))
        .collect()
}

/// A regular file: an attached loop device's backing file, or a disk image. A file that does
/// not exist yet is the engine's to create.
fn file_refusal(path: &str) -> Option<String> {
    let Ok(own) = fs::metadata(path) else {
        return None;
    };
    // Same inode, so a hard link or another name of the image counts too.
    let loops = loops_backed_by(|backing| {
        fs::metadata(backing).is_ok_and(|m| m.dev() == own.dev() && m.ino() == own.ino())
    });
    if !loops.is_empty() {
        return Some(format!("it backs {}", loops.join(", ")));
    }
    // A file we may not read we may not write either: opening it says so.
    head_signature(path).ok().flatten()
}

/// A known signature in the first blocks of `path`.
fn head_signature(path: &str) -> std::io::Result<Option<String>> {
    let mut head = vec![0u8; PROBE_BYTES];
    let read = File::open(path).and_then(|mut file| {
        let mut total = 0;
        while total < head.len() {
            let n = file.read(&mut head[total..])?;
            if n == 0 {
                break;
            }
            total += n;
        }
        Ok(total)
    });
    Ok(signature(&head[..read?]).map(|what| format!("it carries {what}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(offset: usize, bytes: &[u8]) -> Vec<u8> {
        let mut head = vec![0u8; PROBE_BYTES];
        head[offset..offset + bytes.len()].copy_from_slice(bytes);
        head
    }

    #[test]
    fn common_signatures_are_recognised() {
        assert_eq!(
            signature(&with(1080, &[0x53, 0xEF])),
            Some("an ext2/3/4 file system")
        );
        assert_eq!(signature(&with(0, b"XFSB")), Some("an XFS file system"));
        assert_eq!(
            signature(&with(65600, b"_BHRfS_M")),
            Some("a btrfs file system")
        );
        assert_eq!(signature(&with(4086, b"SWAPSPACE2")), Some("a swap area"));
        assert_eq!(
            signature(&with(0, b"LUKS\xba\xbe")),
            Some("a LUKS encrypted volume")
        );
        assert_eq!(signature(&with(82, b"FAT32   ")), Some("a FAT file system"));
    }

    #[test]
    fn zeroes_and_short_reads_carry_nothing() {
        assert_eq!(signature(&vec![0u8; PROBE_BYTES]), None);
        assert_eq!(signature(&[0u8; 100]), None);
    }

    #[test]
    fn an_mbr_needs_a_partition_entry() {
        let mut head = with(510, &[0x55, 0xAA]);
        assert_eq!(signature(&head), None);
        head[446 + 4] = 0x83;
        assert_eq!(signature(&head), Some("an MBR partition table"));
    }

    #[test]
    fn makedev_inverts_dev_name() {
        assert_eq!(crate::target::dev_name(makedev(259, 3)), "259:3");
        assert_eq!(crate::target::dev_name(makedev(7, 300)), "7:300");
    }
}
