//! Where the next I/O of a job goes and how large it is: fio's offset, block-size, direction
//! and file-selection rules for one job clone.

use crate::job::{
    BlockSizes, FileService, JobSpec, RandomDistribution, RwMode, RwSequencer, StridedZones,
    DDIR_READ, DDIR_TRIM, DDIR_WRITE,
};
use crate::random_map::RandomMap;
use crate::rng::Rng;

/// What one I/O does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoKind {
    Read,
    Write,
    Trim,
    /// `fsync(2)`: data and metadata of the file.
    Fsync,
    /// `fdatasync(2)`.
    Fdatasync,
    /// The file is emptied (`open` with `O_TRUNC`, or unlink and create): its cached pages,
    /// dirty or not, are dropped and its blocks freed. Only buffered workloads issue it
    /// (`iosched_workload=dbench4`).
    Truncate,
}

impl IoKind {
    /// fio's direction index (read 0, write 1, trim 2); syncs report as writes' companion
    /// `sync` block and have none.
    pub fn ddir(self) -> Option<usize> {
        match self {
            IoKind::Read => Some(DDIR_READ),
            IoKind::Write => Some(DDIR_WRITE),
            IoKind::Trim => Some(DDIR_TRIM),
            IoKind::Fsync | IoKind::Fdatasync | IoKind::Truncate => None,
        }
    }
}

/// One I/O of a job: which of its files, where, how much.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoUnit {
    pub kind: IoKind,
    /// Index into the clone's file list.
    pub file: usize,
    /// Byte offset within the file.
    pub offset: u64,
    /// Bytes (0 for syncs).
    pub len: u64,
}

/// The byte range of one file that a clone works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRegion {
    /// First byte the clone may touch.
    pub start: u64,
    /// Bytes from `start`.
    pub len: u64,
}

/// Generates the I/O stream of one job clone.
#[derive(Clone, Debug)]
pub struct IoGenerator {
    rw: RwMode,
    rw_suffix: i64,
    sequencer: RwSequencer,
    rwmixread: u32,
    bs: [BlockSizes; 3],
    align: [u64; 3],
    bs_unaligned: bool,
    distribution: RandomDistribution,
    percentage_random: [u32; 3],
    file_service: FileService,
    regions: Vec<FileRegion>,
    /// Next sequential offset per file (relative to the region start).
    seq_pos: Vec<u64>,
    current_file: usize,
    ios_on_current_file: u32,
    /// For random modes with `:N`: I/Os left at the current random position.
    run_left: u32,
    run_offset: u64,
    /// trimwrite: a trim is followed by a write of the same range.
    pending_write_after_trim: Option<IoUnit>,
    /// `iosched_workload=dbench4`: the client's op stream replaces fio's.
    dbench: Option<crate::dbench::DbenchClient>,
    /// fio's random map per file, in blocks of the smallest block size, when it keeps one.
    maps: Vec<Option<RandomMap>>,
    map_unit: u64,
    keeps_map: bool,
    /// `zonemode=strided`: where each file's current zone starts (relative to its region),
    /// bytes done in the zone, and bytes skipped between zones so far.
    zones: Option<StridedZones>,
    zone_start: Vec<u64>,
    zone_bytes: u64,
    skipped_bytes: u64,
}

