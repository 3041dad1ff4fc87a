//! Calibration: fio-style closed loops driven straight into a device model, no scheduler.
//!
//! Each measurement keeps `queue_depth` commands outstanding (capped by the device's own
//! depth): whenever one completes, the next is submitted at that instant. Patterns are 4 KiB
//! random reads, writes and a 70/30 read/write mix over the whole capacity at queue depths 1,
//! 2, 4, … 64, and sequential reads and writes of large blocks at the start (outer zone) and
//! the end (inner zone) of the device. Each loop also gives its completion latencies' mean,
//! median and 99th percentile; where a published figure exists for one of them it is a row of
//! its own. A run stops after `ops` completions or `time_limit_ns` of simulated time; the first
//! `warmup_ops` completions (a fifth for reads, half of a four-times longer run for random
//! writes, so that write buffers fill and garbage collection starts) are left out of the figures.
//!
//! Beside each figure stands the published range from device-models.md §2.1 / §1.3 / §1.5
//! where it gives one; the report counts the rows without one and names them "none
//! published". Choice: a target the reference gives as a single figure (say 35 K IOPS) becomes
//! the range ±15 % around it; ranges it gives are used as they are.

use iosched_core::{Op, RequestId, Time, NSEC_PER_SEC, SECTOR_SIZE};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{Command, Device};

/// The access pattern of one closed loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    RandomRead,
    RandomWrite,
    /// 70 % reads, 30 % writes, each command's direction drawn at random.
    RandomMix,
    SequentialRead,
    SequentialWrite,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::RandomRead => "randread",
            Pattern::RandomWrite => "randwrite",
            Pattern::RandomMix => "randrw70",
            Pattern::SequentialRead => "read",
            Pattern::SequentialWrite => "write",
        }
    }

    fn is_random(self) -> bool {
        matches!(
            self,
            Pattern::RandomRead | Pattern::RandomWrite | Pattern::RandomMix
        )
    }
}

/// Where a sequential loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// The whole device (random patterns).
    Full,
    /// Starting at LBA 0: the outer zone of a disk.
    Outer,
    /// Ending at the last LBA: the inner zone of a disk.
    Inner,
}

impl Region {
    pub fn name(self) -> &'static str {
        match self {
            Region::Full => "full",
            Region::Outer => "outer",
            Region::Inner => "inner",
        }
    }
}

/// One closed loop to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopSpec {
    pub pattern: Pattern,
    pub region: Region,
    pub queue_depth: u32,
    pub block_bytes: u64,
    /// Completions to collect, warm-up included.
    pub ops: u64,
    /// Completions left out of the figures at the start.
    pub warmup_ops: u64,
    /// Simulated time limit.
    pub time_limit_ns: Time,
    pub seed: u64,
}

/// What one closed loop measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopResult {
    pub iops: f64,
    pub mb_per_s: f64,
    pub mean_latency_us: f64,
    /// Median and 99th percentile of the completion latencies counted.
    pub p50_latency_us: f64,
    pub p99_latency_us: f64,
    /// Completions counted (after the warm-up).
    pub ops: u64,
    /// Most commands the device held at once.
    pub max_in_flight: u32,
    pub elapsed_ns: Time,
}

