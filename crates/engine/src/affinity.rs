//! fio's `cpus_allowed` / `cpumask` for the engine: fio pins each job's thread; the engine
//! runs every job on one thread, so that thread is pinned to the CPUs the jobs allow
//! together. A pinned loop keeps its cache and is not migrated on every completion's
//! wake-up, which at queue depth 1 is most of the difference between runs.

use iosched_workload::JobSpec;

use crate::EngineError;

/// The CPUs to pin the engine's thread to, if any job asks, and a warning when the jobs ask
/// for different sets (one thread cannot honour them apart). A CPU this machine does not
/// have is an error naming the job, as in fio.
pub fn engine_cpus(jobs: &[JobSpec]) -> Result<(Option<Vec<u32>>, Option<String>), EngineError> {
    let present = configured_cpus();
    let mut union: Vec<u32> = Vec::new();
    let mut asking = 0;
    for spec in jobs {
        let Some(cpus) = &spec.cpus_allowed else {
            continue;
        };
        asking += 1;
        if let Some(&cpu) = cpus.iter().find(|&&cpu| cpu >= present) {
            return Err(EngineError::Unsupported {
                job: spec.name.clone(),
                message: format!(
                    "cpus_allowed names CPU {cpu}; this machine has CPUs 0-{}",
                    present - 1
                ),
            });
        }
        union.extend(cpus);
    }
    if asking == 0 {
        return Ok((None, None));
    }
    union.sort_unstable();
    union.dedup();
    let same = jobs
        .iter()
        .all(|spec| spec.cpus_allowed.as_ref() == Some(&union));
    let warning = (!same).then(|| {
        format!(
            "the engine runs every job on one thread: it is pinned to CPUs {} (the jobs' cpus_allowed together)",
            list(&union)
        )
    });
    Ok((Some(union), warning))
}

/// Pins the calling thread to `cpus`. Kernel: sched_setaffinity(2).
pub fn pin_current_thread(cpus: &[u32]) -> std::io::Result<()> {
    assert!(
        cpus.iter()
            .all(|&cpu| (cpu as usize) < libc::CPU_SETSIZE as usize),
        "CPU beyond cpu_set_t"
    );
    // SAFETY: cpu_set_t is plain data (zeroed is the empty set CPU_ZERO makes) and every CPU
    // was checked above to lie inside it, as CPU_SET requires.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu as usize, &mut set);
        }
        set
    };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    let result = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// CPUs configured on this machine (online or not), as fio counts them.
fn configured_cpus() -> u32 {
    // SAFETY: sysconf reads a system constant.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    // cpu_set_t holds CPU_SETSIZE CPUs; beyond that cannot be pinned to anyway.
    (n.max(1) as u32).min(libc::CPU_SETSIZE as u32)
}

/// `0-3,5` from a sorted list.
fn list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut start = 0;
    while start < cpus.len() {
        let mut end = start;
        while end + 1 < cpus.len() && cpus[end + 1] == cpus[end] + 1 {
            end += 1;
        }
        parts.push(if end == start {
            cpus[start].to_string()
        } else {
            format!("{}-{}", cpus[start], cpus[end])
        });
        start = end + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, cpus: Option<Vec<u32>>) -> JobSpec {
        let mut spec = JobSpec::new(name);
        spec.cpus_allowed = cpus;
        spec
    }

    #[test]
    fn union_of_the_jobs_sets_with_a_warning_when_they_differ() {
        let (cpus, warning) =
            engine_cpus(&[job("a", Some(vec![0])), job("b", Some(vec![0]))]).unwrap();
        assert_eq!((cpus, warning), (Some(vec![0]), None));
        let (cpus, warning) = engine_cpus(&[job("a", Some(vec![0])), job("b", None)]).unwrap();
        assert_eq!(cpus, Some(vec![0]));
        assert!(warning.unwrap().contains("pinned to CPUs 0 "));
        assert_eq!(engine_cpus(&[job("a", None)]).unwrap(), (None, None));
    }

    #[test]
    fn a_cpu_the_machine_lacks_names_the_job() {
        let error = engine_cpus(&[job("far", Some(vec![0, 100_000]))]).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("job 'far'") && text.contains("CPU 100000"),
            "{text}"
        );
    }

    #[test]
    fn lists_read_as_ranges() {
        assert_eq!(list(&[0, 1, 2, 3, 5, 8, 9]), "0-3,5,8-9");
        assert_eq!(list(&[7]), "7");
    }

    /// The calling thread's allowed CPUs.
    fn allowed() -> Vec<u32> {
        // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid cpu_set_t of the size passed, filled by the call.
        let got = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
        assert_eq!(got, 0);
        (0..libc::CPU_SETSIZE as u32)
            // SAFETY: every CPU asked about lies inside the set.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu as usize, &set) })
            .collect()
    }

    /// Pinning to one allowed CPU leaves the thread allowed on that CPU only.
    #[test]
    fn pins_the_calling_thread() {
        std::thread::spawn(|| {
            let first = allowed()[0];
            pin_current_thread(&[first]).unwrap();
            assert_eq!(allowed(), [first]);
        })
        .join()
        .unwrap();
    }
}
