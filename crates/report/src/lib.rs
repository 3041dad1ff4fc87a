//! Results and traces in the formats people already read: fio normal/JSON/terse, blktrace,
//! blkparse text, mmtests comparison tables.
#![forbid(unsafe_code)]

pub mod blkparse;
pub mod blktrace;
pub mod decisions;
pub mod fio_json;
pub mod fio_normal;
pub mod fio_terse;
pub mod histogram;
pub mod stats;

pub use histogram::LatStat;
pub use stats::{
    DiskStats, GroupStats, JobStats, RunResult, SampleStat, DDIR_READ, DDIR_TRIM, DDIR_WRITE,
    DEFAULT_PERCENTILES,
};
