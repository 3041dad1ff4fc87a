//! A dbench4 client in the shape of mmtests' `client-tiny.txt` (formats.md §5.2), for jobs
//! with `iosched_workload=dbench4`.
//!
//! fio has no file creation, truncation or unlink in its I/O stream, and those are what
//! keep most of dbench's writes off the disk: a file is re-created (`O_TRUNC`) or unlinked
//! long before its dirty pages expire, and only what a `Flush` (fsync) forces reaches the
//! disk early. We do not have `client.txt`; the client replays the published per-pass
//! counts of `client-tiny` instead, in *sessions*, one per unlink:
//!
//! 1. truncate a file (the unlink and the later `NTCreateX` with overwrite disposition; the
//!    loadfile's 613 creates over 253 names re-create each file about twice a pass);
//! 2. append 1–4 writes (303 `WriteX` over 124 sessions, 2.4 each), sized as the pass's
//!    writes are: 96 of 64 KiB, 77 of 4 KiB, 57 of 1 byte and 73 of the remaining ~15 KiB;
//! 3. fsync the file in 43 of 124 sessions (the pass's 43 `Flush`);
//! 4. 0–15 reads of other files (962 `ReadX` a pass, 7.8 a session): 86 % of 4 KiB and 14 %
//!    of 60 KiB (10.9 MiB over 962), at random offsets of what the file holds.
//!
//! Files are the clone's files (`nrfiles`, 253 in client-tiny); they start full, as left by
//! dbench's warm-up pass. Renames, stats and directory scans touch no data and are left out.

use crate::generator::{FileRegion, IoKind, IoUnit};
use crate::rng::Rng;

/// Sessions per client-tiny pass (its unlinks) and the pass's fsyncs.
const SESSIONS: u64 = 124;
const FLUSHES: u64 = 43;
/// Write sizes of a pass and how many of each (303 writes, 7.4 MiB).
const WRITE_SIZES: [(u64, u64); 4] = [(64 << 10, 96), (4 << 10, 77), (1, 57), (15 << 10, 73)];
/// Files drawn for a read before giving it up when all drawn are empty.
const READ_DRAWS: u32 = 8;
/// Read sizes: per mille of reads at 60 KiB (the rest 4 KiB).
const LARGE_READ_PER_MILLE: u64 = 136;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Truncate,
    Write { left: u32 },
    Flush,
    Read { left: u32 },
}

/// The op stream of one dbench client.
#[derive(Clone, Debug)]
pub struct DbenchClient {
    regions: Vec<FileRegion>,
    /// Bytes each file holds now.
    sizes: Vec<u64>,
    file: usize,
    phase: Phase,
    flush_this_session: bool,
}

impl DbenchClient {
    /// A client over the clone's files (each at least one 4 KiB block).
    pub fn new(regions: Vec<FileRegion>) -> DbenchClient {
        assert!(!regions.is_empty(), "a dbench client needs files");
        DbenchClient {
            sizes: regions.iter().map(|region| region.len).collect(),
            regions,
            file: 0,
            phase: Phase::Truncate,
            flush_this_session: false,
        }
    }

