//! Each device preset lands inside the published ranges of device-models.md §2.1 / §1.5,
//! measured by closed loops straight into the model (no scheduler, fixed seeds).

use iosched_sim::device::calibrate::{
    calibrate, calibrate_preset, run_closed_loop, sources, target_for, CalibrationOptions,
    CalibrationReport, LoopResult, LoopSpec, Pattern, Region,
};
use iosched_sim::device::file::parse_device_text;
use iosched_sim::device::preset;

const SEED: u64 = 20_260_101;

fn run(
    name: &str,
    pattern: Pattern,
    region: Region,
    queue_depth: u32,
    block_bytes: u64,
) -> LoopResult {
    let mut device = preset(name).expect("preset exists");
    let ops = if pattern == Pattern::RandomWrite {
        16_000
    } else {
        2_000
    };
    let spec = LoopSpec {
        pattern,
        region,
        queue_depth,
        block_bytes,
        ops,
        warmup_ops: if pattern == Pattern::RandomWrite {
            ops / 2
        } else {
            ops / 5
        },
        time_limit_ns: 60_000_000_000,
        seed: SEED,
    };
    run_closed_loop(device.as_mut(), &spec)
}

/// Runs one loop and checks its figure against the published target for it.
fn check(name: &str, pattern: Pattern, region: Region, queue_depth: u32, block_bytes: u64) -> f64 {
    let result = run(name, pattern, region, queue_depth, block_bytes);
    let spec = LoopSpec {
        pattern,
        region,
        queue_depth,
        block_bytes,
        ops: 0,
        warmup_ops: 0,
        time_limit_ns: 0,
        seed: SEED,
    };
    let target = target_for(name, &spec).expect("a published target");
    let value = if target.unit == "IOPS" {
        result.iops
    } else {
        result.mb_per_s
    };
    assert!(
        (target.low..=target.high).contains(&value),
        "{name} {pattern:?} {region:?} qd {queue_depth}: {value:.1} {} outside {:.0}..{:.0} ({}), seed {SEED}",
        target.unit,
        target.low,
        target.high,
        target.source
    );
    value
}

const MIB: u64 = 1 << 20;

#[test]
fn hdd_7200_random_reads_qd1_and_ncq() {
    let qd1 = check("hdd-7200", Pattern::RandomRead, Region::Full, 1, 4096);
    let qd31 = check("hdd-7200", Pattern::RandomRead, Region::Full, 31, 4096);
    // NCQ with SPTF: about twice QD1 (§2.1).
    assert!(qd31 > 1.7 * qd1, "{qd1} → {qd31}");
}

#[test]
fn hdd_7200_sequential_zones() {
    let outer = check("hdd-7200", Pattern::SequentialRead, Region::Outer, 1, MIB);
    let inner = check("hdd-7200", Pattern::SequentialRead, Region::Inner, 1, MIB);
    // §2.2: LBA 0 about 2x the last LBA.
    let ratio = outer / inner;
    assert!((1.8..2.3).contains(&ratio), "outer/inner {ratio}");
    // Deep sequential queues stream at the media rate too.
    check("hdd-7200", Pattern::SequentialRead, Region::Outer, 31, MIB);
}

#[test]
fn sas_10k_random_reads() {
    check("sas-10k", Pattern::RandomRead, Region::Full, 1, 4096);
    check("sas-10k", Pattern::RandomRead, Region::Full, 32, 4096);
    check("sas-10k", Pattern::RandomRead, Region::Full, 64, 4096);
}

#[test]
fn raid0_scales_with_outstanding_requests() {
    check("raid0-8x10k", Pattern::RandomRead, Region::Full, 1, 4096);
    let mut last = 0.0;
    for depth in [1, 2, 4, 8, 16, 32, 64] {
        let iops = run(
            "raid0-8x10k",
            Pattern::RandomRead,
            Region::Full,
            depth,
            4096,
        )
        .iops;
        assert!(iops > last * 1.2, "qd {depth}: {iops} after {last}");
        last = iops;
    }
    // Towards 8 spindles (and SPTF beyond) at deep queues.
    let qd1 = run("raid0-8x10k", Pattern::RandomRead, Region::Full, 1, 4096).iops;
    assert!(last > 8.0 * qd1, "qd64 {last} vs qd1 {qd1}");
    check(
        "raid0-8x10k",
        Pattern::SequentialRead,
        Region::Outer,
        32,
        MIB,
    );
}