/// Runs one closed loop against `device`.
pub fn run_closed_loop(device: &mut dyn Device, spec: &LoopSpec) -> LoopResult {
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    let mut offsets = Pcg64Mcg::seed_from_u64(spec.seed ^ 0x9e37_79b9_7f4a_7c15);
    let depth = spec.queue_depth.clamp(1, device.queue_depth().max(1));
    let block_sectors = (spec.block_bytes / SECTOR_SIZE).max(1);
    let capacity = device.capacity_sectors();
    let blocks = (capacity / block_sectors).max(1);
    let span_blocks = spec.ops.saturating_add(u64::from(depth)).min(blocks);
    let mut next_sequential = match spec.region {
        Region::Full | Region::Outer => 0,
        Region::Inner => blocks - span_blocks,
    };
    let warmup = spec.warmup_ops.min(spec.ops.saturating_sub(1));
    let mut submit_time: Vec<Time> = Vec::with_capacity(depth as usize);
    let mut free_slots: Vec<u64> = (0..u64::from(depth)).rev().collect();
    submit_time.resize(depth as usize, 0);
    let mut directions = Pcg64Mcg::seed_from_u64(spec.seed ^ 0x5851_f42d_4c95_7f2d);
    let mut next_command = |slot: u64, offsets: &mut Pcg64Mcg| {
        let op = match spec.pattern {
            Pattern::RandomRead | Pattern::SequentialRead => Op::Read,
            Pattern::RandomWrite | Pattern::SequentialWrite => Op::Write,
            Pattern::RandomMix if directions.next_u64() % 10 < 7 => Op::Read,
            Pattern::RandomMix => Op::Write,
        };
        let block = if spec.pattern.is_random() {
            offsets.next_u64() % blocks
        } else {
            let block = next_sequential;
            next_sequential = (next_sequential + 1) % blocks;
            block
        };
        Command {
            id: RequestId(slot),
            op,
            sector: block * block_sectors,
            nr_sectors: block_sectors as u32,
            fua: false,
        }
    };
    let mut now: Time = 0;
    for _ in 0..depth {
        let slot = free_slots.pop().expect("free slot");
        submit_time[slot as usize] = now;
        device.submit(now, next_command(slot, &mut offsets), &mut rng);
    }
    let mut max_in_flight = device.in_flight();
    let mut completed: Vec<RequestId> = Vec::with_capacity(depth as usize);
    let mut total: u64 = 0;
    let mut counted: u64 = 0;
    let mut latencies: Vec<Time> = Vec::with_capacity(spec.ops.min(1 << 20) as usize);
    let mut window_start: Time = 0;
    while total < spec.ops && now < spec.time_limit_ns {
        let Some(t) = device.next_event() else { break };
        assert!(t >= now, "device time ran backwards");
        now = t;
        completed.clear();
        device.advance(now, &mut rng, &mut completed);
        for &id in &completed {
            total += 1;
            if total == warmup {
                window_start = now;
            }
            if total > warmup {
                counted += 1;
                latencies.push(now - submit_time[id.0 as usize]);
            }
            free_slots.push(id.0);
        }
        while let Some(slot) = free_slots.pop() {
            submit_time[slot as usize] = now;
            device.submit(now, next_command(slot, &mut offsets), &mut rng);
        }
        max_in_flight = max_in_flight.max(device.in_flight());
    }
    let elapsed = now.saturating_sub(window_start).max(1);
    let iops = counted as f64 * NSEC_PER_SEC as f64 / elapsed as f64;
    let latency_sum: u128 = latencies.iter().map(|&l| u128::from(l)).sum();
    latencies.sort_unstable();
    let percentile = |p: usize| {
        latencies
            .get((latencies.len() * p / 100).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |&l| l as f64 / 1e3)
    };
    LoopResult {
        iops,
        mb_per_s: iops * (block_sectors * SECTOR_SIZE) as f64 / 1e6,
        mean_latency_us: if counted == 0 {
            0.0
        } else {
            latency_sum as f64 / counted as f64 / 1e3
        },
        p50_latency_us: percentile(50),
        p99_latency_us: percentile(99),
        ops: counted,
        max_in_flight,
        elapsed_ns: elapsed,
    }
}

/// How a published figure is turned into a target: the wording of the coverage line.
pub const TOLERANCE: &str = "a single figure \u{b1}15 %, a published range as given";

/// Which rows of a report a published figure checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Rows in the report.
    pub rows: usize,
    /// Each checked row's label (`randread qd1 IOPS`) and whether it is within its target.
    pub checked: Vec<(String, bool)>,
    /// Checked rows within their target.
    pub within: usize,
}