impl IoGenerator {
    /// A generator for one clone over `regions` (at least one, each non-empty).
    pub fn new(spec: &JobSpec, regions: Vec<FileRegion>) -> IoGenerator {
        assert!(!regions.is_empty(), "a job clone needs at least one file");
        let align = [0, 1, 2].map(|ddir| {
            spec.blockalign[ddir]
                .unwrap_or_else(|| spec.bs[ddir].min())
                .max(1)
        });
        let regions_for_dbench = regions.clone();
        // fio keeps a random map for uniform random offsets unless told not to, or unless
        // blockalign differs from the block size (which turns it off); other distributions
        // draw their offsets without it.
        let map_unit = spec
            .bs
            .iter()
            .map(BlockSizes::min)
            .min()
            .unwrap_or(4096)
            .max(1);
        let keeps_map = spec.rw.is_random()
            && !spec.norandommap
            && matches!(spec.random_distribution, RandomDistribution::Uniform)
            && (0..3)
                .all(|ddir| spec.blockalign[ddir].is_none_or(|align| align == spec.bs[ddir].min()));
        let zone_start = vec![0; regions.len()];
        let seq_pos = regions
            .iter()
            .map(|region| {
                // A backwards sequential job (`rw=read:-8k`) starts at the end of its region.
                if spec.rw_suffix < 0 && !spec.rw.is_random() {
                    region.len.saturating_sub(spec.bs[DDIR_READ].max())
                } else {
                    0
                }
            })
            .collect();
        let mut generator = IoGenerator {
            rw: spec.rw,
            rw_suffix: spec.rw_suffix,
            sequencer: spec.rw_sequencer,
            rwmixread: spec.rwmixread,
            bs: spec.bs.clone(),
            align,
            bs_unaligned: spec.bs_unaligned,
            distribution: spec.random_distribution.clone(),
            percentage_random: spec.percentage_random,
            file_service: spec.file_service,
            seq_pos,
            regions,
            current_file: 0,
            ios_on_current_file: 0,
            run_left: 0,
            run_offset: 0,
            pending_write_after_trim: None,
            dbench: (spec.workload == crate::job::Workload::Dbench4)
                .then(|| crate::dbench::DbenchClient::new(regions_for_dbench)),
            maps: Vec::new(),
            map_unit,
            keeps_map,
            zones: spec.zones,
            zone_start,
            zone_bytes: 0,
            skipped_bytes: 0,
        };
        generator.maps = (0..generator.regions.len())
            .map(|file| generator.fresh_map(file))
            .collect();
        generator
    }

    /// A random map over what the file's next I/O may use (its current zone under
    /// `zonemode=strided`), if the job keeps one.
    fn fresh_map(&self, file: usize) -> Option<RandomMap> {
        let blocks = self.span(file).len / self.map_unit;
        (self.keeps_map && blocks > 0).then(|| RandomMap::new(blocks))
    }

    /// The clone's regions.
    pub fn regions(&self) -> &[FileRegion] {
        &self.regions
    }

    /// Total bytes of all regions: what one pass over the files covers.
    pub fn total_region_bytes(&self) -> u64 {
        self.regions.iter().map(|region| region.len).sum()
    }

    /// Whether the next unit is already decided (a dbench client's op, trimwrite's write), so
    /// there is no direction to choose: [`IoGenerator::next`] gives it.
    pub fn next_is_scripted(&self) -> bool {
        self.dbench.is_some() || self.pending_write_after_trim.is_some()
    }

    /// Whether the job mixes reads and writes, and the share of `kind` in the mix
    /// (`rwmixread`/`rwmixwrite`) is not zero: a rate-limited direction may hand its turn to
    /// such a direction (fio's `rate_ddir()`).
    pub fn mixes_in(&self, kind: IoKind) -> bool {
        let share = match kind {
            IoKind::Read => self.rwmixread,
            IoKind::Write => 100 - self.rwmixread,
            _ => 0,
        };
        matches!(self.rw, RwMode::ReadWrite | RwMode::RandRw) && share > 0
    }

    /// The direction of the next I/O: fio draws it first, then size and place.
    pub fn choose_kind(&mut self, rng: &mut Rng) -> IoKind {
        let mixed = |rng: &mut Rng, mix: u32| {
            if (rng.below(100) as u32) < mix {
                IoKind::Read
            } else {
                IoKind::Write
            }
        };
        match self.rw {
            RwMode::Read | RwMode::RandRead => IoKind::Read,
            RwMode::Write | RwMode::RandWrite => IoKind::Write,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => {
                IoKind::Trim
            }
            RwMode::ReadWrite | RwMode::RandRw => mixed(rng, self.rwmixread),
        }
    }

    fn block_size(&mut self, ddir: usize, rng: &mut Rng) -> u64 {
        match &self.bs[ddir] {
            BlockSizes::Fixed(size) => *size,
            BlockSizes::Range { min, max } => {
                if self.bs_unaligned {
                    rng.range_inclusive(*min, *max)
                } else {
                    let steps = max / min;
                    min * rng.range_inclusive(1, steps.max(1))
                }
            }
            BlockSizes::Split(entries) => {
                let mut draw = rng.below(100) as u32;
                for (size, pct) in entries {
                    if draw < *pct {
                        return *size;
                    }
                    draw -= pct;
                }
                entries.last().map(|(size, _)| *size).unwrap_or(4096)
            }
        }
    }