#[test]
fn x25e_reads_and_writes() {
    check("ssd-x25e", Pattern::RandomRead, Region::Full, 1, 4096);
    check("ssd-x25e", Pattern::RandomRead, Region::Full, 31, 4096);
    check("ssd-x25e", Pattern::RandomWrite, Region::Full, 31, 4096);
    check("ssd-x25e", Pattern::SequentialRead, Region::Outer, 31, MIB);
    check("ssd-x25e", Pattern::SequentialWrite, Region::Outer, 31, MIB);
}

#[test]
fn nvme_gen4_figures() {
    check("nvme-gen4", Pattern::RandomRead, Region::Full, 1, 4096);
    check("nvme-gen4", Pattern::RandomRead, Region::Full, 8, 4096);
    check("nvme-gen4", Pattern::SequentialRead, Region::Outer, 32, MIB);
    check(
        "nvme-gen4",
        Pattern::SequentialWrite,
        Region::Outer,
        32,
        MIB,
    );
}

#[test]
fn ufs31_figures() {
    check("ufs31", Pattern::RandomRead, Region::Full, 32, 4096);
    check("ufs31", Pattern::RandomWrite, Region::Full, 32, 4096);
    check("ufs31", Pattern::SequentialRead, Region::Outer, 32, MIB);
    check("ufs31", Pattern::SequentialWrite, Region::Outer, 32, MIB);
}

/// eMMC without CMDQ: never more than 2 commands in the device, whatever the load (so CFQ's
/// hw_tag detection, which needs 5, sees no queueing), and Samsung's figures one at a time.
#[test]
fn emmc_holds_at_most_two_commands() {
    let device = preset("emmc51").unwrap();
    assert!(!device.rotational());
    assert_eq!(device.queue_depth(), 2);
    for pattern in [
        Pattern::RandomRead,
        Pattern::RandomWrite,
        Pattern::SequentialRead,
    ] {
        let result = run("emmc51", pattern, Region::Full, 32, 4096);
        assert!(
            result.max_in_flight <= 2,
            "{pattern:?}: {}",
            result.max_in_flight
        );
        assert_eq!(result.max_in_flight, 2);
    }
    check("emmc51", Pattern::RandomRead, Region::Full, 2, 4096);
    check("emmc51", Pattern::RandomWrite, Region::Full, 2, 4096);
    check("emmc51", Pattern::SequentialRead, Region::Outer, 2, MIB);
    check("emmc51", Pattern::SequentialWrite, Region::Outer, 2, MIB);
}

/// The flags CFQ branches on (§1.0): disks and the RAID LUN rotational, flash not.
#[test]
fn rotational_flags() {
    for (name, rotational) in [
        ("hdd-7200", true),
        ("sas-10k", true),
        ("raid0-8x10k", true),
        ("ssd-x25e", false),
        ("nvme-gen4", false),
        ("ufs31", false),
        ("emmc51", false),
        ("fixed", true),
    ] {
        assert_eq!(preset(name).unwrap().rotational(), rotational, "{name}");
    }
}

/// The same loop twice gives identical figures.
#[test]
fn loops_are_deterministic() {
    for name in ["hdd-7200", "raid0-8x10k", "ssd-x25e"] {
        let a = run(name, Pattern::RandomRead, Region::Full, 8, 4096);
        let b = run(name, Pattern::RandomRead, Region::Full, 8, 4096);
        assert_eq!(a, b, "{name}");
    }
}

