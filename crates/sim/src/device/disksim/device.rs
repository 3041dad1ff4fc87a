//! The validated drive as a simulator [`Device`]: `--device DRIVE.toml` with
//! `model = "disksim-hdd"`.
//!
//! The drive holds up to `queue.depth` commands (DiskSim's disk "Max queue length"; 1 in
//! every validation run, and in every converted file). One is served at a time, through
//! [`Drive::serve`]; when it completes the drive picks the next by `queue.policy`: first come
//! first served, or shortest positioning time first (DiskSim's `SPTF_OPT`: the command whose
//! first block the heads reach soonest, [`Drive::positioning_estimate_ms`]), a command that
//! has waited `queue.age_limit_ms` going first. A flush is served in arrival order: the
//! commands before it first, none after it before it (ATA's FLUSH CACHE is not a queued
//! command, so the host's queue is empty when the drive sees one). A FUA write completes when
//! its blocks are on the media; a flush when every buffered write is; a discard at once (the
//! drives have no trim).
//! Choice: the spindle starts at angle 0 at time 0, as in DiskSim, not at a drawn phase: the
//! traces' long idle gaps already make each arrival's angle effectively random.

use iosched_core::{Op, RequestId, Time, NSEC_PER_MSEC};
use rand_pcg::Pcg64Mcg;

use super::drive::Drive;
use super::spec::{DiskSpec, QueueSpec, POLICY_SPTF};
use crate::device::{Command, Device};