    /// The file the next I/O goes to, advancing `file_service_type`'s rotation (fio's
    /// get_next_file()). A sync asks too: fio picks the file before deciding the I/O is a sync.
    pub fn next_file(&mut self, rng: &mut Rng) -> usize {
        let files = self.regions.len();
        if files == 1 {
            return 0;
        }
        match self.file_service {
            FileService::RoundRobin { n } => {
                if self.ios_on_current_file >= n.max(1) {
                    self.current_file = (self.current_file + 1) % files;
                    self.ios_on_current_file = 0;
                }
            }
            FileService::Random { n } => {
                if self.ios_on_current_file >= n.max(1) {
                    self.current_file = rng.below(files as u64) as usize;
                    self.ios_on_current_file = 0;
                }
            }
            // Switching happens when a file's sequential position wraps; see `sequential`.
            FileService::Sequential => {}
        }
        self.ios_on_current_file += 1;
        self.current_file
    }

    /// A random block index in `0..blocks` under the job's distribution.
    fn random_block(&self, blocks: u64, rng: &mut Rng) -> u64 {
        match &self.distribution {
            RandomDistribution::Uniform => rng.below(blocks),
            RandomDistribution::Normal { sigma_pct } => {
                // Box-Muller around the middle of the range, clamped into it.
                let u1 = rng.unit().max(f64::MIN_POSITIVE);
                let u2 = rng.unit();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let centre = blocks as f64 / 2.0;
                let value = centre + z * sigma_pct / 100.0 * blocks as f64;
                (value.max(0.0) as u64).min(blocks - 1)
            }
            RandomDistribution::Zoned(zones) => {
                let mut draw = rng.below(100) as u32;
                let mut start_pct = 0u64;
                for &(access_pct, size_pct) in zones {
                    if draw < access_pct {
                        let lo = blocks * start_pct / 100;
                        let hi = (blocks * (start_pct + u64::from(size_pct)) / 100).max(lo + 1);
                        return (lo + rng.below(hi - lo)).min(blocks - 1);
                    }
                    draw -= access_pct;
                    start_pct += u64::from(size_pct);
                }
                rng.below(blocks)
            }
            RandomDistribution::Zipf { theta } => zipf_block(blocks, *theta, rng),
            RandomDistribution::Pareto { h } => {
                // fio's pareto: a power law over the blocks with shape `h` in (0, 1).
                let u = rng.unit();
                let value = (blocks as f64 * u.powf(1.0 / (1.0 - h).max(1e-9))) as u64;
                value.min(blocks - 1)
            }
        }
    }

    fn sequential(&mut self, file: usize, len: u64) -> u64 {
        let region = self.regions[file];
        let mut pos = self.seq_pos[file];
        if pos + len > region.len {
            pos = 0;
            if self.file_service == FileService::Sequential {
                // Done with this file: move on and start the next one from its beginning.
                self.current_file = (self.current_file + 1) % self.regions.len();
                return self.sequential(self.current_file, len);
            }
        }
        let step = len as i64 + self.rw_suffix;
        let next = pos as i64 + step;
        self.seq_pos[file] = if next < 0 {
            region.len.saturating_sub(len)
        } else {
            next as u64
        };
        region.start + pos
    }

