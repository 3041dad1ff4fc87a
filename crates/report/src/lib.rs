//! Results and traces in the formats people already read: fio normal/JSON/terse, blktrace
//! binaries, blkparse text, decision logs, mmtests comparison tables.
//!
//! Two halves:
//! * **Results.** A driver fills one [`JobStats`] per job while it runs ([`JobStats::record_io`]
//!   at each completion, [`JobStats::record_depth`] at each submission, ...), sets each job's
//!   runtime, and hands a [`RunResult`] to [`fio_json`], [`fio_terse`] or [`fio_normal`].
//!   Nothing reads a clock: the timestamps fio prints are fields the caller sets, so the same
//!   run always produces the same bytes.
//! * **Traces.** [`blktrace::BlktraceBinary`], [`blkparse::BlkparseText`] and
//!   [`decisions::DecisionLog`] implement [`iosched_core::Trace`]; [`decisions::TraceFanout`]
//!   sends one scheduler's events to several of them.
//!
//! [`timeline`] draws one run's decisions and trace: a lane per queue and per cgroup, idle
//! windows used or wasted, each request's sector; PNG, SVG or a zoomable HTML page.
//!
//! [`mmtests::compare_table`] prints A/B comparisons the way mmtests does; [`text_table`]
//! aligns the listings whose format is iosched's own.
//!
//! ```
//! use iosched_report::{fio_json, fio_terse, JobStats, RunResult, DDIR_READ, DEFAULT_PERCENTILES};
//!
//! let mut job = JobStats::new("seqread", 0, &DEFAULT_PERCENTILES);
//! // 1000 reads of 4 KiB, one per millisecond, each 2 µs to submit and 100 µs to complete.
//! for i in 0..1000u64 {
//!     let issue = i * 1_000_000;
//!     job.record_depth(1);
//!     job.record_io(DDIR_READ, 4096, issue, issue + 2_000, issue + 102_000);
//! }
//! job.set_runtime(0, 1_000_000_000);
//! let run = RunResult { jobs: vec![job], ..RunResult::default() };
//!
//! let json: serde_json::Value = serde_json::from_str(&fio_json::to_string(&run)).unwrap();
//! assert_eq!(json["jobs"][0]["read"]["bw"], 4000); // KiB/s
//! // fio names percentiles by its histogram bucket: 100 µs is in [99328, 100352), named 99840.
//! assert_eq!(json["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"], 99_840);
//! assert_eq!(fio_terse::to_string(&run).trim_end().split(';').count(), 121); // no disks
//! ```
#![forbid(unsafe_code)]

pub mod blkparse;
pub mod blktrace;
pub mod compare;
pub mod decisions;
pub mod fio_banner;
pub mod fio_json;
pub mod fio_normal;
pub mod fio_terse;
mod glyphs;
pub mod mmtests;
pub mod output;
pub mod plot;
pub mod result_check;
pub mod results;
pub mod run_plot;
pub mod shares;
pub mod sweep_plot;
pub mod text_table;
pub mod timeline;
pub mod verdict_plot;

// What a run measured is recorded by the driver; these formatters read it.
pub use iosched_driver::{disk, fio_plat, histogram, io_log, stats};

pub use histogram::LatStat;
pub use stats::{
    group_reporting, group_stats, DiskStats, GroupStats, JobStats, RunResult, SampleStat,
    DDIR_READ, DDIR_TRIM, DDIR_WRITE, DEFAULT_PERCENTILES,
};
