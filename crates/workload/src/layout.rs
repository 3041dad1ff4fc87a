//! Where each job clone's files live on the target (a simulated device, a real file or a
//! block device), shared by both drivers so that one job file means the same bytes in each.
//!
//! Files are named as fio names them (`filename=` entries are shared by the clones that name
//! them; otherwise `jobname.clone.filenum`). Each distinct file is one contiguous extent of the
//! target, allocated in order of first mention from 1 MiB on, 1 MiB aligned. A
//! `filename=/dev/...` entry stands for the whole target from byte 0.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::fmt;

use iosched_core::SECTOR_SIZE;

use crate::generator::FileRegion;
use crate::job::{JobSpec, Origin, SizeOrPercent};
use crate::rng::Rng;

/// A job that cannot be laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError {
    pub job: String,
    /// Where the job's section starts in its job file.
    pub origin: Origin,
    pub message: String,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.origin.path.is_empty() {
            write!(f, "{}:{}: ", self.origin.path, self.origin.line)?;
        }
        write!(f, "job '{}': {}", self.job, self.message)
    }
}

impl std::error::Error for LayoutError {}

/// 1 MiB: extent alignment and the untouched head of the target.
const ALIGN_BYTES: u64 = 1 << 20;

/// One file of the jobs, as an extent of the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileExtent {
    pub name: String,
    /// First byte on the target.
    pub start: u64,
    pub bytes: u64,
}

impl FileExtent {
    /// Where the file starts, in 512-byte sectors.
    pub fn start_sector(&self) -> u64 {
        self.start / SECTOR_SIZE
    }
}

/// One job clone's files and its byte range in each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClonePlan {
    pub job: usize,
    pub clone: u32,
    pub files: Vec<usize>,
    pub regions: Vec<FileRegion>,
}

/// Every file and every clone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub files: Vec<FileExtent>,
    pub clones: Vec<ClonePlan>,
    /// One past the last byte any file uses.
    pub end_bytes: u64,
}

fn is_device_path(name: &str) -> bool {
    name.starts_with("/dev/")
}

fn file_names(spec: &JobSpec, clone: u32) -> Vec<String> {
    if !spec.filenames.is_empty() {
        return spec.filenames.clone();
    }
    let directory = if spec.directories.is_empty() {
        None
    } else {
        Some(&spec.directories[clone as usize % spec.directories.len()])
    };
    (0..spec.nrfiles.max(1))
        .map(|file| {
            let base = format!("{}.{}.{}", spec.name, clone, file);
            match directory {
                Some(dir) => format!("{}/{}", dir.trim_end_matches('/'), base),
                None => base,
            }
        })
        .collect()
}

/// The smallest block size of the job (fio's `td_min_bs()`).
fn min_bs(spec: &JobSpec) -> u64 {
    spec.bs
        .iter()
        .map(|bs| bs.min())
        .min()
        .unwrap_or(4096)
        .max(1)
}

/// fio's `get_start_offset()`: `offset` plus the clone's `offset_increment`s; when either
/// is a percentage of the file (`file_bytes`) the sum is aligned up to `offset_align`, or
/// the smallest block size (fio 3.33 on `offset=10%` of a 1 GiB device: 107374592, not
/// 107374182, so O_DIRECT I/O stays aligned).
fn start_offset(spec: &JobSpec, clone: u32, file_bytes: u64) -> u64 {
    let share = |pct: f64| (file_bytes as f64 * pct / 100.0) as u64;
    let (increment, mut align) = match spec.offset_increment_pct {
        Some(pct) => (share(pct), true),
        None => (spec.offset_increment, false),
    };
    let base = match spec.offset {
        SizeOrPercent::Bytes(offset) => offset,
        SizeOrPercent::Percent(pct) => {
            align = true;
            share(pct)
        }
    };
    let offset = base + increment * u64::from(clone);
    if !align {
        return offset;
    }
    let unit = spec.offset_align.unwrap_or_else(|| min_bs(spec)).max(1);
    offset.div_ceil(unit) * unit
}

