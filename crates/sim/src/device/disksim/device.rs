//! The validated drive as a simulator [`Device`]: `--device DRIVE.toml` with
//! `model = "disksim-hdd"`.
//!
//! It holds one command at a time, as every DiskSim validation run does ("Max queue length =
//! 1"), so the simulator's scheduler sees a drive without command queueing. Reads and writes
//! go through [`Drive::serve`]; a FUA write completes when its blocks are on the media; a
//! flush when every buffered write is; a discard at once (the drives have no trim).
//! Choice: the spindle starts at angle 0 at time 0, as in DiskSim, not at a drawn phase: the
//! traces' long idle gaps already make each arrival's angle effectively random.

use iosched_core::{Op, RequestId, Time, NSEC_PER_MSEC};
use rand_pcg::Pcg64Mcg;

use super::drive::Drive;
use super::spec::DiskSpec;
use crate::device::{Command, Device};

/// A DiskSim-validated drive behind the [`Device`] interface.
#[derive(Clone, Debug)]
pub struct DiskSimDevice {
    name: String,
    drive: Drive,
    /// The command in flight and its completion time.
    in_flight: Option<(RequestId, Time)>,
}

fn to_ms(time: Time) -> f64 {
    time as f64 / NSEC_PER_MSEC as f64
}

fn to_ns(ms: f64) -> Time {
    (ms * NSEC_PER_MSEC as f64).round() as Time
}

impl DiskSimDevice {
    pub fn new(spec: &DiskSpec) -> DiskSimDevice {
        DiskSimDevice {
            name: spec.name.clone(),
            drive: Drive::new(spec),
            in_flight: None,
        }
    }
}

impl Device for DiskSimDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn rotational(&self) -> bool {
        true
    }

    fn queue_depth(&self) -> u32 {
        1
    }

    fn capacity_sectors(&self) -> u64 {
        self.drive.capacity()
    }

    fn in_flight(&self) -> u32 {
        u32::from(self.in_flight.is_some())
    }

    fn submit(&mut self, now: Time, command: Command, _rng: &mut Pcg64Mcg) {
        assert!(self.in_flight.is_none(), "device queue overfilled");
        let now_ms = to_ms(now);
        let count = u64::from(command.nr_sectors);
        let done_ms = match command.op {
            Op::Read | Op::Write if count == 0 => now_ms,
            Op::Read => self.drive.serve(now_ms, true, command.sector, count),
            Op::Write => {
                let buffered = self.drive.serve(now_ms, false, command.sector, count);
                if command.fua {
                    buffered.max(self.drive.destaged_ms())
                } else {
                    buffered
                }
            }
            Op::Flush => now_ms.max(self.drive.destaged_ms()),
            Op::Discard => now_ms,
        };
        // Never before `now`, even for a zero-length command.
        self.in_flight = Some((command.id, to_ns(done_ms).max(now)));
    }

    fn next_event(&self) -> Option<Time> {
        self.in_flight.map(|(_, done)| done)
    }

    fn advance(&mut self, now: Time, _rng: &mut Pcg64Mcg, completed: &mut Vec<RequestId>) {
        if let Some((id, done)) = self.in_flight {
            if done <= now {
                completed.push(id);
                self.in_flight = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    fn command(id: u64, op: Op, sector: u64, fua: bool) -> Command {
        Command {
            id: RequestId(id),
            op,
            sector,
            nr_sectors: 2,
            fua,
        }
    }

    #[test]
    fn one_command_at_a_time_completes_when_the_drive_says() {
        let spec = DiskSpec::parse(include_str!("testdata_small.toml")).unwrap();
        let mut device = DiskSimDevice::new(&spec);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        assert_eq!((device.queue_depth(), device.capacity_sectors()), (1, 109));
        device.submit(0, command(1, Op::Read, 0, false), &mut rng);
        // As the drive's own miss: 12.1 ms.
        assert_eq!(device.next_event(), Some(12_100_000));
        let mut done = Vec::new();
        device.advance(12_099_999, &mut rng, &mut done);
        assert!(done.is_empty());
        device.advance(12_100_000, &mut rng, &mut done);
        assert_eq!((done, device.in_flight()), (vec![RequestId(1)], 0));
    }

    #[test]
    fn fua_writes_and_flushes_wait_for_the_media() {
        let spec = DiskSpec::parse(include_str!("testdata_small.toml")).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut device = DiskSimDevice::new(&spec);
        device.submit(0, command(1, Op::Write, 20, false), &mut rng);
        let buffered = device.next_event().unwrap();
        let mut done = Vec::new();
        device.advance(buffered, &mut rng, &mut done);
        device.submit(buffered, command(2, Op::Flush, 0, false), &mut rng);
        let flushed = device.next_event().unwrap();
        assert!(
            flushed > buffered + NSEC_PER_MSEC,
            "the flush waits for the destage"
        );
        let mut device = DiskSimDevice::new(&spec);
        device.submit(0, command(1, Op::Write, 20, true), &mut rng);
        assert_eq!(
            device.next_event(),
            Some(flushed),
            "FUA completes with the destage"
        );
    }
}