/// A published target beside a figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    pub low: f64,
    pub high: f64,
    pub unit: &'static str,
    pub source: &'static str,
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub spec: LoopSpec,
    pub result: LoopResult,
    /// The figure compared with the target: IOPS for random patterns, MB/s for sequential.
    pub value: f64,
    pub unit: &'static str,
    pub target: Option<(f64, f64)>,
    pub target_source: Option<&'static str>,
}

impl Measurement {
    /// The row's name in the coverage line: pattern, region (sequential rows), queue depth,
    /// block size when not 4 KiB, and the unit compared (`read outer qd32 1M MB/s`).
    pub fn label(&self) -> String {
        let mut label = self.spec.pattern.name().to_string();
        if self.spec.region != Region::Full {
            label.push(' ');
            label.push_str(self.spec.region.name());
        }
        label.push_str(&format!(" qd{}", self.spec.queue_depth));
        if self.spec.block_bytes != 4096 {
            label.push(' ');
            label.push_str(&format_bytes(self.spec.block_bytes));
        }
        label.push(' ');
        label.push_str(self.unit);
        label
    }

    /// Whether the figure lies inside its target (true when there is none).
    pub fn within_target(&self) -> bool {
        self.target
            .is_none_or(|(low, high)| (low..=high).contains(&self.value))
    }
}

/// Everything [`calibrate`] measured for one device.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrationReport {
    pub device: String,
    pub rotational: bool,
    pub queue_depth: u32,
    pub capacity_bytes: u64,
    pub measurements: Vec<Measurement>,
}

impl CalibrationReport {
    /// A plain-text table, one measurement per line.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "device {} (rotational {}, queue depth {}, capacity {:.1} GB)\n",
            self.device,
            u8::from(self.rotational),
            self.queue_depth,
            self.capacity_bytes as f64 / 1e9
        );
        out.push_str(&format!(
            "{:<10} {:<6} {:>4} {:>8} {:>12} {:>10} {:>11} {:>11} {:>18}  {}\n",
            "pattern", "region", "qd", "bs", "value", "unit", "lat_us", "p99_us", "target", "ok"
        ));
        for m in &self.measurements {
            let target = m.target.map_or("-".to_string(), |(low, high)| {
                format!("{low:.0}..{high:.0}")
            });
            let ok = match m.target {
                None => "no published figure",
                Some(_) if m.within_target() => "yes",
                Some(_) => "NO",
            };
            out.push_str(&format!(
                "{:<10} {:<6} {:>4} {:>8} {:>12.1} {:>10} {:>11.1} {:>11.1} {:>18}  {}\n",
                m.spec.pattern.name(),
                m.spec.region.name(),
                m.spec.queue_depth,
                format_bytes(m.spec.block_bytes),
                m.value,
                m.unit,
                m.result.mean_latency_us,
                m.result.p99_latency_us,
                target,
                ok
            ));
        }
        out.push_str(&self.coverage_text());
        out
    }

    /// The closing lines: how many rows a published figure checks, which (each marked), and
    /// the patterns without one.
    pub fn coverage_text(&self) -> String {
        let mut out = String::new();
        let coverage = self.coverage();
        out.push_str(&format!(
            "coverage: {} of {} rows checked against a published figure ({}), {} within\n",
            coverage.checked.len(),
            coverage.rows,
            TOLERANCE,
            coverage.within
        ));
        let checked: Vec<String> = coverage
            .checked
            .iter()
            .map(|(row, ok)| format!("{row} [{}]", if *ok { "yes" } else { "NO" }))
            .collect();
        let checked = if checked.is_empty() {
            "none".to_string()
        } else {
            checked.join(", ")
        };
        out.push_str(&format!("checked: {checked}\n"));
        out.push_str(&format!(
            "no published figure: {}\n",
            self.unpublished().join(", ")
        ));
        out
    }

    /// How many rows a published figure checks, which, and how many are within it.
    pub fn coverage(&self) -> Coverage {
        let checked: Vec<(String, bool)> = self
            .measurements
            .iter()
            .filter(|m| m.target.is_some())
            .map(|m| (m.label(), m.within_target()))
            .collect();
        Coverage {
            rows: self.measurements.len(),
            within: checked.iter().filter(|(_, ok)| *ok).count(),
            checked,
        }
    }

    /// The patterns (with queue depth) that have no published figure at all, for the
    /// report's closing line; "none" when every row has one.
    pub fn unpublished(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for pattern in [
            Pattern::RandomRead,
            Pattern::RandomWrite,
            Pattern::RandomMix,
            Pattern::SequentialRead,
            Pattern::SequentialWrite,
        ] {
            let rows = self
                .measurements
                .iter()
                .filter(|m| m.spec.pattern == pattern);
            let (total, bare) = rows.fold((0, 0), |(t, b), m| {
                (t + 1, b + usize::from(m.target.is_none()))
            });
            if total > 0 && bare == total {
                names.push(format!("{} (any depth)", pattern.name()));
            } else if bare > 0 {
                names.push(format!("{} ({bare} of {total} rows)", pattern.name()));
            }
        }
        if names.is_empty() {
            names.push("none".to_string());
        }
        names
    }
}

