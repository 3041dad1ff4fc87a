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
    #[inline]
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
///
/// Laid out in declaration order (`repr(C)`), what a uniform random I/O touches first
/// ([`IoGenerator::next_uniform`]; issue 34: with 4096 clones every clone's generator is out
/// of cache at its every I/O, and each line it touches is a miss).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct IoGenerator {
    rw: RwMode,
    /// The last placement drew a random offset (the random map marks it).
    map_draw: bool,
    exhausted: bool,
    rwmixread: u32,
    /// Per direction, the blocks a uniform random draw spans when the common case holds (see
    /// [`IoGenerator::uniform_blocks`]); 0 when the general rules must run.
    uniform_blocks: [u64; 3],
    align: [u64; 3],
    /// `regions[0].start`, inline for [`IoGenerator::next_uniform`].
    region0_start: u64,
    /// File 0's `last_pos`, inline as its random map `map0` is: a one-file clone's I/O then
    /// reads no vector of its own but the map's bits (issue 34: with 4096 clones each vector
    /// is a cache miss at every I/O).
    seq_pos0: [u64; 3],
    run_offset: Option<u64>,
    map0: Option<RandomMap>,
    regions: Vec<FileRegion>,
    rw_suffix: i64,
    sequencer: RwSequencer,
    bs: [BlockSizes; 3],
    bs_unaligned: bool,
    distribution: RandomDistribution,
    percentage_random: [u32; 3],
    file_service: FileService,
    /// fio's `last_pos`: where each file's last I/O of each direction ended (relative to the
    /// region start), one position per direction as fio keeps them. File 0's is `seq_pos0`
    /// (its entry here unused): read and written through [`IoGenerator::seq_pos_mut`].
    seq_pos: Vec<[u64; 3]>,
    current_file: usize,
    ios_on_current_file: u32,
    /// For random modes with `:N`: fio's `ddir_seq_nr` countdown to the next random offset,
    /// and where the last I/O started (for `rw_sequencer=identical`).
    run_countdown: u32,
    /// fio's skewed distributions (zipf, pareto, normal), per file, made at its first draw.
    skewed: Vec<Option<crate::distribution::Skewed>>,
    /// Each file's size (fio's `real_file_size`), at least its region's end.
    file_bytes: Vec<u64>,
    /// Files whose current pass is over.
    file_done: Vec<bool>,
    /// Passes over the files left after this one (`loops - 1`); `None`: as many as the
    /// size takes (`io_size`, `time_based`).
    passes_left: Option<u32>,
    /// trimwrite: a trim is followed by a write of the same range.
    pending_write_after_trim: Option<IoUnit>,
    /// `iosched_workload=dbench4`: the client's op stream replaces fio's.
    dbench: Option<crate::dbench::DbenchClient>,
    /// fio's random map per file, in blocks of the smallest block size, when it keeps one;
    /// file 0's is `map0` (its entry here `None`): reached through [`IoGenerator::map_mut`].
    maps: Vec<Option<RandomMap>>,
    map_unit: u64,
    keeps_map: bool,
    /// `zonemode=strided`: where each file's current zone starts (relative to its region)
    /// and bytes done in the zone.
    zones: Option<StridedZones>,
    zone_start: Vec<u64>,
    zone_bytes: u64,
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
        // Every direction starts at the region's start, a backwards job (`rw=read:-8k`) too:
        // fio moves back only from its second I/O on.
        let seq_pos = regions.iter().map(|region| [region.start; 3]).collect();
        let seq_pos0 = [regions[0].start; 3];
        let region0_start = regions[0].start;
        let file_bytes = regions.iter().map(|r| r.start + r.len).collect();
        let file_done = vec![false; regions.len()];
        let passes_left =
            (spec.io_size.is_none() && !spec.time_based).then(|| spec.loops.max(1) - 1);
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
            seq_pos0,
            region0_start,
            regions,
            current_file: 0,
            ios_on_current_file: 0,
            // fio's countdown starts at 1: the first I/O is a random one.
            run_countdown: 1,
            run_offset: None,
            skewed: Vec::new(),
            file_bytes,
            file_done,
            passes_left,
            map_draw: false,
            exhausted: false,
            pending_write_after_trim: None,
            dbench: (spec.workload == crate::job::Workload::Dbench4)
                .then(|| crate::dbench::DbenchClient::new(regions_for_dbench)),
            maps: Vec::new(),
            map0: None,
            map_unit,
            keeps_map,
            zones: spec.zones,
            zone_start,
            zone_bytes: 0,
            uniform_blocks: [0; 3],
        };
        generator.skewed = vec![None; generator.regions.len()];
        generator.maps = (0..generator.regions.len())
            .map(|file| generator.fresh_map(file))
            .collect();
        generator.map0 = generator.maps[0].take();
        generator.uniform_blocks = [0, 1, 2].map(|ddir| generator.uniform_blocks(ddir));
        generator
    }

    /// The blocks a random offset of direction `ddir` is drawn from, if every I/O of that
    /// direction takes [`IoGenerator::next_uniform`]'s short way: one file, random offsets
    /// every time (no `:N`, `percentage_random` 100), uniform, no zones, one block size that
    /// is also the alignment and the random map's unit, nothing scripted. Otherwise 0. The
    /// short way draws and marks exactly what `place()` and `mark_map()` would (issue 34: the
    /// general rules cost ~330 instructions per I/O).
    fn uniform_blocks(&self, ddir: usize) -> u64 {
        let len = self.bs[ddir].min();
        let simple = self.rw.is_random()
            && self.rw_suffix <= 1
            && self.percentage_random[ddir] >= 100
            && self.regions.len() == 1
            && self.zones.is_none()
            && matches!(self.distribution, RandomDistribution::Uniform)
            && matches!(self.bs[ddir], BlockSizes::Fixed(_))
            && self.align[ddir] == len
            && (self.map0.is_none() || self.map_unit == len)
            && self.dbench.is_none()
            && !matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite);
        if !simple {
            return 0;
        }
        // random_offset()'s count with the block size equal to the alignment.
        self.regions[0].len / len
    }

    /// [`IoGenerator::next_of_kind`] where [`IoGenerator::uniform_blocks`] holds (`blocks`
    /// of them): the same draw, map look-up and marking, and the same state after.
    #[inline]
    fn next_uniform(&mut self, kind: IoKind, ddir: usize, blocks: u64, rng: &mut Rng) -> IoUnit {
        let mut block = rng.below(blocks);
        if let Some(map) = self.map0.as_mut() {
            if map.is_full() {
                map.reset();
            }
            if !map.is_free(block) {
                block = map
                    .next_free(block)
                    .expect("a map that is not full has a free block");
            }
            map.mark_one(block);
        }
        let len = self.align[ddir];
        let offset = self.region0_start + block * len;
        self.map_draw = true;
        self.seq_pos0[ddir] = offset + len;
        self.run_offset = Some(offset);
        IoUnit {
            kind,
            file: 0,
            offset,
            len,
        }
    }

    /// A random map over what the file's next I/O may use (its current zone under
    /// `zonemode=strided`), if the job keeps one.
    fn fresh_map(&self, file: usize) -> Option<RandomMap> {
        let blocks = self.span(file).len / self.map_unit;
        (self.keeps_map && blocks > 0).then(|| RandomMap::new(blocks))
    }

    /// File `file`'s `last_pos` per direction.
    #[inline]
    fn seq_pos_mut(&mut self, file: usize) -> &mut [u64; 3] {
        match file {
            0 => &mut self.seq_pos0,
            _ => &mut self.seq_pos[file],
        }
    }

    /// File `file`'s random map, if the job keeps one.
    #[inline]
    fn map_mut(&mut self, file: usize) -> Option<&mut RandomMap> {
        match file {
            0 => self.map0.as_mut(),
            _ => self.maps[file].as_mut(),
        }
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

    /// Whether [`IoGenerator::next_is_scripted`] can ever hold: a dbench client, or a trimwrite
    /// job's writes.
    pub fn may_script(&self) -> bool {
        self.dbench.is_some() || matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite)
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
    #[inline]
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

    /// fio's `get_next_buflen()` for an I/O at `offset` of `file`: a fixed size as it is; a
    /// range draws `min + u·max` (fio's formula), aligned down to `min`; a split draws by
    /// weight. Sizes that would cross the end of the clone's region are drawn again; `None`
    /// when not even the smallest fits (the pass is over).
    fn block_size(&mut self, ddir: usize, file: usize, offset: u64, rng: &mut Rng) -> Option<u64> {
        let end = self.regions[file].start + self.regions[file].len;
        let fits = |len: u64| offset + len <= end;
        let (min, max) = (self.bs[ddir].min(), self.bs[ddir].max());
        if min == max {
            return Some(min);
        }
        if !fits(min) {
            return None;
        }
        loop {
            let len = match &self.bs[ddir] {
                BlockSizes::Fixed(size) => *size,
                BlockSizes::Range { min, max } => {
                    let raw = min + (*max as f64 * rng.unit()) as u64;
                    let aligned = if self.bs_unaligned {
                        raw
                    } else {
                        raw - raw % min
                    };
                    aligned.min(*max)
                }
                BlockSizes::Split(entries) => {
                    let draw = rng.below(100) as u32;
                    let mut cumulative = 0;
                    let mut chosen = entries.last().map_or(min, |(size, _)| *size);
                    for &(size, pct) in entries {
                        cumulative += pct;
                        if pct > 0 && draw < cumulative && fits(size) {
                            chosen = size;
                            break;
                        }
                    }
                    chosen
                }
            };
            if fits(len) {
                return Some(len);
            }
        }
    }

    /// The file the next I/O goes to, advancing `file_service_type`'s rotation (fio's
    /// get_next_file()); files whose pass is over are passed by. A sync asks too: fio picks
    /// the file before deciding the I/O is a sync.
    pub fn next_file(&mut self, rng: &mut Rng) -> usize {
        let files = self.regions.len();
        if files == 1 {
            return 0;
        }
        match self.file_service {
            FileService::RoundRobin { n } => {
                if self.ios_on_current_file >= n.max(1) {
                    self.current_file = self.next_open_file(self.current_file);
                    self.ios_on_current_file = 0;
                }
            }
            FileService::Random { n } => {
                if self.ios_on_current_file >= n.max(1) {
                    self.current_file = rng.below(files as u64) as usize;
                    self.ios_on_current_file = 0;
                }
            }
            // Switching happens when a file's pass is over; see `place`.
            FileService::Sequential => {}
        }
        self.ios_on_current_file += 1;
        self.current_file
    }

    /// The first file after `file` (cyclically) whose pass is not over.
    fn next_open_file(&self, file: usize) -> usize {
        let files = self.regions.len();
        (1..=files)
            .map(|step| (file + step) % files)
            .find(|&f| !self.file_done[f])
            .unwrap_or(file)
    }

    /// A random block index in `0..blocks` under the uniform or zoned distribution (the
    /// skewed ones are [`crate::distribution::Skewed`]'s).
    fn random_block(&self, blocks: u64, rng: &mut Rng) -> u64 {
        match &self.distribution {
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
            _ => rng.below(blocks),
        }
    }

    /// fio's `get_next_seq_offset()` and `get_next_offset()`'s checks, for `file` and
    /// direction `ddir`: on from where that direction's last I/O ended, plus the `:N` gap of
    /// `rw=read:8k`; a gap past the file's end wraps to the region's start (backwards: to
    /// the region's size less the gap, fio's reading of the end). `None` when the position
    /// is past the region: fio's pass over the file is over.
    fn sequential(&mut self, file: usize, ddir: usize) -> Option<u64> {
        let file_offset = self.span(file).start as i128;
        let io_size = self.regions[file].len as i128;
        let real = self.file_bytes[file] as i128;
        let add = if self.rw.is_random() {
            0
        } else {
            i128::from(self.rw_suffix)
        };
        let mut last = self.seq_pos_mut(file)[ddir] as i128;
        if last >= real {
            return None;
        }
        // fio rewinds a backwards job that stands at a region start other than 0 to its
        // size (an absolute position, as fio has it).
        if last == file_offset && file_offset != 0 && add < 0 {
            last = io_size.min(real);
        }
        let mut pos = last - file_offset;
        if pos != 0 && add != 0 {
            pos += add;
            if pos < 0 || pos >= real {
                pos = if add > 0 {
                    file_offset
                } else {
                    io_size.min(real) + add
                };
            }
        }
        if pos < 0 || pos >= io_size || file_offset + pos >= real {
            return None;
        }
        Some((file_offset + pos) as u64)
    }

    /// The part of `file`'s region the next I/O may use: its current zone under
    /// `zonemode=strided`, else all of it.
    fn span(&self, file: usize) -> FileRegion {
        let region = self.regions[file];
        match self.zones {
            Some(zones) => {
                let start = region.start + self.zone_start[file];
                FileRegion {
                    start,
                    len: zones.range.min(self.file_bytes[file].saturating_sub(start)),
                }
            }
            None => region,
        }
    }

    /// fio's `setup_strided_zone_mode()`: after `zonesize` bytes move to the next zone
    /// (`zonerange` plus `zoneskip` on; back to the region's start past the file's end), until
    /// the job's size is done: skipped bytes do not count toward it; a position past the
    /// zone's end returns to its start; the random map starts over every `zonerange` bytes.
    fn enter_zone(&mut self, file: usize, ddir: usize) {
        let Some(zones) = self.zones else {
            return;
        };
        let region_start = self.regions[file].start;
        if self.zone_bytes >= zones.size {
            self.zone_bytes = 0;
            self.zone_start[file] += zones.range + zones.skip;
            if region_start + self.zone_start[file] >= self.file_bytes[file] {
                self.zone_start[file] = 0;
            }
            self.seq_pos_mut(file)[ddir] = region_start + self.zone_start[file];
        }
        let zone = region_start + self.zone_start[file];
        let pos = &mut self.seq_pos_mut(file)[ddir];
        if *pos >= zone + zones.range {
            *pos = zone;
        }
        if self.zone_bytes.is_multiple_of(zones.range) {
            let map = self.fresh_map(file);
            match file {
                0 => self.map0 = map,
                _ => self.maps[file] = map,
            }
        }
    }

    /// A random offset in `file` (fio's `get_next_rand_offset()`): a block of `blockalign`
    /// over the span less the part a smallest block could not fill; the random map moves a
    /// used block on to the next free one. `None` if the span holds no block.
    fn random_offset(&mut self, file: usize, ddir: usize, rng: &mut Rng) -> Option<u64> {
        let span = self.span(file);
        let align = self.align[ddir];
        let min = self.bs[ddir].min();
        let usable = span.len.saturating_sub(min.saturating_sub(align));
        let blocks = usable / align;
        if blocks == 0 {
            return None;
        }
        if let Some(skewed) = self.skewed_for(file, rng) {
            // fio draws over the file's blocks of the smallest size and places the block at
            // that index times blockalign; past the end folds back.
            return Some(span.start + (skewed.next(rng) % blocks) * align);
        }
        let mut block = self.random_block(blocks, rng);
        let map_unit = self.map_unit;
        if let Some(map) = self.map_mut(file) {
            if map.is_full() {
                map.reset();
            }
            let unit_block = block * align / map_unit;
            if !map.is_free(unit_block) {
                let free = map
                    .next_free(unit_block)
                    .expect("a map that is not full has a free block");
                block = free * map_unit / align;
            }
        }
        Some(span.start + block * align)
    }

    /// Marks a random I/O in the random map, cutting it short at a block already used, as
    /// fio's `mark_random_map()` does.
    fn mark_map(&mut self, file: usize, offset: u64, len: u64) -> u64 {
        let unit = self.map_unit;
        let span_start = self.span(file).start;
        let Some(map) = self.map_mut(file) else {
            return len;
        };
        let block = (offset - span_start) / unit;
        if !map.is_free(block) {
            return len;
        }
        let marked = map.mark(block, len.div_ceil(unit));
        len.min(marked * unit)
    }

    /// The file's skewed distribution (made at its first draw), if the job uses one.
    fn skewed_for(&mut self, file: usize, rng: &mut Rng) -> Option<crate::distribution::Skewed> {
        if matches!(
            self.distribution,
            RandomDistribution::Uniform | RandomDistribution::Zoned(_)
        ) {
            return None;
        }
        if self.skewed[file].is_none() {
            // fio: ranges of the smaller of the read and write minimum block sizes.
            let range = self.bs[DDIR_READ]
                .min()
                .min(self.bs[DDIR_WRITE].min())
                .max(1);
            let ranges = self.span(file).len.div_ceil(range).max(1);
            self.skewed[file] = crate::distribution::Skewed::new(&self.distribution, ranges, rng);
        }
        self.skewed[file].clone()
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
    /// switched by a rate limit). When the job's passes are over (see
    /// [`IoGenerator::exhausted`]) the unit returned is not to be issued.
    #[inline]
    pub fn next_of_kind(&mut self, kind: IoKind, rng: &mut Rng) -> IoUnit {
        let ddir = kind.ddir().expect("data I/O");
        let blocks = self.uniform_blocks[ddir];
        if blocks > 0 {
            // uniform_blocks() holds nothing scripted.
            return self.next_uniform(kind, ddir, blocks, rng);
        }
        self.next_placed(kind, ddir, rng)
    }

    /// [`IoGenerator::next_of_kind`] by the general rules.
    fn next_placed(&mut self, kind: IoKind, ddir: usize, rng: &mut Rng) -> IoUnit {
        assert!(!self.next_is_scripted(), "the next unit is scripted");
        let mut file = self.next_file(rng);
        let mut tries = 0;
        let (offset, len) = loop {
            self.enter_zone(file, ddir);
            if let Some(placed) = self.place(file, ddir, rng) {
                break placed;
            }
            tries += 1;
            match self.pass_over(file) {
                Some(next) if tries <= 2 * self.regions.len() + 2 => file = next,
                _ => {
                    self.exhausted = true;
                    return IoUnit {
                        kind,
                        file,
                        offset: self.regions[file].start,
                        len: self.bs[ddir].min(),
                    };
                }
            }
        };
        let len = if self.map_draw {
            self.mark_map(file, offset, len)
        } else {
            len
        };
        self.seq_pos_mut(file)[ddir] = offset + len;
        self.run_offset = Some(offset);
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

    /// `file`'s pass is over: the next file whose pass is not, or when all are over a new pass
    /// over every file if the job has one left (`loops`, `io_size`, `time_based`), else
    /// `None`.
    fn pass_over(&mut self, file: usize) -> Option<usize> {
        self.file_done[file] = true;
        if self.file_done.iter().any(|done| !done) {
            self.current_file = self.next_open_file(file);
            self.ios_on_current_file = 1;
            return Some(self.current_file);
        }
        match self.passes_left.as_mut() {
            Some(0) => return None,
            Some(left) => *left -= 1,
            None => {}
        }
        self.file_done.fill(false);
        for (pos, region) in self.seq_pos.iter_mut().zip(&self.regions) {
            *pos = [region.start; 3];
        }
        self.seq_pos0 = [self.region0_start; 3];
        self.zone_start.fill(0);
        self.zone_bytes = 0;
        self.current_file = 0;
        self.ios_on_current_file = 1;
        Some(0)
    }

    /// Where the I/O goes and how large it is (fio's `get_next_block()` then
    /// `get_next_buflen()`): a random mode with `:N` draws a random offset every Nth I/O
    /// (fio's `ddir_seq_nr` counts down from N, so the first N - 1 go on sequentially from the
    /// start) and in between goes on sequentially, or repeats the last offset with
    /// `rw_sequencer=identical`; `percentage_random` makes a drawn I/O sequential by chance.
    /// `None` when the file's pass is over.
    fn place(&mut self, file: usize, ddir: usize, rng: &mut Rng) -> Option<(u64, u64)> {
        self.map_draw = false;
        let offset = if !self.rw.is_random() {
            self.sequential(file, ddir)?
        } else {
            self.run_countdown -= 1;
            if self.run_countdown == 0 {
                self.run_countdown = self.rw_suffix.clamp(1, i64::from(u32::MAX)) as u32;
                let random = self.percentage_random[ddir] >= 100
                    || (rng.range_inclusive(1, 100) as u32) <= self.percentage_random[ddir];
                if random {
                    self.map_draw = true;
                    self.random_offset(file, ddir, rng)?
                } else {
                    self.sequential(file, ddir)?
                }
            } else {
                match (self.sequencer, self.run_offset) {
                    (RwSequencer::Identical, Some(offset)) => offset,
                    (RwSequencer::Identical, None) => self.regions[file].start,
                    (RwSequencer::Sequential, _) => self.sequential(file, ddir)?,
                }
            }
        };
        let len = self.block_size(ddir, file, offset, rng)?;
        Some((offset, len))
    }

    /// Whether the job's passes are over: its last I/O found no place, and the job ends.
    #[inline]
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// The size of each of the clone's files (fio's `real_file_size`): where sequential gaps
    /// wrap and strided zones turn back. By default each region's end.
    pub fn set_file_bytes(&mut self, bytes: Vec<u64>) {
        assert_eq!(bytes.len(), self.regions.len(), "one size per file");
        self.file_bytes = bytes
            .into_iter()
            .zip(&self.regions)
            .map(|(size, region)| size.max(region.start + region.len))
            .collect();
    }
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

    /// `rw=read:-8k` with 4 KiB blocks: as fio 3.33's iolog shows, the first I/O is at the
    /// region's start, the next at its end less the gap, then back 4 KiB at a time.
    #[test]
    fn negative_suffix_walks_backwards() {
        let mut spec = job(RwMode::Read);
        spec.rw_suffix = -8192;
        let mut generator = IoGenerator::new(&spec, region(16 * 4096));
        let mut rng = Rng::new(1);
        let offsets: Vec<u64> = (0..4).map(|_| generator.next(&mut rng).offset).collect();
        assert_eq!(offsets, [0, 14 * 4096, 13 * 4096, 12 * 4096]);
    }

    /// fio starts a backwards job whose region starts past 0 at the region's size less the
    /// gap (fio 3.33, `offset=1m size=128k rw=read:-8k`: first I/O at 1 MiB + 120 KiB).
    #[test]
    fn a_backwards_job_at_an_offset_starts_near_its_end() {
        let mut spec = job(RwMode::Read);
        spec.rw_suffix = -8192;
        let regions = vec![FileRegion {
            start: 1 << 20,
            len: 128 << 10,
        }];
        let mut generator = IoGenerator::new(&spec, regions);
        generator.set_file_bytes(vec![16 << 20]);
        let mut rng = Rng::new(1);
        let first = generator.next(&mut rng).offset;
        assert_eq!(first, (1 << 20) + (120 << 10));
    }

    /// `rw=readwrite`: reads and writes each keep their own position from the region's
    /// start, as fio's per-direction `last_pos` (the issue's `offset=512m` case, scaled).
    #[test]
    fn mixed_directions_keep_their_own_positions() {
        let mut spec = job(RwMode::ReadWrite);
        spec.bs = [
            BlockSizes::Fixed(32 << 10),
            BlockSizes::Fixed(32 << 10),
            BlockSizes::Fixed(4096),
        ];
        let regions = vec![FileRegion {
            start: 8 << 20,
            len: 4 << 20,
        }];
        let mut generator = IoGenerator::new(&spec, regions);
        let mut rng = Rng::new(3);
        let mut next = [8u64 << 20; 2];
        for _ in 0..64 {
            let unit = generator.next(&mut rng);
            let ddir = unit.kind.ddir().unwrap();
            assert_eq!(unit.offset, next[ddir], "{unit:?}");
            next[ddir] += 32 << 10;
        }
        assert!(next.iter().all(|&n| n > 8 << 20), "both directions ran");
    }

    /// A gap that leads past the region ends the job's only pass (fio 3.33, `rw=read:8k
    /// bs=4k size=256k`: 22 I/Os, 90112 bytes).
    #[test]
    fn a_gap_past_the_region_ends_the_pass() {
        let mut spec = job(RwMode::Read);
        spec.rw_suffix = 8192;
        let mut generator = IoGenerator::new(&spec, region(256 << 10));
        generator.set_file_bytes(vec![16 << 20]);
        let mut rng = Rng::new(1);
        let mut ios = 0;
        while !generator.exhausted() {
            let unit = generator.next(&mut rng);
            if !generator.exhausted() {
                ios += 1;
                assert!(unit.offset + unit.len <= 256 << 10);
            }
        }
        assert_eq!(ios, 22);
    }

    /// Strided zones go on past the region, to the file's end, and wrap until the size is
    /// done (fio 3.33, `zonesize=64m zoneskip=192m size=1g` on 1 GiB: 16 zones of 64 MiB;
    /// here scaled to 1 MiB zones on 16 MiB).
    #[test]
    fn strided_zones_wrap_to_the_start() {
        let mut spec = job(RwMode::Read);
        spec.bs = [
            BlockSizes::Fixed(64 << 10),
            BlockSizes::Fixed(64 << 10),
            BlockSizes::Fixed(4096),
        ];
        spec.zones = Some(StridedZones {
            size: 1 << 20,
            range: 1 << 20,
            skip: 3 << 20,
        });
        let mut generator = IoGenerator::new(&spec, region(16 << 20));
        let mut rng = Rng::new(1);
        let zones: Vec<u64> = (0..256)
            .map(|_| generator.next(&mut rng).offset)
            .step_by(16)
            .map(|offset| offset >> 20)
            .collect();
        assert_eq!(zones, [0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12]);
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

    /// The short way for uniform random offsets draws, maps and leaves behind exactly what the
    /// general rules do: over several passes of the random map (a full map starts over, a used
    /// block gives way to the next free one), with and without a map, for reads and writes,
    /// in a region that does not start at 0 and is not a whole number of blocks.
    #[test]
    fn uniform_short_way_matches_the_general_rules() {
        let mut specs = Vec::new();
        for rw in [RwMode::RandRead, RwMode::RandWrite, RwMode::RandRw] {
            for norandommap in [false, true] {
                let mut spec = job(rw);
                spec.norandommap = norandommap;
                specs.push(spec);
            }
        }
        let mut large = job(RwMode::RandRw);
        large.bs = [0, 1, 2].map(|_| BlockSizes::Fixed(16384));
        specs.push(large);
        for spec in &specs {
            let regions = vec![FileRegion {
                start: 3 * 4096,
                len: 37 * 4096 + 100,
            }];
            let mut short = IoGenerator::new(spec, regions.clone());
            assert!(short.uniform_blocks[DDIR_READ] > 0, "{:?}", spec.rw);
            let mut general = IoGenerator::new(spec, regions);
            general.uniform_blocks = [0; 3];
            let (mut a, mut b) = (Rng::new(5), Rng::new(5));
            for _ in 0..400 {
                assert_eq!(short.next(&mut a), general.next(&mut b), "{:?}", spec.rw);
            }
            assert_eq!(short.seq_pos, general.seq_pos);
            assert_eq!(short.seq_pos0, general.seq_pos0);
            assert_eq!(short.run_offset, general.run_offset);
            assert_eq!(a.next_u64(), b.next_u64(), "the same draws");
        }
    }

    /// What the short way must not take: several files, `:N`, other distributions.
    #[test]
    fn uniform_short_way_only_where_it_holds() {
        let two_files = vec![
            FileRegion {
                start: 0,
                len: 1 << 20,
            },
            FileRegion {
                start: 1 << 20,
                len: 1 << 20,
            },
        ];
        let spec = job(RwMode::RandRead);
        assert_eq!(IoGenerator::new(&spec, two_files).uniform_blocks, [0; 3]);
        let mut suffix = job(RwMode::RandRead);
        suffix.rw_suffix = 4;
        assert_eq!(
            IoGenerator::new(&suffix, region(1 << 20)).uniform_blocks,
            [0; 3]
        );
        let mut zipf = job(RwMode::RandRead);
        zipf.random_distribution = RandomDistribution::Zipf { theta: 1.2 };
        assert_eq!(
            IoGenerator::new(&zipf, region(1 << 20)).uniform_blocks,
            [0; 3]
        );
        assert_eq!(
            IoGenerator::new(&job(RwMode::Read), region(1 << 20)).uniform_blocks,
            [0; 3]
        );
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
        }
    }
}