    /// Bytes `zonemode=strided` skipped between zones: they count toward the job's size.
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped_bytes
    }

    /// The part of `file`'s region the next I/O may use: its current zone under
    /// `zonemode=strided`, else all of it.
    fn span(&self, file: usize) -> FileRegion {
        let region = self.regions[file];
        match self.zones {
            Some(zones) => {
                let start = self.zone_start[file];
                FileRegion {
                    start: region.start + start,
                    len: zones.range.min(region.len - start),
                }
            }
            None => region,
        }
    }

    /// fio's `__fill_io_u_zone()`: after `zonesize` bytes move to the next zone (`zonerange`
    /// plus `zoneskip` on, wrapping at the end); a sequential position past the zone's end
    /// returns to its start; the random map starts over every `zonerange` bytes.
    fn enter_zone(&mut self, file: usize) {
        let Some(zones) = self.zones else {
            return;
        };
        let region_len = self.regions[file].len;
        if self.zone_bytes >= zones.size {
            self.zone_bytes = 0;
            self.zone_start[file] += zones.range + zones.skip;
            if self.zone_start[file] >= region_len {
                self.zone_start[file] = 0;
            }
            self.seq_pos[file] = self.zone_start[file];
            self.skipped_bytes += zones.skip;
        }
        if self.seq_pos[file] >= self.zone_start[file] + zones.range {
            self.seq_pos[file] = self.zone_start[file];
        }
        if self.zone_bytes.is_multiple_of(zones.range) {
            self.maps[file] = self.fresh_map(file);
        }
    }

    /// A random offset in `file` and the length to use there: the random map may cut an I/O
    /// short at a block already used.
    fn random(&mut self, file: usize, ddir: usize, len: u64, rng: &mut Rng) -> (u64, u64) {
        let region = self.span(file);
        if self.run_left > 0 {
            self.run_left -= 1;
            let offset = match self.sequencer {
                RwSequencer::Identical => self.run_offset,
                RwSequencer::Sequential => self.run_offset + len,
            };
            if offset + len <= region.len {
                self.run_offset = offset;
                return (region.start + offset, len);
            }
        }
        let align = self.align[ddir];
        let blocks = (region.len.saturating_sub(len) / align + 1).max(1);
        let mut offset = self.random_block(blocks, rng) * align;
        self.run_offset = offset;
        self.run_left = (self.rw_suffix.max(1) as u32).saturating_sub(1);
        let unit = self.map_unit;
        if let Some(map) = self.maps[file].as_mut() {
            if map.is_full() {
                map.reset();
            }
            let mut block = offset / unit;
            if !map.is_free(block) {
                block = map
                    .next_free(block)
                    .expect("a map that is not full has a free block");
                offset = block * unit;
                self.run_offset = offset;
            }
            let marked = map.mark(block, len.div_ceil(unit));
            return (region.start + offset, len.min(marked * unit));
        }
        (region.start + offset, len)
    }

    /// The next I/O.
    pub fn next(&mut self, rng: &mut Rng) -> IoUnit {
        if let Some(client) = self.dbench.as_mut() {
            return client.next(rng);
        }
        if let Some(write) = self.pending_write_after_trim.take() {
            return write;
        }
        let kind = self.choose_kind(rng);
        self.next_of_kind(kind, rng)
    }

    /// The next I/O, of direction `kind` (from [`IoGenerator::choose_kind`], possibly
    /// switched by a rate limit).
    pub fn next_of_kind(&mut self, kind: IoKind, rng: &mut Rng) -> IoUnit {
        assert!(!self.next_is_scripted(), "the next unit is scripted");
        let ddir = kind.ddir().expect("data I/O");
        let len = self.block_size(ddir, rng);
        let file = self.next_file(rng);
        self.enter_zone(file);
        let random = self.rw.is_random()
            && (self.percentage_random[ddir] >= 100
                || (rng.below(100) as u32) < self.percentage_random[ddir]);
        let (offset, len) = if random {
            self.random(file, ddir, len, rng)
        } else {
            (self.sequential(file, len), len)
        };
        if self.zones.is_some() {
            self.zone_bytes += len;
        }
        let unit = IoUnit {
            kind,
            file,
            offset,
            len,
        };
        if matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite) {
            self.pending_write_after_trim = Some(IoUnit {
                kind: IoKind::Write,
                ..unit
            });
        }
        unit
    }
}

