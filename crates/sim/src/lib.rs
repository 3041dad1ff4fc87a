//! The deterministic discrete-event simulator: virtual clock, event queue, device models and
//! simulated processes driving an `iosched-core` scheduler.
#![forbid(unsafe_code)]

pub mod device;
