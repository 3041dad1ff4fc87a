//! What a file or device holds that writing over it would destroy: a known file-system,
//! swap, encryption or partition-table signature in its first blocks (as blkid knows them),
//! or, for a regular file, an attached loop device backed by it. The engine's target checks
//! and the output gate both ask here.

use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

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

/// Names of the entries of a directory (none if it cannot be read).
pub fn entry_names(dir: &Path) -> Vec<String> {
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
pub fn loops_backed_by(matches: impl Fn(&Path) -> bool) -> Vec<String> {
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
pub fn file_refusal(path: &Path) -> Option<String> {
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
pub fn head_signature(path: &Path) -> std::io::Result<Option<String>> {
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
}
