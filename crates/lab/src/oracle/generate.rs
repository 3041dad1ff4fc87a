//! Seeded random scenarios for the oracle: device, tunables (at boot and mid-run),
//! closed-loop processes of every priority class, open-loop bursts built to merge (back,
//! front, and gaps filled later so requests merge with each other), head insertions, FUA
//! bios and process exits. Scenario `i` of seed `s` draws from the splitmix64 stream seeded
//! with `s * 1_000_003 + i`, so any one scenario can be regenerated alone. Each scheduler
//! gets its own tunables; kyber's runs are longer (up to 1.5 s), so that its timer reads
//! full windows and resizes its domains.

use std::fmt::Write as _;

use super::draw::{device_line, DeviceChoices, Rng};

/// The text of mq-deadline's scenario `index` of `seed`.
pub fn scenario(seed: u64, index: u64) -> String {
    scenario_for("mq-deadline", seed, index)
}

/// The text of scenario `index` of `seed` for scheduler `sched`.
pub fn scenario_for(sched: &str, seed: u64, index: u64) -> String {
    let kyber = sched == "kyber";
    let mut r = Rng::for_scenario(seed, index);
    let mut out = String::new();
    let end = if kyber {
        r.range(50, 1500)
    } else {
        r.range(50, 600)
    } * 1_000_000;
    let _ = writeln!(out, "# generated: seed {seed} scenario {index}");
    let _ = writeln!(out, "end {end}");
    // At boot, a machine up for a while, or about to pass the 32-bit jiffies wrap.
    let origin: u64 = r.pick(&[0, 1_000_000_000_000, 1_000_000_000_000, 299_900_000_000]);
    let _ = writeln!(out, "origin {origin}");
    if kyber {
        kyber_device(&mut r, &mut out);
        kyber_tunables(&mut r, &mut out, end);
    } else {
        device(&mut r, &mut out);
        tunables(&mut r, &mut out, end);
    }
    let procs = r.range(1, 6);
    for pid in 1..=procs {
        process(&mut r, &mut out, pid, end);
    }
    if r.chance(60) {
        bursts(&mut r, &mut out, procs + 1, end);
    }
    out
}

fn device(r: &mut Rng, out: &mut String) {
    let choices = DeviceChoices {
        depths: &[1, 1, 2, 4, 8, 32],
        nr_requests: &[0, 0, 0, 2, 4, 8, 16, 64],
        base_ns: &[20_000, 100_000, 500_000, 2_000_000],
    };
    device_line(r, out, &choices);
}

/// Kyber's devices: deeper queues (tokens only bind below the device's depth), and no
/// service under 200 µs, so that second-long runs stay a few ten thousand requests.
fn kyber_device(r: &mut Rng, out: &mut String) {
    let choices = DeviceChoices {
        depths: &[1, 2, 4, 8, 16, 32],
        nr_requests: &[0, 0, 0, 8, 16, 64],
        base_ns: &[200_000, 500_000, 1_000_000, 2_000_000, 5_000_000],
    };
    device_line(r, out, &choices);
}

fn tunable_value(r: &mut Rng, name: &str) -> String {
    let v: u64 = match name {
        "read_expire" => r.pick(&[0, 1, 3, 8, 20, 100, 500]),
        "write_expire" => r.pick(&[0, 2, 10, 50, 300, 5000]),
        "writes_starved" => return r.pick(&["0", "1", "2", "3", "-1", "0x2"]).to_string(),
        "front_merges" => r.range(0, 1),
        "fifo_batch" => r.pick(&[0, 1, 2, 4, 16, 64]),
        "async_depth" => r.pick(&[1, 2, 3, 8, 64]),
        _ => r.pick(&[0, 4, 20, 60, 200, 10_000]),
    };
    v.to_string()
}

fn tunables(r: &mut Rng, out: &mut String, end: u64) {
    const NAMES: [&str; 7] = [
        "read_expire",
        "write_expire",
        "writes_starved",
        "front_merges",
        "fifo_batch",
        "async_depth",
        "prio_aging_expire",
    ];
    for name in NAMES {
        if r.chance(35) {
            let _ = writeln!(out, "tunable {name} {}", tunable_value(r, name));
        }
    }
    for _ in 0..r.range(0, 3) {
        let name = r.pick(&NAMES);
        let (v, at) = (tunable_value(r, name), r.range(0, end));
        let _ = writeln!(out, "tunable {name} {v} at={at}");
    }
}