/// The full report runs for every preset and renders.
#[test]
fn report_renders_for_every_preset() {
    let options = CalibrationOptions {
        random_ops: 200,
        sequential_ops: 50,
        ..CalibrationOptions::default()
    };
    for preset in iosched_sim::device::presets() {
        let report = calibrate_preset(preset.name, &options).unwrap();
        let text = report.to_text();
        assert!(
            text.starts_with(&format!("device {}", preset.name)),
            "{text}"
        );
        assert!(
            report.measurements.iter().all(|m| m.result.ops > 0),
            "{text}"
        );
    }
}

/// Prints every preset's calibration table: `PRESET=name cargo test -p iosched-sim --release
/// --test device_calibration -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_calibration() {
    let only = std::env::var("PRESET").ok();
    for preset in iosched_sim::device::presets() {
        if only.as_deref().is_some_and(|name| name != preset.name) {
            continue;
        }
        let report = calibrate_preset(preset.name, &CalibrationOptions::default()).unwrap();
        println!("{}", report.to_text());
    }
}

/// Two 128 KiB sequential readers at 25 % and 75 % of the disk, one request at a time
/// (device-models.md §4.2): strict alternation pays a long seek per request (about 8 MB/s in
/// the reference's Monte Carlo), while 100 ms slices per stream ride the read-ahead (about
/// 60 MB/s). This gap is what CFQ's idling buys on a single disk.
#[test]
fn hdd_two_streams_alternation_versus_slices() {
    use iosched_core::{Op, RequestId};
    use iosched_sim::device::Command;
    use rand_core::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn run_streams(slice_ns: u64) -> f64 {
        let mut device = preset("hdd-7200").unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(SEED);
        let capacity = device.capacity_sectors();
        let mut next = [capacity / 4, capacity * 3 / 4];
        let mut stream = 0;
        let mut slice_start = 0;
        let mut now = 0;
        let mut bytes = 0u64;
        let mut done = Vec::new();
        for id in 0..400u64 {
            if now - slice_start >= slice_ns {
                stream = 1 - stream;
                slice_start = now;
            }
            let command = Command {
                id: RequestId(id),
                op: Op::Read,
                sector: next[stream],
                nr_sectors: 256,
                fua: false,
            };
            next[stream] += 256;
            device.submit(now, command, &mut rng);
            done.clear();
            while done.is_empty() {
                now = device.next_event().unwrap();
                device.advance(now, &mut rng, &mut done);
            }
            bytes += 128 << 10;
        }
        bytes as f64 / (now as f64 / 1e9) / 1e6
    }
    let alternating = run_streams(0);
    let sliced = run_streams(100_000_000);
    println!("two streams: alternating {alternating:.1} MB/s, 100 ms slices {sliced:.1} MB/s");
    assert!(
        (4.0..14.0).contains(&alternating),
        "alternating {alternating:.1} MB/s"
    );
    assert!((40.0..100.0).contains(&sliced), "sliced {sliced:.1} MB/s");
    assert!(
        sliced > 4.0 * alternating,
        "{alternating:.1} vs {sliced:.1}"
    );
}

/// The report marks the rows without a published figure and counts them, checks the X25-E's
/// 70/30 mix and the disk's QD1 latency percentiles against their published figures
/// (reference §1.3 and §2.1), and every loop's p99 is at least its median.
#[test]
fn report_says_where_no_figure_exists() {
    let options = CalibrationOptions {
        random_ops: 400,
        sequential_ops: 50,
        ..CalibrationOptions::default()
    };
    let disk = calibrate_preset("hdd-7200", &options).unwrap();
    let text = disk.to_text();
    assert!(text.contains("no published figure"), "{text}");
    assert!(
        text.contains("no published figure: randread (") && text.contains("randrw70 (any depth)"),
        "{text}"
    );
    let units: Vec<&str> = disk.measurements.iter().map(|m| m.unit).collect();
    for unit in ["us mean", "us p50", "us p99"] {
        assert!(units.contains(&unit), "{text}");
    }
    assert!(disk
        .measurements
        .iter()
        .all(|m| m.result.p99_latency_us >= m.result.p50_latency_us));
    let flash = calibrate_preset("ssd-x25e", &options).unwrap();
    assert!(flash
        .measurements
        .iter()
        .any(|m| m.spec.pattern == Pattern::RandomMix && m.target.is_some()));
}

