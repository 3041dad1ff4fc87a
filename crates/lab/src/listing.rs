//! What `iosched schedulers`, `iosched devices` and `iosched knobs` list, as data: the CLI
//! prints it as tables, the Python package returns it as lists of dicts.

/// The kernel's blk-mq schedulers iosched does not re-create (none since BFQ joined the core):
/// `iosched kernel` runs fio on them, and `iosched run` refuses them with a pointer there.
pub const KERNEL_ONLY: [&str; 0] = [];

/// A knob of the simulated machine (page cache, writeback, file system, CPU model) or of
/// the engine, with its default as `--set` writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    pub name: &'static str,
    pub default: String,
    pub meaning: &'static str,
}

/// Every knob, in the order `iosched knobs` lists them.
pub fn knobs() -> Vec<Knob> {
    let config = iosched_sim::fs::FsConfig::default();
    // The JSON echo leaves the CPU model's knobs out while it is off, so their defaults are
    // named here rather than found among the echoed values.
    let defaults = config.knobs();
    let mut knobs: Vec<Knob> = iosched_sim::fs::FsConfig::meanings()
        .into_iter()
        .map(|(name, meaning)| {
            let default = match name {
                "cpu_era" => "off".to_string(),
                "cpus" => config.writeback.cpus.to_string(),
                _ => defaults
                    .iter()
                    .find(|(known, _)| known == name)
                    .map_or_else(String::new, |(_, value)| value.clone()),
            };
            Knob {
                name,
                default,
                meaning,
            }
        })
        .collect();
    knobs.push(Knob {
        name: "engine_threads",
        default: "1".to_string(),
        meaning: "real targets only: engine worker threads, each with its own io_uring \
                  ring, sharing one scheduler (auto: one per CPU the jobs allow; cgroups: \
                  one per job cgroup, placed in a cgroup v1 blkio group of that path, \
                  submitting its cgroup's requests, as fio runs each job in its cgroup)",
    });
    knobs
}

/// A simulated device preset.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub name: &'static str,
    pub rotational: bool,
    pub queue_depth: u32,
    pub capacity_bytes: u64,
    pub summary: &'static str,
}

/// Every preset, in the order `iosched devices` lists them.
pub fn devices() -> Vec<Device> {
    iosched_sim::device::presets()
        .iter()
        .map(|preset| {
            let device = (preset.build)();
            Device {
                name: preset.name,
                rotational: device.rotational(),
                queue_depth: device.queue_depth(),
                capacity_bytes: device.capacity_sectors() * 512,
                summary: preset.summary,
            }
        })
        .collect()
}
