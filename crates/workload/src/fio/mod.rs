//! fio job files: parsing with fio's quirks into [`crate::JobSet`].
//!
//! The parser reproduces what fio 3.x does with a job file (formats.md §1), including the
//! behaviour that surprises people, and records the surprising cases in
//! [`JobSet::warnings`](crate::JobSet) as `path:line: ...`:
//!
//! * `k`/`m`/`g` are powers of 1024 but `KiB`/`MiB` powers of 1000 (under the default
//!   `kb_base=1024`); `runtime=2sec` is 2 µs; `bs=4k-16k` means 4k reads and 16k writes;
//! * `;` and `#` end a line anywhere; a blank after `=` breaks enumerated values
//!   (`rw = randread` is an error) and hides units of numbers (`bs= 4k` is 4 bytes);
//! * `[global...]` sections (six-character prefix) set defaults for the jobs after them;
//!   every job file after the first implicitly stonewalls its first job.
//!
//! Layers, one file each: [`lines`] (comments, sections, includes), [`expand`] (`${VAR}`,
//! `$ncpus`...), [`options`] (the option table), [`value`] and [`expr`] (value syntax),
//! `build` (sections to validated jobs). Errors are [`ParseError`]s printing as
//! `path:line: message`; the parser never panics on bad input.
//!
//! ```
//! use iosched_workload::fio::{parse_str, ParseContext};
//! use iosched_workload::{BlockSizes, RwMode};
//!
//! let text = "[global]\nbs=8k,32k ; reads 8k, writes and trims 32k\n[job1]\nrw=randrw\n";
//! let set = parse_str(text, "a.fio", &ParseContext::fixed(4096, 1024, 4)).unwrap();
//! assert_eq!(set.jobs[0].rw, RwMode::RandRw);
//! assert_eq!(set.jobs[0].bs[2], BlockSizes::Fixed(32768));
//! ```

mod build;
mod catalog;
mod error;
mod expand;
mod expr;
mod lines;
mod options;
mod value;

use std::collections::BTreeMap;
use std::path::Path;

pub use catalog::{foreign_engine_options, option_catalog, OptionDoc};
pub use error::{ParseError, ParseErrorKind};
pub use expand::env_references;
pub use lines::{MAX_FILE_BYTES, MAX_TOTAL_LINES};

use crate::job::JobSet;

/// What `${VAR}` and the reserved keywords expand to. Passed in, so parsing is a pure
/// function of the text and this context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseContext {
    /// Environment for `${VAR}`; unset names expand to nothing.
    pub env: BTreeMap<String, String>,
    /// `$pagesize`, bytes.
    pub pagesize: u64,
    /// `$mb_memory`: MiB of memory.
    pub mb_memory: u64,
    /// `$ncpus`: CPUs online.
    pub ncpus: u64,
    /// Most job clones (`numjobs` summed over the jobs) a run may have, from the memory
    /// available on the machine that runs it: a limit, never part of a result.
    pub clone_limit: u64,
    /// MiB of memory the limit was taken from, for the message.
    pub available_mib: u64,
}

/// Memory one job clone is expected to take in either driver: its statistics (latency
/// histograms per direction), random map, generator and log buffers. Measured: 1000 clones
/// of a 1 s random-read job peaked at 848 MB resident in the simulator.
pub const CLONE_BYTES_ESTIMATE: u64 = 1 << 20;

/// Clones a context allows when nobody measured the machine's memory.
pub const DEFAULT_CLONE_LIMIT: u64 = 4096;

/// 4 KiB: the page size fio reports on the machines we model.
const DEFAULT_PAGESIZE: u64 = 4096;

impl ParseContext {
    /// A context with an empty environment and the given figures (tests, reproducible runs).
    /// The clone limit is [`DEFAULT_CLONE_LIMIT`]; a driver on a real machine lowers it to
    /// what the machine's memory holds.
    pub fn fixed(pagesize: u64, mb_memory: u64, ncpus: u64) -> ParseContext {
        ParseContext {
            env: BTreeMap::new(),
            pagesize,
            mb_memory,
            ncpus,
            clone_limit: DEFAULT_CLONE_LIMIT,
            available_mib: DEFAULT_CLONE_LIMIT * (CLONE_BYTES_ESTIMATE >> 20),
        }
    }
}

impl Default for ParseContext {
    /// Empty environment, 4 KiB pages, 1 GiB of memory, one CPU.
    fn default() -> ParseContext {
        ParseContext::fixed(DEFAULT_PAGESIZE, 1024, 1)
    }
}

/// Every option name the parser knows (its table, aliases excluded), in table order: what
/// a test walks to prove each file a job file can name goes through the output gate.
pub fn option_names() -> Vec<&'static str> {
    options::OPTIONS.iter().map(|def| def.name).collect()
}

/// Parse one job file given as text; `path` names it in errors and anchors relative
/// `include`s (which are read from disk).
pub fn parse_str(text: &str, path: &str, ctx: &ParseContext) -> Result<JobSet, ParseError> {
    let mut lines = Vec::new();
    lines::read_lines(text, path, &mut lines)?;
    let mut builder = build::Builder::new(ctx);
    builder.add_file(lines, 0)?;
    builder.finish(path)
}

/// One job file's text and where it came from (the path as given, or a name such as
/// `<replay>` for generated text): what a run description carries instead of a path, so a
/// run can be repeated after its files changed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JobSource {
    /// Names the file in errors and anchors its relative `include`s.
    pub origin: String,
    pub text: String,
}

impl JobSource {
    /// Reads a job file, refusing files over [`MAX_FILE_BYTES`].
    pub fn read(path: &Path) -> Result<JobSource, ParseError> {
        let origin = path.display().to_string();
        let bytes = lines::read_capped(path)
            .map_err(|why| ParseError::new(&origin, 0, ParseErrorKind::Io(why)))?;
        Ok(JobSource {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            origin,
        })
    }
}

