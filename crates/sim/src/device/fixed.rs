//! `fixed`: the simplest honest device. Each command costs a fixed latency plus its size over
//! a bandwidth, served by `units` parallel units, first come first served.
//! Useful as a baseline and for testing schedulers without device effects.

use std::collections::BTreeMap;

use iosched_core::{RequestId, Time, NSEC_PER_SEC, SECTOR_SIZE};
use rand_pcg::Pcg64Mcg;

use super::{Command, Device};

/// Parameters of the fixed device.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedParams {
    pub name: String,
    /// Per-command latency.
    pub latency_ns: Time,
    /// Transfer rate of one unit, bytes per second.
    pub bandwidth_bytes_per_s: u64,
    /// Commands served at once.
    pub units: u32,
    /// Commands the device accepts (queued + in service).
    pub queue_depth: u32,
    pub rotational: bool,
    pub capacity_sectors: u64,
}

impl Default for FixedParams {
    fn default() -> Self {
        FixedParams {
            name: "fixed".to_string(),
            latency_ns: 100_000,
            bandwidth_bytes_per_s: 500_000_000,
            units: 4,
            queue_depth: 32,
            rotational: true,
            // 1 TiB.
            capacity_sectors: (1u64 << 40) / SECTOR_SIZE,
        }
    }
}

/// The fixed-latency device.
#[derive(Debug)]
pub struct FixedDevice {
    params: FixedParams,
    /// Time each unit becomes free.
    unit_free_at: Vec<Time>,
    /// Completions by (time, submission sequence).
    pending: BTreeMap<(Time, u64), RequestId>,
    next_seq: u64,
}

impl FixedDevice {
    pub fn new(params: FixedParams) -> FixedDevice {
        assert!(params.units > 0, "a fixed device needs at least one unit");
        assert!(
            params.bandwidth_bytes_per_s > 0,
            "bandwidth must be positive"
        );
        FixedDevice {
            unit_free_at: vec![0; params.units as usize],
            params,
            pending: BTreeMap::new(),
            next_seq: 0,
        }
    }

    fn service_time(&self, command: &Command) -> Time {
        let bytes = u64::from(command.nr_sectors) * SECTOR_SIZE;
        let transfer = (u128::from(bytes) * u128::from(NSEC_PER_SEC)
            / u128::from(self.params.bandwidth_bytes_per_s)) as Time;
        self.params.latency_ns + transfer
    }
}

impl Device for FixedDevice {
    fn name(&self) -> &str {
        &self.params.name
    }

    fn rotational(&self) -> bool {
        self.params.rotational
    }

    fn queue_depth(&self) -> u32 {
        self.params.queue_depth
    }

    fn capacity_sectors(&self) -> u64 {
        self.params.capacity_sectors
    }

    fn in_flight(&self) -> u32 {
        self.pending.len() as u32
    }

    fn submit(&mut self, now: Time, command: Command, _rng: &mut Pcg64Mcg) {
        assert!(
            self.in_flight() < self.params.queue_depth,
            "device queue overfilled"
        );
        // The unit that frees first takes the command (FCFS over parallel units).
        let (unit, free_at) = self
            .unit_free_at
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(index, free_at)| (free_at, index))
            .expect("at least one unit");
        let done = free_at.max(now) + self.service_time(&command);
        self.unit_free_at[unit] = done;
        self.pending.insert((done, self.next_seq), command.id);
        self.next_seq += 1;
    }

    fn next_event(&self) -> Option<Time> {
        self.pending.keys().next().map(|&(time, _)| time)
    }

    fn advance(&mut self, now: Time, _rng: &mut Pcg64Mcg, completed: &mut Vec<RequestId>) {
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 > now {
                break;
            }
            completed.push(entry.remove());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iosched_core::Op;
    use rand_core::SeedableRng;

    fn command(id: u64) -> Command {
        Command {
            id: RequestId(id),
            op: Op::Read,
            sector: 0,
            nr_sectors: 8,
            fua: false,
        }
    }

    /// With one unit, commands are served back to back: the second waits for the first.
    #[test]
    fn one_unit_serialises_commands() {
        let mut device = FixedDevice::new(FixedParams {
            units: 1,
            latency_ns: 1000,
            bandwidth_bytes_per_s: 4096 * 1_000_000, // 4096 B take 1 us
            ..FixedParams::default()
        });
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        device.submit(0, command(1), &mut rng);
        device.submit(0, command(2), &mut rng);
        assert_eq!(device.next_event(), Some(2000));
        let mut done = Vec::new();
        device.advance(2000, &mut rng, &mut done);
        assert_eq!(done, [RequestId(1)]);
        assert_eq!(device.next_event(), Some(4000));
    }

    /// Parallel units serve concurrently.
    #[test]
    fn units_serve_in_parallel() {
        let mut device = FixedDevice::new(FixedParams {
            units: 2,
            latency_ns: 1000,
            bandwidth_bytes_per_s: 4096 * 1_000_000,
            ..FixedParams::default()
        });
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        device.submit(0, command(1), &mut rng);
        device.submit(0, command(2), &mut rng);
        let mut done = Vec::new();
        device.advance(2000, &mut rng, &mut done);
        assert_eq!(done, [RequestId(1), RequestId(2)]);
    }
}