fn format_bytes(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else {
        format!("{}K", bytes >> 10)
    }
}

/// How much to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalibrationOptions {
    /// Completions per random loop.
    pub random_ops: u64,
    /// Completions per sequential loop.
    pub sequential_ops: u64,
    /// Simulated time limit per loop.
    pub time_limit_ns: Time,
    /// Sequential block size.
    pub sequential_block_bytes: u64,
    pub seed: u64,
}

impl Default for CalibrationOptions {
    fn default() -> Self {
        CalibrationOptions {
            random_ops: 4000,
            sequential_ops: 1000,
            time_limit_ns: 60 * NSEC_PER_SEC,
            sequential_block_bytes: 1 << 20,
            seed: 1,
        }
    }
}

/// Queue depths of the random sweeps.
pub const QUEUE_DEPTHS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Runs the whole sweep against fresh devices from `build` (one per loop, so loops do not
/// see each other's caches).
pub fn calibrate(
    name: &str,
    build: &dyn Fn() -> Box<dyn Device>,
    options: &CalibrationOptions,
) -> CalibrationReport {
    let probe = build();
    let max_depth = probe.queue_depth().max(1);
    let mut report = CalibrationReport {
        device: name.to_string(),
        rotational: probe.rotational(),
        queue_depth: max_depth,
        capacity_bytes: probe.capacity_sectors() * SECTOR_SIZE,
        measurements: Vec::new(),
    };
    let mut specs = Vec::new();
    for pattern in [
        Pattern::RandomRead,
        Pattern::RandomWrite,
        Pattern::RandomMix,
    ] {
        let mut depths: Vec<u32> = QUEUE_DEPTHS.iter().map(|&d| d.min(max_depth)).collect();
        depths.dedup();
        // Writes run four times longer and skip half: buffers must fill before the figure
        // means anything.
        let (ops, warmup_ops) = match pattern {
            Pattern::RandomWrite => (options.random_ops * 4, options.random_ops * 2),
            // A mix's writes fill buffers too, at a third of the pace; a disk takes a minute.
            Pattern::RandomMix => (options.random_ops * 2, options.random_ops),
            _ => (options.random_ops, options.random_ops / 5),
        };
        for depth in depths {
            specs.push(LoopSpec {
                pattern,
                region: Region::Full,
                queue_depth: depth,
                block_bytes: 4096,
                ops,
                warmup_ops,
                time_limit_ns: options.time_limit_ns,
                seed: options.seed,
            });
        }
    }
    for pattern in [Pattern::SequentialRead, Pattern::SequentialWrite] {
        for region in [Region::Outer, Region::Inner] {
            for depth in [1u32, 32] {
                specs.push(LoopSpec {
                    pattern,
                    region,
                    queue_depth: depth.min(max_depth),
                    block_bytes: options.sequential_block_bytes,
                    ops: options.sequential_ops,
                    warmup_ops: options.sequential_ops / 5,
                    time_limit_ns: options.time_limit_ns,
                    seed: options.seed,
                });
            }
        }
    }
    for spec in specs {
        let mut device = build();
        let result = run_closed_loop(device.as_mut(), &spec);
        let (value, unit) = if spec.pattern.is_random() {
            (result.iops, "IOPS")
        } else {
            (result.mb_per_s, "MB/s")
        };
        let target = target_for(name, &spec);
        report.measurements.push(Measurement {
            spec,
            result,
            value,
            unit,
            target: target.map(|t| (t.low, t.high)),
            target_source: target.map(|t| t.source),
        });
        for (metric, target) in latency_targets_for(name, &spec) {
            report.measurements.push(Measurement {
                spec,
                result,
                value: metric.of(&result),
                unit: metric.unit(),
                target: Some((target.low, target.high)),
                target_source: Some(target.source),
            });
        }
    }
    report
}

/// A latency statistic with a published figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    Mean,
    P50,
    P99,
}

