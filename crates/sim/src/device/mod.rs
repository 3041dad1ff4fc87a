//! The device interface and the device models behind it.
//!
//! A device is an event-driven state machine: the simulator [`Device::submit`]s commands at
//! `now`, asks [`Device::next_event`] when the device next needs attention, and calls
//! [`Device::advance`] at that time to collect completions. Models decide service times
//! from their own state (head position, rotation, die busy-until), never from a clock.
//!
//! The models (parameters and validation targets from device-models.md):
//! - [`fixed`]: fixed latency plus bandwidth over parallel units, a baseline;
//! - [`hdd`]: a mechanical disk (zones, continuous rotation, Ruemmler–Wilkes seeks, read-ahead
//!   segments, write-back cache with flush, SPTF over NCQ with ageing): `hdd-7200`,
//!   `hdd-7200-wc5`, `sas-10k`;
//! - [`disksim`]: the DiskSim-validated drive, with its own SPTF command queue:
//!   `hdd-7200-dsm`, `sas-10k-dsm` (the two disks above on the validated mechanism);
//! - [`raid0`]: striping over N [`hdd`] members behind a controller stage with a battery-backed
//!   cache: `raid0-8x10k`;
//! - [`flash`]: host link, controller cores, channels × units, write buffer and a simplified
//!   steady-state greedy GC: `ssd-x25e`, `nvme-gen4`, `ufs31`, `emmc51`.
//!
//! [`calibrate`] drives any of them in fio-style closed loops and sets the figures beside the
//! published ranges; [`load_device_file`] reads a custom model (`--device FILE`).
//!
//! Every model is deterministic: the only randomness (a disk's initial spindle phase) comes
//! from the generator the simulator passes in.

pub mod calibrate;
pub mod disksim;
pub mod file;
pub mod fixed;
pub mod flash;
pub mod gc;
pub mod hdd;
pub mod raid0;

pub use file::{load_device_file, DeviceFileError, DeviceFileErrorKind};

use iosched_core::{Op, RequestId, Time};
use rand_pcg::Pcg64Mcg;

/// One command as the device sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    pub id: RequestId,
    pub op: Op,
    pub sector: u64,
    pub nr_sectors: u32,
    /// `REQ_FUA`: write through the device cache.
    pub fua: bool,
}

/// A simulated block device.
pub trait Device {
    /// Preset or model name, e.g. `hdd-7200`.
    fn name(&self) -> &str;
    /// `queue/rotational`.
    fn rotational(&self) -> bool;
    /// Commands the device holds at once (NCQ tags; 1 without command queueing).
    fn queue_depth(&self) -> u32;
    /// Capacity in 512-byte sectors.
    fn capacity_sectors(&self) -> u64;
    /// Commands accepted and not yet completed.
    fn in_flight(&self) -> u32;
    /// Accepts a command at `now`. The caller never exceeds `queue_depth()`.
    fn submit(&mut self, now: Time, command: Command, rng: &mut Pcg64Mcg);
    /// [`Device::submit`], answering whether [`Device::next_event`] may have changed: the
    /// simulator asks the device again only then. By default it may have.
    fn submit_moves_next(&mut self, now: Time, command: Command, rng: &mut Pcg64Mcg) -> bool {
        self.submit(now, command, rng);
        true
    }
    /// When the device next has something to report (a completion), if anything is in flight.
    fn next_event(&self) -> Option<Time>;
    /// Moves the device to `now` and appends the commands completed by then, in completion
    /// order. `now` is never earlier than a previous call's.
    fn advance(&mut self, now: Time, rng: &mut Pcg64Mcg, completed: &mut Vec<RequestId>);
}

/// A device model by name, for `--device NAME` and `iosched devices`.
#[derive(Clone, Copy, Debug)]
pub struct DevicePreset {
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn() -> Box<dyn Device>,
}

/// Every built-in preset, in the order `iosched devices` lists them.
pub fn presets() -> Vec<DevicePreset> {
    vec![DevicePreset {
        name: "fixed",
        summary: "fixed latency + bandwidth with parallel units (default: 100 us, 500 MB/s, 4 units, rotational)",
        build: || Box::new(fixed::FixedDevice::new(fixed::FixedParams::default())),
    },
    DevicePreset {
        name: "hdd-7200",
        summary: "7200 RPM SATA desktop disk: zoned, SPTF over NCQ 31, read-ahead, 16 MiB write cache",
        build: || Box::new(hdd::HddDevice::new(hdd::HddParams::hdd_7200())),
    },
    DevicePreset {
        name: "hdd-7200-wc5",
        summary: "hdd-7200 with a 5-run write cache (defers fewer writes): QD1 random writes at the measured 107 IOPS",
        build: || Box::new(hdd::HddDevice::new(hdd::HddParams::hdd_7200_wc5())),
    },
    DevicePreset {
        name: "sas-10k",
        summary: "10K RPM SAS disk (Maxtor Atlas 10K V seek curve): TCQ 64, read-ahead, write cache",
        build: || Box::new(hdd::HddDevice::new(hdd::HddParams::sas_10k())),
    },
    DevicePreset {
        name: "hdd-7200-dsm",
        summary: "hdd-7200 on the DiskSim-validated mechanism: 30 zones, 32 x 1 MiB segments, IBM 18ES overheads, SPTF over NCQ 31",
        build: || Box::new(disksim::DiskSimDevice::new(&disksim::preset::hdd_7200())),
    },
    DevicePreset {
        name: "sas-10k-dsm",
        summary: "sas-10k on the DiskSim-validated mechanism: 24 zones, 32 x 512 KiB segments, Cheetah 9LP overheads, SPTF over TCQ 64",
        build: || Box::new(disksim::DiskSimDevice::new(&disksim::preset::sas_10k())),
    },
    DevicePreset {
        name: "raid0-8x10k",
        summary: "LSI 1078 RAID-0, 8 x 10K SAS, 64 KiB stripe, 256 MiB BBU write cache, rotational LUN",
        build: || Box::new(raid0::Raid0Device::new(raid0::Raid0Params::lsi1078_8x10k())),
    },
    DevicePreset {
        name: "ssd-x25e",
        summary: "Intel X25-E 32 GB SATA SLC SSD: NCQ 31, 10 channels x 2 dies, 28 us controller, steady-state GC",
        build: || Box::new(flash::FlashDevice::new(flash::FlashParams::x25e())),
    },
    DevicePreset {
        name: "nvme-gen4",
        summary: "PCIe Gen4 x4 client NVMe SSD (980 PRO-like): 64 flash units, SLC-cached writes, QD 1024",
        build: || Box::new(flash::FlashDevice::new(flash::FlashParams::nvme_gen4())),
    },
    DevicePreset {
        name: "ufs31",
        summary: "UFS 3.1 phone storage: 32 slots, HS-G4 x2 full duplex, WriteBooster writes",
        build: || Box::new(flash::FlashDevice::new(flash::FlashParams::ufs31())),
    },
    DevicePreset {
        name: "emmc51",
        summary: "eMMC 5.1 without CMDQ: one command executing, one prepared (depth 2), HS400 half duplex",
        build: || Box::new(flash::FlashDevice::new(flash::FlashParams::emmc51())),
    },
    ]
}

/// Builds the preset named `name`.
pub fn preset(name: &str) -> Option<Box<dyn Device>> {
    presets()
        .into_iter()
        .find(|preset| preset.name == name)
        .map(|preset| (preset.build)())
}
