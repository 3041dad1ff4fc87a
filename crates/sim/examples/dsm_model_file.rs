//! Prints a preset on the DiskSim-validated mechanism (`hdd-7200-dsm`, `sas-10k-dsm`) as a
//! model file, so a variant (one key edited) can be measured with `iosched run --device FILE`
//! or `iosched calibrate FILE`:
//!
//! ```text
//! cargo run --release -p iosched-sim --example dsm_model_file hdd-7200-dsm > dsm.toml
//! ```

use iosched_sim::device::disksim::{preset, spec};

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let drive = match name.as_str() {
        "hdd-7200-dsm" => preset::hdd_7200(),
        "sas-10k-dsm" => preset::sas_10k(),
        _ => {
            eprintln!("usage: dsm_model_file hdd-7200-dsm|sas-10k-dsm (got {name:?})");
            std::process::exit(2);
        }
    };
    let sources = spec::Sources {
        commit: "-",
        parv: "iosched preset",
        diskspecs: "-",
        model: "-",
        seek: "-",
    };
    print!("{}", spec::write_toml(&drive, &sources));
}