/// Lays out every clone on a target of `capacity` bytes; `None` means a regular file that
/// will be grown to fit.
pub fn lay_out(jobs: &[JobSpec], capacity: Option<u64>, seed: u64) -> Result<Layout, LayoutError> {
    lay_out_on(jobs, capacity, seed, &|_| false)
}

/// [`lay_out`], where `is_target(name)` says that a job's `filename=` names the target file
/// itself (the engine's `--device` path): like a `/dev/` name it is the whole target from
/// byte 0, whose size (`capacity`) percentages take a share of, as fio sizes an existing file.
pub fn lay_out_on(
    jobs: &[JobSpec],
    capacity: Option<u64>,
    seed: u64,
    is_target: &dyn Fn(&str) -> bool,
) -> Result<Layout, LayoutError> {
    let whole = |name: &str| is_device_path(name) || is_target(name);
    let mut rng = Rng::for_stream(seed, u64::MAX);
    let mut files = FileTable::default();
    let mut clones = Vec::new();
    for (job_index, spec) in jobs.iter().enumerate() {
        let error = |message: String| LayoutError {
            job: spec.name.clone(),
            origin: spec.origin.clone(),
            message,
        };
        for clone in 0..spec.numjobs.max(1) {
            let names = file_names(spec, clone);
            let nfiles = names.len() as u64;
            let mut plan = ClonePlan {
                job: job_index,
                clone,
                files: Vec::with_capacity(names.len()),
                regions: Vec::with_capacity(names.len()),
            };
            for name in names {
                let device = whole(&name);
                let file_bytes = match (spec.filesize, device) {
                    (Some((lo, hi)), _) => Some(rng.range_inclusive(lo, hi)),
                    (None, true) => Some(capacity.ok_or_else(|| {
                        error(format!("filename={name} needs a target of known size"))
                    })?),
                    (None, false) => None,
                };
                let region = clone_region(spec, clone, &name, nfiles, file_bytes).map_err(error)?;
                let extent = if device {
                    capacity.unwrap_or(0)
                } else {
                    file_bytes.unwrap_or(region.start + region.len)
                };
                let index = files.note(name, job_index, extent.max(region.start + region.len));
                plan.files.push(index);
                plan.regions.push(region);
            }
            clones.push(plan);
        }
    }
    let mut layout = Layout {
        clones,
        ..Layout::default()
    };
    place_files(&mut layout, files, jobs, capacity, &whole)?;
    Ok(layout)
}

/// The files named so far, in order of first mention, with the bytes each must hold.
#[derive(Default)]
struct FileTable {
    files: Vec<FileExtent>,
    needed: Vec<u64>,
    /// The job that named each file first: the one an error about the file points at.
    first_user: Vec<usize>,
    /// Each file's index by name: one lookup per clone's file, not a walk of every file laid
    /// out so far (4096 clones of their own file took 8 M comparisons).
    index_of: BTreeMap<String, usize>,
}

impl FileTable {
    /// Records that `job` uses `name` up to byte `end`; returns the file's index.
    /// One search of the index (issue 34: a look-up, then an insert searching again, cost
    /// ~1.2 K instructions per clone of a 4096-clone job).
    fn note(&mut self, name: String, job: usize, end: u64) -> usize {
        let index = match self.index_of.entry(name) {
            Entry::Occupied(known) => *known.get(),
            Entry::Vacant(new) => {
                let index = self.files.len();
                self.files.push(FileExtent {
                    name: new.key().clone(),
                    start: 0,
                    bytes: 0,
                });
                self.needed.push(0);
                self.first_user.push(job);
                new.insert(index);
                index
            }
        };
        self.needed[index] = self.needed[index].max(end);
        index
    }
}

