//! The deterministic discrete-event simulator: virtual clock, event queue, device models and
//! simulated processes driving an `iosched-core` scheduler.
//!
//! Same jobs, device, scheduler, tunables and seed → the same events in the same order →
//! byte-identical results.
#![forbid(unsafe_code)]

pub mod cgroups;
pub mod device;
pub mod event;
pub mod fs;
pub mod layout;
pub mod reproduce;
pub mod results;
pub mod simulation;

pub use simulation::{SimConfig, SimError, SimOutcome, Simulation};
