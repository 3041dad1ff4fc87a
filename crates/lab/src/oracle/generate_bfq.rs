//! Seeded random BFQ scenarios: a device, a cgroup tree with bfq.weights (some changed
//! mid-run), BFQ's tunables at boot and mid-run (invalid values included, which the kernel
//! refuses), closed-loop processes of every ioprio class, nice level and cgroup, with think
//! times and exits, and open-loop bursts built to merge. Scenario `i` of seed `s` draws from
//! the splitmix64 stream seeded with `s * 1_000_003 + i`, as mq-deadline's generator does.

use std::fmt::Write as _;

use super::draw::{device_line, DeviceChoices, Rng};

/// The text of BFQ scenario `index` of `seed`.
pub fn scenario(seed: u64, index: u64) -> String {
    let mut r = Rng::for_scenario(seed, index);
    let mut out = String::new();
    let end = r.range(20, 150) * 1_000_000;
    let _ = writeln!(out, "# generated (bfq): seed {seed} scenario {index}");
    let _ = writeln!(out, "end {end}");
    let origin: u64 = r.pick(&[0, 1_000_000_000_000, 1_000_000_000_000, 299_900_000_000]);
    let _ = writeln!(out, "origin {origin}");
    device(&mut r, &mut out);
    let cgroups = cgroups(&mut r, &mut out, end);
    tunables(&mut r, &mut out, end);
    let procs = r.range(1, 6);
    for pid in 1..=procs {
        process(&mut r, &mut out, pid, end, &cgroups);
    }
    if r.chance(40) {
        bursts(&mut r, &mut out, procs + 1, end, &cgroups);
    }
    out
}

fn device(r: &mut Rng, out: &mut String) {
    let choices = DeviceChoices {
        depths: &[1, 1, 1, 2, 4, 32],
        nr_requests: &[0, 0, 0, 4, 16, 64],
        base_ns: &[20_000, 100_000, 500_000, 2_000_000],
    };
    device_line(r, out, &choices);
}

/// Up to four cgroups, each below the root or an earlier one; their paths ("/" first).
fn cgroups(r: &mut Rng, out: &mut String, end: u64) -> Vec<String> {
    let mut paths = vec!["/".to_string()];
    for i in 0..r.pick(&[0, 0, 1, 2, 3, 4]) {
        let parent = r.pick_str(&paths).to_string();
        let path = if parent == "/" {
            format!("/g{i}")
        } else {
            format!("{parent}/g{i}")
        };
        let weight = r.pick(&[0, 10, 50, 100, 300, 1000]);
        let _ = writeln!(out, "cgroup {path} weight={weight}");
        paths.push(path);
    }
    for _ in 0..r.range(0, 2) {
        if paths.len() > 1 && r.chance(50) {
            let path = r.pick_str(&paths[1..]).to_string();
            let w = r.pick(&["1", "25", "100", "500", "1000", "0", "2000"]);
            let _ = writeln!(out, "cgweight {path} {w} at={}", r.range(0, end));
        }
    }
    paths
}

fn tunable_value(r: &mut Rng, name: &str) -> String {
    let v: &str = match name {
        "slice_idle" => r.pick(&["0", "1", "4", "8", "20"]),
        "slice_idle_us" => r.pick(&["0", "500", "3000", "8000"]),
        "low_latency" | "strict_guarantees" => r.pick(&["0", "1", "1"]),
        "max_budget" => r.pick(&["0", "64", "512", "4096", "16384"]),
        "timeout_sync" => r.pick(&["1", "4", "20", "125", "500", "0"]),
        "fifo_expire_sync" | "fifo_expire_async" => r.pick(&["1", "10", "125", "250"]),
        "back_seek_max" => r.pick(&["0", "64", "16384", "1000000"]),
        _ => r.pick(&["1", "2", "8", "-1"]),
    };
    v.to_string()
}

fn tunables(r: &mut Rng, out: &mut String, end: u64) {
    const NAMES: [&str; 10] = [
        "fifo_expire_sync",
        "fifo_expire_async",
        "back_seek_max",
        "back_seek_penalty",
        "slice_idle",
        "slice_idle_us",
        "max_budget",
        "timeout_sync",
        "strict_guarantees",
        "low_latency",
    ];
    for name in NAMES {
        if r.chance(20) {
            let _ = writeln!(out, "tunable {name} {}", tunable_value(r, name));
        }
    }
    for _ in 0..r.range(0, 2) {
        let name = r.pick(&NAMES);
        let (v, at) = (tunable_value(r, name), r.range(0, end));
        let _ = writeln!(out, "tunable {name} {v} at={at}");
    }
}

fn process(r: &mut Rng, out: &mut String, pid: u64, end: u64, cgroups: &[String]) {
    let class = r.pick(&["N", "R", "B", "B", "B", "B", "I"]);
    let level = r.pick(&[0, 4, 4, 7]);
    let size = r.pick(&[8, 8, 16, 64, 256]);
    let random = r.chance(40);
    let dir = if r.chance(30) { "W" } else { "R" };
    let _ = write!(
        out,
        "proc {pid} prio={class}:{level} pattern={} dir={dir} sync={} depth={} think={} size={size} base={}",
        if random { "rand" } else { "seq" },
        u8::from(dir == "R" || r.chance(30)),
        r.pick(&[1, 1, 1, 2, 4, 16]),
        r.pick(&[0, 0, 100_000, 1_000_000, 5_000_000, 30_000_000]),
        pid * 1_000_000 * u64::from(r.chance(80)),
    );
    if random {
        let _ = write!(out, " span={}", r.pick(&[size * 4, 4096, 1 << 20]));
    } else {
        let _ = write!(out, " gap={}", r.pick(&[0, 0, 0, size]));
    }
    let cg = r.pick_str(cgroups);
    if cg != "/" {
        let _ = write!(out, " cgroup={cg}");
    }
    if class == "N" {
        let _ = write!(out, " nice={}", r.pick(&[-20, -5, 0, 0, 10, 19]));
    }
    if r.chance(30) {
        let _ = write!(out, " start={}", r.range(0, end / 2));
    }
    if r.chance(15) {
        let _ = write!(out, " stop={}", r.range(0, end));
    }
    let _ = writeln!(out, " seed={}", r.next() % 1000);
    if r.chance(15) {
        let _ = writeln!(out, "exit {} {pid}", r.range(0, end));
    }
}

/// Open-loop bursts from process `pid`: runs of bios ascending (back merges), descending
/// (front merges) or with holes filled afterwards (request merges).
fn bursts(r: &mut Rng, out: &mut String, pid: u64, end: u64, cgroups: &[String]) {
    let class = r.pick(&["R", "B", "I"]);
    let cg = r.pick_str(cgroups);
    let _ = writeln!(out, "proc {pid} prio={class}:4 depth=0 cgroup={cg}");
    for _ in 0..r.range(1, 6) {
        let mut t = r.range(0, end);
        let size = r.pick(&[8, 8, 32]);
        let base = r.range(0, 4) * 100_000 + r.range(0, 64) * 8;
        let n = r.range(2, 12);
        let dir = if r.chance(40) { "W" } else { "R" };
        let mut sectors: Vec<u64> = (0..n).map(|k| base + k * size).collect();
        match r.range(0, 2) {
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
            let flags = if r.chance(30) { "s" } else { "-" };
            let _ = writeln!(out, "arr {t} {pid} {dir} {flags} {s} {size}");
            t += r.pick(&[0, 0, 1000, 100_000]);
        }
    }
}