/// Kyber's latency targets, from far under any device's latency to far over it, a refused
/// value now and then.
fn kyber_tunables(r: &mut Rng, out: &mut String, end: u64) {
    let value = |r: &mut Rng| {
        r.pick(&[
            "0", "50000", "300000", "1000000", "2000000", "8000000", "50000000", "-5",
        ])
    };
    for name in ["read_lat_nsec", "write_lat_nsec"] {
        // Targets apart (one domain good, one bad) are what makes kyber shrink a domain.
        if r.chance(75) {
            let _ = writeln!(out, "tunable {name} {}", value(r));
        }
        if r.chance(25) {
            let (v, at) = (value(r), r.range(0, end));
            let _ = writeln!(out, "tunable {name} {v} at={at}");
        }
    }
}

fn process(r: &mut Rng, out: &mut String, pid: u64, end: u64) {
    let class = r.pick(&["N", "R", "B", "B", "B", "I"]);
    let level = r.pick(&[0, 4, 4, 7]);
    let size = r.pick(&[8, 8, 16, 64, 256]);
    let random = r.chance(50);
    let dir = if r.chance(40) { "W" } else { "R" };
    let _ = write!(
        out,
        "proc {pid} prio={class}:{level} pattern={} dir={dir} sync={} depth={} think={} size={size} base={}",
        if random { "rand" } else { "seq" },
        u8::from(r.chance(50)),
        r.pick(&[1, 1, 2, 4, 8, 16]),
        r.pick(&[0, 0, 50_000, 500_000, 2_000_000]),
        pid * 1_000_000 * u64::from(r.chance(70)),
    );
    if random {
        let _ = write!(out, " span={}", r.pick(&[size * 4, 4096, 1 << 20]));
    } else {
        let _ = write!(out, " gap={}", r.pick(&[0, 0, 0, size]));
    }
    if r.chance(30) {
        let _ = write!(out, " start={}", r.range(0, end / 2));
    }
    if r.chance(20) {
        let _ = write!(out, " stop={}", r.range(0, end));
    }
    let _ = writeln!(out, " seed={}", r.next() % 1000);
    if r.chance(15) {
        let _ = writeln!(out, "exit {} {pid}", r.range(0, end));
    }
}

/// Open-loop bursts from process `pid`: runs of bios ascending (back merges), descending
/// (front merges) or with holes filled afterwards (request merges).
fn bursts(r: &mut Rng, out: &mut String, pid: u64, end: u64) {
    let class = r.pick(&["R", "B", "I"]);
    let _ = writeln!(out, "proc {pid} prio={class}:4 depth=0");
    for _ in 0..r.range(1, 8) {
        let mut t = r.range(0, end);
        let size = r.pick(&[8, 8, 32]);
        let base = r.range(0, 4) * 100_000 + r.range(0, 64) * 8;
        let n = r.range(2, 12);
        let dir = if r.chance(40) { "W" } else { "R" };
        let order = r.range(0, 2);
        let mut sectors: Vec<u64> = (0..n).map(|k| base + k * size).collect();
        match order {
            1 => sectors.reverse(),
            2 => {
                let (even, odd): (Vec<u64>, Vec<u64>) = sectors
                    .iter()
                    .partition(|&&s| ((s - base) / size).is_multiple_of(2));
                sectors = even.into_iter().chain(odd).collect();
            }
            _ => {}
        }
        for s in sectors {
            let mut flags = String::new();
            if r.chance(10) {
                flags.push('s');
            }
            if r.chance(4) {
                flags.push('f');
            }
            if r.chance(4) {
                flags.push('h');
            }
            if flags.is_empty() {
                flags.push('-');
            }
            let _ = writeln!(out, "arr {t} {pid} {dir} {flags} {s} {size}");
            t += r.pick(&[0, 0, 1000, 100_000]);
        }
    }
}