/// A DiskSim-validated drive behind the [`Device`] interface.
#[derive(Clone, Debug)]
pub struct DiskSimDevice {
    name: String,
    drive: Drive,
    queue_spec: QueueSpec,
    /// The command being served and its completion time.
    in_flight: Option<(RequestId, Time)>,
    /// Accepted commands not yet started, in arrival order.
    queue: Vec<(Command, Time)>,
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
            queue_spec: spec.queue.clone(),
            in_flight: None,
            queue: Vec::with_capacity(spec.queue.depth as usize),
        }
    }

    /// Serves `command` from `now`; it completes when the drive says.
    fn start(&mut self, now: Time, command: Command) {
        let now_ms = to_ms(now);
        let count = u64::from(command.nr_sectors);
        let done_ms = match command.op {
            Op::Read | Op::Write if count == 0 => now_ms,
            Op::Read => self.drive.serve(now_ms, true, command.sector, count),
            Op::Write => {
                let buffered = self.drive.serve(now_ms, false, command.sector, count);
                if command.fua {
                    self.drive.force_unit_access(buffered, command.sector)
                } else {
                    buffered
                }
            }
            Op::Flush => self.drive.flush(now_ms),
            Op::Discard => now_ms,
        };
        // Never before `now`, even for a zero-length command.
        self.in_flight = Some((command.id, to_ns(done_ms).max(now)));
    }

    /// The queued command to serve next at `now`, taken off the queue.
    fn pick(&mut self, now: Time) -> Option<Command> {
        if self.queue.is_empty() {
            return None;
        }
        // Nothing passes a flush, and the flush waits for everything before it.
        let limit = self
            .queue
            .iter()
            .position(|(command, _)| command.op == Op::Flush)
            .unwrap_or(self.queue.len());
        if limit == 0 {
            return Some(self.queue.remove(0).0);
        }
        let age_limit = to_ns(self.queue_spec.age_limit_ms);
        let aged = age_limit > 0
            && self.queue[..limit]
                .iter()
                .any(|&(_, at)| at + age_limit <= now);
        let index = if aged || self.queue_spec.policy != POLICY_SPTF {
            // The queue is in arrival order: its front is the oldest.
            0
        } else {
            self.shortest_positioning(now, limit)
        };
        Some(self.queue.remove(index).0)
    }

    /// Of the first `limit` queued commands, the one whose first block the heads reach
    /// soonest (the earliest arrival on a tie).
    fn shortest_positioning(&self, now: Time, limit: usize) -> usize {
        let now_ms = to_ms(now);
        let mut best: Option<(f64, usize)> = None;
        for (index, (command, _)) in self.queue[..limit].iter().enumerate() {
            let cost = match command.op {
                Op::Read | Op::Write if command.nr_sectors > 0 => self
                    .drive
                    .positioning_estimate_ms(now_ms, command.op == Op::Read, command.sector),
                _ => 0.0,
            };
            if best.is_none_or(|(least, _)| cost < least) {
                best = Some((cost, index));
            }
        }
        best.map_or(0, |(_, index)| index)
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
        self.queue_spec.depth
    }

    fn capacity_sectors(&self) -> u64 {
        self.drive.capacity()
    }

    fn in_flight(&self) -> u32 {
        u32::from(self.in_flight.is_some()) + self.queue.len() as u32
    }

    fn submit(&mut self, now: Time, command: Command, _rng: &mut Pcg64Mcg) {
        assert!(
            self.in_flight() < self.queue_spec.depth,
            "device queue overfilled"
        );
        if self.in_flight.is_none() {
            assert!(self.queue.is_empty(), "an idle drive holds no queue");
            self.start(now, command);
        } else {
            self.queue.push((command, now));
        }
    }

    fn next_event(&self) -> Option<Time> {
        self.in_flight.map(|(_, done)| done)
    }

    fn advance(&mut self, now: Time, _rng: &mut Pcg64Mcg, completed: &mut Vec<RequestId>) {
        // Bounded: each pass completes one command and starts at most one queued one.
        while let Some((id, done)) = self.in_flight {
            if done > now {
                break;
            }
            completed.push(id);
            self.in_flight = None;
            if let Some(next) = self.pick(done) {
                self.start(done, next);
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

    /// The tiny drive with a queue of `depth` under `policy`.
    fn queued(depth: u32, policy: u32, age_limit_ms: f64) -> DiskSimDevice {
        let mut spec = DiskSpec::parse(include_str!("testdata_small.toml")).unwrap();
        spec.queue = QueueSpec {
            depth,
            policy,
            age_limit_ms,
        };
        DiskSimDevice::new(&spec)
    }

    fn read(id: u64, sector: u64) -> Command {
        Command {
            id: RequestId(id),
            op: Op::Read,
            sector,
            nr_sectors: 2,
            fua: false,
        }
    }

    /// Submits `commands` at 0 (the first starts, the rest queue) and returns the order of
    /// completion.
    fn completion_order(device: &mut DiskSimDevice, commands: &[Command]) -> Vec<u64> {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for &command in commands {
            device.submit(0, command, &mut rng);
        }
        assert_eq!(device.in_flight(), commands.len() as u32);
        let mut done = Vec::new();
        while let Some(next) = device.next_event() {
            device.advance(next, &mut rng, &mut done);
        }
        done.iter().map(|id| id.0).collect()
    }

    /// SPTF (DiskSim `SPTF_OPT`): after the read of blocks 0-1 the read-ahead reaches block
    /// 4 within 3 ms, while block 90 lies 10 cylinders away; the drive serves block 4 first.
    /// First come first served keeps the arrival order.
    #[test]
    fn sptf_serves_the_command_the_heads_reach_first() {
        let commands = [read(1, 0), read(2, 90), read(3, 4)];
        let mut sptf = queued(4, POLICY_SPTF, 0.0);
        assert_eq!(completion_order(&mut sptf, &commands), vec![1, 3, 2]);
        let mut fcfs = queued(4, super::super::spec::POLICY_FCFS, 0.0);
        assert_eq!(completion_order(&mut fcfs, &commands), vec![1, 2, 3]);
    }

    /// A command that has waited the age limit goes first, whatever its positioning time.
    #[test]
    fn an_aged_command_goes_before_the_nearest() {
        let commands = [read(1, 0), read(2, 90), read(3, 4)];
        let mut aged = queued(4, POLICY_SPTF, 1.0);
        assert_eq!(completion_order(&mut aged, &commands), vec![1, 2, 3]);
    }

    /// Nothing passes a queued flush: the read behind it waits although the buffer holds it.
    #[test]
    fn a_flush_orders_the_queue_around_it() {
        let flush = Command {
            id: RequestId(3),
            op: Op::Flush,
            sector: 0,
            nr_sectors: 0,
            fua: false,
        };
        let commands = [read(1, 0), read(2, 90), flush, read(4, 4)];
        let mut device = queued(4, POLICY_SPTF, 0.0);
        assert_eq!(completion_order(&mut device, &commands), vec![1, 2, 3, 4]);
    }
}
