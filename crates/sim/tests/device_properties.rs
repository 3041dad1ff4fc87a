//! Random mixes of reads, writes, FUA writes, flushes and discards against every preset:
//! each command completes exactly once, never before it was submitted, time never runs
//! backwards, the device never holds more than its depth, and everything drains.

use iosched_core::{Op, RequestId, Time};
use iosched_sim::device::{presets, Command};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

fn exercise(name: &str, build: fn() -> Box<dyn iosched_sim::device::Device>, seed: u64) {
    let mut device = build();
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut choices = Pcg64Mcg::seed_from_u64(seed ^ 0x5555);
    let capacity = device.capacity_sectors();
    let depth = device.queue_depth().min(40);
    let mut submitted_at: Vec<Option<Time>> = Vec::new();
    let mut completed = vec![];
    let mut now: Time = 0;
    let mut last_sector = 0u64;
    let total = 600u64;
    let mut next_id = 0u64;
    let mut done_count = 0u64;
    let mut steps = 0;
    while done_count < total {
        steps += 1;
        assert!(steps < 100_000, "{name} seed {seed}: no progress");
        // Submit a few while there is room and commands left.
        while next_id < total && device.in_flight() < depth && choices.next_u64() % 3 != 0 {
            let kind = choices.next_u64() % 20;
            let op = match kind {
                0 => Op::Flush,
                1 => Op::Discard,
                2..=9 => Op::Write,
                _ => Op::Read,
            };
            let sectors = [8u32, 8, 16, 256, 2048][(choices.next_u64() % 5) as usize];
            let sector = if choices.next_u64() % 2 == 0 {
                last_sector
            } else {
                choices.next_u64() % capacity
            };
            last_sector = (sector + u64::from(sectors)) % capacity;
            let command = Command {
                id: RequestId(next_id),
                op,
                sector,
                nr_sectors: if op == Op::Flush { 0 } else { sectors },
                fua: op == Op::Write && kind == 2,
            };
            device.submit(now, command, &mut rng);
            submitted_at.push(Some(now));
            next_id += 1;
            assert!(
                device.in_flight() <= device.queue_depth(),
                "{name} seed {seed}"
            );
        }
        // Advance to the next event, or wait a little if there is none.
        let target = match device.next_event() {
            Some(t) => {
                assert!(
                    t >= now,
                    "{name} seed {seed}: event at {t} before now {now}"
                );
                if choices.next_u64() % 4 == 0 {
                    now + (t - now) / 2
                } else {
                    t
                }
            }
            None => {
                assert_eq!(
                    device.in_flight(),
                    0,
                    "{name} seed {seed}: in flight without an event"
                );
                now + 10_000
            }
        };
        now = target;
        completed.clear();
        device.advance(now, &mut rng, &mut completed);
        for id in &completed {
            let at = submitted_at[id.0 as usize]
                .take()
                .unwrap_or_else(|| panic!("{name} seed {seed}: {id:?} completed twice"));
            assert!(at <= now, "{name} seed {seed}");
            done_count += 1;
        }
    }
    assert_eq!(device.in_flight(), 0, "{name} seed {seed}");
    assert!(
        submitted_at.iter().all(Option::is_none),
        "{name} seed {seed}"
    );
}

#[test]
fn every_command_completes_once() {
    for preset in presets() {
        for seed in 1..=4 {
            exercise(preset.name, preset.build, seed);
        }
    }
}
