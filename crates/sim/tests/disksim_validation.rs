//! The DiskSim-validated drive model against the ten drives of DiskSim 4.0's `valid/`
//! folder: each trace replayed as DiskSim's validation does, scored with DiskSim's demerit
//! against the response times measured on the real drive (`tests/data/disksim/`).

use std::path::Path;

use iosched_sim::device::disksim::import::{import_drive, DRIVES};
use iosched_sim::device::disksim::replay::{default_data_dir, validate_drive};
use iosched_sim::device::disksim::spec::{write_toml, Sources};
use iosched_sim::device::disksim::DiskSpec;

/// DiskSim 4.0's own demerits, in ms: `valid/runvalid` replayed by DiskSim itself (benh/disksim
/// `e0d4cc91371b`, built for 32-bit x86 as its Makefiles ask) and scored by its `rms`. The
/// script's comments round them to three decimals (barracuda's says 0.349).
const DISKSIM_RUN: [(&str, f64); 10] = [
    ("cheetah9LP", 0.106906),
    ("ibm18es", 0.135884),
    ("atlas10k", 0.267721),
    ("cheetah4LP", 0.317972),
    ("barracuda", 0.347570),
    ("atlas_III", 0.377952),
    ("hp_c2247a", 0.089931),
    ("hp_c3323a", 0.305653),
    ("hp_c2490a", 0.253762),
    ("dec_rz26", 0.340367),
];

/// Drives whose demerit is still above DiskSim's, with what each test holds instead (the
/// demerit reached, rounded up). None since DiskSim's own run was set beside the replay request
/// by request (docs/tasks/conformance.md); a drive listed here fails once it meets DiskSim.
const KNOWN_MISSES: [(&str, f64); 0] = [];

fn figure(table: &[(&str, f64)], name: &str) -> Option<f64> {
    table
        .iter()
        .find(|(drive, _)| *drive == name)
        .map(|(_, value)| *value)
}

/// Demerits compared to 0.1 µs: hp_c2247a's 0.089937 is DiskSim's 0.089931 at that precision,
/// and DiskSim's own figure moves by 1 ns when its six-decimal response times are rescored.
fn tenth_micro(ms: f64) -> i64 {
    (ms * 1e4).round() as i64
}

fn check(name: &str) {
    let result = validate_drive(&default_data_dir(), name).unwrap();
    let disksim = figure(&DISKSIM_RUN, name).expect("DiskSim's figure");
    let demerit = result.demerit_ms;
    eprintln!(
        "{name}: demerit {demerit:.4} ms (DiskSim {disksim:.4}), mean {:.3} ms simulated, {:.3} measured",
        result.simulated_mean_ms, result.measured_mean_ms
    );
    let within = tenth_micro(demerit) <= tenth_micro(disksim);
    match figure(&KNOWN_MISSES, name) {
        Some(reached) => {
            eprintln!(
                "{name}: known miss, {:.4} ms above DiskSim's",
                demerit - disksim
            );
            assert!(demerit <= reached, "{name}: demerit {demerit} ms");
            assert!(
                !within,
                "{name} now meets DiskSim's {disksim}: take it off KNOWN_MISSES"
            );
        }
        None => assert!(
            within,
            "{name}: demerit {demerit} ms above DiskSim's {disksim}"
        ),
    }
    // The mean response time as well: within 5 % on every drive here (cheetah4LP 4.8 % low).
    let ratio = result.simulated_mean_ms / result.measured_mean_ms;
    assert!((0.95..=1.05).contains(&ratio), "{name}: mean ratio {ratio}");
}

#[test]
fn cheetah9lp_matches_its_measured_response_times() {
    check("cheetah9LP");
}

#[test]
fn ibm18es_matches_its_measured_response_times() {
    check("ibm18es");
}

#[test]
fn atlas10k_matches_its_measured_response_times() {
    check("atlas10k");
}

#[test]
fn cheetah4lp_matches_its_measured_response_times() {
    check("cheetah4LP");
}

#[test]
fn barracuda_matches_its_measured_response_times() {
    check("barracuda");
}

#[test]
fn atlas_iii_matches_its_measured_response_times() {
    check("atlas_III");
}

#[test]
fn hp_c2247a_matches_its_measured_response_times() {
    check("hp_c2247a");
}

#[test]
fn hp_c3323a_matches_its_measured_response_times() {
    check("hp_c3323a");
}

#[test]
fn hp_c2490a_matches_its_measured_response_times() {
    check("hp_c2490a");
}

#[test]
fn dec_rz26_matches_its_measured_response_times() {
    check("dec_rz26");
}