/// The part of one file a clone works on, as fio sizes it: `size=` split over the clone's
/// `nfiles` files or a share of an existing file, from the clone's start offset.
fn clone_region(
    spec: &JobSpec,
    clone: u32,
    name: &str,
    nfiles: u64,
    file_bytes: Option<u64>,
) -> Result<FileRegion, String> {
    let region_bytes = match spec.size {
        Some(SizeOrPercent::Bytes(size)) => size / nfiles,
        // fio rounds a share down to the smallest block size.
        Some(SizeOrPercent::Percent(pct)) => match file_bytes {
            Some(bytes) => {
                let share = (bytes as f64 * pct / 100.0) as u64;
                share - share % min_bs(spec)
            }
            None => {
                return Err(format!(
                    "size={pct}% needs an existing file or device to take a share of"
                ))
            }
        },
        None => match file_bytes {
            Some(bytes) => bytes,
            None => {
                return Err(
                    "size= or filesize= is required (there is no file to size it \
                            from; filename=/dev/... takes the whole device or target)"
                        .to_string(),
                )
            }
        },
    };
    let offset = start_offset(spec, clone, file_bytes.unwrap_or(region_bytes));
    let region_len = match file_bytes {
        Some(bytes) if spec.size.is_none() => bytes.saturating_sub(offset),
        Some(bytes) => region_bytes.min(bytes.saturating_sub(offset)),
        None => region_bytes,
    };
    let min_block = spec.bs.iter().map(|bs| bs.max()).max().unwrap_or(4096);
    if region_len < min_block {
        return Err(format!(
            "file '{name}' leaves {region_len} bytes at offset {offset}, less than one block of {min_block}"
        ));
    }
    Ok(FileRegion {
        start: offset,
        len: region_len,
    })
}

