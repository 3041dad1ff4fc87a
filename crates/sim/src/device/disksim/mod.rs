//! A disk drive validated against real drives' measured response times, after DiskSim 4.0.
//!
//! DiskSim's `valid/` folder holds, for six late-1990s SCSI drives, a trace of about 10,000
//! requests with each one's response time measured on the real drive, and the drive's
//! extracted parameters. This module reads those parameters ([`import`]) into a model file
//! ([`spec`]), models the drive mechanism by mechanism ([`layout`], [`mechanics`], [`cache`],
//! [`drive`]), replays each trace as DiskSim's validation does ([`replay`]) and scores the
//! result with DiskSim's demerit ([`demerit`]). [`device`] puts the drive behind the simulator's
//! device interface (`--device DRIVE.toml`), with the drive's own command queue; [`preset`]
//! expresses `hdd-7200` and `sas-10k` on this mechanism (`hdd-7200-dsm`, `sas-10k-dsm`).

pub mod cache;
pub mod demerit;
pub mod device;
pub mod drive;
pub mod import;
pub mod layout;
pub mod mechanics;
pub mod preset;
pub mod replay;
pub mod spec;

pub use device::DiskSimDevice;
pub use drive::Drive;
pub use spec::DiskSpec;
