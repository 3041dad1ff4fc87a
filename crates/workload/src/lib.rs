//! Job descriptions shared by both drivers: the validated [`JobSpec`], the fio job-file
//! parser, and the generators that turn a job into a stream of I/Os.
#![forbid(unsafe_code)]

pub mod fio;
pub mod job;

pub use job::*;