/// DiskSim's run agrees with the figures `valid/runvalid` publishes (barracuda's by 0.0014).
#[test]
fn disksim_run_figures_agree_with_runvalid() {
    for (name, published) in DRIVES {
        let run = figure(&DISKSIM_RUN, name).expect("listed");
        assert!(
            (run - published).abs() <= 0.0015,
            "{name}: {run} against {published}"
        );
    }
}

/// The model files kept in the repository are exactly what the importer makes of the DiskSim
/// files kept beside them.
#[test]
fn kept_model_files_are_the_conversion_of_the_kept_disksim_files() {
    let dir = default_data_dir();
    for (name, _) in DRIVES {
        let (spec, chain) = import_drive(&dir.join("source"), name).unwrap();
        let sources = Sources {
            commit: iosched_sim::device::disksim::import::DISKSIM_COMMIT,
            parv: &chain.parv,
            diskspecs: &chain.diskspecs,
            model: &chain.model,
            seek: &chain.seek,
        };
        let kept = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
        assert_eq!(write_toml(&spec, &sources), kept, "{name}");
        assert_eq!(
            DiskSpec::parse(&kept).unwrap(),
            spec,
            "{name}: the file reads back"
        );
    }
}

/// cheetah9LP's parameters as DiskSim's files give them (device-models reference note).
#[test]
fn cheetah9lp_parameters_come_through_the_chain() {
    let spec = DiskSpec::load(&default_data_dir().join("cheetah9LP.toml")).unwrap();
    assert_eq!(
        (spec.rpm, spec.surfaces, spec.cylinders, spec.zone.len()),
        (10045.0, 12, 6962, 11)
    );
    assert_eq!(
        (
            spec.zone[0].sectors_per_track,
            spec.zone[10].sectors_per_track
        ),
        (254, 167)
    );
    assert_eq!((spec.head_switch_ms, spec.write_settle_ms), (0.030, 0.461));
    assert_eq!(
        (spec.seek_curve[0], spec.bus_ms_per_sector),
        ((1, 0.831), 0.105)
    );
    assert_eq!(
        (
            spec.segments,
            spec.segment_sectors,
            spec.prefetch_mode,
            spec.fast_write_level
        ),
        (3, 561, 4, 2)
    );
    assert_eq!(
        (spec.read_hit_after_read_ms, spec.write_miss_after_read_ms),
        (0.066, 0.90692)
    );
}

#[test]
fn a_missing_parameter_names_the_file_and_key() {
    let dir = std::env::temp_dir().join(format!("disksim-missing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = default_data_dir().join("source");
    for file in ["barracuda.parv", "barracuda.model", "barracuda.seek"] {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    let specs = std::fs::read_to_string(source.join("barracuda.diskspecs")).unwrap();
    let cut: String = specs
        .lines()
        .filter(|line| !line.contains("Fast write level"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("barracuda.diskspecs"), cut).unwrap();
    let error = import_drive(&dir, "barracuda").unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        error.ends_with("barracuda.diskspecs: missing 'Fast write level'"),
        "{error}"
    );
}

#[test]
fn a_trace_past_the_drive_is_an_error_not_a_panic() {
    let dir = std::env::temp_dir().join(format!("disksim-past-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        default_data_dir().join("barracuda.toml"),
        dir.join("barracuda.toml"),
    )
    .unwrap();
    std::fs::write(
        dir.join("barracuda.trace"),
        "R Hit 999999999 4 1000.0 1000.0\n",
    )
    .unwrap();
    let error = validate_drive(Path::new(&dir), "barracuda").unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        error.contains("request 1 (blocks 999999999+4) lies past"),
        "{error}"
    );
}

/// A converted drive is a `--device` file: one command at a time, rotational, its layout's
/// capacity; a bad value names its line.
#[test]
fn a_converted_drive_loads_as_a_device_file() {
    use iosched_sim::device::{load_device_file, DeviceFileErrorKind};
    let path = default_data_dir().join("cheetah9LP.toml");
    let device = load_device_file(&path).unwrap();
    assert_eq!(
        (device.name(), device.queue_depth(), device.rotational()),
        ("cheetah9LP", 1, true)
    );
    assert!(device.capacity_sectors() > 17_000_000);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("rpm = 10045.0", "rpm = \"fast\"");
    let bad = std::env::temp_dir().join(format!("disksim-bad-{}.toml", std::process::id()));
    std::fs::write(&bad, &text).unwrap();
    let error = load_device_file(&bad)
        .err()
        .expect("a string rpm is refused");
    std::fs::remove_file(&bad).unwrap();
    let line = text.lines().position(|l| l.starts_with("rpm =")).unwrap() + 1;
    assert_eq!(error.line, line);
    assert!(
        matches!(error.kind, DeviceFileErrorKind::Invalid(_)),
        "{error}"
    );
}