impl Latency {
    pub fn unit(self) -> &'static str {
        match self {
            Latency::Mean => "us mean",
            Latency::P50 => "us p50",
            Latency::P99 => "us p99",
        }
    }

    pub fn of(self, result: &LoopResult) -> f64 {
        match self {
            Latency::Mean => result.mean_latency_us,
            Latency::P50 => result.p50_latency_us,
            Latency::P99 => result.p99_latency_us,
        }
    }
}

/// Published completion-latency figures for a preset and loop (device-models.md §2.1).
pub fn latency_targets_for(device: &str, spec: &LoopSpec) -> Vec<(Latency, Target)> {
    if spec.queue_depth != 1 || spec.block_bytes != 4096 {
        return Vec::new();
    }
    let us = "us";
    if spec.pattern == Pattern::RandomWrite {
        // The brief's write latency, with the host's share its read figure is given with
        // (75 µs device, 100–130 µs at QD1 through the host: +25–55 µs).
        return match device {
            "ssd-x25e" => range(
                110.0,
                140.0,
                us,
                "§1.3 Intel brief 85 µs + host as for reads",
            )
            .map(|target| vec![(Latency::Mean, target)])
            .unwrap_or_default(),
            _ => Vec::new(),
        };
    }
    if spec.pattern != Pattern::RandomRead {
        return Vec::new();
    }
    let fio_run = "§2.1 public fio run: mean 11.1, p50 9.9, p99 31.6 ms";
    let figures: &[(Latency, f64, &'static str)] = match device {
        "hdd-7200" => &[
            (Latency::Mean, 11_100.0, fio_run),
            (Latency::P50, 9_900.0, fio_run),
            (Latency::P99, 31_600.0, fio_run),
        ],
        "ssd-x25e" => &[(
            Latency::Mean,
            115.0,
            "§2.1 Intel brief 75 µs + host: 100–130",
        )],
        "nvme-gen4" => &[(Latency::Mean, 50.0, "§2.1 Kitguru NM790 QD1 20 K IOPS")],
        _ => &[],
    };
    figures
        .iter()
        .filter_map(|&(metric, value, source)| {
            around(value, us, source).map(|target| (metric, target))
        })
        .collect()
}

/// Calibrates a built-in preset by name.
pub fn calibrate_preset(name: &str, options: &CalibrationOptions) -> Option<CalibrationReport> {
    let preset = super::presets().into_iter().find(|p| p.name == name)?;
    Some(calibrate(name, &preset.build, options))
}

fn around(value: f64, unit: &'static str, source: &'static str) -> Option<Target> {
    Some(Target {
        low: value * 0.85,
        high: value * 1.15,
        unit,
        source,
    })
}

fn range(low: f64, high: f64, unit: &'static str, source: &'static str) -> Option<Target> {
    Some(Target {
        low,
        high,
        unit,
        source,
    })
}

/// The published figure for a preset and loop, where device-models.md gives one.
pub fn target_for(device: &str, spec: &LoopSpec) -> Option<Target> {
    use Pattern::*;
    let deep = spec.queue_depth >= 31;
    let qd1 = spec.queue_depth == 1;
    let large = spec.block_bytes >= 128 << 10;
    let outer = spec.region == Region::Outer;
    let inner = spec.region == Region::Inner;
    let seq_deep = deep && large;
    const IOPS: &str = "IOPS";
    const MBS: &str = "MB/s";
    match (device, spec.pattern) {
        ("hdd-7200", RandomRead) if qd1 => range(75.0, 100.0, IOPS, "§2.1 Wikipedia IOPS; fio 89"),
        ("hdd-7200", RandomRead) if deep => range(150.0, 200.0, IOPS, "§2.1 NCQ ≈ 2x QD1"),
        ("hdd-7200", SequentialRead | SequentialWrite) if large && outer => {
            range(100.0, 130.0, MBS, "§2.1 xbitlabs; one media rate both ways")
        }
        ("hdd-7200", SequentialRead | SequentialWrite) if large && inner => {
            range(50.0, 65.0, MBS, "§2.1 datasheets; one media rate both ways")
        }
        ("sas-10k", RandomRead) if qd1 => range(125.0, 150.0, IOPS, "§2.1 Wikipedia IOPS"),
        ("sas-10k", RandomRead) if deep => range(300.0, 450.0, IOPS, "§2.1 Savvio >400"),
        ("raid0-8x10k", RandomRead) if qd1 => range(125.0, 150.0, IOPS, "§2.1 ≈ one disk"),
        ("raid0-8x10k", SequentialRead) if seq_deep && outer => {
            range(600.0, 900.0, MBS, "§2.1 Dell PERC 6")
        }
        ("ssd-x25e", RandomRead) if qd1 => range(8_000.0, 10_000.0, IOPS, "§2.1 tweakers.net"),
        ("ssd-x25e", RandomRead) if deep => around(35_000.0, IOPS, "§2.1 Intel datasheet"),
        ("ssd-x25e", RandomWrite) if deep => around(3_300.0, IOPS, "§2.1 Intel datasheet"),
        ("ssd-x25e", RandomMix) if deep => around(5_000.0, IOPS, "§1.3 Wikipedia IOPS, mixed"),
        ("ssd-x25e", SequentialRead) if seq_deep => around(250.0, MBS, "§2.1 TechReport"),
        ("ssd-x25e", SequentialWrite) if seq_deep => {
            range(170.0, 210.0, MBS, "§2.1 TechReport; seed 001")
        }
        ("nvme-gen4", RandomRead) if qd1 => around(20_000.0, IOPS, "§2.1 Kitguru NM790"),
        ("nvme-gen4", RandomRead) if spec.queue_depth == 8 => {
            around(133_000.0, IOPS, "§2.1 Kitguru NM790")
        }
        ("nvme-gen4", SequentialRead) if seq_deep => around(7_000.0, MBS, "§2.1 980 PRO spec"),
        ("nvme-gen4", SequentialWrite) if seq_deep => around(5_000.0, MBS, "§2.1 980 PRO spec"),
        ("ufs31", RandomRead) if deep => around(100_000.0, IOPS, "§1.5 Samsung lineup"),
        ("ufs31", RandomWrite) if deep => around(70_000.0, IOPS, "§1.5 Samsung lineup"),
        ("ufs31", SequentialRead) if seq_deep => around(2_100.0, MBS, "§1.5 Samsung lineup"),
        ("ufs31", SequentialWrite) if seq_deep => around(1_200.0, MBS, "§1.5 Samsung lineup"),
        ("emmc51", RandomRead) if spec.queue_depth >= 2 => {
            around(11_000.0, IOPS, "§1.5 Samsung lineup")
        }
        ("emmc51", RandomWrite) if spec.queue_depth >= 2 => {
            around(13_000.0, IOPS, "§1.5 Samsung lineup")
        }
        ("emmc51", SequentialRead) if large && spec.queue_depth >= 2 => {
            around(250.0, MBS, "§1.5 Samsung lineup")
        }
        ("emmc51", SequentialWrite) if large && spec.queue_depth >= 2 => {
            around(125.0, MBS, "§1.5 Samsung lineup")
        }
        _ => None,
    }
}