/// The coverage line counts the rows a published figure checks and names each of them with
/// its verdict: for the X25-E, the datasheet's deep-queue reads and writes, the mixed-load
/// figure (reference §1.3) and the brief's QD1 read and write latencies; a row without a
/// figure is never listed, and the counts agree with the table.
#[test]
fn coverage_line_lists_the_rows_it_checks() {
    let options = CalibrationOptions {
        random_ops: 300,
        sequential_ops: 50,
        ..CalibrationOptions::default()
    };
    let flash = calibrate_preset("ssd-x25e", &options).unwrap();
    let coverage = flash.coverage();
    let with_target = flash.measurements.iter().filter(|m| m.target.is_some());
    assert_eq!(coverage.checked.len(), with_target.clone().count());
    assert_eq!(coverage.rows, flash.measurements.len());
    assert_eq!(
        coverage.within,
        with_target.filter(|m| m.within_target()).count()
    );
    let text = flash.to_text();
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no '{prefix}' line in\n{text}"))
            .to_string()
    };
    let summary = line("coverage: ");
    assert!(
        summary.starts_with(&format!(
            "coverage: {} of {} rows checked",
            coverage.checked.len(),
            coverage.rows
        )),
        "{summary}"
    );
    assert!(summary.contains("\u{b1}15 %"), "{summary}");
    let checked = line("checked: ");
    for row in [
        "randread qd1 IOPS [",
        "randread qd31 IOPS [",
        "randwrite qd31 IOPS [",
        "randrw70 qd31 IOPS [",
        "randread qd1 us mean [",
        "randwrite qd1 us mean [",
        "write outer qd31 1M MB/s [",
    ] {
        assert!(checked.contains(row), "{row} missing from {checked}");
    }
    // Depths with no published figure are not claimed as checked.
    assert!(!checked.contains("randread qd4 "), "{checked}");
    assert!(!checked.contains("randrw70 qd1 "), "{checked}");
}

/// Small loops: enough to fill every row, not to measure precisely.
fn quick() -> CalibrationOptions {
    CalibrationOptions {
        random_ops: 300,
        sequential_ops: 50,
        ..CalibrationOptions::default()
    }
}

/// Every checked row, on every preset, cites a published source, and each source (every one
/// the code can cite) is listed in docs/device-models.md's table of targets, so a figure
/// cannot be added without saying where it comes from.
#[test]
fn every_target_cites_a_documented_source() {
    let doc_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/device-models.md");
    let doc = std::fs::read_to_string(doc_path).expect("docs/device-models.md");
    for source in sources::ALL {
        assert!(
            doc.contains(source),
            "source '{source}' is not in {doc_path}"
        );
    }
    for preset in iosched_sim::device::presets() {
        let report = calibrate_preset(preset.name, &quick()).unwrap();
        for m in report.measurements.iter().filter(|m| m.target.is_some()) {
            let source = m.target_source.unwrap_or_default();
            assert!(
                sources::ALL.contains(&source),
                "{} {}: source '{source}'",
                preset.name,
                m.label()
            );
        }
        // The report's source lines cover exactly the checked rows.
        let cited: usize = report.sources().iter().map(|(_, rows)| rows.len()).sum();
        assert_eq!(cited, report.coverage().checked.len(), "{}", preset.name);
    }
}