    /// The next operation.
    pub fn next(&mut self, rng: &mut Rng) -> IoUnit {
        // Bounded: every phase either yields a unit or moves to a later phase; a session's
        // reads end by returning to Truncate, which always yields.
        loop {
            match self.phase {
                Phase::Truncate => {
                    self.file = rng.below(self.regions.len() as u64) as usize;
                    self.sizes[self.file] = 0;
                    self.flush_this_session = rng.below(SESSIONS) < FLUSHES;
                    self.phase = Phase::Write {
                        left: rng.range_inclusive(1, 4) as u32,
                    };
                    return self.unit(IoKind::Truncate, self.file, 0, 0);
                }
                Phase::Write { left } => {
                    let region = self.regions[self.file];
                    let size = self.sizes[self.file];
                    let len = write_size(rng).min(region.len - size.min(region.len));
                    self.phase = if left > 1 {
                        Phase::Write { left: left - 1 }
                    } else {
                        Phase::Flush
                    };
                    if len == 0 {
                        continue;
                    }
                    self.sizes[self.file] = size + len;
                    return self.unit(IoKind::Write, self.file, region.start + size, len);
                }
                Phase::Flush => {
                    self.phase = Phase::Read {
                        left: rng.range_inclusive(0, 15) as u32,
                    };
                    if self.flush_this_session && self.sizes[self.file] > 0 {
                        return self.unit(IoKind::Fsync, self.file, 0, 0);
                    }
                }
                Phase::Read { left: 0 } => self.phase = Phase::Truncate,
                Phase::Read { left } => {
                    self.phase = Phase::Read { left: left - 1 };
                    // ReadX names a file that exists: draw again past emptied ones.
                    let Some(file) = (0..READ_DRAWS)
                        .map(|_| rng.below(self.regions.len() as u64) as usize)
                        .find(|&file| self.sizes[file] > 0)
                    else {
                        continue;
                    };
                    let held = self.sizes[file];
                    let want = if rng.below(1000) < LARGE_READ_PER_MILLE {
                        60 << 10
                    } else {
                        4 << 10
                    };
                    let len = want.min(held);
                    let offset = rng.below(held - len + 1) / 4096 * 4096;
                    let len = len.min(held - offset);
                    return self.unit(IoKind::Read, file, self.regions[file].start + offset, len);
                }
            }
        }
    }

    fn unit(&self, kind: IoKind, file: usize, offset: u64, len: u64) -> IoUnit {
        IoUnit {
            kind,
            file,
            offset,
            len,
        }
    }
}

fn write_size(rng: &mut Rng) -> u64 {
    let total: u64 = WRITE_SIZES.iter().map(|&(_, count)| count).sum();
    let mut pick = rng.below(total);
    for (size, count) in WRITE_SIZES {
        if pick < count {
            return size;
        }
        pick -= count;
    }
    unreachable!("pick below the total")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(files: usize) -> DbenchClient {
        DbenchClient::new(vec![
            FileRegion {
                start: 0,
                len: 1 << 20,
            };
            files
        ])
    }

    /// Over many sessions the op counts follow client-tiny's per-pass proportions.
    #[test]
    fn op_mix_follows_client_tiny() {
        let mut client = client(253);
        let mut rng = Rng::new(7);
        let mut count = std::collections::BTreeMap::new();
        let mut written = 0u64;
        for _ in 0..200_000 {
            let unit = client.next(&mut rng);
            *count.entry(format!("{:?}", unit.kind)).or_insert(0u64) += 1;
            if unit.kind == IoKind::Write {
                written += unit.len;
            }
        }
        let sessions = count["Truncate"] as f64;
        let per_pass = |kind: &str| count[kind] as f64 / sessions * SESSIONS as f64;
        assert!((per_pass("Write") - 303.0).abs() < 20.0, "{count:?}");
        assert!((per_pass("Fsync") - 43.0).abs() < 5.0, "{count:?}");
        assert!((per_pass("Read") - 962.0).abs() < 80.0, "{count:?}");
        let mib_per_pass = written as f64 / sessions * SESSIONS as f64 / f64::from(1 << 20);
        assert!(
            (mib_per_pass - 7.4).abs() < 1.0,
            "{mib_per_pass} MiB a pass"
        );
    }

    /// A session truncates a file, appends to it from 0, and an fsync names that file;
    /// reads stay within what a file holds.
    #[test]
    fn sessions_append_to_the_truncated_file() {
        let mut client = client(8);
        let mut rng = Rng::new(3);
        let mut current = None;
        let mut end = 0;
        let mut sizes = [1u64 << 20; 8];
        for _ in 0..10_000 {
            let unit = client.next(&mut rng);
            match unit.kind {
                IoKind::Truncate => {
                    current = Some(unit.file);
                    end = 0;
                    sizes[unit.file] = 0;
                }
                IoKind::Write => {
                    assert_eq!(Some(unit.file), current);
                    assert_eq!(unit.offset, end, "appends");
                    end += unit.len;
                    sizes[unit.file] = end;
                }
                IoKind::Fsync => assert_eq!(Some(unit.file), current),
                IoKind::Read => assert!(unit.offset + unit.len <= sizes[unit.file]),
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}
