//! The deterministic discrete-event simulator: virtual clock, event queue, device models and
//! simulated processes driving an `iosched-core` scheduler.
//!
//! Same jobs, device, scheduler, tunables and seed → the same events in the same order →
//! byte-identical results.
#![forbid(unsafe_code)]

pub mod cpu;
pub mod device;
pub mod event;
pub mod fs;
pub mod simulation;

/// Job-file placement and cgroup interning are shared with the real engine.
pub use iosched_workload::{cgroups, layout};

pub use simulation::{CpuOutcome, SimConfig, SimError, SimOutcome, Simulation, STOP_POLL_EVENTS};