/// Gives each regular file its extent, in order of first mention from 1 MiB on, 1 MiB
/// aligned; a whole-target name only has to fit the target.
fn place_files(
    layout: &mut Layout,
    table: FileTable,
    jobs: &[JobSpec],
    capacity: Option<u64>,
    whole: &dyn Fn(&str) -> bool,
) -> Result<(), LayoutError> {
    let mut next_free = ALIGN_BYTES;
    let FileTable {
        mut files,
        needed,
        first_user,
        ..
    } = table;
    for ((file, bytes), user) in files.iter_mut().zip(needed).zip(first_user) {
        file.bytes = bytes;
        let error = |message: String| LayoutError {
            job: jobs[user].name.clone(),
            origin: jobs[user].origin.clone(),
            message,
        };
        if whole(&file.name) {
            // A regular file as the target (no capacity) grows to what the name needs; only a
            // sized name gets here without one (a replayed capture's device).
            if let Some(capacity) = capacity.filter(|&capacity| bytes > capacity) {
                return Err(error(format!(
                    "{} needs {bytes} bytes, the target has {capacity}",
                    file.name
                )));
            }
            layout.end_bytes = layout.end_bytes.max(bytes);
            continue;
        }
        if let Some(capacity) = capacity {
            if next_free + bytes > capacity {
                let taken = next_free - ALIGN_BYTES;
                let earlier = if taken > 0 {
                    format!(", {taken} of them already taken by earlier files")
                } else {
                    String::new()
                };
                return Err(error(format!(
                    "file '{}' of {bytes} bytes does not fit on the target ({capacity} bytes \
                     from 1 MiB on{earlier})",
                    file.name
                )));
            }
        }
        file.start = next_free;
        layout.end_bytes = layout.end_bytes.max(next_free + bytes);
        next_free = (next_free + bytes).div_ceil(ALIGN_BYTES) * ALIGN_BYTES;
    }
    layout.files = files;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, size: u64) -> JobSpec {
        JobSpec::sized(name, size)
    }

    #[test]
    fn clones_get_their_own_extents_after_the_first_mib() {
        let mut spec = job("seq", 4 << 20);
        spec.numjobs = 2;
        let layout = lay_out(&[spec], None, 1).unwrap();
        assert_eq!(layout.files[0].start, 1 << 20);
        assert_eq!(layout.files[1].start, 5 << 20);
        assert_eq!(layout.end_bytes, 9 << 20);
    }

    #[test]
    fn a_device_name_without_a_known_size_is_an_error() {
        let mut spec = job("raw", 1 << 20);
        spec.filenames = vec!["/dev/sdx".into()];
        assert!(lay_out(&[spec.clone()], None, 1).is_err());
        let layout = lay_out(&[spec], Some(8 << 20), 1).unwrap();
        assert_eq!(layout.files[0].start, 0);
    }

    #[test]
    fn jobs_larger_than_the_device_are_refused() {
        let spec = job("big", 8 << 20);
        assert!(lay_out(&[spec], Some(8 << 20), 1).is_err());
    }

    /// An error found while laying files out names the job file and line of the job that
    /// named the file, and the space earlier files took.
    #[test]
    fn a_file_that_does_not_fit_is_blamed_on_its_jobs_line() {
        let first = job("first", 4 << 20);
        let mut second = job("second", 4 << 20);
        second.origin = Origin {
            path: "two.fio".into(),
            line: 7,
        };
        let message = lay_out(&[first, second], Some(8 << 20), 1)
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("two.fio:7: job 'second': file 'second.0.0' of 4194304 bytes"),
            "{message}"
        );
        assert!(
            message.contains("4194304 of them already taken"),
            "{message}"
        );
    }

    #[test]
    fn named_files_are_shared_and_size_is_split() {
        let mut a = job("a", 8 << 20);
        a.filenames = vec!["f1".into(), "f2".into()];
        let mut b = job("b", 2 << 20);
        b.filenames = vec!["f1".into()];
        let layout = lay_out(&[a, b], Some(1 << 30), 1).unwrap();
        assert_eq!(layout.files.len(), 2);
        assert_eq!(layout.clones[0].regions[0].len, 4 << 20);
        assert_eq!(layout.clones[1].files, [0]);
    }

    #[test]
    fn offset_increment_separates_clones_on_a_device() {
        let mut spec = job("raw", 1 << 20);
        spec.filenames = vec!["/dev/sdb".into()];
        spec.numjobs = 2;
        spec.offset_increment = 1 << 20;
        let layout = lay_out(&[spec], Some(1 << 30), 1).unwrap();
        assert_eq!(layout.files[0].start_sector(), 0);
        assert_eq!(layout.clones[1].regions[0].start, 1 << 20);
    }

    /// fio 3.33 aligns a percentage offset up to the smallest block size: `offset=10%` of a
    /// 1 GiB device starts at 107376640, not 107374182 (where O_DIRECT writes fail).
    #[test]
    fn a_percentage_offset_is_block_aligned() {
        let mut spec = job("pct", 1 << 20);
        spec.size = Some(SizeOrPercent::Percent(20.0));
        spec.offset = SizeOrPercent::Percent(10.0);
        spec.filenames = vec!["/dev/sdx".into()];
        let layout = lay_out(&[spec.clone()], Some(1 << 30), 1).unwrap();
        assert_eq!(layout.clones[0].regions[0].start, 107_376_640);
        // A share of the size is rounded down to the block size as well.
        assert_eq!(layout.clones[0].regions[0].len % 4096, 0);
        spec.offset_align = Some(1 << 20);
        let layout = lay_out(&[spec], Some(1 << 30), 1).unwrap();
        assert_eq!(layout.clones[0].regions[0].start, 103 << 20);
    }

    #[test]
    fn missing_size_is_an_error_naming_the_job() {
        let spec = JobSpec::new("nosize");
        let err = lay_out(&[spec], Some(1 << 30), 1).unwrap_err();
        assert!(err.to_string().starts_with("job 'nosize': size="), "{err}");
    }
}
