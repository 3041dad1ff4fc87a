//! A sweep's cost, told before the bulk of it runs: the first point runs alone (the pilot;
//! its rows are kept, so it does not run again), and the others are assumed to simulate as
//! many requests per simulated second as it did.
//!
//! - simulated requests: the pilot's requests (its device's reads and writes), times, for
//!   each point, its planned time over the pilot's ([`crate::run::planned_ns`]: the jobs'
//!   `runtime`s) where both have one, else 1;
//! - core-seconds: those requests at the pilot's rate (its requests over the CPU time of
//!   the thread that ran it), since a point runs on one core;
//! - memory per worker: the peak resident memory of the process once the pilot has run
//!   (`VmHWM`), which a worker holding one point at a time does not exceed by much.
//!
//! Points that differ in device or job file simulate at other rates: the estimate is a
//! first figure for sizing a cluster, not a promise.

use std::fmt;
use std::sync::atomic::AtomicBool;

use iosched_driver::spec::RunSpec;

use super::{describe, measure, SweepError, SweepRow, SweepSpec};

/// What a sweep is expected to cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub points: usize,
    /// Requests the simulated devices are expected to serve, over every point.
    pub requests: f64,
    /// Requests per CPU-second, measured on the pilot.
    pub rate_per_s: f64,
    /// `requests / rate_per_s`.
    pub core_seconds: f64,
    /// Peak resident memory of the process that ran the pilot, where the OS tells it.
    pub memory_bytes: Option<u64>,
}

/// The first point's rows and the estimate they gave.
pub struct Pilot {
    pub rows: Vec<SweepRow>,
    pub estimate: Estimate,
}

/// Runs the first point of `specs` (from [`super::specs`]) and estimates the rest from it.
pub fn pilot(sweep: &SweepSpec, specs: &[RunSpec], stop: &AtomicBool) -> Result<Pilot, SweepError> {
    let first = specs.first().ok_or_else(|| SweepError {
        point: String::new(),
        error: Box::new(crate::run::RunError::Knob("the sweep has no points".into())),
    })?;
    let cpu_before = thread_cpu_ns();
    let measured = measure(0, first, stop).map_err(|error| SweepError {
        point: describe(sweep, 0),
        error: Box::new(error),
    })?;
    let cpu_ns = match (cpu_before, thread_cpu_ns()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => 0,
    };
    let planned_first = crate::run::planned_ns(first);
    let scale: f64 = specs
        .iter()
        .map(|spec| match (crate::run::planned_ns(spec), planned_first) {
            (Some(point), Some(first)) => point as f64 / first as f64,
            _ => 1.0,
        })
        .sum();
    let requests = measured.requests as f64 * scale;
    // A pilot too quick for the clock's tick: take 1 µs, which overstates the rate.
    let rate_per_s = measured.requests as f64 / (cpu_ns.max(1_000) as f64 / 1e9);
    let estimate = Estimate {
        points: specs.len(),
        requests,
        rate_per_s,
        core_seconds: requests / rate_per_s,
        memory_bytes: peak_resident_bytes(),
    };
    Ok(Pilot {
        rows: measured.rows,
        estimate,
    })
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "estimate: {} points, about {:.2e} simulated requests, about {:.0} core-seconds at \
             {:.2} M requests/s (measured on the first point)",
            self.points,
            self.requests,
            self.core_seconds,
            self.rate_per_s / 1e6
        )?;
        if let Some(bytes) = self.memory_bytes {
            write!(
                f,
                ", about {} MiB per worker (peak resident memory after it)",
                bytes.div_ceil(1 << 20)
            )?;
        }
        Ok(())
    }
}

/// CPU time of the calling thread, from `/proc/thread-self/schedstat` (its first field, in
/// ns): a busy machine stretches a run's wall time, not its CPU time.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// `VmHWM` of `/proc/self/status`, in bytes.
fn peak_resident_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three points of a 1 s, 2 s and 3 s run: the pilot (1 s) measured, the others scaled
    /// by their planned time, so the whole is six times the pilot's requests; the pilot's
    /// rows are the first point's as a full sweep measures them.
    #[test]
    fn scales_the_first_point_by_planned_time() {
        let dir = iosched_workload::scratch::ScratchDir::new("sweep-estimate");
        std::fs::write(
            dir.join("j.fio"),
            "[j]\nrw=read\nbs=64k\ndirect=1\nsize=1g\ntime_based\nruntime=${T}\n",
        )
        .unwrap();
        let text = "jobs = 'j.fio'\ndevices = 'hdd-7200'\n[env]\nT = ['1s', '2s', '3s']\n";
        let spec = SweepSpec::parse(&dir.join("s.toml"), text).unwrap();
        let specs = super::super::specs(&spec).unwrap();
        let stop = AtomicBool::new(false);
        let pilot = pilot(&spec, &specs, &stop).unwrap();
        let first = measure(0, &specs[0], &stop).unwrap();
        assert_eq!(pilot.rows, first.rows);
        assert!(first.requests > 100, "{}", first.requests);
        assert_eq!(pilot.estimate.points, 3);
        assert_eq!(pilot.estimate.requests, 6.0 * first.requests as f64);
        assert!(pilot.estimate.rate_per_s > 0.0);
        let swept = super::super::run_rest(&spec, &specs, Some(pilot.rows), 1, &|| {}, &stop);
        let whole = super::super::run(&spec, 1, &|| {}, &stop).unwrap();
        assert_eq!(
            swept.unwrap(),
            whole,
            "the pilot's rows stand for the first point"
        );
    }
}