/// Parse job files as `fio a.fio b.fio` would: global sections carry over to later files,
/// and each file after the first stonewalls its first job.
pub fn parse_files<P: AsRef<Path>>(paths: &[P], ctx: &ParseContext) -> Result<JobSet, ParseError> {
    let sources = paths
        .iter()
        .map(|path| JobSource::read(path.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    parse_sources(&sources, ctx)
}

/// [`parse_files`] on texts already read.
pub fn parse_sources(sources: &[JobSource], ctx: &ParseContext) -> Result<JobSet, ParseError> {
    let mut builder = build::Builder::new(ctx);
    for (index, source) in sources.iter().enumerate() {
        let mut lines = Vec::new();
        lines::read_lines(&source.text, &source.origin, &mut lines)?;
        builder.add_file(lines, index)?;
    }
    let first = sources
        .first()
        .map(|source| source.origin.clone())
        .unwrap_or_default();
    builder.finish(&first)
}

#[cfg(test)]
mod tests {
    //! One test per quirk of formats.md §1.1–1.3, each failing if the quirk were not
    //! reproduced, then the error messages with their exact `path:line`.

    use super::*;
    use crate::job::{
        BlockSizes, FileService, IoEngine, JobSpec, RandomDistribution, RwMode, RwSequencer,
        SizeOrPercent, WriteData,
    };
    use iosched_core::{IoPrio, IoPrioClass};
    use proptest::prelude::*;
    use std::path::PathBuf;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    fn ctx() -> ParseContext {
        ParseContext::fixed(4096, 2048, 8)
    }

    fn parse(text: &str) -> JobSet {
        parse_str(text, "t.fio", &ctx()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The only job of a one-job file, with `body` as its options.
    fn job(body: &str) -> JobSpec {
        let set = parse(&format!("[job]\n{body}\n"));
        assert_eq!(set.jobs.len(), 1);
        set.jobs.into_iter().next().unwrap()
    }

    fn err(text: &str) -> String {
        parse_str(text, "t.fio", &ctx()).unwrap_err().to_string()
    }

    /// A fresh directory for file-based tests, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn join(&self, name: &str) -> PathBuf {
            self.0.join(name)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp_dir(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("iosched-fio-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    // §1.1 syntax.

    #[test]
    fn inline_comment_truncates_value() {
        let j = job("numjobs=4\t; 4 threads\nbs=8k # block size");
        assert_eq!(j.numjobs, 4);
        assert_eq!(j.bs[0], BlockSizes::Fixed(8192));
    }

    #[test]
    fn global_prefix_compares_six_characters() {
        let set = parse("[globalfoo]\niodepth=8\n[glob]\niodepth=2\n");
        // [globalfoo] is global; [glob] is a job that inherits from it, then overrides.
        assert_eq!(set.jobs.len(), 1);
        assert_eq!(set.jobs[0].name, "glob");
        assert_eq!(
            set.global_options,
            vec![("iodepth".to_string(), "8".to_string())]
        );
    }

    #[test]
    fn each_global_section_affects_only_later_jobs() {
        let set = parse("[global]\nbs=8k\n[a]\n[global]\nbs=16k\nrw=write\n[b]\n[c]\nrw=read\n");
        let bs: Vec<_> = set.jobs.iter().map(|j| j.bs[0].clone()).collect();
        assert_eq!(
            bs,
            vec![
                BlockSizes::Fixed(8192),
                BlockSizes::Fixed(16384),
                BlockSizes::Fixed(16384)
            ]
        );
        assert_eq!(set.jobs[0].rw, RwMode::Read);
        assert_eq!(set.jobs[1].rw, RwMode::Write);
        assert_eq!(set.jobs[2].rw, RwMode::Read);
    }

    #[test]
    fn name_option_overrides_section_name() {
        let set = parse("[a]\nname=reader\n[b]\n");
        assert_eq!(set.jobs[0].name, "reader");
        assert_eq!(set.jobs[1].name, "b");
    }

    #[test]
    fn set_options_may_be_bare_or_take_a_value() {
        let j =
            job("time_based\nruntime=5\nstonewall\ngroup_reporting\nnorandommap\nthread\nexitall");
        assert!(j.time_based && j.stonewall && j.group_reporting && j.norandommap);
        assert!(j.thread && j.exitall);
        let j = job("time_based=0\nthread=1");
        assert!(!j.time_based);
        assert!(j.thread);
    }

    #[test]
    fn blank_before_equals_is_stripped() {
        let j = job("rw =randread\niodepth   =16");
        assert_eq!(j.rw, RwMode::RandRead);
        assert_eq!(j.iodepth, 16);
    }

    #[test]
    fn blank_after_equals_is_tolerated_by_numbers() {
        assert_eq!(job("iodepth= 16").iodepth, 16);
        assert_eq!(job("runtime= 30").runtime_ns, Some(30 * S));
    }

    #[test]
    fn blank_after_equals_hides_the_unit_of_a_number() {
        let set = parse("[job]\nbs= 4k\n");
        assert_eq!(set.jobs[0].bs[0], BlockSizes::Fixed(4));
        assert_eq!(set.warnings.len(), 1);
        assert!(
            set.warnings[0].starts_with("t.fio:2: bs:"),
            "{:?}",
            set.warnings
        );
    }

    #[test]
    fn env_variables_expand_empty_when_unset() {
        let mut c = ctx();
        c.env.insert("FILENAME".into(), "/dev/sdc".into());
        c.env.insert("DEPTH".into(), "32".into());
        let set = parse_str(
            "[job]\nfilename=${FILENAME}\niodepth=${DEPTH}\ndirectory=/mnt${UNSET}/x\n",
            "t.fio",
            &c,
        )
        .unwrap();
        assert_eq!(set.jobs[0].filenames, vec!["/dev/sdc".to_string()]);
        assert_eq!(set.jobs[0].iodepth, 32);
        assert_eq!(set.jobs[0].directories, vec!["/mnt/x".to_string()]);
        assert_eq!(
            set.jobs[0].options[0],
            ("filename".to_string(), "/dev/sdc".to_string())
        );
    }

    #[test]
    fn reserved_keywords_expand_and_compute_like_bc() {
        let j = job("size=8*$mb_memory\nnumjobs=$ncpus\nbs=$pagesize");
        assert_eq!(j.size, Some(SizeOrPercent::Bytes(8 * 2048)));
        assert_eq!(j.numjobs, 8);
        assert_eq!(j.bs[0], BlockSizes::Fixed(4096));
    }

    #[test]
    fn parenthesised_arithmetic() {
        let j = job("size=(2*512k+1k)\niodepth=(2^4)\nthinktime=(100+50)\nruntime=(2s*3)");
        assert_eq!(j.size, Some(SizeOrPercent::Bytes(2 * 512 * 1024 + 1024)));
        assert_eq!(j.iodepth, 16);
        // Bare numbers in parentheses are microseconds.
        assert_eq!(j.thinktime_ns, 150_000);
        assert_eq!(j.runtime_ns, Some(6 * S));
    }

    #[test]
    fn include_splices_lines_relative_to_including_file() {
        let dir = temp_dir("include");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(
            dir.join("sub/inner.fio"),
            "iodepth=4\n; nested\ninclude deeper.fio\n",
        )
        .unwrap();
        std::fs::write(dir.join("sub/deeper.fio"), "bs=16k\n").unwrap();
        let main = dir.join("main.fio");
        std::fs::write(&main, "[job]\nrw=write\ninclude sub/inner.fio\nnumjobs=2\n").unwrap();
        let set = parse_files(&[&main], &ctx()).unwrap();
        let j = &set.jobs[0];
        assert_eq!(j.iodepth, 4);
        assert_eq!(j.bs[0], BlockSizes::Fixed(16384));
        assert_eq!(j.numjobs, 2);
        assert_eq!(j.rw, RwMode::Write);
    }

    #[test]
    fn include_may_not_contain_sections() {
        let dir = temp_dir("include-section");
        std::fs::write(dir.join("inc.fio"), "iodepth=4\n[other]\n").unwrap();
        let main = dir.join("main.fio");
        std::fs::write(&main, "[job]\ninclude inc.fio\n").unwrap();
        let e = parse_files(&[&main], &ctx()).unwrap_err();
        assert_eq!(e.path, dir.join("inc.fio").display().to_string());
        assert_eq!(e.line, 2);
    }

    #[test]
    fn include_cycle_is_an_error_not_a_hang() {
        let dir = temp_dir("include-cycle");
        std::fs::write(dir.join("self.fio"), "iodepth=2\ninclude self.fio\n").unwrap();
        let main = dir.join("main.fio");
        std::fs::write(&main, "[job]\ninclude self.fio\n").unwrap();
        let e = parse_files(&[&main], &ctx()).unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::IncludeTooDeep(_)), "{e}");
        assert_eq!(e.line, 2);
    }

    /// Clones are counted over the whole run: the job that takes it over the machine's
    /// limit is blamed at its numjobs= line, or at its section when numjobs is inherited.
    #[test]
    fn clones_over_the_memory_limit_are_refused_where_they_go_over() {
        let mut c = ctx();
        c.clone_limit = 10;
        c.available_mib = 10;
        let text = "[global]\nrw=read\nsize=1m\nnumjobs=4\n[a]\n[b]\n[c]\n";
        let e = parse_str(text, "t.fio", &c).unwrap_err().to_string();
        assert!(e.starts_with("t.fio:7: numjobs: 12 job clones"), "{e}");
        let text = "[a]\nrw=read\nsize=1m\nnumjobs=10\n[b]\nrw=read\nsize=1m\nnumjobs=1\n";
        let e = parse_str(text, "t.fio", &c).unwrap_err().to_string();
        assert!(e.starts_with("t.fio:8: numjobs: 11 job clones"), "{e}");
        assert!(e.contains("at most 10 clones"), "{e}");
        let text = "[a]\nrw=read\nsize=1m\nnumjobs=10\n";
        assert!(parse_str(text, "t.fio", &c).is_ok());
    }

    #[test]
    fn aliases_name_the_same_options() {
        let j = job(
            "readwrite=randwrite\nblocksize=8k\ntimeout=3\nnr_files=4\nfileoffset=1m\n\
             iodepth_batch=2\niodepth=8\nio_limit=1g\nwait_for_previous\nratemin=1m\nallrandrepeat=0\n\
             blocksize_range=1k-2k\niodepth_batch_complete=2\nloop=3",
        );
        assert_eq!(j.rw, RwMode::RandWrite);
        assert_eq!(j.runtime_ns, Some(3 * S));
        assert_eq!(j.nrfiles, 4);
        assert_eq!(j.offset, SizeOrPercent::Bytes(1 << 20));
        assert_eq!(j.iodepth_batch_submit, 2);
        assert_eq!(j.io_size, Some(1 << 30));
        assert!(j.stonewall);
        assert_eq!(j.rate_min, [Some(1 << 20); 3]);
        assert!(!j.randrepeat);
        assert_eq!(
            j.bs[0],
            BlockSizes::Range {
                min: 1024,
                max: 2048
            }
        );
        assert_eq!(j.iodepth_batch_complete_min, 2);
        assert_eq!(j.loops, 3);
    }

    /// `verify_pattern` alone selects `verify=pattern`, as fio's option callback does; with a
    /// method given, that method stays.
    #[test]
    fn verify_pattern_implies_the_pattern_method() {
        let j = job("rw=write\nverify_pattern=0xff");
        assert_eq!(j.verify.as_deref(), Some("pattern"));
        let ff = crate::pattern::Pattern::parse("0xff").unwrap();
        assert_eq!(j.verify_pattern, Some(ff.clone()));
        assert_eq!(job("buffer_pattern=0xff").buffer_pattern, Some(ff));
        let j = job("rw=write\nverify=md5\nverify_pattern=0xff");
        assert_eq!(j.verify.as_deref(), Some("md5"));
        assert!(err("[job]\nverify_pattern=\n").contains("t.fio:2"));
        let message = err("[job]\nbuffer_pattern=12\n");
        assert!(
            message.contains("t.fio:2") && message.contains("hex"),
            "{message}"
        );
    }

    /// `verify_only` is a flag that needs `verify=` and a sized workload.
    #[test]
    fn verify_only_needs_verify_and_no_time_based() {
        assert!(job("rw=write\nverify=md5\nverify_only").verify_only);
        assert!(job("rw=write\nverify=md5\nverify_fatal=1").verify_fatal);
        assert!(!job("rw=write\nverify=md5").verify_fatal);
        assert!(!job("rw=write\nverify=md5").verify_only);
        let message = err("[job]\nrw=write\nverify_only\n");
        assert!(message.contains("needs verify="), "{message}");
        let message = err("[job]\nrw=write\nverify=crc32c\nverify_only=1\ntime_based\nruntime=1\n");
        assert!(message.contains("time_based"), "{message}");
    }

    /// `cpus_allowed` lists and ranges, and `cpumask` bits, as fio reads them; bad ones
    /// name the file and line.
    #[test]
    fn cpus_allowed_and_cpumask() {
        assert_eq!(
            job("cpus_allowed=0,5,8-11").cpus_allowed,
            Some(vec![0, 5, 8, 9, 10, 11])
        );
        assert_eq!(
            job("cpus_allowed=3,1-2,3").cpus_allowed,
            Some(vec![1, 2, 3])
        );
        assert_eq!(job("cpumask=0x5").cpus_allowed, Some(vec![0, 2]));
        assert_eq!(job("cpumask=6").cpus_allowed, Some(vec![1, 2]));
        assert_eq!(job("bs=4k").cpus_allowed, None);
        for (bad, says) in [
            ("cpus_allowed=3-1", "runs backwards"),
            ("cpus_allowed=a", "not a CPU number"),
            ("cpus_allowed=1,,2", "not a CPU number"),
            ("cpumask=0", "non-zero"),
        ] {
            let message = err(&format!("[job]\n{bad}\n"));
            assert!(
                message.contains("t.fio:2") && message.contains(says),
                "{message}"
            );
        }
    }

    #[test]
    fn meaningless_options_are_listed_once_as_ignored() {
        let set = parse(
            "[global]\nexec_prerun=echo hi\n[a]\nunlink=1\ngtod_reduce=1\n\
             [b]\nunlink=1\nnuma_cpu_nodes=0\n",
        );
        assert_eq!(
            set.ignored_options,
            vec!["exec_prerun", "unlink", "gtod_reduce", "numa_cpu_nodes"]
        );
    }

    // §1.2 value syntax.

    #[test]
    fn k_is_1024_but_kib_is_1000_under_default_kb_base() {
        assert_eq!(job("size=10k").size, Some(SizeOrPercent::Bytes(10240)));
        assert_eq!(job("size=10KiB").size, Some(SizeOrPercent::Bytes(10000)));
        assert_eq!(job("size=1MiB").size, Some(SizeOrPercent::Bytes(1_000_000)));
        assert_eq!(job("size=1mb").size, Some(SizeOrPercent::Bytes(1 << 20)));
    }

    #[test]
    fn kb_base_1000_flips_units_whatever_the_option_order() {
        let j = job("size=10k\nbs=1KiB\nkb_base=1000");
        assert_eq!(j.size, Some(SizeOrPercent::Bytes(10000)));
        assert_eq!(j.bs[0], BlockSizes::Fixed(1024));
        assert_eq!(j.kb_base, 1000);
    }

    #[test]
    fn zero_size_means_unset() {
        let set = parse(
            "[global]\nsize=1g\nio_size=2g\nnumber_ios=5\n[a]\nsize=0\nio_size=0\nnumber_ios=0\n",
        );
        let j = &set.jobs[0];
        assert_eq!((j.size, j.io_size, j.number_ios), (None, None, None));
        assert!(
            err("[job]\nfilesize=0\n").starts_with("t.fio:2: bad value '0' for option 'filesize'")
        );
    }

    #[test]
    fn hex_prefix_reads_base_16() {
        assert_eq!(
            job("size=0x100000").size,
            Some(SizeOrPercent::Bytes(1 << 20))
        );
        assert_eq!(job("randseed=0x89").randseed, 0x89);
    }

    #[test]
    fn percentages_for_size_offset_and_offset_increment() {
        let j = job("size=20%\noffset=10%\noffset_increment=5%");
        assert_eq!(j.size, Some(SizeOrPercent::Percent(20.0)));
        assert_eq!(j.offset, SizeOrPercent::Percent(10.0));
        assert_eq!(j.offset_increment_pct, Some(5.0));
        assert!(err("[job]\nbs=20%\n").starts_with("t.fio:2: bad value '20%' for option 'bs'"));
    }

    /// fio knows the null engine, but nothing it does reaches a device: refused by line,
    /// rather than simulated as real I/O.
    #[test]
    fn the_null_engine_is_refused_at_its_line() {
        let message = err("[job]\nrw=read\nioengine=null\n");
        assert!(
            message.starts_with("t.fio:3: bad value 'null' for option 'ioengine'"),
            "{message}"
        );
        assert!(message.contains("nothing to schedule"), "{message}");
    }

    #[test]
    fn time_default_unit_depends_on_option() {
        let j = job("runtime=10\nramp_time=2\nstartdelay=3\nthinktime=10\nthinktime_spin=4");
        assert_eq!(j.runtime_ns, Some(10 * S));
        assert_eq!(j.ramp_time_ns, 2 * S);
        assert_eq!(j.startdelay_ns, (3 * S, 3 * S));
        assert_eq!(j.thinktime_ns, 10_000);
        assert_eq!(j.thinktime_spin_ns, 4_000);
    }

    #[test]
    fn time_suffixes_with_m_meaning_minutes() {
        assert_eq!(job("runtime=2m").runtime_ns, Some(120 * S));
        assert_eq!(job("runtime=1h").runtime_ns, Some(3600 * S));
        assert_eq!(job("runtime=1d").runtime_ns, Some(86400 * S));
        assert_eq!(job("runtime=1500ms").runtime_ns, Some(1500 * MS));
        assert_eq!(job("runtime=7S").runtime_ns, Some(7 * S));
        assert_eq!(job("thinktime=2ms").thinktime_ns, 2 * MS);
        assert_eq!(job("thinktime=5usec").thinktime_ns, 5_000);
        assert_eq!(job("thinktime=3msec").thinktime_ns, 3 * MS);
    }

    #[test]
    fn runtime_2sec_is_2_microseconds_with_a_warning() {
        let set = parse("[job]\ntime_based\nruntime=2sec\n");
        assert_eq!(set.jobs[0].runtime_ns, Some(2_000));
        assert_eq!(set.warnings.len(), 1);
        assert!(
            set.warnings[0].starts_with("t.fio:3: runtime:"),
            "{:?}",
            set.warnings
        );
        assert!(set.warnings[0].contains("2 µs"), "{:?}", set.warnings);
    }

    #[test]
    fn trailing_list_value_propagates_unless_comma_ends_the_list() {
        let j = job("bs=8k,32k");
        assert_eq!(
            j.bs,
            [
                BlockSizes::Fixed(8192),
                BlockSizes::Fixed(32768),
                BlockSizes::Fixed(32768)
            ]
        );
        let j = job("bs=8k,32k,");
        assert_eq!(
            j.bs,
            [
                BlockSizes::Fixed(8192),
                BlockSizes::Fixed(32768),
                BlockSizes::Fixed(4096)
            ]
        );
        let j = job("bs=,8k");
        assert_eq!(
            j.bs,
            [
                BlockSizes::Fixed(4096),
                BlockSizes::Fixed(8192),
                BlockSizes::Fixed(8192)
            ]
        );
        let j = job("rate=1m,2m\nrate_iops=100\npercentage_random=10,20");
        assert_eq!(j.rate, [Some(1 << 20), Some(2 << 20), Some(2 << 20)]);
        assert_eq!(j.rate_iops, [Some(100); 3]);
        assert_eq!(j.percentage_random, [10, 20, 20]);
    }

    #[test]
    fn dash_in_bs_is_a_list_separator_not_a_range() {
        let set = parse("[job]\nrw=randrw\nbs=4k-16k\n");
        let j = &set.jobs[0];
        assert_eq!(
            j.bs,
            [
                BlockSizes::Fixed(4096),
                BlockSizes::Fixed(16384),
                BlockSizes::Fixed(16384)
            ]
        );
        assert_eq!(set.warnings.len(), 1);
        assert!(
            set.warnings[0].starts_with("t.fio:3: bs:"),
            "{:?}",
            set.warnings
        );
        let j = job("bs=4k:16k");
        assert_eq!(j.bs[1], BlockSizes::Fixed(16384));
    }

    #[test]
    fn bsrange_per_direction_and_swapped() {
        let j = job("bsrange=1k-4k,8k:2k");
        assert_eq!(
            j.bs[0],
            BlockSizes::Range {
                min: 1024,
                max: 4096
            }
        );
        assert_eq!(
            j.bs[1],
            BlockSizes::Range {
                min: 2048,
                max: 8192
            }
        );
        assert_eq!(
            j.bs[2],
            BlockSizes::Range {
                min: 2048,
                max: 8192
            }
        );
    }

    #[test]
    fn filesize_and_startdelay_ranges_swap_when_low_exceeds_high() {
        let j = job("filesize=8m-1m\nstartdelay=20-10");
        assert_eq!(j.filesize, Some((1 << 20, 8 << 20)));
        assert_eq!(j.startdelay_ns, (10 * S, 20 * S));
        assert_eq!(job("filesize=4k").filesize, Some((4096, 4096)));
    }

    #[test]
    fn bssplit_order_irrelevant_and_empty_percentages_share() {
        let a = job("bssplit=4k/50:1k/:32k/");
        let b = job("bssplit=32k/:1k/:4k/50");
        let expected = BlockSizes::Split(vec![(1024, 25), (4096, 50), (32768, 25)]);
        assert_eq!(a.bs[0], expected);
        assert_eq!(a.bs, b.bs);
    }

    #[test]
    fn bssplit_per_direction_overrides_bs() {
        let j = job("bs=64k\nbssplit=4k/100,8k/50:16k/50");
        assert_eq!(j.bs[0], BlockSizes::Split(vec![(4096, 100)]));
        let writes = BlockSizes::Split(vec![(8192, 50), (16384, 50)]);
        assert_eq!(j.bs[1], writes);
        assert_eq!(j.bs[2], writes);
    }

    #[test]
    fn all_rw_modes_parse() {
        let modes = [
            ("read", RwMode::Read),
            ("write", RwMode::Write),
            ("trim", RwMode::Trim),
            ("randread", RwMode::RandRead),
            ("randwrite", RwMode::RandWrite),
            ("randtrim", RwMode::RandTrim),
            ("rw", RwMode::ReadWrite),
            ("readwrite", RwMode::ReadWrite),
            ("randrw", RwMode::RandRw),
            ("trimwrite", RwMode::TrimWrite),
            ("randtrimwrite", RwMode::RandTrimWrite),
        ];
        for (text, mode) in modes {
            assert_eq!(job(&format!("rw={text}")).rw, mode, "{text}");
        }
        assert_eq!(job("").rw, RwMode::Read);
    }

    #[test]
    fn later_of_rwmixread_and_rwmixwrite_wins() {
        assert_eq!(job("rw=randrw\nrwmixread=70").rwmixread, 70);
        assert_eq!(job("rwmixread=70\nrwmixwrite=20").rwmixread, 80);
        assert_eq!(job("rwmixwrite=20\nrwmixread=70").rwmixread, 70);
    }

    #[test]
    fn rw_postfix_counts_for_random_and_gaps_for_sequential() {
        assert_eq!(job("rw=randread:4").rw_suffix, 4);
        assert_eq!(job("rw=write:4k").rw_suffix, 4096);
        assert_eq!(job("rw=read:-8k").rw_suffix, -8192);
        let j = job("rw=randread:8\nrw_sequencer=identical");
        assert_eq!(j.rw_sequencer, RwSequencer::Identical);
        // A new rw= without postfix resets it, as fio's str_rw_cb() does.
        let set = parse("[global]\nrw=randread:4\n[a]\nrw=randwrite\n");
        assert_eq!(set.jobs[0].rw_suffix, 0);
    }

    // §1.3 lifecycle and grouping.

    #[test]
    fn stonewall_and_new_group_open_reporting_groups() {
        let set = parse("[a]\nstonewall\n[b]\n[c]\nstonewall\n[d]\nnew_group\n[e]\n");
        let groups: Vec<u32> = set.jobs.iter().map(|j| j.group_id).collect();
        // The first job's stonewall has nothing to wait for and opens no group.
        assert_eq!(groups, vec![0, 0, 1, 2, 2]);
        assert!(set.jobs[2].stonewall);
        assert!(!set.jobs[3].stonewall);
    }

    #[test]
    fn later_job_files_get_an_implicit_stonewall() {
        let dir = temp_dir("multi");
        let a = dir.join("a.fio");
        let b = dir.join("b.fio");
        std::fs::write(&a, "[global]\nioengine=libaio\n[a1]\n[a2]\n").unwrap();
        std::fs::write(&b, "[global]\niodepth=4\n[b1]\n[b2]\n").unwrap();
        let set = parse_files(&[&a, &b], &ctx()).unwrap();
        let walls: Vec<bool> = set.jobs.iter().map(|j| j.stonewall).collect();
        assert_eq!(walls, vec![false, false, true, false]);
        let groups: Vec<u32> = set.jobs.iter().map(|j| j.group_id).collect();
        assert_eq!(groups, vec![0, 0, 1, 1]);
        // Globals of the first file still apply in the second (fio keeps one default job).
        assert_eq!(set.jobs[3].ioengine, IoEngine::Libaio);
        assert_eq!(set.jobs[3].iodepth, 4);
        assert_eq!(set.jobs[2].origin.path, b.display().to_string());
    }

    #[test]
    fn wait_for_names_an_earlier_job() {
        let set = parse("[a]\n[b]\nwait_for=a\n");
        assert_eq!(set.jobs[1].wait_for.as_deref(), Some("a"));
        assert_eq!(
            err("[a]\nwait_for=b\n[b]\n"),
            "t.fio:1: option 'wait_for': no earlier job is named 'b'"
        );
    }

    #[test]
    fn filename_colons_split_and_escape() {
        let j = job(r"filename=/dev/sda:/mnt/a\:b:/dev/sdc");
        assert_eq!(j.filenames, vec!["/dev/sda", "/mnt/a:b", "/dev/sdc"]);
        assert_eq!(job("directory=/d1:/d2").directories, vec!["/d1", "/d2"]);
    }

    // Everything else of §1.4 that has a rule.

    #[test]
    fn prio_and_prioclass_follow_fio_rules() {
        assert_eq!(
            job("prio=6").ioprio,
            IoPrio {
                class: IoPrioClass::BestEffort,
                level: 6
            }
        );
        assert_eq!(
            job("prioclass=3").ioprio,
            IoPrio {
                class: IoPrioClass::Idle,
                level: 0
            }
        );
        assert_eq!(
            job("prio=2\nprioclass=1").ioprio,
            IoPrio {
                class: IoPrioClass::RealTime,
                level: 2
            }
        );
        assert_eq!(job("nice=5").ioprio, IoPrio::none());
        assert_eq!(job("nice=-5").nice, -5);
    }

    #[test]
    fn depth_defaults_follow_iodepth() {
        let j = job(
            "ioengine=libaio\niodepth=32\niodepth_batch_submit=0\niodepth_batch_complete_min=4",
        );
        assert_eq!(j.iodepth_batch_submit, 32);
        assert_eq!(j.iodepth_low, 32);
        assert_eq!(j.iodepth_batch_complete_min, 4);
        assert_eq!(j.iodepth_batch_complete_max, 4);
        let j = job("iodepth=16\niodepth_low=8\niodepth_batch_complete_max=12");
        assert_eq!(j.iodepth_low, 8);
        assert_eq!(j.iodepth_batch_complete_max, 12);
        assert_eq!(j.effective_depth(), 1);
    }

    #[test]
    fn cgroup_strips_leading_slash_and_weight_is_range_checked() {
        let j = job("cgroup=/fast/a\ncgroup_weight=500");
        assert_eq!(j.cgroup.as_deref(), Some("fast/a"));
        assert_eq!(j.cgroup_weight, Some(500));
        assert_eq!(
            err("[job]\ncgroup=a\ncgroup_weight=50\n"),
            "t.fio:3: bad value '50' for option 'cgroup_weight': out of range 100..=1000"
        );
        // `cgroup=/` names the root, so its weight applies there, without a warning.
        let set = parse("[job]\ncgroup=/\ncgroup_weight=300\n");
        assert_eq!(set.jobs[0].cgroup.as_deref(), Some(""));
        assert!(set.warnings.is_empty(), "{:?}", set.warnings);
        let set = parse("[job]\ncgroup_weight=300\n");
        assert_eq!(set.jobs[0].cgroup, None);
        assert_eq!(
            set.warnings.len(),
            1,
            "a weight without a cgroup goes nowhere"
        );
    }

    /// iosched's own workload option: dbench4 is buffered, so direct=1 is refused.
    #[test]
    fn iosched_workload_selects_dbench_and_needs_the_page_cache() {
        assert_eq!(
            job("iosched_workload=dbench4\nnrfiles=8\nfilesize=1m").workload,
            crate::job::Workload::Dbench4
        );
        assert_eq!(job("rw=read").workload, crate::job::Workload::Fio);
        let message = err("[job]\ndirect=1\niosched_workload=dbench4\nfilesize=1m\n");
        assert!(message.contains("iosched_workload"), "{message}");
        assert!(message.contains("direct=0"), "{message}");
        assert!(err("[job]\niosched_workload=tpcc\n").contains("iosched_workload"));
    }

    /// fio's thinktime quiesces first; iosched's own option can turn that off, and only 0 or 1
    /// is taken, the error naming the option and the line.
    #[test]
    fn iosched_thinktime_quiesce_is_a_zero_or_one_switch() {
        assert!(job("thinktime=1ms").thinktime_quiesce);
        assert!(!job("thinktime=1ms\niosched_thinktime_quiesce=0").thinktime_quiesce);
        let message = err("[job]\niosched_thinktime_quiesce=2\n");
        assert!(message.contains("iosched_thinktime_quiesce"), "{message}");
        assert!(message.contains("t.fio:2"), "{message}");
    }

    #[test]
    fn many_options_land_in_their_fields() {
        let j = job(
            "ioengine=io_uring\ndirect=1\nsize=1g\nnumber_ios=100\nnrfiles=4\nfile_service_type=random:4\n\
             offset_increment=1m\nloops=2\nthinktime=100\nthinktime_blocks=8\nfsync=16\nfdatasync=4\n\
             end_fsync=1\nfsync_on_close=1\nsync=1\noverwrite=1\npre_read=1\nrandom_distribution=zipf:1.2\n\
             randseed=42\nverify=crc32c\ndo_verify=0\npercentile_list=50:99:99.9\ndescription=a test\n\
             ba=8k\nbs_unaligned\nrate_iops_min=10",
        );
        assert_eq!(j.ioengine, IoEngine::IoUring);
        assert!(j.direct && j.end_fsync && j.fsync_on_close && j.sync_writes && j.overwrite);
        assert!(j.pre_read && !j.invalidate, "pre_read clears invalidate");
        assert_eq!(j.size, Some(SizeOrPercent::Bytes(1 << 30)));
        assert_eq!(j.number_ios, Some(100));
        assert_eq!(j.file_service, FileService::Random { n: 4 });
        assert_eq!(j.offset_increment, 1 << 20);
        assert_eq!(
            (j.loops, j.thinktime_blocks, j.fsync, j.fdatasync),
            (2, 8, 16, 4)
        );
        assert_eq!(
            j.random_distribution,
            RandomDistribution::Zipf { theta: 1.2 }
        );
        assert_eq!(j.randseed, 42);
        assert_eq!(j.verify.as_deref(), Some("crc32c"));
        assert!(!j.do_verify);
        assert_eq!(j.percentile_list, vec![50.0, 99.0, 99.9]);
        assert_eq!(j.description.as_deref(), Some("a test"));
        assert_eq!(j.blockalign, [Some(8192); 3]);
        assert!(j.bs_unaligned);
        assert_eq!(j.rate_iops_min, [Some(10); 3]);
        assert!(job("buffered=0").direct);
        assert_eq!(
            job("random_distribution=zoned:60/10:30/20:10/70").random_distribution,
            RandomDistribution::Zoned(vec![(60, 10), (30, 20), (10, 70)])
        );
        // An empty percentage takes what the others leave (fio's rand-zones.fio).
        assert_eq!(
            job("random_distribution=zoned:50/5:30/15:20/").random_distribution,
            RandomDistribution::Zoned(vec![(50, 5), (30, 15), (20, 80)])
        );
    }

    #[test]
    fn options_echo_as_written_after_expansion() {
        let set =
            parse("[global]\nioengine=libaio\n[job]\ntime_based\nruntime =$ncpus\nblocksize=4k\n");
        assert_eq!(
            set.global_options,
            vec![("ioengine".to_string(), "libaio".to_string())]
        );
        let echoed: Vec<(&str, &str)> = set.jobs[0]
            .options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            echoed,
            vec![("time_based", ""), ("runtime", "8"), ("blocksize", "4k")]
        );
    }

    // Errors, each at its exact file:line.

    #[test]
    fn unknown_option_is_an_error_at_its_line() {
        assert_eq!(
            err("[job]\nrw=read\nbogus=1\n"),
            "t.fio:3: unknown option 'bogus'"
        );
    }

    /// fio's engines own their options (`engines/*.c`): one of an engine iosched does not
    /// drive is named as such, with its line, before or without its `ioengine=`.
    #[test]
    fn an_option_of_an_engine_iosched_does_not_drive_names_the_engine() {
        let message = err("[job]
rw=read
cpuload=50
ioengine=cpuio
");
        assert!(
            message.starts_with(
                "t.fio:3: option 'cpuload' of engine cpuio, which iosched does not drive"
            ),
            "{message}"
        );
        assert!(message.contains("io_uring"), "{message}");
        let shared = err("[job]
hostname=h
");
        assert!(
            shared.starts_with("t.fio:2: option 'hostname' of engine libhdfs, net or rdma,"),
            "{shared}"
        );
        assert_eq!(
            err("[job]
bogus=1
"),
            "t.fio:2: unknown option 'bogus'"
        );
    }

    #[test]
    fn unknown_rw_mode_is_an_error() {
        let e = err("[job]\n\nrw=bogus\n");
        assert!(
            e.starts_with("t.fio:3: bad value 'bogus' for option 'rw': expected one of"),
            "{e}"
        );
    }

    /// A binary file is named as such in one line; control characters never reach the
    /// terminal, and a long stray line is cut.
    #[test]
    fn binary_and_garbled_lines_make_one_readable_error() {
        assert_eq!(
            err("\u{7f}ELF\u{2}\u{1}\u{0}\u{0}\u{0}\n"),
            "t.fio:1: not a fio job file (binary data)"
        );
        let message = err(&format!("[j]\nbad\u{1b}[31m{}=1\n", "x".repeat(100)));
        assert!(
            message.starts_with("t.fio:2: unknown option 'bad\\u{1b}[31mxxx"),
            "{message}"
        );
        assert!(message.ends_with("…'"), "{message}");
    }

    /// fio 3.33 takes `threads` for `thread` and `rate_process=poisson` (its examples use
    /// both).
    #[test]
    fn threads_and_poisson_rates_are_fios() {
        assert!(!job("threads=0").thread && job("threads=1").thread);
        assert!(job("rate_iops=100\nrate_process=poisson").rate_poisson);
        assert!(!job("rate_iops=100\nrate_process=linear").rate_poisson);
    }

    /// Strided zones as fio reads them: a zonesize alone means strided, zonerange defaults
    /// to the zonesize, `zonemode=none` turns them off, zoned block devices are refused.
    #[test]
    fn strided_zone_options() {
        let zones = job("zonesize=256m\nzoneskip=2g").zones.unwrap();
        assert_eq!(
            (zones.size, zones.range, zones.skip),
            (256 << 20, 256 << 20, 2 << 30)
        );
        let ranged = job("zonemode=strided\nzonesize=1m\nzonerange=4m")
            .zones
            .unwrap();
        assert_eq!(ranged.range, 4 << 20);
        assert!(job("zonemode=none\nzonesize=1m").zones.is_none());
        assert!(err("[j]\nzonemode=strided\n").contains("needs a zonesize"));
        assert!(err("[j]\nzonemode=zbd\n").starts_with("t.fio:2: bad value 'zbd'"));
    }

    /// fio's buffer options: scrambled by default, zeros win over refills, and
    /// `scramble_buffers=0` leaves buffers as they are.
    #[test]
    fn buffer_contents_follow_fios_options() {
        assert_eq!(job("rw=write").write_data, WriteData::Scrambled);
        assert_eq!(job("zero_buffers").write_data, WriteData::Zeros);
        assert_eq!(
            job("zero_buffers\nrefill_buffers").write_data,
            WriteData::Zeros
        );
        assert_eq!(job("refill_buffers").write_data, WriteData::Refilled);
        assert_eq!(job("scramble_buffers=0").write_data, WriteData::AsIs);
    }

    /// The log options may be written bare: fio names the log after the job.
    #[test]
    fn log_options_may_be_bare() {
        let set = parse("[j]\nsize=1m\nwrite_bw_log\nwrite_lat_log=lat\nlog_avg_msec=100\n");
        let job = &set.jobs[0];
        assert_eq!(job.log_bw.as_deref(), Some("j"));
        assert_eq!(job.log_lat.as_deref(), Some("lat"));
        assert_eq!(job.log_iops, None);
        assert_eq!(job.log_avg_ns, 100_000_000);
        assert!(set.ignored_options.is_empty());
    }

    /// Issue 28: names are names. A bare log option makes the job's name a file name, and
    /// `cgroup=` names directories under the run's own group: neither may climb out.
    #[test]
    fn job_and_cgroup_names_that_are_paths_are_refused() {
        let bare = err("[../../x]\nsize=1m\nwrite_bw_log\n");
        assert!(
            bare.contains("write_bw_log") && bare.contains("'../../x'"),
            "{bare}"
        );
        assert!(err("[a/b]\nsize=1m\nwrite_lat_log\n").contains("'/'"));
        let named = parse("[a/b]\nsize=1m\nwrite_lat_log=lat\n");
        assert_eq!(named.jobs[0].log_lat.as_deref(), Some("lat"));
        assert!(err("[j]\nsize=1m\ncgroup=a/../../x\n").contains("cgroup '..'"));
        assert_eq!(
            parse("[j]\nsize=1m\ncgroup=/a/b\n").jobs[0]
                .cgroup
                .as_deref(),
            Some("a/b")
        );
    }

    #[test]
    fn bool_option_alone_needs_a_value() {
        assert_eq!(
            err("[job]\ndirect\n"),
            "t.fio:2: option 'direct' requires a value (write 'direct=...')"
        );
    }

    #[test]
    fn blank_after_equals_breaks_enumerated_values() {
        let e = err("[global]\n[job]\nrw = randread\n");
        assert!(
            e.starts_with("t.fio:3: bad value ' randread' for option 'rw': "),
            "{e}"
        );
        assert!(err("[job]\nioengine= libaio\n").starts_with("t.fio:2: bad value ' libaio'"));
    }

    #[test]
    fn bssplit_over_100_percent_is_an_error() {
        let e = err("[job]\nbssplit=4k/60:8k/50\n");
        assert!(
            e.starts_with("t.fio:2: bad value '4k/60:8k/50' for option 'bssplit': "),
            "{e}"
        );
        assert!(e.contains("110%"), "{e}");
    }

    #[test]
    fn unreadable_file_is_an_error_without_line() {
        let dir = temp_dir("missing");
        let path = dir.join("nope.fio");
        let e = parse_files(&[&path], &ctx()).unwrap_err();
        assert_eq!(e.line, 0);
        assert!(matches!(e.kind, ParseErrorKind::Io(_)));
        let text = e.to_string();
        let expected = format!("{}: cannot read: ", path.display());
        assert!(text.starts_with(&expected), "{text}");
        assert!(text.contains("os error 2"), "{text}");
    }

    #[test]
    fn missing_include_is_an_error_at_the_include_line() {
        let dir = temp_dir("include-missing");
        let main = dir.join("main.fio");
        std::fs::write(&main, "[job]\nrw=read\n\ninclude missing.fio\n").unwrap();
        let e = parse_files(&[&main], &ctx()).unwrap_err().to_string();
        let expected = format!("{}:4: cannot include 'missing.fio': ", main.display());
        assert!(e.starts_with(&expected), "{e}");
    }

    #[test]
    fn empty_expansion_is_named_in_the_error() {
        assert_eq!(
            err("[job]\nruntime=${RUNTIME}\n"),
            "t.fio:2: bad value '' for option 'runtime': not a number (expanded from 'runtime=${RUNTIME}')"
        );
    }

    #[test]
    fn file_without_jobs_is_an_error() {
        assert_eq!(err("[global]\nbs=8k\n"), "t.fio: no jobs defined");
        assert_eq!(err("; nothing\n"), "t.fio: no jobs defined");
    }

    #[test]
    fn malformed_numbers_are_errors_naming_option_and_value() {
        assert_eq!(
            err("[job]\niodepth=lots\n"),
            "t.fio:2: bad value 'lots' for option 'iodepth': not a number"
        );
        assert!(err("[job]\nioengine=splice\n")
            .starts_with("t.fio:2: bad value 'splice' for option 'ioengine'"));
        assert!(
            err("[job]\nnumjobs=0\n").starts_with("t.fio:2: bad value '0' for option 'numjobs'")
        );
        assert!(
            err("[job]\niodepth=0\n").starts_with("t.fio:2: bad value '0' for option 'iodepth'")
        );
        assert!(err("[job]\ndirect=2\n").starts_with("t.fio:2: bad value '2' for option 'direct'"));
    }

    proptest! {
        /// Whatever the text, the parser answers with jobs or an error, never a panic.
        #[test]
        fn arbitrary_text_never_panics(body in "[a-z_=0-9:;#,/ ()$%{}\\-\n.kKmMgGi^*+µ\\[\\]]{0,160}") {
            let _ = parse_str(&format!("[job]\n{body}\n"), "p.fio", &ctx());
        }

        /// Every known option with a random value: an answer, never a panic.
        #[test]
        fn known_options_with_arbitrary_values_never_panic(
            index in 0usize..200,
            value in "[a-z0-9:,/ ()%.kKmMgGi^*+\\-]{0,24}",
        ) {
            let option = &options::OPTIONS[index % options::OPTIONS.len()];
            let _ = parse_str(&format!("[job]\n{}={value}\n", option.name), "p.fio", &ctx());
        }

        /// N with a k/m/g suffix (any case, optional b) is N * 1024^power under kb_base=1024.
        #[test]
        fn size_strings_round_trip(n in 0u64..100_000, power in 0usize..4, upper in any::<bool>(), b in any::<bool>()) {
            let unit = ["", "k", "m", "g"][power];
            let unit = if upper { unit.to_uppercase() } else { unit.to_string() };
            let b = if b && power > 0 { "b" } else { "" };
            let j = job(&format!("size={n}{unit}{b}"));
            prop_assert_eq!(j.size, Some(SizeOrPercent::Bytes(n * 1024u64.pow(power as u32))));
        }
    }
}
