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
//! writes, so that write buffers fill and garbage collection starts), or the first half of the
//! time limit if that ends sooner, are left out of the figures.
//!
//! Beside each figure stands the published figure for it where one was found, with its source
//! ([`sources`]; `docs/device-models.md`, "Every target and its source", lists each target, its
//! source and what was searched where none was found). The report counts the rows a figure
//! checks, names them, and says "no published figure" for the rest. Targets are looked up by
//! the model's own name, so a model file built on a preset is held to that preset's figures.
//! Choice: a target published as a single figure (say 35 K IOPS) becomes the range ±15 %
//! around it; published ranges are used as they are.

use std::sync::atomic::{AtomicBool, Ordering};

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
    run_closed_loop_until(device, spec, &AtomicBool::new(false)).expect("never stopped")
}

/// The loop's commands: its pattern over `blocks` blocks, from its own random streams.
struct Commands<'a> {
    spec: &'a LoopSpec,
    offsets: Pcg64Mcg,
    directions: Pcg64Mcg,
    blocks: u64,
    block_sectors: u64,
    next_sequential: u64,
}

impl Commands<'_> {
    fn next(&mut self, slot: u64) -> Command {
        let op = match self.spec.pattern {
            Pattern::RandomRead | Pattern::SequentialRead => Op::Read,
            Pattern::RandomWrite | Pattern::SequentialWrite => Op::Write,
            Pattern::RandomMix if self.directions.next_u64() % 10 < 7 => Op::Read,
            Pattern::RandomMix => Op::Write,
        };
        let block = if self.spec.pattern.is_random() {
            self.offsets.next_u64() % self.blocks
        } else {
            let block = self.next_sequential;
            self.next_sequential = (self.next_sequential + 1) % self.blocks;
            block
        };
        Command {
            id: RequestId(slot),
            op,
            sector: block * self.block_sectors,
            nr_sectors: self.block_sectors as u32,
            fua: false,
        }
    }
}

/// [`run_closed_loop`], given up (`None`) within [`crate::STOP_POLL_EVENTS`] device events
/// once `stop` is set (a signal): a loop cut short measures nothing its spec describes.
pub fn run_closed_loop_until(
    device: &mut dyn Device,
    spec: &LoopSpec,
    stop: &AtomicBool,
) -> Option<LoopResult> {
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    let depth = spec.queue_depth.clamp(1, device.queue_depth().max(1));
    let block_sectors = (spec.block_bytes / SECTOR_SIZE).max(1);
    let blocks = (device.capacity_sectors() / block_sectors).max(1);
    let span_blocks = spec.ops.saturating_add(u64::from(depth)).min(blocks);
    let mut commands = Commands {
        spec,
        offsets: Pcg64Mcg::seed_from_u64(spec.seed ^ 0x9e37_79b9_7f4a_7c15),
        directions: Pcg64Mcg::seed_from_u64(spec.seed ^ 0x5851_f42d_4c95_7f2d),
        blocks,
        block_sectors,
        next_sequential: match spec.region {
            Region::Full | Region::Outer => 0,
            Region::Inner => blocks - span_blocks,
        },
    };
    let warmup = spec.warmup_ops.min(spec.ops.saturating_sub(1));
    let mut submit_time: Vec<Time> = vec![0; depth as usize];
    let mut free_slots: Vec<u64> = (0..u64::from(depth)).rev().collect();
    let mut now: Time = 0;
    for _ in 0..depth {
        let slot = free_slots.pop().expect("free slot");
        submit_time[slot as usize] = now;
        device.submit(now, commands.next(slot), &mut rng);
    }
    let mut max_in_flight = device.in_flight();
    let mut completed: Vec<RequestId> = Vec::with_capacity(depth as usize);
    let mut total: u64 = 0;
    let mut latencies: Vec<Time> = Vec::with_capacity(spec.ops.min(1 << 20) as usize);
    let mut window_start: Time = 0;
    // The warm-up ends after `warmup` completions or at half the time limit, whichever comes
    // first, so that a slow loop still measures its second half.
    let mut warming = warmup > 0;
    let mut events: u64 = 0;
    while total < spec.ops && now < spec.time_limit_ns {
        events += 1;
        if events.is_multiple_of(crate::STOP_POLL_EVENTS) && stop.load(Ordering::Relaxed) {
            return None;
        }
        let Some(t) = device.next_event() else { break };
        assert!(t >= now, "device time ran backwards");
        now = t;
        completed.clear();
        device.advance(now, &mut rng, &mut completed);
        for &id in &completed {
            total += 1;
            if !warming {
                latencies.push(now - submit_time[id.0 as usize]);
            } else if total >= warmup || now >= spec.time_limit_ns / 2 {
                warming = false;
                window_start = now;
            }
            free_slots.push(id.0);
        }
        while let Some(slot) = free_slots.pop() {
            submit_time[slot as usize] = now;
            device.submit(now, commands.next(slot), &mut rng);
        }
        max_in_flight = max_in_flight.max(device.in_flight());
    }
    let elapsed = now.saturating_sub(window_start).max(1);
    let mut result = summarize(latencies, elapsed, block_sectors * SECTOR_SIZE);
    result.max_in_flight = max_in_flight;
    Some(result)
}

