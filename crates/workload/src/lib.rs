//! Job descriptions shared by both drivers: the validated [`JobSpec`], the fio job-file
//! parser, and the generators that turn a job into a stream of I/Os.
//!
//! ```
//! use iosched_workload::{JobSpec, SizeOrPercent, runner::{JobRunner, Step}, generator::FileRegion, rng::Rng};
//!
//! let mut spec = JobSpec::new("reader");
//! spec.size = Some(SizeOrPercent::Bytes(8192));
//! let region = vec![FileRegion { start: 0, len: 8192 }];
//! let mut job = JobRunner::new(&spec, region, 0, Rng::new(1));
//! assert!(matches!(job.next(0), Step::Submit(_)));
//! ```
#![forbid(unsafe_code)]

pub mod cgroups;
pub mod dbench;
pub mod distribution;
pub mod error_policy;
pub mod extent;
pub mod fio;
pub mod generator;
pub mod input;
pub mod issue_log;
pub mod job;
pub mod layout;
pub mod lifecycle;
pub mod pattern;
pub mod processes;
pub mod random_map;
pub mod replay;
pub mod rng;
pub mod runner;
pub mod scratch;
pub mod steady_state;
pub mod verify_pass;

pub use job::*;
