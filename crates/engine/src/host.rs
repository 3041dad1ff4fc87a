//! What the machine running iosched looks like to a job file: its memory (`$mb_memory`),
//! online CPUs (`$ncpus`), environment (`${NAME}`), and how many job clones its free memory
//! holds. The pure parser never reads these itself; a run on a real machine asks here.

use std::collections::BTreeMap;

use iosched_workload::fio::{ParseContext, CLONE_BYTES_ESTIMATE, DEFAULT_CLONE_LIMIT};

/// The process environment, memory size (`/proc/meminfo` `MemTotal`) and online CPUs
/// (`/sys/devices/system/cpu/online`), as fio would see them, with [`clone_limit`]'s limit.
pub fn parse_context() -> ParseContext {
    let mut context = ParseContext {
        env: environment(),
        mb_memory: meminfo_mib("MemTotal:").unwrap_or(1024),
        ncpus: online_cpus(),
        ..ParseContext::default()
    };
    (context.available_mib, context.clone_limit) = clone_limit();
    context
}

/// The environment variables that are valid UTF-8.
pub fn environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// CPUs online, or the parallelism the standard library sees, or 1.
pub fn online_cpus() -> u64 {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|text| count_cpu_list(text.trim()))
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .map(|n| n.get() as u64)
        })
        .unwrap_or(1)
}

/// MiB of memory available (`MemAvailable`), and the clones it holds at
/// [`CLONE_BYTES_ESTIMATE`] each; [`DEFAULT_CLONE_LIMIT`] where it cannot be read.
pub fn clone_limit() -> (u64, u64) {
    match meminfo_mib("MemAvailable:") {
        Some(mib) => (mib, ((mib << 20) / CLONE_BYTES_ESTIMATE).max(1)),
        None => (
            DEFAULT_CLONE_LIMIT * (CLONE_BYTES_ESTIMATE >> 20),
            DEFAULT_CLONE_LIMIT,
        ),
    }
}

/// A `/proc/meminfo` field in MiB.
fn meminfo_mib(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib >> 10)
}

/// CPUs in a kernel cpu list such as `0-3,8,10-11`.
fn count_cpu_list(list: &str) -> Option<u64> {
    let mut n = 0;
    for part in list.split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => b.parse::<u64>().ok()?.checked_sub(a.parse().ok()?)? + 1,
            None => {
                part.parse::<u64>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_count_ranges_and_singles() {
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
    }

    #[test]
    fn this_machine_has_memory_and_cpus() {
        let context = parse_context();
        assert!(context.mb_memory > 0 && context.ncpus > 0);
        assert!(context.clone_limit >= 1);
    }
}
