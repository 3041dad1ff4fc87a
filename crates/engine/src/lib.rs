//! The real engine: the `iosched-core` schedulers driving real I/O on a regular file or a
//! block device through io_uring.
//!
//! The jobs' clones become tasks of one event loop in one thread ([`Engine`]), or of one
//! loop per worker thread sharing the scheduler ([`threads`]), one of them per job cgroup
//! placed in that cgroup when asked (`cgroup`); their requests
//! go into the chosen scheduler; what it dispatches is submitted with `O_DIRECT` from
//! registered, aligned buffers, at most `nr_requests` at a time; its idle deadlines become the
//! loop's wait timeouts; completions reach it with the real clock. Results come back in the
//! simulator's shape (`iosched_report::results::run_result`), so every output format works unchanged.
//!
//! Before the first write the target is checked ([`safety`]): a block device that is mounted,
//! partitioned, held, or carries a file-system signature is refused unless forced. Jobs with
//! `verify=crc32c|md5|sha256` write self-describing blocks and read them back ([`verify`]).
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use iosched_engine::{Engine, EngineConfig};
//! use iosched_workload::{JobSpec, SizeOrPercent};
//!
//! let mut job = JobSpec::new("reader");
//! job.direct = true;
//! job.size = Some(SizeOrPercent::Bytes(1 << 20));
//! let jobs = [job];
//! let engine = Engine::new(&jobs, "/tmp/scratch.img", EngineConfig::default()).unwrap();
//! let outcome = engine.run(&AtomicBool::new(false)).unwrap();
//! assert_eq!(outcome.clones[0].dirs[0].io_bytes, 1 << 20);
//! ```
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod affinity;
pub mod buffer;
mod cgroup;
pub use cgroup::blkio_v1_mount;
pub mod checksum;
pub mod engine;
pub mod error;
pub mod gauge;
pub mod host;
mod io;
pub mod safety;
mod setup;
pub mod signal;
pub mod target;
pub mod threads;
pub mod verify;

pub use engine::{Engine, EngineConfig, EngineOutcome, VerifyFailure};
pub use error::EngineError;
pub use gauge::{DepthSummary, InFlightSummary, StageSums};
pub use target::{Target, TargetKind};
pub use threads::{LockSummary, SchedStat};
pub use verify::VerifyMethod;