/// Zipf-distributed block (popular blocks first) by rejection-inversion (Hörmann &
/// Derflinger), which needs no table and is O(1) per draw.
fn zipf_block(blocks: u64, theta: f64, rng: &mut Rng) -> u64 {
    let n = blocks as f64;
    let s = theta.max(1e-6);
    let h = |x: f64| {
        if (s - 1.0).abs() < 1e-9 {
            x.ln()
        } else {
            (x.powf(1.0 - s) - 1.0) / (1.0 - s)
        }
    };
    let h_inv = |y: f64| {
        if (s - 1.0).abs() < 1e-9 {
            y.exp()
        } else {
            (1.0 + y * (1.0 - s)).powf(1.0 / (1.0 - s))
        }
    };
    let h_x1 = h(1.5) - 1.0;
    let h_n = h(n + 0.5);
    for _ in 0..64 {
        let u = h_n + rng.unit() * (h_x1 - h_n);
        let x = h_inv(u);
        let k = (x + 0.5).floor().clamp(1.0, n);
        if k - x <= 0.5 || u >= h(k + 0.5) - k.powf(-s) {
            return k as u64 - 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(rw: RwMode) -> JobSpec {
        let mut spec = JobSpec::new("t");
        spec.rw = rw;
        spec
    }

    fn region(len: u64) -> Vec<FileRegion> {
        vec![FileRegion { start: 0, len }]
    }

    #[test]
    fn sequential_reads_advance_by_block_and_wrap() {
        let mut generator = IoGenerator::new(&job(RwMode::Read), region(3 * 4096));
        let mut rng = Rng::new(1);
        let offsets: Vec<u64> = (0..4).map(|_| generator.next(&mut rng).offset).collect();
        assert_eq!(offsets, [0, 4096, 8192, 0]);
    }

    /// `rw=write:4k` skips 4 KiB after every write.
    #[test]
    fn sequential_suffix_adds_a_gap() {
        let mut spec = job(RwMode::Write);
        spec.rw_suffix = 4096;
        let mut generator = IoGenerator::new(&spec, region(1 << 20));
        let mut rng = Rng::new(1);
        let offsets: Vec<u64> = (0..3).map(|_| generator.next(&mut rng).offset).collect();
        assert_eq!(offsets, [0, 8192, 16384]);
    }

    /// `rw=read:-8k` with 4 KiB blocks walks backwards by 4 KiB.
    #[test]
    fn negative_suffix_walks_backwards() {
        let mut spec = job(RwMode::Read);
        spec.rw_suffix = -8192;
        let mut generator = IoGenerator::new(&spec, region(16 * 4096));
        let mut rng = Rng::new(1);
        let offsets: Vec<u64> = (0..3).map(|_| generator.next(&mut rng).offset).collect();
        assert_eq!(offsets, [15 * 4096, 14 * 4096, 13 * 4096]);
    }

    /// `randread:4` issues 4 consecutive blocks after each jump.
    #[test]
    fn random_suffix_issues_runs() {
        let mut spec = job(RwMode::RandRead);
        spec.rw_suffix = 4;
        let mut generator = IoGenerator::new(&spec, region(1 << 30));
        let mut rng = Rng::new(5);
        let offsets: Vec<u64> = (0..4).map(|_| generator.next(&mut rng).offset).collect();
        assert!(
            offsets.windows(2).all(|w| w[1] == w[0] + 4096),
            "{offsets:?}"
        );
    }

    #[test]
    fn random_offsets_are_aligned_and_inside_the_region() {
        let mut generator = IoGenerator::new(&job(RwMode::RandRead), region(1 << 20));
        let mut rng = Rng::new(9);
        for _ in 0..1000 {
            let unit = generator.next(&mut rng);
            assert_eq!(unit.offset % 4096, 0);
            assert!(unit.offset + unit.len <= 1 << 20);
        }
    }

    #[test]
    fn rwmixread_sets_the_read_share() {
        let mut spec = job(RwMode::RandRw);
        spec.rwmixread = 70;
        let mut generator = IoGenerator::new(&spec, region(1 << 30));
        let mut rng = Rng::new(2);
        let reads = (0..10_000)
            .filter(|_| generator.next(&mut rng).kind == IoKind::Read)
            .count();
        assert!((6700..7300).contains(&reads), "{reads} reads of 10000");
    }

    #[test]
    fn round_robin_switches_file_every_io() {
        let spec = job(RwMode::Read);
        let regions = vec![
            FileRegion {
                start: 0,
                len: 1 << 20,
            },
            FileRegion {
                start: 0,
                len: 1 << 20,
            },
        ];
        let mut generator = IoGenerator::new(&spec, regions);
        let mut rng = Rng::new(1);
        let files: Vec<usize> = (0..4).map(|_| generator.next(&mut rng).file).collect();
        assert_eq!(files, [0, 1, 0, 1]);
    }

    #[test]
    fn bssplit_draws_by_weight() {
        let mut spec = job(RwMode::RandRead);
        spec.bs[DDIR_READ] = BlockSizes::Split(vec![(4096, 90), (65536, 10)]);
        // Without the random map, which cuts a large I/O short where it meets a used block.
        spec.norandommap = true;
        let mut generator = IoGenerator::new(&spec, region(1 << 30));
        let mut rng = Rng::new(4);
        let large = (0..10_000)
            .filter(|_| generator.next(&mut rng).len == 65536)
            .count();
        assert!((800..1200).contains(&large), "{large}");
    }

    /// fio's random map: one pass of uniform random 4 KiB I/O uses every block once; the
    /// next pass starts over. Without the map about 1/e of the blocks go untouched.
    #[test]
    fn the_random_map_uses_every_block_once_a_pass() {
        let blocks = 1000u64;
        let distinct = |norandommap: bool, ios: u64| {
            let mut spec = job(RwMode::RandWrite);
            spec.norandommap = norandommap;
            let mut generator = IoGenerator::new(&spec, region(blocks * 4096));
            let mut rng = Rng::new(9);
            let mut seen = std::collections::BTreeMap::<u64, u32>::new();
            for _ in 0..ios {
                let unit = generator.next(&mut rng);
                assert_eq!(unit.len, 4096);
                *seen.entry(unit.offset / 4096).or_default() += 1;
            }
            seen
        };
        let one_pass = distinct(false, blocks);
        assert_eq!(one_pass.len() as u64, blocks);
        assert!(one_pass.values().all(|&uses| uses == 1));
        let two_passes = distinct(false, 2 * blocks);
        assert!(two_passes.values().all(|&uses| uses == 2));
        let without = distinct(true, blocks).len() as f64 / blocks as f64;
        assert!((0.58..0.69).contains(&without), "{without}");
    }

    /// A large I/O drawn over blocks already used is cut at the first of them, as fio's
    /// `mark_random_map()` shortens the buffer.
    #[test]
    fn the_random_map_cuts_an_io_short_at_a_used_block() {
        let mut spec = job(RwMode::RandRead);
        spec.bs[DDIR_READ] = BlockSizes::Split(vec![(4096, 50), (16384, 50)]);
        let mut generator = IoGenerator::new(&spec, region(64 * 4096));
        let mut rng = Rng::new(2);
        let mut used = [false; 64];
        let mut total = 0;
        while total < 64 * 4096 {
            let unit = generator.next(&mut rng);
            let first = (unit.offset / 4096) as usize;
            let blocks = &mut used[first..first + (unit.len / 4096) as usize];
            assert!(blocks.iter().all(|&u| !u), "a block used twice in a pass");
            blocks.fill(true);
            total += unit.len;
        }
        assert!(used.iter().all(|&u| u));
    }

    /// `zonemode=strided`: 256 KiB read in each zone, then 1 MiB skipped; random offsets stay
    /// inside the zone, and each zone's blocks are used once before the next zone.
    #[test]
    fn strided_zones_keep_to_a_zone_then_skip() {
        let zones = StridedZones {
            size: 256 << 10,
            range: 256 << 10,
            skip: 1 << 20,
        };
        for rw in [RwMode::Read, RwMode::RandRead] {
            let mut spec = job(rw);
            spec.zones = Some(zones);
            let mut generator = IoGenerator::new(&spec, region(8 << 20));
            let mut rng = Rng::new(6);
            let mut offsets = Vec::new();
            for _ in 0..3 * 64 {
                let unit = generator.next(&mut rng);
                offsets.push(unit.offset);
            }
            for (zone, chunk) in offsets.chunks(64).enumerate() {
                let start = zone as u64 * (1280 << 10);
                let mut blocks: Vec<u64> = chunk.iter().map(|o| (o - start) / 4096).collect();
                blocks.sort_unstable();
                assert_eq!(blocks, (0..64).collect::<Vec<_>>(), "{rw:?} zone {zone}");
            }
            assert_eq!(generator.skipped_bytes(), 2 << 20, "two skips so far");
        }
    }

    #[test]
    fn zipf_prefers_low_blocks() {
        let mut rng = Rng::new(11);
        let low = (0..10_000)
            .filter(|_| zipf_block(1_000_000, 1.2, &mut rng) < 1000)
            .count();
        assert!(low > 5_000, "{low}");
    }
}
