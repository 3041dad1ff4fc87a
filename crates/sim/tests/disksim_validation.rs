//! The DiskSim-validated drive model against the ten drives of DiskSim 4.0's `valid/`
//! folder: each trace replayed as DiskSim's validation does, scored with DiskSim's demerit
//! against the response times measured on the real drive (`tests/data/disksim/`).

use std::path::Path;

use iosched_sim::device::disksim::import::{import_drive, DRIVES};
use iosched_sim::device::disksim::replay::{default_data_dir, validate_drive};
use iosched_sim::device::disksim::spec::{write_toml, Sources};
use iosched_sim::device::disksim::DiskSpec;

/// Demerits reached here, in ms: what each drive's test holds, with `MARGIN` on top.
/// Target: at or below DiskSim's own (`valid/runvalid`): cheetah9LP 0.107, ibm18es 0.135,
/// atlas10k 0.268, cheetah4LP 0.318, barracuda 0.349, atlas_III 0.378; then the older
/// write-through drives hp_c2247a 0.090, hp_c3323a 0.306, hp_c2490a 0.254, dec_rz26 0.340.
/// Reached: at or below DiskSim's on atlas10k, cheetah4LP, barracuda, atlas_III and
/// hp_c2490a; within 0.001 ms above on cheetah9LP (0.1080) and ibm18es (0.1355), 0.002 on
/// dec_rz26 (0.3419), 0.008 on hp_c3323a (0.3144); hp_c2247a 0.1713 (its shortest writes are
/// 0.6 ms fast). The older drives' writes are fast throughout (0.3-1.5 ms on the mean), a
/// difference with DiskSim's write path not yet found.
const REACHED: [(&str, f64); 10] = [
    ("cheetah9LP", 0.108),
    ("ibm18es", 0.136),
    ("atlas10k", 0.095),
    ("cheetah4LP", 0.317),
    ("barracuda", 0.344),
    ("atlas_III", 0.376),
    ("hp_c2247a", 0.172),
    ("hp_c3323a", 0.315),
    ("hp_c2490a", 0.248),
    ("dec_rz26", 0.342),
];

/// Rounding of the reached figures plus a little room for float-order changes.
const MARGIN: f64 = 0.002;

fn reached(name: &str) -> f64 {
    REACHED
        .iter()
        .find(|(drive, _)| *drive == name)
        .expect("listed")
        .1
}

fn check(name: &str) {
    let result = validate_drive(&default_data_dir(), name).unwrap();
    let disksim = DRIVES.iter().find(|(drive, _)| *drive == name).unwrap().1;
    eprintln!(
        "{name}: demerit {:.4} ms (DiskSim {disksim}), mean {:.3} ms simulated, {:.3} measured",
        result.demerit_ms, result.simulated_mean_ms, result.measured_mean_ms
    );
    assert!(
        result.demerit_ms <= reached(name) + MARGIN,
        "{name}: demerit {} ms",
        result.demerit_ms
    );
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
