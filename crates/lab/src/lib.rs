//! iosched's laboratory: runs that check iosched against references outside it.
//!
//! [`conformance`] replays the CFQ conformance scenarios (Linux 4.20.1's own recorded
//! dispatch decisions) through iosched's CFQ and reports where the two part.
//! [`reproduce`] runs the seed experiments (`scenarios/NNN/`) in the simulator and sets our
//! figures beside the ones the seeds published. Both spread their runs over [`pool`], a
//! local work queue whose results do not depend on the number of workers. [`run`] executes
//! one [`iosched_driver::spec::RunSpec`] on the simulator or the engine.
//!
//! ```no_run
//! use std::path::Path;
//! use iosched_lab::conformance::{run_suite, summary_line, SuiteOptions};
//!
//! let dir = Path::new("../shared/conformance/cfq");
//! let results = run_suite(&dir.join("scenarios"), &dir.join("expected"), &SuiteOptions::default())
//!     .expect("suite runs");
//! println!("{}", summary_line(&results));
//! ```
#![forbid(unsafe_code)]

pub mod conformance;
pub mod listing;
pub mod oracle;
pub mod pool;
pub mod reproduce;
pub mod run;
pub mod sweep;