/// The disk's random writes are checked at QD1 against AnandTech's Iometer run (106.9 IOPS,
/// 9.4 ms mean, a 7200 rpm drive with its write cache on): the coverage line names both rows
/// and the source line ties them to the review; deeper write queues stay unchecked.
#[test]
fn disk_random_writes_are_checked_at_qd1() {
    let report = calibrate_preset("hdd-7200", &quick()).unwrap();
    let text = report.to_text();
    let checked = text
        .lines()
        .find(|l| l.starts_with("checked: "))
        .unwrap_or_else(|| panic!("no checked line in\n{text}"));
    for row in ["randwrite qd1 IOPS [", "randwrite qd1 us mean ["] {
        assert!(checked.contains(row), "{row} missing from {checked}");
    }
    assert!(!checked.contains("randwrite qd4 "), "{checked}");
    let source = text
        .lines()
        .find(|l| l.starts_with(&format!("source: {}", sources::ANANDTECH_2008_QD1_WRITES)))
        .unwrap_or_else(|| panic!("no AnandTech source line in\n{text}"));
    assert!(source.contains("randwrite qd1 IOPS"), "{source}");
}

/// Seed 000's drive class: an `hdd-7200` whose write cache holds five dirty runs meets the
/// measured QD1 random-write rate (AnandTech, 106.9 IOPS ±15 %) that `hdd-7200`, coalescing
/// runs in any number, exceeds (156 IOPS). Without the preset (or with its count free) the
/// first check fails.
#[test]
fn hdd_7200_wc5_meets_the_measured_qd1_random_write_rate() {
    let spec = |queue_depth| LoopSpec {
        pattern: Pattern::RandomWrite,
        region: Region::Full,
        queue_depth,
        block_bytes: 4096,
        ops: 0,
        warmup_ops: 0,
        time_limit_ns: 0,
        seed: SEED,
    };
    let wc5 = run("hdd-7200-wc5", Pattern::RandomWrite, Region::Full, 1, 4096).iops;
    let target = target_for("hdd-7200", &spec(1)).expect("a published target");
    assert!(
        (target.low..=target.high).contains(&wc5),
        "hdd-7200-wc5 QD1 random writes {wc5:.1} IOPS outside {:.0}..{:.0}, seed {SEED}",
        target.low,
        target.high
    );
    let free = run("hdd-7200", Pattern::RandomWrite, Region::Full, 1, 4096).iops;
    assert!(free > target.high, "hdd-7200 {free:.1} IOPS, seed {SEED}");
    let report = calibrate_preset("hdd-7200-wc5", &quick()).unwrap();
    assert_eq!(report.targets_of, "hdd-7200");
}

/// Verdicts of the rows `report` checks, by label.
fn verdicts(report: &CalibrationReport) -> Vec<(String, bool)> {
    report.coverage().checked
}

/// A model file that starts from a preset is held to that preset's published figures: a
/// deliberately broken `hdd-7200` (3600 rpm, twice the seek times) fails rows the preset
/// passes, while a file that renames its model is checked against nothing.
#[test]
fn a_broken_model_file_fails_the_check() {
    let broken_text = "model = \"hdd\"\nbase = \"hdd-7200\"\nrpm = 3_600\n\
        seek_short_base_ns = 2_000_000\nseek_long_base_ns = 9_400_000\n";
    let broken = parse_device_text(std::path::Path::new("broken.toml"), broken_text)
        .expect("the file parses");
    let build = || broken.build();
    let report = calibrate("broken.toml", &build, &quick());
    assert_eq!(report.targets_of, "hdd-7200");
    assert!(
        report
            .to_text()
            .contains("targets: the published figures for hdd-7200"),
        "{}",
        report.to_text()
    );
    let good = calibrate_preset("hdd-7200", &quick()).unwrap();
    let row = "randread qd1 IOPS";
    let verdict = |r: &CalibrationReport| {
        verdicts(r)
            .into_iter()
            .find(|(label, _)| label == row)
            .map(|(_, ok)| ok)
    };
    assert_eq!(verdict(&good), Some(true), "{}", good.to_text());
    assert_eq!(verdict(&report), Some(false), "{}", report.to_text());
    assert!(report.coverage().within < good.coverage().within);

    let renamed = parse_device_text(
        std::path::Path::new("renamed.toml"),
        &format!("{broken_text}name = \"hdd-3600\"\n"),
    )
    .expect("the file parses");
    let build = || renamed.build();
    let report = calibrate("renamed.toml", &build, &quick());
    assert!(report.coverage().checked.is_empty(), "{}", report.to_text());
}