/// Rate, mean and percentiles of the latencies measured over `elapsed` ns.
fn summarize(mut latencies: Vec<Time>, elapsed: Time, block_bytes: u64) -> LoopResult {
    let counted = latencies.len() as u64;
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
        mb_per_s: iops * block_bytes as f64 / 1e6,
        mean_latency_us: if counted == 0 {
            0.0
        } else {
            latency_sum as f64 / counted as f64 / 1e3
        },
        p50_latency_us: percentile(50),
        p99_latency_us: percentile(99),
        ops: counted,
        max_in_flight: 0,
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
    /// Whose published figures the rows are checked against: the model's own name, so a model
    /// file starting from a preset (`base = "hdd-7200"`, name not overridden) is held to that
    /// preset's figures.
    pub targets_of: String,
    pub rotational: bool,
    pub queue_depth: u32,
    pub capacity_bytes: u64,
    pub measurements: Vec<Measurement>,
    /// A signal stopped the calibration: the loops after the last measured one did not run.
    pub interrupted: bool,
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
        if self.targets_of != self.device {
            out.push_str(&format!(
                "targets: the published figures for {}\n",
                self.targets_of
            ));
        }
        let mut table = iosched_report::text_table::TextTable::new(&[
            "pattern", "region", "qd", "bs", "value", "unit", "lat_us", "p99_us", "target", "ok",
        ])
        .right_aligned(&[2, 3, 4, 6, 7, 8]);
        for m in &self.measurements {
            let target = m.target.map_or("-".to_string(), |(low, high)| {
                format!("{low:.0}..{high:.0}")
            });
            let ok = match m.target {
                None => "no published figure",
                Some(_) if m.within_target() => "yes",
                Some(_) => "NO",
            };
            table.row([
                m.spec.pattern.name().to_string(),
                m.spec.region.name().to_string(),
                m.spec.queue_depth.to_string(),
                format_bytes(m.spec.block_bytes),
                format!("{:.1}", m.value),
                m.unit.to_string(),
                format!("{:.1}", m.result.mean_latency_us),
                format!("{:.1}", m.result.p99_latency_us),
                target,
                ok.to_string(),
            ]);
        }
        out.push_str(&table.render());
        out.push_str(&self.coverage_text());
        if self.interrupted {
            out.push_str(
                "interrupted: partial results; the loops after the last row above did not run\n",
            );
        }
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
        for (source, rows) in self.sources() {
            out.push_str(&format!("source: {source}: {}\n", rows.join(", ")));
        }
        out
    }

    /// Each published source the checked rows cite, in first-cited order, with the rows it
    /// checks.
    pub fn sources(&self) -> Vec<(&'static str, Vec<String>)> {
        let mut cited: Vec<(&'static str, Vec<String>)> = Vec::new();
        for m in &self.measurements {
            let Some(source) = m.target_source else {
                continue;
            };
            match cited.iter_mut().find(|(s, _)| *s == source) {
                Some((_, rows)) => rows.push(m.label()),
                None => cited.push((source, vec![m.label()])),
            }
        }
        cited
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
    calibrate_until_stopped(name, build, options, &AtomicBool::new(false))
}

/// [`calibrate`], ending once `stop` is set (a signal): the report holds the loops measured
/// whole before it and says it was interrupted.
pub fn calibrate_until_stopped(
    name: &str,
    build: &dyn Fn() -> Box<dyn Device>,
    options: &CalibrationOptions,
    stop: &AtomicBool,
) -> CalibrationReport {
    let probe = build();
    let max_depth = probe.queue_depth().max(1);
    let targets_of = figures_of(probe.name()).to_string();
    let mut report = CalibrationReport {
        device: name.to_string(),
        targets_of: targets_of.clone(),
        rotational: probe.rotational(),
        queue_depth: max_depth,
        capacity_bytes: probe.capacity_sectors() * SECTOR_SIZE,
        measurements: Vec::new(),
        interrupted: false,
    };
    for spec in loop_specs(options, max_depth) {
        let mut device = build();
        let Some(result) = run_closed_loop_until(device.as_mut(), &spec, stop) else {
            report.interrupted = true;
            break;
        };
        let (value, unit) = if spec.pattern.is_random() {
            (result.iops, "IOPS")
        } else {
            (result.mb_per_s, "MB/s")
        };
        let target = target_for(&targets_of, &spec);
        report.measurements.push(Measurement {
            spec,
            result,
            value,
            unit,
            target: target.map(|t| (t.low, t.high)),
            target_source: target.map(|t| t.source),
        });
        for (metric, target) in latency_targets_for(&targets_of, &spec) {
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

/// Every loop [`calibrate`] runs, in report order, on a device of queue depth `max_depth`.
fn loop_specs(options: &CalibrationOptions, max_depth: u32) -> Vec<LoopSpec> {
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
    specs
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

/// The published sources the targets cite, each as `docs/device-models.md` ("Every target
/// and its source") names it; a test holds that every one is listed there.
pub mod sources {
    /// Wikipedia "IOPS" table: 7200 rpm SATA about 75–100 IOPS, 10K SAS about 140, X25-E
    /// 35 K / 3.3 K and about 5 K on a mixed workload (reference §2.1, §1.3).
    pub const WIKIPEDIA_IOPS: &str = "Wikipedia \"IOPS\" table (reference §2.1)";
    /// A public fio run on a 7200 rpm SATA disk: QD1 4 KiB random reads, 89 IOPS, clat mean
    /// 11.1 ms, p50 9.9 ms, p99 31.6 ms (reference §2.1).
    pub const FIO_7200_QD1: &str = "public fio run, 7200 rpm SATA QD1 randread (reference §2.1)";
    /// NCQ white paper and Wikipedia "IOPS": deep queues nearly double a SATA disk's random
    /// reads (reference §2.1).
    pub const NCQ_DOUBLING: &str =
        "NCQ white paper; Wikipedia \"IOPS\": about 2x QD1 (reference §2.1)";
    /// xbitlabs 2009 1 TB roundup and datasheets: outer and inner zone media rates, one rate for
    /// both directions (reference §1.1, §2.1).
    pub const XBIT_ZONES: &str = "xbitlabs 2009 HDD roundup; datasheets (reference §2.1)";
    /// AnandTech, "Intel X25-M SSD: Intel Delivers One of the World's Fastest Drives",
    /// 2008-09-08, page 8: Iometer, 4 KiB 100 % random writes at queue depth 1. Seagate Momentus
    /// 7200.2 (a 2.5-inch 7200 rpm drive, write cache on): 106.9 IOPS, average write latency
    /// 9.4 ms, maximum 76.5 ms. Intel X25-M, new: 11 171 IOPS, 0.089 ms average.
    pub const ANANDTECH_2008_QD1_WRITES: &str =
        "AnandTech 2008-09-08, Intel X25-M review p. 8: Iometer 4 KiB random writes QD1";
    /// Seagate Savvio 10K.1 manual and Wikipedia "IOPS": 10K SAS about 140 IOPS, "exceeding
    /// 400" with deep queues (reference §2.1).
    pub const SAVVIO_10K: &str = "Seagate Savvio 10K.1 manual; Wikipedia \"IOPS\" (reference §2.1)";
    /// Chen & Patterson 1990: a RAID-0 at QD1 serves about one disk's random reads (reference §2.1).
    pub const RAID_ONE_DISK: &str = "RAID principle, Chen & Patterson ISCA 1990 (reference §2.1)";
    /// Dell PERC 6 performance analysis: disk-bound sequential reads, 1 484 MB/s controller
    /// maximum (reference §1.2, §2.1).
    pub const DELL_PERC6: &str = "Dell PERC 6 performance analysis report (reference §2.1)";
    /// A 2011 tweakers.net forum explanation: QD1 4 KiB reads of 8–10-channel SATA SSDs about
    /// 20 MB/s (reference §2.1).
    pub const TWEAKERS_QD1: &str = "tweakers.net 2011: SATA SSD QD1 4 KiB reads (reference §2.1)";
    /// Intel X25-E datasheet: 35 000 random 4 KiB read and 3 300 write IOPS (reference §1.3).
    pub const INTEL_X25E_DATASHEET: &str =
        "Intel X25-E datasheet via Wikipedia \"IOPS\" (reference §1.3)";
    /// Intel X25-E product brief: read latency 75 µs, write 85 µs (reference §1.3, §2.1).
    pub const INTEL_X25E_BRIEF: &str =
        "Intel X25-E product brief: 75 / 85 us latency (reference §1.3)";
    /// TechReport's X25-E review (2008-11-23): 250 MB/s reads, 170 MB/s writes; seed 001's
    /// measured 210 MB/s writes (reference §2.1).
    pub const TECHREPORT_X25E: &str = "TechReport X25-E review 2008; seed 001 (reference §2.1)";
    /// Kitguru's Lexar NM790 review: QD1 20 K IOPS, QD8 133 K (reference §2.1).
    pub const KITGURU_NM790: &str = "Kitguru Lexar NM790 review (reference §2.1)";
    /// Samsung 980 PRO specification: 7 000 / 5 000 MB/s (reference §1.4, §2.1).
    pub const SAMSUNG_980PRO: &str = "Samsung 980 PRO specification (reference §2.1)";
    /// Samsung's embedded-storage lineup (Liliputing / CDRinfo, March 2020) (reference §1.5).
    pub const SAMSUNG_LINEUP: &str = "Samsung embedded-storage lineup 2020 (reference §1.5)";

    /// Every source above, for the documentation test.
    pub const ALL: [&str; 15] = [
        WIKIPEDIA_IOPS,
        FIO_7200_QD1,
        NCQ_DOUBLING,
        XBIT_ZONES,
        ANANDTECH_2008_QD1_WRITES,
        SAVVIO_10K,
        RAID_ONE_DISK,
        DELL_PERC6,
        TWEAKERS_QD1,
        INTEL_X25E_DATASHEET,
        INTEL_X25E_BRIEF,
        TECHREPORT_X25E,
        KITGURU_NM790,
        SAMSUNG_980PRO,
        SAMSUNG_LINEUP,
    ];
}

/// Published completion-latency figures for a preset and loop (docs/device-models.md, "Every
/// target and its source").
pub fn latency_targets_for(device: &str, spec: &LoopSpec) -> Vec<(Latency, Target)> {
    use sources::*;
    if spec.queue_depth != 1 || spec.block_bytes != 4096 {
        return Vec::new();
    }
    const US: &str = "us";
    let figures: &[(Latency, f64, &'static str)] = match (device, spec.pattern) {
        ("hdd-7200", Pattern::RandomRead) => &[
            (Latency::Mean, 11_100.0, FIO_7200_QD1),
            (Latency::P50, 9_900.0, FIO_7200_QD1),
            (Latency::P99, 31_600.0, FIO_7200_QD1),
        ],
        // Iometer's average write latency on a 7200 rpm drive with its write cache on.
        ("hdd-7200", Pattern::RandomWrite) => {
            &[(Latency::Mean, 9_400.0, ANANDTECH_2008_QD1_WRITES)]
        }
        // The brief's 75 µs with the host's share (100–130 µs at QD1 through the host).
        ("ssd-x25e", Pattern::RandomRead) => &[(Latency::Mean, 115.0, INTEL_X25E_BRIEF)],
        ("ssd-x25e", Pattern::RandomWrite) => {
            // The brief's write latency with the host's share its read figure is given with
            // (75 µs device, 100–130 µs at QD1 through the host: +25–55 µs): 110–140 µs.
            return vec![(Latency::Mean, range(110.0, 140.0, US, INTEL_X25E_BRIEF))];
        }
        ("nvme-gen4", Pattern::RandomRead) => &[(Latency::Mean, 50.0, KITGURU_NM790)],
        _ => &[],
    };
    figures
        .iter()
        .map(|&(metric, value, source)| (metric, around(value, US, source)))
        .collect()
}

/// Whose published figures a model is held to: its own, except for a preset that is another
/// preset's drive with one cache mechanism changed (`hdd-7200-wc5` is an `hdd-7200` whose
/// write cache holds fewer runs, so the same measured figures apply; `hdd-7200-dsm` and
/// `sas-10k-dsm` are the same drives on the DiskSim-validated mechanism).
fn figures_of(model: &str) -> &str {
    match model {
        "hdd-7200-wc5" | "hdd-7200-dsm" => "hdd-7200",
        "sas-10k-dsm" => "sas-10k",
        other => other,
    }
}

/// Calibrates a built-in preset by name.
pub fn calibrate_preset(name: &str, options: &CalibrationOptions) -> Option<CalibrationReport> {
    let preset = super::presets().into_iter().find(|p| p.name == name)?;
    Some(calibrate(name, &preset.build, options))
}

/// A published single figure as a target: the figure ±15 %.
fn around(value: f64, unit: &'static str, source: &'static str) -> Target {
    Target {
        low: value * 0.85,
        high: value * 1.15,
        unit,
        source,
    }
}

/// A published range as a target, as given.
fn range(low: f64, high: f64, unit: &'static str, source: &'static str) -> Target {
    Target {
        low,
        high,
        unit,
        source,
    }
}

/// The published figure for a preset and loop, where docs/device-models.md ("Every target and
/// its source") gives one.
pub fn target_for(device: &str, spec: &LoopSpec) -> Option<Target> {
    use sources::*;
    use Pattern::*;
    let deep = spec.queue_depth >= 31;
    let qd1 = spec.queue_depth == 1;
    let large = spec.block_bytes >= 128 << 10;
    let outer = spec.region == Region::Outer;
    let inner = spec.region == Region::Inner;
    let seq_deep = deep && large;
    const IOPS: &str = "IOPS";
    const MBS: &str = "MB/s";
    Some(match (device, spec.pattern) {
        ("hdd-7200", RandomRead) if qd1 => range(75.0, 100.0, IOPS, WIKIPEDIA_IOPS),
        ("hdd-7200", RandomRead) if deep => range(150.0, 200.0, IOPS, NCQ_DOUBLING),
        // Momentus 7200.2: 106.9 IOPS, Iometer 4 KiB random writes at QD1, cache on.
        ("hdd-7200", RandomWrite) if qd1 => around(106.9, IOPS, ANANDTECH_2008_QD1_WRITES),
        ("hdd-7200", SequentialRead | SequentialWrite) if large && outer => {
            range(100.0, 130.0, MBS, XBIT_ZONES)
        }
        ("hdd-7200", SequentialRead | SequentialWrite) if large && inner => {
            range(50.0, 65.0, MBS, XBIT_ZONES)
        }
        ("sas-10k", RandomRead) if qd1 => range(125.0, 150.0, IOPS, WIKIPEDIA_IOPS),
        ("sas-10k", RandomRead) if deep => range(300.0, 450.0, IOPS, SAVVIO_10K),
        ("raid0-8x10k", RandomRead) if qd1 => range(125.0, 150.0, IOPS, RAID_ONE_DISK),
        ("raid0-8x10k", SequentialRead) if seq_deep && outer => {
            range(600.0, 900.0, MBS, DELL_PERC6)
        }
        ("ssd-x25e", RandomRead) if qd1 => range(8_000.0, 10_000.0, IOPS, TWEAKERS_QD1),
        ("ssd-x25e", RandomRead) if deep => around(35_000.0, IOPS, INTEL_X25E_DATASHEET),
        ("ssd-x25e", RandomWrite) if deep => around(3_300.0, IOPS, INTEL_X25E_DATASHEET),
        ("ssd-x25e", RandomMix) if deep => around(5_000.0, IOPS, WIKIPEDIA_IOPS),
        ("ssd-x25e", SequentialRead) if seq_deep => around(250.0, MBS, TECHREPORT_X25E),
        ("ssd-x25e", SequentialWrite) if seq_deep => range(170.0, 210.0, MBS, TECHREPORT_X25E),
        ("nvme-gen4", RandomRead) if qd1 => around(20_000.0, IOPS, KITGURU_NM790),
        ("nvme-gen4", RandomRead) if spec.queue_depth == 8 => {
            around(133_000.0, IOPS, KITGURU_NM790)
        }
        ("nvme-gen4", SequentialRead) if seq_deep => around(7_000.0, MBS, SAMSUNG_980PRO),
        ("nvme-gen4", SequentialWrite) if seq_deep => around(5_000.0, MBS, SAMSUNG_980PRO),
        ("ufs31", RandomRead) if deep => around(100_000.0, IOPS, SAMSUNG_LINEUP),
        ("ufs31", RandomWrite) if deep => around(70_000.0, IOPS, SAMSUNG_LINEUP),
        ("ufs31", SequentialRead) if seq_deep => around(2_100.0, MBS, SAMSUNG_LINEUP),
        ("ufs31", SequentialWrite) if seq_deep => around(1_200.0, MBS, SAMSUNG_LINEUP),
        ("emmc51", RandomRead) if spec.queue_depth >= 2 => around(11_000.0, IOPS, SAMSUNG_LINEUP),
        ("emmc51", RandomWrite) if spec.queue_depth >= 2 => around(13_000.0, IOPS, SAMSUNG_LINEUP),
        ("emmc51", SequentialRead) if large && spec.queue_depth >= 2 => {
            around(250.0, MBS, SAMSUNG_LINEUP)
        }
        ("emmc51", SequentialWrite) if large && spec.queue_depth >= 2 => {
            around(125.0, MBS, SAMSUNG_LINEUP)
        }
        _ => return None,
    })
}
